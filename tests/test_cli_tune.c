/* test_cli_tune.c -- `convsel tune` end to end: a sampled run stores every
 * solver's time, a second run resumes (measures nothing), two shards
 * together hold what one run holds, the sample is a function of the seed,
 * the noise guard calibrates before and after every problem, --corpus
 * tunes real layers and their perturbations with their origins,
 * --remeasure-before measures old problems again and resumes, the drift
 * guard refuses a machine far off the database's calibration, and bad
 * flags and files are clear errors. (The guard's decisions are test_noise_guard's;
 * here it is off, because ctest runs tests side by side.) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "db/perfdb.h"
#include "testutil.h"

static char out[1 << 16];

/* tune with one thread and, unless args set them, the noise and drift
 * guards off (ctest runs tests side by side): a flag given twice is an
 * error. */
static int tune(const char *args) {
    char line[2048];
    snprintf(line, sizeof line, "tune --threads 1 %s %s %s",
             strstr(args, "--noise-guard") ? "" : "--noise-guard 0",
             strstr(args, "--drift-guard") ? "" : "--drift-guard 0", args);
    return test_convsel(NULL, line, out, sizeof out);
}

static int64_t rows_in(const char *path) {
    char err[PERFDB_ERROR_MAX];
    struct perfdb *db = perfdb_open(path, true, 0, err, sizeof err);
    const int64_t n = db ? perfdb_count(db, err, sizeof err) : -1;
    perfdb_close(db);
    return n;
}

/* The database's calibration row, set by hand to an SQL value (NULL: read it). */
static double calibration_row(const char *db_path, const char *value) {
    sqlite3 *sql = NULL;
    double ms = -1;
    CHECK(sqlite3_open(db_path, &sql) == SQLITE_OK);
    sqlite3_stmt *st = NULL;
    if (value) {
        char q[256];
        snprintf(q, sizeof q, "UPDATE meta SET value = %s WHERE key LIKE 'calibration/%%'", value);
        CHECK(sqlite3_exec(sql, q, NULL, NULL, NULL) == SQLITE_OK && sqlite3_changes(sql) == 1);
    } else if (sqlite3_prepare_v2(sql, "SELECT value FROM meta WHERE key LIKE 'calibration/%'", -1,
                                  &st, NULL) == SQLITE_OK &&
               sqlite3_step(st) == SQLITE_ROW) {
        long long at = 0;
        CHECK(sscanf((const char *)sqlite3_column_text(st, 0), "%lf %lld", &ms, &at) == 2 &&
              at >= 1600000000);
    }
    sqlite3_finalize(st);
    sqlite3_close(sql);
    return ms;
}

/* Waits for the clock's next second: records are stamped in whole
 * seconds, and --remeasure-before now re-times only those older than it
 * (the run before may have ended within the second it started in). */
static void next_second(void) {
    const time_t t0 = time(NULL);
    const struct timespec step = {0, 20 * 1000 * 1000};
    while (time(NULL) == t0)
        nanosleep(&step, NULL);
}

/* The drift guard: the first run records its calibration as the
 * database's; a later one that reads far off it (here: a reference set by
 * hand to 4x or 1/4 of the machine's) is refused and stores nothing,
 * unless the guard is off or the run re-times the older records; a
 * malformed row is named. */
