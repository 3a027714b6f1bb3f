/* layer_config.c -- turns one layer object of a model file into a struct
 * nn_layer: its kind, configuration and parameters. Every key a layer
 * relies on is checked here; sizes that depend on the input shape are
 * checked later by nn_layer_infer. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nn/json_util.h"

enum nn_status nn_layer_configure(struct nn_model *m, struct nn_layer *l, const char *class_name,
                                  const cJSON *config, const cJSON *params, const char *prefix,
                                  int depth, char *err, size_t cap);

static const char *const identity_layers[] = {
    "Dropout",          "AlphaDropout",           "GaussianDropout",
    "GaussianNoise",    "SpatialDropout1D",       "SpatialDropout2D",
    "SpatialDropout3D", "ActivityRegularization", "Identity",
};

static const struct {
    const char *name;
    enum nn_kind kind;
} kinds[] = {
    {"InputLayer", L_INPUT},
    {"Dense", L_DENSE},
    {"Activation", L_ACTIVATION},
    {"ReLU", L_RELU},
    {"LeakyReLU", L_RELU},
    {"ELU", L_ACTIVATION},
    {"PReLU", L_PRELU},
    {"Softmax", L_SOFTMAX},
    {"Add", L_ADD},
    {"Subtract", L_SUBTRACT},
    {"Multiply", L_MULTIPLY},
    {"Average", L_AVERAGE},
    {"Maximum", L_MAXIMUM},
    {"Minimum", L_MINIMUM},
    {"Concatenate", L_CONCATENATE},
    {"BatchNormalization", L_BATCHNORM},
    {"LayerNormalization", L_LAYERNORM},
    {"Reshape", L_RESHAPE},
    {"Flatten", L_FLATTEN},
    {"Permute", L_PERMUTE},
    {"RepeatVector", L_REPEAT_VECTOR},
    {"Embedding", L_EMBEDDING},
    {"LSTM", L_LSTM},
    {"GRU", L_GRU},
    {"TimeDistributed", L_DENSE},
    {"Model", L_MODEL},
    {"Functional", L_MODEL},
    {"Sequential", L_MODEL},
};

/* The parameter array `key` of this layer: required or optional. */
static enum nn_status param(struct nn_model *m, const struct nn_layer *l, const cJSON *layer_params,
                            const char *key, bool required, const float **out, size_t *count,
                            char *err, size_t cap) {
    const cJSON *v =
        cJSON_IsObject(layer_params) ? cJSON_GetObjectItemCaseSensitive(layer_params, key) : NULL;
    *out = NULL;
    *count = 0;
    if (v == NULL)
        return required ? nn_fail(err, cap, NN_ERR_FORMAT,
                                  "layer %.64s: parameter '%s' is missing from trainable_params",
                                  l->name, key)
                        : NN_OK;
    char what[160];
    snprintf(what, sizeof what, "layer %.64s: parameter '%s'", l->name, key);
    float *f;
    enum nn_status st = nn_decode_floats(m, v, what, &f, count, err, cap);
    if (st == NN_OK) {
        *out = f;
        for (size_t i = 0; i < *count; i++)
            if (!isfinite(f[i]))
                return nn_fail(err, cap, NN_ERR_FORMAT, "%s: element %zu is not finite", what, i);
        m->param_count += *count;
    }
    return st;
}

#define TRY(expr)                                                                                  \
    do {                                                                                           \
        enum nn_status try_st_ = (expr);                                                           \
        if (try_st_ != NN_OK)                                                                      \
            return try_st_;                                                                        \
    } while (0)

