/* cmd_tune.c -- `convsel tune`: exhaustive find (convsel_find_forward)
 * over a problem list or a seeded sample, every solver's median and
 * spread stored in the performance database.
 *
 * Resumable: a problem the database already holds for this machine
 * signature is skipped, so an interrupted run continues where it stopped.
 * Shards (--shard I/N) take every N-th problem of the same list, so N
 * processes or machines split one list without talking to each other;
 * `convsel db merge` gathers their files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "core/problem.h"
#include "db/perfdb.h"
#include "problem_csv.h"
#include "problem_sample.h"
#include "util/clock.h"
#include "util/noise_guard.h"

#define MAX_RESULTS 32
#define MAX_ATTEMPTS 3      /* measurements of one problem before calling it noisy */
#define CALIBRATION_RUNS 10 /* per calibration solver: ~20 ms, several time slices */

static const char summary[] =
    "Times every applicable solver on each problem (convsel's exhaustive find: interleaved\n"
    "rounds, medians, spread) and stores the results in the performance database.\n"
    "Problems come from --problems FILE (the CSV of convsel bench) or --sample N --seed S\n"
    "(realistic problems drawn from a seed; --list prints them without measuring).\n"
    "Problems already in the database for this machine signature are skipped, so a run\n"
    "can be interrupted and resumed. --shard I/N takes problems I, I+N, I+2N, ...\n"
    "Noise guard: a fixed calibration (1x32x56x56, 32 3x3 filters, on im2col_gemm and\n"
    "onednn_direct) is timed before and after every problem; when it is slower than\n"
    "--noise-guard P percent of the fastest calibration seen, another process is competing for\n"
    "the cores (a slow calibration is confirmed by a second one first): tune waits for\n"
    "quiet (up to 60 s) and measures again (up to 3 times). A\n"
    "problem still measured on a busy machine is not stored (a later run retries it).\n"
    "Weights are declared constant (convsel_set_weights_constant), as in inference and in\n"
    "convsel bench: solvers that transform them do so once; --weights per-call measures\n"
    "every call transforming them.\n"
    "Ends with 'tune: M measured, S skipped, F failed, B noisy (N problems in this shard)'.";

struct tune_options {
    const char *problems, *shard, *db, *weights;
    bool weights_constant; /* from weights, by validate */
    int64_t sample, seed, threads, max_mflop;
    int64_t noise_guard_pct;
    bool list, network_channels;
};

static float *random_buffer(size_t count, struct rng *r) {
    float *v = malloc((count ? count : 1) * sizeof *v);
    if (v)
        rng_fill(r, v, count);
    return v;
}

/* The calibration workload: two solvers with different threading (convsel's
 * pool and oneDNN's OpenMP), so that contention shows in either. */
struct calibration {
    convsel_handle_t h;
    struct problem_descs d;
    convsel_solver_id_t solvers[2];
    float *x, *w, *y;
    void *workspace;
    size_t workspace_bytes;
};

/* Runs both calibration solvers `rounds` times, alternating. */
static void run_calibration(const struct calibration *c, int rounds) {
    for (int i = 0; i < rounds; i++)
        for (int s = 0; s < 2; s++)
            convsel_convolution_forward(c->h, c->solvers[s], c->d.x, c->x, c->d.w, c->w, c->d.conv,
                                        c->d.y, c->y, c->workspace, c->workspace_bytes);
}

static double calibrate(void *ctx) {
    const struct calibration *c = ctx;
    /* One untimed round first: the measurement just before may have evicted
     * the calibration's plan or let OpenMP's workers fall asleep, which is
     * not contention. */
    run_calibration(c, 1);
    /* The total, not a median: a competing process takes whole time slices
     * (milliseconds), which single sub-millisecond runs can slip between. */
    const int64_t t0 = clock_now_ns();
    run_calibration(c, CALIBRATION_RUNS);
    return (double)(clock_now_ns() - t0) * 1e-9;
}

static void calibration_destroy(struct calibration *c) {
    free(c->x);
    free(c->w);
    free(c->y);
    free(c->workspace);
    problem_descs_destroy(&c->d);
}

