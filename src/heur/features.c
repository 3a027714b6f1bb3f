/* features.c -- problem features and their normalization (features.h). */
#include "heur/features.h"

#include <math.h>
#include <stdio.h>

#include "util/cpu.h"
#include "util/machine.h"

const char *const feature_names[FEATURE_COUNT] = {
    "log2_batch",   "log2_in_channels", "log2_in_h",   "log2_in_w",    "log2_out_channels",
    "log2_out_h",   "log2_out_w",       "fil_h",       "fil_w",        "pad_h",
    "pad_w",        "stride_h",         "stride_w",    "dil_h",        "dil_w",
    "log2_groups",  "depthwise",        "layout_nhwc", "log2_threads", "log2_flop",
    "log2_weights", "in_aligned",       "out_aligned", "tile_fill"};

/* Whether count is a multiple of the ISA's channel block. oneDNN's kernels
 * compute in blocks of channels (16 with AVX-512, 8 with AVX2), and off
 * the block they take slower paths: on the AVX2 database its direct
 * solver is 1.85-1.91x the depthwise solver's time on 3x3 depthwise
 * layers whose channels are not a multiple of 8, 1.19-1.21x where they
 * are. Until 2026-12-07 this was the fill of the last block of 16 (120
 * channels 0.94, 122 0.95), which told the model nothing of that on AVX2:
 * ShuffleNet-V2's 122- and 244-channel layers were picked for oneDNN at
 * 2.25-2.79x the fastest (docs/model-features.md). */
static double aligned(int64_t count, int block) {
    return count % block == 0 ? 1.0 : 0.0;
}

int features_channel_block(const char *isa) {
    char name[MACHINE_SIGNATURE_MAX];
    if (isa == NULL)
        return 8;
    if (!machine_signature_parse(isa, name, sizeof name, NULL, NULL))
        snprintf(name, sizeof name, "%s", isa); /* a bare ISA name */
    enum cpu_isa level;
    return cpu_isa_parse(name, &level) && level == CPU_AVX512 ? 16 : 8;
}

/* The share of 4x4 output tiles that is output (1 when both output sizes
 * are multiples of 4): Winograd F(4x4, 3x3) computes whole tiles, so on a
 * 1-row output (a 1-D layer) three quarters of its work is thrown away. */
static double tile_fill(int64_t oh, int64_t ow) {
    return (double)(oh * ow) / (double)(16 * ((oh + 3) / 4) * ((ow + 3) / 4));
}

void features_of(const struct conv_problem *p, int threads, int channel_block,
                 float out[FEATURE_COUNT]) {
    const int block = channel_block > 0 ? channel_block : 8;
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
        log2(problem_flops(p)), log2((double)p->w_elems), aligned(p->c, block),
        aligned(p->k, block), tile_fill(p->oh, p->ow)};
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
