/* measured.h -- the solvers timed in this process by hybrid and exhaustive
 * find modes (convsel_set_find_mode), one measurement per (machine
 * signature, problem key), made exactly once across threads.
 *
 * The guarantees are the model cache's (model_cache.h), for the same
 * reason: two threads meeting a new problem at once must not both measure
 * it (twice the cost, and two answers), and an answer handed out must stay
 * valid for the life of the process. The first caller claims the key and
 * measures; callers of the key meanwhile block (a condition variable, no
 * spinning) until it is published; published entries are immutable and
 * never freed, so readers take no lock: a lookup is a walk of one bucket's
 * list with acquire loads. */
#ifndef CONVSEL_HEUR_MEASURED_H
#define CONVSEL_HEUR_MEASURED_H

#include <stdbool.h>
#include <stddef.h>

#include "solvers/solver.h"

#define MEASURED_MAX 16
/* Rounds of timed runs per candidate; the fastest of each counts. The
 * first run of a solver pays what later calls do not (with constant
 * weights, their transform; the first touch of its buffers): with one
 * round, hybrid mode preferred the solvers that transform nothing (the
 * suite's ResNet-50 res5 3x3: oneDNN's GEMM, 0.60 of its Winograd). */
#define MEASURED_ROUNDS 2

/* What one measurement found: the candidates timed, fastest first. */
struct measured {
    int n;                    /* 0: the measurement failed (the ranking stands) */
    int solver[MEASURED_MAX]; /* registry ids */
    double ms[MEASURED_MAX];
    double total_ms; /* the whole first call: set-up, runs and bookkeeping */
    double runs_ms;  /* the timed runs alone, every round of every candidate, as they ran */
    double setup_ms; /* the candidates' set-ups (oneDNN's primitives), made before the runs */
};

/* A claim on a key the caller must measure and publish. */
struct measured_claim {
    void *node;
};

/* The measurement of (machine, key): the published one (waiting for it if
 * another thread is measuring), or NULL when nobody has measured it yet --
 * then *claim is the caller's and it must call measured_publish. With
 * claim NULL, only looks (never waits, never claims): NULL when there is
 * no published measurement. */
const struct measured *measured_get(const char *machine, const char *key,
                                    struct measured_claim *claim);

/* Publishes the caller's measurement (copied) and wakes the waiters. */
void measured_publish(struct measured_claim *claim, const struct measured *m);

/* Measurements published and callers that waited for one, for tests. */
void measured_stats(long *published, long *waits);

#endif
