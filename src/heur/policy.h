/* policy.h -- from a model's raw predictions to the ranking the library
 * gives: estimates that respect the machine's limits, extrapolation
 * detected, and the pick made safe where the model cannot be trusted.
 * The library (ranking_model.c) and `convsel eval` (which scores models
 * trained in memory, one per held-out family) apply the same policy, so
 * the figures eval reports are the library's.
 *
 * 0. Input. The model reads the problem's features with those of its
 *    shape clipped to the range of its kind's training problems (the
 *    bounds of 2.), its scale (log2_batch, log2_flop) as it is. A ReLU
 *    network is linear outside its data, so a filter twice as wide as any
 *    trained sent its estimates anywhere: ViT's 32x32 patch stems were
 *    estimated 50-370x their measured time on im2col_gemm with its family
 *    left out, and within 0.58-0.87x clipped. The clipped shape is the
 *    nearest one trained; the work, which sets most of the time, stays.
 * 1. Floor. No solver can beat the machine: an estimate is at least
 *    flops x work_fraction / peak (work_fraction < 1 for Winograd, which
 *    multiplies less) and bytes / bandwidth, bytes being the tensors'
 *    (x, w and y once each) and the bandwidth that of the memory level the
 *    tensors fit (limits from metadata, measured when the machine was
 *    tuned: util/peak.c). Without limits in the metadata, no floor.
 *    Envelope: an estimate is also kept within the 1st-99th percentile of
 *    measured / floor of its solver over the training problems of about
 *    its size (metadata "envelope", features.h); without one, not.
 * 2. Extrapolation. A problem with a feature outside the range the model
 *    was trained on is one the model has never seen anything like; its
 *    numbers there are guesses (the WaveNet layer 4000 wide: 5x-80000x
 *    off). The range is that of the problem's kind (dense, grouped,
 *    depthwise: metadata "bounds_by_kind"), else the overall one
 *    ("bounds"): QuartzNet's 1x87 depthwise layer is inside the overall
 *    range, as dense 1-D layers have such filters, but outside any
 *    depthwise layer's. Without bounds in the metadata, this is not
 *    detected (said once by ranking_model_status).
 * 3. The pick when extrapolating: the first applicable solver of the
 *    problem's class's safe list (metadata "safe": per kind, and per kind
 *    with a 1x1 filter; the solvers by the 99th percentile of their
 *    regret over the training problems of the class, mildest first); the
 *    model's order follows. On the shipped data: oneDNN's direct solver
 *    for dense and grouped layers (p99 9.3x and 1.5x), oneDNN's GEMM for
 *    dense 1x1 ones (6.1x), convsel's depthwise for depthwise ones
 *    (1.3-2.1x). Letting the model choose between the first two
 *    (POLICY_SAFE_CHOICES 2, with one list per kind) sent DeepLab's 3x3
 *    at dilation 36 to oneDNN's GEMM at 7.8x and QuartzNet's 1x87
 *    depthwise layer to oneDNN's direct solver at 14.3x the fastest.
 *    Except where the only features outside are the scale (log2_batch,
 *    log2_flop), above or below the range: a larger batch of a trained
 *    shape keeps the model's order, as the times grow with the work (the
 *    safe pick cost 3x on the suite's large VGG layers), and so does a
 *    layer smaller than any trained (the safe pick put EfficientNet's
 *    0.8 us SE layer on oneDNN's GEMM, whose fixed cost is 7x that).
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
 * first POLICY_SAFE_CHOICES applicable solvers of the class's safe list. */
#define POLICY_SAFE_CHOICES 1

struct policy_ranking {
    int order[SOLVER_MAX]; /* applicable solvers the model knows, first = the pick */
    int n;
    double ms[SOLVER_MAX]; /* by registry id: the floored estimate; < 0 unknown */
    bool extrapolating;    /* the pick is the safe one, unless scale_only */
    bool scale_only;       /* extrapolating only in the scale (log2_batch, log2_flop) */
    int feature;           /* the first feature outside the bounds, or -1 */
    float value;           /* its value */
    bool unsure;           /* extrapolating, or the first two within POLICY_UNSURE_MARGIN */
};

/* The lowest time the machine allows for s on p, in ms (0 without limits). */
double policy_floor_ms(const struct machine_limits *limits, const struct conv_problem *p,
                       const struct solver *s);

/* What the model reads for p: its features (features_of), those of its
 * shape clipped to the range of its kind's training problems (the scale's
 * left as they are), normalized by the metadata's statistics. */
void policy_model_input(const struct model_metadata *meta, const struct conv_problem *p,
                        int threads, float out[FEATURE_COUNT]);

/* The bin of the envelope (features.h) that a floor of floor_ms falls in:
 * below the first bin the first, above the last the last. */
int policy_envelope_bin(const struct estimate_envelope *e, double floor_ms);

/* What per-call weights add to s's time on p, in ms: its measured ns per
 * weight element (1x1 or larger filters) times p's weights; 0 when not
 * measured. The policy adds it to model estimates, rank.c to database
 * timings taken with constant weights. */
double policy_weights_ms(const struct weights_costs *costs, const struct solver *s,
                         const struct conv_problem *p);

/* The kind of a problem (its feature bounds): 0 dense, 1 grouped, 2 depthwise. */
int policy_kind(const struct conv_problem *p);

/* Its class for the safe pick: the kind, plus PROBLEM_KINDS for a 1x1 filter. */
int policy_safe_class(const struct conv_problem *p);

/* The feature bounds the policy checks p against: its kind's where the
 * metadata has them, else the overall ones. */
const struct feature_bounds *policy_bounds(const struct model_metadata *meta,
                                           const struct conv_problem *p);

/* Ranks p from log2_ms[id] (NAN for solvers the model lacks): applicable
 * solvers only, fastest floored estimate first; when extrapolating, the
 * model's first among the first POLICY_SAFE_CHOICES applicable solvers of
 * meta->safe[class] goes first. */
void policy_rank(const struct model_metadata *meta, const struct conv_problem *p, int threads,
                 bool weights_constant, const double log2_ms[SOLVER_MAX],
                 struct policy_ranking *out);

#endif
