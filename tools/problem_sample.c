/* problem_sample.c -- realistic problems for tuning (see problem_sample.h).
 * The proportions follow what classification and detection networks are
 * made of: mostly 1x1 and 3x3, a tail of large and separable filters. */
#include "problem_sample.h"

#include <math.h>
#include <stdio.h>

static int64_t log_uniform(struct rng *r, int64_t lo, int64_t hi) {
    const double v = exp(rng_uniform(r, log((double)lo), log((double)hi + 1)));
    const int64_t i = (int64_t)v;
    return i < lo ? lo : i > hi ? hi : i;
}

struct filter_share {
    int percent;
    int64_t h, w;
};

static void pick_filter(struct rng *r, const struct filter_share *shares, size_t count, int64_t *fh,
                        int64_t *fw) {
    int64_t roll = rng_int(r, 0, 99);
    for (size_t i = 0; i < count; i++) {
        if (roll < shares[i].percent) {
            *fh = shares[i].h, *fw = shares[i].w;
            return;
        }
        roll -= shares[i].percent;
    }
    *fh = 3, *fw = 3;
}

/* Dense and grouped layers. */
static const struct filter_share dense_filters[] = {{35, 1, 1}, {40, 3, 3}, {6, 5, 5},
                                                    {5, 7, 7},  {2, 1, 7},  {2, 7, 1},
                                                    {3, 1, 3},  {3, 3, 1},  {4, 2, 2}};

/* Depthwise layers are 3x3 (MobileNets), 5x5 (EfficientNet, MnasNet) or
 * 7x7 (ConvNeXt), never 1x1. With the dense shares, 7x7 depthwise layers
 * were 1 sampled problem in 100 and the model's worst miss on the suite. */
static const struct filter_share depthwise_filters[] = {
    {55, 3, 3}, {20, 5, 5}, {20, 7, 7}, {5, 9, 9}};

#define SHARES(a) a, sizeof a / sizeof a[0]

static int64_t out_size(int64_t in, int64_t f, int64_t pad, int64_t stride, int64_t dil) {
    const int64_t span = dil * (f - 1) + 1;
    return in + 2 * pad < span ? 0 : (in + 2 * pad - span) / stride + 1;
}

/* Networks use channel counts that are multiples of 8 (16, 24, 32, 48,
 * 64, 96, 144, ...) almost everywhere past the first layer. */
static int64_t round_to(int64_t count, int64_t multiple, bool network) {
    if (!network || count < 2 * multiple)
        return count;
    return (count + multiple / 2) / multiple * multiple;
}

void problem_sample(struct rng *r, double max_flops, bool network_channels, struct problem_row *out,
                    int index) {
    const bool nc = network_channels;
    struct problem_flags *p = &out->pf;
    for (;;) {
        problem_flags_defaults(p);
        p->n = log_uniform(r, 1, 32);
        p->h = log_uniform(r, 7, 224);
        p->w = rng_int(r, 0, 99) < 85 ? p->h : log_uniform(r, 7, 224);
        const int64_t kind = rng_int(r, 0, 99);
        const bool depthwise = kind < 15, grouped = !depthwise && kind < 25;
        if (depthwise)
            pick_filter(r, SHARES(depthwise_filters), &p->y, &p->x);
        else
            pick_filter(r, SHARES(dense_filters), &p->y, &p->x);
        const int64_t stride = rng_int(r, 0, 99) < 75 ? 1 : 2;
        p->stride_h = p->stride_w = stride;
        const int64_t dil = p->y * p->x > 1 && rng_int(r, 0, 99) < 8 ? 2 : 1;
        p->dil_h = p->dil_w = dil;
        const bool same = rng_int(r, 0, 99) < 70;
        p->pad_h = same ? dil * (p->y - 1) / 2 : 0;
        p->pad_w = same ? dil * (p->x - 1) / 2 : 0;
        if (depthwise) {
            p->c = p->k = p->groups = round_to(log_uniform(r, 8, 1024), 8, nc);
        } else if (grouped) { /* 2-64 groups of 4-64 channels */
            p->groups = (int64_t)1 << rng_int(r, 1, 6);
            p->c = p->groups * round_to(log_uniform(r, 4, 64), 4, nc);
            p->k = p->groups * round_to(log_uniform(r, 4, 64), 4, nc);
        } else {
            p->groups = 1;
            p->c = rng_int(r, 0, 99) < 5 ? 3 : round_to(log_uniform(r, 1, 1024), 8, nc);
            p->k = round_to(log_uniform(r, 1, 1024), 8, nc);
        }
        const int64_t oh = out_size(p->h, p->y, p->pad_h, stride, dil);
        const int64_t ow = out_size(p->w, p->x, p->pad_w, stride, dil);
        const double flops = 2.0 * (double)p->n * (double)p->k * (double)oh * (double)ow *
                             (double)(p->c / p->groups) * (double)(p->y * p->x);
        if (oh >= 1 && ow >= 1 && flops <= max_flops)
            break;
    }
    snprintf(out->name, sizeof out->name, "sample%d", index);
}
