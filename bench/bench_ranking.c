/* bench_ranking.c -- what immediate mode costs per call: the time of
 * convsel_get_solutions for new problems (features, model, ranking) after
 * the first call has loaded everything. Prints the median, p10 and p90 in
 * microseconds, and where the first solution came from, so a run without
 * CONVSEL_MODEL_DIR measures the rules and one with it the model.
 *
 *   CONVSEL_MODEL_DIR=models build/bench_ranking [calls] [same]
 *
 * With "same", every call ranks one problem (what a memo of rankings per
 * problem key could save at best). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convsel/convsel.h"
#include "core/problem.h"
#include "db/perfdb.h"
#include "heur/ranking_model.h"
#include "util/clock.h"
#include "util/rng.h"
#include "util/stats.h"

int main(int argc, char **argv) {
    const int calls = argc > 1 ? atoi(argv[1]) : 20000;
    const bool same = argc > 2 && strcmp(argv[2], "same") == 0;
    if (calls < 10 || calls > 10000000) {
        fprintf(stderr, "usage: bench_ranking [calls in 10..10000000]\n");
        return 2;
    }
    convsel_handle_t h;
    convsel_tensor_desc_t x, y;
    convsel_filter_desc_t w;
    convsel_conv_desc_t conv;
    convsel_handle_create(&h);
    convsel_tensor_desc_create(&x), convsel_tensor_desc_create(&y);
    convsel_filter_desc_create(&w), convsel_conv_desc_create(&conv);
    double *us = malloc((size_t)calls * sizeof *us);
    struct rng g = rng_seed(7);
    convsel_solution_t s[16];
    int n = 0, by_source[3] = {0};
    for (int i = -1; us && i < calls; i++) { /* call -1 loads the database and model */
        /* a different problem each call (unless "same"), so no per-key memo helps */
        if (same)
            g = rng_seed(7);
        const int64_t c = rng_int(&g, 1, 512), k = rng_int(&g, 1, 512), hw = rng_int(&g, 7, 112);
        const int64_t f = rng_int(&g, 0, 1) ? 3 : 1;
        convsel_tensor_desc_set_4d(x, CONVSEL_LAYOUT_NCHW, 1, c, hw, hw);
        convsel_filter_desc_set(w, CONVSEL_FILTER_KCRS, k, c, f, f);
        convsel_conv_desc_set(conv, f / 2, f / 2, 1, 1, 1, 1, 1);
        convsel_tensor_desc_set_4d(y, CONVSEL_LAYOUT_NCHW, 1, k, hw, hw);
        const int64_t t0 = clock_now_ns();
        const convsel_status_t st = convsel_get_solutions(h, x, w, conv, y, 16, s, &n);
        const int64_t t1 = clock_now_ns();
        if (st != CONVSEL_STATUS_SUCCESS) {
            fprintf(stderr, "get_solutions: %s\n", convsel_get_error_message(h));
            return 1;
        }
        if (i >= 0) {
            us[i] = (double)(t1 - t0) * 1e-3;
            by_source[s[0].source]++;
        }
    }
    if (!us)
        return 1;
    const double median = stats_median(us, (size_t)calls); /* sorts us */
    printf("convsel_get_solutions over %d %s problems: median %.2f us (p10 %.2f, p90 %.2f)\n",
           calls, same ? "identical" : "new", median, stats_quantile_sorted(us, (size_t)calls, 0.1),
           stats_quantile_sorted(us, (size_t)calls, 0.9));
    printf("first solution from: database %d, model %d, rules %d\n", by_source[0], by_source[1],
           by_source[2]);
    /* The model's part alone: features, normalization, prediction. */
    int threads = 1;
    convsel_get_num_threads(h, &threads);
    const struct ranking_model *m = ranking_model_get();
    for (int i = 0; m && i < calls; i++) {
        struct conv_problem p = {.n = 1,
                                 .c = rng_int(&g, 1, 512),
                                 .k = rng_int(&g, 1, 512),
                                 .r = 3,
                                 .s = 3,
                                 .pad_h = 1,
                                 .pad_w = 1,
                                 .stride_h = 1,
                                 .stride_w = 1,
                                 .dil_h = 1,
                                 .dil_w = 1,
                                 .groups = 1};
        p.h = p.w = rng_int(&g, 7, 112);
        char err[PROBLEM_ERROR_MAX];
        problem_validate(&p, err, sizeof err);
        double ms[SOLVER_MAX];
        const int64_t t0 = clock_now_ns();
        ranking_model_predict(m, &p, threads, ms);
        us[i] = (double)(clock_now_ns() - t0) * 1e-3;
    }
    if (m) {
        const double model_median = stats_median(us, (size_t)calls);
        printf("model alone (features + prediction): median %.2f us (p10 %.2f, p90 %.2f)\n",
               model_median, stats_quantile_sorted(us, (size_t)calls, 0.1),
               stats_quantile_sorted(us, (size_t)calls, 0.9));
    }
    free(us);
    convsel_tensor_desc_destroy(x), convsel_tensor_desc_destroy(y);
    convsel_filter_desc_destroy(w), convsel_conv_desc_destroy(conv);
    convsel_handle_destroy(h);
    return 0;
}
