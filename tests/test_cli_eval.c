/* test_cli_eval.c -- `convsel eval` on a database whose answers are known:
 * the rules rank gemm_1x1 first among the measured solvers of a 1x1 problem
 * where im2col_gemm was twice as fast (a miss, regret 2), and depthwise for a depthwise problem
 * where it was fastest (a hit, regret 1): top1 = 1/2, geomean regret = sqrt(2), with faster
 * records of solvers that do not apply there ignored. Plus the machine filter and the errors. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "db/perfdb.h"
#include "heur/select.h"
#include "solvers/solver.h"
#include "testutil.h"

static char out[1 << 14];

static int eval(const char *args) {
    char line[2048];
    snprintf(line, sizeof line, "eval %s", args);
    return test_convsel(NULL, line, out, sizeof out);
}

static struct conv_problem make(int64_t c, int64_t f, int64_t groups) {
    struct conv_problem p = {.n = 1,
                             .c = c,
                             .h = 9,
                             .w = 9,
                             .k = c,
                             .r = f,
                             .s = f,
                             .pad_h = f / 2,
                             .pad_w = f / 2,
                             .stride_h = 1,
                             .stride_w = 1,
                             .dil_h = 1,
                             .dil_w = 1,
                             .groups = groups};
    char err[PROBLEM_ERROR_MAX];
    CHECK(problem_validate(&p, err, sizeof err) == CONVSEL_STATUS_SUCCESS);
    return p;
}

static void put(struct perfdb *db, const struct conv_problem *p, const char *solver, double ms) {
    struct perfdb_record r = {.problem = *p, .median_ms = ms, .min_ms = ms, .max_ms = ms};
    snprintf(r.machine, sizeof r.machine, "avx512-2c-2t");
    snprintf(r.solver, sizeof r.solver, "%s", solver);
    char err[PERFDB_ERROR_MAX];
    CHECK(perfdb_put(db, &r, 1, err, sizeof err));
}

/* Whether `want` comes before `other` in the rules' ranking of p. */
static bool first_measured_is(const struct conv_problem *p, const char *want, const char *other) {
    struct heur_choice c[SOLVER_MAX];
    const int n = heur_rank_rules(p, c, SOLVER_MAX);
    for (int i = 0; i < n; i++) {
        const char *name = solver_get(c[i].solver)->name;
        if (strcmp(name, want) == 0)
            return true;
        if (strcmp(name, other) == 0)
            return false;
    }
    return false;
}

/* Whether `name` is among the rules' first three for p. */
static bool in_rules_top3(const struct conv_problem *p, const char *name) {
    struct heur_choice c[SOLVER_MAX];
    const int n = heur_rank_rules(p, c, SOLVER_MAX);
    for (int i = 0; i < n && i < 3; i++)
        if (strcmp(solver_get(c[i].solver)->name, name) == 0)
            return true;
    return false;
}

/* Leave one family out: three families of 1x1 and 3x3 layers, on which a
 * learnable rule decides the fastest (im2col_gemm on 1x1, onednn_direct on
 * 3x3); each family's model is trained on the other two families and
 * their perturbations, never its own, and each family line counts its own
 * layers only. A database without origins is refused, saying how to get
 * them. */
