/* nn_test_models.c -- see nn_test_models.h. */
#include "nn_test_models.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char buffer[1 << 16];

const char *g2_model(const char *layers, const char *inputs, const char *outputs,
                     const char *input_shapes, const char *output_shapes, const char *params) {
    snprintf(buffer, sizeof buffer,
             "{\"architecture\":{\"class_name\":\"Functional\",\"keras_version\":\"2.11.0\","
             "\"config\":{\"name\":\"m\",\"layers\":[%s],\"input_layers\":%s,"
             "\"output_layers\":%s}},\"image_data_format\":\"channels_last\","
             "\"input_shapes\":%s,\"output_shapes\":%s,\"trainable_params\":{%s}}",
             layers, inputs, outputs, input_shapes, output_shapes, params);
    return buffer;
}

struct nn_model *load_json(const char *json, enum nn_status *st, char *err, size_t cap) {
    struct nn_model *m = NULL;
    *st = nn_model_load_memory(json, strlen(json), NULL, &m, err, cap);
    return m;
}

enum nn_status predict1(const struct nn_model *m, const float *x, float *y) {
    void *scratch = malloc(nn_model_scratch_bytes(m) + 4);
    const float *in[1] = {x};
    float *out[1] = {y};
    char err[NN_ERROR_MAX];
    enum nn_status st =
        nn_model_predict(m, in, out, scratch, nn_model_scratch_bytes(m), err, sizeof err);
    if (st != NN_OK)
        fprintf(stderr, "  predict: %s\n", err);
    free(scratch);
    return st;
}
