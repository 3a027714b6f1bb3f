/* layers_shape.c -- layers that only move data: Reshape, Flatten, Permute,
 * RepeatVector. */
#include "nn/layers.h"

enum nn_status nn_reshape_infer(const struct nn_layer *l, const struct nn_shape *in,
                                struct nn_shape *out, char *err, size_t cap) {
    const size_t vol = nn_shape_volume(in);
    switch (l->kind) {
    case L_FLATTEN: *out = (struct nn_shape){1, {vol}}; return NN_OK;
    case L_REPEAT_VECTOR:
        if (in->rank != 1)
            return nn_fail(err, cap, NN_ERR_FORMAT,
                           "layer %.64s: RepeatVector takes a rank-1 input", l->name);
        if (l->repeat_n == 0 || l->repeat_n > NN_LIMIT_TENSOR_ELEMS / in->dims[0])
            return nn_fail(err, cap, NN_ERR_FORMAT, "layer %.64s: n = %zu out of bounds", l->name,
                           l->repeat_n);
        *out = (struct nn_shape){2, {l->repeat_n, in->dims[0]}};
        return NN_OK;
    case L_PERMUTE:
        if (l->n_perm != in->rank)
            return nn_fail(err, cap, NN_ERR_FORMAT,
                           "layer %.64s: dims has %d entries for a rank-%d input", l->name,
                           l->n_perm, in->rank);
        out->rank = in->rank;
        for (int d = 0; d < in->rank; d++)
            out->dims[d] = in->dims[l->perm[d] - 1];
        return NN_OK;
    default: break;
    }
    /* Reshape: at most one -1, inferred from the volume. */
    size_t known = 1;
    int unknown = -1;
    out->rank = l->target_rank;
    for (int d = 0; d < l->target_rank; d++) {
        if (l->target[d] < 0) {
            unknown = d;
            continue;
        }
        out->dims[d] = (size_t)l->target[d];
        known *= out->dims[d];
        if (known > NN_LIMIT_TENSOR_ELEMS)
            break;
    }
    if (unknown >= 0 && known > 0 && vol % known == 0)
        out->dims[unknown] = vol / known;
    if (nn_shape_volume(out) != vol)
        return nn_fail(err, cap, NN_ERR_FORMAT,
                       "layer %.64s: cannot reshape %zu values to target_shape", l->name, vol);
    return NN_OK;
}

void nn_permute_run(const struct nn_layer *l, const float *x, const struct nn_shape *s, float *y,
                    const struct nn_shape *ys) {
    size_t xstr[NN_MAX_RANK], ystr[NN_MAX_RANK];
    nn_strides(s, xstr);
    nn_strides(ys, ystr);
    const size_t n = nn_shape_volume(s);
    for (size_t i = 0; i < n; i++) {
        size_t src = 0;
        for (int d = 0; d < ys->rank; d++)
            src += (i / ystr[d] % ys->dims[d]) * xstr[l->perm[d] - 1];
        y[i] = x[src];
    }
}
