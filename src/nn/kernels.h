/* kernels.h -- the arithmetic the dense and recurrent layers spend their
 * time in, in variants for several ISAs; the best one for this CPU is
 * picked from cpuid. */
#ifndef CONVSEL_NN_KERNELS_H
#define CONVSEL_NN_KERNELS_H

#include <stddef.h>

struct nn_kernels {
    /* acc[j] += sum_i v[i] * w[i*cols + j] for j < cols: a row vector times a
     * row-major (rows x cols) matrix, accumulated. acc must not alias v or w. */
    void (*vec_mat_acc)(const float *restrict v, size_t rows, const float *restrict w, size_t cols,
                        float *restrict acc);
    const char *isa; /* "avx512", "avx2", "generic" */
};

/* The kernels for this CPU (the best variant it runs). */
const struct nn_kernels *nn_kernels(void);

/* A specific variant, for tests: "avx512", "avx2" or "generic"; NULL when
 * unknown or not supported by this CPU. */
const struct nn_kernels *nn_kernels_variant(const char *isa);

#endif
