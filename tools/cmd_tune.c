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

#define MAX_RESULTS 32

static const char summary[] =
    "Times every applicable solver on each problem (convsel's exhaustive find: interleaved\n"
    "rounds, medians, spread) and stores the results in the performance database.\n"
    "Problems come from --problems FILE (the CSV of convsel bench) or --sample N --seed S\n"
    "(realistic problems drawn from a seed; --list prints them without measuring).\n"
    "Problems already in the database for this machine signature are skipped, so a run\n"
    "can be interrupted and resumed. --shard I/N takes problems I, I+N, I+2N, ...\n"
    "Ends with 'tune: M measured, S skipped, F failed (N problems in this shard)'.";

struct tune_options {
    const char *problems, *shard, *db;
    int64_t sample, seed, threads, max_mflop;
    bool list;
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
        problem_sample(&r, (double)o->max_mflop * 1e6, &(*rows)[i], i);
    *n = (int)o->sample;
    return EXIT_OK;
}

static float *random_buffer(size_t count, struct rng *r) {
    float *v = malloc((count ? count : 1) * sizeof *v);
    if (v)
        rng_fill(r, v, count);
    return v;
}

/* Measures one problem and stores every solver's result. Returns 1 stored,
 * 0 skipped (already in the database), -1 failed (message printed). */
static int tune_one(convsel_handle_t h, struct perfdb *db, const char *machine,
                    const struct problem_row *row, char *best, size_t best_cap) {
    struct problem_descs d;
    if (problem_descs_create("tune", h, &row->pf, &d) != EXIT_OK) {
        fprintf(stderr, "  (problem %s)\n", row->name);
        return -1;
    }
    char key[256], err[PERFDB_ERROR_MAX];
    struct perfdb_record rec = {0};
    int result = -1;
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
        result = held > 0 ? 0 : -1;
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
    if (convsel_find_forward(h, d.x, x, d.w, w, d.conv, d.y, y, found, MAX_RESULTS, &count)) {
        fprintf(stderr, "convsel tune: %s: find: %s\n", row->name, convsel_get_error_message(h));
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
    result = 1;
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

static int validate(const struct tune_options *o, int *shard_i, int *shard_n) {
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
    return EXIT_OK;
}

int cmd_tune(int argc, char **argv) {
    struct tune_options o = {.seed = 1, .threads = -1, .max_mflop = 2000};
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
        (o.threads > 0 && convsel_set_num_threads(h, (int)o.threads) != CONVSEL_STATUS_SUCCESS)) {
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

    const int total = n_rows <= shard_i ? 0 : (n_rows - shard_i + shard_n - 1) / shard_n;
    const bool tty = isatty(STDERR_FILENO) && isatty(STDOUT_FILENO);
    int measured = 0, skipped = 0, failed = 0, done = 0;
    const int64_t t0 = clock_now_ns();
    for (int i = shard_i; i < n_rows; i += shard_n) {
        char best[128] = "already in the database";
        const int r = tune_one(h, db, machine, &rows[i], best, sizeof best);
        measured += r > 0, skipped += r == 0, failed += r < 0;
        done++;
        progress(tty, done, total, (double)(clock_now_ns() - t0) * 1e-9, rows[i].name,
                 r < 0 ? "FAILED" : best);
    }
    if (tty)
        fputc('\n', stderr);
    printf("tune: %d measured, %d skipped, %d failed (%d problems in this shard) in %.1f s\n",
           measured, skipped, failed, total, (double)(clock_now_ns() - t0) * 1e-9);
    convsel_handle_destroy(h);
    perfdb_close(db);
    free(rows);
    return failed ? EXIT_FAILED : EXIT_OK;
}
