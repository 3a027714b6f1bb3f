/* test_cli_db.c -- `convsel db merge` and `convsel db info` end to end:
 * shards merged into one file, counts reported, and every misuse (missing
 * shard, corrupt shard, OUT among the INs, unknown action) a clear error
 * with the right exit code. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/perfdb.h"
#include "testutil.h"

static char out[1 << 14];

static int db_cmd(const char *args) {
    char line[2048];
    snprintf(line, sizeof line, "db %s", args);
    return test_convsel(NULL, line, out, sizeof out);
}

/* A shard with `rows` records for problems c = first .. first+rows-1. */
static bool make_shard(const char *path, int first, int rows) {
    char err[PERFDB_ERROR_MAX];
    struct perfdb *db = perfdb_open(path, false, 0, err, sizeof err);
    if (!db)
        return false;
    bool ok = true;
    for (int i = 0; ok && i < rows; i++) {
        struct perfdb_record r = {
            .median_ms = 1.0 + i, .min_ms = 1.0 + i, .max_ms = 2.0 + i, .runs = 5};
        snprintf(r.machine, sizeof r.machine, "avx512-2c-2t");
        snprintf(r.solver, sizeof r.solver, "im2col_gemm");
        r.problem = (struct conv_problem){.n = 1,
                                          .c = first + i,
                                          .h = 8,
                                          .w = 8,
                                          .k = 4,
                                          .r = 1,
                                          .s = 1,
                                          .stride_h = 1,
                                          .stride_w = 1,
                                          .dil_h = 1,
                                          .dil_w = 1,
                                          .groups = 1};
        ok = problem_validate(&r.problem, err, sizeof err) == CONVSEL_STATUS_SUCCESS &&
             perfdb_put(db, &r, 1, err, sizeof err);
    }
    perfdb_close(db);
    return ok;
}

int main(void) {
    test_tmpdir("clidb");
    char args[2048];
    CHECK(make_shard(test_tmp_path("s1.db"), 1, 5) && make_shard(test_tmp_path("s2.db"), 4, 5));

    snprintf(args, sizeof args, "merge %s %s %s", test_tmp_path("all.db"), test_tmp_path("s1.db"),
             test_tmp_path("s2.db"));
    CHECK(db_cmd(args) == 0);
    CHECK(test_contains(out, "s1.db: 5 records") && test_contains(out, "s2.db: 5 records"));
    CHECK(test_contains(out, "all.db: 8 records (wal journal)")); /* c = 4, 5 are in both shards */

    snprintf(args, sizeof args, "info %s", test_tmp_path("all.db"));
    CHECK(db_cmd(args) == 0 && test_contains(out, "records   8") &&
          test_contains(out, "journal   wal"));
    char env[2100];
    snprintf(env, sizeof env, "CONVSEL_DB=%s", test_tmp_path("s1.db"));
    CHECK(test_convsel(env, "db info", out, sizeof out) == 0 && test_contains(out, "records   5"));

    /* a missing and a corrupt shard: reported, the good one still merged, exit 1 */
    FILE *f = fopen(test_tmp_path("junk.db"), "w");
    if (f) {
        fputs("this is not a database, not even close, but long enough to look like one....", f);
        fclose(f);
    }
    snprintf(args, sizeof args, "merge %s %s %s %s", test_tmp_path("out2.db"),
             test_tmp_path("nope.db"), test_tmp_path("junk.db"), test_tmp_path("s1.db"));
    CHECK(db_cmd(args) == 1);
    CHECK(test_contains(out, "nope.db: not merged") && test_contains(out, "junk.db: not merged") &&
          test_contains(out, "s1.db: 5 records"));
    CHECK(test_contains(out, "some shards were not merged"));
    snprintf(args, sizeof args, "info %s", test_tmp_path("junk.db"));
    CHECK(db_cmd(args) == 1 && test_contains(out, "junk.db") &&
          test_contains(out, "not a database"));

    /* misuse */
    snprintf(args, sizeof args, "merge %s %s", test_tmp_path("s1.db"), test_tmp_path("s1.db"));
    CHECK(db_cmd(args) == 2 && test_contains(out, "both OUT and IN"));
    snprintf(args, sizeof args, "merge %s", test_tmp_path("s1.db"));
    CHECK(db_cmd(args) == 2 && test_contains(out, "need OUT and at least one IN"));
    CHECK(db_cmd("frobnicate") == 2 && test_contains(out, "unknown action frobnicate"));
    CHECK(db_cmd("") == 2 && test_contains(out, "no action given"));
    CHECK(db_cmd("--help") == 0 && test_contains(out, "convsel db merge OUT IN"));

    test_tmpdir_remove();
    return test_finish("test_cli_db");
}
