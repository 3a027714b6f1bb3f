/* features.c -- problem features and their normalization (features.h). */
#include "heur/features.h"

#include <math.h>

const char *const feature_names[FEATURE_COUNT] = {
    "log2_batch",   "log2_in_channels", "log2_in_h",      "log2_in_w",    "log2_out_channels",
    "log2_out_h",   "log2_out_w",       "fil_h",          "fil_w",        "pad_h",
    "pad_w",        "stride_h",         "stride_w",       "dil_h",        "dil_w",
    "log2_groups",  "depthwise",        "layout_nhwc",    "log2_threads", "log2_flop",
    "log2_weights", "in_block_fill",    "out_block_fill", "tile_fill"};

/* How full the last block of 16 channels is (1 when count is a multiple of
 * 16): oneDNN's kernels compute in blocks of 16 channels, so 17 channels
 * cost about what 32 do, and the fastest solver changes with it. */
static double block_fill(int64_t count) {
    return (double)count / (double)(16 * ((count + 15) / 16));
}

/* The share of 4x4 output tiles that is output (1 when both output sizes
 * are multiples of 4): Winograd F(4x4, 3x3) computes whole tiles, so on a
 * 1-row output (a 1-D layer) three quarters of its work is thrown away. */
static double tile_fill(int64_t oh, int64_t ow) {
    return (double)(oh * ow) / (double)(16 * ((oh + 3) / 4) * ((ow + 3) / 4));
}

void features_of(const struct conv_problem *p, int threads, float out[FEATURE_COUNT]) {
    const double values[FEATURE_COUNT] = {
        log2((double)p->n), log2((double)p->c), log2((double)p->h), log2((double)p->w),
        log2((double)p->k), log2((double)p->oh), log2((double)p->ow), (double)p->r, (double)p->s,
        (double)p->pad_h, (double)p->pad_w, (double)p->stride_h, (double)p->stride_w,
        (double)p->dil_h, (double)p->dil_w, log2((double)p->groups),
        p->groups > 1 && p->groups == p->c ? 1.0 : 0.0,
        p->layout == CONVSEL_LAYOUT_NHWC ? 1.0 : 0.0, log2(threads > 0 ? (double)threads : 1.0),
        /* the work, and the weights a backend reorders
         * every call: products the MLP would otherwise
         * have to assemble from the sizes */
        log2(problem_flops(p)), log2((double)p->w_elems), block_fill(p->c), block_fill(p->k),
        tile_fill(p->oh, p->ow)};
    for (int i = 0; i < FEATURE_COUNT; i++)
        out[i] = (float)values[i];
}

void feature_stats_compute(const float *rows, size_t n, struct feature_stats *s) {
    for (int f = 0; f < FEATURE_COUNT; f++) {
        double sum = 0, sq = 0;
        for (size_t i = 0; i < n; i++)
            sum += rows[i * FEATURE_COUNT + f];
        const double mean = n ? sum / (double)n : 0;
        for (size_t i = 0; i < n; i++) {
            const double d = rows[i * FEATURE_COUNT + f] - mean;
            sq += d * d;
        }
        const double std = n ? sqrt(sq / (double)n) : 0;
        s->mean[f] = (float)mean;
        s->std[f] = std > 1e-6 ? (float)std : 1.0f;
    }
}

void features_normalize(float f[FEATURE_COUNT], const struct feature_stats *s) {
    for (int i = 0; i < FEATURE_COUNT; i++)
        f[i] = (f[i] - s->mean[i]) / s->std[i];
}
