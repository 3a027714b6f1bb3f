/* mlp.h -- the ranking model's trainer: a 3-layer perceptron
 * (features -> hidden -> hidden -> one output per solver, ReLU between)
 * that predicts log2 of each solver's time, trained with Adam on a mean
 * squared error masked to the solvers measured for each problem (a solver
 * that does not apply has no time and must not pull the others) and
 * weighted towards the fastest ones (1 / (1 + log2(time / fastest))):
 * the ranking is decided near the top. */
#ifndef CONVSEL_TRAIN_MLP_H
#define CONVSEL_TRAIN_MLP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define MLP_MAX_HIDDEN 256
#define MLP_MAX_OUT 64

struct mlp {
    int in, hidden, out; /* hidden <= MLP_MAX_HIDDEN, out <= MLP_MAX_OUT */
    float *params;       /* every weight and bias, in one block (what Adam updates) */
    size_t n_params;
    float *w1, *b1, *w2, *b2, *w3, *b3; /* into params; w[i * units + j]: input i to unit j */
};

/* One training example: normalized features, targets and their mask. */
struct mlp_data {
    int count;
    const float *x;   /* count x in */
    const float *y;   /* count x out: log2 ms */
    const bool *mask; /* count x out: measured? */
};

/* Allocates and initializes (uniform He initialization from seed; output
 * bias at the mean target). Returns false when out of memory or a size is
 * out of range. */
bool mlp_init(struct mlp *m, int in, int hidden, int out, unsigned long long seed,
              float mean_target);
void mlp_free(struct mlp *m);

/* Predicts out values for one input. */
void mlp_forward(const struct mlp *m, const float *x, float *y);

/* Temperature of the ranking term, in log2 units: solvers within ~7 % of
 * each other share the target's probability nearly evenly. */
#define MLP_RANK_TEMPERATURE 0.1f

struct mlp_train_options {
    int epochs, batch;
    float lr;
    /* Weight of a listwise ranking term added to the squared error: the
     * cross-entropy between softmax(-prediction / T) and softmax(-target /
     * T) over the measured solvers (T = MLP_RANK_TEMPERATURE). It spends the
     * model's capacity on the order near the top, which decides the pick,
     * rather than on how slow the slow ones are. 0: squared error only. */
    float rank_weight;
    unsigned long long seed;
};

/* Trains for o->epochs passes in shuffled minibatches, the learning rate
 * decaying from lr to lr/20 (cosine); returns the final masked mean
 * squared error on d. */
double mlp_train(struct mlp *m, const struct mlp_data *d, const struct mlp_train_options *o);

/* One example's training loss (the weighted squared error plus rank_weight
 * times the ranking term) and its gradient, added to grad (n_params floats,
 * laid out as params): what mlp_train descends, open for a finite-difference
 * check. */
double mlp_example_loss(const struct mlp *m, const float *x, const float *t, const bool *mask,
                        float rank_weight);
void mlp_example_gradient(const struct mlp *m, const float *x, const float *t, const bool *mask,
                          float rank_weight, float *grad);

/* Masked mean squared error of m on d. */
double mlp_loss(const struct mlp *m, const struct mlp_data *d);

/* The mean of `count` models' predictions (an ensemble: members trained
 * from different seeds disagree where the data say little, and their mean
 * errs less than any one of them). */
void mlp_ensemble_forward(const struct mlp *members, int count, const float *x, float *y);

/* Writes the ensemble (count 1: the one model) as a frugally-deep (tf.keras
 * 2 functional) model -- each member's Dense layers side by side and an
 * Average layer over their outputs -- with one embedded test: test_x -> the
 * trainer's own prediction. */
bool mlp_write_fdeep(const struct mlp *members, int count, FILE *f, const float *test_x);

#define MLP_MAX_MEMBERS 8

#endif
