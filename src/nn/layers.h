/* layers.h -- per-family shape inference and kernels behind
 * nn_layer_infer / nn_layer_run (layers.c dispatches). */
#ifndef CONVSEL_NN_LAYERS_H
#define CONVSEL_NN_LAYERS_H

#include "nn/internal.h"

/* Row-major strides of a shape. */
void nn_strides(const struct nn_shape *s, size_t strides[NN_MAX_RANK]);

enum nn_status nn_merge_infer(const struct nn_layer *l, const struct nn_shape *in, int n_in,
                              struct nn_shape *out, char *err, size_t cap);
void nn_merge_run(const struct nn_layer *l, const float *const *in, const struct nn_shape *in_shape,
                  int n_in, float *out, const struct nn_shape *out_shape);

enum nn_status nn_concat_infer(const struct nn_layer *l, const struct nn_shape *in, int n_in,
                               struct nn_shape *out, char *err, size_t cap);
void nn_concat_run(const struct nn_layer *l, const float *const *in,
                   const struct nn_shape *in_shape, int n_in, float *out,
                   const struct nn_shape *out_shape);

enum nn_status nn_norm_infer(const struct nn_layer *l, const struct nn_shape *in, size_t *tmp,
                             char *err, size_t cap);
void nn_batchnorm_run(const struct nn_layer *l, const float *x, const struct nn_shape *s, float *y);
void nn_layernorm_run(const struct nn_layer *l, const float *x, const struct nn_shape *s, float *y,
                      float *tmp);

enum nn_status nn_reshape_infer(const struct nn_layer *l, const struct nn_shape *in,
                                struct nn_shape *out, char *err, size_t cap);
void nn_permute_run(const struct nn_layer *l, const float *x, const struct nn_shape *s, float *y,
                    const struct nn_shape *ys);

enum nn_status nn_rnn_infer(const struct nn_layer *l, const struct nn_shape *in, int n_in,
                            struct nn_shape *out, int *n_out, size_t *tmp, char *err, size_t cap);
void nn_lstm_run(const struct nn_layer *l, const float *const *in, const struct nn_shape *in_shape,
                 int n_in, float *const *out, float *tmp);
void nn_gru_run(const struct nn_layer *l, const float *const *in, const struct nn_shape *in_shape,
                int n_in, float *const *out, float *tmp);

#endif
