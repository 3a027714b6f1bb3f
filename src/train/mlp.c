/* mlp.c -- see mlp.h. Plain loops: the networks are tiny
 * (thousands of weights) and a training run takes seconds. */
#include "train/mlp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/rng.h"

static void fill_uniform(struct rng *r, float *w, size_t n, int fan_in) {
    const double a = sqrt(6.0 / fan_in);
    for (size_t i = 0; i < n; i++)
        w[i] = (float)rng_uniform(r, -a, a);
}

/* Points w1..b3 into a block of n_params floats laid out w1 b1 w2 b2 w3 b3. */
static void carve(struct mlp *m, float *block) {
    const size_t in = (size_t)m->in, h = (size_t)m->hidden, out = (size_t)m->out;
    m->w1 = block, m->b1 = m->w1 + in * h;
    m->w2 = m->b1 + h, m->b2 = m->w2 + h * h;
    m->w3 = m->b2 + h, m->b3 = m->w3 + h * out;
}

bool mlp_init(struct mlp *m, int in, int hidden, int out, unsigned long long seed,
              float mean_target) {
    memset(m, 0, sizeof *m);
    if (in < 1 || in > MLP_MAX_HIDDEN || hidden < 1 || hidden > MLP_MAX_HIDDEN || out < 1 ||
        out > MLP_MAX_OUT)
        return false;
    m->in = in, m->hidden = hidden, m->out = out;
    m->n_params = (size_t)in * hidden + hidden + (size_t)hidden * hidden + hidden +
                  (size_t)hidden * out + out;
    if ((m->params = calloc(m->n_params, sizeof(float))) == NULL)
        return false;
    carve(m, m->params);
    struct rng r = rng_seed(seed);
    fill_uniform(&r, m->w1, (size_t)in * hidden, in);
    fill_uniform(&r, m->w2, (size_t)hidden * hidden, hidden);
    fill_uniform(&r, m->w3, (size_t)hidden * out, hidden);
    for (int j = 0; j < out; j++)
        m->b3[j] = mean_target;
    return true;
}

void mlp_free(struct mlp *m) {
    free(m->params);
    memset(m, 0, sizeof *m);
}

/* y = x W + b, then ReLU when relu. */
static void dense(const float *x, int in, const float *w, const float *b, int units, bool relu,
                  float *y) {
    for (int j = 0; j < units; j++)
        y[j] = b[j];
    for (int i = 0; i < in; i++) {
        const float xi = x[i];
        for (int j = 0; j < units; j++)
            y[j] += xi * w[(size_t)i * units + j];
    }
    if (relu)
        for (int j = 0; j < units; j++)
            y[j] = y[j] > 0 ? y[j] : 0;
}

static void forward_keep(const struct mlp *m, const float *x, float *h1, float *h2, float *y) {
    dense(x, m->in, m->w1, m->b1, m->hidden, true, h1);
    dense(h1, m->hidden, m->w2, m->b2, m->hidden, true, h2);
    dense(h2, m->hidden, m->w3, m->b3, m->out, false, y);
}

void mlp_forward(const struct mlp *m, const float *x, float *y) {
    float h1[MLP_MAX_HIDDEN], h2[MLP_MAX_HIDDEN];
    forward_keep(m, x, h1, h2, y);
}

double mlp_loss(const struct mlp *m, const struct mlp_data *d) {
    double sum = 0;
    long n = 0;
    float y[MLP_MAX_OUT];
    for (int e = 0; e < d->count; e++) {
        mlp_forward(m, &d->x[(size_t)e * m->in], y);
        for (int j = 0; j < m->out; j++)
            if (d->mask[(size_t)e * m->out + j]) {
                const double diff = (double)y[j] - d->y[(size_t)e * m->out + j];
                sum += diff * diff;
                n++;
            }
    }
    return n ? sum / (double)n : 0;
}

/* The smallest of v over the measured outputs: of the targets (log2 ms),
 * the fastest solver's time. */
