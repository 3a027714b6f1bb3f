/* test_perfdb.c -- the performance database: round trip, fastest-first
 * lookup, replace, processes writing one file at once (barrier-started, no
 * row lost), merge of shards, and the failures that must be clear errors:
 * locked, corrupt, read-only, missing, another schema. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "db/perfdb.h"
#include "testutil.h"

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
    printf("machine signature: %s\n", buf);
    CHECK(strstr(buf, "c-2t") != NULL &&
          (strncmp(buf, "avx", 3) == 0 || strncmp(buf, "generic", 7) == 0));
}

int main(void) {
    test_tmpdir("perfdb");
    round_trip();
    concurrent_writers();
    merge();
    failures();
    paths_and_signature();
    test_tmpdir_remove();
    return test_finish("test_perfdb");
}
