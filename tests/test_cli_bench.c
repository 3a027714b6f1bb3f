/* test_cli_bench.c -- `convsel bench` as a user runs it: a small problem
 * file gives the table, the geomean line and a CSV with every variant;
 * malformed files are refused with the line and what is wrong (exit 2). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/perfdb.h"
#include "testutil.h"

static char out[1 << 16];

static const char header[] =
    "name,n,c,h,w,k,r,s,pad_h,pad_w,stride_h,stride_w,dil_h,dil_w,groups\n";

static const char *write_file(const char *name, const char *text) {
    const char *path = test_tmp_path(name);
    FILE *f = fopen(path, "w");
    if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0)
        fprintf(stderr, "cannot write %s\n", path);
    return path;
}

static int bench_db(const char *db, const char *args) {
    char env[512], line[1024];
    snprintf(env, sizeof env, "CONVSEL_DB=%s", test_tmp_path(db));
    snprintf(line, sizeof line, "bench %s", args);
    return test_convsel(env, line, out, sizeof out);
}

/* An empty database: immediate mode ranks by the rules whatever the user has tuned. */
static int bench(const char *args) {
    return bench_db("empty.db", args);
}

/* The immediate pick on `name`'s line: "<pick> <ratio> (<source>)" ends it. */
static bool immediate_pick(const char *name, char *pick, size_t cap, char *source) {
    char start[64];
    snprintf(start, sizeof start, "\n%s ", name);
    const char *at = strstr(out, start);
    const char *end = at ? strchr(at + 1, '\n') : NULL;
    if (!end)
        return false;
    char line[1024], *tok[64];
    snprintf(line, sizeof line, "%.*s", (int)(end - at - 1), at + 1);
    int n = 0;
    for (char *t = strtok(line, " "); t && n < 64; t = strtok(NULL, " "))
        tok[n++] = t;
    if (n < 3)
        return false;
    snprintf(pick, cap, "%s", tok[n - 3]);
    snprintf(source, 32, "%s", tok[n - 1]);
    return true;
}

/* bench's immediate pick is made in the bench's weights mode: a database
 * whose constant-weights timings put winograd_f4x3 first, and whose
 * per-call costs put it last. */
static void weights_mode(void) {
    char err[PERFDB_ERROR_MAX], sig[PERFDB_MACHINE_MAX], args[1024], good[512], text[512];
    snprintf(text, sizeof text, "%ssmall_3x3,1,16,12,12,16,3,3,1,1,1,1,1,1,1\n", header);
    /* test_tmp_path's buffer is reused: a copy */
    snprintf(good, sizeof good, "%s", write_file("priced.csv", text));
    struct perfdb *db = perfdb_open(test_tmp_path("priced.db"), false, 0, err, sizeof err);
    CHECK(db != NULL);
    if (!db)
        return;
    machine_signature(2, sig, sizeof sig);
    const char *solvers[2] = {"winograd_f4x3", "im2col_gemm"};
    for (int i = 0; i < 2; i++) {
        struct perfdb_record r = {.median_ms = 0.001 * (i + 1), .runs = 5};
        r.min_ms = r.max_ms = r.median_ms;
        snprintf(r.machine, sizeof r.machine, "%s", sig);
        snprintf(r.solver, sizeof r.solver, "%s", solvers[i]);
        CHECK(problem_key_parse("16-12-12-3x3-16-12-12-1-1x1-1x1-1x1-g1-NCHW-FP32-F", &r.problem,
                                err, sizeof err) == CONVSEL_STATUS_SUCCESS);
        CHECK(perfdb_put(db, &r, 1, err, sizeof err));
    }
    struct machine_limits l = {.present = true, .peak_gflops = 400, .levels = 1};
    l.level_bytes[0] = 16384, l.level_gbs[0] = 500;
    l.weights = (struct weights_costs){.count = 1, .solver = {"winograd_f4x3"}, .ns = {{-1, 1e3}}};
    CHECK(perfdb_put_limits(db, sig, &l, err, sizeof err));
    perfdb_close(db);
    char pick[64], source[32];
    snprintf(args, sizeof args, "--problems %s --threads 2 --min-time 0.05", good);
    CHECK(bench_db("priced.db", args) == 0 &&
          immediate_pick("small_3x3", pick, sizeof pick, source) &&
          strcmp(pick, "winograd_f4x3") == 0 && strcmp(source, "(database)") == 0);
    snprintf(args, sizeof args, "--problems %s --threads 2 --min-time 0.05 --weights per-call",
             good);
    CHECK(bench_db("priced.db", args) == 0 &&
          immediate_pick("small_3x3", pick, sizeof pick, source) &&
          strcmp(pick, "im2col_gemm") == 0 && strcmp(source, "(database)") == 0);
}