static void families(void) {
    const char *fam_db = test_tmp_path("families.db");
    char err[PERFDB_ERROR_MAX], args[1024];
    struct perfdb *db = perfdb_open(fam_db, false, 0, err, sizeof err);
    CHECK(db != NULL);
    const char *names[3] = {"alpha", "beta", "gamma"};
    int layers[3] = {0, 0, 0};
    for (int f = 0; db && f < 3; f++)
        for (int64_t c = 8 + 4 * f; c <= 64; c += 12) {
            for (int64_t filt = 1; filt <= 3; filt += 2) {
                const struct conv_problem q = make(c, filt, 1);
                put(db, &q, "im2col_gemm", filt == 1 ? 1.0 : 3.0);
                put(db, &q, "onednn_direct", filt == 1 ? 2.0 : 1.0);
                char net[32];
                snprintf(net, sizeof net, "%s_net", names[f]);
                CHECK(perfdb_put_origin(db, &q, net, names[f], "layer", err, sizeof err));
                layers[f]++;
            }
        }
    perfdb_close(db);
    snprintf(args, sizeof args, "--db %s --families --epochs 300 --hidden 8", fam_db);
    CHECK(eval(args) == 0);
    const int total = layers[0] + layers[1] + layers[2];
    char want[160];
    snprintf(want, sizeof want, "eval: leave one family out on %s (%d problems;", fam_db, total);
    CHECK(test_contains(out, want));
    for (int f = 0; f < 3; f++) {
        snprintf(want, sizeof want, "family %-16s %4d layers (trained on %5d): ", names[f],
                 layers[f], total - layers[f]);
        CHECK(test_contains(out, want));
    }
    snprintf(want, sizeof want, "families  top1 = ");
    CHECK(test_contains(out, want));
    int top1 = -1, n = -1;
    const char *at = strstr(out, want);
    if (at)
        sscanf(at, "families  top1 = %d/%d", &top1, &n);
    CHECK(n == total && top1 >= total * 3 / 4); /* the rule is easy to learn */
    if (n != total || top1 < total * 3 / 4)
        printf("%s", out);
    CHECK(test_contains(out, "extrapolated on "));

    /* the folds on threads: the same results whatever their number */
    static char one[sizeof out];
    snprintf(args, sizeof args, "--db %s --families --epochs 300 --hidden 8 --jobs 1", fam_db);
    CHECK(eval(args) == 0);
    snprintf(one, sizeof one, "%s", out);
    snprintf(args, sizeof args, "--db %s --families --epochs 300 --hidden 8 --jobs 3", fam_db);
    CHECK(eval(args) == 0);
    CHECK(strcmp(one, out) == 0 && test_contains(out, "families  top1 = "));
    /* --family: only the folds named, the same lines as in the full run */
    snprintf(args, sizeof args, "--db %s --families --epochs 300 --hidden 8 --family gamma,alpha",
             fam_db);
    CHECK(eval(args) == 0);
    for (int f = 0; f < 3; f++) {
        snprintf(want, sizeof want, "family %-16s %4d layers", names[f], layers[f]);
        CHECK(test_contains(out, want) == (f != 1));
        const char *line = strstr(one, want), *end = line ? strchr(line, '\n') : NULL;
        char same[512] = "";
        if (line && end && (size_t)(end - line) < sizeof same)
            memcpy(same, line, (size_t)(end - line));
        if (f != 1) /* the fold's line is the same as in the full run */
            CHECK(same[0] && test_contains(out, same));
    }
    snprintf(want, sizeof want, "families  top1 = ");
    at = strstr(out, want);
    n = -1;
    if (at)
        sscanf(at, "families  top1 = %d/%d", &top1, &n);
    CHECK(n == layers[0] + layers[2]);
    snprintf(args, sizeof args, "--db %s --families --epochs 5 --family alpha,delta", fam_db);
    CHECK(eval(args) == 1 && test_contains(out, "no layers of a family 'delta' in the data"));
    snprintf(args, sizeof args, "--db %s --families --epochs 5 --family alpha,", fam_db);
    CHECK(eval(args) == 2 && test_contains(out, "an empty family name"));
    snprintf(args, sizeof args, "--db %s --family alpha", fam_db);
    CHECK(eval(args) == 2 && test_contains(out, "--family needs --families"));
    snprintf(args, sizeof args, "--db %s --families --jobs 0", fam_db);
    CHECK(eval(args) == 2 && test_contains(out, "--jobs 0: must be in 1..64"));

    /* no origins: refused */
    const char *plain = test_tmp_path("plain.db");
    db = perfdb_open(plain, false, 0, err, sizeof err);
    if (db) {
        const struct conv_problem q = make(8, 3, 1);
        put(db, &q, "im2col_gemm", 1.0);
        perfdb_close(db);
    }
    snprintf(args, sizeof args, "--db %s --families --epochs 5", plain);
    CHECK(eval(args) == 1 && test_contains(out, "no real layers with a family"));
    snprintf(args, sizeof args, "--db %s --families --model %s", plain, test_tmp_path("m"));
    CHECK(eval(args) == 2 && test_contains(out, "--families trains its own models"));
}

