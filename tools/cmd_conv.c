/* cmd_conv.c -- `convsel conv`: run one convolution with a chosen or
 * automatically selected solver, time it, and verify it against the
 * reference solver. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/descriptors.h"
#include "cli.h"
#include "core/verify.h"
#include "db/perfdb.h"
#include "heur/db_snapshot.h"
#include "heur/ranking_model.h"
#include "problem_flags.h"
#include "solvers/solver.h"
#include "util/clock.h"
#include "util/cpu.h"
#include "util/rng.h"
#include "util/stats.h"

static const char summary[] =
    "Runs one fp32 forward convolution (MIOpenDriver-style flags), prints the problem key,\n"
    "the solver used, the median time and GFLOP/s. With -V 1 the output is compared with\n"
    "the reference solver and the command fails (exit 1) if the error exceeds the solver's\n"
    "stated tolerance. Without flags it runs ResNet-50's 3x3 layer 1x64x56x56.";

struct conv_options {
    struct problem_flags pf;
    int64_t iters, verify, threads;
    const char *solver, *weights;
    bool find;
};

/* The data of one run: tensors, sizes, and the handle's descriptors. */
struct conv_buffers {
    float *x, *w, *y, *ref;
    void *workspace;
    size_t x_count, w_count, y_count, workspace_bytes;
};

static void free_buffers(struct conv_buffers *b) {
    free(b->x);
    free(b->w);
    free(b->y);
    free(b->ref);
    free(b->workspace);
}

static void *alloc_or_report(size_t count, size_t size, const char *what) {
    void *p = count ? calloc(count, size) : NULL;
    if (count && p == NULL)
        fprintf(stderr, "convsel conv: cannot allocate %zu bytes for %s\n", count * size, what);
    return p;
}

static int run_and_time(convsel_handle_t h, convsel_solver_id_t id, const struct problem_descs *d,
                        struct conv_buffers *b, int64_t iters, double *samples) {
    for (int64_t i = -1; i < iters; i++) { /* i == -1 is the warm-up run */
        const int64_t t0 = clock_now_ns();
        convsel_status_t st = convsel_convolution_forward(
            h, id, d->x, b->x, d->w, b->w, d->conv, d->y, b->y, b->workspace, b->workspace_bytes);
        const int64_t t1 = clock_now_ns();
        if (st != CONVSEL_STATUS_SUCCESS) {
            fprintf(stderr, "convsel conv: %s: %s\n", convsel_status_string(st),
                    convsel_get_error_message(h));
            return st == CONVSEL_STATUS_NOT_SUPPORTED ? EXIT_NOT_SUPPORTED : EXIT_FAILED;
        }
        if (i >= 0)
            samples[i] = (double)(t1 - t0) * 1e-9;
    }
    return EXIT_OK;
}

static int verify_output(convsel_handle_t h, const struct problem_descs *d, struct conv_buffers *b,
                         const struct solver *s) {
    if ((b->ref = alloc_or_report(b->y_count, sizeof(float), "the reference output")) == NULL)
        return EXIT_FAILED;
    convsel_status_t st = convsel_convolution_forward(h, solver_reference_id(), d->x, b->x, d->w,
                                                      b->w, d->conv, d->y, b->ref, NULL, 0);
    if (st != CONVSEL_STATUS_SUCCESS) {
        fprintf(stderr, "convsel conv: reference failed: %s\n", convsel_get_error_message(h));
        return EXIT_FAILED;
    }
    struct verify_result r = verify_compare(b->y, b->ref, b->y_count);
    printf("verify    max abs err %.3e, max rel err %.3e (max|ref| %.3g, tolerance %.0e",
           r.max_abs_error, r.rel_error, r.max_ref, s->tolerance);
    if (r.nonfinite)
        printf(", %zu non-finite outputs", r.nonfinite);
    printf(")\n");
    if (!verify_passes(&r, s->tolerance)) {
        printf("FAILED\n");
        return EXIT_FAILED;
    }
    printf("verified\n");
    return EXIT_OK;
}

/* --find: every applicable solver, fastest first. */
static int print_find_table(convsel_handle_t h, const struct problem_descs *d,
                            const struct conv_buffers *b, double flops) {
    convsel_perf_result_t r[64];
    int n = 0;
    if (convsel_find_forward(h, d->x, b->x, d->w, b->w, d->conv, d->y, b->y, r, 64, &n) !=
        CONVSEL_STATUS_SUCCESS) {
        fprintf(stderr, "convsel conv: find: %s\n", convsel_get_error_message(h));
        return EXIT_FAILED;
    }
    printf("\n%4s %-20s %12s %12s %12s %6s %10s %14s\n", "rank", "solver", "median ms", "min ms",
           "max ms", "runs", "GFLOP/s", "workspace B");
    for (int i = 0; i < n; i++)
        printf("%4d %-20s %12.4f %12.4f %12.4f %6d %10.1f %14zu\n", i + 1, r[i].name, r[i].time_ms,
               r[i].time_min_ms, r[i].time_max_ms, r[i].runs, flops / r[i].time_ms * 1e-6,
               r[i].workspace_bytes);
    return EXIT_OK;
}

