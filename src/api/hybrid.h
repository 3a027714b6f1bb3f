/* hybrid.h -- find modes for CONVSEL_SOLVER_AUTO (hybrid.c). */
#ifndef CONVSEL_API_HYBRID_H
#define CONVSEL_API_HYBRID_H

#include <stdbool.h>
#include <stddef.h>

#include "convsel/convsel.h"
#include "heur/measured.h"
#include "solvers/solver.h"

/* This process's measurement of p for the handle's thread count, or NULL
 * (immediate mode, or not measured). Never measures, never waits. */
const struct measured *hybrid_lookup(convsel_handle_t h, const struct conv_problem *p);

/* The solver AUTO resolves to without measuring: the fastest measured
 * candidate whose workspace fits workspace_bytes, else the ranking's first. */
int hybrid_pick(convsel_handle_t h, const struct conv_problem *p, size_t workspace_bytes);

/* The forward call in hybrid or exhaustive mode: measures p if it must and
 * nobody has (then y holds the output: *done), else sets *pick to the
 * solver to run (NULL: immediate mode's). Returns SUCCESS, or the failure
 * of the measurement (ALLOC_FAILED, ...; the handle's message says it). */
convsel_status_t hybrid_forward(convsel_handle_t h, const struct conv_problem *p, const float *x,
                                const float *w, float *y, size_t workspace_bytes,
                                const struct solver **pick, bool *done);

#endif
