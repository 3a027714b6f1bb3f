/* test_solver_direct_blocked.c -- the direct_blocked solver and its kernels.
 *
 * Through the API: where it applies (grouped layers and stems, packed NCHW;
 * not dense layers of more than 4 input channels, depthwise ones, 1x1
 * filters, strides of 8 or more or NHWC, each refused with its reason)
 * and its answers against the reference on the shapes it is for, with 1
 * and 2 threads.
 *
 * The kernels directly: every variant this CPU runs, and the AVX-512 loop
 * (16-float vectors, 6 positions) compiled for this CPU so that its block
 * and tail logic is checked on machines without AVX-512, on bands built by
 * hand against sums in double: output channel counts on both sides of the
 * 4-channel blocks, rows in blocks and remainders, one-row (1-D) bands in
 * column blocks with a short tail, strides, dilations and padding, the
 * channels at once and in chunks (a later chunk adding to y). The
 * output planes around the band (guard rows) must be left untouched. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/verify.h"
#include "problem_builder.h"
#include "solvers/kernels/blocked_kernels.h"
#include "testutil.h"
#include "util/cpu.h"
#include "util/rng.h"

static convsel_solver_id_t blocked_id(convsel_handle_t h) {
    convsel_solver_id_t id = 0;
    CHECK_STATUS(h, convsel_solver_find(h, "direct_blocked", &id), CONVSEL_STATUS_SUCCESS);
    return id;
}

static void check_applies(convsel_handle_t h, const struct test_problem *tp, const char *refusal) {
    struct test_descs d;
    if (!CHECK_STATUS(h, test_descs_create(h, tp, &d), CONVSEL_STATUS_SUCCESS))
        return;
    const convsel_status_t st =
        convsel_solver_is_applicable(h, blocked_id(h), d.x, d.w, d.conv, d.y);
    if (refusal == NULL) {
        CHECK_STATUS(h, st, CONVSEL_STATUS_SUCCESS);
    } else {
        CHECK_STATUS(h, st, CONVSEL_STATUS_NOT_SUPPORTED);
        if (!CHECK(strstr(convsel_get_error_message(h), refusal) != NULL))
            printf("  message: %s\n", convsel_get_error_message(h));
    }
    test_descs_destroy(&d);
}

static void check_applicability(convsel_handle_t h) {
    struct test_problem tp = test_problem_default();
    tp.c = tp.k = 32, tp.h = tp.w = 14, tp.r = tp.s = 3, tp.pad_h = tp.pad_w = 1, tp.groups = 4;
    check_applies(h, &tp, NULL);
    tp.groups = 32; /* depthwise */
    check_applies(h, &tp, "depthwise solver");
    tp.groups = 1; /* dense, 32 input channels */
    check_applies(h, &tp, "grouped layers and stems");
    tp.c = 4; /* a stem */
    check_applies(h, &tp, NULL);
    tp.c = 5;
    check_applies(h, &tp, "grouped layers and stems");
    tp.c = 32, tp.groups = 4, tp.r = tp.s = 1, tp.pad_h = tp.pad_w = 0; /* 1x1: a GEMM's */
    check_applies(h, &tp, "1x1 filters");
    tp.r = 1, tp.s = 3, tp.pad_w = 1; /* 1x3: the solver's */
    check_applies(h, &tp, NULL);
    tp.r = tp.s = 3, tp.pad_h = tp.pad_w = 1;
    struct test_problem patch = test_problem_default(); /* ViT-B/16's stem */
    patch.c = 3, patch.k = 768, patch.h = patch.w = 224, patch.r = patch.s = 16;
    patch.stride_h = patch.stride_w = 16;
    check_applies(h, &patch, "strides of 8 or more");
    patch.r = patch.s = 7, patch.stride_h = patch.stride_w = 4; /* a 7x7/4 stem: the solver's */
    check_applies(h, &patch, NULL);
    tp.c = 32, tp.groups = 4, tp.layout = CONVSEL_LAYOUT_NHWC;
    tp.filter_layout = CONVSEL_FILTER_KRSC;
    check_applies(h, &tp, "packed NCHW");
    tp.layout = CONVSEL_LAYOUT_NCHW, tp.filter_layout = CONVSEL_FILTER_KCRS;
    tp.c = tp.k = 8, tp.groups = 2, tp.h = 4, tp.w = 6000; /* 3 rows of 6000: over 64 KiB */
    check_applies(h, &tp, "64 KiB");
}

