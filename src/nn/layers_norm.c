/* layers_norm.c -- BatchNormalization (inference: moving statistics) and
 * LayerNormalization (statistics of each sample over the given axes). */
#include <math.h>

#include "nn/layers.h"

/* Maps the layer's Keras axes to dims indices; false on a bad axis. */
static bool norm_axes(const struct nn_layer *l, int rank, bool on[NN_MAX_RANK]) {
    for (int d = 0; d < NN_MAX_RANK; d++)
        on[d] = false;
    for (int a = 0; a < l->n_axes; a++) {
        const int d = nn_axis_index(l->axes[a], rank);
        if (d < 0 || on[d])
            return false;
        on[d] = true;
    }
    return true;
}

enum nn_status nn_norm_infer(const struct nn_layer *l, const struct nn_shape *in, size_t *tmp,
                             char *err, size_t cap) {
    bool on[NN_MAX_RANK];
    if (!norm_axes(l, in->rank, on))
        return nn_fail(err, cap, NN_ERR_FORMAT, "layer %.64s: invalid axis for rank %d", l->name,
                       in->rank);
    size_t normalized = 1;
    for (int d = 0; d < in->rank; d++)
        normalized *= on[d] ? in->dims[d] : 1;
    const size_t want = l->kind == L_BATCHNORM ? l->n_mean : normalized;
    if ((l->kind == L_BATCHNORM && normalized != l->n_mean) || (l->gamma && l->n_gamma != want) ||
        (l->beta && l->n_beta != want))
        return nn_fail(err, cap, NN_ERR_FORMAT,
                       "layer %.64s: parameters have %zu values, the normalized axes %zu", l->name,
                       l->kind == L_BATCHNORM ? l->n_mean : l->n_gamma, normalized);
    /* LayerNormalization: a mean and a variance per group of the other axes. */
    *tmp = l->kind == L_LAYERNORM ? 2 * (nn_shape_volume(in) / normalized) : 0;
    return NN_OK;
}

void nn_batchnorm_run(const struct nn_layer *l, const float *x, const struct nn_shape *s,
                      float *y) {
    const int ax = nn_axis_index(l->axes[0], s->rank);
    size_t str[NN_MAX_RANK];
    nn_strides(s, str);
    const size_t n = nn_shape_volume(s);
    for (size_t i = 0; i < n; i++) {
        const size_t c = i / str[ax] % s->dims[ax];
        const float inv = (l->gamma ? l->gamma[c] : 1.0f) / sqrtf(l->var[c] + l->epsilon);
        y[i] = x[i] * inv + ((l->beta ? l->beta[c] : 0.0f) - l->mean[c] * inv);
    }
}

/* Splits element i into its group (other axes) and position (normalized axes). */
static void split_index(size_t i, const struct nn_shape *s, const size_t str[], const bool on[],
                        size_t *group, size_t *pos) {
    *group = 0;
    *pos = 0;
    for (int d = 0; d < s->rank; d++) {
        const size_t c = i / str[d] % s->dims[d];
        if (on[d])
            *pos = *pos * s->dims[d] + c;
        else
            *group = *group * s->dims[d] + c;
    }
}

void nn_layernorm_run(const struct nn_layer *l, const float *x, const struct nn_shape *s, float *y,
                      float *tmp) {
    bool on[NN_MAX_RANK];
    size_t str[NN_MAX_RANK], normalized = 1;
    norm_axes(l, s->rank, on);
    nn_strides(s, str);
    for (int d = 0; d < s->rank; d++)
        normalized *= on[d] ? s->dims[d] : 1;
    const size_t n = nn_shape_volume(s), groups = n / normalized;
    float *mean = tmp, *var = tmp + groups;
    for (size_t g = 0; g < groups; g++)
        mean[g] = var[g] = 0;
    size_t g, p;
    for (size_t i = 0; i < n; i++) {
        split_index(i, s, str, on, &g, &p);
        mean[g] += x[i];
    }
    for (g = 0; g < groups; g++)
        mean[g] /= (float)normalized;
    for (size_t i = 0; i < n; i++) {
        split_index(i, s, str, on, &g, &p);
        const float dev = x[i] - mean[g];
        var[g] += dev * dev;
    }
    for (g = 0; g < groups; g++)
        var[g] /= (float)normalized;
    for (size_t i = 0; i < n; i++) {
        split_index(i, s, str, on, &g, &p);
        const float inv = (l->gamma ? l->gamma[p] : 1.0f) / sqrtf(var[g] + l->epsilon);
        y[i] = (x[i] - mean[g]) * inv + (l->beta ? l->beta[p] : 0.0f);
    }
}
