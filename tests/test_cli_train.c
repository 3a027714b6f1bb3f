/* test_cli_train.c -- `convsel train` on a synthetic database whose answer
 * is a rule the model must learn (1x1 filters: gemm_1x1 is 3x faster than
 * im2col_gemm; other filters: the reverse; times scale with the work).
 * The held-out top-1 must be high, the written model must load (its
 * embedded test passes) with metadata the reader accepts, the same seed
 * must give the same files, and misuse must be a clear error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/perfdb.h"
#include "heur/features.h"
#include "nn/model.h"
#include "testutil.h"

static char out[1 << 15];

static int train(const char *args) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s train %s", test_convsel_bin(), args);
    return test_run_command(cmd, out, sizeof out);
}

static void put(struct perfdb *db, const char *machine, const struct conv_problem *p,
                const char *solver, double ms) {
    struct perfdb_record r = {.problem = *p, .median_ms = ms, .min_ms = ms, .max_ms = ms};
    snprintf(r.machine, sizeof r.machine, "%s", machine);
    snprintf(r.solver, sizeof r.solver, "%s", solver);
    char err[PERFDB_ERROR_MAX];
    if (!perfdb_put(db, &r, 1, err, sizeof err))
        fprintf(stderr, "put: %s\n", err);
}

static void synthetic(const char *path, const char *machine) {
    char err[PERFDB_ERROR_MAX];
    struct perfdb *db = perfdb_open(path, false, 0, err, sizeof err);
    CHECK(db != NULL);
    int made = 0;
    for (int c = 4; db && c <= 96; c += 4)
        for (int hw = 6; hw <= 30; hw += 3)
            for (int f = 1; f <= 5; f += 2) {
                struct conv_problem p = {.n = 1,
                                         .c = c,
                                         .h = hw,
                                         .w = hw,
                                         .k = 2 * c,
                                         .r = f,
                                         .s = f,
                                         .pad_h = f / 2,
                                         .pad_w = f / 2,
                                         .stride_h = 1,
                                         .stride_w = 1,
                                         .dil_h = 1,
                                         .dil_w = 1,
                                         .groups = 1};
                if (problem_validate(&p, err, sizeof err) != CONVSEL_STATUS_SUCCESS)
                    continue;
                const double work = problem_flops(&p) * 1e-9;
                put(db, machine, &p, "gemm_1x1", f == 1 ? work : 3 * work);
                put(db, machine, &p, "im2col_gemm", f == 1 ? 3 * work : work);
                made++;
            }
    perfdb_close(db);
    CHECK(made > 500);
}

static int scan_top1(const char *who) {
    const char *at = strstr(out, "held-out problems");
    at = at ? strstr(at, who) : NULL;
    int top1 = -1, n = 0;
    if (!at || sscanf(at + strlen(who), " top1 = %d/%d", &top1, &n) != 2 || n == 0)
        return -1;
    return 100 * top1 / n;
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

int main(void) {
    test_tmpdir("train");
    const char *db = test_tmp_path("perf.db");
    synthetic(db, "avx512-2c-2t");
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

    /* the files: the runtime loads the model, the reader accepts the metadata */
    char path[700];
    snprintf(path, sizeof path, "%s/avx512-2c-2t.tn.model", dir_a);
    struct nn_model *m = NULL;
    char err[NN_ERROR_MAX];
    CHECK(nn_model_load_file(path, NULL, &m, err, sizeof err) == NN_OK);
    CHECK(m && nn_model_num_tests(m) == 1);
    nn_model_free(m);
    snprintf(path, sizeof path, "%s/avx512-2c-2t_metadata.tn.model", dir_a);
    const char *meta_text = slurp(path);
    struct model_metadata meta;
    char merr[METADATA_ERROR_MAX];
    CHECK(meta_text && metadata_from_json(meta_text, strlen(meta_text), &meta, merr, sizeof merr));
    CHECK(meta.num_solvers == 2 && strcmp(meta.target, "avx512-2c-2t") == 0);

    /* reproducible: same data and seed, the same bytes */
    snprintf(args, sizeof args, "--db %s --out %s --epochs 150 --seed 3", db, dir_b);
    CHECK(train(args) == 0);
    char pa[700], pb[700];
    snprintf(pa, sizeof pa, "%s/avx512-2c-2t.tn.model", dir_a);
    snprintf(pb, sizeof pb, "%s/avx512-2c-2t.tn.model", dir_b);
    const char *a = slurp(pa), *b = slurp(pb);
    CHECK(a && b && strcmp(a, b) == 0);

    /* misuse */
    CHECK(train("--out /tmp") == 2 && test_contains(out, "--db and --out are required"));
    snprintf(args, sizeof args, "--db %s --out %s", db, test_tmp_path("nodir"));
    CHECK(train(args) == 2 && test_contains(out, "not a directory"));
    snprintf(args, sizeof args, "--db %s --out %s --hidden 0", db, dir_a);
    CHECK(train(args) == 2 && test_contains(out, "--hidden in 1.."));
    snprintf(args, sizeof args, "--db /nonexistent.db --out %s", dir_a);
    CHECK(train(args) == 1 && test_contains(out, "/nonexistent.db"));
    synthetic(db, "avx2-4c-4t"); /* a second machine in the same file */
    snprintf(args, sizeof args, "--db %s --out %s --epochs 1", db, dir_a);
    CHECK(train(args) == 1 && test_contains(out, "several machine signatures"));
    snprintf(args, sizeof args, "--db %s --out %s --epochs 1 --machine avx2-4c-4t", db, dir_a);
    CHECK(train(args) == 0 && test_contains(out, "train: avx2-4c-4t:"));
    snprintf(args, sizeof args, "--db %s --out %s --machine riscv-1c-1t", db, dir_a);
    CHECK(train(args) == 1 && test_contains(out, "no measured problems for machine riscv"));
    test_tmpdir_remove();
    return test_finish("test_cli_train");
}
