/* test_solver_depthwise.c -- the depthwise solver's kernels, every ISA
 * variant this CPU runs, against the reference: NCHW (the band kernel on
 * slabs of several sizes, and the row kernel) and NHWC, channel multipliers
 * 1 and 3, filters 1 to 7 wide (odd and even), strides 1 and 2, dilations 2 and 3, the band kernel
 * adding into its output (as the direct solver uses it), padding wider than the filter's reach,
 * rows shorter and longer than a vector, band heights that are and are not multiples of the
 * register block; the small-map kernel (vectorized over channels) with whole and short blocks of
 * channels; through the API, 1- and 2-thread handles and rows too wide for a slab. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/verify.h"
#include "problem_builder.h"
#include "solvers/kernels/depthwise_kernels.h"
#include "solvers/solver.h"
#include "testutil.h"
#include "util/rng.h"

/* Compares y with the reference's ref; names the case on failure. */
static void report(const struct test_problem *tp, const struct dw_kernels *kern, const char *what,
                   const float *y, const float *ref, size_t count) {
    struct verify_result r = verify_compare(y, ref, count);
    if (!CHECK(verify_passes(&r, 1e-5)))
        fprintf(stderr,
                "  %s (%lld lanes) %s %s c%lld k%lld %lldx%lld f%lld s%lld d%lld p%lld: %.3g\n",
                cpu_isa_name(kern->isa), (long long)kern->small_lanes,
                tp->layout == CONVSEL_LAYOUT_NCHW ? "NCHW" : "NHWC", what, (long long)tp->c,
                (long long)tp->k, (long long)tp->h, (long long)tp->w, (long long)tp->r,
                (long long)tp->stride_h, (long long)tp->dil_h, (long long)tp->pad_h, r.rel_error);
}

/* Runs the solver's kernels of one variant directly on tp (NCHW or
 * NHWC) and compares with the reference through the public API. */
