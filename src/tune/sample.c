/* sample.c -- see sample.h. The random draw's proportions follow what
 * classification and detection networks are made of: mostly 1x1 and 3x3,
 * a tail of large and separable filters. */
#include "tune/sample.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

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

static double flops_of(const int64_t v[14]) {
    const int64_t oh = out_size(v[2], v[5], v[7], v[9], v[11]);
    const int64_t ow = out_size(v[3], v[6], v[8], v[10], v[12]);
    return 2.0 * (double)v[0] * (double)v[4] * (double)oh * (double)ow * (double)(v[1] / v[13]) *
           (double)(v[5] * v[6]);
}

void sample_random(struct rng *r, double max_flops, bool network_channels, struct problem_row *out,
                   int index) {
    const bool nc = network_channels;
    for (;;) {
        int64_t n, c, h, w, k, fh, fw, groups;
        n = log_uniform(r, 1, 32);
        h = log_uniform(r, 7, 224);
        w = rng_int(r, 0, 99) < 85 ? h : log_uniform(r, 7, 224);
        const int64_t kind = rng_int(r, 0, 99);
        const bool depthwise = kind < 15, grouped = !depthwise && kind < 25;
        if (depthwise)
            pick_filter(r, SHARES(depthwise_filters), &fh, &fw);
        else
            pick_filter(r, SHARES(dense_filters), &fh, &fw);
        const int64_t stride = rng_int(r, 0, 99) < 75 ? 1 : 2;
        const int64_t dil = fh * fw > 1 && rng_int(r, 0, 99) < 8 ? 2 : 1;
        const bool same = rng_int(r, 0, 99) < 70;
        const int64_t pad_h = same ? dil * (fh - 1) / 2 : 0, pad_w = same ? dil * (fw - 1) / 2 : 0;
        if (depthwise) {
            c = k = groups = round_to(log_uniform(r, 8, 1024), 8, nc);
        } else if (grouped) { /* 2-64 groups of 4-64 channels */
            groups = (int64_t)1 << rng_int(r, 1, 6);
            c = groups * round_to(log_uniform(r, 4, 64), 4, nc);
            k = groups * round_to(log_uniform(r, 4, 64), 4, nc);
        } else {
            groups = 1;
            c = rng_int(r, 0, 99) < 5 ? 3 : round_to(log_uniform(r, 1, 1024), 8, nc);
            k = round_to(log_uniform(r, 1, 1024), 8, nc);
        }
        const int64_t v[14] = {n,     c,     h,      w,      k,   fh,  fw,
                               pad_h, pad_w, stride, stride, dil, dil, groups};
        if (out_size(h, fh, pad_h, stride, dil) < 1 || out_size(w, fw, pad_w, stride, dil) < 1 ||
            flops_of(v) > max_flops)
            continue;
        *out = (struct problem_row){0};
        if (problem_from_sizes(v, &out->p, NULL, 0) != CONVSEL_STATUS_SUCCESS)
            continue;
        snprintf(out->name, sizeof out->name, "sample%d", index);
        return;
    }
}

/* count scaled by 2^u, u in [-1, 1]; on multiples of 8 when count is one. */
static int64_t scale_count(struct rng *r, int64_t count) {
    const double f = exp2(rng_uniform(r, -1.0, 1.0));
    int64_t v = (int64_t)llround((double)count * f);
    if (count % 8 == 0 && count >= 16)
        v = (v + 4) / 8 * 8;
    return v < 1 ? 1 : v > 4096 ? 4096 : v;
}

bool sample_perturb(struct rng *r, const struct problem_row *layer, double max_flops,
                    struct problem_row *out, int index) {
    const struct conv_problem *p = &layer->p;
    const bool depthwise = p->groups > 1 && p->groups == p->c;
    const int64_t multiplier = depthwise ? p->k / p->c : 1;
    const int64_t orig[14] = {p->n,        p->c,     p->h,     p->w,     p->k,
                              p->r,        p->s,     p->pad_h, p->pad_w, p->stride_h,
                              p->stride_w, p->dil_h, p->dil_w, p->groups};
    for (int attempt = 0; attempt < 64; attempt++) {
        int64_t v[14];
        memcpy(v, orig, sizeof v);
        const int64_t what = rng_int(r, 1, 7); /* bits: batch, channels, sizes */
        if (what & 1)
            v[0] = log_uniform(r, 1, 32);
        if (what & 2) {
            if (depthwise) { /* depthwise stays depthwise, with its multiplier */
                v[1] = v[13] = scale_count(r, p->c);
                v[4] = v[1] * multiplier;
            } else if (p->groups > 1) { /* the same groups, other per-group counts */
                v[1] = p->groups * scale_count(r, p->c / p->groups);
                v[4] = p->groups * scale_count(r, p->k / p->groups);
            } else {
                if (p->c > 4) /* an RGB or audio stem keeps its input channels */
                    v[1] = scale_count(r, p->c);
                v[4] = scale_count(r, p->k);
            }
        }
        if (what & 4) {
            const double f = exp2(rng_uniform(r, -1.0, 1.0));
            if (p->h > 1)
                v[2] = (int64_t)llround((double)p->h * f);
            v[3] = (int64_t)llround((double)p->w * f);
        }
        const bool same = memcmp(v, orig, sizeof v) == 0;
        if (same || v[2] < 1 || v[3] < 1 || flops_of(v) > max_flops || flops_of(v) <= 0)
            continue;
        *out = (struct problem_row){0};
        if (problem_from_sizes(v, &out->p, NULL, 0) != CONVSEL_STATUS_SUCCESS)
            continue;
        snprintf(out->name, sizeof out->name, "%d~%.*s", index, (int)(sizeof out->name - 12),
                 layer->name);
        snprintf(out->network, sizeof out->network, "%s", layer->network);
        snprintf(out->family, sizeof out->family, "%s", layer->family);
        out->origin = PROBLEM_ORIGIN_PERTURBED;
        return true;
    }
    return false;
}
