/* test_ranking_model.c -- the trained model in immediate mode, end to end
 * in fresh processes: a model trained (convsel train) on a synthetic rule
 * (1x1: gemm_1x1 3x faster than im2col_gemm; otherwise the reverse) ranks
 * AUTO's choice by that rule with predicted times; CONVSEL_AI_HEUR=0
 * switches it off; a corrupt model, metadata for another machine, a model
 * for another CPU class only, or no model directory fall back to the rules
 * with one warning, and the convolution is still verified. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/perfdb.h"
#include "heur/ranking_model.h"
#include "synthetic_db.h"
#include "testutil.h"
#include "util/cpu.h"

static char out[1 << 15];

/* Runs convsel conv on a 1x1 or a 3x3 problem with the given environment. */
static int conv(const char *env, int filter) {
    char all_env[2048], line[256];
    snprintf(all_env, sizeof all_env, "CONVSEL_DB=%s %s", test_tmp_path("empty.db"), env);
    snprintf(line, sizeof line,
             "conv -n 1 -c 16 -k 32 -H 12 -W 12 -y %d -x %d -p %d -q %d --threads 2 -V 1 -i 2",
             filter, filter, filter / 2, filter / 2);
    return test_convsel(all_env, line, out, sizeof out);
}

static int count(const char *needle) {
    int n = 0;
    for (const char *at = strstr(out, needle); at; at = strstr(at + 1, needle))
        n++;
    return n;
}

/* The files' names, written in one place for reader and writer. */
static void file_names(void) {
    char buf[RANKING_MODEL_PATH_MAX], err[256];
    CHECK(ranking_model_path("/m", "avx512", RANKING_MODEL_NET, buf, sizeof buf) &&
          strcmp(buf, "/m/avx512.tn.model") == 0);
    CHECK(ranking_model_path("/m", "avx512", RANKING_MODEL_METADATA, buf, sizeof buf) &&
          strcmp(buf, "/m/avx512_metadata.tn.model") == 0);
    CHECK(!ranking_model_path("/a/long/dir", "avx512", RANKING_MODEL_NET, buf, 12));
    char dir[RANKING_MODEL_PATH_MAX + 8];
    memset(dir, 'd', sizeof dir - 1);
    dir[sizeof dir - 1] = '\0';
    CHECK(ranking_model_open(dir, "avx512", err, sizeof err) == NULL &&
          test_contains(err, "path too long"));
}

int main(void) {
    file_names();
    test_tmpdir("rankmodel");
    char machine[PERFDB_MACHINE_MAX], cmd[4096], env[1024], good[600], bad[600];
    machine_signature(2, machine, sizeof machine);
    CHECK(synthetic_db_write(test_tmp_path("perf.db"), machine) > 500);
    const char *isa = cpu_isa_name(cpu_best_isa()); /* train names the files by it */
    const char *other_isa = cpu_best_isa() == CPU_GENERIC ? "avx2" : "generic";
    snprintf(good, sizeof good, "%s", test_tmp_path("good"));
    snprintf(bad, sizeof bad, "%s", test_tmp_path("bad"));
    snprintf(cmd, sizeof cmd, "mkdir -p %s %s", good, bad);
    CHECK(test_run_command(cmd, out, sizeof out) == 0);
    snprintf(cmd, sizeof cmd, "train --db %s --out %s --epochs 150", test_tmp_path("perf.db"),
             good);
    CHECK(test_convsel(NULL, cmd, out, sizeof out) == 0);
    snprintf(cmd, sizeof cmd, "%s/%s.tn.model", good, isa);
    CHECK(test_contains(out, cmd));

    snprintf(env, sizeof env, "CONVSEL_MODEL_DIR=%s", good);
    CHECK(conv(env, 1) == 0 && test_contains(out, "(auto: model)") &&
          test_contains(out, "ranking   1 gemm_1x1") && test_contains(out, "verified"));
    CHECK(test_contains(out, " ms      model")); /* a predicted time, not "-" */
    CHECK(!test_contains(out, "extrapolates"));  /* inside the training range */
    /* a 7x7 filter: outside the range of fil_h (1..5) of the dense layers
     * trained on, said with the feature; the pick is the safe one */
    CHECK(conv(env, 7) == 0 && test_contains(out, "(auto: model)") &&
          test_contains(out, "extrap    the model extrapolates here: fil_h = 7 is outside its "
                             "training range [1, 5] for dense layers") &&
          test_contains(out, "the first pick is the applicable solver with the mildest worst "
                             "cases on this class of layer") &&
          test_contains(out, "verified"));
    CHECK(conv(env, 3) == 0 && test_contains(out, "ranking   1 im2col_gemm") &&
          test_contains(out, "(auto: model)") && test_contains(out, "verified"));

    snprintf(env, sizeof env, "CONVSEL_AI_HEUR=0 CONVSEL_MODEL_DIR=%s", good);
    CHECK(conv(env, 1) == 0 && test_contains(out, "(auto: rules)") &&
          test_contains(out, "model     off (CONVSEL_AI_HEUR=0)"));
    CHECK(conv("CONVSEL_MODEL_DIR=", 1) == 0 &&
          test_contains(out, "model     none (CONVSEL_MODEL_DIR is empty)") &&
          test_contains(out, "(auto: rules)"));

    /* only a model for another class of CPU: not used */
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/other && cp %s/%s.tn.model %s/other/%s.tn.model && "
             "sed 's/\"target\":[^,]*/\"target\":\t\"%s\"/' %s/%s_metadata.tn.model > "
             "%s/other/%s_metadata.tn.model",
             bad, good, isa, bad, other_isa, other_isa, good, isa, bad, other_isa);
    CHECK(test_run_command(cmd, out, sizeof out) == 0);
    snprintf(env, sizeof env, "CONVSEL_MODEL_DIR=%s/other", bad);
    CHECK(conv(env, 1) == 0 && test_contains(out, "(auto: rules)") &&
          test_contains(out, "_metadata.tn.model: does not exist") &&
          test_contains(out, "verified"));

    /* a corrupt model beside valid metadata: one warning, the rules, verified */
    snprintf(cmd, sizeof cmd,
             "cp %s/%s_metadata.tn.model %s/ && echo '{\"architecture\":' > %s/%s.tn.model", good,
             isa, bad, bad, isa);
    CHECK(test_run_command(cmd, out, sizeof out) == 0);
    snprintf(env, sizeof env, "CONVSEL_MODEL_DIR=%s", bad);
    CHECK(conv(env, 1) == 0 && test_contains(out, "(auto: rules)") &&
          test_contains(out, "verified") && test_contains(out, ".tn.model"));
    CHECK(count("warning: ranking model not used") == 1);

    /* metadata trained for another machine */
    snprintf(cmd, sizeof cmd,
             "cp %s/%s.tn.model %s/ && sed -i 's/\"target\":[^,]*/\"target\":\t\"riscv-1c-1t\"/' "
             "%s/%s_metadata.tn.model",
             good, isa, bad, bad, isa);
    CHECK(test_run_command(cmd, out, sizeof out) == 0);
    CHECK(conv(env, 1) == 0 && test_contains(out, "trained for riscv-1c-1t, not ") &&
          test_contains(out, "(auto: rules)"));
    test_tmpdir_remove();
    return test_finish("test_ranking_model");
}
