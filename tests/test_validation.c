/* test_validation.c -- every invalid input the API can be given gets
 * BAD_PARAM (or NOT_SUPPORTED) and a message naming the field. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "problem_builder.h"
#include "solvers/kernels/sgemm.h"
#include "testutil.h"

/* One field of the problem set to a bad value, and the text the message
 * must contain. */
struct bad_case {
    const char *what;
    void (*mutate)(struct test_problem *);
    const char *message;
};

#define MUTATOR(name, stmt)                                                                        \
    static void name(struct test_problem *tp) {                                                    \
        stmt;                                                                                      \
    }
MUTATOR(n_zero, tp->n = 0)
MUTATOR(n_negative, tp->n = -3)
MUTATOR(c_zero, tp->c = 0)
MUTATOR(h_zero, tp->h = 0)
MUTATOR(w_negative, tp->w = -1)
MUTATOR(k_zero, tp->k = 0)
MUTATOR(r_zero, tp->r = 0)
MUTATOR(s_negative, tp->s = -2)
MUTATOR(pad_negative, tp->pad_h = -1)
MUTATOR(padw_negative, tp->pad_w = -1)
MUTATOR(stride_zero, tp->stride_h = 0)
MUTATOR(stridew_negative, tp->stride_w = -1)
MUTATOR(dil_zero, tp->dil_h = 0)
MUTATOR(dilw_zero, tp->dil_w = 0)
MUTATOR(groups_zero, tp->groups = 0)
MUTATOR(groups_c, (tp->c = 64, tp->k = 64, tp->groups = 3))
MUTATOR(groups_k, (tp->c = 4, tp->k = 5, tp->groups = 2))
MUTATOR(out_h, tp->r = 9)
MUTATOR(out_w, (tp->s = 3, tp->dil_w = 4))
MUTATOR(huge_dim, tp->h = INT64_C(1) << 40)
MUTATOR(overflow_x, (tp->n = 2000000000, tp->c = 2000000000, tp->h = 2000000000))
MUTATOR(overflow_w, (tp->k = 2000000000, tp->c = 2000000000, tp->r = 3, tp->s = 3))
MUTATOR(overflow_pad, (tp->pad_h = INT64_MAX))

static const struct bad_case cases[] = {
    {"n = 0", n_zero, "x_desc.n = 0: must be >= 1"},
    {"n < 0", n_negative, "x_desc.n = -3"},
    {"c = 0", c_zero, "x_desc.c = 0"},
    {"h = 0", h_zero, "x_desc.h = 0"},
    {"w < 0", w_negative, "x_desc.w = -1"},
    {"k = 0", k_zero, "w_desc.k = 0"},
    {"r = 0", r_zero, "w_desc.r = 0"},
    {"s < 0", s_negative, "w_desc.s = -2"},
    {"pad_h < 0", pad_negative, "conv_desc.pad_h = -1: must be >= 0"},
    {"pad_w < 0", padw_negative, "conv_desc.pad_w = -1"},
    {"stride_h = 0", stride_zero, "conv_desc.stride_h = 0"},
    {"stride_w < 0", stridew_negative, "conv_desc.stride_w = -1"},
    {"dilation_h = 0", dil_zero, "conv_desc.dilation_h = 0"},
    {"dilation_w = 0", dilw_zero, "conv_desc.dilation_w = 0"},
    {"groups = 0", groups_zero, "conv_desc.groups = 0"},
    {"groups does not divide c", groups_c, "conv_desc.groups = 3: must divide x_desc.c = 64"},
    {"groups does not divide k", groups_k, "must divide w_desc.k = 5"},
    {"output height 0", out_h, "output height = 0"},
    {"output width 0", out_w, "output width = 0"},
    {"dimension too large", huge_dim, "x_desc.h = 1099511627776: must be <= 2147483647"},
    {"x size overflows", overflow_x, "x_desc: size overflows"},
    {"w size overflows", overflow_w, "w_desc: size overflows"},
    {"pad overflows", overflow_pad, "conv_desc.pad_h"},
};

