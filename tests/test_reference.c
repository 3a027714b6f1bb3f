/* test_reference.c -- the oracle itself: small cases computed by hand, and
 * random problems against an independent formulation written here
 * (explicit zero-padded copy + im2col + naive matmul, packed NCHW/KCRS,
 * with layout conversions done by this file, not the library). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "problem_builder.h"
#include "testutil.h"
#include "util/rng.h"

static convsel_handle_t h;
static convsel_solver_id_t ref;

/* Runs the reference on tp with x, w given in tp's layouts. */
static bool run_ref(const struct test_problem *tp, const float *x, const float *w, float *y) {
    struct test_descs d;
    bool ok = CHECK_STATUS(h, test_descs_create(h, tp, &d), CONVSEL_STATUS_SUCCESS) &&
              CHECK_STATUS(
                  h, convsel_convolution_forward(h, ref, d.x, x, d.w, w, d.conv, d.y, y, NULL, 0),
                  CONVSEL_STATUS_SUCCESS);
    test_descs_destroy(&d);
    return ok;
}

static bool same(const float *a, const float *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i]) {
            fprintf(stderr, "  element %zu: got %g, want %g\n", i, a[i], b[i]);
            return false;
        }
    return true;
}

/* x = 1..9 as a 3x3 image. */
static const float x9[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};

static void test_hand_cases(void) {
    struct test_problem tp = test_problem_default();
    tp.h = tp.w = 3, tp.r = tp.s = 2;
    const float ones4[4] = {1, 1, 1, 1};
    float y[16];

    /* 2x2 box filter, stride 1: sums of each 2x2 window. */
    run_ref(&tp, x9, ones4, y);
    CHECK(same(y, (const float[]){12, 16, 24, 28}, 4));

    /* Cross-correlation, not convolution: w = [1 0; 0 0] picks the top-left tap. */
    run_ref(&tp, x9, (const float[]){1, 0, 0, 0}, y);
    CHECK(same(y, (const float[]){1, 2, 4, 5}, 4));
    run_ref(&tp, x9, (const float[]){0, 0, 0, 1}, y);
    CHECK(same(y, (const float[]){5, 6, 8, 9}, 4));

    /* pad 1, stride 2, 2x2 ones: windows at rows {-1,0},{1,2} x cols {-1,0},{1,2}. */
    tp.pad_h = tp.pad_w = 1, tp.stride_h = tp.stride_w = 2;
    run_ref(&tp, x9, ones4, y);
    CHECK(same(y, (const float[]){1, 2 + 3, 4 + 7, 5 + 6 + 8 + 9}, 4));

    /* Dilation 2 with a 2x2 filter on 3x3: the four corners, once. */
    tp = test_problem_default();
    tp.h = tp.w = 3, tp.r = tp.s = 2, tp.dil_h = tp.dil_w = 2;
    run_ref(&tp, x9, (const float[]){1, 10, 100, 1000}, y);
    CHECK(same(y, (const float[]){1 * 1 + 3 * 10 + 7 * 100 + 9 * 1000}, 1));

    /* Asymmetric: 1x3 filter, pad_w 1, stride_w 2 on 3x3 -> 3x2. */
    tp = test_problem_default();
    tp.h = tp.w = 3, tp.r = 1, tp.s = 3, tp.pad_w = 1, tp.stride_w = 2;
    run_ref(&tp, x9, (const float[]){1, 2, 3}, y);
    /* row i, col 0: taps at cols -1,0,1 -> 2*x0 + 3*x1; col 1: cols 1,2,3 -> x1 + 2*x2 */
    CHECK(same(y,
               (const float[]){2 * 1 + 3 * 2, 2 + 2 * 3, 2 * 4 + 3 * 5, 5 + 2 * 6, 2 * 7 + 3 * 8,
                               8 + 2 * 9},
               6));

    /* Groups: 2 input channels, 2 groups, 1x1 filters [2], [3] -> channel-wise scale. */
    tp = test_problem_default();
    tp.c = tp.k = tp.groups = 2, tp.h = 1, tp.w = 2, tp.r = tp.s = 1;
    run_ref(&tp, (const float[]){1, 2, 10, 20}, (const float[]){2, 3}, y);
    CHECK(same(y, (const float[]){2, 4, 30, 60}, 4));
    /* Same input, no groups: each output sums both channels. */
    tp.groups = 1;
    run_ref(&tp, (const float[]){1, 2, 10, 20}, (const float[]){2, 3, 1, -1}, y);
    CHECK(same(y, (const float[]){2 + 30, 4 + 60, 1 - 10, 2 - 20}, 4));

    /* Batch: two images are independent. */
    tp = test_problem_default();
    tp.n = 2, tp.h = tp.w = 3, tp.r = tp.s = 2;
    float x18[18];
    for (int i = 0; i < 9; i++)
        x18[i] = x9[i], x18[9 + i] = -x9[i];
    run_ref(&tp, x18, ones4, y);
    CHECK(same(y, (const float[]){12, 16, 24, 28, -12, -16, -24, -28}, 8));

    /* NHWC: the 2-channel groups case with interleaved channels. */
    tp = test_problem_default();
    tp.c = tp.k = tp.groups = 2, tp.h = 1, tp.w = 2, tp.r = tp.s = 1;
    tp.layout = CONVSEL_LAYOUT_NHWC, tp.filter_layout = CONVSEL_FILTER_KRSC;
    run_ref(&tp, (const float[]){1, 10, 2, 20}, (const float[]){2, 3}, y);
    CHECK(same(y, (const float[]){2, 30, 4, 60}, 4));
}