static void check(convsel_handle_t h, const struct test_problem *tp,
                  const struct dw_kernels *kern) {
    struct test_descs d;
    if (!CHECK_STATUS(h, test_descs_create(h, tp, &d), CONVSEL_STATUS_SUCCESS))
        return;
    struct test_data t;
    test_data_create(h, &d, 13, &t);
    const float *x = t.x, *w = t.w, *ref = t.ref;
    float *y = t.y;
    const struct dw_geometry geo = {tp->h,        tp->w,        tp->r,     tp->s,        d.ow,
                                    tp->stride_h, tp->stride_w, tp->dil_h, tp->dil_w,    tp->pad_h,
                                    tp->pad_w,    tp->c,        tp->k,     tp->k / tp->c};
    const int64_t rs = tp->r * tp->s;
    if (tp->layout == CONVSEL_LAYOUT_NCHW) {
        const int64_t m = tp->k / tp->c;
        for (int64_t n = 0; n < tp->n; n++)
            for (int64_t k = 0; k < tp->k; k++)
                for (int64_t oy = 0; oy < d.oh; oy++)
                    kern->nchw_row(&geo, x + (n * tp->c + k / m) * tp->h * tp->w, w + k * rs, oy,
                                   y + ((n * tp->k + k) * d.oh + oy) * d.ow);
        report(tp, kern, "rows", y, ref, d.y_count);
        /* Slabs of 1, 2, 5 and 7 output rows and a whole plane, reused across
         * planes the way the solver does: cleared once per band. */
        const int64_t bands[] = {1, 2, 5, 7, d.oh};
        const size_t last = sizeof bands / sizeof bands[0] - 1;
        for (size_t b = 0; b < sizeof bands / sizeof bands[0]; b++) {
            struct dw_slab sl;
            dw_slab_plan(&geo, d.oh, 1, 1, SIZE_MAX, &sl); /* the row pitch */
            const size_t floats = (size_t)(dw_slab_rows(&geo, bands[b]) * sl.row_pitch);
            const int64_t want = bands[b] < d.oh ? bands[b] : d.oh;
            if (!CHECK(dw_slab_plan(&geo, d.oh, 1, 1, floats, &sl) && sl.band == want))
                continue;
            float *slab = malloc(floats * sizeof *slab);
            for (float *p = y; p < y + d.y_count; p++)
                *p = -1.0f;
            for (int64_t oy0 = 0; oy0 < d.oh; oy0 += sl.band) {
                const int64_t rows = d.oh - oy0 < sl.band ? d.oh - oy0 : sl.band;
                dw_slab_clear(&geo, &sl, rows, slab);
                for (int64_t n = 0; n < tp->n; n++)
                    for (int64_t k = 0; k < tp->k; k++) {
                        dw_slab_pack(&geo, &sl, x + (n * tp->c + k / m) * tp->h * tp->w, tp->w, 1,
                                     oy0, rows, slab);
                        /* the last slab size adds a second pass: y = 2 ref */
                        float *out = y + ((n * tp->k + k) * d.oh + oy0) * d.ow;
                        kern->nchw_band(&geo, &sl, slab, w + k * rs, rows, false, out);
                        if (b == last)
                            kern->nchw_band(&geo, &sl, slab, w + k * rs, rows, true, out);
                    }
            }
            free(slab);
            char what[48];
            snprintf(what, sizeof what, "bands of %lld%s", (long long)bands[b],
                     b == last ? ", accumulated twice" : "");
            if (b == last)
                for (float *p = y; p < y + d.y_count; p++)
                    *p *= 0.5f;
            report(tp, kern, what, y, ref, d.y_count);
        }
        /* The small-map kernel (any map size, called directly): blocks of
         * small_lanes channels, the last one short where k is not a multiple;
         * run last block first, so that a block writing past its channels
         * spoils outputs already checked in place. Its work buffer starts
         * as NaN each call: whatever the kernel reads without writing shows. */
        const int64_t lanes = kern->small_lanes;
        const size_t floats = dw_small_floats(&geo, d.oh, lanes);
        float *work = malloc(floats * sizeof *work);
        for (float *p = y; p < y + d.y_count; p++)
            *p = -1.0f;
        for (int64_t k0 = (tp->k - 1) / lanes * lanes; k0 >= 0; k0 -= lanes) {
            for (size_t i = 0; i < floats; i++)
                work[i] = NAN;
            /* all images in one call, or the last image alone after the rest */
            const int64_t first = k0 / lanes % 2 ? tp->n : tp->n - 1;
            const int64_t count = tp->k - k0 < lanes ? tp->k - k0 : lanes;
            kern->nchw_small(&geo, d.oh, x, first, w, k0, count, work, y);
            if (first < tp->n)
                kern->nchw_small(&geo, d.oh, x + first * tp->c * tp->h * tp->w, tp->n - first, w,
                                 k0, count, work, y + first * tp->k * d.oh * d.ow);
        }
        free(work);
        report(tp, kern, "small map", y, ref, d.y_count);
    } else {
        float *taps = malloc((size_t)(tp->k * rs) * sizeof *taps);
        for (int64_t k = 0; k < tp->k; k++)
            for (int64_t i = 0; i < rs; i++)
                taps[i * tp->k + k] = w[k * rs + i];
        for (int64_t n = 0; n < tp->n; n++)
            for (int64_t oy = 0; oy < d.oh; oy++)
                kern->nhwc_row(&geo, x + n * tp->h * tp->w * tp->c, taps, oy,
                               y + (n * d.oh + oy) * d.ow * tp->k);
        free(taps);
        report(tp, kern, "rows", y, ref, d.y_count);
    }
    test_data_destroy(&t);
    test_descs_destroy(&d);
}

