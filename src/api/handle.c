/* handle.c -- handle lifetime, thread count, status strings, error messages. */
#include "api/handle.h"
#include "api/pick_memo.h"
#include "solvers/plan_cache.h"

#include "util/env.h"
#include "util/machine.h"
#include "util/thread_pool.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

const char *convsel_version(void) {
    return "0.1.0";
}

const char *convsel_status_string(convsel_status_t status) {
    switch (status) {
    case CONVSEL_STATUS_SUCCESS: return "success";
    case CONVSEL_STATUS_BAD_PARAM: return "bad parameter";
    case CONVSEL_STATUS_NOT_SUPPORTED: return "not supported";
    case CONVSEL_STATUS_ALLOC_FAILED: return "allocation failed";
    case CONVSEL_STATUS_INTERNAL: return "internal error";
    }
    return "unknown status";
}

convsel_status_t handle_fail(convsel_handle_t h, convsel_status_t status, const char *fmt, ...) {
    if (h != NULL) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(h->error, sizeof h->error, fmt, ap);
        va_end(ap);
    }
    return status;
}

static const char *const find_mode_names[] = {"immediate", "hybrid", "exhaustive"};
static convsel_find_mode_t default_find_mode;
static pthread_once_t find_mode_once = PTHREAD_ONCE_INIT;

static void read_find_mode(void) {
    default_find_mode = (convsel_find_mode_t)env_choice("CONVSEL_FIND_MODE", find_mode_names, 3,
                                                        CONVSEL_FIND_MODE_IMMEDIATE);
}

const char *convsel_find_mode_string(convsel_find_mode_t mode) {
    return (unsigned)mode < 3 ? find_mode_names[mode] : "unknown";
}

convsel_status_t convsel_set_find_mode(convsel_handle_t h, convsel_find_mode_t mode) {
    if (h == NULL)
        return CONVSEL_STATUS_BAD_PARAM;
    if ((unsigned)mode >= 3)
        return handle_fail(h, CONVSEL_STATUS_BAD_PARAM,
                           "mode = %d: must be CONVSEL_FIND_MODE_IMMEDIATE (0), HYBRID (1) or "
                           "EXHAUSTIVE (2)",
                           (int)mode);
    h->find_mode = mode;
    return CONVSEL_STATUS_SUCCESS;
}

convsel_status_t convsel_get_find_mode(const_convsel_handle_t h, convsel_find_mode_t *mode_out) {
    if (h == NULL || mode_out == NULL)
        return CONVSEL_STATUS_BAD_PARAM;
    *mode_out = h->find_mode;
    return CONVSEL_STATUS_SUCCESS;
}

convsel_status_t convsel_handle_create(convsel_handle_t *handle_out) {
    if (handle_out == NULL)
        return CONVSEL_STATUS_BAD_PARAM;
    *handle_out = NULL;
    struct convsel_handle *h = calloc(1, sizeof *h);
    if (h == NULL)
        return CONVSEL_STATUS_ALLOC_FAILED;
    const int cpus = machine_cores();
    h->num_threads = cpus > CONVSEL_MAX_THREADS ? CONVSEL_MAX_THREADS : cpus;
    pthread_once(&find_mode_once, read_find_mode);
    h->find_mode = default_find_mode;
    snprintf(h->error, sizeof h->error, "success");
    *handle_out = h;
    return CONVSEL_STATUS_SUCCESS;
}

void convsel_handle_destroy(convsel_handle_t handle) {
    if (handle != NULL) {
        thread_pool_destroy(handle->pool);
        plan_cache_destroy(handle->plans);
        free(handle->picks);
    }
    free(handle);
}

struct plan_cache *handle_plans(convsel_handle_t h) {
    if (h->plans == NULL)
        h->plans = plan_cache_create();
    return h->plans;
}

/* Drops every plan (handle_plans makes a new cache on next use): what a
 * plan was made under -- the thread count, the weights it packed -- has
 * changed. */
static void forget_plans(convsel_handle_t h) {
    plan_cache_destroy(h->plans);
    h->plans = NULL;
}

struct thread_pool *handle_pool(convsel_handle_t h) {
    if (h->num_threads > 1 && h->pool == NULL) {
        h->pool = thread_pool_create(h->num_threads);
        const long spin_us =
            env_long("CONVSEL_POOL_SPIN_US", 0, 10000, (long)(THREAD_POOL_SPIN_NS_DEFAULT / 1000));
        thread_pool_set_spin_ns(h->pool, (int64_t)spin_us * 1000);
    }
    return h->pool;
}

struct pick_memo *handle_picks(convsel_handle_t h) {
    if (h->picks == NULL && (h->picks = malloc(sizeof *h->picks)) != NULL)
        pick_memo_init(h->picks);
    return h->picks;
}

struct conv_run_args handle_run_args(convsel_handle_t h, const struct conv_problem *p,
                                     const float *x, const float *w, float *y, void *workspace,
                                     size_t workspace_bytes) {
    return (struct conv_run_args){.p = p,
                                  .x = x,
                                  .w = w,
                                  .y = y,
                                  .workspace = workspace,
                                  .workspace_bytes = workspace_bytes,
                                  .num_threads = h->num_threads,
                                  .pool = handle_pool(h),
                                  .plans = handle_plans(h),
                                  .weights_constant = h->weights_constant};
}

convsel_status_t convsel_set_num_threads(convsel_handle_t h, int num_threads) {
    if (h == NULL)
        return CONVSEL_STATUS_BAD_PARAM;
    if (num_threads < 1 || num_threads > CONVSEL_MAX_THREADS)
        return handle_fail(h, CONVSEL_STATUS_BAD_PARAM, "num_threads = %d: must be in 1..%d",
                           num_threads, CONVSEL_MAX_THREADS);
    if (num_threads != h->num_threads) { /* the pool is rebuilt on next use */
        thread_pool_destroy(h->pool);
        h->pool = NULL;
        /* and the plans: oneDNN's primitives keep the thread count they
         * were made for (onednn_plan.h) */
        forget_plans(h);
    }
    h->num_threads = num_threads;
    return CONVSEL_STATUS_SUCCESS;
}

convsel_status_t convsel_get_num_threads(const_convsel_handle_t h, int *num_threads_out) {
    if (h == NULL || num_threads_out == NULL)
        return CONVSEL_STATUS_BAD_PARAM;
    *num_threads_out = h->num_threads;
    return CONVSEL_STATUS_SUCCESS;
}

convsel_status_t convsel_set_weights_constant(convsel_handle_t h, int constant) {
    if (h == NULL)
        return CONVSEL_STATUS_BAD_PARAM;
    if (constant != 0 && constant != 1)
        return handle_fail(h, CONVSEL_STATUS_BAD_PARAM, "constant = %d: must be 0 or 1", constant);
    /* The plans hold the packed weights: dropping them all is the simple,
     * sure way to forget every packed copy. */
    forget_plans(h);
    h->weights_constant = constant == 1;
    return CONVSEL_STATUS_SUCCESS;
}

convsel_status_t convsel_get_weights_constant(const_convsel_handle_t h, int *constant_out) {
    if (h == NULL || constant_out == NULL)
        return CONVSEL_STATUS_BAD_PARAM;
    *constant_out = h->weights_constant;
    return CONVSEL_STATUS_SUCCESS;
}

const char *convsel_get_error_message(const_convsel_handle_t h) {
    if (h == NULL)
        return "NULL handle";
    return h->error;
}