static float masked_min(const struct mlp *m, const float *v, const bool *mask) {
    float least = 1e30f;
    for (int j = 0; j < m->out; j++)
        if (mask[j] && v[j] < least)
            least = v[j];
    return least;
}

/* Errors near the problem's fastest solver decide the ranking; a solver 8x
 * slower than the best only has to stay slow. So each solver's error is
 * weighted 1 / (1 + log2(its time / the fastest)): 1 for the fastest, 1/2
 * at 2x, 1/4 at 8x. */
static float error_weight(float t, float best) {
    return 1.0f / (1.0f + (t - best));
}

/* p = softmax(-v / T) over the measured outputs (0 elsewhere), shifted by
 * the minimum, which leaves softmax unchanged and keeps exp finite. */
static void rank_softmax(const struct mlp *m, const float *v, const bool *mask, float *p) {
    const float v_min = masked_min(m, v, mask);
    float sum = 0;
    for (int j = 0; j < m->out; j++) {
        p[j] = mask[j] ? expf(-(v[j] - v_min) / MLP_RANK_TEMPERATURE) : 0.0f;
        sum += p[j];
    }
    for (int j = 0; j < m->out; j++)
        p[j] /= sum;
}

double mlp_example_loss(const struct mlp *m, const float *x, const float *t, const bool *mask,
                        float rank_weight) {
    float y[MLP_MAX_OUT], p[MLP_MAX_OUT], q[MLP_MAX_OUT];
    mlp_forward(m, x, y);
    const float best = masked_min(m, t, mask);
    double loss = 0;
    for (int j = 0; j < m->out; j++)
        if (mask[j])
            loss += error_weight(t[j], best) * ((double)y[j] - t[j]) * ((double)y[j] - t[j]);
    if (rank_weight > 0) {
        rank_softmax(m, y, mask, p);
        rank_softmax(m, t, mask, q);
        for (int j = 0; j < m->out; j++)
            if (mask[j])
                loss -= rank_weight * q[j] * log((double)p[j]);
    }
    return loss;
}

/* Adds the gradient of one example's training loss (mlp_example_loss) to g
 * (same layout as params). Returns the number of measured outputs. */
static int backprop(const struct mlp *m, struct mlp *g, const float *x, const float *t,
                    const bool *mask, float rank_weight) {
    const int h = m->hidden;
    float h1[MLP_MAX_HIDDEN], h2[MLP_MAX_HIDDEN], y[MLP_MAX_OUT], dy[MLP_MAX_OUT];
    float d2[MLP_MAX_HIDDEN] = {0}, d1[MLP_MAX_HIDDEN] = {0};
    forward_keep(m, x, h1, h2, y);
    const float best = masked_min(m, t, mask);
    int measured = 0;
    for (int j = 0; j < m->out; j++) {
        dy[j] = mask[j] ? 2.0f * error_weight(t[j], best) * (y[j] - t[j]) : 0.0f;
        measured += mask[j];
    }
    if (rank_weight > 0) {
        /* The ranking term -sum_j q_j log p_j, with p = softmax(-y / T) and q
         * = softmax(-t / T): d/dy_j = (q_j - p_j) / T. */
        float p[MLP_MAX_OUT], q[MLP_MAX_OUT];
        rank_softmax(m, y, mask, p);
        rank_softmax(m, t, mask, q);
        for (int j = 0; j < m->out; j++)
            dy[j] += rank_weight * (q[j] - p[j]) / MLP_RANK_TEMPERATURE;
    }
    for (int j = 0; j < m->out; j++)
        g->b3[j] += dy[j];
    for (int i = 0; i < h; i++)
        for (int j = 0; j < m->out; j++) {
            g->w3[(size_t)i * m->out + j] += h2[i] * dy[j];
            d2[i] += m->w3[(size_t)i * m->out + j] * dy[j];
        }
    for (int i = 0; i < h; i++)
        d2[i] = h2[i] > 0 ? d2[i] : 0;
    for (int j = 0; j < h; j++)
        g->b2[j] += d2[j];
    for (int i = 0; i < h; i++)
        for (int j = 0; j < h; j++) {
            g->w2[(size_t)i * h + j] += h1[i] * d2[j];
            d1[i] += m->w2[(size_t)i * h + j] * d2[j];
        }
    for (int i = 0; i < h; i++)
        d1[i] = h1[i] > 0 ? d1[i] : 0;
    for (int j = 0; j < h; j++)
        g->b1[j] += d1[j];
    for (int i = 0; i < m->in; i++)
        for (int j = 0; j < h; j++)
            g->w1[(size_t)i * h + j] += x[i] * d1[j];
    return measured;
}

