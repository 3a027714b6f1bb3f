/* features.h -- what the model sees of a problem, and the metadata that
 * travels with a trained model (laid out like MIOpen's
 * <arch>_metadata.tn.model: conv_params_used_as_features, encodings,
 * stats, num_inputs, num_outputs, num_solvers).
 *
 * Sizes are log2-scaled: times grow with products of sizes, which become
 * sums, and a 1024-channel layer is not 1000 times "more different" from
 * a 1-channel one than a 2-channel one is. Filter, pad, stride and
 * dilation stay linear: they take few, small values. */
#ifndef CONVSEL_HEUR_FEATURES_H
#define CONVSEL_HEUR_FEATURES_H

#include <stdbool.h>
#include <stddef.h>

#include "core/problem.h"
#include "solvers/solver.h"
#include "util/peak.h"

#define FEATURE_COUNT 24
#define METADATA_ERROR_MAX 256
#define METADATA_NAME_MAX 64

extern const char *const feature_names[FEATURE_COUNT];

/* The raw (unnormalized) features of p run on `threads` threads, on a
 * machine whose kernels block channels by channel_block
 * (features_channel_block). */
void features_of(const struct conv_problem *p, int threads, int channel_block,
                 float out[FEATURE_COUNT]);

/* The channel block of an ISA ("avx512", or a machine signature that
 * starts with it): 16 for avx512, 8 otherwise (AVX2's and SSE's blocks). */
int features_channel_block(const char *isa);

struct feature_stats {
    float mean[FEATURE_COUNT];
    float std[FEATURE_COUNT]; /* > 0; a constant feature gets 1 */
};

/* Mean and standard deviation of n rows of FEATURE_COUNT features. */
void feature_stats_compute(const float *rows, size_t n, struct feature_stats *s);

/* (x - mean) / std, in place. */
void features_normalize(float f[FEATURE_COUNT], const struct feature_stats *s);

/* The range of each raw feature over the training problems: a problem
 * outside it is one the model extrapolates to (heur/policy.c). */
struct feature_bounds {
    bool present; /* false: metadata written before bounds existed */
    float min[FEATURE_COUNT], max[FEATURE_COUNT];
};

/* What the machine can do (struct machine_limits, util/peak.h), measured
 * when it was tuned: no estimate may be below flops / peak or bytes /
 * bandwidth. */

/* Kinds of problem for the safe pick (heur/policy.h): dense, grouped,
 * depthwise. */
#define PROBLEM_KINDS 3
extern const char *const problem_kind_names[PROBLEM_KINDS];

/* Classes of problem for the safe lists: the kinds, then the kinds with a
 * 1x1 filter, whose fastest solvers are others (dense: oneDNN's GEMM,
 * where oneDNN's direct solver is the mildest on larger filters). Names:
 * the kinds', then "<kind>_1x1". */
#define SAFE_CLASSES (2 * PROBLEM_KINDS)
extern const char *const safe_class_names[SAFE_CLASSES];

/* How far above the floor (policy_floor_ms) each solver's time has been
 * measured: per solver and size bin (bins of log2 of the floor in ms, bin
 * b covering log2_min + b * width up to the next), the 1st and 99th
 * percentiles of log2(measured / floor) over the training problems. The
 * policy keeps estimates inside this range: a model extrapolating to a
 * shape it never saw (ViT's 32x32 patch stem) predicted im2col_gemm 330x
 * slower than measured, while no trained problem of that size was more
 * than a few times its floor. Bins with too few measurements take the
 * nearest one's range. */
#define ENVELOPE_BINS_MAX 48
struct estimate_envelope {
    bool present; /* false: metadata written before envelopes existed */
    float log2_min, width;
    int bins;
    bool has[SOLVER_MAX]; /* by registry id: measured on enough training problems */
    float lo[SOLVER_MAX][ENVELOPE_BINS_MAX], hi[SOLVER_MAX][ENVELOPE_BINS_MAX];
};

struct model_metadata {
    struct feature_stats stats;
    int num_solvers;
    char solver_names[SOLVER_MAX][METADATA_NAME_MAX]; /* model output i -> solver name */
    char target[METADATA_NAME_MAX];                   /* the ISA trained on, e.g. avx512 */
    int channel_block; /* features_channel_block(target); set by the parser and the trainer */
    struct feature_bounds bounds;
    /* The same over the training problems of each kind (policy_kind):
     * a depthwise layer of 87 taps is outside what any depthwise layer
     * was trained on though dense layers that wide were (optional). */
    struct feature_bounds kind_bounds[PROBLEM_KINDS];
    struct machine_limits limits;
    /* Per class (policy_safe_class), model outputs by their 99th-percentile
     * regret on the training problems of that class, mildest first
     * (optional: count 0; metadata from before the 1x1 classes has the
     * kinds' lists only, which then serve their 1x1 classes too). */
    int safe_count[SAFE_CLASSES];
    int safe[SAFE_CLASSES][SOLVER_MAX];
    struct estimate_envelope envelope; /* optional, needs limits */
};

/* The metadata as JSON text (malloc'd; NULL when out of memory). */
char *metadata_to_json(const struct model_metadata *m);

/* Parses metadata. Refuses (false, with a message naming the key) JSON
 * that is malformed, lacks a key, has a feature list other than
 * feature_names in this order ("another feature layout"), a non-positive
 * std, or solver indices that are not exactly 0..num_solvers-1. "bounds"
 * and "limits" are optional (older models have neither: bounds.present
 * and limits.present are then false); when present they must be complete,
 * finite and ordered (min <= max, sizes and bandwidths > 0). */
bool metadata_from_json(const char *text, size_t len, struct model_metadata *m, char *err,
                        size_t err_cap);

#endif
