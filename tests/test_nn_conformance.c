/* test_nn_conformance.c -- the real model files in ../shared load and
 * reproduce their embedded tests: MIOpen's TunaNet (gfx908, gfx90a,
 * gfx942) and Kernel Tuning Net encoders/decoders, and frugally-deep's two
 * committed GRU files, whose expected outputs are also checked here from
 * the values in their README. Skips when ../shared is absent. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/model.h"
#include "testutil.h"

static const char *const miopen_models[] = {
    "gfx908.tn.model",
    "gfx90a.tn.model",
    "gfx942.tn.model",
    "gfx908_ConvAsm1x1U_encoder.ktn.model",
    "gfx908_ConvAsm1x1U_decoder.ktn.model",
    "gfx90a_ConvHipIgemmGroupFwdXdlops_encoder.ktn.model",
    "gfx90a_ConvHipIgemmGroupFwdXdlops_decoder.ktn.model",
    "gfx942_ConvHipIgemmGroupFwdXdlops_encoder.ktn.model",
    "gfx942_ConvHipIgemmGroupFwdXdlops_decoder.ktn.model",
};

static struct nn_model *load(const char *dir, const char *name, enum nn_status *st) {
    char path[2100], err[NN_ERROR_MAX] = "";
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct nn_model *m = NULL;
    *st = nn_model_load_file(path, NULL, &m, err, sizeof err);
    if (*st != NN_OK)
        fprintf(stderr, "  %s: %s\n", name, err);
    return m;
}

int main(void) {
    const char *shared = test_shared_dir();
    if (shared == NULL)
        test_skip("test_nn_conformance", "../shared (CONVSEL_SHARED_DIR) is absent");
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/miopen-ai-models", shared);
    for (size_t i = 0; i < sizeof miopen_models / sizeof miopen_models[0]; i++) {
        enum nn_status st;
        struct nn_model *m = load(dir, miopen_models[i], &st);
        CHECK(st == NN_OK);
        /* gfx908.tn.model is the one file shipped without a tests section. */
        if (m && strcmp(miopen_models[i], "gfx908.tn.model") != 0)
            CHECK(nn_model_num_tests(m) == 1);
        nn_model_free(m);
    }
    /* Metadata files are JSON but not models. */
    enum nn_status st;
    CHECK(load(dir, "gfx942_metadata.tn.model", &st) == NULL && st == NN_ERR_NOT_MODEL);

    /* gfx942 TunaNet: 18 features in, 21 solver scores out, ~79k parameters. */
    struct nn_model *m = load(dir, "gfx942.tn.model", &st);
    if (CHECK(m != NULL)) {
        CHECK(nn_model_input_shape(m, 0)->dims[0] == 18);
        CHECK(nn_model_output_shape(m, 0)->dims[0] == 21);
        CHECK(nn_model_param_count(m) == 78709);
    }
    nn_model_free(m);

    /* frugally-deep GRU files, with the inputs and outputs of their README. */
    snprintf(dir, sizeof dir, "%s/fdeep-conformance", shared);
    const struct {
        const char *file;
        float x[3], h0;
        double y[3];
    } gru[] = {
        {"temp_stateless.json",
         {-0.6349068284034729f, -0.6473709940910339f, -0.9788109660148621f},
         -1.0029796361923218f,
         {-1.2933359146118164, -1.4644732475280762, -2.042407274246216}},
        {"temp_stateful.json",
         {-1.0116599798202515f, -0.617686927318573f, -0.09286771714687347f},
         0.06343436986207962f,
         {-2.274064540863037, -2.0842435359954834, -1.5687040090560913}},
    };
    for (int i = 0; i < 2; i++) {
        m = load(dir, gru[i].file, &st);
        if (!CHECK(m != NULL))
            continue;
        float y[3];
        const float *in[2] = {gru[i].x, &gru[i].h0};
        float *out[1] = {y};
        void *scratch = malloc(nn_model_scratch_bytes(m));
        CHECK(nn_model_predict(m, in, out, scratch, nn_model_scratch_bytes(m), NULL, 0) == NN_OK);
        for (int t = 0; t < 3; t++)
            CHECK(fabs(y[t] - gru[i].y[t]) < 1e-6);
        free(scratch);
        nn_model_free(m);
    }
    return test_finish("test_nn_conformance");
}
