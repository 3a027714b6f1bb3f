/* test_solver_gemm_1x1.c -- gemm_1x1 through the API against the
 * reference, on the shapes that take its batch-folded path (NCHW, groups
 * 1, several images, maps of at most 256 pixels: one GEMM over every
 * image's pixels, a B packer that crosses image boundaries inside a panel,
 * C copied out per image) and on ones that do not (one image, larger
 * maps, groups, NHWC), with both filter layouts, constant and per-call
 * weights, and 1 and 2 threads. The property test (test_solvers) covers
 * it on random problems too. */
#include <stdio.h>
#include <stdlib.h>

#include "core/verify.h"
#include "problem_builder.h"
#include "testutil.h"

static void check(convsel_handle_t h, convsel_solver_id_t id, const struct test_problem *tp) {
    struct test_descs d;
    if (!CHECK_STATUS(h, test_descs_create(h, tp, &d), CONVSEL_STATUS_SUCCESS))
        return;
    struct test_data t;
    test_data_create(h, &d, 5, &t);
    size_t ws = 0;
    CHECK_STATUS(h, convsel_get_forward_workspace_size(h, id, d.x, d.w, d.conv, d.y, &ws),
                 CONVSEL_STATUS_SUCCESS);
    void *work = malloc(ws ? ws : 1);
    for (int call = 0; call < 2; call++) { /* the second reuses kept weights when constant */
        CHECK_STATUS(
            h, convsel_convolution_forward(h, id, d.x, t.x, d.w, t.w, d.conv, d.y, t.y, work, ws),
            CONVSEL_STATUS_SUCCESS);
        const struct verify_result r = verify_compare(t.y, t.ref, d.y_count);
        if (!CHECK(verify_passes(&r, 1e-4)))
            printf("  n=%lld c=%lld k=%lld %lldx%lld groups %lld %s: rel error %.3g\n",
                   (long long)tp->n, (long long)tp->c, (long long)tp->k, (long long)tp->h,
                   (long long)tp->w, (long long)tp->groups,
                   tp->layout == CONVSEL_LAYOUT_NHWC ? "NHWC" : "NCHW", r.rel_error);
    }
    free(work);
    test_data_destroy(&t);
    test_descs_destroy(&d);
}

int main(void) {
    convsel_handle_t h;
    convsel_handle_create(&h);
    convsel_solver_id_t id = 0;
    CHECK_STATUS(h, convsel_solver_find(h, "gemm_1x1", &id), CONVSEL_STATUS_SUCCESS);
    const int64_t cases[][6] = {
        /* n, c, k, h, w, groups */
        {2, 64, 32, 7, 7, 1},   /* folded: 98 columns, panels cross the image boundary */
        {3, 33, 17, 5, 3, 1},   /* folded: odd everything */
        {5, 1, 40, 1, 1, 1},    /* folded: 1x1 maps, one input channel */
        {8, 80, 320, 1, 1, 1},  /* folded: a squeeze-excitation layer */
        {4, 600, 9, 16, 16, 1}, /* folded: 256 pixels, depth over one block */
        {2, 16, 16, 17, 16, 1}, /* 272 pixels: per image */
        {1, 48, 24, 7, 7, 1},   /* one image: per image */
        {3, 32, 16, 7, 7, 4},   /* groups: per image and group */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int v = 0; v < 8; v++) {
            struct test_problem tp = test_problem_default();
            tp.n = cases[i][0], tp.c = cases[i][1], tp.k = cases[i][2];
            tp.h = cases[i][3], tp.w = cases[i][4], tp.groups = cases[i][5];
            tp.r = tp.s = 1, tp.pad_h = tp.pad_w = 0;
            tp.layout = v & 4 ? CONVSEL_LAYOUT_NHWC : CONVSEL_LAYOUT_NCHW;
            tp.filter_layout = v & 1 ? CONVSEL_FILTER_KRSC : CONVSEL_FILTER_KCRS;
            convsel_set_weights_constant(h, v & 2 ? 1 : 0);
            convsel_set_num_threads(h, 1 + (int)(i % 2));
            check(h, id, &tp);
        }
    convsel_handle_destroy(h);
    return test_finish("test_solver_gemm_1x1");
}
