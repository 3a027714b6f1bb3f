/* miopen.h -- running MIOpen's own AI-heuristic models (generation 1):
 * TunaNet solver ranking and Kernel Tuning Net (KTN) perf-config
 * prediction, exactly as MIOpen computes them, without a GPU.
 *
 * Model files are MIOpen's: in a model directory, <arch>.tn.model and
 * <arch>_metadata.tn.model (TunaNet), <arch>_<solver>_{encoder,decoder,
 * metadata}.ktn.model (KTN). All of them load through the model cache,
 * keyed by (arch, kind, solver) with the directory folded into the kind, so
 * a second arch or directory never gets the first one's model (MIOpen's KTN
 * cache key left out the arch).
 *
 * Supported archs: gfx908, gfx90a, gfx942 (their feature layouts and
 * checks are arch-specific). MIOpen silently uses the gfx908 model for any
 * other device; convsel refuses an unknown arch instead (MIOPEN_UNKNOWN_ARCH),
 * because gfx908's features and solver list describe a different GPU.
 * Specification: ../shared/reference/miopen-ai-heuristics.md, sections 2-3.
 */
#ifndef CONVSEL_COMPAT_MIOPEN_H
#define CONVSEL_COMPAT_MIOPEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum miopen_direction { MIOPEN_FWD = 1, MIOPEN_BWD_DATA = 2, MIOPEN_BWD_WEIGHTS = 4 };
enum miopen_dtype { MIOPEN_FP32, MIOPEN_FP16, MIOPEN_BF16 };

/* A 2-D convolution in forward convention: x is n x c x h x w, the filter
 * k x (c/g) x fy x fx, y is n x k x ho x wo, whatever the direction. */
struct miopen_problem {
    enum miopen_direction direction;
    enum miopen_dtype dtype;
    const char *layout; /* "NCHW", "NHWC", ... */
    int64_t n, c, h, w, k, fy, fx, ph, pw, sh, sw, dh, dw, g;
    int64_t ho, wo; /* filled by miopen_problem_finish */
};

/* Computes ho and wo; false when the filter does not fit. */
bool miopen_problem_finish(struct miopen_problem *p);

/* Outcomes. NOT_APPLICABLE carries the failed check in the message. */
enum miopen_status {
    MIOPEN_OK = 0,
    MIOPEN_NOT_APPLICABLE, /* the model does not support this problem */
    MIOPEN_UNKNOWN_ARCH,
    MIOPEN_MODEL_ERROR,   /* a missing or invalid model/metadata file */
    MIOPEN_NO_PREDICTION, /* KTN: EOS ranked first, or no valid token */
};

#define MIOPEN_MESSAGE_MAX 512

/* --------------------------- TunaNet --------------------------- */

/* The last applicability check: can MIOpen's solver `name` run p? */
typedef bool (*miopen_solver_applicable_fn)(void *ctx, const char *name,
                                            const struct miopen_problem *p);

struct miopen_ranked_solver {
    const char *name; /* valid while the model cache lives */
    float score;      /* the network's logit */
    uint64_t id;      /* MIOpen's registry id, 0 when unknown */
};

#define MIOPEN_MAX_SOLVERS 64

/* Ranks MIOpen's solvers for p on arch, best first (all solvers the model
 * scores, like MIOpen's PredictSolver). applicable may be NULL (every
 * solver is taken as applicable). On failure the message says why. */
enum miopen_status miopen_tunanet_rank(const char *model_dir, const char *arch,
                                       const struct miopen_problem *p,
                                       miopen_solver_applicable_fn applicable, void *ctx,
                                       struct miopen_ranked_solver *out, size_t *count, char *msg,
                                       size_t msg_cap);

/* MIOpen's registry id of a solver name (0 = unknown). */
uint64_t miopen_solver_id(const char *name);

/* ----------------------------- KTN ----------------------------- */

/* A solver-side token validator: applies token value `value` as parameter
 * `index` and says whether the config is still (partially) valid. */
typedef bool (*miopen_ktn_validator_fn)(void *state, int index, const char *value);

/* Runs MIOpen's greedy constrained decoding (ModelSetParams) for solver on
 * arch with the encoder input `features` (transform: a dim x dim diagonal,
 * else dim x 1). Returns MIOPEN_OK when every parameter was set through the
 * validator; MIOPEN_NO_PREDICTION when EOS outranks every valid token or no
 * token validates (MIOpen would fall back to the solver's static
 * heuristic). */
enum miopen_status miopen_ktn_decode(const char *model_dir, const char *arch, const char *solver,
                                     enum miopen_direction direction, const float *features,
                                     size_t n_features, bool transform,
                                     miopen_ktn_validator_fn validator, void *state, char *msg,
                                     size_t msg_cap);

/* ConvAsm1x1U end to end (gfx908): model applicability, features,
 * decoding with its validator, and the perf-config string
 * ("read_size,k_mult,chunks_per_wave,chunk_size,n_mult,c_mult,
 * waves_c_in_group,waves_k_in_group"). */
enum miopen_status miopen_ktn_conv_asm_1x1u(const char *model_dir, const char *arch,
                                            const struct miopen_problem *p, char *config,
                                            size_t config_cap, char *msg, size_t msg_cap);

#endif /* CONVSEL_COMPAT_MIOPEN_H */
