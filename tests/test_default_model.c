/* test_default_model.c -- the model shipped in models/ for this CPU's ISA:
 * with CONVSEL_MODEL_DIR unset the library finds it in the directory the
 * build was configured with, it loads with its embedded test passing, its
 * metadata names this ISA and only solvers this build has and carries
 * every guard the policy reads (bounds, limits, envelope, safe lists), and immediate
 * mode ranks with it (source MODEL, positive estimates, applicable solvers
 * only) and runs a verified convolution with its first choice. Skips, saying
 * why, on a CPU class no model was shipped for (the rules rank there). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/verify.h"
#include "heur/features.h"
#include "nn/model.h"
#include "problem_builder.h"
#include "solvers/solver.h"
#include "testutil.h"
#include "util/cpu.h"
#include "util/file.h"

int main(void) {
    unsetenv("CONVSEL_MODEL_DIR"); /* before the library reads it */
    unsetenv("CONVSEL_AI_HEUR");
    test_tmpdir("defaultmodel");
    setenv("CONVSEL_DB", test_tmp_path("absent.db"), 1); /* no measurements: the model ranks */
    const char *isa = cpu_isa_name(cpu_best_isa());
    char path[1024], meta_path[1024], why[1200];
    snprintf(path, sizeof path, "%s/models/%s.tn.model", CONVSEL_SOURCE_DIR, isa);
    snprintf(meta_path, sizeof meta_path, "%s/models/%s_metadata.tn.model", CONVSEL_SOURCE_DIR,
             isa);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(why, sizeof why, "no model shipped for %s CPUs (%s): the rules rank here", isa,
                 path);
        test_skip("test_default_model", why);
    }
    fclose(f);

    struct nn_model *m = NULL;
    char err[NN_ERROR_MAX];
    CHECK(nn_model_load_file(path, NULL, &m, err, sizeof err) == NN_OK);
    CHECK(m && nn_model_num_tests(m) >= 1);
    nn_model_free(m);
    char *text = NULL;
    size_t len = 0;
    struct model_metadata meta;
    char merr[METADATA_ERROR_MAX];
    CHECK(file_read_all(meta_path, 1 << 24, &text, &len, NULL, 0) == FILE_READ_OK);
    CHECK(text && metadata_from_json(text, len, &meta, merr, sizeof merr));
    free(text);
    CHECK(strcmp(meta.target, isa) == 0);
    /* every guard of the policy (heur/policy.h) is in the shipped metadata */
    CHECK(meta.bounds.present && meta.limits.present && meta.limits.weights.count > 0 &&
          meta.envelope.present && meta.safe_count[0] > 0);
    for (int i = 0; i < meta.num_solvers; i++)
        CHECK(solver_find(meta.solver_names[i]) >= 0);

    convsel_handle_t h = NULL;
    CHECK(convsel_handle_create(&h) == CONVSEL_STATUS_SUCCESS);
    convsel_set_num_threads(h, 2);
    const struct {
        int64_t c, k, hw, r, stride, groups;
    } shapes[] = {{64, 64, 56, 3, 1, 1},
                  {256, 64, 56, 1, 1, 1},
                  {32, 32, 112, 3, 1, 32},
                  {3, 64, 224, 7, 2, 1},
                  {512, 512, 7, 3, 1, 1}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        struct test_problem tp = test_problem_default();
        tp.c = shapes[i].c, tp.k = shapes[i].k, tp.h = tp.w = shapes[i].hw;
        tp.r = tp.s = shapes[i].r, tp.pad_h = tp.pad_w = shapes[i].r / 2;
        tp.stride_h = tp.stride_w = shapes[i].stride, tp.groups = shapes[i].groups;
        struct test_descs d;
        CHECK(test_descs_create(h, &tp, &d) == CONVSEL_STATUS_SUCCESS);
        convsel_solution_t s[16];
        int n = 0;
        CHECK_STATUS(h, convsel_get_solutions(h, d.x, d.w, d.conv, d.y, 16, s, &n),
                     CONVSEL_STATUS_SUCCESS);
        CHECK(n >= 1 && s[0].source == CONVSEL_RANKED_BY_MODEL && s[0].time_ms > 0);
        for (int j = 0; j < n; j++) {
            CHECK_STATUS(h, convsel_solver_is_applicable(h, s[j].solver, d.x, d.w, d.conv, d.y),
                         CONVSEL_STATUS_SUCCESS);
        }
        /* AUTO runs the first choice; it must agree with the reference */
        float *x = malloc(d.x_count * sizeof *x), *w = malloc(d.w_count * sizeof *w);
        float *y = malloc(d.y_count * sizeof *y), *want = malloc(d.y_count * sizeof *want);
        size_t ws = 0;
        convsel_solver_id_t ref = -1;
        CHECK(convsel_solver_find(h, "reference", &ref) == CONVSEL_STATUS_SUCCESS);
        CHECK(convsel_get_forward_workspace_size(h, CONVSEL_SOLVER_AUTO, d.x, d.w, d.conv, d.y,
                                                 &ws) == CONVSEL_STATUS_SUCCESS);
        void *workspace = malloc(ws ? ws : 1);
        if (x && w && y && want && workspace) {
            for (size_t e = 0; e < d.x_count; e++)
                x[e] = (float)((e * 7919) % 17) / 17.0f - 0.5f;
            for (size_t e = 0; e < d.w_count; e++)
                w[e] = (float)((e * 104729) % 13) / 13.0f - 0.5f;
            CHECK_STATUS(h,
                         convsel_convolution_forward(h, CONVSEL_SOLVER_AUTO, d.x, x, d.w, w, d.conv,
                                                     d.y, y, workspace, ws),
                         CONVSEL_STATUS_SUCCESS);
            CHECK_STATUS(
                h, convsel_convolution_forward(h, ref, d.x, x, d.w, w, d.conv, d.y, want, NULL, 0),
                CONVSEL_STATUS_SUCCESS);
            const struct verify_result r = verify_compare(y, want, d.y_count);
            /* the loosest solver tolerance (Winograd) */
            CHECK(r.nonfinite == 0 && r.rel_error < 1e-3);
        }
        free(x), free(w), free(y), free(want), free(workspace);
        printf("%lldx%lld %lldx%lld g%lld: %s est %.4f ms\n", (long long)tp.c, (long long)tp.k,
               (long long)tp.r, (long long)tp.s, (long long)tp.groups, s[0].name, s[0].time_ms);
        test_descs_destroy(&d);
    }
    convsel_handle_destroy(h);
    test_tmpdir_remove();
    return test_finish("test_default_model");
}