void mlp_example_gradient(const struct mlp *m, const float *x, const float *t, const bool *mask,
                          float rank_weight, float *grad) {
    struct mlp g = *m;
    carve(&g, grad);
    backprop(m, &g, x, t, mask, rank_weight);
}

double mlp_train(struct mlp *m, const struct mlp_data *d, const struct mlp_train_options *o) {
    const int epochs = o->epochs, batch = o->batch;
    struct mlp g = *m;
    float *grad = calloc(m->n_params, sizeof(float));
    float *mom = calloc(m->n_params, sizeof(float)), *vel = calloc(m->n_params, sizeof(float));
    int *order = malloc((size_t)(d->count ? d->count : 1) * sizeof *order);
    if (!grad || !mom || !vel || !order) {
        free(grad), free(mom), free(vel), free(order);
        return -1;
    }
    carve(&g, grad);
    for (int e = 0; e < d->count; e++)
        order[e] = e;
    struct rng r = rng_seed(o->seed ^ 0x5eedULL);
    const double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
    long step = 0;
    for (int epoch = 0; epoch < epochs; epoch++) {
        /* Cosine decay from lr to lr/20: large steps find the region, small
         * ones settle in it instead of rattling around the minimum. */
        const double pi = 3.14159265358979323846;
        const double rate = o->lr * (0.05 + 0.95 * 0.5 * (1 + cos(pi * epoch / epochs)));
        for (int e = d->count - 1; e > 0; e--) { /* Fisher-Yates */
            const int k = (int)rng_int(&r, 0, e), tmp = order[e];
            order[e] = order[k], order[k] = tmp;
        }
        for (int start = 0; start < d->count; start += batch) {
            memset(grad, 0, m->n_params * sizeof(float));
            int measured = 0;
            const int end = start + batch < d->count ? start + batch : d->count;
            for (int b = start; b < end; b++) {
                const size_t e = (size_t)order[b];
                measured += backprop(m, &g, &d->x[e * m->in], &d->y[e * m->out],
                                     &d->mask[e * m->out], o->rank_weight);
            }
            if (measured == 0)
                continue;
            step++;
            const double c1 = 1 - pow(beta1, (double)step), c2 = 1 - pow(beta2, (double)step);
            for (size_t i = 0; i < m->n_params; i++) {
                const double gi = grad[i] / measured;
                mom[i] = (float)(beta1 * mom[i] + (1 - beta1) * gi);
                vel[i] = (float)(beta2 * vel[i] + (1 - beta2) * gi * gi);
                m->params[i] -= (float)(rate * (mom[i] / c1) / (sqrt(vel[i] / c2) + eps));
            }
        }
    }
    free(grad), free(mom), free(vel), free(order);
    return mlp_loss(m, d);
}

