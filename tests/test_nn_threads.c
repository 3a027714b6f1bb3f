/* test_nn_threads.c -- one loaded model, many threads predicting at once:
 * every thread gets bit-identical results to a single-threaded run, which
 * holds only if prediction keeps all mutable state in the caller's scratch.
 * The ThreadSanitizer build runs this too. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/model.h"
#include "testutil.h"

#define THREADS 16
#define ROUNDS 50

static struct nn_model *model;
static float *inputs[8], *expected[8];
static pthread_barrier_t start;

static bool predict(float **out, void *scratch) {
    return nn_model_predict(model, (const float *const *)inputs, out, scratch,
                            nn_model_scratch_bytes(model), NULL, 0) == NN_OK;
}

static void *worker(void *arg) {
    (void)arg;
    float *out[8];
    const size_t n_out = nn_model_num_outputs(model);
    for (size_t i = 0; i < n_out; i++)
        out[i] = malloc(nn_shape_volume(nn_model_output_shape(model, i)) * sizeof(float));
    void *scratch = malloc(nn_model_scratch_bytes(model));
    long mismatches = 0;
    pthread_barrier_wait(&start);
    for (int r = 0; r < ROUNDS; r++) {
        if (!predict(out, scratch))
            mismatches++;
        for (size_t i = 0; i < n_out; i++)
            mismatches +=
                memcmp(out[i], expected[i],
                       nn_shape_volume(nn_model_output_shape(model, i)) * sizeof(float)) != 0;
    }
    for (size_t i = 0; i < n_out; i++)
        free(out[i]);
    free(scratch);
    return (void *)mismatches;
}

int main(void) {
    /* The KTN decoder (Embedding + 2 LSTMs with states, 5 inputs, 5 outputs)
     * when ../shared is there; the LSTM seed model otherwise. */
    char path[2048], err[NN_ERROR_MAX];
    const char *shared = test_shared_dir();
    if (shared)
        snprintf(path, sizeof path,
                 "%s/miopen-ai-models/gfx942_ConvHipIgemmGroupFwdXdlops_decoder.ktn.model", shared);
    else
        snprintf(path, sizeof path, "%s/tests/fuzz/seeds/lstm.json", CONVSEL_SOURCE_DIR);
    printf("model: %s\n", path);
    if (!CHECK(nn_model_load_file(path, NULL, &model, err, sizeof err) == NN_OK)) {
        fprintf(stderr, "%s\n", err);
        return test_finish("test_nn_threads");
    }
    const size_t n_in = nn_model_num_inputs(model), n_out = nn_model_num_outputs(model);
    CHECK(n_in <= 8 && n_out <= 8);
    for (size_t i = 0; i < n_in; i++) {
        const size_t n = nn_shape_volume(nn_model_input_shape(model, i));
        inputs[i] = malloc(n * sizeof(float));
        for (size_t j = 0; j < n; j++) /* small values; index 1 for an Embedding */
            inputs[i][j] = i == 0 ? 1.0f : 0.01f * (float)(j % 7);
    }
    for (size_t i = 0; i < n_out; i++)
        expected[i] = malloc(nn_shape_volume(nn_model_output_shape(model, i)) * sizeof(float));
    void *scratch = malloc(nn_model_scratch_bytes(model));
    CHECK(predict(expected, scratch));
    free(scratch);

    pthread_t t[THREADS];
    pthread_barrier_init(&start, NULL, THREADS);
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    long total = 0;
    for (int i = 0; i < THREADS; i++) {
        void *r;
        pthread_join(t[i], &r);
        total += (long)r;
    }
    pthread_barrier_destroy(&start);
    printf("%d threads x %d predictions: %ld mismatches\n", THREADS, ROUNDS, total);
    CHECK(total == 0);
    for (size_t i = 0; i < n_in; i++)
        free(inputs[i]);
    for (size_t i = 0; i < n_out; i++)
        free(expected[i]);
    nn_model_free(model);
    return test_finish("test_nn_threads");
}
