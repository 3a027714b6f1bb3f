/* thread_pool.h -- the threads a handle's convolutions run on (and eval --families' trainings).
 *
 * Between jobs a worker spins for a bounded time (spin_ns, 50 us unless
 * set), then sleeps on a condition variable; the caller waits for a job's
 * last task the same way. Why bounded: waking a sleeping thread on a
 * virtual machine's idle vCPU took tens of microseconds, as long as a
 * whole 1x1 layer, so with sleep alone a network's back-to-back layers ran
 * at one thread's speed (docs/pool-wake-2026-12-07-avx2.txt). Why not
 * unbounded: on two shared cores a runtime that spins for milliseconds
 * (OpenMP's default) collapses when another process or another handle's
 * threads compete for the cores. A oneDNN call ends the spin at once, since
 * its OpenMP team needs the cores (util/openmp.h). The calling thread takes
 * part in every job, so a pool of T threads has T-1 workers. */
#ifndef CONVSEL_UTIL_THREAD_POOL_H
#define CONVSEL_UTIL_THREAD_POOL_H

#include <stddef.h>
#include <stdint.h>

/* How long workers spin for the next job before they sleep. */
#define THREAD_POOL_SPIN_NS_DEFAULT INT64_C(50000)

struct thread_pool;

/* Runs tasks [begin, end) of a job; called concurrently from the pool's
 * threads with disjoint ranges. */
typedef void (*thread_pool_fn)(void *ctx, size_t begin, size_t end);

/* A pool for `threads` threads in all (1..256); NULL on failure. */
struct thread_pool *thread_pool_create(int threads);

/* Joins the workers. The pool must be idle. NULL is ignored. */
void thread_pool_destroy(struct thread_pool *pool);

int thread_pool_threads(const struct thread_pool *pool);

/* Sets how long the pool's threads spin before they sleep (0: never spin);
 * takes effect from the next wait. NULL is ignored. */
void thread_pool_set_spin_ns(struct thread_pool *pool, int64_t ns);

/* Runs fn over tasks 0..n-1, split into contiguous ranges taken by the
 * threads as they come free, and returns when all are done. Right after an
 * OpenMP region on the calling thread the threads are the OpenMP team's,
 * still spinning (util/openmp.h); otherwise the pool's. pool may be
 * NULL (runs on the calling thread). Not re-entrant: one job at a time per
 * pool (one pool per handle, one handle per thread). */
void thread_pool_parallel_for(struct thread_pool *pool, size_t n, thread_pool_fn fn, void *ctx);

#endif