static enum nn_status configure_rnn(struct nn_model *m, struct nn_layer *l, const cJSON *config,
                                    const cJSON *lp, char *err, size_t cap) {
    const bool lstm = l->kind == L_LSTM;
    const size_t gates = lstm ? 4 : 3;
    bool use_bias, flag;
    const char *act = NULL, *rec = NULL;
    TRY(json_get_size(config, "units", true, 0, 1u << 16, &l->units, l->name, err, cap));
    if (l->units == 0)
        return nn_fail(err, cap, NN_ERR_FORMAT, "layer %.64s: units must be >= 1", l->name);
    TRY(json_get_bool(config, "use_bias", false, true, &use_bias, l->name, err, cap));
    TRY(json_get_bool(config, "return_sequences", false, false, &l->return_sequences, l->name, err,
                      cap));
    TRY(json_get_bool(config, "return_state", false, false, &l->return_state, l->name, err, cap));
    TRY(json_get_bool(config, "reset_after", false, !m->keras2, &l->reset_after, l->name, err,
                      cap));
    const char *const unsupported[] = {"go_backwards", "time_major"};
    for (size_t i = 0; i < 2; i++) {
        TRY(json_get_bool(config, unsupported[i], false, false, &flag, l->name, err, cap));
        if (flag)
            return nn_fail(err, cap, NN_ERR_UNSUPPORTED, "layer %.64s: %s = true is not supported",
                           l->name, unsupported[i]);
    }
    TRY(json_get_string(config, "activation", false, &act, l->name, err, cap));
    TRY(json_get_string(config, "recurrent_activation", false, &rec, l->name, err, cap));
    TRY(nn_act_parse(act ? act : "tanh", m->keras2, 1.0f, &l->act, err, cap));
    TRY(nn_act_parse(rec ? rec : (m->keras2 ? "hard_sigmoid" : "sigmoid"), m->keras2, 1.0f,
                     &l->rec_act, err, cap));
    if (l->act.kind == ACT_SOFTMAX || l->rec_act.kind == ACT_SOFTMAX)
        return nn_fail(err, cap, NN_ERR_UNSUPPORTED,
                       "layer %.64s: softmax inside a recurrent layer is not supported", l->name);
    TRY(param(m, l, lp, "weights", true, &l->w, &l->nw, err, cap));
    TRY(param(m, l, lp, "recurrent_weights", true, &l->u, &l->nu, err, cap));
    TRY(param(m, l, lp, "bias", use_bias, &l->b, &l->nb, err, cap));
    const size_t n = l->units;
    if (l->nw == 0 || l->nw % (gates * n) != 0)
        return nn_fail(err, cap, NN_ERR_FORMAT,
                       "layer %.64s: %zu kernel weights is not a multiple of %zu*units = %zu",
                       l->name, l->nw, gates, gates * n);
    if (l->nu != n * gates * n)
        return nn_fail(err, cap, NN_ERR_FORMAT,
                       "layer %.64s: recurrent kernel has %zu weights, expected units*%zu*units "
                       "= %zu",
                       l->name, l->nu, gates, n * gates * n);
    const size_t want_bias = !use_bias ? 0 : (!lstm && l->reset_after) ? 6 * n : gates * n;
    if (use_bias && l->nb != want_bias)
        return nn_fail(err, cap, NN_ERR_FORMAT, "layer %.64s: bias has %zu values, expected %zu%s",
                       l->name, l->nb, want_bias,
                       lstm ? "" : " (GRU bias size must match reset_after)");
    return NN_OK;
}

static enum nn_status configure_norm(struct nn_model *m, struct nn_layer *l, const cJSON *config,
                                     const cJSON *lp, char *err, size_t cap) {
    bool center, scale;
    TRY(json_get_int_list(config, "axis", false, -1, l->axes, &l->n_axes, l->name, err, cap));
    TRY(json_get_float(config, "epsilon", false, 1e-3f, &l->epsilon, l->name, err, cap));
    TRY(json_get_bool(config, "center", false, true, &center, l->name, err, cap));
    TRY(json_get_bool(config, "scale", false, true, &scale, l->name, err, cap));
    if (!(l->epsilon >= 0))
        return nn_fail(err, cap, NN_ERR_FORMAT, "layer %.64s: epsilon must be >= 0", l->name);
    TRY(param(m, l, lp, "beta", center, &l->beta, &l->n_beta, err, cap));
    TRY(param(m, l, lp, "gamma", scale, &l->gamma, &l->n_gamma, err, cap));
    if (l->kind == L_LAYERNORM)
        return NN_OK;
    if (l->n_axes != 1)
        return nn_fail(err, cap, NN_ERR_UNSUPPORTED,
                       "layer %.64s: BatchNormalization over %d axes is not supported", l->name,
                       l->n_axes);
    TRY(param(m, l, lp, "moving_mean", true, &l->mean, &l->n_mean, err, cap));
    TRY(param(m, l, lp, "moving_variance", true, &l->var, &l->n_var, err, cap));
    if ((center && l->n_beta != l->n_mean) || (scale && l->n_gamma != l->n_mean) ||
        l->n_var != l->n_mean)
        return nn_fail(err, cap, NN_ERR_FORMAT,
                       "layer %.64s: moving_mean, moving_variance, beta, gamma sizes differ",
                       l->name);
    for (size_t i = 0; i < l->n_var; i++)
        if (l->var[i] + l->epsilon < 0)
            return nn_fail(err, cap, NN_ERR_FORMAT,
                           "layer %.64s: moving_variance[%zu] + epsilon is negative", l->name, i);
    return NN_OK;
}

