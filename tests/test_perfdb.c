/* test_perfdb.c -- the performance database: round trip, fastest-first
 * lookup, replace, processes writing one file at once (barrier-started, no
 * row lost), merge of shards, and the failures that must be clear errors:
 * locked, corrupt, read-only, missing, another schema. */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "db/perfdb.h"
#include "testutil.h"
#include "util/machine.h"

static struct perfdb_record record(int64_t c, const char *solver, double ms) {
    struct perfdb_record r = {.median_ms = ms, .min_ms = ms * 0.9, .max_ms = ms * 1.2, .runs = 7};
    snprintf(r.machine, sizeof r.machine, "avx512-2c-2t");
    snprintf(r.solver, sizeof r.solver, "%s", solver);
    r.problem = (struct conv_problem){.n = 1,
                                      .c = c,
                                      .h = 14,
                                      .w = 14,
                                      .k = 32,
                                      .r = 3,
                                      .s = 3,
                                      .pad_h = 1,
                                      .pad_w = 1,
                                      .stride_h = 1,
                                      .stride_w = 1,
                                      .dil_h = 1,
                                      .dil_w = 1,
                                      .groups = 1};
    char err[PROBLEM_ERROR_MAX];
    if (problem_validate(&r.problem, err, sizeof err) != CONVSEL_STATUS_SUCCESS)
        fprintf(stderr, "bad test problem: %s\n", err);
    return r;
}

static const char *key_of(const struct perfdb_record *r) {
    static char key[256];
    problem_key_format(&r->problem, key, sizeof key);
    return key;
}

static void round_trip(void) {
    char err[PERFDB_ERROR_MAX] = "";
    struct perfdb *db = perfdb_open(test_tmp_path("a.db"), false, 0, err, sizeof err);
    CHECK(db != NULL);
    if (!db) {
        fprintf(stderr, "  %s\n", err);
        return;
    }
    CHECK(strcmp(perfdb_journal_mode(db), "wal") == 0);
    const struct perfdb_record rs[3] = {record(16, "im2col_gemm", 2.0),
                                        record(16, "winograd_f4x3", 0.5),
                                        record(16, "onednn_direct", 1.0)};
    CHECK(perfdb_put(db, rs, 3, err, sizeof err));
    CHECK(perfdb_count(db, err, sizeof err) == 3);
    struct perfdb_record best;
    CHECK(perfdb_best(db, "avx512-2c-2t", key_of(&rs[0]), &best, err, sizeof err) == 1);
    CHECK(strcmp(best.solver, "winograd_f4x3") == 0 && best.median_ms == 0.5 && best.runs == 7);
    CHECK(best.problem.c == 16 && best.problem.k == 32);
    /* other machine, other problem: no answer */
    CHECK(perfdb_best(db, "avx2-8c-8t", key_of(&rs[0]), &best, err, sizeof err) == 0);
    const struct perfdb_record other = record(17, "x", 1);
    CHECK(perfdb_has_problem(db, "avx512-2c-2t", key_of(&other), err, sizeof err) == 0);
    CHECK(perfdb_has_problem(db, "avx512-2c-2t", key_of(&rs[0]), err, sizeof err) == 1);
    /* a re-measurement replaces, it does not add */
    const struct perfdb_record slower = record(16, "winograd_f4x3", 3.0);
    CHECK(perfdb_put(db, &slower, 1, err, sizeof err));
    CHECK(perfdb_count(db, err, sizeof err) == 3);
    CHECK(perfdb_best(db, "avx512-2c-2t", key_of(&rs[0]), &best, err, sizeof err) == 1);
    CHECK(strcmp(best.solver, "onednn_direct") == 0);
    /* a bad record is refused whole: nothing of the batch is written */
    struct perfdb_record batch[2] = {record(99, "im2col_gemm", 1.0), record(99, "", 1.0)};
    CHECK(!perfdb_put(db, batch, 2, err, sizeof err) && test_contains(err, "record 1"));
    CHECK(perfdb_count(db, err, sizeof err) == 3);
    perfdb_close(db);
}

