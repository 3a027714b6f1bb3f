/* openmp.c -- see openmp.h. A team belongs to the thread that starts its
 * regions, so the time is kept per thread. */
#include "util/openmp.h"

#include "util/clock.h"

#include <stdatomic.h>

static _Thread_local int64_t region_ended_ns; /* 0: none on this thread yet */

/* Relaxed: a hint to spinners, not a synchronisation. */
static atomic_ulong regions_started;

void openmp_region_starting(void) {
    atomic_fetch_add_explicit(&regions_started, 1, memory_order_relaxed);
}

unsigned long openmp_regions_started(void) {
    return atomic_load_explicit(&regions_started, memory_order_relaxed);
}

void openmp_region_ended(void) {
    region_ended_ns = clock_now_ns();
}

bool openmp_team_hot(void) {
    return region_ended_ns != 0 && clock_now_ns() - region_ended_ns < OPENMP_HOT_NS;
}