static void test_problem_fields(convsel_handle_t h) {
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct test_problem tp = test_problem_default();
        cases[i].mutate(&tp);
        struct test_descs d;
        CHECK_STATUS(h, test_descs_create(h, &tp, &d), CONVSEL_STATUS_BAD_PARAM);
        CHECK_MESSAGE(h, cases[i].message);
        /* forward with the same descriptors fails the same way, not later */
        float dummy[1] = {0};
        if (d.y_count == 0) {
            convsel_tensor_desc_set_4d(d.y, CONVSEL_LAYOUT_NCHW, 1, 1, 1, 1);
            CHECK_STATUS(h,
                         convsel_convolution_forward(h, CONVSEL_SOLVER_AUTO, d.x, dummy, d.w, dummy,
                                                     d.conv, d.y, dummy, NULL, 0),
                         CONVSEL_STATUS_BAD_PARAM);
            CHECK_MESSAGE(h, cases[i].message);
        }
        test_descs_destroy(&d);
    }
}

static void test_filter_channels(convsel_handle_t h) {
    struct test_problem tp = test_problem_default();
    tp.c = 8;
    struct test_descs d;
    CHECK_STATUS(h, test_descs_create(h, &tp, &d), CONVSEL_STATUS_SUCCESS);
    convsel_filter_desc_set(d.w, CONVSEL_FILTER_KCRS, 1, 4, 3, 3);
    CHECK_STATUS(h, convsel_get_conv_output_shape(h, d.x, d.w, d.conv, NULL, NULL, NULL, NULL),
                 CONVSEL_STATUS_BAD_PARAM);
    CHECK_MESSAGE(h, "w_desc.c = 4: must equal x_desc.c / conv_desc.groups = 8 / 1 = 8");
    convsel_filter_desc_set(d.w, CONVSEL_FILTER_KCRS, 1, 0, 3, 3);
    CHECK_STATUS(h, convsel_get_conv_output_shape(h, d.x, d.w, d.conv, NULL, NULL, NULL, NULL),
                 CONVSEL_STATUS_BAD_PARAM);
    CHECK_MESSAGE(h, "w_desc.c = 0");
    test_descs_destroy(&d);
}

static void test_output_descriptor(convsel_handle_t h) {
    struct test_problem tp = test_problem_default(); /* 1x1x5x5, 3x3 -> 1x1x3x3 */
    struct test_descs d;
    CHECK_STATUS(h, test_descs_create(h, &tp, &d), CONVSEL_STATUS_SUCCESS);
    float x[25] = {0}, w[9] = {0}, y[64] = {0};
    convsel_solver_id_t ref;
    convsel_solver_find(h, "reference", &ref);
    const struct {
        convsel_layout_t layout;
        int64_t n, c, hh, ww;
        const char *message;
    } ys[] = {
        {CONVSEL_LAYOUT_NHWC, 1, 1, 3, 3, "y_desc.layout = NHWC: must equal x_desc.layout = NCHW"},
        {CONVSEL_LAYOUT_NCHW, 2, 1, 3, 3, "y_desc.n = 2: must equal x_desc.n = 1"},
        {CONVSEL_LAYOUT_NCHW, 1, 2, 3, 3, "y_desc.c = 2: must equal w_desc.k = 1"},
        {CONVSEL_LAYOUT_NCHW, 1, 1, 4, 3, "y_desc.h = 4: must equal the output height = 3"},
        {CONVSEL_LAYOUT_NCHW, 1, 1, 3, 2, "y_desc.w = 2: must equal the output width = 3"},
    };
    for (size_t i = 0; i < sizeof ys / sizeof ys[0]; i++) {
        convsel_tensor_desc_set_4d(d.y, ys[i].layout, ys[i].n, ys[i].c, ys[i].hh, ys[i].ww);
        CHECK_STATUS(h,
                     convsel_convolution_forward(h, ref, d.x, x, d.w, w, d.conv, d.y, y, NULL, 0),
                     CONVSEL_STATUS_BAD_PARAM);
        CHECK_MESSAGE(h, ys[i].message);
    }
    /* Strides that break the layout's order or overlap. */
    convsel_tensor_desc_set_4d(d.y, CONVSEL_LAYOUT_NCHW, 1, 1, 3, 3);
    convsel_tensor_desc_set_4d_strided(d.x, CONVSEL_LAYOUT_NCHW, 1, 1, 5, 5, 25, 25, 4, 1);
    CHECK_STATUS(h, convsel_convolution_forward(h, ref, d.x, x, d.w, w, d.conv, d.y, y, NULL, 0),
                 CONVSEL_STATUS_BAD_PARAM);
    CHECK_MESSAGE(h, "x_desc.stride_h = 4: must be >= 5 for a NCHW tensor");
    convsel_tensor_desc_set_4d(d.x, CONVSEL_LAYOUT_NCHW, 1, 1, 5, 5);
    convsel_tensor_desc_set_4d_strided(d.y, CONVSEL_LAYOUT_NCHW, 1, 1, 3, 3, 9, 9, 3, 0);
    CHECK_STATUS(h, convsel_convolution_forward(h, ref, d.x, x, d.w, w, d.conv, d.y, y, NULL, 0),
                 CONVSEL_STATUS_BAD_PARAM);
    CHECK_MESSAGE(h, "y_desc.stride_w = 0");
    convsel_tensor_desc_set_4d_strided(d.y, CONVSEL_LAYOUT_NCHW, 1, 1, 3, 3, INT64_MAX / 2, 9, 3,
                                       1);
    CHECK_STATUS(h, convsel_convolution_forward(h, ref, d.x, x, d.w, w, d.conv, d.y, y, NULL, 0),
                 CONVSEL_STATUS_BAD_PARAM);
    CHECK_MESSAGE(h, "y_desc: size overflows");
    test_descs_destroy(&d);
}

