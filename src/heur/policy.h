/* policy.h -- from a model's raw predictions to the ranking the library
 * gives: estimates that respect the machine's limits, extrapolation
 * detected, and the pick made safe where the model cannot be trusted.
 * The library (ranking_model.c) and `convsel eval` (which scores models
 * trained in memory, one per held-out family) apply the same policy, so
 * the figures eval reports are the library's.
 *
 * 1. Floor. No solver can beat the machine: an estimate is at least
 *    flops x work_fraction / peak (work_fraction < 1 for Winograd, which
 *    multiplies less) and bytes / bandwidth, bytes being the tensors'
 *    (x, w and y once each) and the bandwidth that of the memory level the
 *    tensors fit (limits from metadata, measured when the machine was
 *    tuned: util/peak.c). Without limits in the metadata, no floor.
 * 2. Extrapolation. A problem with a feature outside the range the model
 *    was trained on (bounds in the metadata) is one the model has never
 *    seen anything like; its numbers there are guesses (the WaveNet layer
 *    4000 wide: 5x-80000x off). Without bounds in the metadata, this is
 *    not detected (said once by ranking_model_status).
 * 3. The pick when extrapolating: of the solvers with the lowest 99th
 *    percentile of regret over the training problems of the same kind
 *    (dense, grouped, depthwise) -- those whose worst cases were mildest
 *    (metadata "safe") -- the first POLICY_SAFE_CHOICES that apply, and of
 *    those the one the model ranks first; the model's order follows.
 *    With one choice, DeepLab's 3x3 at dilation 36 on 33x33 went to
 *    oneDNN's GEMM at 7.8x the time of its direct solver, second on the
 *    list (leave-one-family-out: top-1 84.6 -> 84.8 %, regret 1.022 ->
 *    1.021 with two). On the
 *    shipped data that is oneDNN's GEMM for dense and grouped layers
 *    (p99 7.0x and 3.8x, against 260x for the direct solver), convsel's
 *    depthwise for depthwise ones (3.1x) (figures of the 2026-11-30
 *    data). Except where the only features outside are the scale
 *    (log2_batch, log2_flop) above the maximum: a larger batch of a
 *    trained shape keeps the model's order, as the times grow with the
 *    work (the safe pick cost 3x on the suite's large VGG layers).
 * 4. Unsure: the model extrapolates, or its first two are within
 *    POLICY_UNSURE_MARGIN of each other. Hybrid find mode measures then. */
#ifndef CONVSEL_HEUR_POLICY_H
#define CONVSEL_HEUR_POLICY_H

#include <stdbool.h>

#include "core/problem.h"
#include "heur/features.h"
#include "solvers/solver.h"

/* Predictions within this factor of the best are too close to call. */
#define POLICY_UNSURE_MARGIN 1.25

/* When extrapolating, the pick is the one the model ranks first among the
 * first POLICY_SAFE_CHOICES applicable solvers of the kind's safe list. */
#define POLICY_SAFE_CHOICES 2

struct policy_ranking {
    int order[SOLVER_MAX]; /* applicable solvers the model knows, first = the pick */
    int n;
    double ms[SOLVER_MAX]; /* by registry id: the floored estimate; < 0 unknown */
    bool extrapolating;    /* the pick is the safe one, unless scale_only */
    bool scale_only;       /* extrapolating only in the scale, above the range */
    int feature;           /* the first feature outside the bounds, or -1 */
    float value;           /* its value */
    bool unsure;           /* extrapolating, or the first two within POLICY_UNSURE_MARGIN */
};

/* The lowest time the machine allows for s on p, in ms (0 without limits). */
double policy_floor_ms(const struct machine_limits *limits, const struct conv_problem *p,
                       const struct solver *s);

/* What per-call weights add to s's time on p, in ms: its measured ns per
 * weight element (1x1 or larger filters) times p's weights; 0 when not
 * measured. The policy adds it to model estimates, rank.c to database
 * timings taken with constant weights. */
double policy_weights_ms(const struct weights_costs *costs, const struct solver *s,
                         const struct conv_problem *p);

/* The kind of a problem for the safe pick: 0 dense, 1 grouped, 2 depthwise. */
int policy_kind(const struct conv_problem *p);

/* Ranks p from log2_ms[id] (NAN for solvers the model lacks): applicable
 * solvers only, fastest floored estimate first; when extrapolating, the
 * model's first among the first POLICY_SAFE_CHOICES applicable solvers of
 * meta->safe[kind] goes first. */
void policy_rank(const struct model_metadata *meta, const struct conv_problem *p, int threads,
                 bool weights_constant, const double log2_ms[SOLVER_MAX],
                 struct policy_ranking *out);

#endif
