/* test_solver_gemm_1x1.c -- gemm_1x1 through the API against the
 * reference, on the shapes that take its batch-folded path (NCHW, groups
 * 1, several images, maps of at most 256 pixels, weights at least an
 * image's x and y or a compute-bound GEMM: one GEMM over every image's
 * pixels, a B packer that crosses image boundaries inside a panel, C
 * copied out per image) and on ones that do not (smaller weights, one
 * image, larger maps, groups, NHWC), with both filter layouts, constant
 * and per-call weights, and 1 and 2 threads. Which path ran is checked
 * through the workspace: only the fold keeps C there, so only a folded
 * batch asks for more than the same problem at one image. The property
 * test (test_solvers) covers it on random problems too. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/verify.h"
#include "problem_builder.h"
#include "testutil.h"

static size_t workspace_of(convsel_handle_t h, convsel_solver_id_t id,
                           const struct test_problem *tp) {
    struct test_descs d;
    size_t ws = 0;
    if (CHECK_STATUS(h, test_descs_create(h, tp, &d), CONVSEL_STATUS_SUCCESS)) {
        CHECK_STATUS(h, convsel_get_forward_workspace_size(h, id, d.x, d.w, d.conv, d.y, &ws),
                     CONVSEL_STATUS_SUCCESS);
        test_descs_destroy(&d);
    }
    return ws;
}

static void check(convsel_handle_t h, convsel_solver_id_t id, const struct test_problem *tp,
                  bool folds) {
    struct test_problem one = *tp;
    one.n = 1;
    const size_t ws_batch = workspace_of(h, id, tp), ws_one = workspace_of(h, id, &one);
    if (!CHECK((ws_batch > ws_one) == folds))
        printf("  n=%lld c=%lld k=%lld %lldx%lld groups %lld %s: %s expected (workspace %zu, "
               "%zu at one image)\n",
               (long long)tp->n, (long long)tp->c, (long long)tp->k, (long long)tp->h,
               (long long)tp->w, (long long)tp->groups,
               tp->layout == CONVSEL_LAYOUT_NHWC ? "NHWC" : "NCHW",
               folds ? "the folded path" : "the per-image path", ws_batch, ws_one);
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
    const int64_t cases[][7] = {
        /* n, c, k, h, w, groups, folded in NCHW */
        {2, 256, 256, 7, 7, 1, 1},   /* 98 columns, panels cross the image boundary */
        {3, 129, 67, 5, 3, 1, 1},    /* odd everything */
        {8, 80, 320, 1, 1, 1, 1},    /* a squeeze-excitation layer */
        {4, 600, 600, 16, 16, 1, 1}, /* 256 pixels, depth over one block */
        {2, 384, 192, 13, 13, 1, 1}, /* compute-bound: weights below x and y */
        {2, 64, 32, 7, 7, 1, 0},     /* weights smaller than an image's x and y */
        {2, 256, 3, 13, 17, 1, 0},   /* Faster R-CNN's 256 -> 3 head */
        {5, 1, 40, 1, 1, 1, 0},      /* 1x1 maps, one input channel */
        {2, 16, 16, 17, 16, 1, 0},   /* 272 pixels */
        {1, 48, 24, 7, 7, 1, 0},     /* one image */
        {3, 32, 16, 7, 7, 4, 0},     /* groups: per image and group */
        {1, 2048, 512, 1, 1, 1, 0},  /* one image on a 1x1 map: a GEMV of the weights as they are */
        {1, 333, 75, 1, 1, 3, 0},    /* the same per group, rows and depths past a vector */
        /* 1 MFLOP, on 2 threads (odd index): a serial GEMM whose C is copied
         * out on the calling thread (gemm_fold_run), as {3, 129, 67} too */
        {8, 64, 64, 4, 4, 1, 1},
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
            check(h, id, &tp, cases[i][6] && tp.layout == CONVSEL_LAYOUT_NCHW);
        }
    convsel_handle_destroy(h);
    return test_finish("test_solver_gemm_1x1");
}