static void test_null_and_workspace(convsel_handle_t h) {
    struct test_problem tp = test_problem_default();
    tp.c = 4, tp.k = 4;
    struct test_descs d;
    CHECK_STATUS(h, test_descs_create(h, &tp, &d), CONVSEL_STATUS_SUCCESS);
    float *x = calloc(d.x_count, sizeof *x), *w = calloc(d.w_count, sizeof *w),
          *y = calloc(d.y_count, sizeof *y);
    const convsel_solver_id_t A = CONVSEL_SOLVER_AUTO;
    CHECK(convsel_convolution_forward(NULL, A, d.x, x, d.w, w, d.conv, d.y, y, NULL, 0) ==
          CONVSEL_STATUS_BAD_PARAM);
    CHECK_STATUS(h, convsel_convolution_forward(h, A, NULL, x, d.w, w, d.conv, d.y, y, NULL, 0),
                 CONVSEL_STATUS_BAD_PARAM);
    CHECK_MESSAGE(h, "x_desc is NULL");
    CHECK_STATUS(h, convsel_convolution_forward(h, A, d.x, x, NULL, w, d.conv, d.y, y, NULL, 0),
                 CONVSEL_STATUS_BAD_PARAM);
    CHECK_MESSAGE(h, "w_desc is NULL");
    CHECK_STATUS(h, convsel_convolution_forward(h, A, d.x, x, d.w, w, NULL, d.y, y, NULL, 0),
                 CONVSEL_STATUS_BAD_PARAM);
    CHECK_MESSAGE(h, "conv_desc is NULL");
    CHECK_STATUS(h, convsel_convolution_forward(h, A, d.x, x, d.w, w, d.conv, NULL, y, NULL, 0),
                 CONVSEL_STATUS_BAD_PARAM);
    CHECK_MESSAGE(h, "y_desc is NULL");

    convsel_solver_id_t im2col;
    CHECK_STATUS(h, convsel_solver_find(h, "im2col_gemm", &im2col), CONVSEL_STATUS_SUCCESS);
    size_t ws = 0;
    CHECK_STATUS(h, convsel_get_forward_workspace_size(h, im2col, d.x, d.w, d.conv, d.y, &ws),
                 CONVSEL_STATUS_SUCCESS);
    /* NCHW: no columns matrix, the weights packed for the kernel */
    CHECK(ws == sgemm_packed_floats(NULL, true, 4, 4 * 9) * sizeof(float) + 64);
    CHECK_STATUS(h, convsel_get_forward_workspace_size(h, im2col, d.x, d.w, d.conv, d.y, NULL),
                 CONVSEL_STATUS_BAD_PARAM);
    void *buf = malloc(ws);
    CHECK_STATUS(h,
                 convsel_convolution_forward(h, im2col, d.x, NULL, d.w, w, d.conv, d.y, y, buf, ws),
                 CONVSEL_STATUS_BAD_PARAM);
    CHECK_MESSAGE(h, "x is NULL");
    CHECK_STATUS(h,
                 convsel_convolution_forward(h, im2col, d.x, x, d.w, NULL, d.conv, d.y, y, buf, ws),
                 CONVSEL_STATUS_BAD_PARAM);
    CHECK_MESSAGE(h, "w is NULL");
    CHECK_STATUS(h,
                 convsel_convolution_forward(h, im2col, d.x, x, d.w, w, d.conv, d.y, NULL, buf, ws),
                 CONVSEL_STATUS_BAD_PARAM);
    CHECK_MESSAGE(h, "y is NULL");
    CHECK_STATUS(
        h, convsel_convolution_forward(h, im2col, d.x, x, d.w, w, d.conv, d.y, y, buf, ws - 1),
        CONVSEL_STATUS_BAD_PARAM);
    char needs[64];
    snprintf(needs, sizeof needs, "needs %zu bytes", ws);
    CHECK_MESSAGE(h, needs);
    CHECK_STATUS(h,
                 convsel_convolution_forward(h, im2col, d.x, x, d.w, w, d.conv, d.y, y, NULL, ws),
                 CONVSEL_STATUS_BAD_PARAM);
    CHECK_MESSAGE(h, "workspace is NULL");
    CHECK_STATUS(h, convsel_convolution_forward(h, im2col, d.x, x, d.w, w, d.conv, d.y, y, buf, ws),
                 CONVSEL_STATUS_SUCCESS);

    /* Unknown solver ids. */
    CHECK_STATUS(h, convsel_convolution_forward(h, 9999, d.x, x, d.w, w, d.conv, d.y, y, buf, ws),
                 CONVSEL_STATUS_BAD_PARAM);
    CHECK_MESSAGE(h, "solver = 9999: unknown id");
    CHECK_STATUS(h, convsel_convolution_forward(h, -7, d.x, x, d.w, w, d.conv, d.y, y, buf, ws),
                 CONVSEL_STATUS_BAD_PARAM);

    /* issue #18: "convsel_solver_is_applicable(CONVSEL_SOLVER_AUTO)
     * returns SUCCESS (the header promises BAD_PARAM for an invalid id)" */
    CHECK_STATUS(h, convsel_solver_is_applicable(h, A, d.x, d.w, d.conv, d.y),
                 CONVSEL_STATUS_BAD_PARAM);
    CHECK_MESSAGE(h, "solver = -1: not a solver id");
    CHECK_STATUS(h, convsel_solver_is_applicable(h, 999, d.x, d.w, d.conv, d.y),
                 CONVSEL_STATUS_BAD_PARAM);
    CHECK_STATUS(h, convsel_solver_is_applicable(h, im2col, d.x, d.w, d.conv, NULL),
                 CONVSEL_STATUS_BAD_PARAM);
    CHECK_MESSAGE(h, "y_desc is NULL");

    /* A solver asked for a problem it cannot run says why. */
    convsel_tensor_desc_set_4d_strided(d.x, CONVSEL_LAYOUT_NCHW, 1, 4, 5, 5, 200, 50, 10, 2);
    float *xs = calloc(200, sizeof *xs);
    CHECK_STATUS(h, convsel_solver_is_applicable(h, im2col, d.x, d.w, d.conv, d.y),
                 CONVSEL_STATUS_NOT_SUPPORTED);
    CHECK_MESSAGE(h, "solver im2col_gemm: the GEMM solvers need packed x and y tensors");
    CHECK_STATUS(h,
                 convsel_convolution_forward(h, im2col, d.x, xs, d.w, w, d.conv, d.y, y, buf, ws),
                 CONVSEL_STATUS_NOT_SUPPORTED);
    CHECK_STATUS(h, convsel_convolution_forward(h, A, d.x, xs, d.w, w, d.conv, d.y, y, NULL, 0),
                 CONVSEL_STATUS_SUCCESS); /* AUTO picks a solver that applies */
    free(xs);
    free(buf);
    free(x);
    free(w);
    free(y);
    test_descs_destroy(&d);
}

int main(void) {
    convsel_handle_t h;
    convsel_handle_create(&h);
    test_problem_fields(h);
    test_filter_channels(h);
    test_output_descriptor(h);
    test_null_and_workspace(h);
    convsel_handle_destroy(h);
    return test_finish("test_validation");
}
