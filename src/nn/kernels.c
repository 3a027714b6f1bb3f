/* kernels.c -- see kernels.h. One loop body, written so the compiler
 * vectorizes the inner (contiguous) dimension, compiled three times: for
 * x86-64-v4 (AVX-512), x86-64-v3 (AVX2 + FMA) and the baseline. The table
 * is picked from cpuid (which the compiler runtime reads once). Results may differ in the last bits
 * between variants (FMA); model tests use frugally-deep's tolerance, 1e-4. */
#include "nn/kernels.h"

#include "util/cpu.h"

#include <string.h>

static inline __attribute__((always_inline)) void vec_mat_body(const float *restrict v, size_t rows,
                                                               const float *restrict w, size_t cols,
                                                               float *restrict acc) {
    for (size_t i = 0; i < rows; i++) {
        const float vi = v[i];
        const float *restrict wr = w + i * cols;
        for (size_t j = 0; j < cols; j++)
            acc[j] += vi * wr[j];
    }
}

static void vec_mat_generic(const float *restrict v, size_t rows, const float *restrict w,
                            size_t cols, float *restrict acc) {
    vec_mat_body(v, rows, w, cols, acc);
}

#ifdef CPU_X86_VARIANTS
CPU_TARGET_AVX2 static void vec_mat_avx2(const float *restrict v, size_t rows,
                                         const float *restrict w, size_t cols,
                                         float *restrict acc) {
    vec_mat_body(v, rows, w, cols, acc);
}

CPU_TARGET_AVX512 static void vec_mat_avx512(const float *restrict v, size_t rows,
                                             const float *restrict w, size_t cols,
                                             float *restrict acc) {
    vec_mat_body(v, rows, w, cols, acc);
}
#endif

static const struct nn_kernels generic = {vec_mat_generic, "generic"};
#ifdef CPU_X86_VARIANTS
static const struct nn_kernels avx2 = {vec_mat_avx2, "avx2"};
static const struct nn_kernels avx512 = {vec_mat_avx512, "avx512"};
#endif

static const void *const table[3] = CPU_VARIANT_TABLE(generic, avx2, avx512);

const struct nn_kernels *nn_kernels_variant(const char *isa) {
    enum cpu_isa level;
    return cpu_isa_parse(isa, &level) ? cpu_variant(table, level) : NULL;
}

const struct nn_kernels *nn_kernels(void) {
    return cpu_best_variant(table);
}