int main(void) {
    test_tmpdir("eval");
    const char *path = test_tmp_path("perf.db");
    char err[PERFDB_ERROR_MAX], args[1024];
    struct perfdb *db = perfdb_open(path, false, 0, err, sizeof err);
    CHECK(db != NULL);
    const struct conv_problem one = make(16, 1, 1), dw = make(16, 3, 16);
    /* the rules pick onednn_gemm, which these databases do not measure: the
     * first measured solver of their ranking is gemm_1x1 */
    CHECK(strcmp(solver_get(heur_rules_solver(&one))->name, "onednn_gemm") == 0);
    CHECK(first_measured_is(&one, "gemm_1x1", "im2col_gemm"));
    CHECK(strcmp(solver_get(heur_rules_solver(&dw))->name, "depthwise") == 0);
    if (db) {
        put(db, &one, "gemm_1x1", 2.0);
        put(db, &one, "im2col_gemm", 1.0);
        put(db, &dw, "depthwise", 1.0);
        put(db, &dw, "im2col_gemm", 3.0);
        put(db, &dw, "solver_from_the_future", 0.5); /* ignored, said so */
        /* records of solvers that do not apply to their problem (tuned
         * before a rule refused them): no contenders, not labels, said so;
         * a problem left with none is no problem */
        put(db, &one, "winograd_f4x3", 0.1);
        put(db, &dw, "direct", 0.2); /* direct refuses packed depthwise */
        const struct conv_problem five = make(16, 5, 1);
        put(db, &five, "winograd_f4x3", 0.1);
        perfdb_close(db);
    }
    snprintf(args, sizeof args, "--db %s", path);
    CHECK(eval(args) == 0);
    CHECK(test_contains(out, "eval: ranking rules on 2 problems of avx512-2c-2t") &&
          test_contains(out, "all       top1 = 1/2 (50.0%)"));
    const int top3 = 1 + in_rules_top3(&one, "im2col_gemm");
    char want[64];
    snprintf(want, sizeof want, "top3 = %d/2", top3);
    CHECK(test_contains(out, want));
    snprintf(want, sizeof want, "geomean regret = %.3f\n", sqrt(2.0));
    CHECK(test_contains(out, want));
    CHECK(test_contains(out, "within 5% = 1/2 (50.0%)")); /* the hit; the miss is 2x */
    CHECK(test_contains(out, "2.00x") &&
          test_contains(out, "gemm_1x1 2.0000 ms, fastest im2col_gemm 1.0000 ms"));
    CHECK(test_contains(out, "8 records: 4 used, 1 of unknown solvers, 3 of solvers that no "
                             "longer apply"));
    CHECK(test_contains(out, "held-out  top1 = "));

    /* --misses lists exactly the held-out problems whose pick is not the
     * fastest: 24 1x1 problems where the rules' gemm_1x1 is the slower one
     * (one in five is held out, by a hash of the key) */
    const char *miss_db = test_tmp_path("misses.db");
    struct perfdb *mdb = perfdb_open(miss_db, false, 0, err, sizeof err);
    CHECK(mdb != NULL);
    for (int64_t c = 4; mdb && c <= 96; c += 4) {
        const struct conv_problem q = make(c, 1, 1);
        put(mdb, &q, "gemm_1x1", 2.0);
        put(mdb, &q, "im2col_gemm", 1.0);
    }
    perfdb_close(mdb);
    snprintf(args, sizeof args, "--db %s --misses", miss_db);
    CHECK(eval(args) == 0);
    int held_n = -1, held_top1 = -1, listed = 0;
    const char *h = strstr(out, "held-out  top1 = ");
    if (h)
        sscanf(h, "held-out  top1 = %d/%d", &held_top1, &held_n);
    for (const char *at = strstr(out, "miss "); at; at = strstr(at + 1, "miss "))
        listed++;
    printf("held out: %d, misses listed: %d\n", held_n, listed);
    CHECK(held_n > 0 && held_top1 == 0 && listed == held_n);
    CHECK(test_contains(out, "gemm_1x1 2.0000 ms, fastest im2col_gemm 1.0000 ms"));

    families();

    snprintf(args, sizeof args, "--db %s --machine avx2-8c-8t", path);
    CHECK(eval(args) == 1 && test_contains(out, "no measured problems for machine avx2-8c-8t"));
    snprintf(args, sizeof args, "--db %s --ranking model", path);
    CHECK(eval(args) == 2 && test_contains(out, "unknown") && test_contains(out, "'--ranking'"));
    CHECK(eval("--db /nonexistent/perf.db") == 1 && test_contains(out, "/nonexistent/perf.db"));
    CHECK(eval("--help") == 0 && test_contains(out, "top-1"));
    test_tmpdir_remove();
    return test_finish("test_cli_eval");
}
