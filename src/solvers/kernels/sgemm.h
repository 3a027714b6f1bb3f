/* sgemm.h -- convsel's own single-precision GEMM: C = A * B (beta 0), all
 * row-major with leading dimensions, A optionally transposed. Packed
 * panels and a register-tiled micro-kernel per ISA level (AVX-512 8x32,
 * AVX2 6x16, generic 4x8); columns of C are split over the pool's threads.
 * It exists because the Debian OpenBLAS picks SSE3 kernels on CPUs it does
 * not recognize (this one: 34 GFLOP/s a core) and because its threads spin. */
#ifndef CONVSEL_SOLVERS_KERNELS_SGEMM_H
#define CONVSEL_SOLVERS_KERNELS_SGEMM_H

#include <stdbool.h>
#include <stddef.h>

#include "util/cpu.h"
#include "util/thread_pool.h"

struct sgemm_args {
    size_t m, n, k;
    const float *a; /* m x k (lda), or k x m when a_trans */
    size_t lda;
    bool a_trans;
    const float *b; /* k x n (ldb), or n x k when b_trans */
    size_t ldb;
    bool b_trans;
    float *c; /* m x n (ldc) */
    size_t ldc;
};

/* C = A * B on the pool's threads (pool may be NULL), with the best kernel
 * for this CPU. */
void sgemm(const struct sgemm_args *g, struct thread_pool *pool);

/* The same with a given ISA variant, for tests; false if this CPU cannot
 * run it. */
bool sgemm_variant(enum cpu_isa isa, const struct sgemm_args *g, struct thread_pool *pool);

#endif
