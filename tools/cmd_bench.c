/* cmd_bench.c -- `convsel bench`: every applicable convsel solver, the
 * oracle (the fastest of them per problem) and oneDNN's convolution_auto
 * with NCHW tensors at the API boundary (its reorders inside the timing,
 * weights packed once outside it), on a CSV of problems, in one run. The
 * solvers run as through a handle: on a thread pool, with a plan cache (so
 * the oneDNN solvers set up once). By default the weights are declared
 * constant, as onednn-auto's are: solvers that transform them (oneDNN's
 * reorders, Winograd's filter transform) do so once, in the warm-up run;
 * --weights per-call makes them transform the weights on every call.
 *
 * Method, for a shared and noisy machine: all variants of a problem run
 * once to warm up (and are verified), then take turns (interleaved rounds,
 * in a new random order each round)
 * until each has MIN_RUNS timings and the problem has been measured for
 * --min-time seconds (1 by default: at 0.3 s a 14 ms layer got only 5
 * timings per variant, and on a busy machine two runs of one oneDNN kernel
 * read 0.85 and 1.27 of each other); medians are reported with the max/min
 * spread. Every output
 * is verified against im2col_gemm's (which the test suite verifies against
 * the reference on 548 problems): the reference itself would take minutes
 * per large problem. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/descriptors.h"
#include "api/hybrid.h"
#include "cli.h"
#include "core/verify.h"
#include "heur/measured.h"
#include "problem_flags.h"
#include "solvers/onednn_plan.h"
#include "solvers/plan_cache.h"
#include "solvers/solver.h"
#include "tune/problem_list.h"
#include "util/clock.h"
#include "util/file.h"
#include "util/peak.h"
#include "util/rng.h"
#include "util/stats.h"

#define MIN_RUNS 5
#define MAX_ROUNDS 100
#define MAX_VARIANTS 32
#define MAX_DENSE 4096

static const char summary[] =
    "Benchmarks every applicable convsel solver, the oracle (the fastest of them per problem)\n"
    "and onednn-auto (oneDNN convolution_auto, NCHW at the boundary, reorders timed, weights\n"
    "packed once) on each problem of FILE, verifies every output, prints GFLOP/s medians and\n"
    "spread, and what immediate mode (convsel_get_solutions: database, model, rules) picks.\n"
    "Every variant's GFLOP/s is also given as a share of the FMA peak measured at the start;\n"
    "the peak is measured again at the end, and a move over 10 % is said.\n"
    "Ends with 'geomean oracle/onednn-auto = X.XX (N problems)', 'geomean immediate/oracle',\n"
    "'geomean immediate/onednn-auto' (speed ratios: above 1 is faster), 'top1 = A/N',\n"
    "'geomean hybrid/oracle' (hybrid find mode: where the ranking is unsure its first call times\n"
    "the top three; that call's cost against the candidates' runs is given), 'worst\n"
    "immediate/oracle = X.XX (name)' and the dense layers' median share of peak.\n"
    "FILE's header: " PROBLEM_LIST_HEADER " (NCHW; optionally network,family); a directory:\n"
    "every *.csv in it (data/networks).";

/* One variant of one problem: a solver, or the oneDNN baseline. */
struct variant {
    const char *name;
    const struct solver *solver; /* NULL: onednn-auto */
    struct onednn_plan *plan;
    double t[MAX_ROUNDS];
    int runs;
    double median, spread;
    bool failed;
};

struct bench_state {
    const struct conv_problem *p;
    const float *x, *w;
    float *y;
    void *ws;
    size_t ws_bytes;
    int threads;
    struct thread_pool *pool;
    struct plan_cache *plans; /* as a handle's: the oneDNN solvers set up once */
    bool weights_constant;
};

/* Hybrid mode's first call of a problem, as a user's would be. */
struct hybrid_call {
    int solver;      /* what hybrid mode runs afterwards (-1: unknown) */
    int measured;    /* candidates it timed (0: it was sure) */
    double first_ms; /* the first call, whole */
    double timed_ms; /* MEASURED_ROUNDS x each candidate's fastest run: their steady cost */
    double runs_ms;  /* the runs it timed, as they ran (first runs included) */
    double setup_ms; /* the candidates' set-ups, before the runs */
};

