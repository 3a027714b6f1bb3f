/* test_solutions.c -- convsel_get_solutions and AUTO: this machine's
 * measurements rank first (fastest first, with their times), records of
 * unknown or inapplicable solvers never appear, every applicable solver
 * appears once, a problem or thread count the database does not hold
 * falls to the rules, and AUTO runs the first solution. A corrupt or
 * missing database never fails a convolution (run in fresh processes:
 * the database is read once per process). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/perfdb.h"
#include "problem_builder.h"
#include "testutil.h"

static char out[1 << 14];

static struct test_problem problem(int64_t c) {
    struct test_problem tp = test_problem_default();
    tp.c = c, tp.k = 16, tp.h = tp.w = 12, tp.r = tp.s = 3, tp.pad_h = tp.pad_w = 1;
    return tp;
}

/* Records `solver` at `ms` for the problem in db, for `threads` threads. */
static void record(struct perfdb *db, convsel_handle_t h, const struct test_descs *d, int threads,
                   const char *solver, double ms) {
    char key[CONVSEL_PROBLEM_KEY_MAX], err[PERFDB_ERROR_MAX];
    struct perfdb_record r = {.median_ms = ms, .min_ms = ms, .max_ms = ms, .runs = 5};
    machine_signature(threads, r.machine, sizeof r.machine);
    snprintf(r.solver, sizeof r.solver, "%s", solver);
    CHECK(convsel_get_problem_key(h, d->x, d->w, d->conv, d->y, key, sizeof key, NULL) == 0);
    CHECK(problem_key_parse(key, &r.problem, err, sizeof err) == CONVSEL_STATUS_SUCCESS);
    CHECK(perfdb_put(db, &r, 1, err, sizeof err));
}

static size_t auto_workspace(convsel_handle_t h, const struct test_descs *d) {
    size_t ws = 0;
    CHECK_STATUS(
        h,
        convsel_get_forward_workspace_size(h, CONVSEL_SOLVER_AUTO, d->x, d->w, d->conv, d->y, &ws),
        CONVSEL_STATUS_SUCCESS);
    return ws;
}

static void check_ranking_invariants(convsel_handle_t h, const struct test_descs *d,
                                     const convsel_solution_t *s, int n) {
    bool seen[64] = {false};
    int applicable = 0;
    for (int id = 0; id < convsel_solver_count(); id++)
        applicable += convsel_solver_is_applicable(h, id, d->x, d->w, d->conv, d->y) ==
                      CONVSEL_STATUS_SUCCESS;
    CHECK(n == applicable); /* every applicable solver, once */
    for (int i = 0; i < n; i++) {
        CHECK(s[i].solver >= 0 && s[i].solver < 64 && !seen[s[i].solver]);
        seen[s[i].solver] = true;
        CHECK(convsel_solver_is_applicable(h, s[i].solver, d->x, d->w, d->conv, d->y) ==
              CONVSEL_STATUS_SUCCESS);
        size_t ws = 0;
        convsel_get_forward_workspace_size(h, s[i].solver, d->x, d->w, d->conv, d->y, &ws);
        CHECK(ws == s[i].workspace_bytes);
        CHECK((s[i].source == CONVSEL_RANKED_BY_DATABASE) == (s[i].time_ms >= 0));
    }
    CHECK(strcmp(s[n - 1].name, "reference") == 0 || s[n - 1].source == CONVSEL_RANKED_BY_DATABASE);
}