/* perfdb_problem_newest, and perfdb_replace_problem: a problem measured
 * again keeps no record of a solver that did not run again. */
static void replace(void) {
    char err[PERFDB_ERROR_MAX] = "";
    struct perfdb *db = perfdb_open(test_tmp_path("r.db"), false, 0, err, sizeof err);
    CHECK(db != NULL);
    if (!db)
        return;
    const struct perfdb_record rs[3] = {record(16, "im2col_gemm", 2.0),
                                        record(16, "winograd_f4x3", 0.5),
                                        record(16, "onednn_direct", 1.0)};
    const struct perfdb_record other = record(17, "x", 1);
    struct perfdb_record best;
    int64_t newest = -1;
    struct perfdb_record aged[3] = {rs[0], rs[1], rs[2]};
    for (int i = 0; i < 3; i++)
        aged[i].timestamp = 1000 + i;
    CHECK(perfdb_put(db, aged, 3, err, sizeof err));
    CHECK(perfdb_problem_newest(db, "avx512-2c-2t", key_of(&rs[0]), &newest, err, sizeof err) ==
              1 &&
          newest == 1002);
    CHECK(perfdb_problem_newest(db, "avx512-2c-2t", key_of(&other), &newest, err, sizeof err) == 0);
    const struct perfdb_record again[2] = {record(16, "im2col_gemm", 4.0),
                                           record(16, "onednn_direct", 5.0)};
    CHECK(perfdb_replace_problem(db, again, 2, err, sizeof err));
    CHECK(perfdb_count(db, err, sizeof err) == 2); /* winograd_f4x3's old record went */
    CHECK(perfdb_best(db, "avx512-2c-2t", key_of(&rs[0]), &best, err, sizeof err) == 1 &&
          strcmp(best.solver, "im2col_gemm") == 0 && best.median_ms == 4.0);
    CHECK(perfdb_problem_newest(db, "avx512-2c-2t", key_of(&rs[0]), &newest, err, sizeof err) ==
              1 &&
          newest > 1002);
    const struct perfdb_record mixed[2] = {record(16, "im2col_gemm", 1.0), record(17, "x", 1.0)};
    CHECK(!perfdb_replace_problem(db, mixed, 2, err, sizeof err) &&
          test_contains(err, "record 1 is of another problem"));
    CHECK(!perfdb_replace_problem(db, mixed, 0, err, sizeof err) &&
          test_contains(err, "needs its records"));
    CHECK(perfdb_count(db, err, sizeof err) == 2);
    perfdb_close(db);
}

enum { WRITERS = 4, ROWS_PER_WRITER = 60 };

/* Each writer is its own process with its own connection, released at once
 * by closing a pipe; each row is its own transaction, the worst case for
 * lock contention. */