static void drift(const char *csv, const char *db_path) {
    char args[2048];
    /* the noise guard on, so that the run's calibrations are timed; at
     * 1000 % it never waits, as tests run side by side */
    snprintf(args, sizeof args, "--problems %s --db %s --drift-guard 15 --noise-guard 1000", csv,
             db_path);
    CHECK(tune(args) == 0 && test_contains(out, "tune: 2 measured") &&
          test_contains(out, "recorded as the database's for this machine"));
    const double ms = calibration_row(db_path, NULL);
    CHECK(ms > 0);
    /* recorded: the fastest of the run's calibrations (the noise guard's
     * and the start's), not the start's alone, which a busy moment slows */
    {
        const char *start = strstr(out, "drift guard: calibration "),
                   *run = strstr(out, "noise guard: best calibration ");
        double start_ms = 0, run_ms = 0;
        CHECK(start && sscanf(start, "drift guard: calibration %lf", &start_ms) == 1 && run &&
              sscanf(run, "noise guard: best calibration %lf", &run_ms) == 1);
        const double fastest = run_ms < start_ms ? run_ms : start_ms;
        CHECK(fabs(ms - fastest) < 0.0006);
        if (run_ms < start_ms - 0.002)
            CHECK(test_contains(out, "reference is now"));
        if (run_ms > start_ms + 0.002)
            CHECK(!test_contains(out, "reference is now"));
        if (run_ms >= start_ms)
            printf("drift: the run's start held its fastest calibration (%.3f ms): the "
                   "refinement went unexercised this time\n",
                   start_ms);
    }
    const int64_t rows = rows_in(db_path);
    char value[64];
    /* reads ~1/4 of the reference (less when the first run was slowed by
     * tests beside it): faster, refused at once */
    snprintf(value, sizeof value, "'%.6f 1700000000'", ms * 4);
    calibration_row(db_path, value);
    /* --remeasure-before before the reference is not a re-time of its records */
    snprintf(args, sizeof args,
             "--problems %s --db %s --drift-guard 15 --remeasure-before 1699999999", csv, db_path);
    CHECK(tune(args) == 1 && test_contains(out, "the calibration reads 0.") &&
          test_contains(out, "outside the drift guard's 15 %") &&
          test_contains(out, "--drift-guard 0") && !test_contains(out, "tune: 1/2"));
    CHECK(rows_in(db_path) == rows);
    /* reads 4x the reference: slower, retried for seconds, then refused */
    snprintf(value, sizeof value, "'%.6f 1700000000'", ms / 4);
    calibration_row(db_path, value);
    snprintf(args, sizeof args, "--problems %s --db %s --drift-guard 15", csv, db_path);
    CHECK(tune(args) == 1 && test_contains(out, "the calibration reads ") &&
          test_contains(out, "busy for 10 s"));
    /* a generous guard passes, and says where the machine stands */
    snprintf(args, sizeof args, "--problems %s --db %s --drift-guard 1000", csv, db_path);
    CHECK(tune(args) == 0 && test_contains(out, "x the database's") &&
          test_contains(out, "tune: 0 measured, 2 skipped"));
    /* off: measures regardless (the reference stays) */
    snprintf(args, sizeof args, "--problems %s --db %s --drift-guard 0 --remeasure-before now", csv,
             db_path);
    CHECK(tune(args) == 0 && test_contains(out, "tune: 2 measured") &&
          !test_contains(out, "drift guard"));
    CHECK(fabs(calibration_row(db_path, NULL) - ms / 4) < 1e-5);
    /* re-timing every record older than the reference records a new one */
    snprintf(args, sizeof args, "--problems %s --db %s --drift-guard 15 --remeasure-before now",
             csv, db_path);
    CHECK(tune(args) == 0 && test_contains(out, "(replacing ")); /* (measured this second) */
    CHECK(fabs(calibration_row(db_path, NULL) - ms / 4) > 1e-5);
    /* a re-time on a machine that reads as the reference did keeps it: the
     * records it does not reach were timed at that scale */
    const double now_ref = calibration_row(db_path, NULL);
    next_second(); /* "now" after the last run's records, which it re-times */
    snprintf(args, sizeof args, "--problems %s --db %s --drift-guard 1000 --remeasure-before now",
             csv, db_path);
    CHECK(tune(args) == 0 && test_contains(out, "tune: 2 measured") &&
          test_contains(out, "x the database's") && !test_contains(out, "(replacing "));
    CHECK(fabs(calibration_row(db_path, NULL) - now_ref) < 1e-9);
    /* hand-edited rows are named, not guessed at */
    calibration_row(db_path, "'fast'");
    snprintf(args, sizeof args, "--problems %s --db %s --drift-guard 15", csv, db_path);
    CHECK(tune(args) == 1 && test_contains(out, "meta row calibration/") &&
          test_contains(out, "= 'fast' is not '<ms> <unix seconds>'"));
    calibration_row(db_path, "'-3 1700000000'");
    CHECK(tune(args) == 1 && test_contains(out, "is not '<ms> <unix seconds>'"));
    calibration_row(db_path, "X'05'"); /* a blob, not TEXT: named, not read as absent */
    CHECK(tune(args) == 1 && test_contains(out, "meta row calibration/") &&
          test_contains(out, "is not '<ms> <unix seconds>'") &&
          !test_contains(out, "recorded as the database's"));
    snprintf(args, sizeof args, "--problems %s --db %s --drift-guard 0", csv, db_path);
    CHECK(tune(args) == 0); /* off: the row is not read */
    CHECK(tune("--sample 2 --drift-guard 1001 --list") == 2 &&
          test_contains(out, "--drift-guard 1001: must be 0 (off) or in 1..1000"));
    CHECK(tune("--sample 2 --drift-guard -1 --list") == 2);
}