/* target_shape of Reshape: ints >= 1, at most one -1 (or null). */
static enum nn_status configure_reshape(struct nn_layer *l, const cJSON *config, char *err,
                                        size_t cap) {
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(config, "target_shape");
    if (!cJSON_IsArray(t) || cJSON_GetArraySize(t) < 1 || cJSON_GetArraySize(t) > NN_MAX_RANK)
        return nn_fail(err, cap, NN_ERR_FORMAT,
                       "layer %.64s: target_shape must be a list of 1..5 sizes", l->name);
    int inferred = 0;
    l->target_rank = 0;
    for (const cJSON *d = t->child; d != NULL; d = d->next) {
        long long v;
        if (cJSON_IsNull(d))
            v = -1;
        else if (cJSON_IsNumber(d) && d->valuedouble == floor(d->valuedouble) &&
                 d->valuedouble >= -1 && d->valuedouble <= (double)NN_LIMIT_TENSOR_ELEMS &&
                 d->valuedouble != 0)
            v = (long long)d->valuedouble;
        else
            return nn_fail(err, cap, NN_ERR_FORMAT,
                           "layer %.64s: target_shape entries must be -1 or 1..%u", l->name,
                           NN_LIMIT_TENSOR_ELEMS);
        inferred += v == -1;
        l->target[l->target_rank++] = v;
    }
    if (inferred > 1)
        return nn_fail(err, cap, NN_ERR_FORMAT, "layer %.64s: target_shape has %d unknown sizes",
                       l->name, inferred);
    return NN_OK;
}

static enum nn_status configure_permute(struct nn_layer *l, const cJSON *config, char *err,
                                        size_t cap) {
    TRY(json_get_int_list(config, "dims", true, 0, l->perm, &l->n_perm, l->name, err, cap));
    bool seen[NN_MAX_RANK + 1] = {false};
    for (int i = 0; i < l->n_perm; i++) {
        if (l->perm[i] < 1 || l->perm[i] > l->n_perm || seen[l->perm[i]])
            return nn_fail(err, cap, NN_ERR_FORMAT,
                           "layer %.64s: dims must be a permutation of 1..%d", l->name, l->n_perm);
        seen[l->perm[i]] = true;
    }
    return NN_OK;
}

/* The `activation` of a layer's config, applied after the layer. */
static enum nn_status post_activation(struct nn_model *m, struct nn_layer *l, const cJSON *config,
                                      char *err, size_t cap) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(config, "activation");
    l->post.kind = ACT_LINEAR;
    if (a == NULL || cJSON_IsNull(a) || l->kind == L_LSTM || l->kind == L_GRU ||
        l->kind == L_ACTIVATION)
        return NN_OK;
    if (!cJSON_IsString(a))
        return nn_fail(err, cap, NN_ERR_UNSUPPORTED, "layer %.64s: activation must be a string",
                       l->name);
    float alpha;
    const char *key = strcmp(a->valuestring, "leaky_relu") == 0 ? "negative_slope" : "alpha";
    TRY(json_get_float(config, key, false, strcmp(key, "alpha") == 0 ? 1.0f : 0.2f, &alpha, l->name,
                       err, cap));
    return nn_act_parse(a->valuestring, m->keras2, alpha, &l->post, err, cap);
}

