/* nn_test_models.h -- helpers for writing small frugally-deep models inline
 * in tests. */
#ifndef CONVSEL_TESTS_NN_TEST_MODELS_H
#define CONVSEL_TESTS_NN_TEST_MODELS_H

#include "nn/model.h"

/* A tf.keras-2 style model: the layers list, input/output layer lists,
 * input/output shape lists and trainable_params, each as JSON text. The
 * result is a static buffer, valid until the next call. */
const char *g2_model(const char *layers, const char *inputs, const char *outputs,
                     const char *input_shapes, const char *output_shapes, const char *params);

/* Loads json (tests not skipped); on failure returns NULL and copies the
 * message into err. */
struct nn_model *load_json(const char *json, enum nn_status *st, char *err, size_t cap);

/* Runs a one-input, one-output prediction; returns the status. */
enum nn_status predict1(const struct nn_model *m, const float *x, float *y);

#endif
