/* cmd_tune.c -- `convsel tune`: builds the problem list (a file, a seeded
 * random sample, the corpus of real layers and perturbations of them) and
 * measures it into the performance database with the library's tuning
 * module (src/tune/tune.c), printing progress. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "tune/problem_list.h"
#include "tune/sample.h"
#include "tune/tune.h"
#include "util/file.h"

static const char summary[] =
    "Times every applicable solver on each problem (convsel's exhaustive find: interleaved\n"
    "rounds, medians, spread) and stores the results in the performance database.\n"
    "Problems come from --problems FILE|DIR (CSV, as convsel bench reads; a directory: every\n"
    "*.csv in it), from --corpus FILE|DIR (real layers, e.g. data/networks: each layer, then\n"
    "--perturb P perturbations of each: batch, channels and sizes moved, the kind of layer\n"
    "kept), and from --sample N --seed S (random problems shaped like networks' layers), in\n"
    "that order; --list prints them (CSV) without measuring. Layers and perturbations are\n"
    "recorded with their network and family (convsel eval leaves families out by them).\n"
    "Problems already in the database for this machine signature are skipped, so a run\n"
    "can be interrupted and resumed; --remeasure-before T|now measures again those whose\n"
    "records are all older than T (after a solver changed; resumable with the same T), and\n"
    "the per-call weights costs (below) when they are older than T.\n"
    "--shard I/N takes problems I, I+N, I+2N, ...\n"
    "Noise guard: a fixed calibration (1x32x56x56, 32 3x3 filters, on im2col_gemm and\n"
    "onednn_direct) is timed before and after every problem; when it is slower than\n"
    "--noise-guard P percent of the fastest calibration seen, another process is competing for\n"
    "the cores (a slow calibration is confirmed by a second one first): tune waits for\n"
    "quiet (up to 60 s) and measures again (up to 3 times). A\n"
    "problem still measured on a busy machine is not stored (a later run retries it).\n"
    "Drift guard: at the start the calibration's fastest of a few runs is compared with the one\n"
    "recorded when the database's first timings for this machine were taken; more than\n"
    "--drift-guard P percent off (faster or slower, still slower after 10 s of retries) and\n"
    "tune refuses: the machine has changed, and new timings would not compare with the old.\n"
    "--remeasure-before T with T after that record re-times the older timings and, when the\n"
    "calibration reads outside the guard, records this run's instead (give it every problem\n"
    "the database holds); inside the guard the reference stays.\n"
    "Weights are declared constant (convsel_set_weights_constant), as in inference and in\n"
    "convsel bench: solvers that transform them do so once; --weights per-call measures\n"
    "every call transforming them. A database holds one mode per machine (recorded; tune\n"
    "refuses to mix them). Once per database and machine, tune also measures the FMA peak,\n"
    "the bandwidth and what per-call weights cost each solver (ns per weight element),\n"
    "which the ranking adds for handles whose weights are not constant.\n"
    "Ends with 'tune: M measured, S skipped, F failed, B noisy (N problems in this shard)'.";

struct tune_flags {
    const char *problems, *corpus, *shard, *db, *weights, *remeasure_before;
    int64_t sample, seed, threads, max_mflop, corpus_max_mflop, perturb, noise_guard_pct,
        drift_guard_pct;
    bool list, network_channels;
};

static bool parse_shard(const char *text, int *index, int *count) {
    char *end = NULL;
    const long i = strtol(text, &end, 10);
    if (end == text || *end != '/')
        return false;
    const char *rest = end + 1;
    const long n = strtol(rest, &end, 10);
    if (end == rest || *end != '\0' || n < 1 || n > 1000000 || i < 0 || i >= n)
        return false;
    *index = (int)i, *count = (int)n;
    return true;
}

static int validate(const struct tune_flags *f, bool threads_given, struct tune_options *o) {
    if (!f->problems && !f->corpus && f->sample == 0) {
        fprintf(stderr, "convsel tune: give --problems FILE, --corpus DIR or --sample N\n");
        return EXIT_USAGE;
    }
    if (f->sample < 0 || f->sample > 10000000) {
        fprintf(stderr, "convsel tune: --sample %lld: must be in 1..10000000\n",
                (long long)f->sample);
        return EXIT_USAGE;
    }
    if (f->max_mflop < 1 || f->corpus_max_mflop < 1) {
        fprintf(stderr, "convsel tune: --%s %lld: must be >= 1\n",
                f->max_mflop < 1 ? "max-mflop" : "corpus-max-mflop",
                (long long)(f->max_mflop < 1 ? f->max_mflop : f->corpus_max_mflop));
        return EXIT_USAGE;
    }
    if (f->perturb < 0 || f->perturb > 100 || (f->perturb && !f->corpus)) {
        fprintf(stderr, "convsel tune: --perturb %lld: must be in 0..100, with --corpus\n",
                (long long)f->perturb);
        return EXIT_USAGE;
    }
    o->shard_index = 0, o->shard_count = 1;
    if (f->shard && !parse_shard(f->shard, &o->shard_index, &o->shard_count)) {
        fprintf(stderr, "convsel tune: --shard %s: must be I/N with 0 <= I < N\n", f->shard);
        return EXIT_USAGE;
    }
    if (threads_given && !cli_threads_in_range("tune", "--threads", f->threads))
        return EXIT_USAGE;
    if (!cli_weights_mode("tune", f->weights, &o->weights_constant))
        return EXIT_USAGE;
    if (f->noise_guard_pct != 0 && (f->noise_guard_pct < 101 || f->noise_guard_pct > 10000)) {
        fprintf(stderr, "convsel tune: --noise-guard %lld: must be 0 (off) or in 101..10000\n",
                (long long)f->noise_guard_pct);
        return EXIT_USAGE;
    }
    if (f->drift_guard_pct < 0 || f->drift_guard_pct > 1000) {
        fprintf(stderr, "convsel tune: --drift-guard %lld: must be 0 (off) or in 1..1000\n",
                (long long)f->drift_guard_pct);
        return EXIT_USAGE;
    }
    if (f->remeasure_before) {
        char *end = NULL;
        const long long t = strcmp(f->remeasure_before, "now") == 0
                                ? (long long)time(NULL)
                                : strtoll(f->remeasure_before, &end, 10);
        if ((end && (end == f->remeasure_before || *end != '\0')) || t < 1 || t > 99999999999LL) {
            fprintf(stderr,
                    "convsel tune: --remeasure-before %s: must be 'now' or a time in Unix "
                    "seconds (1..99999999999)\n",
                    f->remeasure_before);
            return EXIT_USAGE;
        }
        o->remeasure_before = t;
    }
    o->threads = threads_given ? (int)f->threads : 0; /* 0: the handle's default */
    o->noise_guard_pct = (int)f->noise_guard_pct;
    o->drift_guard_pct = (int)f->drift_guard_pct;
    return EXIT_OK;
}

