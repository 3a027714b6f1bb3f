/* test_solver_direct.c -- the direct solver through the API: where it
 * applies (not to packed problems with groups = input channels, one
 * input channel included: the depthwise solver runs them with the same
 * kernel), and its answers on the shapes it is for --
 * few channels, large and strided filters, both layouts, groups, a single
 * output channel -- with 1 and 2 threads against the reference. The
 * property test (test_solvers) covers it on random problems too. */
#include <stdio.h>
#include <string.h>

#include "core/verify.h"
#include "problem_builder.h"
#include "testutil.h"

static convsel_solver_id_t direct_id(convsel_handle_t h) {
    convsel_solver_id_t id = 0;
    CHECK_STATUS(h, convsel_solver_find(h, "direct", &id), CONVSEL_STATUS_SUCCESS);
    return id;
}

static void check_applicability(convsel_handle_t h) {
    struct test_problem dw = test_problem_default();
    dw.c = dw.groups = dw.k = 16, dw.h = dw.w = 20, dw.r = dw.s = 3, dw.pad_h = dw.pad_w = 1;
    struct test_descs d;
    if (!CHECK_STATUS(h, test_descs_create(h, &dw, &d), CONVSEL_STATUS_SUCCESS))
        return;
    CHECK_STATUS(h, convsel_solver_is_applicable(h, direct_id(h), d.x, d.w, d.conv, d.y),
                 CONVSEL_STATUS_NOT_SUPPORTED);
    CHECK(strstr(convsel_get_error_message(h), "depthwise solver") != NULL);
    test_descs_destroy(&d);
    dw.groups = 8; /* grouped, two channels per group: direct's */
    if (!CHECK_STATUS(h, test_descs_create(h, &dw, &d), CONVSEL_STATUS_SUCCESS))
        return;
    CHECK_STATUS(h, convsel_solver_is_applicable(h, direct_id(h), d.x, d.w, d.conv, d.y),
                 CONVSEL_STATUS_SUCCESS);
    test_descs_destroy(&d);
}

static void check_answer(convsel_handle_t h, const struct test_problem *tp, int threads) {
    struct test_descs d;
    if (!CHECK_STATUS(h, test_descs_create(h, tp, &d), CONVSEL_STATUS_SUCCESS))
        return;
    struct test_data t;
    test_data_create(h, &d, 11, &t);
    convsel_set_num_threads(h, threads);
    CHECK_STATUS(
        h,
        convsel_convolution_forward(h, direct_id(h), d.x, t.x, d.w, t.w, d.conv, d.y, t.y, NULL, 0),
        CONVSEL_STATUS_SUCCESS);
    const struct verify_result r = verify_compare(t.y, t.ref, d.y_count);
    if (!CHECK(verify_passes(&r, 1e-4)))
        printf("  c=%lld k=%lld %lldx%lld stride %lld groups %lld %s, %d threads: rel error %.3g\n",
               (long long)tp->c, (long long)tp->k, (long long)tp->r, (long long)tp->s,
               (long long)tp->stride_h, (long long)tp->groups,
               tp->layout == CONVSEL_LAYOUT_NHWC ? "NHWC" : "NCHW", threads, r.rel_error);
    test_data_destroy(&t);
    test_descs_destroy(&d);
}

int main(void) {
    convsel_handle_t h;
    convsel_handle_create(&h);
    check_applicability(h);
    const int64_t cases[][8] = {
        /* c, k, hw, f, stride, dil, pad, groups */
        {2, 8, 37, 5, 1, 1, 2, 1}, {3, 16, 45, 7, 2, 1, 3, 1}, {40, 1, 19, 3, 1, 1, 1, 1},
        {6, 9, 23, 3, 2, 2, 2, 3}, {2, 4, 70, 11, 4, 1, 0, 1}, {4, 4, 9, 1, 1, 1, 0, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int layout = 0; layout < 2; layout++)
            for (int threads = 1; threads <= 2; threads++) {
                const int64_t *c = cases[i];
                struct test_problem tp = test_problem_default();
                tp.c = c[0], tp.k = c[1], tp.h = tp.w = c[2], tp.r = tp.s = c[3];
                tp.stride_h = tp.stride_w = c[4], tp.dil_h = tp.dil_w = c[5];
                tp.pad_h = tp.pad_w = c[6], tp.groups = c[7], tp.n = 2;
                tp.layout = layout ? CONVSEL_LAYOUT_NHWC : CONVSEL_LAYOUT_NCHW;
                tp.filter_layout = layout ? CONVSEL_FILTER_KRSC : CONVSEL_FILTER_KCRS;
                check_answer(h, &tp, threads);
            }
    convsel_handle_destroy(h);
    return test_finish("test_solver_direct");
}
