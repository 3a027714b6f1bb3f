/* eval.h -- how good a ranking is on measured problems, without running
 * anything: what `convsel eval` and `convsel train` report.
 *
 * For each problem: top-1 (the ranking's first measured solver is the
 * fastest measured), top-3, the regret (time of its pick / the fastest),
 * and for every measured solver with an estimate the estimate's error
 * |log2(estimated / measured)|. A report keeps the worst picks and the
 * estimate errors' median and 95th percentile beside the geomean regret:
 * averages hide the picks that are 25x off.
 *
 * Leave one family out (eval_families): for each family of real layers in
 * the dataset (its origin: the corpus, data/networks), a model is trained
 * on every problem that is not of that family -- neither its layers nor
 * their perturbations -- and scored on the family's layers. That is how a
 * network nobody tuned for fares, which a random split of the sampler's
 * own draws does not show. */
#ifndef CONVSEL_TRAIN_EVAL_H
#define CONVSEL_TRAIN_EVAL_H

#include <stdbool.h>
#include <stddef.h>

#include "heur/ranking_model.h"
#include "train/dataset.h"
#include "train/train.h"

#define EVAL_WORST 5

/* Whether the model extrapolated on a problem (heur/policy.h). */
struct eval_extrapolation {
    int feature;    /* the first feature outside the training range; -1: none */
    bool safe_pick; /* the pick was the policy's safe one (not for the scale alone) */
};

/* A ranking of a problem: ids best first (returns how many), estimates
 * per id in ms (< 0 none), and *x as the model says. */
typedef int (*eval_ranking_fn)(void *ctx, const struct ds_problem *q, int threads,
                               int ids[SOLVER_MAX], double est_ms[SOLVER_MAX],
                               struct eval_extrapolation *x);

struct eval_pick {
    double regret;
    int problem; /* index into the dataset */
    int pick;    /* registry id */
    struct eval_extrapolation x;
};

struct eval_report {
    struct ds_score score;
    struct eval_pick worst[EVAL_WORST]; /* largest regrets, largest first */
    int n_worst;
    double *est_err; /* |log2(est / measured)|, every measured solver with an estimate */
    size_t n_est, cap_est;
    int extrapolated; /* problems the model extrapolated on */
    int fastest[SOLVER_MAX], chosen[SOLVER_MAX];
};

void eval_report_free(struct eval_report *r);

/* Scores problem i of d with the ranking; returns the pick (-1: none). */
int eval_add(struct eval_report *r, const struct dataset *d, int i, eval_ranking_fn rank,
             void *ctx);

/* Adds b's problems to a (pooling families). */
bool eval_report_merge(struct eval_report *a, const struct eval_report *b);

/* Median and 95th percentile of the estimate errors (0 when there are none). */
void eval_estimate_error(const struct eval_report *r, double *median, double *p95);

/* The rankings: the hand-written rules (ctx unused), a model as the
 * library loads it (ctx: const struct ranking_model *), a model trained
 * in memory through the library's policy (ctx: const struct trained *). */
int eval_rank_rules(void *ctx, const struct ds_problem *q, int threads, int ids[SOLVER_MAX],
                    double est_ms[SOLVER_MAX], struct eval_extrapolation *x);
int eval_rank_library(void *ctx, const struct ds_problem *q, int threads, int ids[SOLVER_MAX],
                      double est_ms[SOLVER_MAX], struct eval_extrapolation *x);
int eval_rank_trained(void *ctx, const struct ds_problem *q, int threads, int ids[SOLVER_MAX],
                      double est_ms[SOLVER_MAX], struct eval_extrapolation *x);

/* One family's result, handed to the caller as it is done. */
struct eval_family {
    const char *family;
    int layers;  /* real layers of the family scored */
    int trained; /* problems the family's model was trained on */
    const struct eval_report *report;
};
typedef void (*eval_family_fn)(void *ctx, const struct eval_family *f);

/* Leave one family out over every family of d's layers (or those named
 * in `only`, a comma-separated list; NULL: all); overall pools every
 * family's layers. limits go into each fold's metadata (floors), as
 * into the shipped model's. The folds (a training each) run on `jobs`
 * threads (1..EVAL_JOBS_MAX; the results do not depend on it), and fn sees
 * them in name order once all are done. false with err when a training
 * fails, d has no layers with a family, or `only` names a family d has no
 * layers of. */
#define EVAL_JOBS_MAX 64
bool eval_families(const struct dataset *d, const struct train_options *o,
                   const struct machine_limits *limits, const char *only, int jobs,
                   eval_family_fn fn, void *ctx, struct eval_report *overall, char *err,
                   size_t cap);

/* "<label> top1 = A/N (x%)  top3 = B/N (y%)  within 5% = C/N (z%)  geomean regret = R" */
void eval_format_score(const char *label, const struct ds_score *s, char *buf, size_t cap);

#endif
