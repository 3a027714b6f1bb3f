/* find.c -- exhaustive find: time every applicable solver on the caller's
 * data and rank them. The protocol (warm-up, interleaved rounds, medians)
 * is chosen for a noisy shared machine: every solver sees the same bursts
 * of interference, and a median ignores the few runs they hit. */
#include <stdlib.h>
#include <string.h>

#include "api/descriptors.h"
#include "api/handle.h"
#include "solvers/solver.h"
#include "util/clock.h"
#include "util/rng.h"
#include "util/stats.h"

#define MIN_RUNS 5
#define MAX_ROUNDS 50
#define TARGET_NS 200000000LL /* ~0.2 s of measurement */
/* After PRUNE_AFTER timed rounds, a solver whose fastest run is more than
 * PRUNE_FACTOR times the fastest solver's is timed no more: its place is
 * settled, and on a large problem the slow solvers took most of the time
 * (a 10 GFLOP layer: 5 runs of the direct solver, 0.3 s each). */
#define PRUNE_AFTER 2
#define PRUNE_FACTOR 4.0

struct candidate {
    int id;
    const struct solver *s;
    double samples[MAX_ROUNDS];
    int runs;
    double fastest; /* ms */
    bool retired;   /* settled as slow: no more runs */
};

static int by_time(const void *a, const void *b) {
    const convsel_perf_result_t *x = a, *y = b;
    return (x->time_ms > y->time_ms) - (x->time_ms < y->time_ms);
}

convsel_status_t convsel_find_forward(convsel_handle_t h, const_convsel_tensor_desc_t x_desc,
                                      const float *x, const_convsel_filter_desc_t w_desc,
                                      const float *w, const_convsel_conv_desc_t conv_desc,
                                      const_convsel_tensor_desc_t y_desc, float *y,
                                      convsel_perf_result_t *results, int max_results,
                                      int *count_out) {
    if (h == NULL)
        return CONVSEL_STATUS_BAD_PARAM;
    if (y_desc == NULL)
        return handle_fail(h, CONVSEL_STATUS_BAD_PARAM, "y_desc is NULL");
    struct conv_problem p;
    convsel_status_t st = problem_from_descriptors(h, x_desc, w_desc, conv_desc, y_desc, &p);
    if (st != CONVSEL_STATUS_SUCCESS)
        return st;
    if (max_results < 0)
        return handle_fail(h, CONVSEL_STATUS_BAD_PARAM, "max_results = %d: must be >= 0",
                           max_results);
    if (x == NULL || w == NULL || y == NULL || count_out == NULL ||
        (results == NULL && max_results > 0))
        return handle_fail(h, CONVSEL_STATUS_BAD_PARAM, "%s is NULL",
                           x == NULL           ? "x"
                           : w == NULL         ? "w"
                           : y == NULL         ? "y"
                           : count_out == NULL ? "count_out"
                                               : "results_out (max_results > 0)");
    *count_out = 0;

    const int n = solver_count();
    struct candidate *c = calloc((size_t)n, sizeof *c);
    convsel_perf_result_t *all = calloc((size_t)n, sizeof *all);
    void *workspace = NULL;
    size_t ws_max = 0;
    int k = 0;
    st = CONVSEL_STATUS_ALLOC_FAILED;
    if (c == NULL || all == NULL) {
        handle_fail(h, st, "find: out of memory");
        goto done;
    }
    const int ref = solver_reference_id();
    for (int id = 0; id < n; id++) {
        const struct solver *s = solver_get(id);
        /* The reference is the oracle, never the fastest: timed only when
         * nothing else applies. */
        if (!s->is_applicable(&p, NULL) || id == ref)
            continue;
        c[k++] = (struct candidate){.id = id, .s = s};
        const size_t ws = s->workspace_size(&p);
        ws_max = ws > ws_max ? ws : ws_max;
    }
    if (k == 0)
        c[k++] = (struct candidate){.id = ref, .s = solver_get(ref)};
    if (ws_max > 0 && (workspace = malloc(ws_max)) == NULL) {
        handle_fail(h, st, "find: cannot allocate %zu bytes of workspace", ws_max);
        goto done;
    }
    struct conv_run_args args = handle_run_args(h, &p, x, w, y, workspace, ws_max);
    const int64_t start = clock_now_ns();
    struct rng order_rng = rng_seed((uint64_t)k);
    int order[SOLVER_MAX];
    for (int round = -1; round < MAX_ROUNDS; round++) { /* round -1 warms up */
        /* Timed rounds take the candidates in a new random order each: a
         * solver's time depends on what ran just before it (OpenMP workers
         * left spinning by a oneDNN call, or asleep after a convsel-pool
         * call), so none may always follow the same one. */
        for (int i = 0; i < k; i++)
            order[i] = i;
        if (round >= 0)
            rng_shuffle(&order_rng, order, k);
        for (int j = 0; j < k; j++) {
            const int i = order[j]; /* j itself in the warm-up round */
            if (c[i].retired)
                continue;
            const int64_t t0 = clock_now_ns();
            st = solver_run(c[i].s, &args);
            const int64_t t1 = clock_now_ns();
            if (st == CONVSEL_STATUS_NOT_SUPPORTED && round < 0) {
                /* a backend found no implementation after all: not a contender */
                c[i] = c[--k];
                j--;
                continue;
            }
            if (st != CONVSEL_STATUS_SUCCESS) {
                handle_fail(h, st, "find: solver %s failed", c[i].s->name);
                goto done;
            }
            if (round >= 0) {
                const double ms = (double)(t1 - t0) * 1e-6;
                c[i].samples[c[i].runs++] = ms;
                if (c[i].runs == 1 || ms < c[i].fastest)
                    c[i].fastest = ms;
            }
        }
        if (round + 1 >= PRUNE_AFTER) {
            double best = -1;
            for (int i = 0; i < k; i++)
                if (best < 0 || c[i].fastest < best)
                    best = c[i].fastest;
            for (int i = 0; i < k; i++)
                c[i].retired |= c[i].fastest > PRUNE_FACTOR * best;
        }
        if (round + 1 >= MIN_RUNS && clock_now_ns() - start >= TARGET_NS)
            break;
    }
    for (int i = 0; i < k; i++) {
        const double med = stats_median(c[i].samples, (size_t)c[i].runs);
        all[i] = (convsel_perf_result_t){c[i].id,
                                         c[i].s->name,
                                         med,
                                         c[i].samples[0],
                                         c[i].samples[c[i].runs - 1],
                                         c[i].runs,
                                         c[i].s->workspace_size(&p)};
    }
    qsort(all, (size_t)k, sizeof *all, by_time);
    *count_out = k < max_results ? k : max_results;
    if (*count_out > 0)
        memcpy(results, all, (size_t)*count_out * sizeof *results);
    st = CONVSEL_STATUS_SUCCESS;
done:
    free(workspace);
    free(all);
    free(c);
    return st;
}
