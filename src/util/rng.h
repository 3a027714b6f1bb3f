/* rng.h -- a small deterministic generator for test and benchmark data
 * (xorshift64*); not for anything that needs real randomness. */
#ifndef CONVSEL_UTIL_RNG_H
#define CONVSEL_UTIL_RNG_H

#include <stddef.h>
#include <stdint.h>

struct rng {
    uint64_t state;
};

static inline struct rng rng_seed(uint64_t seed) {
    struct rng r = {seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull};
    if (r.state == 0)
        r.state = 1;
    return r;
}

static inline uint64_t rng_next(struct rng *r) {
    r->state ^= r->state >> 12;
    r->state ^= r->state << 25;
    r->state ^= r->state >> 27;
    return r->state * 0x2545F4914F6CDD1Dull;
}

/* Uniform in [lo, hi). */
static inline double rng_uniform(struct rng *r, double lo, double hi) {
    return lo + (hi - lo) * (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform integer in [lo, hi]. */
static inline int64_t rng_int(struct rng *r, int64_t lo, int64_t hi) {
    return lo + (int64_t)(rng_next(r) % (uint64_t)(hi - lo + 1));
}

/* Fills v[0..n) with uniform values in [-1, 1). */
static inline void rng_fill(struct rng *r, float *v, size_t n) {
    for (size_t i = 0; i < n; i++)
        v[i] = (float)rng_uniform(r, -1.0, 1.0);
}

/* Puts order[0..n) in a uniformly random order (Fisher-Yates). */
static inline void rng_shuffle(struct rng *r, int *order, int n) {
    for (int i = n - 1; i > 0; i--) {
        const int j = (int)rng_int(r, 0, i), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

#endif /* CONVSEL_UTIL_RNG_H */
