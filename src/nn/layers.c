/* layers.c -- nn_layer_infer and nn_layer_run: dispatch by layer kind, and
 * the single-tensor layers (Dense, activations, ReLU family, PReLU,
 * Embedding, identities) small enough to live here. */
#include <math.h>
#include <string.h>

#include "nn/kernels.h"
#include "nn/layers.h"

void nn_strides(const struct nn_shape *s, size_t strides[NN_MAX_RANK]) {
    size_t st = 1;
    for (int d = s->rank - 1; d >= 0; d--) {
        strides[d] = st;
        st *= s->dims[d];
    }
}

int nn_axis_index(int keras_axis, int rank) {
    const int idx = keras_axis > 0 ? keras_axis - 1 : rank + keras_axis;
    return keras_axis == 0 || idx < 0 || idx >= rank ? -1 : idx;
}

static enum nn_status want_inputs(const struct nn_layer *l, int n_in, int lo, int hi, char *err,
                                  size_t cap) {
    if (n_in >= lo && n_in <= hi)
        return NN_OK;
    return nn_fail(err, cap, NN_ERR_FORMAT, "layer %.64s (%s): called with %d inputs, takes %d%s",
                   l->name, l->class_name, n_in, lo, hi > lo ? " or more" : "");
}

/* Number of alpha values PReLU needs for shape s: shared axes count 1. */
static size_t prelu_alpha_count(const struct nn_layer *l, const struct nn_shape *s,
                                size_t dims_out[NN_MAX_RANK]) {
    size_t count = 1;
    for (int d = 0; d < s->rank; d++) {
        dims_out[d] = s->dims[d];
        for (int a = 0; a < l->n_axes; a++)
            if (nn_axis_index(l->axes[a], s->rank) == d)
                dims_out[d] = 1;
        count *= dims_out[d];
    }
    return count;
}

enum nn_status nn_layer_infer(const struct nn_layer *l, const struct nn_shape *in, int n_in,
                              struct nn_shape *out, int *n_out, size_t *tmp, char *err,
                              size_t cap) {
    enum nn_status st;
    *n_out = 1;
    *tmp = 0;
    switch (l->kind) {
    case L_LSTM:
    case L_GRU: return nn_rnn_infer(l, in, n_in, out, n_out, tmp, err, cap);
    case L_ADD:
    case L_SUBTRACT:
    case L_MULTIPLY:
    case L_AVERAGE:
    case L_MAXIMUM:
    case L_MINIMUM: return nn_merge_infer(l, in, n_in, out, err, cap);
    case L_CONCATENATE: return nn_concat_infer(l, in, n_in, out, err, cap);
    case L_INPUT:
    case L_MODEL: return nn_fail(err, cap, NN_ERR_FORMAT, "layer %.64s: cannot be called", l->name);
    default: break;
    }
    if ((st = want_inputs(l, n_in, 1, 1, err, cap)) != NN_OK)
        return st;
    out[0] = in[0];
    const size_t depth = in[0].dims[in[0].rank - 1];
    switch (l->kind) {
    case L_DENSE:
        if (depth * l->units != l->nw)
            return nn_fail(err, cap, NN_ERR_FORMAT,
                           "layer %.64s: input depth %zu does not match the kernel (%zu x %zu)",
                           l->name, depth, l->nw / l->units, l->units);
        out[0].dims[out[0].rank - 1] = l->units;
        return NN_OK;
    case L_PRELU: {
        size_t dims[NN_MAX_RANK];
        if (prelu_alpha_count(l, &in[0], dims) != l->n_alpha)
            return nn_fail(err, cap, NN_ERR_FORMAT,
                           "layer %.64s: %zu alpha values do not fit the input shape", l->name,
                           l->n_alpha);
        return NN_OK;
    }
    case L_BATCHNORM:
    case L_LAYERNORM: return nn_norm_infer(l, &in[0], tmp, err, cap);
    case L_RESHAPE:
    case L_FLATTEN:
    case L_PERMUTE:
    case L_REPEAT_VECTOR: return nn_reshape_infer(l, &in[0], &out[0], err, cap);
    case L_EMBEDDING:
        if (in[0].rank != 1)
            return nn_fail(err, cap, NN_ERR_FORMAT,
                           "layer %.64s: Embedding takes a rank-1 sequence of indices", l->name);
        out[0].rank = 2;
        out[0].dims[1] = l->output_dim;
        return NN_OK;
    default: return NN_OK; /* activations, identities: same shape */
    }
}

static void dense_run(const struct nn_layer *l, const float *x, const struct nn_shape *s,
                      float *y) {
    const size_t f = s->dims[s->rank - 1], n = l->units, rows = nn_shape_volume(s) / f;
    for (size_t row = 0; row < rows; row++, x += f, y += n) {
        for (size_t j = 0; j < n; j++)
            y[j] = l->b ? l->b[j] : 0.0f;
        nn_kernels()->vec_mat_acc(x, f, l->w, n, y);
    }
}