int main(void) {
    test_tmpdir("bench");
    char text[2048], args[1024];
    snprintf(text, sizeof text,
             "%ssmall_3x3,1,16,12,12,16,3,3,1,1,1,1,1,1,1\n# a comment line\n"
             "small_1x1,2,8,10,10,24,1,1,0,0,1,1,1,1,1\nsmall_dw,1,8,9,9,8,3,3,1,1,2,2,1,1,8\n",
             header);
    const char *good = write_file("good.csv", text);
    snprintf(args, sizeof args, "--problems %s --threads 2 --csv %s", good,
             test_tmp_path("out.csv"));
    CHECK(bench(args) == 0);
    CHECK(strstr(out, "small_3x3") && strstr(out, "small_1x1") && strstr(out, "small_dw"));
    CHECK(strstr(out, "geomean oracle/onednn-auto = ") && strstr(out, "(3 problems)"));
    /* immediate mode picks an applicable, timed solver on each: at most as fast as the oracle */
    double imm = 0;
    int top1 = -1, of = 0;
    const char *at = strstr(out, "geomean immediate/oracle = ");
    CHECK(at && sscanf(at, "geomean immediate/oracle = %lf (3 problems)", &imm) == 1);
    CHECK(imm > 0 && imm <= 1.0);
    CHECK(strstr(out, "geomean immediate/onednn-auto = ") != NULL);
    at = strstr(out, "top1 = ");
    CHECK(at && sscanf(at, "top1 = %d/%d", &top1, &of) == 2 && of == 3 && top1 >= 0 && top1 <= 3);
    CHECK(strstr(out, "(rules)") != NULL);
    /* hybrid's first calls, when any measured: the max is at least the
     * median, and a first call costs at least the runs it timed */
    const char *fc = strstr(out, "hybrid first calls: ");
    if (fc) {
        int measured = 0, each = 0;
        double med = 0, most = -1, steady = 0, steady_most = -1;
        CHECK(sscanf(fc,
                     "hybrid first calls: %d measured, their cost median %lfx (max %lfx) the runs "
                     "they timed, %lfx (max %lfx) the candidates' steady runs (%d of each)",
                     &measured, &med, &most, &steady, &steady_most, &each) == 6 &&
              measured > 0 && most >= med && med >= 1 && steady_most >= steady && steady > 0 &&
              each == 2);
        CHECK(strstr(out, "x the runs it timed, ") != NULL);
        /* with the set-ups counted it costs less than against the runs alone */
        const char *ws = strstr(fc + 1, "hybrid first calls: ");
        double set_med = 0, set_most = -1;
        CHECK(ws &&
              sscanf(ws, "hybrid first calls: %lfx (max %lfx) the runs and set-ups they timed",
                     &set_med, &set_most) == 2 &&
              set_most >= set_med && set_med > 0 && set_med <= med && set_most <= most);
        CHECK(strstr(out, "x with their set-ups of ") != NULL);
    } /* no database here: the rules chose */
    CHECK(strstr(out, "FAILED") == NULL);
    /* the peak measured again at the end, as a ratio to the start's */
    const char *pe = strstr(out, "\npeak at the end: ");
    double pend = 0, pmoved = 0;
    CHECK(pe &&
          sscanf(pe, "\npeak at the end: %lf GFLOP/s (%lfx the start's)", &pend, &pmoved) == 2 &&
          pend > 0 && pmoved > 0);
    const char *ps = strstr(out, "peak: ");
    double pstart = 0;
    CHECK(ps && sscanf(ps, "peak: %lf", &pstart) == 1 && pstart > 0 &&
          fabs(pmoved - pend / pstart) <= 0.006 + 0.01 * pmoved);
    char csv_path[512];
    snprintf(csv_path, sizeof csv_path, "%s", test_tmp_path("out.csv"));
    FILE *f = fopen(csv_path, "r");
    int lines = 0, oracle = 0, dnnl = 0;
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        lines++;
        oracle += strstr(line, ",oracle,") != NULL;
        dnnl += strstr(line, ",onednn-auto,") != NULL;
    }
    if (f)
        fclose(f);
    CHECK(lines > 1 + 3 * 3 && oracle == 3 && dnnl == 3); /* header + >= 2 solvers each */
    CHECK(strstr(out, "weights: constant") != NULL);      /* the default, said */

    /* weights transformed on every call: the same problems, verified too */
    snprintf(args, sizeof args, "--problems %s --threads 2 --weights per-call", good);
    CHECK(bench(args) == 0 && strstr(out, "weights: per-call") && !strstr(out, "FAILED") &&
          strstr(out, "(3 problems)"));
    snprintf(args, sizeof args, "--problems %s --weights sometimes", good);
    CHECK(bench(args) == 2 && strstr(out, "--weights sometimes: must be constant or per-call"));
    /* rounds for at least --min-time seconds per problem: 0 gives the minimum
     * of 5; out of range or not a number is refused */
    snprintf(args, sizeof args, "--problems %s --min-time 0", good);
    CHECK(bench(args) == 0 && strstr(out, "(3 problems)") && !strstr(out, "FAILED"));
    snprintf(args, sizeof args, "--problems %s --min-time 61", good);
    CHECK(bench(args) == 2 && strstr(out, "--min-time 61: must be in 0..60 seconds"));
    snprintf(args, sizeof args, "--problems %s --min-time inf", good);
    CHECK(bench(args) == 2 && strstr(out, "'--min-time' expects a finite number, got 'inf'"));

    weights_mode();

    /* malformed files */
    snprintf(args, sizeof args, "--problems %s", write_file("hdr.csv", "name,n,c\nx,1,2\n"));
    CHECK(bench(args) == 2 && strstr(out, "hdr.csv line 1: the header lacks column 'h'"));
    snprintf(text, sizeof text, "%sbad,1,16,x12,12,16,3,3,1,1,1,1,1,1,1\n", header);
    snprintf(args, sizeof args, "--problems %s", write_file("int.csv", text));
    CHECK(bench(args) == 2 && strstr(out, "int.csv line 2, column 4: h: 'x12' is not an integer"));
    snprintf(text, sizeof text, "%sbad,1,16,12,12,16,3,3,1,1,1,1,1,1,1,9\n", header);
    snprintf(args, sizeof args, "--problems %s", write_file("cols.csv", text));
    CHECK(bench(args) == 2 && strstr(out, "cols.csv line 2: 16 fields, the header has 15"));
    snprintf(args, sizeof args, "--problems %s", write_file("empty.csv", header));
    CHECK(bench(args) == 2 && strstr(out, "no problems"));
    snprintf(text, sizeof text, "%sbad,1,0,12,12,16,3,3,1,1,1,1,1,1,1\n", header);
    snprintf(args, sizeof args, "--problems %s", write_file("zero.csv", text));
    CHECK(bench(args) == 2 && strstr(out, "zero.csv line 2, column 3: c = 0: must be >= 1"));
    CHECK(bench("--problems /nonexistent.csv") == 2 &&
          strstr(out, "--problems /nonexistent.csv: does not exist"));
    CHECK(bench("") == 2 && strstr(out, "--problems FILE is required"));
    CHECK(bench("--help") == 0 && strstr(out, "geomean oracle/onednn-auto"));

    test_tmpdir_remove();
    return test_finish("test_cli_bench");
}
