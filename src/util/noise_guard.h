/* noise_guard.h -- is the machine quiet enough to measure?
 *
 * Tuning on a shared two-core machine records garbage when another process
 * competes for the cores: oneDNN's OpenMP workers spin-wait and a 10 us
 * convolution reads 36 ms. The guard times a fixed calibration workload
 * before and after each measurement and calls the machine busy when the
 * calibration is slower than `threshold` times the fastest calibration seen
 * (the quiet machine's figure, learnt as the run goes) twice in a row.
 * The caller waits
 * for quiet before measuring and discards a measurement the machine was
 * busy during. The calibration is a callback so that tests can script it. */
#ifndef CONVSEL_UTIL_NOISE_GUARD_H
#define CONVSEL_UTIL_NOISE_GUARD_H

#include <stdbool.h>

struct noise_guard {
    double threshold;               /* busy above threshold x best; <= 0 disables */
    int max_waits;                  /* pauses before giving up on quiet */
    unsigned wait_ms;               /* length of one pause */
    double (*calibrate)(void *ctx); /* one calibration: seconds (any unit, consistently) */
    void *ctx;
    void (*pause)(unsigned ms); /* NULL: sleep */
    /* Learnt and counted as the run goes. */
    double best;                    /* fastest calibration seen; 0 before the first */
    double last;                    /* the latest calibration */
    long calibrations, busy, waits; /* busy: confirmed busy checks */
};

/* One calibration, and a second when the first is slow: true when the
 * machine is quiet (always true if disabled). */
bool noise_guard_check(struct noise_guard *g);

/* Calibrates, pausing while busy, at most max_waits pauses; true when quiet. */
bool noise_guard_wait_quiet(struct noise_guard *g);

/* The latest calibration as a multiple of the best (1.0 = quiet). */
double noise_guard_load(const struct noise_guard *g);

#endif /* CONVSEL_UTIL_NOISE_GUARD_H */
