/* select.h -- resolves CONVSEL_SOLVER_AUTO to a solver for a problem.
 *
 * Today this is the fallback rule set alone; the model-based ranking
 * (immediate mode) plugs in here in front of it. */
#ifndef CONVSEL_HEUR_SELECT_H
#define CONVSEL_HEUR_SELECT_H

#include "core/problem.h"

/* The id of the solver to run p with when the caller asked for AUTO. Always
 * an applicable solver: the reference applies to every valid problem. */
int heur_select_solver(const struct conv_problem *p);

#endif /* CONVSEL_HEUR_SELECT_H */
