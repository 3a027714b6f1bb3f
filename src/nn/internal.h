/* internal.h -- the structures behind struct nn_model, shared by the
 * loader (parse + graph), the planner and the layer implementations.
 * Nothing outside src/nn includes this. */
#ifndef CONVSEL_NN_INTERNAL_H
#define CONVSEL_NN_INTERNAL_H

#include <cjson/cJSON.h>
#include <stdarg.h>

#include "nn/model.h"

/* ---------------------------- activations ---------------------------- */

enum nn_act_kind {
    ACT_LINEAR,
    ACT_RELU,
    ACT_RELU6,
    ACT_SIGMOID,
    ACT_HARD_SIGMOID_K2, /* tf.keras 2: clip(0.2x + 0.5, 0, 1) */
    ACT_HARD_SIGMOID_K3, /* Keras 3: clip(x/6 + 0.5, 0, 1) */
    ACT_TANH,
    ACT_SOFTMAX,
    ACT_SOFTPLUS,
    ACT_SOFTSIGN,
    ACT_ELU,
    ACT_SELU,
    ACT_SWISH,
    ACT_GELU,
    ACT_EXPONENTIAL,
    ACT_LEAKY_RELU,
};

struct nn_act {
    enum nn_act_kind kind;
    float alpha; /* elu alpha, leaky_relu slope */
};

/* Applies act in place to n values laid out as rows of `depth` (softmax
 * works per row). */
void nn_act_apply(const struct nn_act *act, float *v, size_t n, size_t depth);
float nn_act_scalar(const struct nn_act *act, float x); /* not for softmax */

/* ---------------------------- graph ---------------------------- */

enum nn_kind {
    L_INPUT,
    L_DENSE,
    L_ACTIVATION,
    L_RELU,
    L_PRELU,
    L_SOFTMAX,
    L_ADD,
    L_SUBTRACT,
    L_MULTIPLY,
    L_AVERAGE,
    L_MAXIMUM,
    L_MINIMUM,
    L_CONCATENATE,
    L_IDENTITY,
    L_BATCHNORM,
    L_LAYERNORM,
    L_RESHAPE,
    L_FLATTEN,
    L_PERMUTE,
    L_REPEAT_VECTOR,
    L_EMBEDDING,
    L_LSTM,
    L_GRU,
    L_MODEL,
};

/* A reference to output `tensor` of call `node` of layer `layer`. */
struct nn_conn {
    int layer, node, tensor;
};

struct nn_node {
    int n_conn;
    struct nn_conn *conn;
};

struct nn_graph;

struct nn_layer {
    enum nn_kind kind;
    const char *class_name; /* static text, or the file's (owned by the model) */
    char *name;
    struct nn_act post; /* the `activation` of the layer's config, applied after it */
    int n_nodes;
    struct nn_node *nodes;

    /* Parameters (owned by the model). */
    const float *w, *u, *b; /* kernel, recurrent kernel, bias */
    size_t nw, nu, nb;
    const float *gamma, *beta, *mean, *var, *alpha_p;
    size_t n_gamma, n_beta, n_mean, n_var, n_alpha;

    /* Configuration. */
    size_t units;
    float epsilon;
    int axes[NN_MAX_RANK]; /* Keras axes, batch included (may be negative) */
    int n_axes;
    float max_value, negative_slope, threshold; /* ReLU; max_value INFINITY when null */
    struct nn_act act, rec_act;                 /* activation and recurrent activation */
    bool return_sequences, return_state, reset_after;
    int target_rank; /* Reshape; -1 entries are inferred */
    long long target[NN_MAX_RANK];
    int perm[NN_MAX_RANK]; /* Permute, 1-based Keras dims */
    int n_perm;
    size_t repeat_n;
    size_t input_dim, output_dim; /* Embedding */
    int concat_axis;              /* Keras axis */
    struct nn_graph *sub;         /* L_MODEL */
};