/* The whole list, every shard's (each shard draws the same sequence). */
static int load_problems(const struct tune_flags *f, struct problem_list *list) {
    char err[PROBLEM_LIST_ERROR_MAX];
    if (f->problems && !problem_list_read(f->problems, list, err, sizeof err)) {
        fprintf(stderr, "convsel tune: --problems %s\n", err);
        return EXIT_USAGE;
    }
    if (f->corpus) {
        struct problem_list corpus = {0};
        if (!problem_list_read(f->corpus, &corpus, err, sizeof err)) {
            fprintf(stderr, "convsel tune: --corpus %s\n", err);
            return EXIT_USAGE;
        }
        /* The layers first, then the perturbations: a perturbation that
         * equals another network's layer is then already measured, and
         * keeps that layer's origin. */
        const double cap = (double)f->corpus_max_mflop * 1e6;
        for (int i = 0; i < corpus.n; i++)
            if (problem_flops(&corpus.rows[i].p) <= cap && !problem_list_add(list, &corpus.rows[i]))
                goto oom;
        struct rng r = rng_seed((uint64_t)f->seed);
        for (int k = 0; k < f->perturb; k++)
            for (int i = 0; i < corpus.n; i++) {
                struct problem_row row;
                if (sample_perturb(&r, &corpus.rows[i], (double)f->max_mflop * 1e6, &row,
                                   k * corpus.n + i) &&
                    !problem_list_add(list, &row))
                    goto oom;
            }
        problem_list_free(&corpus);
    }
    struct rng r = rng_seed((uint64_t)f->seed);
    for (int i = 0; i < (int)f->sample; i++) {
        struct problem_row row;
        sample_random(&r, (double)f->max_mflop * 1e6, f->network_channels, &row, i);
        if (!problem_list_add(list, &row))
            goto oom;
    }
    return EXIT_OK;
oom:
    fprintf(stderr, "convsel tune: out of memory for the problem list\n");
    return EXIT_FAILED;
}

