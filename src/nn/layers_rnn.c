/* layers_rnn.c -- LSTM and GRU over a (T, F) sequence, with optional initial
 * states passed as extra inputs (tf.keras 2 files), return_sequences and
 * return_state. Kernels are (F, G*n) and (n, G*n) row-major with gate blocks
 * i|f|c|o (LSTM) and z|r|h (GRU); x is multiplied from the left (x . W). */
#include <string.h>

#include "nn/kernels.h"
#include "nn/layers.h"

enum nn_status nn_rnn_infer(const struct nn_layer *l, const struct nn_shape *in, int n_in,
                            struct nn_shape *out, int *n_out, size_t *tmp, char *err, size_t cap) {
    const bool lstm = l->kind == L_LSTM;
    const size_t n = l->units, gates = lstm ? 4 : 3;
    const int n_states = lstm ? 2 : 1;
    if (n_in != 1 && n_in != 1 + n_states)
        return nn_fail(err, cap, NN_ERR_FORMAT,
                       "layer %.64s: %s takes the sequence%s, called with %d inputs", l->name,
                       l->class_name, lstm ? " and optionally h0, c0" : " and optionally h0", n_in);
    if (in[0].rank != 2)
        return nn_fail(err, cap, NN_ERR_FORMAT, "layer %.64s: input must be (timesteps, features)",
                       l->name);
    if (in[0].dims[1] * gates * n != l->nw)
        return nn_fail(err, cap, NN_ERR_FORMAT,
                       "layer %.64s: %zu input features do not match the kernel (%zu weights)",
                       l->name, in[0].dims[1], l->nw);
    for (int k = 1; k < n_in; k++)
        if (in[k].rank != 1 || in[k].dims[0] != n)
            return nn_fail(err, cap, NN_ERR_FORMAT,
                           "layer %.64s: initial state %d must have shape (%zu)", l->name, k, n);
    out[0] =
        l->return_sequences ? (struct nn_shape){2, {in[0].dims[0], n}} : (struct nn_shape){1, {n}};
    *n_out = 1;
    if (l->return_state)
        for (int k = 0; k < n_states; k++)
            out[(*n_out)++] = (struct nn_shape){1, {n}};
    /* gates (G*n) + recurrent product (G*n) + h (n) + c or r*h (n) */
    *tmp = 2 * gates * n + 2 * n;
    return NN_OK;
}

void nn_lstm_run(const struct nn_layer *l, const float *const *in, const struct nn_shape *in_shape,
                 int n_in, float *const *out, float *tmp) {
    const size_t n = l->units, T = in_shape[0].dims[0], F = in_shape[0].dims[1];
    float *z = tmp, *h = tmp + 8 * n, *c = h + n;
    if (n_in == 3) {
        memcpy(h, in[1], n * sizeof *h);
        memcpy(c, in[2], n * sizeof *c);
    } else {
        memset(h, 0, n * sizeof *h);
        memset(c, 0, n * sizeof *c);
    }
    for (size_t t = 0; t < T; t++) {
        for (size_t j = 0; j < 4 * n; j++)
            z[j] = l->b ? l->b[j] : 0.0f;
        nn_kernels()->vec_mat_acc(in[0] + t * F, F, l->w, 4 * n, z);
        nn_kernels()->vec_mat_acc(h, n, l->u, 4 * n, z);
        for (size_t j = 0; j < n; j++) {
            const float i = nn_act_scalar(&l->rec_act, z[j]);
            const float f = nn_act_scalar(&l->rec_act, z[n + j]);
            const float g = nn_act_scalar(&l->act, z[2 * n + j]);
            const float o = nn_act_scalar(&l->rec_act, z[3 * n + j]);
            c[j] = f * c[j] + i * g;
            h[j] = o * nn_act_scalar(&l->act, c[j]);
        }
        if (l->return_sequences)
            memcpy(out[0] + t * n, h, n * sizeof *h);
    }
    if (!l->return_sequences)
        memcpy(out[0], h, n * sizeof *h);
    if (l->return_state) {
        memcpy(out[1], h, n * sizeof *h);
        memcpy(out[2], c, n * sizeof *c);
    }
}

void nn_gru_run(const struct nn_layer *l, const float *const *in, const struct nn_shape *in_shape,
                int n_in, float *const *out, float *tmp) {
    const size_t n = l->units, T = in_shape[0].dims[0], F = in_shape[0].dims[1];
    float *xw = tmp, *uh = tmp + 3 * n, *h = tmp + 6 * n, *rh = h + n;
    const float *bx = l->b, *bh = l->b && l->reset_after ? l->b + 3 * n : NULL;
    if (n_in == 2)
        memcpy(h, in[1], n * sizeof *h);
    else
        memset(h, 0, n * sizeof *h);
    for (size_t t = 0; t < T; t++) {
        for (size_t j = 0; j < 3 * n; j++) {
            xw[j] = bx ? bx[j] : 0.0f;
            uh[j] = bh ? bh[j] : 0.0f;
        }
        nn_kernels()->vec_mat_acc(in[0] + t * F, F, l->w, 3 * n, xw);
        if (l->reset_after) {
            nn_kernels()->vec_mat_acc(h, n, l->u, 3 * n, uh);
            for (size_t j = 0; j < n; j++) {
                const float z = nn_act_scalar(&l->rec_act, xw[j] + uh[j]);
                const float r = nn_act_scalar(&l->rec_act, xw[n + j] + uh[n + j]);
                const float hh = nn_act_scalar(&l->act, xw[2 * n + j] + r * uh[2 * n + j]);
                h[j] = (1.0f - z) * hh + z * h[j];
            }
        } else {
            /* z and r use h . U; the candidate uses (r * h) . U_h. */
            nn_kernels()->vec_mat_acc(h, n, l->u, 3 * n, uh);
            for (size_t j = 0; j < n; j++) {
                const float r = nn_act_scalar(&l->rec_act, xw[n + j] + uh[n + j]);
                rh[j] = r * h[j];
            }
            float *cand = uh + 2 * n; /* reuse: the candidate's recurrent part */
            for (size_t j = 0; j < n; j++)
                cand[j] = 0;
            for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < n; j++)
                    cand[j] += rh[i] * l->u[i * 3 * n + 2 * n + j];
            for (size_t j = 0; j < n; j++) {
                const float z = nn_act_scalar(&l->rec_act, xw[j] + uh[j]);
                const float hh = nn_act_scalar(&l->act, xw[2 * n + j] + cand[j]);
                h[j] = (1.0f - z) * hh + z * h[j];
            }
        }
        if (l->return_sequences)
            memcpy(out[0] + t * n, h, n * sizeof *h);
    }
    if (!l->return_sequences)
        memcpy(out[0], h, n * sizeof *h);
    if (l->return_state)
        memcpy(out[1], h, n * sizeof *h);
}
