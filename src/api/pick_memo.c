/* pick_memo.c -- see pick_memo.h. */
#include "api/pick_memo.h"

#include <stdint.h>

/* The fields that define a problem (the rest are derived from them). */
static bool same_problem(const struct conv_problem *a, const struct conv_problem *b) {
    bool same = a->n == b->n && a->c == b->c && a->h == b->h && a->w == b->w && a->k == b->k &&
                a->r == b->r && a->s == b->s && a->pad_h == b->pad_h && a->pad_w == b->pad_w &&
                a->stride_h == b->stride_h && a->stride_w == b->stride_w && a->dil_h == b->dil_h &&
                a->dil_w == b->dil_w && a->groups == b->groups && a->layout == b->layout &&
                a->filter_layout == b->filter_layout;
    for (int i = 0; same && i < 4; i++)
        same = a->x_stride[i] == b->x_stride[i] && a->y_stride[i] == b->y_stride[i];
    return same;
}

static unsigned slot_of(const struct conv_problem *p, int threads, bool weights_constant) {
    const int64_t v[] = {p->n,
                         p->c,
                         p->h,
                         p->w,
                         p->k,
                         p->r,
                         p->s,
                         p->pad_h,
                         p->pad_w,
                         p->stride_h,
                         p->stride_w,
                         p->dil_h,
                         p->dil_w,
                         p->groups,
                         p->layout,
                         threads,
                         weights_constant,
                         p->x_stride[DIM_C],
                         p->x_stride[DIM_W]};
    uint64_t h = 1469598103934665603ull; /* FNV-1a over the values */
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        h ^= (uint64_t)v[i];
        h *= 1099511628211ull;
    }
    return (unsigned)(h >> 32) % PICK_MEMO_SLOTS;
}

void pick_memo_init(struct pick_memo *m) {
    for (int i = 0; i < PICK_MEMO_SLOTS; i++)
        m->slot[i].solver = -1;
    m->hits = m->misses = 0;
}

int pick_memo_find(struct pick_memo *m, const struct conv_problem *p, int threads,
                   bool weights_constant) {
    const struct pick_memo_slot *s = &m->slot[slot_of(p, threads, weights_constant)];
    if (s->solver >= 0 && s->threads == threads && s->weights_constant == weights_constant &&
        same_problem(&s->p, p)) {
        m->hits++;
        return s->solver;
    }
    m->misses++;
    return -1;
}

void pick_memo_put(struct pick_memo *m, const struct conv_problem *p, int threads,
                   bool weights_constant, int solver) {
    m->slot[slot_of(p, threads, weights_constant)] =
        (struct pick_memo_slot){*p, threads, weights_constant, solver};
}