struct progress {
    bool tty;
};

/* What the drift guard found, when it ran. */
static void print_scale(const struct tune_summary *s) {
    if (s->scale_ms <= 0)
        return;
    if (s->scale_recorded && s->scale_ref_ms > 0)
        printf("tune: drift guard: calibration %.3f ms, recorded as the database's for this "
               "machine (replacing %.3f ms of %lld, older than --remeasure-before)\n",
               s->scale_ms, s->scale_ref_ms, (long long)s->scale_ref_at);
    else if (s->scale_recorded)
        printf("tune: drift guard: calibration %.3f ms, recorded as the database's for this "
               "machine\n",
               s->scale_ms);
    else
        printf("tune: drift guard: calibration %.3f ms, %.2fx the database's %.3f ms of %lld\n",
               s->scale_ms, s->scale_ms / s->scale_ref_ms, s->scale_ref_ms,
               (long long)s->scale_ref_at);
}

/* One line per problem when piped; a self-overwriting line with ETA on a terminal. */
static void progress(void *ctx, const struct tune_event *e) {
    const struct progress *pr = ctx;
    if (e->row == NULL) {
        const struct tune_summary *s = e->summary;
        printf("tune: machine %s (%s journal)\n", s->machine, s->journal);
        print_scale(s);
        fflush(stdout);
        return;
    }
    const char *what = e->outcome == TUNE_FAILED ? "FAILED" : e->what;
    if (e->outcome == TUNE_FAILED)
        fprintf(stderr, "convsel tune: %s: %s\n", e->row->name, e->what);
    const double eta = e->done ? e->elapsed_s / e->done * (e->total - e->done) : 0;
    const int minutes = (int)(eta / 60);
    if (pr->tty)
        fprintf(stderr, "\r[%d/%d] %3d%%  ETA %3dm%02ds  %-12s %-40.40s", e->done, e->total,
                e->total ? 100 * e->done / e->total : 100, minutes, (int)(eta - 60 * minutes),
                e->row->name, what);
    else
        printf("tune: %d/%d %s: %s\n", e->done, e->total, e->row->name, what);
    fflush(stdout);
}

