/* ranking_model.h -- the trained ranking model of this CPU, loaded once
 * per process through the model cache from DIR/<isa>.tn.model and
 * DIR/<isa>_metadata.tn.model (written by `convsel train`; <isa> is
 * avx512, avx2 or generic, the best level this CPU runs, so a model
 * measured on another class of CPU is never used), and its predictions.
 * DIR is $CONVSEL_MODEL_DIR when set (empty: no model), else the models/
 * directory this build was configured with (CONVSEL_DEFAULT_MODEL_DIR).
 *
 * CONVSEL_AI_HEUR=0 switches the model off (the rules rank instead). A
 * missing, corrupt or mismatched model is never an error for the caller:
 * one warning on stderr per process, and the rules take over. */
#ifndef CONVSEL_HEUR_RANKING_MODEL_H
#define CONVSEL_HEUR_RANKING_MODEL_H

#include <stddef.h>

#include "core/problem.h"
#include "heur/features.h"
#include "heur/policy.h"

struct ranking_model;

/* The two files of a model, named in one place for the reader (here) and
 * the writer (src/train): DIR/<target>.tn.model (the network) and
 * DIR/<target>_metadata.tn.model. MIOpen's names, which its tools read. */
enum ranking_model_file { RANKING_MODEL_NET, RANKING_MODEL_METADATA };
#define RANKING_MODEL_PATH_MAX 4200 /* a directory up to PATH_MAX, and the name */

/* Writes the path into buf; false when it does not fit in cap. */
bool ranking_model_path(const char *dir, const char *target, enum ranking_model_file which,
                        char *buf, size_t cap);

/* The model for this CPU, or NULL (disabled, no directory, or failed to
 * load: ranking_model_status says which). Owned by the model cache. */
const struct ranking_model *ranking_model_get(void);

/* Loads DIR/<target>.tn.model and its metadata outside the cache (for
 * `convsel eval --model`). NULL with a message naming the file on error. */
struct ranking_model *ranking_model_open(const char *dir, const char *target, char *err,
                                         size_t cap);
void ranking_model_close(struct ranking_model *m);

/* The model's raw prediction for p on `threads` threads: log2 of the
 * time in ms per registry id, NAN for solvers the model (or this build)
 * lacks. False when the prediction failed. */
bool ranking_model_predict(const struct ranking_model *m, const struct conv_problem *p, int threads,
                           double log2_ms[SOLVER_MAX]);

/* The prediction through the policy (heur/policy.h): applicable solvers,
 * floored estimates, extrapolation and the safe pick. False when the
 * prediction failed. */
bool ranking_model_rank(const struct ranking_model *m, const struct conv_problem *p, int threads,
                        bool weights_constant, struct policy_ranking *out);

const struct model_metadata *ranking_model_metadata(const struct ranking_model *m);

/* One line for the CLI: the model file in use (and what its metadata
 * lacks: bounds, limits), or why there is none. */
void ranking_model_status(char *buf, size_t cap);

#endif