static struct hybrid_call hybrid_first_call(convsel_handle_t hh, const struct problem_descs *d,
                                            const struct conv_problem *p, const float *x,
                                            const float *w, float *y) {
    struct hybrid_call r = {.solver = -1};
    size_t ws = 0;
    if (convsel_get_forward_workspace_size(hh, CONVSEL_SOLVER_AUTO, d->x, d->w, d->conv, d->y,
                                           &ws) != CONVSEL_STATUS_SUCCESS)
        return r;
    void *buf = ws ? malloc(ws) : NULL;
    if (ws && !buf)
        return r;
    if (buf)
        memset(buf, 0, ws); /* the caller's buffer is in use already, as a user's would be */
    const int64_t t0 = clock_now_ns();
    const convsel_status_t st = convsel_convolution_forward(hh, CONVSEL_SOLVER_AUTO, d->x, x, d->w,
                                                            w, d->conv, d->y, y, buf, ws);
    r.first_ms = (double)(clock_now_ns() - t0) * 1e-6;
    free(buf);
    convsel_solution_t s[SOLVER_MAX];
    int n = 0;
    if (st != CONVSEL_STATUS_SUCCESS ||
        convsel_get_solutions(hh, d->x, d->w, d->conv, d->y, SOLVER_MAX, s, &n) !=
            CONVSEL_STATUS_SUCCESS ||
        n < 1)
        return r;
    r.solver = s[0].solver;
    for (int i = 0; i < n && s[i].source == CONVSEL_RANKED_BY_MEASUREMENT; i++)
        r.measured++, r.timed_ms += MEASURED_ROUNDS * s[i].time_ms;
    const struct measured *m = r.measured ? hybrid_lookup(hh, p) : NULL;
    r.runs_ms = m ? m->runs_ms : 0;
    r.setup_ms = m ? m->setup_ms : 0;
    return r;
}

static convsel_status_t run_variant(struct bench_state *b, struct variant *v) {
    if (v->solver == NULL)
        return onednn_plan_run(v->plan, b->x, b->w, b->y, b->threads, true); /* packed once */
    const struct conv_run_args a = {.p = b->p,
                                    .x = b->x,
                                    .w = b->w,
                                    .y = b->y,
                                    .workspace = b->ws,
                                    .workspace_bytes = b->ws_bytes,
                                    .num_threads = b->threads,
                                    .pool = b->pool,
                                    .plans = b->plans,
                                    .weights_constant = b->weights_constant};
    return solver_run(v->solver, &a);
}

