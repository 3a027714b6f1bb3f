/* handle.h -- the handle's internals and the error-reporting helper every
 * API function uses. */
#ifndef CONVSEL_API_HANDLE_H
#define CONVSEL_API_HANDLE_H

#include <stdbool.h>

#include "convsel/convsel.h"
#include "solvers/solver.h"

#define HANDLE_ERROR_MAX 512

struct thread_pool;
struct plan_cache;
struct pick_memo;

struct convsel_handle {
    int num_threads;
    bool weights_constant;         /* convsel_set_weights_constant */
    convsel_find_mode_t find_mode; /* convsel_set_find_mode; CONVSEL_FIND_MODE at creation */
    struct thread_pool *pool;      /* created on first use, for num_threads > 1 */
    struct plan_cache *plans;      /* solvers' set-up per problem, created on first use */
    struct pick_memo *picks;       /* immediate mode's picks (api/pick_memo.h), on first use */
    char error[HANDLE_ERROR_MAX];  /* last failing call's message */
};

/* Records a message on h (if h is non-NULL) and returns status, so a failing
 * check reads `return handle_fail(h, CONVSEL_STATUS_BAD_PARAM, "...", ...);`. */
convsel_status_t handle_fail(convsel_handle_t h, convsel_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The handle's thread pool (created on first use); NULL when it has one
 * thread or the pool cannot be created (the solvers then run serially). */
struct thread_pool *handle_pool(convsel_handle_t h);

/* The handle's plan cache (created on first use); NULL when it cannot be
 * created (the solvers then set up every call). */
struct plan_cache *handle_plans(convsel_handle_t h);

/* The handle's memo of AUTO's picks (created on first use); NULL when it
 * cannot be created (AUTO then ranks every call). */
struct pick_memo *handle_picks(convsel_handle_t h);

/* A solver run on the handle: its threads, pool, plans and weights
 * promise, with the caller's tensors and workspace. The one place a
 * handle's settings reach the solvers. */
struct conv_run_args handle_run_args(convsel_handle_t h, const struct conv_problem *p,
                                     const float *x, const float *w, float *y, void *workspace,
                                     size_t workspace_bytes);

#endif /* CONVSEL_API_HANDLE_H */