/* ---------------- the independent formulation ---------------- */

/* Converts between NHWC and NCHW (dir 0: NHWC -> NCHW). */
static void transpose_nhwc(const float *src, float *dst, int64_t n, int64_t c, int64_t hh,
                           int64_t ww, int dir) {
    for (int64_t i = 0; i < n; i++)
        for (int64_t ch = 0; ch < c; ch++)
            for (int64_t y = 0; y < hh; y++)
                for (int64_t x = 0; x < ww; x++) {
                    const size_t nchw = (size_t)(((i * c + ch) * hh + y) * ww + x);
                    const size_t nhwc = (size_t)(((i * hh + y) * ww + x) * c + ch);
                    if (dir == 0)
                        dst[nchw] = src[nhwc];
                    else
                        dst[nhwc] = src[nchw];
                }
}

/* y = conv(x, w) in NCHW/KCRS by padding x into a larger buffer, building
 * the im2col matrix explicitly and multiplying naively in double. */
static void independent_conv(const struct test_problem *tp, int64_t oh, int64_t ow, const float *x,
                             const float *w, float *y) {
    const int64_t ph = tp->h + 2 * tp->pad_h, pw = tp->w + 2 * tp->pad_w;
    const int64_t cg = tp->c / tp->groups, kg = tp->k / tp->groups;
    const int64_t rows = cg * tp->r * tp->s, cols = oh * ow;
    float *pad = calloc((size_t)(tp->n * tp->c * ph * pw), sizeof *pad);
    double *col = malloc((size_t)(rows * cols) * sizeof *col);
    for (int64_t i = 0; i < tp->n * tp->c; i++)
        for (int64_t yy = 0; yy < tp->h; yy++)
            memcpy(pad + (i * ph + yy + tp->pad_h) * pw + tp->pad_w, x + (i * tp->h + yy) * tp->w,
                   (size_t)tp->w * sizeof *x);
    for (int64_t i = 0; i < tp->n; i++)
        for (int64_t g = 0; g < tp->groups; g++) {
            for (int64_t c = 0; c < cg; c++)
                for (int64_t r = 0; r < tp->r; r++)
                    for (int64_t s = 0; s < tp->s; s++)
                        for (int64_t j = 0; j < cols; j++) {
                            const int64_t py = (j / ow) * tp->stride_h + r * tp->dil_h;
                            const int64_t px = (j % ow) * tp->stride_w + s * tp->dil_w;
                            col[((c * tp->r + r) * tp->s + s) * cols + j] =
                                pad[((i * tp->c + g * cg + c) * ph + py) * pw + px];
                        }
            for (int64_t k = 0; k < kg; k++)
                for (int64_t j = 0; j < cols; j++) {
                    double acc = 0;
                    for (int64_t t = 0; t < rows; t++)
                        acc += (double)w[(g * kg + k) * rows + t] * col[t * cols + j];
                    y[((i * tp->k + g * kg + k) * oh) * ow + j] = (float)acc;
                }
        }
    free(pad);
    free(col);
}

