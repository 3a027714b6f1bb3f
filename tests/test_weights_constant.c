/* test_weights_constant.c -- convsel_set_weights_constant. With constant
 * weights the solvers that transform weights (oneDNN's reorders, Winograd's
 * filter transform, convsel's GEMM solvers' packing for the kernel, in
 * both layouts, direct_blocked's reorder) transform them once per weights address: the test
 * proves the copy is really reused (weights changed in place without
 * telling the handle still give the old answer -- the documented contract),
 * and that everything the contract allows gives the right answer: repeated
 * calls, other weights at another address, the setting made again after an
 * in-place change, and the setting off. Bad arguments are refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/verify.h"
#include "problem_builder.h"
#include "testutil.h"

struct fixture {
    convsel_handle_t h;
    struct test_descs d;
    convsel_solver_id_t id, ref;
    void *ws;
    size_t ws_bytes;
    float *x, *y, *want;
};

static void fill(float *v, size_t n, int seed) {
    for (size_t e = 0; e < n; e++)
        v[e] = (float)(((e + 7 * (size_t)seed) * 104729) % 19) / 19.0f - 0.5f;
}

/* Runs the solver and the reference with weights w; true when y matches
 * the reference's answer for weights `truth` (w itself, or older data). */
static bool matches(struct fixture *f, const float *w, const float *truth, double tol) {
    CHECK_STATUS(f->h,
                 convsel_convolution_forward(f->h, f->id, f->d.x, f->x, f->d.w, w, f->d.conv,
                                             f->d.y, f->y, f->ws, f->ws_bytes),
                 CONVSEL_STATUS_SUCCESS);
    CHECK_STATUS(f->h,
                 convsel_convolution_forward(f->h, f->ref, f->d.x, f->x, f->d.w, truth, f->d.conv,
                                             f->d.y, f->want, NULL, 0),
                 CONVSEL_STATUS_SUCCESS);
    const struct verify_result r = verify_compare(f->y, f->want, f->d.y_count);
    return r.nonfinite == 0 && r.rel_error < tol;
}

/* transforms: whether the solver keeps a transformed copy of the weights
 * for this problem (onednn_gemm computes on the caller's weights as they
 * are, so it never serves an old copy). The problem: 16 -> 32 channels at
 * 14x14, a 3x3 filter (pad 1), or with `shape` 1: a 1x1 filter, 2: a 1x1
 * filter at stride 2, 3: 3x3 in 4 groups; `layout` NCHW or NHWC. */