static bool calibration_create(convsel_handle_t h, struct calibration *c) {
    *c = (struct calibration){.h = h};
    struct problem_flags pf;
    problem_flags_defaults(&pf);
    pf.c = pf.k = 32;
    if (problem_descs_create("tune", h, &pf, &c->d) != EXIT_OK ||
        convsel_solver_find(h, "im2col_gemm", &c->solvers[0]) ||
        convsel_solver_find(h, "onednn_direct", &c->solvers[1])) {
        fprintf(stderr, "convsel tune: no calibration workload: %s\n",
                convsel_get_error_message(h));
        return false;
    }
    for (int s = 0; s < 2; s++) {
        size_t ws = 0;
        if (convsel_get_forward_workspace_size(h, c->solvers[s], c->d.x, c->d.w, c->d.conv, c->d.y,
                                               &ws) == CONVSEL_STATUS_SUCCESS &&
            ws > c->workspace_bytes)
            c->workspace_bytes = ws;
    }
    const size_t elems = (size_t)(pf.n * pf.c * pf.h * pf.w);
    struct rng r = rng_seed(2);
    c->x = random_buffer(elems, &r);
    c->w = random_buffer((size_t)(pf.k * pf.c * pf.y * pf.x), &r);
    c->y = malloc(elems * sizeof *c->y);
    c->workspace = malloc(c->workspace_bytes ? c->workspace_bytes : 1);
    if (!c->x || !c->w || !c->y || !c->workspace) {
        fprintf(stderr, "convsel tune: out of memory for the calibration\n");
        return false;
    }
    return true;
}

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

/* The problems of the whole list (every shard draws the same sequence). */
static int load_problems(const struct tune_options *o, struct problem_row **rows, int *n) {
    if (o->problems)
        return problem_csv_read("tune", o->problems, rows, n);
    *rows = calloc((size_t)o->sample, sizeof **rows);
    if (*rows == NULL) {
        fprintf(stderr, "convsel tune: out of memory for %lld problems\n", (long long)o->sample);
        return EXIT_FAILED;
    }
    struct rng r = rng_seed((uint64_t)o->seed);
    for (int i = 0; i < (int)o->sample; i++)
        problem_sample(&r, (double)o->max_mflop * 1e6, o->network_channels, &(*rows)[i], i);
    *n = (int)o->sample;
    return EXIT_OK;
}

enum tune_outcome { TUNE_FAILED = -1, TUNE_SKIPPED, TUNE_STORED, TUNE_NOISY };

/* Runs find until the machine was quiet before and after it. */
static bool find_quietly(convsel_handle_t h, struct noise_guard *guard,
                         const struct problem_descs *d, const float *x, const float *w, float *y,
                         convsel_perf_result_t *found, int *count, bool *failed) {
    for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const bool quiet_before = noise_guard_wait_quiet(guard);
        if (convsel_find_forward(h, d->x, x, d->w, w, d->conv, d->y, y, found, MAX_RESULTS,
                                 count)) {
            *failed = true;
            return false;
        }
        if (noise_guard_check(guard) && quiet_before)
            return true;
    }
    return false;
}

/* Measures one problem and stores every solver's result. */
static enum tune_outcome tune_one(convsel_handle_t h, struct noise_guard *guard, struct perfdb *db,
                                  const char *machine, const struct problem_row *row, char *best,
                                  size_t best_cap) {
    struct problem_descs d;
    if (problem_descs_create("tune", h, &row->pf, &d) != EXIT_OK) {
        fprintf(stderr, "  (problem %s)\n", row->name);
        return -1;
    }
    char key[256], err[PERFDB_ERROR_MAX];
    struct perfdb_record rec = {0};
    enum tune_outcome result = TUNE_FAILED;
    float *x = NULL, *w = NULL, *y = NULL;
    if (convsel_get_problem_key(h, d.x, d.w, d.conv, d.y, key, sizeof key, NULL) ||
        problem_key_parse(key, &rec.problem, err, sizeof err) != CONVSEL_STATUS_SUCCESS) {
        fprintf(stderr, "convsel tune: %s: no problem key\n", row->name);
        goto done;
    }
    const int held = perfdb_has_problem(db, machine, key, err, sizeof err);
    if (held != 0) {
        if (held < 0)
            fprintf(stderr, "convsel tune: %s\n", err);
        result = held > 0 ? TUNE_SKIPPED : TUNE_FAILED;
        goto done;
    }
    const struct conv_problem *p = &rec.problem;
    struct rng r = rng_seed(1);
    x = random_buffer((size_t)(p->n * p->c * p->h * p->w), &r);
    w = random_buffer(p->w_elems, &r);
    y = malloc((size_t)(p->n * p->k * p->oh * p->ow) * sizeof *y);
    convsel_perf_result_t found[MAX_RESULTS];
    int count = 0;
    if (!x || !w || !y) {
        fprintf(stderr, "convsel tune: %s: out of memory for the tensors\n", row->name);
        goto done;
    }
    /* Setting the mode again forgets the last problem's transformed weights:
     * w is a new buffer, perhaps at the last one's address. */
    int constant = 0;
    convsel_get_weights_constant(h, &constant);
    convsel_set_weights_constant(h, constant);
    bool failed = false;
    if (!find_quietly(h, guard, &d, x, w, y, found, &count, &failed)) {
        if (failed)
            fprintf(stderr, "convsel tune: %s: find: %s\n", row->name,
                    convsel_get_error_message(h));
        else {
            snprintf(best, best_cap, "noisy (load %.2f), not stored", noise_guard_load(guard));
            result = TUNE_NOISY;
        }
        goto done;
    }
    struct perfdb_record recs[MAX_RESULTS];
    for (int i = 0; i < count; i++) {
        recs[i] = rec;
        snprintf(recs[i].machine, sizeof recs[i].machine, "%s", machine);
        snprintf(recs[i].solver, sizeof recs[i].solver, "%s", found[i].name);
        recs[i].median_ms = found[i].time_ms;
        recs[i].min_ms = found[i].time_min_ms;
        recs[i].max_ms = found[i].time_max_ms;
        recs[i].runs = found[i].runs;
        recs[i].workspace_bytes = found[i].workspace_bytes;
    }
    if (!perfdb_put(db, recs, count, err, sizeof err)) {
        fprintf(stderr, "convsel tune: %s\n", err);
        goto done;
    }
    snprintf(best, best_cap, "%s %.4f ms, %d solvers", count ? found[0].name : "-",
             count ? found[0].time_ms : 0.0, count);
    result = TUNE_STORED;
done:
    free(x);
    free(w);
    free(y);
    problem_descs_destroy(&d);
    return result;
}

