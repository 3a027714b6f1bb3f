/* fuzz_model_loader.c -- libFuzzer target for the model loader: any bytes
 * must load or fail with a message, never crash, leak or hang; a model that
 * loads must also predict on zero inputs without fault. Built by
 * `make fuzz` (clang-14, ASan + UBSan); `make test` runs it for a bounded
 * time. Crashing inputs go to tests/fuzz/regressions/ and are replayed by
 * test_nn_fuzz_regressions in every build. */
#include <stdint.h>
#include <stdlib.h>

#include "nn/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct nn_model *m = NULL;
    char err[NN_ERROR_MAX];
    if (nn_model_load_memory((const char *)data, size, NULL, &m, err, sizeof err) != NN_OK)
        return 0;
    const size_t n_in = nn_model_num_inputs(m), n_out = nn_model_num_outputs(m);
    float **in = calloc(n_in, sizeof *in), **out = calloc(n_out, sizeof *out);
    void *scratch = malloc(nn_model_scratch_bytes(m) + sizeof(float));
    for (size_t i = 0; i < n_in; i++)
        in[i] = calloc(nn_shape_volume(nn_model_input_shape(m, i)), sizeof(float));
    for (size_t i = 0; i < n_out; i++)
        out[i] = calloc(nn_shape_volume(nn_model_output_shape(m, i)), sizeof(float));
    nn_model_predict(m, (const float *const *)in, out, scratch, nn_model_scratch_bytes(m), err,
                     sizeof err);
    for (size_t i = 0; i < n_in; i++)
        free(in[i]);
    for (size_t i = 0; i < n_out; i++)
        free(out[i]);
    free(in);
    free(out);
    free(scratch);
    nn_model_free(m);
    return 0;
}
