/* openmp_probe.h -- for tests of the pool's OpenMP hand-off: which team a
 * pool job's tasks ran on. */
#ifndef CONVSEL_TESTS_OPENMP_PROBE_H
#define CONVSEL_TESTS_OPENMP_PROBE_H

#include <stdatomic.h>

#include "util/thread_pool.h"

int omp_get_num_threads(void); /* libgomp: 1 outside a parallel region */

static void openmp_probe_task(void *ctx, size_t begin, size_t end) {
    atomic_int *largest = ctx;
    (void)begin, (void)end;
    const int n = omp_get_num_threads();
    int seen = atomic_load(largest);
    while (n > seen && !atomic_compare_exchange_weak(largest, &seen, n)) {
    }
}

/* The largest OpenMP team the tasks of one pool job saw: 1 when the job
 * ran on the pool's own threads, the team's size when it was handed to a
 * hot OpenMP team. */
static inline int openmp_probe_job_team(struct thread_pool *p) {
    atomic_int largest = 0;
    thread_pool_parallel_for(p, 64, openmp_probe_task, &largest);
    return atomic_load(&largest);
}

#endif