static void solver_case_as(const char *solver, bool transforms, double tol, int shape,
                           convsel_layout_t layout) {
    struct fixture f = {0};
    CHECK(convsel_handle_create(&f.h) == CONVSEL_STATUS_SUCCESS);
    convsel_set_num_threads(f.h, 2);
    struct test_problem tp = test_problem_default();
    tp.c = 16, tp.k = 32, tp.h = tp.w = 14, tp.r = tp.s = 3, tp.pad_h = tp.pad_w = 1;
    tp.layout = layout;
    tp.filter_layout = layout == CONVSEL_LAYOUT_NHWC ? CONVSEL_FILTER_KRSC : CONVSEL_FILTER_KCRS;
    if (shape == 1 || shape == 2)
        tp.r = tp.s = 1, tp.pad_h = tp.pad_w = 0;
    if (shape == 2)
        tp.stride_h = tp.stride_w = 2;
    if (shape == 3)
        tp.groups = 4;
    CHECK(test_descs_create(f.h, &tp, &f.d) == CONVSEL_STATUS_SUCCESS);
    CHECK(convsel_solver_find(f.h, solver, &f.id) == CONVSEL_STATUS_SUCCESS);
    CHECK(convsel_solver_find(f.h, "reference", &f.ref) == CONVSEL_STATUS_SUCCESS);
    if (convsel_solver_is_applicable(f.h, f.id, f.d.x, f.d.w, f.d.conv, f.d.y) !=
        CONVSEL_STATUS_SUCCESS) {
        printf("%s: not applicable on this CPU (%s); not tested\n", solver,
               convsel_get_error_message(f.h));
        test_descs_destroy(&f.d);
        convsel_handle_destroy(f.h);
        return;
    }
    CHECK(convsel_get_forward_workspace_size(f.h, f.id, f.d.x, f.d.w, f.d.conv, f.d.y,
                                             &f.ws_bytes) == CONVSEL_STATUS_SUCCESS);
    f.ws = f.ws_bytes ? malloc(f.ws_bytes) : NULL;
    const size_t wn = f.d.w_count;
    f.x = malloc(f.d.x_count * sizeof *f.x);
    f.y = malloc(f.d.y_count * sizeof *f.y);
    f.want = malloc(f.d.y_count * sizeof *f.want);
    float *w = malloc(wn * sizeof *w), *old = malloc(wn * sizeof *old);
    float *other = malloc(wn * sizeof *other);
    fill(f.x, f.d.x_count, 1);
    fill(w, wn, 2);
    fill(other, wn, 3);

    int constant = -1;
    CHECK(convsel_set_weights_constant(f.h, 1) == CONVSEL_STATUS_SUCCESS);
    CHECK(convsel_get_weights_constant(f.h, &constant) == CONVSEL_STATUS_SUCCESS && constant == 1);
    CHECK(matches(&f, w, w, tol)); /* transforms w */
    CHECK(matches(&f, w, w, tol)); /* reuses it */

    /* w changed in place, the handle not told: the kept copy is used. */
    memcpy(old, w, wn * sizeof *w);
    fill(w, wn, 4);
    if (transforms) {
        if (!CHECK(matches(&f, w, old, tol)))
            printf("%s: weights changed in place were transformed again: no copy was kept\n",
                   solver);
    } else {
        CHECK(matches(&f, w, w, tol));
    }
    CHECK(matches(&f, other, other, tol)); /* another address: transformed anew */

    /* Setting it again forgets the copies: w's new data is used. */
    CHECK(convsel_set_weights_constant(f.h, 1) == CONVSEL_STATUS_SUCCESS);
    CHECK(matches(&f, w, w, tol));

    /* Off: every call sees the weights' current data. */
    CHECK(convsel_set_weights_constant(f.h, 0) == CONVSEL_STATUS_SUCCESS);
    CHECK(convsel_get_weights_constant(f.h, &constant) == CONVSEL_STATUS_SUCCESS && constant == 0);
    CHECK(matches(&f, w, w, tol));
    fill(w, wn, 5);
    CHECK(matches(&f, w, w, tol));
    printf("%s (shape %d, %s): constant weights reused, forgotten and off as documented\n", solver,
           shape, layout == CONVSEL_LAYOUT_NHWC ? "NHWC" : "NCHW");

    free(w), free(old), free(other), free(f.x), free(f.y), free(f.want), free(f.ws);
    test_descs_destroy(&f.d);
    convsel_handle_destroy(f.h);
}

static void solver_case(const char *solver, bool transforms, double tol) {
    solver_case_as(solver, transforms, tol, 0, CONVSEL_LAYOUT_NCHW);
}

static void bad_arguments(void) {
    convsel_handle_t h = NULL;
    CHECK(convsel_handle_create(&h) == CONVSEL_STATUS_SUCCESS);
    int constant = -1;
    CHECK(convsel_get_weights_constant(h, &constant) == CONVSEL_STATUS_SUCCESS && constant == 0);
    CHECK(convsel_set_weights_constant(NULL, 1) == CONVSEL_STATUS_BAD_PARAM);
    CHECK(convsel_set_weights_constant(h, 2) == CONVSEL_STATUS_BAD_PARAM);
    CHECK(strstr(convsel_get_error_message(h), "constant = 2") != NULL);
    CHECK(convsel_get_weights_constant(h, &constant) == CONVSEL_STATUS_SUCCESS && constant == 0);
    CHECK(convsel_get_weights_constant(h, NULL) == CONVSEL_STATUS_BAD_PARAM);
    CHECK(convsel_get_weights_constant(NULL, &constant) == CONVSEL_STATUS_BAD_PARAM);
    convsel_handle_destroy(h);
}

int main(void) {
    bad_arguments();
    solver_case("onednn_direct", true, 1e-4);
    solver_case("onednn_winograd", true, 1e-3);
    solver_case("winograd_f4x3", true, 1e-3);
    solver_case("onednn_gemm", false, 1e-4);
    /* convsel's GEMM solvers keep the weights packed for the kernel */
    for (int layout = 0; layout < 2; layout++) {
        solver_case_as("im2col_gemm", true, 1e-4, 0, (convsel_layout_t)layout);
        solver_case_as("gemm_1x1", true, 1e-4, 1, (convsel_layout_t)layout);
        solver_case_as("gemm_1x1_strided", true, 1e-4, 2, (convsel_layout_t)layout);
        solver_case_as("grouped_gemm", true, 1e-4, 3, (convsel_layout_t)layout);
    }
    /* direct_blocked keeps them reordered in blocks of output channels (NCHW only) */
    solver_case_as("direct_blocked", true, 1e-4, 3, CONVSEL_LAYOUT_NCHW);
    return test_finish("test_weights_constant");
}
