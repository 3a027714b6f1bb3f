/* test_find.c -- exhaustive find: every applicable solver (but the
 * reference oracle) measured once, sorted fastest first, workspace as the
 * query reports it, a correct output left in y, bad arguments refused. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/verify.h"
#include "problem_builder.h"
#include "testutil.h"
#include "util/rng.h"

static void check_problem(convsel_handle_t h, struct test_problem tp) {
    struct test_descs d;
    CHECK_STATUS(h, test_descs_create(h, &tp, &d), CONVSEL_STATUS_SUCCESS);
    float *x = malloc(d.x_count * sizeof *x), *w = malloc(d.w_count * sizeof *w);
    float *y = malloc(d.y_count * sizeof *y), *ref = malloc(d.y_count * sizeof *ref);
    struct rng g = rng_seed(9);
    rng_fill(&g, x, d.x_count);
    rng_fill(&g, w, d.w_count);
    convsel_solver_id_t ref_id;
    convsel_solver_find(h, "reference", &ref_id);
    convsel_convolution_forward(h, ref_id, d.x, x, d.w, w, d.conv, d.y, ref, NULL, 0);

    convsel_perf_result_t r[32];
    int n = -1;
    CHECK_STATUS(h, convsel_find_forward(h, d.x, x, d.w, w, d.conv, d.y, y, r, 32, &n),
                 CONVSEL_STATUS_SUCCESS);
    int applicable = 0, pruned = 0;
    for (int id = 0; id < convsel_solver_count(); id++)
        applicable += id != ref_id && convsel_solver_is_applicable(h, id, d.x, d.w, d.conv, d.y) ==
                                          CONVSEL_STATUS_SUCCESS;
    CHECK(n == applicable && n > 0);
    double best_min = 1e30;
    for (int i = 0; i < n; i++)
        best_min = r[i].time_min_ms < best_min ? r[i].time_min_ms : best_min;
    for (int i = 0; i < n; i++) {
        CHECK(r[i].solver != ref_id && strcmp(r[i].name, convsel_solver_name(r[i].solver)) == 0);
        /* at least 5 runs, or 2 for a solver settled as more than 4x slower
         * than the fastest (its fastest run > 4x the fastest's fastest) */
        CHECK(r[i].time_ms > 0 && r[i].time_min_ms <= r[i].time_ms &&
              r[i].time_ms <= r[i].time_max_ms &&
              (r[i].runs >= 5 || (r[i].runs >= 2 && r[i].time_min_ms > 4 * best_min)));
        pruned += r[i].runs < 5;
        size_t ws;
        convsel_get_forward_workspace_size(h, r[i].solver, d.x, d.w, d.conv, d.y, &ws);
        CHECK(ws == r[i].workspace_bytes);
        if (i > 0)
            CHECK(r[i - 1].time_ms <= r[i].time_ms);
        for (int j = 0; j < i; j++)
            CHECK(r[j].solver != r[i].solver);
    }
    printf("find: %d solvers, %d of them settled as slow after 2 rounds\n", n, pruned);
    struct verify_result v = verify_compare(y, ref, d.y_count);
    CHECK(verify_passes(&v, 1e-4));
    /* fewer slots than solvers: the fastest ones */
    convsel_perf_result_t one;
    int m = -1;
    CHECK_STATUS(h, convsel_find_forward(h, d.x, x, d.w, w, d.conv, d.y, y, &one, 1, &m),
                 CONVSEL_STATUS_SUCCESS);
    CHECK(m == 1);
    CHECK_STATUS(h, convsel_find_forward(h, d.x, x, d.w, w, d.conv, d.y, y, NULL, 0, &m),
                 CONVSEL_STATUS_SUCCESS);
    CHECK(m == 0);
    /* bad arguments */
    CHECK_STATUS(h, convsel_find_forward(h, d.x, NULL, d.w, w, d.conv, d.y, y, r, 32, &m),
                 CONVSEL_STATUS_BAD_PARAM);
    CHECK_STATUS(h, convsel_find_forward(h, d.x, x, d.w, w, d.conv, d.y, y, NULL, 3, &m),
                 CONVSEL_STATUS_BAD_PARAM);
    CHECK_STATUS(h, convsel_find_forward(h, d.x, x, d.w, w, d.conv, NULL, y, r, 32, &m),
                 CONVSEL_STATUS_BAD_PARAM);
    CHECK(convsel_find_forward(NULL, d.x, x, d.w, w, d.conv, d.y, y, r, 32, &m) ==
          CONVSEL_STATUS_BAD_PARAM);
    /* issue #18: "find_forward(max_results = -3) says 'results_out when
     * max_results = -3 > 0'" */
    CHECK_STATUS(h, convsel_find_forward(h, d.x, x, d.w, w, d.conv, d.y, y, r, -3, &m),
                 CONVSEL_STATUS_BAD_PARAM);
    CHECK_MESSAGE(h, "max_results = -3: must be >= 0");
    free(x), free(w), free(y), free(ref);
    test_descs_destroy(&d);
}

int main(void) {
    convsel_handle_t h;
    convsel_handle_create(&h);
    struct test_problem tp = test_problem_default();
    tp.c = 16, tp.k = 8, tp.h = tp.w = 9, tp.r = tp.s = 1; /* 1x1: gemm_1x1 and im2col */
    check_problem(h, tp);
    tp.stride_h = tp.stride_w = 2; /* strided 1x1 */
    check_problem(h, tp);
    tp = test_problem_default();
    tp.c = 4, tp.k = 4, tp.h = tp.w = 8, tp.pad_h = tp.pad_w = 1; /* 3x3: im2col only */
    check_problem(h, tp);
    convsel_handle_destroy(h);
    return test_finish("test_find");
}
