/* bench_network.c -- a network's layers back to back, as an inference runs
 * them: the solver each layer's immediate-mode pick (or the one named),
 * weights constant, one call per layer per pass. What it measures that
 * `convsel bench` cannot: the cost of a solver's threads between layers
 * (waking a sleeping pool, OpenMP's spinning team), since a per-problem
 * benchmark repeats one layer and keeps its threads warm.
 *
 * Two pool settings run side by side in one process, the passes
 * interleaved (A, B, A, B, ...), each on its own handle:
 * CONVSEL_POOL_SPIN_US=A and =B (set before each handle's pool starts).
 *   build/bench_network CSV NETWORK BATCH [SPIN_A=0] [SPIN_B=50] [PASSES=30] [THREADS=2]
 * BENCH_NETWORK_SOLVER=NAME runs every layer on one solver; BENCH_NETWORK_OWN=1
 * takes the ranking's first solver that is not oneDNN's (a network on convsel's
 * own pool alone). CSV is a corpus file (data/networks/); its rows for NETWORK at BATCH run
 * in file order (the corpus keeps each distinct layer once, in the order
 * the network first runs it). Prints the per-pass time of A and B (median,
 * p10, p90) and the ratio of medians, then the solvers used. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convsel/convsel.h"
#include "tune/problem_list.h"
#include "util/clock.h"
#include "util/rng.h"
#include "util/stats.h"

struct layer {
    convsel_tensor_desc_t xd, yd;
    convsel_filter_desc_t wd;
    convsel_conv_desc_t cd;
    float *x, *w, *y;
    convsel_solver_id_t id[2]; /* per handle: the pick, made once */
    void *work[2];
    size_t ws[2];
};

static int fail(const char *what, convsel_status_t s) {
    fprintf(stderr, "bench_network: %s: %s\n", what, convsel_status_string(s));
    return 1;
}

static int setup(struct layer *l, const struct conv_problem *p, convsel_handle_t h[2],
                 const char *solver, bool own_only) {
    convsel_tensor_desc_create(&l->xd);
    convsel_tensor_desc_create(&l->yd);
    convsel_filter_desc_create(&l->wd);
    convsel_conv_desc_create(&l->cd);
    convsel_tensor_desc_set_4d(l->xd, CONVSEL_LAYOUT_NCHW, p->n, p->c, p->h, p->w);
    convsel_filter_desc_set(l->wd, CONVSEL_FILTER_KCRS, p->k, p->c / p->groups, p->r, p->s);
    convsel_status_t s = convsel_conv_desc_set(l->cd, p->pad_h, p->pad_w, p->stride_h, p->stride_w,
                                               p->dil_h, p->dil_w, p->groups);
    if (s != CONVSEL_STATUS_SUCCESS)
        return fail("conv_desc_set", s);
    convsel_tensor_desc_set_4d(l->yd, CONVSEL_LAYOUT_NCHW, p->n, p->k, p->oh, p->ow);
    const size_t xn = (size_t)(p->n * p->c * p->h * p->w),
                 yn = (size_t)(p->n * p->k * p->oh * p->ow);
    l->x = malloc(xn * sizeof(float));
    l->w = malloc(p->w_elems * sizeof(float));
    l->y = malloc(yn * sizeof(float));
    if (!l->x || !l->w || !l->y)
        return fail("malloc", CONVSEL_STATUS_ALLOC_FAILED);
    struct rng g = rng_seed(7);
    rng_fill(&g, l->x, xn);
    rng_fill(&g, l->w, p->w_elems);
    for (int i = 0; i < 2; i++) {
        if (solver != NULL) {
            if ((s = convsel_solver_find(h[i], solver, &l->id[i])) != CONVSEL_STATUS_SUCCESS)
                return fail(solver, s);
        } else {
            convsel_solution_t sol[64];
            int found = 0;
            s = convsel_get_solutions(h[i], l->xd, l->wd, l->cd, l->yd, 64, sol, &found);
            if (s != CONVSEL_STATUS_SUCCESS || found < 1)
                return fail("get_solutions", s);
            int pick = 0; /* the first of convsel's own when oneDNN is left out */
            while (own_only && pick + 1 < found && strncmp(sol[pick].name, "onednn", 6) == 0)
                pick++;
            l->id[i] = sol[pick].solver;
        }
        s = convsel_get_forward_workspace_size(h[i], l->id[i], l->xd, l->wd, l->cd, l->yd,
                                               &l->ws[i]);
        if (s != CONVSEL_STATUS_SUCCESS)
            return fail("workspace", s);
        l->work[i] = l->ws[i] ? malloc(l->ws[i]) : NULL;
    }
    return 0;
}