static void check_answer(convsel_handle_t h, const struct test_problem *tp, int threads) {
    struct test_descs d;
    if (!CHECK_STATUS(h, test_descs_create(h, tp, &d), CONVSEL_STATUS_SUCCESS))
        return;
    struct test_data t;
    test_data_create(h, &d, 23, &t);
    convsel_set_num_threads(h, threads);
    size_t ws = 0;
    CHECK_STATUS(h,
                 convsel_get_forward_workspace_size(h, blocked_id(h), d.x, d.w, d.conv, d.y, &ws),
                 CONVSEL_STATUS_SUCCESS);
    void *workspace = ws ? malloc(ws) : NULL;
    CHECK_STATUS(h,
                 convsel_convolution_forward(h, blocked_id(h), d.x, t.x, d.w, t.w, d.conv, d.y, t.y,
                                             workspace, ws),
                 CONVSEL_STATUS_SUCCESS);
    const struct verify_result r = verify_compare(t.y, t.ref, d.y_count);
    if (!CHECK(verify_passes(&r, 1e-4)))
        printf("  n=%lld c=%lld k=%lld %lldx%lld on %lldx%lld stride %lld dil %lld groups %lld, %d "
               "threads: rel error %.3g\n",
               (long long)tp->n, (long long)tp->c, (long long)tp->k, (long long)tp->r,
               (long long)tp->s, (long long)tp->h, (long long)tp->w, (long long)tp->stride_h,
               (long long)tp->dil_h, (long long)tp->groups, threads, r.rel_error);
    free(workspace);
    test_data_destroy(&t);
    test_descs_destroy(&d);
}

