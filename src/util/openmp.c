/* openmp.c -- see openmp.h. A team belongs to the thread that starts its
 * regions, so the time is kept per thread. */
#include "util/openmp.h"

#include "util/clock.h"

static _Thread_local int64_t region_ended_ns; /* 0: none on this thread yet */

void openmp_region_ended(void) {
    region_ended_ns = clock_now_ns();
}

bool openmp_team_hot(void) {
    return region_ended_ns != 0 && clock_now_ns() - region_ended_ns < OPENMP_HOT_NS;
}