static void concurrent_writers(void) {
    const char *path = test_tmp_path("shared.db");
    char err[PERFDB_ERROR_MAX] = "";
    struct perfdb *db = perfdb_open(path, false, 0, err, sizeof err);
    CHECK(db != NULL);
    if (!db)
        return;
    int gate[2];
    CHECK(pipe(gate) == 0);
    pid_t pids[WRITERS];
    for (int w = 0; w < WRITERS; w++) {
        pids[w] = fork();
        if (pids[w] == 0) {
            close(gate[1]);
            char byte;
            (void)!read(gate[0], &byte, 1); /* returns 0 when the parent closes */
            char cerr[PERFDB_ERROR_MAX];
            struct perfdb *mine = perfdb_open(path, false, 0, cerr, sizeof cerr);
            int failures = mine ? 0 : ROWS_PER_WRITER;
            for (int i = 0; mine && i < ROWS_PER_WRITER; i++) {
                const struct perfdb_record r =
                    record(100 + w * ROWS_PER_WRITER + i, "gemm_1x1", i + 1);
                if (!perfdb_put(mine, &r, 1, cerr, sizeof cerr)) {
                    fprintf(stderr, "writer %d: %s\n", w, cerr);
                    failures++;
                }
            }
            perfdb_close(mine);
            _exit(failures == 0 ? 0 : 1);
        }
    }
    close(gate[0]);
    close(gate[1]);
    int failed = 0;
    for (int w = 0; w < WRITERS; w++) {
        int status = 0;
        waitpid(pids[w], &status, 0);
        failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    CHECK(failed == 0);
    const int64_t rows = perfdb_count(db, err, sizeof err);
    printf("%d processes x %d single-row transactions: %lld rows\n", WRITERS, ROWS_PER_WRITER,
           (long long)rows);
    CHECK(rows == WRITERS * ROWS_PER_WRITER);
    perfdb_close(db);
}

static bool origin_visit(void *ctx, const char *key, const char *network, const char *family,
                         const char *kind) {
    (void)key, (void)network, (void)kind;
    struct {
        int n;
        char family[64];
    } *seen = ctx;
    seen->n++;
    snprintf(seen->family, sizeof seen->family, "%s", family);
    return true;
}

static void merge(void) {
    char err[PERFDB_ERROR_MAX] = "";
    struct perfdb *s1 = perfdb_open(test_tmp_path("s1.db"), false, 0, err, sizeof err);
    struct perfdb *s2 = perfdb_open(test_tmp_path("s2.db"), false, 0, err, sizeof err);
    struct perfdb *out = perfdb_open(test_tmp_path("merged.db"), false, 0, err, sizeof err);
    CHECK(s1 && s2 && out);
    if (!s1 || !s2 || !out)
        return;
    const struct perfdb_record a[2] = {record(8, "im2col_gemm", 1), record(8, "gemm_1x1", 2)};
    const struct perfdb_record b[2] = {record(9, "im2col_gemm", 1), record(8, "gemm_1x1", 0.5)};
    CHECK(perfdb_put(s1, a, 2, err, sizeof err) && perfdb_put(s2, b, 2, err, sizeof err));
    perfdb_close(s1);
    perfdb_close(s2);
    CHECK(perfdb_merge_from(out, test_tmp_path("s1.db"), err, sizeof err) == 2);
    CHECK(perfdb_merge_from(out, test_tmp_path("s2.db"), err, sizeof err) == 2);
    CHECK(perfdb_count(out, err, sizeof err) == 3); /* one (problem, solver) in both shards */
    struct perfdb_record best;
    CHECK(perfdb_best(out, "avx512-2c-2t", key_of(&a[0]), &best, err, sizeof err) == 1 &&
          strcmp(best.solver, "gemm_1x1") == 0); /* the later shard's measurement */
    CHECK(perfdb_merge_from(out, test_tmp_path("absent.db"), err, sizeof err) == -1 &&
          test_contains(err, "absent.db"));
    perfdb_close(out);
}

static void failures(void) {
    char err[PERFDB_ERROR_MAX] = "";
    /* locked: another connection holds an exclusive lock past the busy timeout */
    char path[512]; /* test_tmp_path's buffers rotate */
    snprintf(path, sizeof path, "%s", test_tmp_path("a.db"));
    sqlite3 *holder = NULL;
    CHECK(sqlite3_open(path, &holder) == SQLITE_OK);
    CHECK(sqlite3_exec(holder, "BEGIN EXCLUSIVE", NULL, NULL, NULL) == SQLITE_OK);
    struct perfdb *db = perfdb_open(path, false, 100, err, sizeof err);
    if (db) { /* WAL readers are not blocked: opening may succeed, the write must not */
        const struct perfdb_record r = record(40, "gemm_1x1", 1);
        CHECK(!perfdb_put(db, &r, 1, err, sizeof err));
        perfdb_close(db);
    }
    CHECK(test_contains(err, path) && test_contains(err, "locked"));
    sqlite3_exec(holder, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(holder);

    /* corrupt: not an SQLite file at all */
    const char *junk = test_tmp_path("junk.db");
    FILE *f = fopen(junk, "wb");
    for (int i = 0; f && i < 4096; i++)
        fputc((i * 7919) & 0xff, f);
    if (f)
        fclose(f);
    CHECK(perfdb_open(junk, false, 0, err, sizeof err) == NULL);
    CHECK(test_contains(err, junk) && test_contains(err, "not a database"));
    CHECK(perfdb_open(junk, true, 0, err, sizeof err) == NULL &&
          test_contains(err, "not a database"));

    /* read-only: reads work, a write is refused with a message */
    db = perfdb_open(path, true, 0, err, sizeof err);
    CHECK(db != NULL);
    if (db) {
        CHECK(strcmp(perfdb_journal_mode(db), "wal") == 0);
        CHECK(perfdb_count(db, err, sizeof err) == 3);
        const struct perfdb_record r = record(41, "gemm_1x1", 1);
        CHECK(!perfdb_put(db, &r, 1, err, sizeof err) && test_contains(err, "readonly"));
        perfdb_close(db);
    }
    /* missing, opened read-only: not created */
    CHECK(perfdb_open(test_tmp_path("missing.db"), true, 0, err, sizeof err) == NULL);
    CHECK(test_contains(err, "missing.db") && access(test_tmp_path("missing.db"), F_OK) != 0);
    /* a directory that does not exist */
    CHECK(perfdb_open(test_tmp_path("no/such/dir.db"), false, 0, err, sizeof err) == NULL);
    CHECK(test_contains(err, "cannot open"));
    /* an SQLite file that is not ours, and one of another schema version */
    sqlite3 *other = NULL;
    CHECK(sqlite3_open(test_tmp_path("other.db"), &other) == SQLITE_OK);
    sqlite3_exec(other, "CREATE TABLE t(x)", NULL, NULL, NULL);
    sqlite3_close(other);
    CHECK(perfdb_open(test_tmp_path("other.db"), true, 0, err, sizeof err) == NULL);
    CHECK(test_contains(err, "not a convsel database"));
    CHECK(sqlite3_open(test_tmp_path("v99.db"), &other) == SQLITE_OK);
    sqlite3_exec(other,
                 "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                 "INSERT INTO meta VALUES('schema_version','99')",
                 NULL, NULL, NULL);
    sqlite3_close(other);
    CHECK(perfdb_open(test_tmp_path("v99.db"), false, 0, err, sizeof err) == NULL);
    CHECK(test_contains(err, "schema version 99"));
    /* a row whose key does not parse is an error, not a hit */
    CHECK(sqlite3_open(path, &other) == SQLITE_OK);
    CHECK(sqlite3_exec(other,
                       "INSERT INTO perf(machine, problem, solver, median_ms) "
                       "VALUES('m', 'garbage', 'x', 1)",
                       NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(other);
    db = perfdb_open(path, false, 0, err, sizeof err);
    struct perfdb_record best;
    CHECK(db && perfdb_best(db, "m", "garbage", &best, err, sizeof err) == -1);
    CHECK(test_contains(err, "problem key"));
    perfdb_close(db);
}

/* Schema 1 (the shipped database of before) is read, and upgraded in place
 * when written; origins and the machine's limits round-trip; a v1 shard
 * merges into a v2 file; invalid times are refused by put. */
static void schema_and_extras(void) {
    char err[PERFDB_ERROR_MAX] = "";
    const char *v1 = test_tmp_path("v1.db");
    sqlite3 *s3 = NULL;
    CHECK(sqlite3_open(v1, &s3) == SQLITE_OK);
    CHECK(sqlite3_exec(
              s3,
              "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
              "INSERT INTO meta VALUES('schema_version', '1');"
              "CREATE TABLE perf(machine TEXT NOT NULL, problem TEXT NOT NULL, solver TEXT "
              "NOT NULL, n INTEGER, c INTEGER, h INTEGER, w INTEGER, k INTEGER, r INTEGER, s "
              "INTEGER, pad_h INTEGER, pad_w INTEGER, stride_h INTEGER, stride_w INTEGER, "
              "dil_h INTEGER, dil_w INTEGER, groups INTEGER, layout TEXT, filter_layout "
              "TEXT, median_ms REAL NOT NULL, min_ms REAL, max_ms REAL, runs INTEGER, "
              "workspace INTEGER, version TEXT, timestamp INTEGER, PRIMARY KEY(machine, "
              "problem, solver));",
              NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(s3);
    const struct perfdb_record r = record(12, "im2col_gemm", 2.0);
    char key[256];
    problem_key_format(&r.problem, key, sizeof key);
    char insert[1024];
    snprintf(insert, sizeof insert,
             "INSERT INTO perf(machine, problem, solver, median_ms, min_ms, max_ms, runs) "
             "VALUES('avx512-2c-2t', '%s', 'im2col_gemm', 2.0, 1.9, 2.2, 5)",
             key);
    CHECK(sqlite3_open(v1, &s3) == SQLITE_OK);
    CHECK(sqlite3_exec(s3, insert, NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(s3);
    struct perfdb *db = perfdb_open(v1, true, 0, err, sizeof err);
    CHECK(db && perfdb_schema_version(db) == 1 && perfdb_count(db, err, sizeof err) == 1);
    perfdb_close(db);
    /* a v1 shard merges into a new (v2) file */
    const char *merged = test_tmp_path("v2merged.db");
    db = perfdb_open(merged, false, 0, err, sizeof err);
    CHECK(db && perfdb_schema_version(db) == 2);
    CHECK(db && perfdb_merge_from(db, v1, err, sizeof err) == 1);
    perfdb_close(db);
    /* written: upgraded, the row kept */
    db = perfdb_open(v1, false, 0, err, sizeof err);
    CHECK(db && perfdb_schema_version(db) == 2 && perfdb_count(db, err, sizeof err) == 1);
    /* origins: the first one stays */
    CHECK(db && perfdb_put_origin(db, &r.problem, "resnet50", "resnet", "layer", err, sizeof err));
    CHECK(db && perfdb_put_origin(db, &r.problem, "other", "other", "perturbed", err, sizeof err));
    /* limits per machine */
    struct machine_limits l = {.present = true,
                               .peak_gflops = 400.5,
                               .levels = 2,
                               .level_bytes = {16384, 262144},
                               .level_gbs = {500, 300}};
    struct machine_limits back;
    CHECK(db && perfdb_get_limits(db, "avx512-2c-2t", &back, err, sizeof err) == 0);
    CHECK(db && perfdb_put_limits(db, "avx512-2c-2t", &l, err, sizeof err));
    CHECK(db && perfdb_get_limits(db, "avx512-2c-2t", &back, err, sizeof err) == 1 &&
          back.levels == 2 && back.peak_gflops == 400.5 && back.level_gbs[1] == 300 &&
          back.weights.count == 0);
    /* with per-call weights costs (tune/weights_probe.h), replacing */
    l.weights = (struct weights_costs){
        .count = 2, .solver = {"onednn_winograd", "gemm_1x1"}, .ns = {{-1, 9.5}, {0.25, -1}}};
    CHECK(db && perfdb_put_limits(db, "avx512-2c-2t", &l, err, sizeof err));
    CHECK(db && perfdb_get_limits(db, "avx512-2c-2t", &back, err, sizeof err) == 1 &&
          back.levels == 2 && back.weights.count == 2 &&
          strcmp(back.weights.solver[0], "onednn_winograd") == 0 && back.weights.ns[0][0] == -1 &&
          back.weights.ns[0][1] == 9.5 && back.weights.ns[1][0] == 0.25);
    /* priced per weight element; the other class's figure when one is missing */
    CHECK(fabs(weights_cost_ms(&back.weights, "onednn_winograd", false, 1e6) - 9.5) < 1e-9 &&
          fabs(weights_cost_ms(&back.weights, "onednn_winograd", true, 1e6) - 9.5) < 1e-9 &&
          fabs(weights_cost_ms(&back.weights, "gemm_1x1", true, 4e6) - 1.0) < 1e-9 &&
          weights_cost_ms(&back.weights, "direct", false, 1e6) == 0);
    /* a row that is not what put writes (hand-edited): an error naming
     * the row and the form, never "not there" (which had train say the
     * database predates limits and tune overwrite the row) */
    CHECK(db && perfdb_put_meta(db, "limits/avx2-2c-2t", "peak_gflops=fast", err, sizeof err));
    CHECK(db && perfdb_get_limits(db, "avx2-2c-2t", &back, err, sizeof err) == -1 &&
          test_contains(err, "meta row limits/avx2-2c-2t = 'peak_gflops=fast' is not") &&
          test_contains(err, "delete the row") && !back.present);
    CHECK(db && perfdb_put_meta(db, "weights/avx2-2c-2t", "Constant", err, sizeof err));
    bool constant = false;
    CHECK(db && perfdb_get_weights_mode(db, "avx2-2c-2t", &constant, err, sizeof err) == -1 &&
          test_contains(err, "meta row weights/avx2-2c-2t = 'Constant' is not 'constant' or "
                             "'per-call'") &&
          !constant);
    CHECK(db && perfdb_put_weights_mode(db, "avx2-2c-2t", false, err, sizeof err) &&
          perfdb_get_weights_mode(db, "avx2-2c-2t", &constant, err, sizeof err) == 1 && !constant);
    CHECK(db && perfdb_get_weights_mode(db, "generic-2c-2t", &constant, err, sizeof err) == 0);
    /* edited into a blob by another program (a number would be stored as
     * text: the column is TEXT): named, not read as absent */
    sqlite3 *edit = NULL;
    CHECK(sqlite3_open(v1, &edit) == SQLITE_OK &&
          sqlite3_exec(edit, "UPDATE meta SET value = X'05' WHERE key = 'limits/avx2-2c-2t'", NULL,
                       NULL, NULL) == SQLITE_OK &&
          sqlite3_changes(edit) == 1);
    sqlite3_close(edit);
    CHECK(db && perfdb_get_limits(db, "avx2-2c-2t", &back, err, sizeof err) == -1 &&
          test_contains(err, "meta row limits/avx2-2c-2t (not TEXT, or too long) is not"));
    /* malformed text is refused, never half read */
    char text[4096];
    const char *bad_limits[] = {
        "peak_gflops=400 bw=16384:500 weights=",
        "peak_gflops=400 bw=16384:500 weights=x:1",
        "peak_gflops=400 bw=16384:500 weights=x:1:-2",
        "peak_gflops=400 bw=16384:500 weights=x:1:nan",
        "peak_gflops=400 bw=16384:500 weights=X Y:1:1",
        "peak_gflops=400 bw=16384:500 weights=a:1:1,",
        "peak_gflops=400 bw=16384:500 weights=a:1:1 extra",
        "peak_gflops=400 bw=16384:500 junk",
        "peak_gflops=400 bw= weights=a:1:1",
        "peak_gflops=400 bw=16384:500 weights=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa:1:1",
        "peak_gflops=400 bw=16384:500 method=",
        "peak_gflops=400 bw=16384:500 method=1",
        "peak_gflops=400 bw=16384:500 method=2x",
        "peak_gflops=400 bw=16384:500 method=-2",
        "peak_gflops=400 bw=16384:500 method=2 weights=a:1:1",
        "peak_gflops=400 bw=16384:500 weights=a:1:1 method=99999",
        /* when the weights costs were measured: a whole positive number
         * after them, and only after them */
        "peak_gflops=400 bw=16384:500 weights_at=1796600000",
        "peak_gflops=400 bw=16384:500 weights=a:1:1 weights_at=",
        "peak_gflops=400 bw=16384:500 weights=a:1:1 weights_at=0",
        "peak_gflops=400 bw=16384:500 weights=a:1:1 weights_at=-5",
        "peak_gflops=400 bw=16384:500 weights=a:1:1 weights_at=+5",
        "peak_gflops=400 bw=16384:500 weights=a:1:1 weights_at=12x",
        "peak_gflops=400 bw=16384:500 weights=a:1:1 weights_at=1.5",
        "peak_gflops=400 bw=16384:500 weights=a:1:1 weights_at=99999999999",
        "peak_gflops=400 bw=16384:500 weights=a:1:1 weights_at=5 weights_at=6",
        "peak_gflops=400 bw=16384:500 weights=a:1:1 weights_at=5 extra",
        "peak_gflops=400 bw=16384:500 weights_at=5 weights=a:1:1",
        "peak_gflops=400 bw=16384:500 weights=a:1:1 method=2 weights_at=5",
    };
    for (size_t i = 0; i < sizeof bad_limits / sizeof bad_limits[0]; i++)
        if (!CHECK(!peak_parse(bad_limits[i], &back)))
            printf("  parsed: %s\n", bad_limits[i]);
    CHECK(peak_parse("peak_gflops=400 bw=16384:500", &back) && back.weights.count == 0 &&
          back.method == 1);
    /* the peak loop's version: none is 1 (before it was kept), and it
     * reads back with or without weights */
    CHECK(peak_parse("peak_gflops=400 bw=16384:500 method=2", &back) && back.method == 2);
    CHECK(peak_parse("peak_gflops=400 bw=16384:500 weights=a:1:1 method=2", &back) &&
          back.method == 2 && back.weights.count == 1 && back.weights.ns[0][1] == 1);
    peak_format(&back, text, sizeof text);
    CHECK(test_contains(text, " method=2") && peak_parse(text, &back) && back.method == 2);
    /* the weights costs' time reads back, with or without a method; none is 0 */
    CHECK(peak_parse("peak_gflops=400 bw=16384:500 weights=a:1:1 weights_at=1796600000 method=2",
                     &back) &&
          back.weights.at == 1796600000 && back.weights.count == 1 && back.method == 2);
    peak_format(&back, text, sizeof text);
    CHECK(test_contains(text, "weights=a:1:1 weights_at=1796600000 method=2") &&
          peak_parse(text, &back) && back.weights.at == 1796600000);
    CHECK(peak_parse("peak_gflops=400 bw=16384:500 weights=a:1:1 weights_at=7", &back) &&
          back.weights.at == 7 && back.method == 1);
    CHECK(peak_parse("peak_gflops=400 bw=16384:500 weights=a:1:1", &back) && back.weights.at == 0);
    peak_format(&back, text, sizeof text);
    CHECK(!test_contains(text, "weights_at"));
    /* what parses formats to what parses (fuzz_limits' first finding: a
     * bandwidth of .0039 was written back as "0.0"); bytes are whole */
    CHECK(peak_parse("peak_gflops=0.01 bw=16384:.0039", &back));
    peak_format(&back, text, sizeof text);
    CHECK(peak_parse(text, &back) && back.level_gbs[0] == 0.0039 && back.peak_gflops == 0.01);
    CHECK(!peak_parse("peak_gflops=400 bw=1.5:500", &back));
    CHECK(peak_parse("peak_gflops=400 bw=16384:500,262144:300 weights=a_1:0:-1", &back) &&
          back.levels == 2 && back.weights.count == 1 && back.weights.ns[0][1] == -1);
    /* invalid times are refused by put, whole batch */
    struct perfdb_record bad[2] = {record(13, "gemm_1x1", 1.0), record(13, "im2col_gemm", 1.0)};
    bad[1].median_ms = 1e308, bad[1].max_ms = 1e308;
    CHECK(db && !perfdb_put(db, bad, 2, err, sizeof err) && test_contains(err, "record 1"));
    bad[1] = record(13, "im2col_gemm", 1.0), bad[1].min_ms = 5.0; /* min > median */
    CHECK(db && !perfdb_put(db, bad, 2, err, sizeof err) && test_contains(err, "not ordered"));
    CHECK(db && perfdb_count(db, err, sizeof err) == 1);
    /* merging the file into itself, under another name */
    char again[1024];
    snprintf(again, sizeof again, "%s/./v1.db", test_tmp_path(""));
    CHECK(db && perfdb_merge_from(db, again, err, sizeof err) == -1 &&
          test_contains(err, "is the same file as"));
    perfdb_close(db);
    struct origin_seen {
        int n;
        char family[64];
    } seen = {0};
    db = perfdb_open(v1, true, 0, err, sizeof err);
    CHECK(db && perfdb_for_each_origin(db, origin_visit, &seen, err, sizeof err) == 1);
    CHECK(seen.n == 1 && strcmp(seen.family, "resnet") == 0);
    perfdb_close(db);
    CHECK(perfdb_times_valid(1, 1, 1, 1, NULL, 0) && !perfdb_times_valid(0, 0, 0, 1, NULL, 0) &&
          !perfdb_times_valid(NAN, 1, 1, 1, NULL, 0) && !perfdb_times_valid(1, 1, 1, 0, NULL, 0));
}

static void paths_and_signature(void) {
    char buf[512], err[PERFDB_ERROR_MAX];
    setenv("CONVSEL_DB", "/x/y.db", 1);
    CHECK(perfdb_default_path(buf, sizeof buf, err, sizeof err) && strcmp(buf, "/x/y.db") == 0);
    unsetenv("CONVSEL_DB");
    setenv("XDG_DATA_HOME", "/data", 1);
    CHECK(perfdb_default_path(buf, sizeof buf, err, sizeof err) &&
          strcmp(buf, "/data/convsel/perf.db") == 0);
    unsetenv("XDG_DATA_HOME");
    setenv("HOME", "/home/u", 1);
    CHECK(perfdb_default_path(buf, sizeof buf, err, sizeof err) &&
          strcmp(buf, "/home/u/.local/share/convsel/perf.db") == 0);
    unsetenv("HOME");
    CHECK(!perfdb_default_path(buf, sizeof buf, err, sizeof err) &&
          test_contains(err, "CONVSEL_DB"));
    machine_signature(2, buf, sizeof buf);
    /* one module builds and parses it (util/machine.c) */
    char isa[16];
    int cores = 0, threads = 0;
    CHECK(machine_signature_parse(buf, isa, sizeof isa, &cores, &threads) && threads == 2 &&
          cores >= 1 && strncmp(buf, isa, strlen(isa)) == 0);
    /* the cores are read once per process; the value is the online count */
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    CHECK(machine_cores() == (online > 0 ? (int)online : 1) && cores == machine_cores() &&
          machine_cores() == cores);
    CHECK(machine_signature_parse("avx2-8c-16t", isa, sizeof isa, &cores, &threads) &&
          strcmp(isa, "avx2") == 0 && cores == 8 && threads == 16);
    const char *bad[] = {"avx2-8c", "avx2-8-16t", "-8c-2t", "avx2-0c-2t", "avx2-8c-2t-x", "a-c-t"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(!machine_signature_parse(bad[i], NULL, 0, NULL, NULL));
    printf("machine signature: %s\n", buf);
    CHECK(strstr(buf, "c-2t") != NULL &&
          (strncmp(buf, "avx", 3) == 0 || strncmp(buf, "generic", 7) == 0));
}

int main(void) {
    test_tmpdir("perfdb");
    round_trip();
    replace();
    concurrent_writers();
    merge();
    failures();
    schema_and_extras();
    paths_and_signature();
    test_tmpdir_remove();
    return test_finish("test_perfdb");
}
