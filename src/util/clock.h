/* clock.h -- a monotonic clock for timing convolutions. */
#ifndef CONVSEL_UTIL_CLOCK_H
#define CONVSEL_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Nanoseconds from an arbitrary fixed point; only differences mean anything. */
static inline int64_t clock_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#endif /* CONVSEL_UTIL_CLOCK_H */
