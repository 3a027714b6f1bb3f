/* layers_merge.c -- element-wise merges (Add, Subtract, Multiply, Average
 * with size-1 broadcasting; Maximum, Minimum on equal shapes) and
 * Concatenate. Shapes are aligned on their last axis, as in frugally-deep. */
#include <string.h>

#include "nn/layers.h"

enum nn_status nn_merge_infer(const struct nn_layer *l, const struct nn_shape *in, int n_in,
                              struct nn_shape *out, char *err, size_t cap) {
    const bool exact = l->kind == L_MAXIMUM || l->kind == L_MINIMUM;
    if (n_in < 2 || (l->kind == L_SUBTRACT && n_in != 2))
        return nn_fail(err, cap, NN_ERR_FORMAT, "layer %.64s (%s): called with %d inputs", l->name,
                       l->class_name, n_in);
    *out = in[0];
    for (int i = 1; i < n_in; i++) {
        if (exact && !nn_shape_equal(&in[0], &in[i]))
            return nn_fail(err, cap, NN_ERR_FORMAT, "layer %.64s: all inputs must have one shape",
                           l->name);
        const int rank = in[i].rank > out->rank ? in[i].rank : out->rank;
        struct nn_shape r = {rank, {0}};
        for (int d = 0; d < rank; d++) { /* d counts from the last axis */
            const int da = out->rank - 1 - d, db = in[i].rank - 1 - d;
            const size_t a = da >= 0 ? out->dims[da] : 1, b = db >= 0 ? in[i].dims[db] : 1;
            if (a != b && a != 1 && b != 1)
                return nn_fail(err, cap, NN_ERR_FORMAT,
                               "layer %.64s: invalid shapes for combining tensors (%zu vs %zu)",
                               l->name, a, b);
            r.dims[rank - 1 - d] = a > b ? a : b;
        }
        *out = r;
    }
    return NN_OK;
}

/* Offset into a (right-aligned, broadcast) input for output element i. */
static size_t broadcast_offset(size_t i, const struct nn_shape *os, const size_t ostr[],
                               const struct nn_shape *is, const size_t istr[]) {
    size_t off = 0;
    for (int d = 0; d < is->rank; d++) {
        const int od = d + os->rank - is->rank;
        if (is->dims[d] != 1)
            off += (i / ostr[od] % os->dims[od]) * istr[d];
    }
    return off;
}

void nn_merge_run(const struct nn_layer *l, const float *const *in, const struct nn_shape *in_shape,
                  int n_in, float *out, const struct nn_shape *out_shape) {
    size_t ostr[NN_MAX_RANK], istr[NN_MAX_RANK];
    const size_t n = nn_shape_volume(out_shape);
    nn_strides(out_shape, ostr);
    for (int k = 0; k < n_in; k++) {
        nn_strides(&in_shape[k], istr);
        const bool same = nn_shape_equal(&in_shape[k], out_shape);
        for (size_t i = 0; i < n; i++) {
            const float v =
                in[k][same ? i : broadcast_offset(i, out_shape, ostr, &in_shape[k], istr)];
            if (k == 0) {
                out[i] = v;
                continue;
            }
            switch (l->kind) {
            case L_SUBTRACT: out[i] -= v; break;
            case L_MULTIPLY: out[i] *= v; break;
            case L_MAXIMUM: out[i] = v > out[i] ? v : out[i]; break;
            case L_MINIMUM: out[i] = v < out[i] ? v : out[i]; break;
            default: out[i] += v; break; /* Add, Average */
            }
        }
    }
    if (l->kind == L_AVERAGE)
        for (size_t i = 0; i < n; i++)
            out[i] /= (float)n_in;
}

enum nn_status nn_concat_infer(const struct nn_layer *l, const struct nn_shape *in, int n_in,
                               struct nn_shape *out, char *err, size_t cap) {
    if (n_in < 1)
        return nn_fail(err, cap, NN_ERR_FORMAT, "layer %.64s: no inputs", l->name);
    const int ax = nn_axis_index(l->concat_axis, in[0].rank);
    if (ax < 0)
        return nn_fail(err, cap, NN_ERR_FORMAT, "layer %.64s: invalid axis %d for rank %d", l->name,
                       l->concat_axis, in[0].rank);
    *out = in[0];
    for (int i = 1; i < n_in; i++) {
        if (in[i].rank != in[0].rank)
            return nn_fail(err, cap, NN_ERR_FORMAT, "layer %.64s: inputs differ in rank", l->name);
        for (int d = 0; d < in[0].rank; d++)
            if (d != ax && in[i].dims[d] != in[0].dims[d])
                return nn_fail(err, cap, NN_ERR_FORMAT,
                               "layer %.64s: tensor shapes differ on a dimension other than the "
                               "concatenation axis",
                               l->name);
        out->dims[ax] += in[i].dims[ax];
        if (out->dims[ax] > NN_LIMIT_TENSOR_ELEMS)
            return nn_fail(err, cap, NN_ERR_FORMAT, "layer %.64s: output too large", l->name);
    }
    return NN_OK;
}

void nn_concat_run(const struct nn_layer *l, const float *const *in,
                   const struct nn_shape *in_shape, int n_in, float *out,
                   const struct nn_shape *out_shape) {
    const int ax = nn_axis_index(l->concat_axis, out_shape->rank);
    size_t outer = 1, inner = 1;
    for (int d = 0; d < ax; d++)
        outer *= out_shape->dims[d];
    for (int d = ax + 1; d < out_shape->rank; d++)
        inner *= out_shape->dims[d];
    for (size_t o = 0; o < outer; o++)
        for (int k = 0; k < n_in; k++) {
            const size_t block = in_shape[k].dims[ax] * inner;
            memcpy(out, in[k] + o * block, block * sizeof *out);
            out += block;
        }
}
