/* ranking_model.h -- the trained ranking model of a machine signature,
 * loaded once per process through the model cache from
 * $CONVSEL_MODEL_DIR/<machine>.tn.model and <machine>_metadata.tn.model
 * (written by `convsel train`), and its predictions.
 *
 * CONVSEL_AI_HEUR=0 switches the model off (the rules rank instead). A
 * missing, corrupt or mismatched model is never an error for the caller:
 * one warning on stderr per process, and the rules take over. */
#ifndef CONVSEL_HEUR_RANKING_MODEL_H
#define CONVSEL_HEUR_RANKING_MODEL_H

#include <stddef.h>

#include "core/problem.h"
#include "heur/features.h"

struct ranking_model;

/* The model for this machine signature, or NULL (disabled, no directory,
 * or failed to load: ranking_model_status says which). */
const struct ranking_model *ranking_model_get(const char *machine);

/* Predicted time in ms per registry solver id for p on `threads` threads;
 * ms[id] < 0 for solvers the model does not know. Returns the number of
 * solvers predicted, or -1 when the prediction failed. */
int ranking_model_predict(const struct ranking_model *m, const struct conv_problem *p, int threads,
                          double ms[SOLVER_MAX]);

/* One line for the CLI: the model file in use, or why there is none. */
void ranking_model_status(const char *machine, char *buf, size_t cap);

#endif