struct nn_graph {
    char *name;
    int n_layers;
    struct nn_layer *layers;
    int n_in, n_out;
    struct nn_conn *in, *out;
};

/* ---------------------------- plan ---------------------------- */

/* A tensor in the scratch arena. */
struct nn_value {
    struct nn_shape shape;
    size_t offset; /* in floats */
};

struct nn_op {
    const struct nn_layer *layer;
    int n_in, n_out;
    int *in, *out;     /* value ids */
    size_t tmp_offset; /* layer-private scratch, in floats */
};

struct nn_owned {
    void *p;
    size_t bytes;
};

struct nn_model {
    struct nn_graph *graph;
    struct nn_owned *owned; /* every allocation the model owns, freed together */
    size_t n_owned, cap_owned;
    struct nn_value *values;
    int n_values, cap_values;
    struct nn_op *ops;
    int n_ops, cap_ops;
    int n_inputs, n_outputs;
    int *input_values, *output_values;
    size_t scratch_elems;
    size_t param_count;
    size_t n_tests;
    bool keras2; /* tf.keras 2 file (G2): hard_sigmoid and RNN defaults differ */
    char summary[256];
};

/* ---------------------------- helpers ---------------------------- */

/* Formats a message into err (when non-NULL) and returns status. */
enum nn_status nn_fail(char *err, size_t cap, enum nn_status status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Model-owned allocations: freed by nn_model_free. NULL on failure. */
void *nn_alloc(struct nn_model *m, size_t bytes);
char *nn_strdup(struct nn_model *m, const char *s);

/* Decodes a float array value (chunked base64 strings, one string, or an
 * array of numbers). *out is model-owned; an empty array gives count 0. */
enum nn_status nn_decode_floats(struct nn_model *m, const cJSON *value, const char *what,
                                float **out, size_t *count, char *err, size_t cap);

/* Base64 decode of the concatenation of `n` strings into bytes; returns false
 * on a character outside the alphabet or a bad length. */
bool nn_base64_decode(const char *const *parts, const size_t *lens, size_t n, unsigned char *out,
                      size_t out_cap, size_t *out_len);

/* Parses an activation name. Returns NN_OK or NN_ERR_UNSUPPORTED naming it. */
enum nn_status nn_act_parse(const char *name, bool keras2, float alpha, struct nn_act *out,
                            char *err, size_t cap);

/* Parses the graph of an architecture config (recursively for nested
 * models): layers, their configs and parameters, inbound nodes, inputs and
 * outputs. `prefix` is prepended to layer names to find parameters. */
enum nn_status nn_graph_parse(struct nn_model *m, const cJSON *config, const cJSON *params,
                              const char *prefix, int depth, struct nn_graph **out, char *err,
                              size_t cap);

/* Builds the execution plan for the model's graph with the given input
 * shapes: ops in dependency order, shapes and arena offsets. */
enum nn_status nn_plan(struct nn_model *m, const struct nn_shape *input_shapes, char *err,
                       size_t cap);

/* Shape inference for one call of a layer: output shapes and the private
 * scratch it needs (in floats). Rejects inputs the layer cannot take. */
enum nn_status nn_layer_infer(const struct nn_layer *l, const struct nn_shape *in, int n_in,
                              struct nn_shape *out, int *n_out, size_t *tmp_elems, char *err,
                              size_t cap);

/* Runs one call of a layer (shapes already checked by nn_layer_infer).
 * Fails only on data-dependent errors (an Embedding index out of range). */
enum nn_status nn_layer_run(const struct nn_layer *l, const float *const *in,
                            const struct nn_shape *in_shape, int n_in, float *const *out,
                            const struct nn_shape *out_shape, int n_out, float *tmp, char *err,
                            size_t cap);

/* Maps a Keras axis (batch = 0, negative from the end) of a rank-r tensor
 * to an index into dims, or -1 when out of range. */
int nn_axis_index(int keras_axis, int rank);

#endif /* CONVSEL_NN_INTERNAL_H */