static int origin_counts[2];
static bool count_origin(void *ctx, const char *key, const char *network, const char *family,
                         const char *kind) {
    int *c = ctx;
    (void)key;
    CHECK(strcmp(network, "net") == 0 && strcmp(family, "fam") == 0);
    c[0] += strcmp(kind, "layer") == 0;
    c[1] += strcmp(kind, "perturbed") == 0;
    return true;
}

/* --remeasure-before: problems whose records are all older than T are
 * measured again and their records replaced (a record of a solver that no
 * longer runs goes); a run resumed with the same T skips them. The
 * records are aged by hand, as a database from an earlier day holds them. */
static void remeasure(const char *csv, const char *db_path) {
    char args[2048];
    const int64_t before = rows_in(db_path);
    sqlite3 *sql = NULL;
    CHECK(sqlite3_open(db_path, &sql) == SQLITE_OK);
    CHECK(sqlite3_exec(sql,
                       "UPDATE perf SET timestamp = 1000;"
                       "INSERT INTO perf SELECT machine, problem, 'gone', n, c, h, w, k, r, s, "
                       "pad_h, pad_w, stride_h, stride_w, dil_h, dil_w, groups, layout, "
                       "filter_layout, median_ms, min_ms, max_ms, runs, workspace, version, "
                       "timestamp, direction, dtype FROM perf LIMIT 1",
                       NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(sql);
    CHECK(rows_in(db_path) == before + 1);
    snprintf(args, sizeof args, "--problems %s --db %s --remeasure-before 999", csv, db_path);
    CHECK(tune(args) == 0 && test_contains(out, "tune: 0 measured, 2 skipped")); /* 1000 > 999 */
    snprintf(args, sizeof args, "--problems %s --db %s --remeasure-before now", csv, db_path);
    CHECK(tune(args) == 0 && test_contains(out, "tune: 2 measured, 0 skipped") &&
          test_contains(out, "tune: 2 of them measured again") &&
          test_contains(out, "solvers (measured again)"));
    CHECK(rows_in(db_path) == before); /* 'gone' went with the rest of the old records */
    const char *at = strstr(out, "older than ");
    long long t = 0;
    CHECK(at && sscanf(at, "older than %lld", &t) == 1 && t > 1000);
    snprintf(args, sizeof args, "--problems %s --db %s --remeasure-before %lld", csv, db_path, t);
    CHECK(tune(args) == 0 && test_contains(out, "tune: 0 measured, 2 skipped") &&
          test_contains(out, "tune: 0 of them measured again"));
    CHECK(tune("--sample 2 --remeasure-before 12x --list") == 2 &&
          test_contains(out, "--remeasure-before 12x: must be 'now' or a time in Unix seconds"));
}

int main(void) {
    test_tmpdir("tune");
    char args[2048];
    const char *sample = "--sample 8 --seed 5 --max-mflop 5";

    /* the sample depends on the seed only, and --list measures nothing */
    CHECK(tune("--sample 8 --seed 5 --max-mflop 5 --list") == 0);
    char first[sizeof out];
    memcpy(first, out, sizeof out);
    CHECK(tune("--sample 8 --seed 5 --max-mflop 5 --list") == 0 && strcmp(first, out) == 0);
    CHECK(tune("--sample 8 --seed 6 --max-mflop 5 --list") == 0 && strcmp(first, out) != 0);
    CHECK(strncmp(first, "name,n,c,h,w,k,r,s", 18) == 0 && strstr(first, "sample7,") != NULL);
    /* a larger sample extends a smaller one (a database tuned with --sample
     * 5000 is resumed, not re-measured, by --sample 10000) */
    CHECK(tune("--sample 12 --seed 5 --max-mflop 5 --list") == 0 &&
          strncmp(first, out, strlen(first)) == 0 && strlen(out) > strlen(first));

    /* --network-channels: the same draws, channel counts >= 16 on multiples of 8 */
    CHECK(tune("--sample 200 --seed 3 --network-channels --list") == 0);
    int rows = 0, rounded = 0, unrounded_default = 0;
    for (const char *line = strchr(out, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        long n, c, h, w, k, r, s, ph, pw, sh, sw, dh, dw, g;
        if (sscanf(line + 1, "%*[^,],%ld,%ld,%ld,%ld,%ld,%ld,%ld,%ld,%ld,%ld,%ld,%ld,%ld,%ld", &n,
                   &c, &h, &w, &k, &r, &s, &ph, &pw, &sh, &sw, &dh, &dw, &g) != 14)
            continue;
        rows++;
        if (g == 1 || g == c) /* dense and depthwise: whole counts */
            rounded += (c < 16 || c % 8 == 0) && (k < 16 || k % 8 == 0);
        else /* grouped: per-group counts */
            rounded += (c / g < 8 || (c / g) % 4 == 0) && (k / g < 8 || (k / g) % 4 == 0);
    }
    CHECK(rows == 200 && rounded == rows);
    CHECK(tune("--sample 200 --seed 3 --list") == 0);
    for (const char *line = strchr(out, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        long c, k, g;
        if (sscanf(line + 1, "%*[^,],%*d,%ld,%*d,%*d,%ld,%*d,%*d,%*d,%*d,%*d,%*d,%*d,%*d,%ld", &c,
                   &k, &g) == 3 &&
            g == 1)
            unrounded_default += (c >= 16 && c % 8 != 0) || (k >= 16 && k % 8 != 0);
    }
    CHECK(unrounded_default > 50); /* the default keeps log-uniform counts */

    /* depthwise layers: 3x3, 5x5, 7x7 (20 %), 9x9; never 1x1 */
    CHECK(tune("--sample 1000 --seed 3 --list") == 0);
    int depthwise = 0, dw_7x7 = 0, dw_1x1 = 0;
    for (const char *line = strchr(out, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        long c, r, s, g;
        if (sscanf(line + 1, "%*[^,],%*d,%ld,%*d,%*d,%*d,%ld,%ld,%*d,%*d,%*d,%*d,%*d,%*d,%ld", &c,
                   &r, &s, &g) == 4 &&
            g == c && g > 1) {
            depthwise++;
            dw_7x7 += r == 7 && s == 7;
            dw_1x1 += r == 1 && s == 1;
        }
    }
    CHECK(depthwise > 100 && dw_7x7 * 10 > depthwise && dw_1x1 == 0);

    snprintf(args, sizeof args, "%s --db %s", sample, test_tmp_path("all.db"));
    CHECK(tune(args) == 0 &&
          test_contains(out, "tune: 8 measured, 0 skipped, 0 failed, 0 noisy (8 problems"));
    const int64_t all = rows_in(test_tmp_path("all.db"));
    CHECK(all >= 8); /* at least one solver per problem */
    CHECK(tune(args) == 0 && test_contains(out, "tune: 0 measured, 8 skipped, 0 failed"));
    CHECK(rows_in(test_tmp_path("all.db")) == all);
    /* the machine's limits are stored with what per-call weights cost each
     * solver (tune/weights_probe.h): Winograd's transform is priced */
    {
        char e[PERFDB_ERROR_MAX], sig[PERFDB_MACHINE_MAX];
        struct machine_limits l;
        machine_signature(1, sig, sizeof sig); /* tune() runs --threads 1 */
        struct perfdb *db = perfdb_open(test_tmp_path("all.db"), true, 0, e, sizeof e);
        CHECK(db && perfdb_get_limits(db, sig, &l, e, sizeof e) == 1 && l.weights.count >= 3);
        CHECK(db && weights_cost_ms(&l.weights, "winograd_f4x3", false, 1e6) > 0 &&
              weights_cost_ms(&l.weights, "reference", false, 1e6) == 0);
        bool constant = false;
        CHECK(db && perfdb_get_weights_mode(db, sig, &constant, e, sizeof e) == 1 && constant);
        perfdb_close(db);
    }
    /* limits from an older peak loop (no method: 1) are measured again on
     * the next tune, and the weights costs kept: a database tuned before
     * the AVX2 loop stopped spilling held half this machine's peak */
    {
        char e[PERFDB_ERROR_MAX], sig[PERFDB_MACHINE_MAX];
        struct machine_limits l, again;
        machine_signature(1, sig, sizeof sig);
        struct perfdb *db = perfdb_open(test_tmp_path("all.db"), false, 0, e, sizeof e);
        const bool got = db && perfdb_get_limits(db, sig, &l, e, sizeof e) == 1;
        CHECK(got && l.method == PEAK_METHOD);
        const double winograd = weights_cost_ms(&l.weights, "winograd_f4x3", false, 1e6);
        l.method = 1, l.peak_gflops = 0.5;
        CHECK(got && perfdb_put_limits(db, sig, &l, e, sizeof e));
        perfdb_close(db);
        CHECK(tune(args) == 0 && test_contains(out, "peak and bandwidth were measured again") &&
              test_contains(out, "tune: 0 measured, 8 skipped, 0 failed"));
        db = perfdb_open(test_tmp_path("all.db"), true, 0, e, sizeof e);
        CHECK(db && perfdb_get_limits(db, sig, &again, e, sizeof e) == 1 &&
              again.method == PEAK_METHOD && again.peak_gflops > 0.5 &&
              weights_cost_ms(&again.weights, "winograd_f4x3", false, 1e6) == winograd);
        perfdb_close(db);
        /* and not on the tune after */
        CHECK(tune(args) == 0 && !test_contains(out, "measured again"));
    }
    /* the weights costs carry when they were measured; a re-time
     * (--remeasure-before T) measures them again when they are older than
     * T, as it does the problems' timings: a solver's faster packer made
     * the stored costs stale. T here is before every record, so no
     * problem is measured again, and a resumed run with the same T does
     * not measure the costs twice. */
    {
        char e[PERFDB_ERROR_MAX], sig[PERFDB_MACHINE_MAX], again_args[2200];
        struct machine_limits l, again;
        machine_signature(1, sig, sizeof sig);
        struct perfdb *db = perfdb_open(test_tmp_path("all.db"), false, 0, e, sizeof e);
        const bool got = db && perfdb_get_limits(db, sig, &l, e, sizeof e) == 1;
        const int64_t now = (int64_t)time(NULL);
        CHECK(got && l.weights.at > now - 3600 && l.weights.at <= now);
        l.weights.at = 1000;
        for (int i = 0; i < l.weights.count; i++)
            l.weights.ns[i][0] = l.weights.ns[i][1] = 123456; /* stale: replaced below */
        CHECK(got && perfdb_put_limits(db, sig, &l, e, sizeof e));
        perfdb_close(db);
        snprintf(again_args, sizeof again_args, "%s --remeasure-before 1500", args);
        CHECK(tune(again_args) == 0 &&
              test_contains(out, "per-call weights cost each solver was measured again") &&
              test_contains(out, "tune: 0 measured, 8 skipped, 0 failed"));
        db = perfdb_open(test_tmp_path("all.db"), true, 0, e, sizeof e);
        CHECK(db && perfdb_get_limits(db, sig, &again, e, sizeof e) == 1 &&
              again.weights.at >= now && again.weights.count >= 3 &&
              weights_cost_ms(&again.weights, "winograd_f4x3", false, 1e6) > 0 &&
              weights_cost_ms(&again.weights, "winograd_f4x3", false, 1e6) < 123456.0);
        perfdb_close(db);
        CHECK(tune(again_args) == 0 && !test_contains(out, "weights cost each solver") &&
              test_contains(out, "tune: 0 of them measured again"));
        CHECK(tune(args) == 0 && !test_contains(out, "measured again"));
    }
    /* one weights mode per database and machine: per-call timings are not
     * mixed into constant ones */
    snprintf(args, sizeof args, "%s --weights per-call --db %s", sample, test_tmp_path("all.db"));
    CHECK(tune(args) != 0 && test_contains(out, "holds constant-weights timings") &&
          test_contains(out, "--weights per-call would mix them"));
    CHECK(rows_in(test_tmp_path("all.db")) == all);
    snprintf(args, sizeof args, "--sample 2 --seed 5 --max-mflop 5 --weights per-call --db %s",
             test_tmp_path("pc.db"));
    CHECK(tune(args) == 0 && test_contains(out, "tune: 2 measured"));
    CHECK(tune(args) == 0 && test_contains(out, "tune: 0 measured, 2 skipped"));
    snprintf(args, sizeof args, "--sample 2 --seed 5 --max-mflop 5 --db %s",
             test_tmp_path("pc.db"));
    CHECK(tune(args) != 0 && test_contains(out, "holds per-call-weights timings"));

    /* shards 0/2 and 1/2 split the list; merged they hold the same problems */
    snprintf(args, sizeof args, "%s --shard 0/2 --db %s", sample, test_tmp_path("s0.db"));
    CHECK(tune(args) == 0 && test_contains(out, "tune: 4 measured") &&
          test_contains(out, "(4 problems in this shard)"));
    snprintf(args, sizeof args, "%s --shard 1/2 --db %s", sample, test_tmp_path("s1.db"));
    CHECK(tune(args) == 0 && test_contains(out, "tune: 4 measured"));
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "db merge %s %s %s", test_tmp_path("m.db"), test_tmp_path("s0.db"),
             test_tmp_path("s1.db"));
    CHECK(test_convsel(NULL, cmd, out, sizeof out) == 0);
    snprintf(args, sizeof args, "%s --db %s", sample, test_tmp_path("m.db"));
    CHECK(tune(args) == 0 &&
          test_contains(out, "tune: 0 measured, 8 skipped")); /* every problem is there */

    /* a problem file */
    char csv[512]; /* test_tmp_path's buffers are reused */
    snprintf(csv, sizeof csv, "%s", test_tmp_path("p.csv"));
    FILE *f = fopen(csv, "w");
    if (f) {
        fputs("name,n,c,h,w,k,r,s,pad_h,pad_w,stride_h,stride_w,dil_h,dil_w,groups\n"
              "a,1,8,10,10,8,3,3,1,1,1,1,1,1,1\nb,1,8,10,10,8,3,3,1,1,1,1,1,1,8\n",
              f);
        fclose(f);
    }
    snprintf(args, sizeof args, "--problems %s --db %s", csv, test_tmp_path("p.db"));
    CHECK(tune(args) == 0 && test_contains(out, "tune: 2 measured") &&
          test_contains(out, "tune: 1/2 a: ") && test_contains(out, "tune: 2/2 b: "));
    CHECK(rows_in(test_tmp_path("p.db")) >= 2);
    remeasure(csv, test_tmp_path("p.db"));
    drift(csv, test_tmp_path("d.db"));
    CHECK(!test_contains(out, "noise guard")); /* off */
    snprintf(args, sizeof args, "--problems %s --db %s --weights per-call", csv,
             test_tmp_path("pc.db"));
    CHECK(tune(args) == 0 && test_contains(out, "tune: 2 measured"));

    /* the guard on (a threshold no contention reaches): two calibrations a problem */
    snprintf(args, sizeof args, "--problems %s --db %s --noise-guard 10000", csv,
             test_tmp_path("g.db"));
    CHECK(tune(args) == 0 && test_contains(out, "tune: 2 measured") &&
          test_contains(out, "4 calibrations, 0 busy, 0 s waited"));
    CHECK(tune("--sample 4 --noise-guard 100 --list") == 2 &&
          test_contains(out, "--noise-guard 100: must be 0 (off) or in 101..10000"));

    /* --corpus: the real layers, with network and family, then --perturb P
     * perturbations of each (tune/sample.h; test_sample checks their rules) */
    const char *corpus = test_tmp_path("corpus");
    char path[1024];
    snprintf(path, sizeof path, "%s/x.csv", corpus);
    snprintf(cmd, sizeof cmd, "mkdir -p %s", corpus);
    CHECK(system(cmd) == 0);
    f = fopen(path, "w");
    if (f) {
        fputs("name,n,c,h,w,k,r,s,pad_h,pad_w,stride_h,stride_w,dil_h,dil_w,groups,network,family\n"
              "net/a,1,16,14,14,16,3,3,1,1,1,1,1,1,1,net,fam\n"
              "net/b,1,16,14,14,16,3,3,1,1,1,1,1,1,16,net,fam\n",
              f);
        fclose(f);
    }
    snprintf(args, sizeof args, "--corpus %s --perturb 2 --seed 3 --list", corpus);
    CHECK(tune(args) == 0);
    CHECK(test_contains(out, "name,n,c,h,w,k,r,s,pad_h,pad_w,stride_h,stride_w,dil_h,dil_w,groups,"
                             "network,family\nnet/a,1,16,14,14,16,3,3,1,1,1,1,1,1,1,net,fam\n"
                             "net/b,1,16,14,14,16,3,3,1,1,1,1,1,1,16,net,fam\n0~net/a,"));
    CHECK(test_contains(out, "\n1~net/b,") && test_contains(out, "\n2~net/a,") &&
          test_contains(out, "\n3~net/b,") && !test_contains(out, "\n4~"));
    char again[sizeof out];
    memcpy(again, out, sizeof out);
    CHECK(tune(args) == 0 && strcmp(again, out) == 0); /* the seed decides */
    /* measured: the origins are recorded (eval --families reads them) */
    snprintf(args, sizeof args, "--corpus %s --perturb 1 --db %s", corpus, test_tmp_path("c.db"));
    CHECK(tune(args) == 0 && test_contains(out, "tune: 4 measured"));
    int layers = 0, perturbed = 0;
    struct perfdb *cdb = perfdb_open(test_tmp_path("c.db"), true, 0, NULL, 0);
    CHECK(cdb != NULL);
    if (cdb) {
        char e[PERFDB_ERROR_MAX];
        CHECK(perfdb_for_each_origin(cdb, count_origin, origin_counts, e, sizeof e) == 4);
        layers = origin_counts[0], perturbed = origin_counts[1];
        perfdb_close(cdb);
    }
    CHECK(layers == 2 && perturbed == 2);
    snprintf(args, sizeof args, "--corpus %s --perturb 101 --list", corpus);
    CHECK(tune(args) == 2 && test_contains(out, "--perturb 101: must be in 0..100"));
    CHECK(tune("--sample 2 --perturb 1 --list") == 2 && test_contains(out, "with --corpus"));
    snprintf(args, sizeof args, "--corpus %s/nope --list", corpus);
    CHECK(tune(args) == 2 && test_contains(out, "nope"));

    /* misuse */
    CHECK(tune("--sample 4 --shard 2/2 --list") == 2 &&
          test_contains(out, "--shard 2/2: must be I/N"));
    CHECK(tune("--sample 4 --shard x --list") == 2 && test_contains(out, "must be I/N"));
    CHECK(tune("--sample 4 --weights often --list") == 2 &&
          test_contains(out, "--weights often: must be constant or per-call"));
    CHECK(tune("--list") == 2 &&
          test_contains(out, "give --problems FILE, --corpus DIR or --sample N"));
    /* a list and a sample together: the list's problems, then the sample's */
    snprintf(args, sizeof args, "--sample 4 --problems %s --list", csv);
    CHECK(tune(args) == 0 && test_contains(out, "sample3,"));
    CHECK(tune("--sample 4 --max-mflop 0 --list") == 2 && test_contains(out, "--max-mflop 0"));
    CHECK(tune("--problems /nonexistent.csv") == 2 &&
          test_contains(out, "--problems /nonexistent.csv: does not exist"));
    snprintf(args, sizeof args, "--sample 1 --db %s", test_tmp_path("no/such/dir.db"));
    CHECK(tune(args) == 1 && test_contains(out, "no/such/dir.db") &&
          test_contains(out, "cannot open"));
    CHECK(tune("--help") == 0 && test_contains(out, "--shard") && test_contains(out, "resumed"));

    test_tmpdir_remove();
    return test_finish("test_cli_tune");
}
