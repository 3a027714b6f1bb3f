/* test_cli_train.c -- `convsel train` on a synthetic database whose answer
 * is a rule the model must learn (1x1 filters: gemm_1x1 is 3x faster than
 * im2col_gemm; other filters: the reverse; times scale with the work).
 * The held-out top-1 must be high, the written model must load (its
 * embedded test passes) with metadata the reader accepts, `convsel eval
 * --model` (the library's runtime) must score it exactly as the trainer
 * did, the same seed must give the same files, and misuse must be a clear
 * error. --validate scores a quarter of the training problems instead of
 * the held-out ones. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/perfdb.h"
#include "heur/features.h"
#include "nn/model.h"
#include "synthetic_db.h"
#include "testutil.h"

static char out[1 << 15];

static int train(const char *args) {
    char line[2048];
    snprintf(line, sizeof line, "train %s", args);
    return test_convsel(NULL, line, out, sizeof out);
}

static int scan_top1(const char *who) {
    const char *at = strstr(out, "held-out problems");
    at = at ? strstr(at, who) : NULL;
    int top1 = -1, n = 0;
    if (!at || sscanf(at + strlen(who), " top1 = %d/%d", &top1, &n) != 2 || n == 0)
        return -1;
    return 100 * top1 / n;
}

/* N of the first "<what> (N" in out, or -1. */
static int scan_count(const char *what) {
    const char *at = strstr(out, what);
    int n = -1;
    if (!at || sscanf(at + strlen(what), " (%d", &n) != 1)
        return -1;
    return n;
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    static char buf[2][1 << 20];
    static int which;
    char *b = buf[which++ % 2];
    const size_t n = fread(b, 1, sizeof buf[0] - 1, f);
    b[n] = '\0';
    fclose(f);
    return b;
}

/* After a train run in `out`: whether `convsel eval --model dir` (the
 * library's runtime) scores the held-out problems exactly as the trainer
 * reported. */
static bool runtime_agrees(const char *db, const char *dir) {
    char trained[256] = "", evaluated[256] = "", cmd[2048];
    const char *at = strstr(out, "held-out problems");
    at = at ? strstr(at, "model     top1 = ") : NULL;
    if (at)
        sscanf(at + 10, "%255[^\n]", trained);
    snprintf(cmd, sizeof cmd, "eval --db %s --model %s", db, dir);
    CHECK(test_convsel(NULL, cmd, out, sizeof out) == 0);
    CHECK(test_contains(out, "eval: ranking model ") && test_contains(out, "/avx512.tn.model"));
    at = strstr(out, "held-out  top1 = ");
    if (at)
        sscanf(at + 10, "%255[^\n]", evaluated);
    printf("trainer: %s\nruntime: %s\n", trained, evaluated);
    return trained[0] && strcmp(trained, evaluated) == 0;
}

