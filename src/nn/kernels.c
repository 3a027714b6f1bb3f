/* kernels.c -- see kernels.h. The loop is written so the compiler
 * vectorizes the inner (contiguous) dimension; target_clones builds an
 * x86-64-v4 (AVX-512), an x86-64-v3 (AVX2+FMA) and a baseline copy and the dynamic loader picks one
 * from cpuid (an ifunc), so there is no per-call dispatch cost. Results may
 * differ in the last bits between ISAs (FMA); the model tests use the
 * frugally-deep tolerance, 1e-4. */
#include "nn/kernels.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_THREAD__)
#define NN_MULTIVERSION                                                                            \
    __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define NN_MULTIVERSION
#endif

NN_MULTIVERSION
void nn_vec_mat_acc(const float *restrict v, size_t rows, const float *restrict w, size_t cols,
                    float *restrict acc) {
    for (size_t i = 0; i < rows; i++) {
        const float vi = v[i];
        const float *restrict wr = w + i * cols;
        for (size_t j = 0; j < cols; j++)
            acc[j] += vi * wr[j];
    }
}