enum nn_status nn_layer_configure(struct nn_model *m, struct nn_layer *l, const char *class_name,
                                  const cJSON *config, const cJSON *params, const char *prefix,
                                  int depth, char *err, size_t cap) {
    bool found = false;
    for (size_t i = 0; i < sizeof identity_layers / sizeof identity_layers[0]; i++)
        if (strcmp(class_name, identity_layers[i]) == 0) {
            l->kind = L_IDENTITY;
            found = true;
        }
    for (size_t i = 0; !found && i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(class_name, kinds[i].name) == 0) {
            l->kind = kinds[i].kind;
            found = true;
        }
    if (!found)
        return nn_fail(err, cap, NN_ERR_UNSUPPORTED, "unsupported layer type %.64s in layer %.64s",
                       class_name, l->name);
    if (!cJSON_IsObject(config))
        return nn_fail(err, cap, NN_ERR_FORMAT, "layer %.64s: config must be an object", l->name);

    /* TimeDistributed(Dense): Dense already maps the last axis at every
     * position of the leading axes, which is what the wrapper does. */
    if (strcmp(class_name, "TimeDistributed") == 0) {
        const cJSON *inner = cJSON_GetObjectItemCaseSensitive(config, "layer");
        const cJSON *inner_class = cJSON_GetObjectItemCaseSensitive(inner, "class_name");
        if (!cJSON_IsString(inner_class) || strcmp(inner_class->valuestring, "Dense") != 0)
            return nn_fail(err, cap, NN_ERR_UNSUPPORTED,
                           "unsupported layer type TimeDistributed(%.64s) in layer %.64s",
                           cJSON_IsString(inner_class) ? inner_class->valuestring : "?", l->name);
        config = cJSON_GetObjectItemCaseSensitive(inner, "config");
        if (!cJSON_IsObject(config))
            return nn_fail(err, cap, NN_ERR_FORMAT, "layer %.64s: wrapped layer has no config",
                           l->name);
    }

    char key[600];
    snprintf(key, sizeof key, "%s%s", prefix, l->name);
    const cJSON *lp = cJSON_IsObject(params) ? cJSON_GetObjectItemCaseSensitive(params, key) : NULL;
    TRY(post_activation(m, l, config, err, cap));

    switch (l->kind) {
    case L_DENSE: {
        bool use_bias;
        TRY(json_get_size(config, "units", true, 0, NN_LIMIT_TENSOR_ELEMS, &l->units, l->name, err,
                          cap));
        TRY(json_get_bool(config, "use_bias", false, true, &use_bias, l->name, err, cap));
        if (l->units == 0)
            return nn_fail(err, cap, NN_ERR_FORMAT, "layer %.64s: units must be >= 1", l->name);
        TRY(param(m, l, lp, "weights", true, &l->w, &l->nw, err, cap));
        TRY(param(m, l, lp, "bias", use_bias, &l->b, &l->nb, err, cap));
        if (l->nw == 0 || l->nw % l->units != 0)
            return nn_fail(err, cap, NN_ERR_FORMAT,
                           "layer %.64s: invalid weight count %zu for %zu units", l->name, l->nw,
                           l->units);
        if (use_bias && l->nb != l->units)
            return nn_fail(err, cap, NN_ERR_FORMAT,
                           "layer %.64s: size of bias (%zu) does not match units (%zu)", l->name,
                           l->nb, l->units);
        return NN_OK;
    }
    case L_ACTIVATION: {
        const char *name;
        float alpha = 1.0f;
        if (strcmp(class_name, "ELU") == 0) {
            TRY(json_get_float(config, "alpha", false, 1.0f, &alpha, l->name, err, cap));
            l->act.kind = ACT_ELU;
            l->act.alpha = alpha;
            return NN_OK;
        }
        TRY(json_get_string(config, "activation", true, &name, l->name, err, cap));
        TRY(json_get_float(config, strcmp(name, "leaky_relu") == 0 ? "negative_slope" : "alpha",
                           false, strcmp(name, "leaky_relu") == 0 ? 0.2f : 1.0f, &alpha, l->name,
                           err, cap));
        return nn_act_parse(name, m->keras2, alpha, &l->act, err, cap);
    }
    case L_RELU: {
        l->max_value = INFINITY;
        if (strcmp(class_name, "LeakyReLU") == 0) {
            /* Keras 3 calls the slope negative_slope, tf.keras 2 alpha; both default 0.3. */
            const bool k3 = cJSON_GetObjectItemCaseSensitive(config, "negative_slope") != NULL;
            return json_get_float(config, k3 ? "negative_slope" : "alpha", false, 0.3f,
                                  &l->negative_slope, l->name, err, cap);
        }
        const cJSON *mv = cJSON_GetObjectItemCaseSensitive(config, "max_value");
        if (mv != NULL && !cJSON_IsNull(mv))
            TRY(json_get_float(config, "max_value", true, 0, &l->max_value, l->name, err, cap));
        TRY(json_get_float(config, "negative_slope", false, 0.0f, &l->negative_slope, l->name, err,
                           cap));
        return json_get_float(config, "threshold", false, 0.0f, &l->threshold, l->name, err, cap);
    }
    case L_PRELU:
        TRY(json_get_int_list(config, "shared_axes", false, 0, l->axes, &l->n_axes, l->name, err,
                              cap));
        if (l->n_axes == 1 && l->axes[0] == 0)
            l->n_axes = 0;
        return param(m, l, lp, "alpha", true, &l->alpha_p, &l->n_alpha, err, cap);
    case L_SOFTMAX: {
        int axes[NN_MAX_RANK], n;
        TRY(json_get_int_list(config, "axis", false, -1, axes, &n, l->name, err, cap));
        if (n != 1 || axes[0] != -1)
            return nn_fail(err, cap, NN_ERR_UNSUPPORTED,
                           "layer %.64s: Softmax only over the last axis (-1)", l->name);
        return NN_OK;
    }
    case L_CONCATENATE: {
        int axes[NN_MAX_RANK], n;
        TRY(json_get_int_list(config, "axis", false, -1, axes, &n, l->name, err, cap));
        l->concat_axis = axes[0];
        return NN_OK;
    }
    case L_BATCHNORM:
    case L_LAYERNORM: return configure_norm(m, l, config, lp, err, cap);
    case L_RESHAPE: return configure_reshape(l, config, err, cap);
    case L_PERMUTE: return configure_permute(l, config, err, cap);
    case L_REPEAT_VECTOR:
        TRY(json_get_size(config, "n", true, 0, NN_LIMIT_TENSOR_ELEMS, &l->repeat_n, l->name, err,
                          cap));
        return NN_OK;
    case L_EMBEDDING:
        TRY(json_get_size(config, "input_dim", true, 0, NN_LIMIT_TENSOR_ELEMS, &l->input_dim,
                          l->name, err, cap));
        TRY(json_get_size(config, "output_dim", true, 0, NN_LIMIT_TENSOR_ELEMS, &l->output_dim,
                          l->name, err, cap));
        TRY(param(m, l, lp, "weights", true, &l->w, &l->nw, err, cap));
        if (l->input_dim == 0 || l->output_dim == 0 || l->nw != l->input_dim * l->output_dim)
            return nn_fail(err, cap, NN_ERR_FORMAT,
                           "layer %.64s: embedding has %zu weights, expected input_dim*output_dim "
                           "= %zu*%zu",
                           l->name, l->nw, l->input_dim, l->output_dim);
        return NN_OK;
    case L_LSTM:
    case L_GRU: return configure_rnn(m, l, config, lp, err, cap);
    case L_MODEL: {
        char sub_prefix[600];
        snprintf(sub_prefix, sizeof sub_prefix, "%s%s_", prefix, l->name);
        if (depth + 1 > NN_LIMIT_NESTING)
            return nn_fail(err, cap, NN_ERR_FORMAT, "layer %.64s: models nested deeper than %d",
                           l->name, NN_LIMIT_NESTING);
        return nn_graph_parse(m, config, params, sub_prefix, depth + 1, &l->sub, err, cap);
    }
    default: return NN_OK; /* input, identity, merges, flatten: nothing to configure */
    }
}
