/* winograd_kernels.c -- see winograd_kernels.h. B^T and A^T are sparse
 * with small integer entries, so their products are written out row by
 * row (Lavin & Gray's F(4x4,3x3)); every line is a loop over the lanes
 * (tiles), which the compiler vectorizes. */
#include "solvers/kernels/winograd_kernels.h"

#define L WINO_LANES
#define LANES for (int l = 0; l < L; l++)

/* out[0..5] = B^T * in[0..5], each a vector of L lanes; in/out strided. */
static inline __attribute__((always_inline)) void bt6(const float *restrict in, long is,
                                                      float *restrict out, long os) {
    const float *d0 = in, *d1 = in + is, *d2 = in + 2 * is, *d3 = in + 3 * is, *d4 = in + 4 * is,
                *d5 = in + 5 * is;
    LANES {
        out[0 * os + l] = 4 * d0[l] - 5 * d2[l] + d4[l];
        out[1 * os + l] = -4 * d1[l] - 4 * d2[l] + d3[l] + d4[l];
        out[2 * os + l] = 4 * d1[l] - 4 * d2[l] - d3[l] + d4[l];
        out[3 * os + l] = -2 * d1[l] - d2[l] + 2 * d3[l] + d4[l];
        out[4 * os + l] = 2 * d1[l] - d2[l] - 2 * d3[l] + d4[l];
        out[5 * os + l] = 4 * d1[l] - 5 * d3[l] + d5[l];
    }
}

/* out[0..3] = A^T * in[0..5]. */
static inline __attribute__((always_inline)) void at6(const float *restrict in, long is,
                                                      float *restrict out, long os) {
    const float *m0 = in, *m1 = in + is, *m2 = in + 2 * is, *m3 = in + 3 * is, *m4 = in + 4 * is,
                *m5 = in + 5 * is;
    LANES {
        out[0 * os + l] = m0[l] + m1[l] + m2[l] + m3[l] + m4[l];
        out[1 * os + l] = m1[l] - m2[l] + 2 * m3[l] - 2 * m4[l];
        out[2 * os + l] = m1[l] + m2[l] + 4 * m3[l] + 4 * m4[l];
        out[3 * os + l] = m1[l] - m2[l] + 8 * m3[l] - 8 * m4[l] + m5[l];
    }
}

/* V = B^T d B: columns first (rows of tmp), then rows. d is [i][j][lane]. */
static inline __attribute__((always_inline)) void input_body(const float *restrict d,
                                                             float *restrict v, long vs) {
    float tmp[36 * L]; /* tmp[i][j] = (B^T d)[i][j] */
    for (int j = 0; j < 6; j++)
        bt6(d + j * L, 6 * L, tmp + j * L, 6 * L);
    for (int i = 0; i < 6; i++) /* V[i][j] = sum_q tmp[i][q] B[q][j] = (B^T tmp[i]^T)[j] */
        bt6(tmp + i * 6 * L, L, v + i * 6 * vs, vs);
}

/* O = A^T m A; m position p at m + p * ms. */
static inline __attribute__((always_inline)) void output_body(const float *restrict m, long ms,
                                                              float *restrict o) {
    float tmp[24 * L]; /* tmp[i][j] = (A^T m)[i][j], 4 x 6 */
    for (int j = 0; j < 6; j++)
        at6(m + j * ms, 6 * ms, tmp + j * L, 6 * L);
    for (int i = 0; i < 4; i++)
        at6(tmp + i * 6 * L, L, o + i * 4 * L, L);
}

#define DEFINE_VARIANT(suffix, attr)                                                               \
    attr static void input_##suffix(const float *d, float *v, long vs) {                           \
        input_body(d, v, vs);                                                                      \
    }                                                                                              \
    attr static void output_##suffix(const float *m, long ms, float *o) {                          \
        output_body(m, ms, o);                                                                     \
    }

DEFINE_VARIANT(generic, )
static const struct wino_kernels generic = {input_generic, output_generic, CPU_GENERIC};
#ifdef CPU_X86_VARIANTS
DEFINE_VARIANT(avx2, CPU_TARGET_AVX2)
DEFINE_VARIANT(avx512, CPU_TARGET_AVX512)
static const struct wino_kernels avx2 = {input_avx2, output_avx2, CPU_AVX2};
static const struct wino_kernels avx512 = {input_avx512, output_avx512, CPU_AVX512};
#endif

static const void *const table[3] = CPU_VARIANT_TABLE(generic, avx2, avx512);

const struct wino_kernels *wino_kernels_variant(enum cpu_isa isa) {
    return cpu_variant(table, isa);
}

const struct wino_kernels *wino_kernels(void) {
    return cpu_best_variant(table);
}