int cmd_tune(int argc, char **argv) {
    bool threads_given;
    struct tune_flags f = {.seed = 1,
                           .max_mflop = 2000,
                           .corpus_max_mflop = 50000,
                           .noise_guard_pct = 150,
                           .drift_guard_pct = 30,
                           .weights = "constant"};
    const struct cli_flag flags[] = {
        {NULL, "--problems", CLI_STRING, &f.problems, "FILE|DIR",
         "problem list (CSV of convsel bench; a directory: all its *.csv)"},
        {NULL, "--corpus", CLI_STRING, &f.corpus, "FILE|DIR",
         "real layers with network and family columns (data/networks)"},
        {NULL, "--perturb", CLI_INT, &f.perturb, "P",
         "perturbations of each corpus layer (default 0)"},
        {NULL, "--corpus-max-mflop", CLI_INT, &f.corpus_max_mflop, "M",
         "corpus layers above M MFLOP are left out (default 50000)"},
        {NULL, "--sample", CLI_INT, &f.sample, "N", "N random problems"},
        {NULL, "--seed", CLI_INT, &f.seed, "S", "seed of the sample and perturbations (default 1)"},
        {NULL, "--max-mflop", CLI_INT, &f.max_mflop, "M",
         "sampled and perturbed problems have at most M MFLOP (default 2000)"},
        {NULL, "--shard", CLI_STRING, &f.shard, "I/N", "take problems I, I+N, ... (default 0/1)"},
        {NULL, "--db", CLI_STRING, &f.db, "PATH", "database (default $CONVSEL_DB, see db --help)"},
        {NULL, "--threads", CLI_INT, &f.threads, "T", "threads (default: online CPUs)"},
        {NULL, "--noise-guard", CLI_INT, &f.noise_guard_pct, "P",
         "busy when the calibration takes > P% of its best (default 150; 0: off)"},
        {NULL, "--drift-guard", CLI_INT, &f.drift_guard_pct, "P",
         "refuse when the calibration is > P% off the database's (default 30; 0: off)"},
        {NULL, "--weights", CLI_STRING, &f.weights, "MODE",
         "constant (default: transformed once per problem) or per-call"},
        {NULL, "--network-channels", CLI_SWITCH, &f.network_channels, "",
         "sampled channel counts >= 16 rounded to multiples of 8, as networks use"},
        {NULL, "--remeasure-before", CLI_STRING, &f.remeasure_before, "T|now",
         "measure again the problems whose records are all older than T (Unix seconds)"},
        {NULL, "--list", CLI_SWITCH, &f.list, "", "print the problems (CSV) and measure nothing"},
    };
    enum { N_FLAGS = sizeof flags / sizeof flags[0] };
    bool given[N_FLAGS] = {false};
    int rc = cli_parse_given("tune", summary, argc, argv, flags, N_FLAGS, given);
    threads_given = false;
    for (int i = 0; i < N_FLAGS; i++)
        threads_given |= given[i] && flags[i].dst == &f.threads;
    if (rc != EXIT_OK)
        return rc < 0 ? EXIT_OK : rc;
    struct tune_options o = {.db_path = f.db};
    if ((rc = validate(&f, threads_given, &o)) != EXIT_OK)
        return rc;
    struct problem_list list = {0};
    if ((rc = load_problems(&f, &list)) != EXIT_OK) {
        problem_list_free(&list);
        return rc;
    }
    if (f.list) {
        struct problem_list shard = {0};
        for (int i = o.shard_index; i < list.n; i += o.shard_count)
            problem_list_add(&shard, &list.rows[i]);
        problem_list_write(stdout, &shard, f.corpus != NULL);
        problem_list_free(&shard);
        problem_list_free(&list);
        return EXIT_OK;
    }
    char path[4096], err[PERFDB_ERROR_MAX];
    if (f.db)
        snprintf(path, sizeof path, "%s", f.db);
    else if (!perfdb_default_path(path, sizeof path, err, sizeof err)) {
        fprintf(stderr, "convsel tune: %s\n", err);
        problem_list_free(&list);
        return EXIT_USAGE;
    }
    o.db_path = path;
    struct progress pr = {isatty(STDERR_FILENO) && isatty(STDOUT_FILENO)};
    struct tune_summary s;
    printf("tune: database %s\n", path);
    if (o.remeasure_before)
        printf("tune: measuring again the problems whose records are all older than %lld "
               "(to resume, give --remeasure-before %lld again)\n",
               (long long)o.remeasure_before, (long long)o.remeasure_before);
    fflush(stdout);
    const enum tune_result result = tune_run(&o, &list, progress, &pr, &s, err, sizeof err);
    problem_list_free(&list);
    if (pr.tty)
        fputc('\n', stderr);
    if (result == TUNE_RUN_SETUP_FAILED) {
        fprintf(stderr, "convsel tune: %s\n", err);
        return EXIT_FAILED;
    }
    if (o.noise_guard_pct > 0)
        printf("tune: noise guard: best calibration %.3f ms, %ld calibrations, %ld busy, "
               "%ld s waited\n",
               s.best_calibration_ms, s.calibrations, s.busy, s.waited_s);
    printf("tune: %d measured, %d skipped, %d failed, %d noisy (%d problems in this shard) in "
           "%.1f s\n",
           s.measured, s.skipped, s.failed, s.noisy, s.total, s.seconds);
    if (s.scale_refined_ms > 0)
        printf("tune: drift guard: the database's reference is now %.3f ms, this run's fastest "
               "calibration (its start read %.3f ms)\n",
               s.scale_refined_ms, s.scale_ms);
    if (s.limits_remeasured)
        printf("tune: the machine's peak and bandwidth were measured again (the stored ones came "
               "from an older peak loop)\n");
    if (s.weights_remeasured)
        printf("tune: what per-call weights cost each solver was measured again (the stored "
               "costs were older than --remeasure-before)\n");
    if (o.remeasure_before)
        printf("tune: %d of them measured again (their older records replaced)\n", s.remeasured);
    return result == TUNE_RUN_OK ? EXIT_OK : EXIT_FAILED;
}