static void test_against_independent(void) {
    struct rng g = rng_seed(2024);
    int ran = 0;
    for (int iter = 0; iter < 300; iter++) {
        struct test_problem tp = test_problem_default();
        tp.groups = rng_int(&g, 1, 3);
        tp.n = rng_int(&g, 1, 3);
        tp.c = tp.groups * rng_int(&g, 1, 4);
        tp.k = tp.groups * rng_int(&g, 1, 4);
        tp.h = rng_int(&g, 1, 12);
        tp.w = rng_int(&g, 1, 12);
        tp.r = rng_int(&g, 1, 5);
        tp.s = rng_int(&g, 1, 5);
        tp.pad_h = rng_int(&g, 0, 3);
        tp.pad_w = rng_int(&g, 0, 3);
        tp.stride_h = rng_int(&g, 1, 3);
        tp.stride_w = rng_int(&g, 1, 3);
        tp.dil_h = rng_int(&g, 1, 3);
        tp.dil_w = rng_int(&g, 1, 3);
        const bool nhwc = rng_int(&g, 0, 1), krsc = rng_int(&g, 0, 1);
        tp.layout = nhwc ? CONVSEL_LAYOUT_NHWC : CONVSEL_LAYOUT_NCHW;
        tp.filter_layout = krsc ? CONVSEL_FILTER_KRSC : CONVSEL_FILTER_KCRS;
        struct test_descs d;
        if (test_descs_create(h, &tp, &d) != CONVSEL_STATUS_SUCCESS) {
            test_descs_destroy(&d);
            continue; /* the filter does not fit */
        }
        const int64_t cg = tp.c / tp.groups;
        float *x = malloc(d.x_count * sizeof *x), *w = malloc(d.w_count * sizeof *w);
        float *x_nchw = malloc(d.x_count * sizeof *x), *w_kcrs = malloc(d.w_count * sizeof *w);
        float *y = malloc(d.y_count * sizeof *y), *y_lib = malloc(d.y_count * sizeof *y);
        float *want = malloc(d.y_count * sizeof *y);
        rng_fill(&g, x_nchw, d.x_count);
        rng_fill(&g, w_kcrs, d.w_count);
        if (nhwc)
            transpose_nhwc(x_nchw, x, tp.n, tp.c, tp.h, tp.w, 1);
        else
            memcpy(x, x_nchw, d.x_count * sizeof *x);
        if (krsc) /* KRSC is NHWC-shaped with (k, c, r, s) as (n, c, h, w) */
            transpose_nhwc(w_kcrs, w, tp.k, cg, tp.r, tp.s, 1);
        else
            memcpy(w, w_kcrs, d.w_count * sizeof *w);
        independent_conv(&tp, d.oh, d.ow, x_nchw, w_kcrs, want);
        CHECK_STATUS(
            h, convsel_convolution_forward(h, ref, d.x, x, d.w, w, d.conv, d.y, y_lib, NULL, 0),
            CONVSEL_STATUS_SUCCESS);
        if (nhwc)
            transpose_nhwc(y_lib, y, tp.n, tp.k, d.oh, d.ow, 0);
        else
            memcpy(y, y_lib, d.y_count * sizeof *y);
        /* Both accumulate in double and round once: results agree to 1 ulp. */
        bool ok = true;
        for (size_t i = 0; i < d.y_count && ok; i++)
            ok = fabsf(y[i] - want[i]) <= 1e-6f * (1.0f + fabsf(want[i]));
        if (!CHECK(ok))
            fprintf(stderr, "  mismatch: n%lld c%lld %lldx%lld k%lld %lldx%lld g%lld %s %s\n",
                    (long long)tp.n, (long long)tp.c, (long long)tp.h, (long long)tp.w,
                    (long long)tp.k, (long long)tp.r, (long long)tp.s, (long long)tp.groups,
                    nhwc ? "NHWC" : "NCHW", krsc ? "KRSC" : "KCRS");
        ran++;
        free(x), free(w), free(x_nchw), free(w_kcrs), free(y), free(y_lib), free(want);
        test_descs_destroy(&d);
    }
    CHECK(ran > 150);
}

/* A view into a larger buffer (explicit strides) gives the packed result. */
static void test_strided_view(void) {
    struct test_problem tp = test_problem_default();
    tp.c = 2, tp.k = 3, tp.h = 4, tp.w = 5, tp.pad_h = 1;
    struct test_descs d;
    CHECK_STATUS(h, test_descs_create(h, &tp, &d), CONVSEL_STATUS_SUCCESS);
    struct rng g = rng_seed(3);
    float x[40], w[54], y[3 * 4 * 3], ybig[200], yview[36];
    rng_fill(&g, x, 40);
    rng_fill(&g, w, 54);
    convsel_convolution_forward(h, ref, d.x, x, d.w, w, d.conv, d.y, y, NULL, 0);
    /* x padded to rows of 7 and channel planes of 30; y rows of 4, planes of 16. */
    float xbig[2 * 30];
    for (int c = 0; c < 2; c++)
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 5; j++)
                xbig[c * 30 + i * 7 + j] = x[(c * 4 + i) * 5 + j];
    convsel_tensor_desc_set_4d_strided(d.x, CONVSEL_LAYOUT_NCHW, 1, 2, 4, 5, 60, 30, 7, 1);
    convsel_tensor_desc_set_4d_strided(d.y, CONVSEL_LAYOUT_NCHW, 1, 3, 4, 3, 200, 16, 4, 1);
    CHECK_STATUS(h,
                 convsel_convolution_forward(h, ref, d.x, xbig, d.w, w, d.conv, d.y, ybig, NULL, 0),
                 CONVSEL_STATUS_SUCCESS);
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 3; j++)
                yview[(k * 4 + i) * 3 + j] = ybig[k * 16 + i * 4 + j];
    CHECK(same(yview, y, 36));
    test_descs_destroy(&d);
}

int main(void) {
    convsel_handle_create(&h);
    convsel_solver_find(h, "reference", &ref);
    test_hand_cases();
    test_against_independent();
    test_strided_view();
    convsel_handle_destroy(h);
    return test_finish("test_reference");
}