static void relu_run(const struct nn_layer *l, const float *x, float *y, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const float v = x[i];
        y[i] = v >= l->max_value   ? l->max_value
               : v >= l->threshold ? v
                                   : l->negative_slope * (v - l->threshold);
    }
}

static void prelu_run(const struct nn_layer *l, const float *x, const struct nn_shape *s,
                      float *y) {
    size_t adims[NN_MAX_RANK], xstr[NN_MAX_RANK], astr[NN_MAX_RANK];
    prelu_alpha_count(l, s, adims);
    struct nn_shape as = {s->rank, {0}};
    memcpy(as.dims, adims, sizeof adims);
    nn_strides(s, xstr);
    nn_strides(&as, astr);
    const size_t n = nn_shape_volume(s);
    for (size_t i = 0; i < n; i++) {
        size_t a = 0;
        for (int d = 0; d < s->rank; d++)
            a += adims[d] == 1 ? 0 : (i / xstr[d] % s->dims[d]) * astr[d];
        y[i] = x[i] > 0 ? x[i] : l->alpha_p[a] * x[i];
    }
}

static enum nn_status embedding_run(const struct nn_layer *l, const float *x,
                                    const struct nn_shape *s, float *y, char *err, size_t cap) {
    for (size_t t = 0; t < s->dims[0]; t++) {
        const float v = x[t];
        if (!(v >= 0) || v >= (float)l->input_dim)
            return nn_fail(err, cap, NN_ERR_ARGUMENT,
                           "layer %.64s: index %g at position %zu is outside 0..%zu", l->name,
                           (double)v, t, l->input_dim - 1);
        memcpy(y + t * l->output_dim, l->w + (size_t)v * l->output_dim, l->output_dim * sizeof *y);
    }
    return NN_OK;
}

enum nn_status nn_layer_run(const struct nn_layer *l, const float *const *in,
                            const struct nn_shape *in_shape, int n_in, float *const *out,
                            const struct nn_shape *out_shape, int n_out, float *tmp, char *err,
                            size_t cap) {
    (void)n_out;
    const size_t n = nn_shape_volume(&out_shape[0]);
    const size_t depth = out_shape[0].dims[out_shape[0].rank - 1];
    switch (l->kind) {
    case L_DENSE: dense_run(l, in[0], &in_shape[0], out[0]); break;
    case L_ACTIVATION:
        memcpy(out[0], in[0], n * sizeof(float));
        nn_act_apply(&l->act, out[0], n, depth);
        break;
    case L_SOFTMAX: {
        const struct nn_act softmax = {ACT_SOFTMAX, 0};
        memcpy(out[0], in[0], n * sizeof(float));
        nn_act_apply(&softmax, out[0], n, depth);
        break;
    }
    case L_RELU: relu_run(l, in[0], out[0], n); break;
    case L_PRELU: prelu_run(l, in[0], &in_shape[0], out[0]); break;
    case L_IDENTITY:
    case L_RESHAPE:
    case L_FLATTEN: memcpy(out[0], in[0], n * sizeof(float)); break;
    case L_REPEAT_VECTOR:
        for (size_t r = 0; r < l->repeat_n; r++)
            memcpy(out[0] + r * in_shape[0].dims[0], in[0], in_shape[0].dims[0] * sizeof(float));
        break;
    case L_PERMUTE: nn_permute_run(l, in[0], &in_shape[0], out[0], &out_shape[0]); break;
    case L_EMBEDDING: {
        enum nn_status st = embedding_run(l, in[0], &in_shape[0], out[0], err, cap);
        if (st != NN_OK)
            return st;
        break;
    }
    case L_BATCHNORM: nn_batchnorm_run(l, in[0], &in_shape[0], out[0]); break;
    case L_LAYERNORM: nn_layernorm_run(l, in[0], &in_shape[0], out[0], tmp); break;
    case L_ADD:
    case L_SUBTRACT:
    case L_MULTIPLY:
    case L_AVERAGE:
    case L_MAXIMUM:
    case L_MINIMUM: nn_merge_run(l, in, in_shape, n_in, out[0], &out_shape[0]); break;
    case L_CONCATENATE: nn_concat_run(l, in, in_shape, n_in, out[0], &out_shape[0]); break;
    case L_LSTM: nn_lstm_run(l, in, in_shape, n_in, out, tmp); break;
    case L_GRU: nn_gru_run(l, in, in_shape, n_in, out, tmp); break;
    case L_INPUT:
    case L_MODEL: break; /* never planned as ops */
    }
    return NN_OK;
}