int main(void) {
    test_tmpdir("train");
    const char *db = test_tmp_path("perf.db");
    CHECK(synthetic_db_write(db, "avx512-2c-2t") > 500);
    char args[2048], dir_a[600], dir_b[600];
    snprintf(dir_a, sizeof dir_a, "%s", test_tmp_path("a"));
    snprintf(dir_b, sizeof dir_b, "%s", test_tmp_path("b"));
    snprintf(args, sizeof args, "mkdir -p %s %s", dir_a, dir_b);
    CHECK(system(args) == 0);

    snprintf(args, sizeof args, "--db %s --out %s --epochs 150 --seed 3", db, dir_a);
    CHECK(train(args) == 0);
    CHECK(test_contains(out, "loaded back: 1 embedded test passed"));
    const int model_top1 = scan_top1("model");
    printf("held-out top1 on the synthetic rule: %d%%\n", model_top1);
    CHECK(model_top1 >= 95);
    const int trained_all = scan_count("training problems");
    const int held_out = scan_count("held-out problems");

    /* the files: the runtime loads the model, the reader accepts the metadata */
    char path[700];
    snprintf(path, sizeof path, "%s/avx512.tn.model", dir_a);
    struct nn_model *m = NULL;
    char err[NN_ERROR_MAX];
    CHECK(nn_model_load_file(path, NULL, &m, err, sizeof err) == NN_OK);
    CHECK(m && nn_model_num_tests(m) == 1);
    nn_model_free(m);
    snprintf(path, sizeof path, "%s/avx512_metadata.tn.model", dir_a);
    const char *meta_text = slurp(path);
    struct model_metadata meta;
    char merr[METADATA_ERROR_MAX];
    CHECK(meta_text && metadata_from_json(meta_text, strlen(meta_text), &meta, merr, sizeof merr));
    CHECK(meta.num_solvers == 2 && strcmp(meta.target, "avx512") == 0);
    CHECK(!meta.envelope.present); /* no limits in this database: no floor, no envelope */

    /* eval --model runs the written files through the runtime: the same scores */
    CHECK(runtime_agrees(db, dir_a));
    snprintf(args, sizeof args, "eval --db %s --model %s", db, test_tmp_path("nodir"));
    CHECK(test_convsel(NULL, args, out, sizeof out) == 1 &&
          test_contains(out, "nodir/avx512_metadata.tn.model: does not exist"));

    /* with limits: an envelope per solver, from measured / floor. The rule's
     * times are 1 or 3 ms per GFLOP; at a 2000 GFLOP/s peak (and bandwidth
     * that never binds) the floor is 0.5 ms per GFLOP, so gemm_1x1 (1x1
     * only) is 2x its floor everywhere and im2col_gemm 2x or 6x */
    const char *ldb = test_tmp_path("limits.db");
    CHECK(synthetic_db_write(ldb, "avx512-2c-2t") > 500);
    struct machine_limits lim = {
        .present = true, .method = PEAK_METHOD, .peak_gflops = 2000, .levels = 1};
    lim.level_bytes[0] = 1 << 14, lim.level_gbs[0] = 1e6;
    struct perfdb *pdb = perfdb_open(ldb, false, 0, err, sizeof err);
    CHECK(pdb && perfdb_put_limits(pdb, "avx512-2c-2t", &lim, err, sizeof err));
    perfdb_close(pdb);
    snprintf(args, sizeof args, "--db %s --out %s --epochs 20 --seed 3", ldb, dir_b);
    CHECK(train(args) == 0 && !test_contains(out, "no machine limits"));
    snprintf(path, sizeof path, "%s/avx512_metadata.tn.model", dir_b);
    meta_text = slurp(path);
    CHECK(meta_text && metadata_from_json(meta_text, strlen(meta_text), &meta, merr, sizeof merr));
    const struct estimate_envelope *e = &meta.envelope;
    const int g1 = solver_find("gemm_1x1"), ig = solver_find("im2col_gemm");
    CHECK(e->present && e->bins > 1 && e->has[g1] && e->has[ig]);
    int wide = 0;
    for (int b = 0; e->present && b < e->bins; b++) {
        CHECK(fabsf(e->lo[g1][b] - 1) < 1e-4f && fabsf(e->hi[g1][b] - 1) < 1e-4f);
        CHECK(e->lo[ig][b] > 1 - 1e-4f && e->hi[ig][b] < (float)log2(6.0) + 1e-4f);
        wide += e->hi[ig][b] > 2.5f && e->lo[ig][b] < 1.01f; /* both kinds in one bin */
    }
    CHECK(wide > 0);

    /* a hand-edited limits row: refused, naming it (it was read as absent:
     * "tuned before they were measured") */
    pdb = perfdb_open(ldb, false, 0, err, sizeof err);
    CHECK(pdb && perfdb_put_meta(pdb, "limits/avx512-2c-2t", "peak_gflops=2000 bw=16384:0", err,
                                 sizeof err));
    perfdb_close(pdb);
    snprintf(args, sizeof args, "--db %s --out %s --epochs 1", ldb, dir_b);
    CHECK(train(args) == 1 && test_contains(out, "meta row limits/avx512-2c-2t = 'peak_gflops=") &&
          !test_contains(out, "no machine limits"));

    /* --validate: a quarter of the training problems is kept out and scored
     * instead of the held-out split, which is not looked at */
    snprintf(args, sizeof args, "--db %s --out %s --epochs 150 --seed 3 --validate", db, dir_b);
    CHECK(train(args) == 0);
    const int validation = scan_count("validation problems"),
              trained = scan_count("training problems");
    printf("--validate: %d validation, %d training (of %d); held out %d\n", validation, trained,
           trained_all, held_out);
    CHECK(validation + trained == trained_all && validation > trained_all / 6 &&
          validation < trained_all / 3);
    CHECK(test_contains(out, "held-out problems (") &&
          test_contains(out, "not scored under --validate"));
    CHECK(scan_count("held-out problems") == held_out);
    const char *at = strstr(out, "validation problems");
    int v_top1 = -1, v_n = 0;
    CHECK(at && (at = strstr(at, "model")) && sscanf(at + 5, " top1 = %d/%d", &v_top1, &v_n) == 2);
    printf("validation top1 on the synthetic rule: %d/%d\n", v_top1, v_n);
    CHECK(v_n == validation && v_top1 * 100 >= 95 * v_n);

    /* reproducible: same data and seed, the same bytes */
    snprintf(args, sizeof args, "--db %s --out %s --epochs 150 --seed 3", db, dir_b);
    CHECK(train(args) == 0);
    char pa[700], pb[700];
    snprintf(pa, sizeof pa, "%s/avx512.tn.model", dir_a);
    snprintf(pb, sizeof pb, "%s/avx512.tn.model", dir_b);
    const char *a = slurp(pa), *b = slurp(pb);
    CHECK(a && b && strcmp(a, b) == 0);

    /* an ensemble: three members side by side and an Average layer, which the
     * runtime evaluates exactly as the trainer does */
    snprintf(args, sizeof args, "--db %s --out %s --epochs 40 --ensemble 3", db, dir_b);
    CHECK(train(args) == 0 && test_contains(out, "model 3/3 (seed 3)") &&
          test_contains(out, "loaded back: 1 embedded test passed"));
    CHECK(runtime_agrees(db, dir_b));
    snprintf(args, sizeof args, "%s/avx512.tn.model", dir_b);
    const char *ens = slurp(args);
    CHECK(ens && strstr(ens, "\"Average\"") && strstr(ens, "m2_hidden1"));
    snprintf(args, sizeof args, "--db %s --out %s --ensemble 9", db, dir_b);
    CHECK(train(args) == 2 && test_contains(out, "--ensemble 9: must be in 1..8"));

    /* the listwise ranking term (its gradient: test_train_mlp): trains to the
     * same rule and writes a model the runtime agrees with; out of range or
     * not a number is refused */
    snprintf(args, sizeof args, "--db %s --out %s --epochs 150 --seed 3 --rank-weight 0.5", db,
             dir_b);
    CHECK(train(args) == 0 && test_contains(out, "loaded back: 1 embedded test passed"));
    const int ranked_top1 = scan_top1("model");
    printf("held-out top1 with --rank-weight 0.5: %d%%\n", ranked_top1);
    CHECK(ranked_top1 >= 95);
    CHECK(runtime_agrees(db, dir_b));
    const char *ranked = slurp(pb), *plain = slurp(pa); /* same seed and epochs, no term */
    CHECK(ranked && plain && strcmp(ranked, plain) != 0);
    snprintf(args, sizeof args, "--db %s --out %s --rank-weight -1", db, dir_b);
    CHECK(train(args) == 2 && test_contains(out, "--rank-weight -1: must be in 0..100"));
    snprintf(args, sizeof args, "--db %s --out %s --rank-weight nan", db, dir_b);
    CHECK(train(args) == 2 &&
          test_contains(out, "'--rank-weight' expects a finite number, got 'nan'"));
    snprintf(args, sizeof args, "--db %s --out %s --rank-weight 1x", db, dir_b);
    CHECK(train(args) == 2 && test_contains(out, "expects a finite number"));

    /* --exclude leaves listed problems out (two of the three exist): 648 - 2 */
    const char *csv = test_tmp_path("suite.csv");
    FILE *f = fopen(csv, "w");
    if (f) {
        fputs("name,n,c,h,w,k,r,s,pad_h,pad_w,stride_h,stride_w,dil_h,dil_w,groups\n"
              "a,1,8,12,12,16,3,3,1,1,1,1,1,1,1\nb,1,96,30,30,192,1,1,0,0,1,1,1,1,1\n"
              "c,1,7,12,12,16,3,3,1,1,1,1,1,1,1\n",
              f);
        fclose(f);
    }
    snprintf(args, sizeof args, "--db %s --out %s --epochs 1 --exclude %s", db, dir_b, csv);
    CHECK(train(args) == 0 && test_contains(out, "2 problems left out") &&
          test_contains(out, "train: avx512-2c-2t: 646 problems"));
    snprintf(args, sizeof args, "--db %s --out %s --epochs 1 --exclude %s", db, dir_b,
             test_tmp_path("none.csv"));
    CHECK(train(args) == 2 && test_contains(out, "none.csv"));

    /* misuse */
    CHECK(train("--out /tmp") == 2 && test_contains(out, "--db and --out are required"));
    snprintf(args, sizeof args, "--db %s --out %s", db, test_tmp_path("nodir"));
    CHECK(train(args) == 2 && test_contains(out, "not a directory"));
    snprintf(args, sizeof args, "--db %s --out %s --hidden 0", db, dir_a);
    CHECK(train(args) == 2 && test_contains(out, "--hidden 0: must be in 1..256"));
    snprintf(args, sizeof args, "--db /nonexistent.db --out %s", dir_a);
    CHECK(train(args) == 1 && test_contains(out, "/nonexistent.db"));
    CHECK(synthetic_db_write(db, "avx2-4c-4t") > 500); /* a second machine in the same file */
    snprintf(args, sizeof args, "--db %s --out %s --epochs 1", db, dir_a);
    CHECK(train(args) == 1 && test_contains(out, "several machine signatures"));
    snprintf(args, sizeof args, "--db %s --out %s --epochs 1 --machine avx2-4c-4t", db, dir_a);
    CHECK(train(args) == 0 && test_contains(out, "train: avx2-4c-4t:"));
    snprintf(args, sizeof args, "--db %s --out %s --machine riscv-1c-1t", db, dir_a);
    CHECK(train(args) == 1 && test_contains(out, "no measured problems for machine riscv"));
    test_tmpdir_remove();
    return test_finish("test_cli_train");
}