static void check_answers(convsel_handle_t h) {
    const int64_t cases[][11] = {
        /* n, c, k, h, w, r, s, stride, dil, pad, groups */
        {2, 64, 64, 14, 14, 3, 3, 1, 1, 1, 8}, /* ResNeXt-like, 8 per group */
        {1, 48, 48, 15, 13, 3, 3, 2, 1, 1, 3}, /* RegNet-like stride 2, odd map */
        {1, 3, 64, 45, 43, 7, 7, 2, 1, 3, 1},  /* a stem */
        {2, 3, 5, 32, 32, 4, 4, 4, 1, 0, 1},   /* a patch stem, 5 channels: one padded block */
        {1, 2, 9, 21, 19, 5, 5, 1, 2, 4, 1},   /* two channels, dilated */
        {3, 24, 18, 1, 70, 1, 5, 1, 3, 6, 6},  /* a 1-D layer: column blocks, tail */
        {1, 40, 20, 9, 9, 3, 1, 1, 1, 1, 10},  /* 4 -> 2 channels per group */
        {1, 4, 7, 23, 33, 11, 3, 3, 2, 5, 1},  /* tall filter, strides 3 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int threads = 1; threads <= 2; threads++) {
            const int64_t *c = cases[i];
            struct test_problem tp = test_problem_default();
            tp.n = c[0], tp.c = c[1], tp.k = c[2], tp.h = c[3], tp.w = c[4], tp.r = c[5];
            tp.s = c[6], tp.stride_h = tp.stride_w = c[7], tp.dil_h = tp.dil_w = c[8];
            tp.pad_h = tp.r > 1 ? c[9] : 0, tp.pad_w = c[9], tp.groups = c[10];
            check_answer(h, &tp, threads);
        }
}

/* ---- the kernels on hand-built bands ---- */

struct band_case {
    int64_t cg, kg, h, w, r, s, stride_h, stride_w, dil_h, dil_w, pad_h, pad_w;
};

static int64_t out_size(int64_t in, int64_t f, int64_t stride, int64_t dil, int64_t pad) {
    return (in + 2 * pad - dil * (f - 1) - 1) / stride + 1;
}

/* One band of output rows [oy0, oy0 + rows) through kern, against double
 * sums; guard rows above and below every plane's band must stay NaN. */
static bool run_band(const struct db_kernels *kern, const struct band_case *bc, int64_t oy0,
                     int64_t rows, int64_t chunk, struct rng *g) {
    const int64_t oh = out_size(bc->h, bc->r, bc->stride_h, bc->dil_h, bc->pad_h);
    const int64_t ow = out_size(bc->w, bc->s, bc->stride_w, bc->dil_w, bc->pad_w);
    const struct dw_geometry geo = {
        bc->h,     bc->w,     bc->r, bc->s, ow, bc->stride_h, bc->stride_w, bc->dil_h, bc->dil_w,
        bc->pad_h, bc->pad_w, 1,     1,     1};
    struct dw_slab sl;
    if (!CHECK(dw_slab_plan(&geo, oh, 1, 1, 1 << 20, &sl)))
        return false;
    const int64_t slab_floats = dw_slab_rows(&geo, rows) * sl.row_pitch;
    const int64_t blocks = (bc->kg + DB_KB - 1) / DB_KB, taps = bc->r * bc->s;
    float *x = malloc(sizeof(float) * (size_t)(bc->cg * bc->h * bc->w));
    float *w = malloc(sizeof(float) * (size_t)(bc->kg * bc->cg * taps));
    float *wt = calloc((size_t)(blocks * DB_KB * bc->cg * taps), sizeof(float));
    float *slabs = malloc(sizeof(float) * (size_t)(bc->cg * slab_floats));
    float *y = malloc(sizeof(float) * (size_t)(bc->kg * oh * ow));
    int32_t *col_off = malloc(sizeof(int32_t) * (size_t)bc->s);
    for (int64_t i = 0; i < bc->cg * bc->h * bc->w; i++)
        x[i] = (float)rng_uniform(g, -1, 1);
    for (int64_t i = 0; i < bc->kg * bc->cg * taps; i++)
        w[i] = (float)rng_uniform(g, -1, 1);
    for (int64_t k = 0; k < bc->kg; k++) /* [block][c][r][s][DB_KB] */
        for (int64_t c = 0; c < bc->cg; c++)
            for (int64_t t = 0; t < taps; t++)
                wt[((k / DB_KB * bc->cg + c) * taps + t) * DB_KB + k % DB_KB] =
                    w[(k * bc->cg + c) * taps + t];
    for (int64_t c = 0; c < bc->cg; c++) {
        dw_slab_clear(&geo, &sl, rows, slabs + c * slab_floats);
        dw_slab_pack(&geo, &sl, x + c * bc->h * bc->w, bc->w, 1, oy0, rows,
                     slabs + c * slab_floats);
    }
    db_column_offsets(&geo, &sl, col_off);
    for (int64_t i = 0; i < bc->kg * oh * ow; i++)
        y[i] = NAN;
    /* in chunks of channels, each after the first added to y */
    for (int64_t c0 = 0; c0 < bc->cg; c0 += chunk) {
        const struct db_band b = {
            .g = &geo,
            .sl = &sl,
            .slabs = slabs + c0 * slab_floats,
            .slab_floats = slab_floats,
            .cg = bc->cg - c0 < chunk ? bc->cg - c0 : chunk,
            .col_off = col_off,
            .taps = wt + c0 * taps * DB_KB,
            .block_floats = bc->cg * taps * DB_KB,
            .kg = bc->kg,
            .accumulate = c0 > 0,
            .rows = rows,
            .y = y + oy0 * ow,
            .y_plane = oh * ow,
        };
        kern->band(&b);
    }
    bool guards = true;
    double worst = 0;
    for (int64_t k = 0; k < bc->kg; k++)
        for (int64_t oy = 0; oy < oh; oy++)
            for (int64_t ox = 0; ox < ow; ox++) {
                const float got = y[(k * oh + oy) * ow + ox];
                if (oy < oy0 || oy >= oy0 + rows) {
                    guards &= isnan(got); /* outside the band: untouched */
                    continue;
                }
                double sum = 0, mag = 0;
                for (int64_t c = 0; c < bc->cg; c++)
                    for (int64_t r = 0; r < bc->r; r++)
                        for (int64_t s = 0; s < bc->s; s++) {
                            const int64_t iy = oy * bc->stride_h - bc->pad_h + r * bc->dil_h;
                            const int64_t ix = ox * bc->stride_w - bc->pad_w + s * bc->dil_w;
                            if (iy < 0 || iy >= bc->h || ix < 0 || ix >= bc->w)
                                continue;
                            const double p = (double)x[(c * bc->h + iy) * bc->w + ix] *
                                             w[((k * bc->cg + c) * bc->r + r) * bc->s + s];
                            sum += p, mag += fabs(p);
                        }
                const double err = isnan(got) ? INFINITY : fabs(got - sum) / (mag + 1e-30);
                worst = err > worst ? err : worst;
            }
    const bool ok = guards && worst < 1e-5;
    if (!CHECK(ok))
        printf("  %s x%d: cg %lld kg %lld %lldx%lld on %lldx%lld stride %lldx%lld dil %lldx%lld "
               "pad %lldx%lld, rows %lld from %lld, chunks of %lld: worst relative error %.3g, "
               "guards %s\n",
               cpu_isa_name(kern->isa), kern->lanes, (long long)bc->cg, (long long)bc->kg,
               (long long)bc->r, (long long)bc->s, (long long)bc->h, (long long)bc->w,
               (long long)bc->stride_h, (long long)bc->stride_w, (long long)bc->dil_h,
               (long long)bc->dil_w, (long long)bc->pad_h, (long long)bc->pad_w, (long long)rows,
               (long long)oy0, (long long)chunk, worst, guards ? "kept" : "overwritten");
    free(x), free(w), free(wt), free(slabs), free(y), free(col_off);
    return ok;
}

static void check_kernels(const struct db_kernels *kern, struct rng *g) {
    const struct band_case cases[] = {
        /* cg kg  h   w   r  s  sh sw dh dw ph pw */
        {8, 8, 14, 14, 3, 3, 1, 1, 1, 1, 1, 1},  {3, 5, 30, 37, 7, 7, 2, 2, 1, 1, 3, 3},
        {2, 1, 9, 40, 3, 5, 1, 3, 2, 1, 2, 2},   {5, 9, 13, 17, 1, 1, 1, 1, 1, 1, 0, 0},
        {4, 6, 1, 100, 1, 3, 1, 1, 1, 4, 0, 4},  {1, 4, 1, 23, 1, 7, 1, 2, 1, 1, 0, 3},
        {6, 3, 20, 7, 5, 2, 2, 1, 3, 2, 4, 1},   {2, 12, 8, 49, 4, 4, 4, 4, 1, 1, 0, 0},
        {3, 7, 1, 301, 1, 11, 1, 1, 1, 1, 0, 5},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct band_case *bc = &cases[i];
        const int64_t oh = out_size(bc->h, bc->r, bc->stride_h, bc->dil_h, bc->pad_h);
        /* the whole map as one band; then bands of 1, 4 and 7 rows from row 1 */
        run_band(kern, bc, 0, oh, bc->cg, g);
        for (int64_t rows = 1; rows <= 7; rows += 3)
            if (1 + rows <= oh)
                run_band(kern, bc, 1, rows, bc->cg, g);
        /* the channels in chunks of 2 (the last may have 1) */
        if (bc->cg > 1)
            run_band(kern, bc, 0, oh, 2, g);
    }
}

int main(void) {
    convsel_handle_t h;
    convsel_handle_create(&h);
    check_applicability(h);
    check_answers(h);
    convsel_handle_destroy(h);

    struct rng g = rng_seed(5);
    int variants = 0;
    for (int isa = CPU_GENERIC; isa <= CPU_AVX512; isa++) {
        const struct db_kernels *kern = db_kernels_variant((enum cpu_isa)isa);
        if (kern == NULL) {
            printf("kernels %s: this CPU does not run them\n", cpu_isa_name((enum cpu_isa)isa));
            continue;
        }
        CHECK(kern->isa == (enum cpu_isa)isa);
        check_kernels(kern, &g);
        variants++;
    }
    check_kernels(db_kernels_wide_for_tests(), &g);
    printf("kernels: %d variants of this CPU and the 16-float loop checked\n", variants);
    return test_finish("test_solver_direct_blocked");
}
