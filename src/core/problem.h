/* problem.h -- the convolution problem every other module works on.
 *
 * A conv_problem is built once from the public descriptors (src/api) or
 * from a problem key, validated, and then passed by const pointer to the
 * heuristics and the solvers. Nothing downstream re-validates it.
 */
#ifndef CONVSEL_CORE_PROBLEM_H
#define CONVSEL_CORE_PROBLEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "convsel/convsel.h"

/* Dimension indices into the stride arrays. */
enum { DIM_N = 0, DIM_C = 1, DIM_H = 2, DIM_W = 3 };

struct conv_problem {
    /* Input x: n x c x h x w; filter w: k x (c/groups) x r x s; output y: n x k x oh x ow. */
    int64_t n, c, h, w;
    int64_t k, r, s;
    int64_t oh, ow; /* derived by problem_validate */
    int64_t pad_h, pad_w, stride_h, stride_w, dil_h, dil_w, groups;
    convsel_layout_t layout;               /* of x and y */
    convsel_filter_layout_t filter_layout; /* filter is always packed */
    int64_t x_stride[4];                   /* element strides, indexed by DIM_* */
    int64_t y_stride[4];
    bool packed;   /* x and y are both packed in `layout` */
    size_t x_span; /* elements from the first to one past the last of x */
    size_t y_span;
    size_t w_elems;
};

/* Size of the message buffers validation writes into. */
#define PROBLEM_ERROR_MAX 256

/* Fills p->x_stride / p->y_stride with the packed strides of `layout`. */
void problem_set_packed_strides(struct conv_problem *p);

/* Checks every field of p (sizes, strides, groups, overflow), computes the
 * derived fields (oh, ow, spans, packed) and returns SUCCESS, or BAD_PARAM
 * with a message naming the field (e.g. "x_desc.c = 0: must be >= 1") in err.
 * A stride array that is all zero means "packed" and is filled in here. */
convsel_status_t problem_validate(struct conv_problem *p, char *err, size_t err_cap);

/* Writes the canonical key (grammar in convsel.h). Returns the length the key
 * needs, like snprintf; the key is truncated when that is >= cap. */
size_t problem_key_format(const struct conv_problem *p, char *buf, size_t cap);

/* Parses a key into a packed, validated problem. BAD_PARAM with a message
 * naming the key field on any malformed or inconsistent key. */
convsel_status_t problem_key_parse(const char *key, struct conv_problem *p, char *err,
                                   size_t err_cap);

/* Nominal multiply-adds x 2 (padded taps included), as a double. */
double problem_flops(const struct conv_problem *p);

/* Each output channel reads one input channel: groups = channels (> 1),
 * or one channel in and one out (WaveRNN's 1x11 on an 80x2500 map, 27x
 * faster on the depthwise solver than as oneDNN's GEMM). The rules and the
 * policy's kinds agree on it; the model's depthwise feature is only the
 * first case, as the shipped models were trained. */
static inline bool problem_is_depthwise(const struct conv_problem *p) {
    return p->groups == p->c && (p->groups > 1 || p->k == 1);
}

/* Offset in elements of filter element (k, c, r, s); c is within the group. */
static inline size_t problem_filter_offset(const struct conv_problem *p, int64_t k, int64_t c,
                                           int64_t r, int64_t s) {
    const int64_t cg = p->c / p->groups;
    if (p->filter_layout == CONVSEL_FILTER_KCRS)
        return (size_t)(((k * cg + c) * p->r + r) * p->s + s);
    return (size_t)(((k * p->r + r) * p->s + s) * cg + c);
}

#endif /* CONVSEL_CORE_PROBLEM_H */
