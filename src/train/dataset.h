/* dataset.h -- a performance database as training and scoring data: one
 * entry per measured problem of one machine signature, with every
 * solver's median time and where the problem came from. Used by `convsel
 * train` and `convsel eval` (through train.h and eval.h). Which records
 * count is heur/measurement.c's rule, the library's own. */
#ifndef CONVSEL_TRAIN_DATASET_H
#define CONVSEL_TRAIN_DATASET_H

#include <stdbool.h>
#include <stddef.h>

#include "core/problem.h"
#include "db/perfdb.h"
#include "heur/measurement.h"
#include "solvers/solver.h"
#include "tune/problem_list.h"

#define DS_NAME_MAX 64

/* Where a problem came from (the database's origin table). */
enum ds_kind {
    DS_SAMPLED = 0, /* the random draw, or a problem list without origin */
    DS_LAYER,       /* a real layer of a network in the corpus */
    DS_PERTURBED,   /* a perturbation of one */
};

struct ds_problem {
    char key[CONVSEL_PROBLEM_KEY_MAX];
    struct conv_problem p;
    double ms[SOLVER_MAX]; /* by registry id; < 0 = not measured */
    double min_ms[SOLVER_MAX];
    int fastest; /* registry id of the fastest measured solver */
    enum ds_kind kind;
    char network[DS_NAME_MAX], family[DS_NAME_MAX]; /* "" for DS_SAMPLED */
};

struct dataset {
    struct ds_problem *v;
    int n;
    char machine[PERFDB_MACHINE_MAX];
    int threads; /* from the signature's "-<T>t" */
    struct measurement_counts counts;
    struct machine_limits limits; /* measured when it was tuned; .present false if not */
};

/* Loads the problems of `machine` (NULL: the database must hold exactly
 * one machine signature). Returns false with a message in err. */
bool dataset_load(const char *db_path, const char *machine, struct dataset *out, char *err,
                  size_t err_cap);
void dataset_free(struct dataset *d);

/* Removes the problems of a problem list (e.g. the benchmark suite, which
 * must not be trained on). Returns the number removed, or -1 with the
 * list's error (naming file, line and column) in err. */
int dataset_exclude_list(struct dataset *d, const char *path, char *err, size_t cap);

/* Marks the problems of a corpus (the CSV files of data/networks) as its layers, with
 * their network and family, for a database tuned without origins (schema
 * 1, or --problems lists). Returns how many were found, or -1 (err). */
int dataset_mark_corpus(struct dataset *d, const char *path, char *err, size_t cap);

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

#endif