/* One line per problem when piped; a self-overwriting line with ETA on a terminal. */
static void progress(bool tty, int done, int total, double elapsed_s, const char *name,
                     const char *what) {
    const double eta = done ? elapsed_s / done * (total - done) : 0;
    const int minutes = (int)(eta / 60);
    if (tty)
        fprintf(stderr, "\r[%d/%d] %3d%%  ETA %3dm%02ds  %-12s %-40.40s", done, total,
                total ? 100 * done / total : 100, minutes, (int)(eta - 60 * minutes), name, what);
    else
        printf("tune: %d/%d %s: %s\n", done, total, name, what);
}

static int validate(struct tune_options *o, int *shard_i, int *shard_n) {
    if (!!o->problems == (o->sample > 0)) {
        fprintf(stderr, "convsel tune: give either --problems FILE or --sample N\n");
        return EXIT_USAGE;
    }
    if (o->sample < 0 || o->sample > 10000000) {
        fprintf(stderr, "convsel tune: --sample %lld: must be in 1..10000000\n",
                (long long)o->sample);
        return EXIT_USAGE;
    }
    if (o->max_mflop < 1) {
        fprintf(stderr, "convsel tune: --max-mflop %lld: must be >= 1\n", (long long)o->max_mflop);
        return EXIT_USAGE;
    }
    if (o->shard && !parse_shard(o->shard, shard_i, shard_n)) {
        fprintf(stderr, "convsel tune: --shard %s: must be I/N with 0 <= I < N\n", o->shard);
        return EXIT_USAGE;
    }
    if (o->threads == 0 || o->threads < -1 || o->threads > 1024) {
        fprintf(stderr, "convsel tune: --threads %lld: must be in 1..1024\n",
                (long long)o->threads);
        return EXIT_USAGE;
    }
    if (!cli_weights_mode("tune", o->weights, &o->weights_constant))
        return EXIT_USAGE;
    if (o->noise_guard_pct != 0 && (o->noise_guard_pct < 101 || o->noise_guard_pct > 10000)) {
        fprintf(stderr, "convsel tune: --noise-guard %lld: must be 0 (off) or in 101..10000\n",
                (long long)o->noise_guard_pct);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

int cmd_tune(int argc, char **argv) {
    struct tune_options o = {
        .seed = 1, .threads = -1, .max_mflop = 2000, .noise_guard_pct = 150, .weights = "constant"};
    const struct cli_flag flags[] = {
        {NULL, "--problems", CLI_STRING, &o.problems, "FILE",
         "problem list (CSV of convsel bench)"},
        {NULL, "--sample", CLI_INT, &o.sample, "N", "tune N sampled problems instead"},
        {NULL, "--seed", CLI_INT, &o.seed, "S", "seed of the sample (default 1)"},
        {NULL, "--max-mflop", CLI_INT, &o.max_mflop, "M",
         "sampled problems have at most M MFLOP (default 2000)"},
        {NULL, "--shard", CLI_STRING, &o.shard, "I/N", "take problems I, I+N, ... (default 0/1)"},
        {NULL, "--db", CLI_STRING, &o.db, "PATH", "database (default $CONVSEL_DB, see db --help)"},
        {NULL, "--threads", CLI_INT, &o.threads, "T", "threads (default: online CPUs)"},
        {NULL, "--noise-guard", CLI_INT, &o.noise_guard_pct, "P",
         "busy when the calibration takes > P% of its best (default 150; 0: off)"},
        {NULL, "--weights", CLI_STRING, &o.weights, "MODE",
         "constant (default: transformed once per problem) or per-call"},
        {NULL, "--network-channels", CLI_SWITCH, &o.network_channels, "",
         "sampled channel counts >= 16 rounded to multiples of 8, as networks use"},
        {NULL, "--list", CLI_SWITCH, &o.list, "", "print the problems (CSV) and measure nothing"},
    };
    int rc = cli_parse("tune", summary, argc, argv, flags, sizeof flags / sizeof flags[0]);
    if (rc != EXIT_OK)
        return rc < 0 ? EXIT_OK : rc;
    int shard_i = 0, shard_n = 1;
    if ((rc = validate(&o, &shard_i, &shard_n)) != EXIT_OK)
        return rc;
    struct problem_row *rows = NULL;
    int n_rows = 0;
    if ((rc = load_problems(&o, &rows, &n_rows)) != EXIT_OK)
        return rc;
    if (o.list) {
        printf("%s\n", PROBLEM_CSV_HEADER);
        for (int i = shard_i; i < n_rows; i += shard_n) {
            const struct problem_flags *p = &rows[i].pf;
            printf("%s,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld\n",
                   rows[i].name, (long long)p->n, (long long)p->c, (long long)p->h, (long long)p->w,
                   (long long)p->k, (long long)p->y, (long long)p->x, (long long)p->pad_h,
                   (long long)p->pad_w, (long long)p->stride_h, (long long)p->stride_w,
                   (long long)p->dil_h, (long long)p->dil_w, (long long)p->groups);
        }
        free(rows);
        return EXIT_OK;
    }

    char path[4096], err[PERFDB_ERROR_MAX], machine[PERFDB_MACHINE_MAX];
    if (o.db)
        snprintf(path, sizeof path, "%s", o.db);
    else if (!perfdb_default_path(path, sizeof path, err, sizeof err)) {
        fprintf(stderr, "convsel tune: %s\n", err);
        free(rows);
        return EXIT_USAGE;
    }
    struct perfdb *db = perfdb_open(path, false, 0, err, sizeof err);
    convsel_handle_t h = NULL;
    if (!db || convsel_handle_create(&h) != CONVSEL_STATUS_SUCCESS ||
        (o.threads > 0 && convsel_set_num_threads(h, (int)o.threads) != CONVSEL_STATUS_SUCCESS) ||
        convsel_set_weights_constant(h, o.weights_constant) != CONVSEL_STATUS_SUCCESS) {
        fprintf(stderr, "convsel tune: %s\n", db ? "cannot create a handle" : err);
        perfdb_close(db);
        convsel_handle_destroy(h);
        free(rows);
        return EXIT_FAILED;
    }
    int threads = 1;
    convsel_get_num_threads(h, &threads);
    perfdb_machine_signature(threads, machine, sizeof machine);
    printf("tune: database %s (%s journal), machine %s\n", path, perfdb_journal_mode(db), machine);

    struct calibration cal;
    struct noise_guard guard = {.threshold = (double)o.noise_guard_pct / 100.0,
                                .max_waits = 60,
                                .wait_ms = 1000,
                                .calibrate = calibrate,
                                .ctx = &cal};
    if (!calibration_create(h, &cal))
        guard.threshold = 0, rc = EXIT_FAILED;

    const int total = n_rows <= shard_i ? 0 : (n_rows - shard_i + shard_n - 1) / shard_n;
    const bool tty = isatty(STDERR_FILENO) && isatty(STDOUT_FILENO);
    int count[4] = {0}, done = 0;
    const int64_t t0 = clock_now_ns();
    for (int i = shard_i; i < n_rows && rc == EXIT_OK; i += shard_n) {
        char best[128] = "already in the database";
        const enum tune_outcome r = tune_one(h, &guard, db, machine, &rows[i], best, sizeof best);
        count[r + 1]++;
        done++;
        progress(tty, done, total, (double)(clock_now_ns() - t0) * 1e-9, rows[i].name,
                 r == TUNE_FAILED ? "FAILED" : best);
    }
    if (tty)
        fputc('\n', stderr);
    if (guard.threshold > 0)
        printf("tune: noise guard: best calibration %.3f ms, %ld calibrations, %ld busy, "
               "%ld s waited\n",
               guard.best * 1e3, guard.calibrations, guard.busy,
               guard.waits * (long)guard.wait_ms / 1000);
    printf("tune: %d measured, %d skipped, %d failed, %d noisy (%d problems in this shard) in "
           "%.1f s\n",
           count[TUNE_STORED + 1], count[TUNE_SKIPPED + 1], count[TUNE_FAILED + 1],
           count[TUNE_NOISY + 1], total, (double)(clock_now_ns() - t0) * 1e-9);
    calibration_destroy(&cal);
    convsel_handle_destroy(h);
    perfdb_close(db);
    free(rows);
    return rc != EXIT_OK || count[TUNE_FAILED + 1] ? EXIT_FAILED : EXIT_OK;
}
