/* thread_pool.h -- the threads a handle's convolutions run on (and eval --families' trainings).
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

struct thread_pool;

/* Runs tasks [begin, end) of a job; called concurrently from the pool's
 * threads with disjoint ranges. */
typedef void (*thread_pool_fn)(void *ctx, size_t begin, size_t end);

/* A pool for `threads` threads in all (1..256); NULL on failure. */
struct thread_pool *thread_pool_create(int threads);

/* Joins the workers. The pool must be idle. NULL is ignored. */
void thread_pool_destroy(struct thread_pool *pool);

int thread_pool_threads(const struct thread_pool *pool);

/* Runs fn over tasks 0..n-1, split into contiguous ranges taken by the
 * threads as they come free, and returns when all are done. Right after an
 * OpenMP region on the calling thread the threads are the OpenMP team's,
 * still spinning (util/openmp.h); otherwise the pool's. pool may be
 * NULL (runs on the calling thread). Not re-entrant: one job at a time per
 * pool (one pool per handle, one handle per thread). */
void thread_pool_parallel_for(struct thread_pool *pool, size_t n, thread_pool_fn fn, void *ctx);

#endif
