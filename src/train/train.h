/* train.h -- fitting the ranking model to a dataset, and writing it as the
 * files the library loads (DIR/<isa>.tn.model, DIR/<isa>_metadata.tn.model).
 * What `convsel train` runs, and what `convsel eval` runs once per
 * held-out family.
 *
 * The model (mlp.h): features (heur/features.h, normalized by the
 * training problems' statistics) -> hidden -> hidden -> log2 of every
 * solver's time, one output per solver measured anywhere in the data; an
 * ensemble of `ensemble` such models from seeds seed..seed+K-1, averaged.
 * The metadata records the statistics, the solvers, the ISA, the range of
 * every feature over the training problems (so the library can tell when
 * it extrapolates) and the machine's limits when known (so no estimate is
 * below what the machine can do). */
#ifndef CONVSEL_TRAIN_TRAIN_H
#define CONVSEL_TRAIN_TRAIN_H

#include <stdbool.h>
#include <stddef.h>

#include "heur/features.h"
#include "train/dataset.h"
#include "train/mlp.h"

struct train_options {
    int epochs, hidden, ensemble;
    unsigned long long seed;
    float rank_weight;
};

/* The defaults of `convsel train` (and of the shipped model's script). */
#define TRAIN_DEFAULT_OPTIONS                                                                      \
    (struct train_options) {                                                                       \
        .epochs = 300, .hidden = 64, .ensemble = 1, .seed = 1, .rank_weight = 0                    \
    }

/* What a problem is for in one training. */
enum train_role { ROLE_TRAIN, ROLE_VALIDATION, ROLE_HELD_OUT, ROLE_UNUSED };

struct trained {
    struct mlp members[MLP_MAX_MEMBERS];
    int count;
    int outputs;
    int solver_of[MLP_MAX_OUT]; /* model output -> registry id */
    struct model_metadata meta;
    float test_x[FEATURE_COUNT]; /* a normalized training input, for the embedded test */
    int trained_on;              /* problems fitted */
};

/* A line of progress ("model 1/3 (seed 1): 300 epochs, training loss ..."). */
typedef void (*train_log_fn)(void *ctx, const char *line);

/* Fits a model to the problems with role ROLE_TRAIN. limits (may be NULL
 * or not present) go into the metadata. Returns false with a message
 * (out of memory, no training problems). */
bool train_fit(const struct dataset *d, const enum train_role *role, const struct train_options *o,
               const struct machine_limits *limits, train_log_fn log, void *ctx,
               struct trained *out, char *err, size_t cap);

void train_free(struct trained *t);

/* The trainer's own prediction for p on `threads` threads: log2 ms per
 * registry id in log2_ms[] (NAN for solvers the model lacks). */
void train_predict(const struct trained *t, const struct conv_problem *p, int threads,
                   double log2_ms[SOLVER_MAX]);

/* Writes DIR/<isa>.tn.model and DIR/<isa>_metadata.tn.model (through the
 * file opener: a FIFO or directory in their place is refused). The model's
 * path goes to model_path. */
bool train_write(const struct trained *t, const char *dir, char *model_path, size_t path_cap,
                 char *err, size_t cap);

#endif
