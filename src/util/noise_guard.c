/* noise_guard.c -- see noise_guard.h. */
#include "util/noise_guard.h"

#include <time.h>

static void sleep_ms(unsigned ms) {
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static bool calibrate_quiet(struct noise_guard *g) {
    const double t = g->calibrate(g->ctx);
    g->calibrations++;
    g->last = t;
    /* The best is a running minimum, so a run that starts on a busy
     * machine corrects itself as soon as it sees a quiet moment. */
    if (g->best <= 0 || t < g->best)
        g->best = t;
    return t <= g->threshold * g->best;
}

bool noise_guard_check(struct noise_guard *g) {
    if (g->threshold <= 0 || g->calibrate == NULL)
        return true;
    /* A quiet machine has a slow calibration now and then (measured here:
     * 1.4x the best about one time in fifteen); contention lasts. So a slow
     * one is confirmed by a second before the machine is called busy. */
    if (calibrate_quiet(g) || calibrate_quiet(g))
        return true;
    g->busy++;
    return false;
}

bool noise_guard_wait_quiet(struct noise_guard *g) {
    for (int i = 0;; i++) {
        if (noise_guard_check(g))
            return true;
        if (i >= g->max_waits)
            return false;
        g->waits++;
        (g->pause ? g->pause : sleep_ms)(g->wait_ms);
    }
}

double noise_guard_load(const struct noise_guard *g) {
    return g->best > 0 ? g->last / g->best : 1.0;
}