int cmd_bench(int argc, char **argv) {
    const char *problems = NULL, *csv_path = NULL, *weights = "constant";
    double min_seconds = 1.0;
    int64_t threads = 2;
    const struct cli_flag flags[] = {
        {NULL, "--problems", CLI_STRING, &problems, "FILE", "CSV of problems (required)"},
        {NULL, "--threads", CLI_INT, &threads, "N", "threads for every variant (default 2)"},
        {NULL, "--csv", CLI_STRING, &csv_path, "OUT", "also write the results as CSV"},
        {NULL, "--weights", CLI_STRING, &weights, "MODE",
         "constant (default: solvers transform the weights once, as onednn-auto does) or "
         "per-call (on every call)"},
        {NULL, "--min-time", CLI_DOUBLE, &min_seconds, "S",
         "seconds of interleaved rounds per problem, at least 5 rounds, at most 100 (default 1)"},
    };
    int rc = cli_parse("bench", summary, argc, argv, flags, sizeof flags / sizeof flags[0]);
    if (rc != EXIT_OK)
        return rc < 0 ? EXIT_OK : rc;
    if (problems == NULL) {
        fprintf(stderr, "convsel bench: --problems FILE is required\n");
        return EXIT_USAGE;
    }
    if (!cli_threads_in_range("bench", "--threads", threads))
        return EXIT_USAGE;
    if (!(min_seconds >= 0 && min_seconds <= 60)) {
        fprintf(stderr, "convsel bench: --min-time %g: must be in 0..60 seconds\n", min_seconds);
        return EXIT_USAGE;
    }
    bool weights_constant;
    if (!cli_weights_mode("bench", weights, &weights_constant))
        return EXIT_USAGE;
    struct problem_list list = {0};
    char err[PROBLEM_LIST_ERROR_MAX];
    if (!problem_list_read(problems, &list, err, sizeof err)) {
        fprintf(stderr, "convsel bench: --problems %s\n", err);
        return EXIT_USAGE;
    }
    const struct problem_row *rows = list.rows;
    const int n_rows = list.n;
    FILE *csv = NULL;
    if (csv_path && (csv = file_open_write(csv_path, problems, err, sizeof err)) == NULL) {
        fprintf(stderr, "convsel bench: --csv %s\n", err);
        problem_list_free(&list);
        return EXIT_USAGE;
    }
    if (csv)
        fprintf(csv, "name,gflop,variant,gflops_median,spread,verified,pct_peak\n");
    convsel_handle_t h;
    convsel_handle_create(&h);
    convsel_set_num_threads(h, (int)threads); /* the machine signature immediate mode looks up */
    convsel_set_find_mode(h, CONVSEL_FIND_MODE_IMMEDIATE);
    convsel_set_weights_constant(h, weights_constant); /* its ranking prices per-call weights */
    convsel_handle_t hh;                               /* hybrid mode's handle */
    convsel_handle_create(&hh);
    convsel_set_num_threads(hh, (int)threads);
    convsel_set_find_mode(hh, CONVSEL_FIND_MODE_HYBRID);
    convsel_set_weights_constant(hh, weights_constant);
    struct thread_pool *pool = thread_pool_create((int)threads);
    const double peak = peak_gflops((int)threads);
    printf("peak: %.1f GFLOP/s (FMA, %d threads, measured now: every %% of peak is of it)\n", peak,
           (int)threads);
    printf("weights: %s\n", weights_constant ? "constant (every variant transforms them once)"
                                             : "per-call (onednn-auto's packed once)");
    printf("%-28s %8s %-18s %9s %9s %7s %13s  %s\n", "problem", "GFLOP", "oracle solver", "oracle",
           "onednn", "ratio", "spread o/d", "immediate (its GFLOP/s / oracle's)");
    double log_sum = 0, log_imm_oracle = 0, log_imm_dnnl = 0, worst_imm = -1, log_hyb_oracle = 0;
    double costs[MAX_DENSE], overs[MAX_DENSE], with_setups[MAX_DENSE];
    int hyb_counted = 0, n_costs = 0;
    double dense_share[MAX_DENSE];
    int n_dense = 0;
    char worst_name[PROBLEM_NAME_MAX] = "";
    int counted = 0, failures = 0, imm_counted = 0, imm_dnnl_counted = 0, top1 = 0;
    const int ref_id = solver_reference_id(), base_id = solver_find("im2col_gemm");
    for (int i = 0; i < n_rows; i++) {
        struct problem_descs d;
        struct conv_problem p;
        struct problem_flags pf;
        problem_flags_from(&rows[i].p, &pf);
        if (problem_descs_create("bench", h, &pf, &d) != EXIT_OK) {
            fprintf(stderr, "  (problem %s)\n", rows[i].name);
            rc = EXIT_USAGE;
            break;
        }
        problem_from_descriptors(h, d.x, d.w, d.conv, d.y, &p);
        convsel_solution_t chosen;
        int n_chosen = 0;
        if (convsel_get_solutions(h, d.x, d.w, d.conv, d.y, 1, &chosen, &n_chosen) !=
            CONVSEL_STATUS_SUCCESS)
            n_chosen = 0;
        const size_t xn = (size_t)(p.n * p.c * p.h * p.w), yn = (size_t)(p.n * p.k * p.oh * p.ow);
        float *x = malloc(xn * sizeof *x), *w = malloc(p.w_elems * sizeof *w);
        float *y = malloc(yn * sizeof *y), *base = malloc(yn * sizeof *base);
        struct rng g = rng_seed((uint64_t)i + 1);
        rng_fill(&g, x, xn);
        rng_fill(&g, w, p.w_elems);
        const struct hybrid_call hy = hybrid_first_call(hh, &d, &p, x, w, y);
        problem_descs_destroy(&d);
        struct variant v[MAX_VARIANTS];
        int nv = 0;
        size_t ws_bytes = 0;
        /* A plan cache per problem: w's address may come back for the next
         * problem, with other weights. */
        struct plan_cache *plans = plan_cache_create();
        for (int id = 0; id < solver_count() && nv < MAX_VARIANTS - 1; id++) {
            const struct solver *s = solver_get(id);
            if (id == ref_id || !s->is_applicable(&p, NULL))
                continue;
            v[nv++] = (struct variant){.name = s->name, .solver = s};
            ws_bytes = s->workspace_size(&p) > ws_bytes ? s->workspace_size(&p) : ws_bytes;
        }
        const int n_solvers = nv;
        v[nv] = (struct variant){.name = "onednn-auto",
                                 .plan = onednn_plan_create(&p, ONEDNN_AUTO, (int)threads)};
        if (v[nv].plan != NULL)
            nv++;
        void *ws = ws_bytes ? malloc(ws_bytes) : NULL;
        struct bench_state b = {
            &p, x, w, y, ws, ws_bytes, (int)threads, pool, plans, weights_constant};
        /* The verification baseline first. */
        const struct solver *bs = solver_get(base_id);
        const struct conv_run_args ba = {.p = &p,
                                         .x = x,
                                         .w = w,
                                         .y = base,
                                         .workspace = ws,
                                         .workspace_bytes = ws_bytes,
                                         .num_threads = (int)threads,
                                         .pool = pool};
        solver_run(bs, &ba);
        for (int k = 0; k < nv; k++) { /* warm up and verify */
            const double tol = v[k].solver ? fmax(v[k].solver->tolerance, 1e-4) : 1e-3;
            struct verify_result r = {0};
            v[k].failed = run_variant(&b, &v[k]) != CONVSEL_STATUS_SUCCESS ||
                          (r = verify_compare(y, base, yn), !verify_passes(&r, tol));
            if (v[k].failed) {
                printf("  %s: %s FAILED verification (rel error %.2e)\n", rows[i].name, v[k].name,
                       r.rel_error);
                failures++;
            }
        }
        const int64_t start = clock_now_ns();
        int order[MAX_VARIANTS];
        for (int k = 0; k < nv; k++)
            order[k] = k;
        for (int round = 0; round < MAX_ROUNDS; round++) {
            /* A new order every round: a variant's time depends on what ran
             * just before it (a oneDNN call leaves OpenMP workers spinning,
             * a convsel-pool call leaves them asleep). */
            rng_shuffle(&g, order, nv);
            for (int j = 0; j < nv; j++) {
                const int k = order[j];
                if (v[k].failed)
                    continue;
                const int64_t t0 = clock_now_ns();
                run_variant(&b, &v[k]);
                v[k].t[v[k].runs++] = (double)(clock_now_ns() - t0) * 1e-9;
            }
            if (round + 1 >= MIN_RUNS && (double)(clock_now_ns() - start) * 1e-9 >= min_seconds)
                break;
        }
        const double flop = problem_flops(&p);
        int oracle = -1;
        for (int k = 0; k < nv; k++) {
            if (v[k].failed || v[k].runs == 0)
                continue;
            v[k].median = stats_median(v[k].t, (size_t)v[k].runs);
            v[k].spread = v[k].t[v[k].runs - 1] / v[k].t[0];
            if (k < n_solvers && (oracle < 0 || v[k].median < v[oracle].median))
                oracle = k;
            if (csv)
                fprintf(csv, "%s,%.4f,%s,%.2f,%.3f,yes,%.1f\n", rows[i].name, flop * 1e-9,
                        v[k].name, flop / v[k].median * 1e-9, v[k].spread,
                        100 * flop / v[k].median * 1e-9 / peak);
        }
        const bool have_dnnl = nv > n_solvers && !v[n_solvers].failed;
        if (oracle >= 0) {
            char ratio[16] = "n/a", spread[32];
            const double go = flop / v[oracle].median * 1e-9;
            const double gd = have_dnnl ? flop / v[n_solvers].median * 1e-9 : 0;
            if (have_dnnl) {
                snprintf(ratio, sizeof ratio, "%.2f", go / gd);
                log_sum += log(go / gd);
                counted++;
            }
            snprintf(spread, sizeof spread, "%.2f/%.2f", v[oracle].spread,
                     have_dnnl ? v[n_solvers].spread : 0.0);
            int imm = -1; /* the variant immediate mode chose, if it was timed */
            for (int k = 0; n_chosen && k < n_solvers; k++)
                if (!v[k].failed && v[k].runs && v[k].solver == solver_get(chosen.solver))
                    imm = k;
            char imm_text[64] = "not timed";
            if (imm >= 0) {
                const double r = v[oracle].median / v[imm].median;
                snprintf(imm_text, sizeof imm_text, "%s %.2f (%s)", v[imm].name, r,
                         convsel_ranking_source_string(chosen.source));
                log_imm_oracle += log(r);
                imm_counted++;
                top1 += imm == oracle;
                if (have_dnnl) {
                    log_imm_dnnl += log(v[n_solvers].median / v[imm].median);
                    imm_dnnl_counted++;
                }
            } else if (n_chosen) {
                snprintf(imm_text, sizeof imm_text, "%s: not timed", chosen.name);
            }
            int hyb = -1; /* the variant hybrid mode runs after its first call */
            for (int k = 0; hy.solver >= 0 && k < n_solvers; k++)
                if (!v[k].failed && v[k].runs && v[k].solver == solver_get(hy.solver))
                    hyb = k;
            char hyb_text[256] = "hybrid: not timed";
            if (hyb >= 0) {
                const double r = v[oracle].median / v[hyb].median;
                log_hyb_oracle += log(r);
                hyb_counted++;
                if (hy.measured > 0) {
                    const double cost = hy.first_ms / hy.timed_ms;
                    const double over = hy.runs_ms > 0 ? hy.first_ms / hy.runs_ms : 0;
                    const double set =
                        hy.runs_ms > 0 ? hy.first_ms / (hy.runs_ms + hy.setup_ms) : 0;
                    if (n_costs < MAX_DENSE)
                        costs[n_costs] = cost, with_setups[n_costs] = set, overs[n_costs++] = over;
                    snprintf(hyb_text, sizeof hyb_text,
                             "hybrid: %s %.2f (measured %d: first call %.3f ms = %.2fx the runs "
                             "it timed, %.2fx with their set-ups of %.3f ms, %.2fx their steady "
                             "runs)",
                             v[hyb].name, r, hy.measured, hy.first_ms, over, set, hy.setup_ms,
                             cost);
                } else {
                    snprintf(hyb_text, sizeof hyb_text, "hybrid: %s %.2f (sure: immediate's pick)",
                             v[hyb].name, r);
                }
            }
            printf("%-28s %8.3f %-18s %9.1f %9.1f %7s %13s  %s\n", rows[i].name, flop * 1e-9,
                   v[oracle].name, go, gd, ratio, spread, imm_text);
            if (csv)
                fprintf(csv, "%s,%.4f,oracle,%.2f,%.3f,yes,%.1f\n", rows[i].name, flop * 1e-9, go,
                        v[oracle].spread, 100 * go / peak);
            printf("    %s\n", hyb_text);
            /* every variant's GFLOP/s and share of the peak */
            printf("    ");
            for (int k = 0; k < nv; k++)
                if (!v[k].failed && v[k].runs)
                    printf("%s%s %.1f (%.0f%%)", k ? ", " : "", v[k].name,
                           flop / v[k].median * 1e-9, 100 * flop / v[k].median * 1e-9 / peak);
            printf("\n");
            const bool dense = !(p.groups > 1 && p.groups == p.c) && flop >= 1e8;
            if (dense && n_dense < MAX_DENSE)
                dense_share[n_dense++] = go / peak;
            if (imm >= 0 && (worst_imm < 0 || v[oracle].median / v[imm].median < worst_imm)) {
                worst_imm = v[oracle].median / v[imm].median;
                snprintf(worst_name, sizeof worst_name, "%s", rows[i].name);
            }
        }
        fflush(stdout);
        for (int k = 0; k < nv; k++)
            onednn_plan_destroy(v[k].plan);
        plan_cache_destroy(plans);
        free(x), free(w), free(y), free(base), free(ws);
    }
    if (rc == EXIT_OK) {
        printf("geomean oracle/onednn-auto = %.2f (%d problems)\n",
               counted ? exp(log_sum / counted) : 0.0, counted);
        printf("geomean immediate/oracle = %.2f (%d problems)\n",
               imm_counted ? exp(log_imm_oracle / imm_counted) : 0.0, imm_counted);
        printf("geomean immediate/onednn-auto = %.2f (%d problems)\n",
               imm_dnnl_counted ? exp(log_imm_dnnl / imm_dnnl_counted) : 0.0, imm_dnnl_counted);
        printf("top1 = %d/%d\n", top1, imm_counted);
        printf("geomean hybrid/oracle = %.2f (%d problems)\n",
               hyb_counted ? exp(log_hyb_oracle / hyb_counted) : 0.0, hyb_counted);
        if (n_costs) {
            double most = costs[0], most_over = overs[0], most_set = with_setups[0];
            for (int i = 1; i < n_costs; i++) {
                most = costs[i] > most ? costs[i] : most;
                most_over = overs[i] > most_over ? overs[i] : most_over;
                most_set = with_setups[i] > most_set ? with_setups[i] : most_set;
            }
            printf("hybrid first calls: %d measured, their cost median %.2fx (max %.2fx) the "
                   "runs they timed, %.2fx (max %.2fx) the candidates' steady runs (%d of "
                   "each)\n",
                   n_costs, stats_median(overs, (size_t)n_costs), most_over,
                   stats_median(costs, (size_t)n_costs), most, MEASURED_ROUNDS);
            printf("hybrid first calls: %.2fx (max %.2fx) the runs and set-ups they timed (the "
                   "rest is hybrid's own bookkeeping)\n",
                   stats_median(with_setups, (size_t)n_costs), most_set);
        }
        if (worst_imm >= 0)
            printf("worst immediate/oracle = %.2f (%s)\n", worst_imm, worst_name);
        if (n_dense) {
            double shares[MAX_DENSE];
            memcpy(shares, dense_share, (size_t)n_dense * sizeof *shares);
            printf("dense layers (not depthwise, >= 0.1 GFLOP): oracle at %.0f%% of peak median "
                   "(%d problems)\n",
                   100 * stats_median(shares, (size_t)n_dense), n_dense);
        }
        /* The shares are of the start's peak, printed row by row as they
         * are measured. On a shared host the FMA peak itself moves (Zen 3,
         * 2026-12-03: 162 GFLOP/s at one bench's start, 201.5 a minute
         * later), so it is measured again and a move over 10 % is said:
         * then the shares are off by that much, the ratios are not. */
        const double peak_end = peak_gflops((int)threads);
        const double moved = peak > 0 && peak_end > 0 ? peak_end / peak : 1;
        printf("peak at the end: %.1f GFLOP/s (%.2fx the start's)%s\n", peak_end, moved,
               moved > 1.1 || moved < 1 / 1.1
                   ? ": the machine's speed moved during the run; the % of peak above are off "
                     "by as much, the ratios between variants are not"
                   : "");
    }
    if (csv)
        fclose(csv);
    convsel_handle_destroy(h);
    convsel_handle_destroy(hh);
    thread_pool_destroy(pool);
    problem_list_free(&list);
    return rc != EXIT_OK ? rc : failures ? EXIT_FAILED : EXIT_OK;
}
