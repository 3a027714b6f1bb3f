/* blocked_kernels.c -- see blocked_kernels.h. The band loop is written once
 * (blocked_band.inc) and compiled per ISA at the width of its registers,
 * with as many positions per block as keep DB_KB x NQ sums, NQ input
 * vectors and a broadcast weight in them: AVX-512 16 floats x 6 positions
 * (24 sums + 6 + 1 of 32 registers), AVX2 8 floats x 3 (12 + 3 + 1 of 16),
 * the baseline 4 floats x 3 (the same count in xmm). Per tap a block loads
 * NQ vectors and DB_KB weights for DB_KB x NQ multiply-adds: 7 loads for 12
 * on AVX2, which its two load ports serve within the two FMA pipes' time. */
#include "solvers/kernels/blocked_kernels.h"

#include <string.h>

void db_column_offsets(const struct dw_geometry *g, const struct dw_slab *sl, int32_t *col_off) {
    for (int64_t s = 0; s < g->s; s++) {
        const int64_t at = s * g->dil_w;
        col_off[s] = (int32_t)(at % g->stride_w * sl->phase_len + at / g->stride_w);
    }
}

typedef float db_vec16 __attribute__((vector_size(16 * sizeof(float))));
typedef float db_vec8 __attribute__((vector_size(8 * sizeof(float))));
typedef float db_vec4 __attribute__((vector_size(4 * sizeof(float))));

#define DB_VEC db_vec16
#define DB_W 16
#define DB_NQ 6
#define DB(name) name##_16x6
#include "solvers/kernels/blocked_band.inc"

#define DB_VEC db_vec8
#define DB_W 8
#define DB_NQ 3
#define DB(name) name##_8x3
#include "solvers/kernels/blocked_band.inc"

#define DB_VEC db_vec4
#define DB_W 4
#define DB_NQ 3
#define DB(name) name##_4x3
#include "solvers/kernels/blocked_band.inc"

#define DEFINE_VARIANT(suffix, attr, shape)                                                        \
    attr static void band_##suffix(const struct db_band *b) {                                      \
        band_body_##shape(b);                                                                      \
    }

DEFINE_VARIANT(generic, , 4x3)
DEFINE_VARIANT(wide_generic, , 16x6)
static const struct db_kernels generic = {band_generic, CPU_GENERIC, 4};
static const struct db_kernels wide = {band_wide_generic, CPU_GENERIC, 16};

#ifdef CPU_X86_VARIANTS
DEFINE_VARIANT(avx2, CPU_TARGET_AVX2, 8x3)
DEFINE_VARIANT(avx512, CPU_TARGET_AVX512, 16x6)
static const struct db_kernels avx2 = {band_avx2, CPU_AVX2, 8};
static const struct db_kernels avx512 = {band_avx512, CPU_AVX512, 16};
#endif

static const void *const table[3] = CPU_VARIANT_TABLE(generic, avx2, avx512);

const struct db_kernels *db_kernels_variant(enum cpu_isa isa) {
    return cpu_variant(table, isa);
}

const struct db_kernels *db_kernels(void) {
    return cpu_best_variant(table);
}

const struct db_kernels *db_kernels_wide_for_tests(void) {
    return &wide;
}