static void write_floats(FILE *f, const float *v, size_t n) {
    fputc('[', f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%.9g", i ? "," : "", (double)v[i]);
    fputc(']', f);
}

static void write_dense_layer(FILE *f, const char *name, int units, const char *activation,
                              const char *from) {
    fprintf(f,
            ",{\"class_name\":\"Dense\",\"name\":\"%s\",\"config\":{\"name\":\"%s\",\"units\":%d,"
            "\"activation\":\"%s\",\"use_bias\":true},\"inbound_nodes\":[[[\"%s\",0,0,{}]]]}",
            name, name, units, activation, from);
}

void mlp_ensemble_forward(const struct mlp *members, int count, const float *x, float *y) {
    float one[MLP_MAX_OUT];
    for (int j = 0; j < members[0].out; j++)
        y[j] = 0.0f;
    for (int i = 0; i < count; i++) {
        mlp_forward(&members[i], x, one);
        for (int j = 0; j < members[0].out; j++)
            y[j] += one[j];
    }
    for (int j = 0; j < members[0].out; j++)
        y[j] /= (float)count;
}

/* Layer names: "hidden1", "hidden2", "log2_ms" for a single model;
 * "m<i>_hidden1", ... per member of an ensemble, whose Average layer is
 * "log2_ms". */
static void layer_name(char *buf, size_t cap, int count, int member, const char *what) {
    if (count == 1)
        snprintf(buf, cap, "%s", what);
    else
        snprintf(buf, cap, "m%d_%s", member, what);
}

bool mlp_write_fdeep(const struct mlp *members, int count, FILE *f, const float *test_x) {
    const struct mlp *m = &members[0];
    float y[MLP_MAX_OUT];
    mlp_ensemble_forward(members, count, test_x, y);
    fprintf(f, "{\"architecture\":{\"class_name\":\"Functional\",\"keras_version\":\"2.11.0\","
               "\"config\":{\"name\":\"convsel_ranking\",\"layers\":[");
    fprintf(f,
            "{\"class_name\":\"InputLayer\",\"name\":\"features\",\"config\":{\"name\":"
            "\"features\",\"batch_input_shape\":[null,%d]},\"inbound_nodes\":[]}",
            m->in);
    char h1[32], h2[32], out[32];
    for (int i = 0; i < count; i++) {
        layer_name(h1, sizeof h1, count, i, "hidden1");
        layer_name(h2, sizeof h2, count, i, "hidden2");
        layer_name(out, sizeof out, count, i, "log2_ms");
        write_dense_layer(f, h1, m->hidden, "relu", "features");
        write_dense_layer(f, h2, m->hidden, "relu", h1);
        write_dense_layer(f, out, m->out, "linear", h2);
    }
    if (count > 1) {
        fprintf(f, ",{\"class_name\":\"Average\",\"name\":\"log2_ms\",\"config\":{\"name\":"
                   "\"log2_ms\"},\"inbound_nodes\":[[");
        for (int i = 0; i < count; i++)
            fprintf(f, "%s[\"m%d_log2_ms\",0,0,{}]", i ? "," : "", i);
        fprintf(f, "]]}");
    }
    fprintf(f, "],\"input_layers\":[[\"features\",0,0]],\"output_layers\":[[\"log2_ms\",0,0]]}},"
               "\"image_data_format\":\"channels_last\",");
    fprintf(f, "\"input_shapes\":[[%d]],\"output_shapes\":[[%d]],", m->in, m->out);
    fprintf(f, "\"tests\":[{\"inputs\":[{\"shape\":[%d],\"values\":", m->in);
    write_floats(f, test_x, (size_t)m->in);
    fprintf(f, "}],\"outputs\":[{\"shape\":[%d],\"values\":", m->out);
    write_floats(f, y, (size_t)m->out);
    fprintf(f, "}]}],\"trainable_params\":{");
    for (int i = 0; i < count; i++) {
        const struct mlp *e = &members[i];
        const struct {
            const char *what;
            const float *w, *b;
            size_t nw, nb;
        } layers[3] = {
            {"hidden1", e->w1, e->b1, (size_t)e->in * e->hidden, (size_t)e->hidden},
            {"hidden2", e->w2, e->b2, (size_t)e->hidden * e->hidden, (size_t)e->hidden},
            {"log2_ms", e->w3, e->b3, (size_t)e->hidden * e->out, (size_t)e->out},
        };
        for (int l = 0; l < 3; l++) {
            layer_name(out, sizeof out, count, i, layers[l].what);
            fprintf(f, "%s\"%s\":{\"weights\":", i || l ? "," : "", out);
            write_floats(f, layers[l].w, layers[l].nw);
            fprintf(f, ",\"bias\":");
            write_floats(f, layers[l].b, layers[l].nb);
            fputc('}', f);
        }
    }
    fprintf(f, "}}\n");
    return !ferror(f);
}