/* Says so when the model extrapolates on p: which feature left the
 * training range, and that the first pick is then the safe one. */
static void print_extrapolation(const struct conv_problem *p, int threads,
                                const convsel_solution_t *ranked, int n) {
    if (n < 1 || !(ranked[0].flags & CONVSEL_SOLUTION_EXTRAPOLATED))
        return;
    const struct ranking_model *m = ranking_model_get();
    struct policy_ranking pr;
    if (m == NULL || !ranking_model_rank(m, p, threads, false, &pr) || pr.feature < 0) {
        printf("extrap    the model extrapolates here: its estimates are guesses\n");
        return;
    }
    const struct model_metadata *meta = ranking_model_metadata(m);
    const struct feature_bounds *b = policy_bounds(meta, p);
    printf("extrap    the model extrapolates here: %s = %g is outside its training range [%g, "
           "%g]%s%s%s; its estimates are guesses, and %s\n",
           feature_names[pr.feature], (double)pr.value, (double)b->min[pr.feature],
           (double)b->max[pr.feature], b == &meta->bounds ? "" : " for ",
           b == &meta->bounds ? "" : problem_kind_names[policy_kind(p)],
           b == &meta->bounds ? "" : " layers",
           pr.scale_only ? "as only the scale is outside it, its order stands"
                         : "the first pick is the applicable solver with the mildest worst "
                           "cases on this class of layer (metadata \"safe\")");
}

