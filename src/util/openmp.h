/* openmp.h -- what convsel uses of libgomp (oneDNN's threads), declared
 * from its C ABI so that no OpenMP compiler support is needed, and whether
 * this thread's OpenMP team is still awake.
 *
 * OpenMP spin-waits for a few milliseconds after each parallel region. A
 * job of convsel's own thread pool in that time gets little of the other
 * core: its worker competes with the spinning OpenMP thread and the caller
 * ends up running the tasks alone (ConvNeXt-T's 7x7 depthwise layer read
 * 1.04-1.50 ms in 7 of 8 finds instead of 0.73). So the code that enters
 * OpenMP (onednn_plan_run) says when a region has ended, and the pool runs
 * jobs that start within OPENMP_HOT_NS of it on the OpenMP team instead,
 * which takes them at once (util/thread_pool.c). */
#ifndef CONVSEL_UTIL_OPENMP_H
#define CONVSEL_UTIL_OPENMP_H

#include <stdbool.h>
#include <stdint.h>

/* The calling thread's team size for its next parallel regions. */
void omp_set_num_threads(int n);

/* Runs fn(data) on a team of num_threads (what `#pragma omp parallel`
 * compiles to); flags 0. */
void GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags);

#define OPENMP_HOT_NS INT64_C(20000000)

/* An OpenMP region is about to start (on any thread): spinning pool
 * workers go to sleep rather than take a core from its team. */
void openmp_region_starting(void);

/* How many have started in this process: a spinner watches it change. */
unsigned long openmp_regions_started(void);

/* An OpenMP parallel region has just ended on the calling thread. */
void openmp_region_ended(void);

/* Whether one ended on the calling thread less than OPENMP_HOT_NS ago:
 * its team is still spinning. */
bool openmp_team_hot(void);

#endif /* CONVSEL_UTIL_OPENMP_H */