/* The solver through the API (2 threads) against the reference. */
static void check_solver(convsel_handle_t h, const struct test_problem *tp) {
    struct test_descs d;
    if (!CHECK_STATUS(h, test_descs_create(h, tp, &d), CONVSEL_STATUS_SUCCESS))
        return;
    struct test_data t;
    test_data_create(h, &d, 5, &t);
    convsel_solver_id_t id;
    CHECK_STATUS(h, convsel_solver_find(h, "depthwise", &id), CONVSEL_STATUS_SUCCESS);
    convsel_set_num_threads(h, 2);
    CHECK_STATUS(h,
                 convsel_convolution_forward(h, id, d.x, t.x, d.w, t.w, d.conv, d.y, t.y, NULL, 0),
                 CONVSEL_STATUS_SUCCESS);
    report(tp, dw_kernels(), "solver", t.y, t.ref, d.y_count);
    test_data_destroy(&t);
    test_descs_destroy(&d);
}

int main(void) {
    convsel_handle_t h;
    convsel_handle_create(&h);
    int variants = 0;
    /* isa 3: the AVX-512 loops compiled for the baseline */
    for (int isa = CPU_GENERIC; isa <= CPU_AVX512 + 1; isa++) {
        const struct dw_kernels *kern =
            isa > CPU_AVX512 ? dw_kernels_wide_for_tests() : dw_kernels_variant((enum cpu_isa)isa);
        if (kern == NULL) {
            printf("%s: not supported by this CPU, not tested\n", cpu_isa_name((enum cpu_isa)isa));
            continue;
        }
        variants++;
        const int64_t cases[][8] = {
            /* c, mult, hw, f, stride, dil, pad, n */
            {8, 1, 9, 3, 1, 1, 1, 2},
            {16, 1, 33, 3, 1, 1, 1, 1},
            {5, 3, 12, 3, 2, 1, 1, 1},
            {7, 1, 20, 5, 1, 2, 4, 1},
            {3, 2, 7, 7, 1, 1, 3, 2},
            {32, 1, 17, 3, 2, 1, 0, 1},
            {4, 1, 3, 5, 1, 1, 5, 1},
            {24, 1, 64, 3, 1, 1, 1, 1},
            {1, 4, 40, 1, 1, 1, 0, 1},
            /* even filter widths: the AVX-512 kernel's taps in pairs, no odd tap left */
            {6, 1, 15, 4, 2, 1, 2, 1},
            {5, 1, 11, 2, 1, 3, 1, 1},
            {9, 1, 21, 6, 2, 2, 5, 1},
            /* small maps (the small-map kernel's cases through the solver):
             * whole blocks of 8 and 16 channels, plane sizes that are and are
             * not multiples of 8 pixels, a last row and column never read
             * (4x4, 3x3/2 unpadded), a channel multiplier of 2 */
            {32, 1, 7, 3, 1, 1, 1, 2},
            {16, 1, 4, 3, 2, 1, 0, 1},
            {48, 1, 2, 3, 2, 1, 1, 3},
            {8, 2, 6, 5, 1, 1, 2, 1},
            {17, 1, 1, 3, 1, 1, 1, 2},
            {40, 1, 20, 3, 2, 2, 2, 1},
            /* stride 2 on rows of 40 and 37: the pack's paired loop and its tails */
            {3, 1, 40, 3, 2, 1, 1, 1},
            {2, 1, 37, 5, 2, 1, 0, 1},
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            for (int layout = 0; layout < 2; layout++) {
                const int64_t *c = cases[i];
                struct test_problem tp = test_problem_default();
                tp.c = tp.groups = c[0], tp.k = c[0] * c[1], tp.h = tp.w = c[2];
                tp.r = tp.s = c[3], tp.stride_h = tp.stride_w = c[4], tp.dil_h = tp.dil_w = c[5];
                tp.pad_h = tp.pad_w = c[6], tp.n = c[7];
                tp.layout = layout ? CONVSEL_LAYOUT_NHWC : CONVSEL_LAYOUT_NCHW;
                tp.filter_layout = layout ? CONVSEL_FILTER_KRSC : CONVSEL_FILTER_KCRS;
                check(h, &tp, kern);
            }
    }
    printf("%d kernel variants checked (the 16-float loops among them); chosen: %s\n", variants,
           cpu_isa_name(dw_kernels()->isa));
    CHECK(variants >= 2);
    /* Through the API: a plane split into bands for balance (2 planes, 2
     * threads), and rows too wide for a slab (the row kernel's fallback). */
    struct test_problem split = test_problem_default();
    split.c = split.groups = split.k = 2, split.h = split.w = 40, split.pad_h = split.pad_w = 1;
    struct test_problem wide = test_problem_default();
    wide.c = wide.groups = wide.k = 2, wide.h = 3, wide.w = 4000, wide.pad_h = wide.pad_w = 1;
    /* A 1-D layer (H = 1: one-row blocks, where the AVX-512 kernel splits
     * the taps over four sets of sums) with a wide, dilated filter. */
    struct test_problem line = test_problem_default();
    line.c = line.groups = line.k = 6, line.h = 1, line.w = 300, line.r = 1, line.s = 9;
    line.pad_h = 0, line.pad_w = 8, line.dil_w = 2;
    check_solver(h, &split);
    check_solver(h, &wide);
    check_solver(h, &line);
    /* Small maps through the solver: blocks of channels over chunks of
     * images (5 images of 5 blocks on 2 threads: chunks of 3 and 2), the
     * last block short, a channel multiplier, a strided map 12 wide. */
    const int64_t smalls[][7] = {
        /* n, c, mult, hw, f, stride, pad */
        {5, 40, 1, 7, 3, 1, 1},
        {3, 12, 2, 5, 5, 1, 2},
        {1, 3, 1, 2, 3, 2, 1},
        {2, 20, 1, 24, 3, 2, 1},
    };
    for (size_t i = 0; i < sizeof smalls / sizeof smalls[0]; i++) {
        const int64_t *c = smalls[i];
        struct test_problem tp = test_problem_default();
        tp.n = c[0], tp.c = tp.groups = c[1], tp.k = c[1] * c[2], tp.h = tp.w = c[3];
        tp.r = tp.s = c[4], tp.stride_h = tp.stride_w = c[5], tp.pad_h = tp.pad_w = c[6];
        check_solver(h, &tp);
    }
    /* The solver through the API with 1 and 2 threads gives the same bits. */
    struct test_problem tp = test_problem_default();
    tp.c = tp.groups = tp.k = 24, tp.h = tp.w = 31, tp.pad_h = tp.pad_w = 1, tp.n = 3;
    struct test_descs d;
    test_descs_create(h, &tp, &d);
    float *x = calloc(d.x_count, sizeof *x), *w = calloc(d.w_count, sizeof *w);
    float *y1 = malloc(d.y_count * sizeof *y1), *y2 = malloc(d.y_count * sizeof *y2);
    struct rng g = rng_seed(3);
    rng_fill(&g, x, d.x_count);
    rng_fill(&g, w, d.w_count);
    convsel_solver_id_t id;
    CHECK_STATUS(h, convsel_solver_find(h, "depthwise", &id), CONVSEL_STATUS_SUCCESS);
    convsel_set_num_threads(h, 1);
    CHECK_STATUS(h, convsel_convolution_forward(h, id, d.x, x, d.w, w, d.conv, d.y, y1, NULL, 0),
                 CONVSEL_STATUS_SUCCESS);
    convsel_set_num_threads(h, 2);
    CHECK_STATUS(h, convsel_convolution_forward(h, id, d.x, x, d.w, w, d.conv, d.y, y2, NULL, 0),
                 CONVSEL_STATUS_SUCCESS);
    bool same = true;
    for (size_t i = 0; i < d.y_count; i++)
        same &= y1[i] == y2[i];
    CHECK(same);
    free(x), free(w), free(y1), free(y2);
    test_descs_destroy(&d);
    convsel_handle_destroy(h);
    return test_finish("test_solver_depthwise");
}