int cmd_conv(int argc, char **argv) {
    struct conv_options o = {.iters = 10, .verify = 0, .solver = "auto", .weights = "per-call"};
    problem_flags_defaults(&o.pf);
    struct cli_flag flags[PROBLEM_FLAG_COUNT + 6];
    problem_flags_table(&o.pf, flags);
    flags[PROBLEM_FLAG_COUNT + 0] =
        (struct cli_flag){"-i",     "--iter", CLI_INT,
                          &o.iters, "ITERS",  "timed iterations after one warm-up (default 10)"};
    flags[PROBLEM_FLAG_COUNT + 1] = (struct cli_flag){
        "-V", "--verify", CLI_INT, &o.verify, "0|1", "verify against the reference (default 0)"};
    flags[PROBLEM_FLAG_COUNT + 2] = (struct cli_flag){
        "-S", "--solver", CLI_STRING, &o.solver, "SOLVER|auto", "solver name (default auto)"};
    flags[PROBLEM_FLAG_COUNT + 3] = (struct cli_flag){
        NULL, "--threads", CLI_INT, &o.threads, "T", "threads (default: online CPUs)"};
    flags[PROBLEM_FLAG_COUNT + 4] =
        (struct cli_flag){NULL,    "--find", CLI_SWITCH,
                          &o.find, "",       "time every applicable solver and print the table"};
    flags[PROBLEM_FLAG_COUNT + 5] = (struct cli_flag){
        NULL,
        "--weights",
        CLI_STRING,
        &o.weights,
        "MODE",
        "per-call (default: solvers transform the weights on every call) or constant (once, "
        "as in inference and convsel bench; convsel_set_weights_constant)"};
    const size_t nflags = sizeof flags / sizeof flags[0];

    bool given[PROBLEM_FLAG_COUNT + 6] = {false};
    int rc = cli_parse_given("conv", summary, argc, argv, flags, nflags, given);
    if (rc != EXIT_OK)
        return rc < 0 ? EXIT_OK : rc;
    const bool threads_given = given[PROBLEM_FLAG_COUNT + 3];
    if (threads_given && !cli_threads_in_range("conv", "--threads", o.threads))
        return EXIT_USAGE;
    if (o.iters < 1 || o.iters > 1000000) {
        fprintf(stderr, "convsel conv: -i %lld: must be in 1..1000000\n", (long long)o.iters);
        return EXIT_USAGE;
    }
    if (o.verify != 0 && o.verify != 1) {
        fprintf(stderr, "convsel conv: -V %lld: must be 0 or 1\n", (long long)o.verify);
        return EXIT_USAGE;
    }
    bool weights_constant;
    if (!cli_weights_mode("conv", o.weights, &weights_constant))
        return EXIT_USAGE;

    convsel_handle_t h;
    if (convsel_handle_create(&h) != CONVSEL_STATUS_SUCCESS) {
        fprintf(stderr, "convsel conv: cannot create a handle\n");
        return EXIT_FAILED;
    }
    struct problem_descs d;
    struct conv_buffers b = {0};
    double *samples = NULL;
    if (threads_given && convsel_set_num_threads(h, (int)o.threads)) {
        fprintf(stderr, "convsel conv: --threads %lld: %s\n", (long long)o.threads,
                convsel_get_error_message(h));
        convsel_handle_destroy(h);
        return EXIT_USAGE;
    }
    convsel_set_weights_constant(h, weights_constant); /* before ranking: it prices the mode */
    if ((rc = problem_descs_create("conv", h, &o.pf, &d)) != EXIT_OK) {
        convsel_handle_destroy(h);
        return rc;
    }

    convsel_solver_id_t id = CONVSEL_SOLVER_AUTO;
    if (strcmp(o.solver, "auto") != 0 && convsel_solver_find(h, o.solver, &id)) {
        fprintf(stderr, "convsel conv: -S: %s\n", convsel_get_error_message(h));
        rc = EXIT_USAGE;
        goto done;
    }
    convsel_status_t st =
        convsel_get_forward_workspace_size(h, id, d.x, d.w, d.conv, d.y, &b.workspace_bytes);
    if (st != CONVSEL_STATUS_SUCCESS) {
        fprintf(stderr, "convsel conv: %s: %s\n", convsel_status_string(st),
                convsel_get_error_message(h));
        rc = st == CONVSEL_STATUS_NOT_SUPPORTED ? EXIT_NOT_SUPPORTED : EXIT_USAGE;
        goto done;
    }
    /* Resolve AUTO once, so the timed runs and the report name one solver. */
    struct conv_problem p;
    char key[CONVSEL_PROBLEM_KEY_MAX];
    problem_from_descriptors(h, d.x, d.w, d.conv, d.y, &p);
    problem_key_format(&p, key, sizeof key);
    const bool automatic = id == CONVSEL_SOLVER_AUTO;
    convsel_solution_t ranked[16];
    int n_ranked = 0;
    if (automatic) {
        if (convsel_get_solutions(h, d.x, d.w, d.conv, d.y, 16, ranked, &n_ranked) !=
            CONVSEL_STATUS_SUCCESS) {
            fprintf(stderr, "convsel conv: ranking: %s\n", convsel_get_error_message(h));
            rc = EXIT_FAILED;
            goto done;
        }
        id = ranked[0].solver;
    }
    const struct solver *s = solver_get(id);

    int64_t n, k, oh, ow;
    convsel_tensor_desc_get_4d(d.y, NULL, &n, &k, &oh, &ow, NULL, NULL, NULL, NULL);
    b.x_count = (size_t)(o.pf.n * o.pf.c * o.pf.h * o.pf.w);
    b.w_count = p.w_elems;
    b.y_count = (size_t)(n * k * oh * ow);
    rc = EXIT_FAILED;
    if ((b.x = alloc_or_report(b.x_count, sizeof(float), "x")) == NULL ||
        (b.w = alloc_or_report(b.w_count, sizeof(float), "w")) == NULL ||
        (b.y = alloc_or_report(b.y_count, sizeof(float), "y")) == NULL ||
        (b.workspace_bytes &&
         (b.workspace = alloc_or_report(b.workspace_bytes, 1, "the workspace")) == NULL) ||
        (samples = alloc_or_report((size_t)o.iters, sizeof(double), "timings")) == NULL)
        goto done;
    struct rng g = rng_seed(42);
    rng_fill(&g, b.x, b.x_count);
    rng_fill(&g, b.w, b.w_count);

    int threads;
    convsel_get_num_threads(h, &threads);
    printf("problem   %s\n", key);
    if (automatic) {
        printf("solver    %s (auto: %s)\n", s->name,
               convsel_ranking_source_string(ranked[0].source));
        for (int i = 0; i < n_ranked; i++) {
            char est[32] = "-";
            if (ranked[i].time_ms >= 0)
                snprintf(est, sizeof est, "%.4f ms", ranked[i].time_ms);
            printf("%-9s %d %-20s est %-14s %s\n", i == 0 ? "ranking" : "", i + 1, ranked[i].name,
                   est, convsel_ranking_source_string(ranked[i].source));
        }
        printf("database  %s\n", db_snapshot_status());
        char model[4600];
        ranking_model_status(model, sizeof model);
        printf("model     %s\n", model);
        print_extrapolation(&p, threads, ranked, n_ranked);
    } else {
        printf("solver    %s\n", s->name);
    }
    printf("threads   %d\n", threads);
    printf("weights   %s\n", weights_constant ? "constant" : "per-call");
    char isa[160];
    cpu_isa_describe(isa, sizeof isa);
    printf("kernels   %s\n", isa);
    fflush(stdout);
    if (o.find) {
        rc = print_find_table(h, &d, &b, problem_flops(&p));
        goto done;
    }
    if ((rc = run_and_time(h, id, &d, &b, o.iters, samples)) != EXIT_OK)
        goto done;
    const double median = stats_median(samples, (size_t)o.iters);
    printf("time      median %.4f ms (min %.4f, max %.4f, %lld iterations)\n", median * 1e3,
           samples[0] * 1e3, samples[o.iters - 1] * 1e3, (long long)o.iters);
    printf("perf      %.1f GFLOP/s\n", problem_flops(&p) / median * 1e-9);
    if (o.verify)
        rc = verify_output(h, &d, &b, s);

done:
    free(samples);
    free_buffers(&b);
    problem_descs_destroy(&d);
    convsel_handle_destroy(h);
    return rc;
}
