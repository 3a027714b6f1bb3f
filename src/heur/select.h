/* select.h -- ranks the solvers for a problem, and resolves
 * CONVSEL_SOLVER_AUTO to the first of them.
 *
 * Order of authority: this machine's measurements from the performance
 * database (db_snapshot.c) -> the trained model (ranking_model.c) -> the
 * hand-written rules (fallback.c). Only applicable solvers are ever
 * returned. */
#ifndef CONVSEL_HEUR_SELECT_H
#define CONVSEL_HEUR_SELECT_H

#include "convsel/convsel.h"
#include "core/problem.h"

struct heur_choice {
    int solver;                      /* registry id */
    double time_ms;                  /* estimate; < 0 when the source has none */
    convsel_ranking_source_t source; /* where this entry's place came from */
    bool extrapolated;               /* a model estimate for a problem outside its training range */
};

/* What the model said about the problem, for callers that act on it
 * (hybrid find mode, the CLI's explanation). */
struct heur_info {
    bool measured;      /* the database holds this problem for this machine */
    bool model;         /* the model ranked it */
    bool extrapolating; /* outside the model's training range (feature, value) */
    int feature;
    float value;
    bool unsure; /* extrapolating, the model's first two within POLICY_UNSURE_MARGIN, or
                    neither database nor model ranked it */
};

/* Writes up to max choices for p (run on `threads` threads, with weights
 * declared constant or not: per-call weights add each solver's measured
 * transform cost to the model's estimates, heur/policy.h), best
 * first: measured solvers fastest first, then the model's predictions
 * fastest first (heur/policy.h: floored, the safe pick first when it
 * extrapolates), then the rules' pick, then every other applicable solver
 * in registry order, the reference last. Returns the number written (>= 1
 * when max >= 1: the reference always applies). info may be NULL. */
int heur_rank(const struct conv_problem *p, int threads, bool weights_constant,
              struct heur_choice *out, int max, struct heur_info *info);

/* The rules' ranking alone, as heur_rank would give it for a problem the
 * database does not hold (convsel eval measures the rules with it). */
int heur_rank_rules(const struct conv_problem *p, struct heur_choice *out, int max);

/* The first of heur_rank's choices. */
int heur_select_solver(const struct conv_problem *p, int threads, bool weights_constant);

/* The hand-written rules alone (fallback.c): always an applicable solver. */
int heur_rules_solver(const struct conv_problem *p);

#endif /* CONVSEL_HEUR_SELECT_H */
