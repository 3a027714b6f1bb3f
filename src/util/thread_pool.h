/* thread_pool.h -- the threads a handle's convolutions run on.
 *
 * Workers sleep on a condition variable between jobs and the caller waits
 * on one for the job to finish: nothing spins. On two shared cores a
 * spinning runtime (OpenMP's default, OpenBLAS's) collapses when another
 * process or another handle's threads compete for the cores; blocking costs
 * a few microseconds of wake-up per job instead. The calling thread takes
 * part in every job, so a pool of T threads has T-1 workers. */
#ifndef CONVSEL_UTIL_THREAD_POOL_H
#define CONVSEL_UTIL_THREAD_POOL_H

#include <stddef.h>
#include <stdint.h>

struct thread_pool;

/* Runs tasks [begin, end) of a job; called concurrently from the pool's
 * threads with disjoint ranges. */
typedef void (*thread_pool_fn)(void *ctx, size_t begin, size_t end);

/* A pool for `threads` threads in all (1..256); NULL on failure. */
struct thread_pool *thread_pool_create(int threads);

/* Joins the workers. The pool must be idle. NULL is ignored. */
void thread_pool_destroy(struct thread_pool *pool);

int thread_pool_threads(const struct thread_pool *pool);

/* OpenMP (oneDNN's threads) spin-waits for a few milliseconds after each
 * parallel region. A pool job in that time gets little of the other core:
 * the worker competes with the spinning OpenMP thread and the caller ends
 * up running the tasks alone (ConvNeXt-T's 7x7 depthwise layer read 1.04-1.50
 * ms in 7 of 8 finds instead of 0.73). So a job within this long of an
 * OpenMP region on the caller's thread runs on the OpenMP team instead,
 * which takes it at once; otherwise on the pool, where nothing spins. */
#define THREAD_POOL_OPENMP_HOT_NS INT64_C(20000000)

/* Tells the pool that an OpenMP parallel region (a oneDNN call) has just
 * ended on the calling thread. NULL is ignored. */
void thread_pool_openmp_ran(struct thread_pool *pool);

/* Runs fn over tasks 0..n-1, split into contiguous ranges taken by the
 * threads as they come free, and returns when all are done. pool may be
 * NULL (runs on the calling thread). Not re-entrant: one job at a time per
 * pool (one pool per handle, one handle per thread). */
void thread_pool_parallel_for(struct thread_pool *pool, size_t n, thread_pool_fn fn, void *ctx);

#endif
