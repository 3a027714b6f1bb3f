/* activations.c -- activation functions by name, with frugally-deep's
 * formulas (docs/model-runtime.md lists them). hard_sigmoid differs
 * between tf.keras 2 and Keras 3 files, so the caller says which. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "nn/internal.h"

static const struct {
    const char *name;
    enum nn_act_kind kind;
} act_names[] = {
    {"linear", ACT_LINEAR},
    {"relu", ACT_RELU},
    {"relu6", ACT_RELU6},
    {"sigmoid", ACT_SIGMOID},
    {"tanh", ACT_TANH},
    {"softmax", ACT_SOFTMAX},
    {"softplus", ACT_SOFTPLUS},
    {"softsign", ACT_SOFTSIGN},
    {"elu", ACT_ELU},
    {"selu", ACT_SELU},
    {"swish", ACT_SWISH},
    {"silu", ACT_SWISH},
    {"gelu", ACT_GELU},
    {"exponential", ACT_EXPONENTIAL},
    {"leaky_relu", ACT_LEAKY_RELU},
};

enum nn_status nn_act_parse(const char *name, bool keras2, float alpha, struct nn_act *out,
                            char *err, size_t cap) {
    out->alpha = alpha;
    if (strcmp(name, "hard_sigmoid") == 0) {
        out->kind = keras2 ? ACT_HARD_SIGMOID_K2 : ACT_HARD_SIGMOID_K3;
        return NN_OK;
    }
    for (size_t i = 0; i < sizeof act_names / sizeof act_names[0]; i++)
        if (strcmp(name, act_names[i].name) == 0) {
            out->kind = act_names[i].kind;
            return NN_OK;
        }
    return nn_fail(err, cap, NN_ERR_UNSUPPORTED, "unknown activation type: %.64s", name);
}

static float sigmoid(float x) {
    return 1.0f / (1.0f + expf(-x));
}

float nn_act_scalar(const struct nn_act *a, float x) {
    switch (a->kind) {
    case ACT_LINEAR: return x;
    case ACT_RELU: return x > 0 ? x : 0;
    case ACT_RELU6: return x < 0 ? 0 : x > 6 ? 6 : x;
    case ACT_SIGMOID: return sigmoid(x);
    case ACT_HARD_SIGMOID_K2: {
        const float y = 0.2f * x + 0.5f;
        return y < 0 ? 0 : y > 1 ? 1 : y;
    }
    case ACT_HARD_SIGMOID_K3: return x < -3 ? 0 : x > 3 ? 1 : x / 6.0f + 0.5f;
    case ACT_TANH: return tanhf(x);
    case ACT_SOFTPLUS: {
        /* log1p(exp(x)) without overflow, cut where float cannot tell. */
        const float t = logf(FLT_EPSILON) + 2.0f;
        return x > -t ? x : x < t ? expf(x) : log1pf(expf(x));
    }
    case ACT_SOFTSIGN: return x / (fabsf(x) + 1.0f);
    case ACT_ELU: return x >= 0 ? x : a->alpha * (expf(x) - 1.0f);
    case ACT_SELU:
        return 1.0507009873554805f * (x >= 0 ? x : 1.6732632423543772f * (expf(x) - 1.0f));
    case ACT_SWISH: return x / (1.0f + expf(-x));
    case ACT_GELU: return 0.5f * x * (1.0f + erff(x / sqrtf(2.0f)));
    case ACT_EXPONENTIAL: return expf(x);
    case ACT_LEAKY_RELU: return x > 0 ? x : a->alpha * x;
    case ACT_SOFTMAX: break;
    }
    return x;
}

void nn_act_apply(const struct nn_act *a, float *v, size_t n, size_t depth) {
    if (a->kind == ACT_LINEAR)
        return;
    if (a->kind != ACT_SOFTMAX) {
        for (size_t i = 0; i < n; i++)
            v[i] = nn_act_scalar(a, v[i]);
        return;
    }
    /* Softmax over the last axis, stable form: exp(x - m - log sum exp(x - m)). */
    for (size_t row = 0; depth > 0 && row + depth <= n; row += depth) {
        float *x = v + row;
        float m = -INFINITY;
        for (size_t i = 0; i < depth; i++)
            m = x[i] > m ? x[i] : m;
        double sum = 0;
        for (size_t i = 0; i < depth; i++)
            sum += exp((double)x[i] - m);
        const double lse = log(sum);
        for (size_t i = 0; i < depth; i++) {
            const float y = (float)exp((double)x[i] - m - lse);
            x[i] = isfinite(y) ? y : 0.0f;
        }
    }
}