static void in_process(void) {
    char path[600], err[PERFDB_ERROR_MAX];
    snprintf(path, sizeof path, "%s", test_tmp_path("perf.db"));
    setenv("CONVSEL_DB", path, 1);
    struct perfdb *db = perfdb_open(path, false, 0, err, sizeof err);
    CHECK(db != NULL);
    convsel_handle_t h;
    convsel_handle_create(&h);
    convsel_set_num_threads(h, 2);
    struct test_descs measured, other, unmeasured, priced;
    const struct test_problem pm = problem(8), po = problem(9), pu = problem(10), pp = problem(11);
    CHECK(test_descs_create(h, &pm, &measured) == 0 && test_descs_create(h, &po, &other) == 0 &&
          test_descs_create(h, &pu, &unmeasured) == 0 && test_descs_create(h, &pp, &priced) == 0);
    if (db) {
        record(db, h, &measured, 2, "winograd_f4x3", 0.3);
        record(db, h, &measured, 2, "im2col_gemm", 0.1);
        record(db, h, &measured, 2, "gemm_1x1", 0.01);                /* does not apply to 3x3 */
        record(db, h, &measured, 2, "solver_from_the_future", 0.001); /* not in this build */
        record(db, h, &measured, 1, "reference", 0.0001);             /* another thread count */
        record(db, h, &other, 2, "im2col_gemm", 0.2);
        record(db, h, &priced, 2, "winograd_f4x3", 0.05);
        record(db, h, &priced, 2, "im2col_gemm", 0.1);
        /* constant-weights timings (the mode is not recorded: constant),
         * and what per-call weights cost winograd_f4x3 here */
        struct machine_limits l = {.present = true, .peak_gflops = 400, .levels = 1};
        l.level_bytes[0] = 16384, l.level_gbs[0] = 500;
        l.weights =
            (struct weights_costs){.count = 1, .solver = {"winograd_f4x3"}, .ns = {{-1, 100}}};
        char sig[PERFDB_MACHINE_MAX];
        machine_signature(2, sig, sizeof sig);
        CHECK(perfdb_put_limits(db, sig, &l, err, sizeof err));
        perfdb_close(db);
    }

    convsel_solution_t s[16];
    int n = 0;
    CHECK_STATUS(
        h, convsel_get_solutions(h, measured.x, measured.w, measured.conv, measured.y, 16, s, &n),
        CONVSEL_STATUS_SUCCESS);
    CHECK(n >= 3 && strcmp(s[0].name, "im2col_gemm") == 0 && s[0].time_ms == 0.1 &&
          s[0].source == CONVSEL_RANKED_BY_DATABASE);
    /* the handle's weights are per-call (the default): 0.3 ms measured with
     * constant ones, + 100 ns x 8 x 16 x 9 weights */
    CHECK(strcmp(s[1].name, "winograd_f4x3") == 0 && fabs(s[1].time_ms - (0.3 + 0.1152)) < 1e-9 &&
          s[1].source == CONVSEL_RANKED_BY_DATABASE);
    CHECK(s[2].source == CONVSEL_RANKED_BY_RULES && s[2].time_ms < 0);
    for (int i = 0; i < n; i++)
        CHECK(strcmp(s[i].name, "gemm_1x1") != 0);
    check_ranking_invariants(h, &measured, s, n);
    CHECK(strcmp(convsel_ranking_source_string(s[0].source), "database") == 0);

    /* AUTO runs the first solution: im2col_gemm's workspace, not the rules' pick's */
    CHECK(auto_workspace(h, &measured) == s[0].workspace_bytes && s[0].workspace_bytes > 0);
    CHECK_STATUS(h, convsel_get_solutions(h, other.x, other.w, other.conv, other.y, 16, s, &n),
                 CONVSEL_STATUS_SUCCESS);
    CHECK(strcmp(s[0].name, "im2col_gemm") == 0 && s[0].source == CONVSEL_RANKED_BY_DATABASE);
    check_ranking_invariants(h, &other, s, n);

    /* per-call weights reorder the measurements (winograd: 0.05 + 100 ns x
     * 11 x 16 x 9 = 0.2084 ms), constant ones do not */
    CHECK_STATUS(h, convsel_get_solutions(h, priced.x, priced.w, priced.conv, priced.y, 16, s, &n),
                 CONVSEL_STATUS_SUCCESS);
    CHECK(n >= 2 && strcmp(s[0].name, "im2col_gemm") == 0 && s[0].time_ms == 0.1 &&
          strcmp(s[1].name, "winograd_f4x3") == 0 && fabs(s[1].time_ms - 0.2084) < 1e-9);
    convsel_set_weights_constant(h, 1);
    CHECK_STATUS(h, convsel_get_solutions(h, priced.x, priced.w, priced.conv, priced.y, 16, s, &n),
                 CONVSEL_STATUS_SUCCESS);
    CHECK(n >= 2 && strcmp(s[0].name, "winograd_f4x3") == 0 && s[0].time_ms == 0.05 &&
          s[0].source == CONVSEL_RANKED_BY_DATABASE);
    CHECK(auto_workspace(h, &priced) == s[0].workspace_bytes);
    convsel_set_weights_constant(h, 0);
    CHECK(auto_workspace(h, &priced) == s[1].workspace_bytes); /* im2col_gemm's */

    /* not measured: the rules */
    CHECK_STATUS(h,
                 convsel_get_solutions(h, unmeasured.x, unmeasured.w, unmeasured.conv, unmeasured.y,
                                       16, s, &n),
                 CONVSEL_STATUS_SUCCESS);
    CHECK(s[0].source == CONVSEL_RANKED_BY_RULES && s[0].time_ms < 0);
    check_ranking_invariants(h, &unmeasured, s, n);
    CHECK(auto_workspace(h, &unmeasured) == s[0].workspace_bytes);

    /* one thread is another machine signature: the 1-thread record ranks the reference first */
    convsel_set_num_threads(h, 1);
    CHECK_STATUS(
        h, convsel_get_solutions(h, measured.x, measured.w, measured.conv, measured.y, 16, s, &n),
        CONVSEL_STATUS_SUCCESS);
    CHECK(strcmp(s[0].name, "reference") == 0 && s[0].source == CONVSEL_RANKED_BY_DATABASE);
    CHECK(s[1].source == CONVSEL_RANKED_BY_RULES);

    /* capacity and bad arguments */
    CHECK_STATUS(
        h, convsel_get_solutions(h, measured.x, measured.w, measured.conv, measured.y, 1, s, &n),
        CONVSEL_STATUS_SUCCESS);
    CHECK(n == 1);
    CHECK_STATUS(
        h, convsel_get_solutions(h, measured.x, measured.w, measured.conv, measured.y, 0, s, &n),
        CONVSEL_STATUS_BAD_PARAM);
    CHECK_MESSAGE(h, "max_solutions = 0");
    CHECK_STATUS(
        h, convsel_get_solutions(h, measured.x, measured.w, measured.conv, measured.y, 4, NULL, &n),
        CONVSEL_STATUS_BAD_PARAM);
    CHECK_MESSAGE(h, "solutions_out is NULL");
    CHECK_STATUS(h, convsel_get_solutions(h, measured.x, measured.w, measured.conv, NULL, 4, s, &n),
                 CONVSEL_STATUS_BAD_PARAM);
    CHECK_MESSAGE(h, "y_desc is NULL");
    CHECK(convsel_get_solutions(NULL, measured.x, measured.w, measured.conv, measured.y, 4, s,
                                &n) == CONVSEL_STATUS_BAD_PARAM);
    test_descs_destroy(&measured);
    test_descs_destroy(&other);
    test_descs_destroy(&unmeasured);
    test_descs_destroy(&priced);
    convsel_handle_destroy(h);
}

/* Fresh processes: a corrupt database and a missing CONVSEL_DB each give
 * one warning and a verified convolution. */
static void broken_databases(void) {
    char junk[600], cmd[2048];
    snprintf(junk, sizeof junk, "%s", test_tmp_path("junk.db"));
    FILE *f = fopen(junk, "w");
    if (f) {
        fputs("definitely not an SQLite database, but long enough to be read as one........", f);
        fclose(f);
    }
    const char *dbs[2] = {junk, "/nonexistent/perf.db"};
    const char *why[2] = {"file is not a database", "does not exist"};
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd, "CONVSEL_DB=%s", dbs[i]);
        CHECK(test_convsel(cmd, "conv -c 8 -k 8 -H 12 -W 12 -V 1", out, sizeof out) == 0);
        CHECK(strstr(out, "verified") != NULL && strstr(out, why[i]) != NULL);
        const char *first = strstr(out, "warning");
        CHECK(first && strstr(first + 1, "warning") == NULL); /* once */
        CHECK(strstr(out, "(auto: rules)") != NULL);
    }
}

int main(void) {
    test_tmpdir("solutions");
    in_process();
    broken_databases();
    test_tmpdir_remove();
    return test_finish("test_solutions");
}
