/* peak.h -- what this machine can do at most: fused multiply-add peak and
 * read bandwidth at several working-set sizes, measured by small
 * benchmarks. `convsel tune` stores them with its measurements and
 * `convsel train` puts them in the model's metadata, where they floor
 * every time estimate (heur/policy.h); build/bench_peak and `convsel
 * bench` print them, and solvers' GFLOP/s as a share of the peak.
 *
 * Peak: each thread runs independent chains of vector FMAs (enough to
 * cover the FMA latency on two pipes) for the best ISA level, for about
 * 50 ms; the best of three rounds. Bandwidth: each thread sums its own
 * buffer of size / threads floats repeatedly; best of three rounds.
 * Absolute figures move between machines of one kind (and with whatever
 * else runs): compare a solver with a peak measured in the same run. */
#ifndef CONVSEL_UTIL_PEAK_H
#define CONVSEL_UTIL_PEAK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LIMITS_LEVELS_MAX 6

#define LIMITS_SOLVERS_MAX 32
#define LIMITS_NAME_MAX 32

/* Per-call weights: what a solver pays to transform (reorder, pack,
 * Winograd-transform) the weights on every call when they are not
 * declared constant, in ns per weight element, [0] for 1x1 filters and
 * [1] for larger ones (< 0: not measured). Measured by src/tune
 * (weights_probe.h), since a model trained on constant-weights timings
 * knows nothing of it: oneDNN's Winograd reorder costs ~10 ns per
 * element, 24 ms on a 512 -> 512 3x3 layer whose convolution takes 1. */
struct weights_costs {
    int count;
    char solver[LIMITS_SOLVERS_MAX][LIMITS_NAME_MAX];
    double ns[LIMITS_SOLVERS_MAX][2];
    /* When they were measured (Unix seconds; 0: before this was kept).
     * Unlike the peak and the bandwidth they depend on the solvers' code:
     * a re-time after a solver changed (tune --remeasure-before T)
     * measures them again when they are older than T. */
    int64_t at;
};

/* The peak loop's version. 1: 16 chains at every ISA level, which spill
 * on AVX2 (16 registers) and read half the peak; 2: 12 chains on AVX2.
 * Limits measured by an older method are measured again at tune time. */
#define PEAK_METHOD 2

struct machine_limits {
    bool present;
    int method;                            /* PEAK_METHOD when measured; 1 before it was kept */
    double peak_gflops;                    /* fused multiply-add peak on the measured threads */
    int levels;                            /* memory levels measured, smallest working set first */
    double level_bytes[LIMITS_LEVELS_MAX]; /* the working set of each */
    double level_gbs[LIMITS_LEVELS_MAX];   /* read bandwidth there, GB/s */
    struct weights_costs weights;          /* count 0: not measured */
};

/* FMA peak in GFLOP/s on `threads` threads (2 FLOPs per lane and FMA). */
double peak_gflops(int threads);

/* Read bandwidth in GB/s over a working set of `bytes` split over threads. */
double peak_bandwidth_gbs(size_t bytes, int threads);

/* Both, at the working sets PEAK_LEVEL_BYTES (16 KiB .. 256 MiB). */
void peak_measure(int threads, struct machine_limits *out);

/* "peak_gflops=P bw=B:G,B:G,... [weights=SOLVER:NS1:NS2,... [weights_at=T]]
 * [method=M]" and back (the database's meta table keeps it as text; NS -1:
 * not measured; no weights_at: 0; no method: 1).
 * parse: false on anything malformed or out of range. */
void peak_format(const struct machine_limits *l, char *buf, size_t cap);
bool peak_parse(const char *text, struct machine_limits *out);

/* The per-call cost in ms of solver `name` transforming p's w_elems
 * weights (1x1 filters or not); 0 when not measured. */
double weights_cost_ms(const struct weights_costs *w, const char *name, bool pointwise,
                       double w_elems);

#endif
