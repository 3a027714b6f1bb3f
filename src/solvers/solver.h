/* solver.h -- what a solver is, and the registry that lists them.
 *
 * A solver is one algorithm for the forward convolution. It states which
 * problems it can run (is_applicable), how much scratch memory it needs
 * (workspace_size) and runs them (run). Solvers receive a validated
 * conv_problem and never see descriptors or handles; the caller (src/api)
 * has already checked applicability and the workspace size before run().
 *
 * Adding a solver: one file in src/solvers/ defining a `const struct solver`
 * and one line in registry.c.
 */
#ifndef CONVSEL_SOLVERS_SOLVER_H
#define CONVSEL_SOLVERS_SOLVER_H

#include <stdbool.h>
#include <stddef.h>

#include "core/problem.h"
#include "util/thread_pool.h"

struct conv_run_args {
    const struct conv_problem *p;
    const float *x;
    const float *w;
    float *y;
    void *workspace; /* the caller's buffer, at least workspace_size(p) bytes */
    size_t workspace_bytes;
    int num_threads;          /* the handle's thread count */
    struct thread_pool *pool; /* the handle's threads; NULL: run serially */
    struct plan_cache *plans; /* the handle's plan cache; NULL: set up every call */
    /* The caller promises the data at w does not change between calls: a
     * solver may keep a transformed copy of it in its plan (keyed by w). */
    bool weights_constant;
};

struct solver {
    const char *name;        /* stable identifier, lower_snake_case */
    const char *description; /* one line for --help and listings */
    /* Largest accepted max|y - ref| / max|ref| against the reference solver.
     * Each solver file states why its value is what it is. */
    double tolerance;
    /* The multiply-adds it performs as a fraction of the nominal ones (0
     * means 1): below 1 for Winograd. Time estimates are floored at
     * flops x this / the machine's peak (heur/policy.h). */
    double work_fraction;
    /* True when the solver can run p; otherwise *reason (if non-NULL) gets a
     * static text saying why not. */
    bool (*is_applicable)(const struct conv_problem *p, const char **reason);
    size_t (*workspace_size)(const struct conv_problem *p);
    /* Runs the convolution. Returns SUCCESS, or ALLOC_FAILED / INTERNAL. */
    convsel_status_t (*run)(const struct conv_run_args *a);
    /* Optional: the set-up a first run would do (oneDNN's primitive), into
     * the plan cache, without running; hybrid find mode times runs, not
     * set-ups. NULL: nothing to set up. */
    convsel_status_t (*prepare)(const struct conv_run_args *a);
};

/* Problems below this many FLOPs run convsel's own solvers on the calling
 * thread alone: waking a sleeping pool worker costs ~10 us here, more than
 * a second thread saves on ~20 us of work (measured in the tuning data:
 * im2col_gemm on a 1x1 layer of 1 -> 4 channels, 24x24 at stride 2, took 0.6 us when
 * the worker stayed asleep and 12.6 us at the median). */
#define SOLVER_SERIAL_FLOPS (1 << 19)

/* Runs s on a->p: s->run(a), with no pool for problems below
 * SOLVER_SERIAL_FLOPS (num_threads is left as it is: oneDNN's OpenMP team
 * is its own). Every caller runs solvers through this. */
convsel_status_t solver_run(const struct solver *s, const struct conv_run_args *a);

/* Upper bound on the registry's size, for per-solver arrays. */
#define SOLVER_MAX 64

/* Number of registered solvers (<= SOLVER_MAX). */
int solver_count(void);

/* The solver with this id (its index in the registry), or NULL. */
const struct solver *solver_get(int id);

/* The id of the solver named `name`, or -1. */
int solver_find(const char *name);

/* The id of the reference solver. */
int solver_reference_id(void);

#endif /* CONVSEL_SOLVERS_SOLVER_H */
