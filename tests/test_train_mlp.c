/* test_train_mlp.c -- the trainer's gradient against finite differences of
 * its loss: the weighted squared error alone and with the listwise ranking
 * term, on a small random network, with an unmeasured output (which must
 * pull nothing) and near-tied targets (where the ranking term is largest).
 * A wrong sign or a missing factor in backpropagation would still train,
 * only worse: this is where it shows. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"
#include "train/mlp.h"
#include "util/rng.h"

enum { IN = 5, HIDDEN = 8, OUT = 4 };

/* Largest |analytic - numeric| / max(1, |numeric|) over all parameters. */
static double worst_gradient_error(struct mlp *m, const float *x, const float *t, const bool *mask,
                                   float rank_weight) {
    float *grad = calloc(m->n_params, sizeof *grad);
    mlp_example_gradient(m, x, t, mask, rank_weight, grad);
    double worst = 0;
    const float h = 1e-3f;
    for (size_t i = 0; i < m->n_params; i++) {
        const float keep = m->params[i];
        m->params[i] = keep + h;
        const double up = mlp_example_loss(m, x, t, mask, rank_weight);
        m->params[i] = keep - h;
        const double down = mlp_example_loss(m, x, t, mask, rank_weight);
        m->params[i] = keep;
        const double numeric = (up - down) / (2.0 * h);
        const double err = fabs(grad[i] - numeric) / fmax(1.0, fabs(numeric));
        worst = fmax(worst, err);
    }
    free(grad);
    return worst;
}

int main(void) {
    struct mlp m;
    CHECK(mlp_init(&m, IN, HIDDEN, OUT, 7, -1.0f));
    struct rng r = rng_seed(11);
    for (size_t i = 0; i < m.n_params; i++) /* biases too, so units are not all alike */
        m.params[i] = (float)rng_uniform(&r, -0.8, 0.8);
    const float x[IN] = {0.3f, -1.2f, 0.7f, 2.0f, -0.4f};
    /* log2 ms: output 1 is not measured; 0 and 3 are 3 % apart */
    const float t[OUT] = {-2.0f, 5.0f, -0.5f, -1.957f};
    const bool mask[OUT] = {true, false, true, true};
    const float weights[] = {0.0f, 0.5f, 4.0f};
    for (size_t w = 0; w < sizeof weights / sizeof weights[0]; w++) {
        const double err = worst_gradient_error(&m, x, t, mask, weights[w]);
        printf("rank weight %.1f: loss %.5f, worst relative gradient error %.2e\n",
               (double)weights[w], mlp_example_loss(&m, x, t, mask, weights[w]), err);
        CHECK(err < 2e-2);
    }
    /* The ranking term adds to the loss and changes the gradient. */
    CHECK(mlp_example_loss(&m, x, t, mask, 0.5f) > mlp_example_loss(&m, x, t, mask, 0.0f));
    float *g0 = calloc(m.n_params, sizeof *g0), *g1 = calloc(m.n_params, sizeof *g1);
    mlp_example_gradient(&m, x, t, mask, 0.0f, g0);
    mlp_example_gradient(&m, x, t, mask, 0.5f, g1);
    double diff = 0;
    for (size_t i = 0; i < m.n_params; i++)
        diff += fabs(g0[i] - g1[i]);
    CHECK(diff > 1e-3);
    /* An unmeasured output gets no gradient: its output weights stay 0. */
    float *g = calloc(m.n_params, sizeof *g);
    mlp_example_gradient(&m, x, t, mask, 0.5f, g);
    double unmeasured = fabs(g[m.n_params - OUT + 1]); /* b3[1] */
    for (int i = 0; i < HIDDEN; i++)
        unmeasured += fabs(g[(size_t)(m.w3 - m.params) + (size_t)i * OUT + 1]);
    CHECK(unmeasured == 0.0);
    free(g0), free(g1), free(g);
    mlp_free(&m);
    return test_finish("test_train_mlp");
}
