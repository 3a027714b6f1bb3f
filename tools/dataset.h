/* dataset.h -- a performance database as training and scoring data: one
 * entry per measured problem of one machine signature, with every
 * solver's median time. Used by `convsel train` and `convsel eval`. */
#ifndef CONVSEL_TOOLS_DATASET_H
#define CONVSEL_TOOLS_DATASET_H

#include <stdbool.h>
#include <stddef.h>

#include "core/problem.h"
#include "db/perfdb.h"
#include "solvers/solver.h"

struct ds_problem {
    char key[CONVSEL_PROBLEM_KEY_MAX];
    struct conv_problem p;
    double ms[SOLVER_MAX]; /* by registry id; < 0 = not measured */
    int fastest;           /* registry id of the fastest measured solver */
};

struct dataset {
    struct ds_problem *v;
    int n;
    char machine[PERFDB_MACHINE_MAX];
    int threads;         /* from the signature's "-<T>t" */
    size_t ignored;      /* records of unknown solvers, invalid times or keys */
    size_t inapplicable; /* records of solvers the registry no longer applies there */
};

/* Loads the problems of `machine` (NULL: the database must hold exactly
 * one machine signature). Returns false with a message in err. */
bool dataset_load(const char *db_path, const char *machine, struct dataset *out, char *err,
                  size_t err_cap);
void dataset_free(struct dataset *d);

/* Removes the problems listed in a problem CSV (the format of convsel
 * bench), e.g. the benchmark suite, which must not be trained on. Returns
 * the number removed, or -1 after printing "convsel <command>: ..." when
 * the file cannot be read or a row is not a valid problem. */
int dataset_exclude_csv(struct dataset *d, const char *command, const char *csv_path);

/* The held-out split, by problem: a fixed hash of the key puts one problem
 * in five in the test set, whatever order or shard it was measured in. */
bool dataset_is_test(const char *key);

/* For choosing hyperparameters without looking at the held-out split: one
 * in four of the problems that are not held out, by the same hash. */
bool dataset_is_validation(const char *key);

/* How well a ranking did on problems: top-1, top-3, picks within 5 % of
 * the fastest (where top-1 is a coin toss between near-equal solvers),
 * and the sum of log(time of its first measured solver / fastest). */
struct ds_score {
    int n, top1, top3, within5;
    double log_regret;
};

/* Scores one problem for a ranking (registry ids, best first; unmeasured
 * solvers such as the reference are skipped). Returns the solver picked
 * (its regret in *regret), or -1 when the ranking names no measured one. */
int ds_score_add(struct ds_score *s, const struct ds_problem *q, const int *rank, int n_rank,
                 double *regret);

/* The rules' ranking of p as registry ids (heur_rank_rules); returns how many. */
int ds_rules_ranking(const struct conv_problem *p, int ids[SOLVER_MAX]);

/* "<label> top1 = A/N (x%)  top3 = B/N (y%)  within 5% = C/N (z%)  geomean regret = R" */
void ds_score_print(const char *label, const struct ds_score *s);

#endif