static convsel_status_t run(const struct layer *l, convsel_handle_t h, int i) {
    return convsel_convolution_forward(h, l->id[i], l->xd, l->x, l->wd, l->w, l->cd, l->yd, l->y,
                                       l->work[i], l->ws[i]);
}

int main(int argc, char **argv) {
    if (argc < 4 || argc > 8) {
        fprintf(stderr, "usage: bench_network CSV NETWORK BATCH [SPIN_A_US=0] [SPIN_B_US=50] "
                        "[PASSES=30] [THREADS=2]\n");
        return 2;
    }
    const long batch = atol(argv[3]);
    const char *spin[2] = {argc > 4 ? argv[4] : "0", argc > 5 ? argv[5] : "50"};
    const int passes = argc > 6 ? atoi(argv[6]) : 30, threads = argc > 7 ? atoi(argv[7]) : 2;
    const char *solver = getenv("BENCH_NETWORK_SOLVER"); /* all layers on one solver */
    /* The ranking's first solver that is not oneDNN's: a network on convsel's pool alone. */
    const bool own_only = getenv("BENCH_NETWORK_OWN") != NULL;
    if (passes < 1 || passes > 100000 || threads < 1 || threads > 256 || batch < 1) {
        fprintf(stderr, "bench_network: PASSES 1..100000, THREADS 1..256, BATCH >= 1\n");
        return 2;
    }
    struct problem_list list = {0};
    char err[PROBLEM_LIST_ERROR_MAX];
    if (!problem_list_read(argv[1], &list, err, sizeof err)) {
        fprintf(stderr, "bench_network: %s\n", err);
        return 1;
    }
    convsel_handle_t h[2];
    for (int i = 0; i < 2; i++) {
        convsel_handle_create(&h[i]);
        convsel_set_num_threads(h[i], threads);
        convsel_set_weights_constant(h[i], 1);
    }
    struct layer *layers = calloc((size_t)list.n, sizeof *layers);
    int n = 0;
    for (int r = 0; r < list.n; r++)
        if (strcmp(list.rows[r].network, argv[2]) == 0 && list.rows[r].p.n == batch)
            if (setup(&layers[n++], &list.rows[r].p, h, solver, own_only) != 0)
                return 1;
    if (n == 0) {
        fprintf(stderr, "bench_network: no rows of %s at batch %ld in %s\n", argv[2], batch,
                argv[1]);
        return 1;
    }
    /* Each handle's pool starts at its first call: set its spin first. */
    for (int i = 0; i < 2; i++) {
        setenv("CONVSEL_POOL_SPIN_US", spin[i], 1);
        for (int l = 0; l < n; l++)
            if (run(&layers[l], h[i], i) != CONVSEL_STATUS_SUCCESS)
                return fail("convolution_forward", CONVSEL_STATUS_INTERNAL);
    }
    double *t[2] = {malloc((size_t)passes * sizeof(double)),
                    malloc((size_t)passes * sizeof(double))};
    for (int p = 0; p < passes; p++)
        for (int i = 0; i < 2; i++) {
            const int64_t t0 = clock_now_ns();
            for (int l = 0; l < n; l++)
                run(&layers[l], h[i], i);
            t[i][p] = (double)(clock_now_ns() - t0) * 1e-6;
        }
    double med[2];
    printf("%s batch %ld: %d layers, %d passes, %d threads, %s\n", argv[2], batch, n, passes,
           threads,
           solver     ? solver
           : own_only ? "immediate-mode picks, oneDNN's left out"
                      : "immediate-mode picks");
    for (int i = 0; i < 2; i++) {
        med[i] = stats_median(t[i], (size_t)passes); /* sorts */
        printf("  spin %5s us: median %8.3f ms  p10 %8.3f  p90 %8.3f\n", spin[i], med[i],
               stats_quantile_sorted(t[i], (size_t)passes, 0.1),
               stats_quantile_sorted(t[i], (size_t)passes, 0.9));
    }
    printf("  ratio spin %s / spin %s (medians) = %.2f\n", spin[0], spin[1], med[0] / med[1]);
    int count[64] = {0};
    for (int l = 0; l < n; l++)
        if (layers[l].id[1] >= 0 && layers[l].id[1] < 64)
            count[layers[l].id[1]]++;
    printf("  solvers:");
    for (int s = 0; s < 64; s++)
        if (count[s])
            printf(" %s %d", convsel_solver_name(s), count[s]);
    printf("\n");
    return 0;
}
