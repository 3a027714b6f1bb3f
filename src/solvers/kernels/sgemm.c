/* sgemm.c -- see sgemm.h.
 *
 * The loop nest is the usual one for caches: for each block of kc of the
 * depth, a block of B (kc x up to NC columns) is packed into NR-wide
 * panels, and for each block of mc rows of A (kc x mc, packed into MR-tall
 * panels, ~230 KiB on AVX-512: it stays in L2) the micro-kernel multiplies
 * one A panel by one B panel (kc x NR, 64 KiB on AVX-512: read from L2 at
 * 128 bytes per 28 FMAs) into an MR x NR tile of C held in registers. kc
 * and mc are the kernel's (struct sgemm_kernel); 512 and 112 were as fast
 * as 256-384 deep blocks of 168-448 rows on AVX-512 (bench_sgemm
 * --blocking, docs/sgemm-2026-12-04.txt). Packed operands (the weights,
 * packed once by the solver) and packing callbacks (the im2col of an
 * input, read straight into panels) replace the packing step.
 *
 * The micro-kernel is written once with GCC vector extensions (vector
 * width V, tile MR x 2V) and compiled per ISA level with the tile that
 * fits its registers: AVX-512 14 x 32 (28 of 32 zmm registers for C, two
 * FMA pipes of latency 4 need >= 8 independent sums), AVX2 6 x 16 (12 of
 * 16), generic 4 x 8. A last panel of fewer rows has kernels of its own
 * (AVX-512, AVX2); tiles narrower than the panel are computed into a
 * scratch tile and copied.
 *
 * Threads take disjoint ranges of C's columns (in NR panels, each range
 * packing the A blocks it reads), or of its rows (in MR panels) when C has
 * few columns; B, which every row range reads whole, is packed once, in
 * parallel, before the ranges run, unless it came packed. A row-major B is
 * not packed at all when A has few rows: the kernel reads its rows in
 * place (b_readable_in_place). Or they take ranges of the depth, each
 * computing all of C into a buffer of its own, summed at the end
 * (SGEMM_SPLIT_DEPTH, choose_split). */
#include "solvers/kernels/sgemm.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#ifdef CPU_X86_VARIANTS
#include <immintrin.h>
#endif

#define NC 4096 /* columns of a B block */

/* ---------------------------- micro-kernels ---------------------------- */

/* C tile (ROWS x 2V at c, row stride ldc) = or += A panel (MR rows a
 * depth) * B panel. The accumulators are named variables, not an array,
 * so that the compiler keeps all of them in registers (with an array it
 * spilled them). Rows beyond ROWS are dead code the compiler removes.
 * ROWS is MR but in the kernels for the last panel of an A whose rows are
 * not a multiple of MR (64 channels = 4 x 14 + 8): they compute only the
 * rows that exist, where the full kernel would compute MR rows into a
 * scratch tile (64x3136x576 1.04-1.09x; the gain is the rows not computed:
 * the same kernel through the scratch tile measured level with it). */
#define ACC_ROW(i)                                                                                 \
    if ((i) < ROWS) {                                                                              \
        const VEC ai = a[p * MR + (i)] - (VEC){0}; /* x - (+0) == x: a pure broadcast */           \
        c##i##0 += ai * b0;                                                                        \
        c##i##1 += ai * b1;                                                                        \
    }
#define STORE_ROW(i)                                                                               \
    if ((i) < ROWS) {                                                                              \
        VEC *r0 = (VEC *)(c + (i)*ldc), *r1 = (VEC *)(c + (i)*ldc + V);                            \
        if (accumulate) {                                                                          \
            *r0 += c##i##0;                                                                        \
            *r1 += c##i##1;                                                                        \
        } else {                                                                                   \
            *r0 = c##i##0;                                                                         \
            *r1 = c##i##1;                                                                         \
        }                                                                                          \
    }
/* The C tile is read and written only after the loop; its lines (rows
 * ldc apart, often not cached) are fetched while the loop runs. */
#define PREFETCH_ROW(i)                                                                            \
    if ((i) < ROWS) {                                                                              \
        __builtin_prefetch(c + (i)*ldc, 1);                                                        \
        __builtin_prefetch(c + (i)*ldc + 2 * V - 1, 1);                                            \
    }
/* clang-format off: it reflows the statement-like macro calls differently on each pass */
#define MICRO_KERNEL_BODY                                                                          \
    PREFETCH_ROW(0)                                                                                \
    PREFETCH_ROW(1)                                                                                \
    PREFETCH_ROW(2)                                                                                \
    PREFETCH_ROW(3)                                                                                \
    PREFETCH_ROW(4)                                                                                \
    PREFETCH_ROW(5)                                                                                \
    PREFETCH_ROW(6)                                                                                \
    PREFETCH_ROW(7)                                                                                \
    PREFETCH_ROW(8)                                                                                \
    PREFETCH_ROW(9)                                                                                \
    PREFETCH_ROW(10)                                                                               \
    PREFETCH_ROW(11)                                                                               \
    PREFETCH_ROW(12)                                                                               \
    PREFETCH_ROW(13)                                                                               \
    VEC c00 = {0}, c01 = {0}, c10 = {0}, c11 = {0}, c20 = {0}, c21 = {0}, c30 = {0}, c31 = {0};    \
    VEC c40 = {0}, c41 = {0}, c50 = {0}, c51 = {0}, c60 = {0}, c61 = {0}, c70 = {0}, c71 = {0};    \
    VEC c80 = {0}, c81 = {0}, c90 = {0}, c91 = {0}, c100 = {0}, c101 = {0}, c110 = {0};            \
    VEC c111 = {0}, c120 = {0}, c121 = {0}, c130 = {0}, c131 = {0};                                \
    for (size_t p = 0; p < kc; p++) {                                                              \
        const VEC b0 = *(const VEC *)(b + p * ldb), b1 = *(const VEC *)(b + p * ldb + V);          \
        ACC_ROW(0)                                                                                 \
        ACC_ROW(1)                                                                                 \
        ACC_ROW(2)                                                                                 \
        ACC_ROW(3)                                                                                 \
        ACC_ROW(4)                                                                                 \
        ACC_ROW(5)                                                                                 \
        ACC_ROW(6)                                                                                 \
        ACC_ROW(7) ACC_ROW(8) ACC_ROW(9) ACC_ROW(10) ACC_ROW(11) ACC_ROW(12) ACC_ROW(13)           \
    }                                                                                              \
    STORE_ROW(0)                                                                                   \
    STORE_ROW(1)                                                                                   \
    STORE_ROW(2)                                                                                   \
    STORE_ROW(3)                                                                                   \
    STORE_ROW(4)                                                                                   \
    STORE_ROW(5)                                                                                   \
    STORE_ROW(6)                                                                                   \
    STORE_ROW(7) STORE_ROW(8) STORE_ROW(9) STORE_ROW(10) STORE_ROW(11) STORE_ROW(12) STORE_ROW(13)
/* clang-format on */

typedef float v4f __attribute__((vector_size(16), aligned(4)));
typedef float v8f __attribute__((vector_size(32), aligned(4)));
typedef float v16f __attribute__((vector_size(64), aligned(4)));

/* A kernel of `rows` rows of an A panel of mr rows, vector type vec of v
 * floats, compiled for the ISA level that `target` names. */
#define DEFINE_UKERNEL(target, name, mr, rows, v, vec)                                             \
    target static void name(size_t kc, const float *restrict a, const float *restrict b,           \
                            size_t ldb, float *restrict c, size_t ldc, bool accumulate) {          \
        enum { MR = (mr), ROWS = (rows), V = (v) };                                                \
        typedef vec VEC;                                                                           \
        MICRO_KERNEL_BODY                                                                          \
    }

DEFINE_UKERNEL(, ukernel_4x8_generic, 4, 4, 4, v4f)

#ifdef CPU_X86_VARIANTS
DEFINE_UKERNEL(CPU_TARGET_AVX2, ukernel_6x16_avx2, 6, 6, 8, v8f)

/* The first n (1..8) floats of v to out, and nothing past them. Not a
 * masked store: AMD's Zen 2 and 3 run VMASKMOVPS to memory as a microcoded
 * sequence (~12 cycles each), and with one per depth of a 6-row panel,
 * packing a row-major A ran at 1.0-1.1 ns a float; with these stores 0.5
 * (256 x 2304 on one thread of a Zen 3: 0.65-0.75 -> 0.34 ms). */
CPU_TARGET_AVX2 static inline void store_first_avx2(float *out, __m256 v, size_t n) {
    if (n == 8) {
        _mm256_storeu_ps(out, v);
        return;
    }
    __m128 part = _mm256_castps256_ps128(v);
    if (n >= 4) {
        _mm_storeu_ps(out, part);
        out += 4;
        n -= 4;
        part = _mm256_extractf128_ps(v, 1);
    }
    if (n >= 2) {
        _mm_storel_pi((__m64 *)out, part);
        out += 2;
        n -= 2;
        part = _mm_movehl_ps(part, part);
    }
    if (n == 1)
        _mm_store_ss(out, part);
}

/* rows[0..7][d0..d0+7] -> out[t * width + j] for t < 8, j < cols (<= 8):
 * an 8 x 8 transpose in registers (unpack by pairs, shuffle by quads, swap
 * 128-bit lanes), rows j >= w read as zeros, stored so that nothing is
 * written past the panel's width. */
CPU_TARGET_AVX2 static void transpose8_avx2(const float *const *rows, size_t w, size_t d0,
                                            size_t cols, size_t width, float *out) {
    __m256 r[8], t[8];
    for (size_t j = 0; j < 8; j++)
        r[j] = j < w ? _mm256_loadu_ps(rows[j] + d0) : _mm256_setzero_ps();
    for (int j = 0; j < 8; j += 2) {
        t[j] = _mm256_unpacklo_ps(r[j], r[j + 1]);     /* depths 0 1 | 4 5 of rows j, j+1 */
        t[j + 1] = _mm256_unpackhi_ps(r[j], r[j + 1]); /* depths 2 3 | 6 7 */
    }
    for (int j = 0; j < 8; j += 4) { /* r[j + b]: depth b | 4 + b of rows j..j+3 */
        r[j] = _mm256_shuffle_ps(t[j], t[j + 2], 0x44);
        r[j + 1] = _mm256_shuffle_ps(t[j], t[j + 2], 0xEE);
        r[j + 2] = _mm256_shuffle_ps(t[j + 1], t[j + 3], 0x44);
        r[j + 3] = _mm256_shuffle_ps(t[j + 1], t[j + 3], 0xEE);
    }
    for (int b = 0; b < 4; b++) {
        store_first_avx2(out + (size_t)b * width, _mm256_permute2f128_ps(r[b], r[4 + b], 0x20),
                         cols);
        store_first_avx2(out + (size_t)(4 + b) * width,
                         _mm256_permute2f128_ps(r[b], r[4 + b], 0x31), cols);
    }
}

/* transpose16's contract (struct sgemm_kernel) from 8 x 8 blocks: AVX2's
 * A panels are 6 rows wide, so one block of rows and two of depths. */
CPU_TARGET_AVX2 static void transpose16_avx2(const float *const *rows, size_t w, size_t width,
                                             float *out) {
    for (size_t g = 0; g < width; g += 8) {
        const size_t cols = width - g < 8 ? width - g : 8;
        const size_t have = w > g ? w - g : 0;
        for (size_t d0 = 0; d0 < 16; d0 += 8)
            transpose8_avx2(rows + g, have, d0, cols, width, out + d0 * width + g);
    }
}

/* 16 depths of up to 16 rows into panel order: rows[j][0..15] -> out[t *
 * width + j] for t < 16, j < w (zeros for w <= j < width <= 16). A 16 x 16
 * transpose in registers (unpack by pairs, then by quads, then lanes). */
CPU_TARGET_AVX512 static void transpose16_avx512(const float *const *rows, size_t w, size_t width,
                                                 float *out) {
    __m512 r[16], t[16];
    for (size_t j = 0; j < 16; j++)
        r[j] = j < w ? _mm512_loadu_ps(rows[j]) : _mm512_setzero_ps();
    for (int j = 0; j < 16; j += 2) {
        t[j] = _mm512_unpacklo_ps(r[j], r[j + 1]);
        t[j + 1] = _mm512_unpackhi_ps(r[j], r[j + 1]);
    }
    for (int j = 0; j < 16; j += 4) {
        r[j] = _mm512_castpd_ps(
            _mm512_unpacklo_pd(_mm512_castps_pd(t[j]), _mm512_castps_pd(t[j + 2])));
        r[j + 1] = _mm512_castpd_ps(
            _mm512_unpackhi_pd(_mm512_castps_pd(t[j]), _mm512_castps_pd(t[j + 2])));
        r[j + 2] = _mm512_castpd_ps(
            _mm512_unpacklo_pd(_mm512_castps_pd(t[j + 1]), _mm512_castps_pd(t[j + 3])));
        r[j + 3] = _mm512_castpd_ps(
            _mm512_unpackhi_pd(_mm512_castps_pd(t[j + 1]), _mm512_castps_pd(t[j + 3])));
    }
    /* r[4a + b] now holds, in each 128-bit lane L, depths 4L + b of rows
     * 4a..4a+3. Gather the lanes: output depth 4L + b, rows 0..15. */
    for (int b = 0; b < 4; b++) {
        const __m512 lo01 = _mm512_shuffle_f32x4(r[b], r[4 + b], 0x44); /* lanes 0,1 | 0,1 */
        const __m512 hi01 = _mm512_shuffle_f32x4(r[b], r[4 + b], 0xEE); /* lanes 2,3 | 2,3 */
        const __m512 lo23 = _mm512_shuffle_f32x4(r[8 + b], r[12 + b], 0x44);
        const __m512 hi23 = _mm512_shuffle_f32x4(r[8 + b], r[12 + b], 0xEE);
        t[0 + b] = _mm512_shuffle_f32x4(lo01, lo23, 0x88);  /* lane 0 of all four */
        t[4 + b] = _mm512_shuffle_f32x4(lo01, lo23, 0xDD);  /* lane 1 */
        t[8 + b] = _mm512_shuffle_f32x4(hi01, hi23, 0x88);  /* lane 2 */
        t[12 + b] = _mm512_shuffle_f32x4(hi01, hi23, 0xDD); /* lane 3 */
    }
    const __mmask16 keep = (__mmask16)((1u << width) - 1);
    for (int d = 0; d < 16; d++)
        _mm512_mask_storeu_ps(out + d * width, keep, t[d]);
}

DEFINE_UKERNEL(CPU_TARGET_AVX512, ukernel_14x32_avx512, 14, 14, 16, v16f)
#define AVX512_ROWS(r)                                                                             \
    DEFINE_UKERNEL(CPU_TARGET_AVX512, ukernel_##r##of14x32_avx512, 14, r, 16, v16f)
AVX512_ROWS(1)
AVX512_ROWS(2)
AVX512_ROWS(3)
AVX512_ROWS(4)
AVX512_ROWS(5)
AVX512_ROWS(6)
AVX512_ROWS(7)
AVX512_ROWS(8)
AVX512_ROWS(9)
AVX512_ROWS(10)
AVX512_ROWS(11)
AVX512_ROWS(12)
AVX512_ROWS(13)
#define AVX2_ROWS(r) DEFINE_UKERNEL(CPU_TARGET_AVX2, ukernel_##r##of6x16_avx2, 6, r, 8, v8f)
AVX2_ROWS(1)
AVX2_ROWS(2)
AVX2_ROWS(3)
AVX2_ROWS(4)
AVX2_ROWS(5)

/* Narrow tiles: an edge of w <= narrow_max columns (16 on AVX-512, 8 on
 * AVX2; N = 196 = 6 x 32 + 4, a 1x1 map: N = 1) through the full kernel
 * computes all nr columns into the scratch tile, 32 for 1 on AVX-512.
 * These turn the tile around: one vector holds the panel's mr rows at a
 * depth (a masked load: mr < the vector's lanes), one sum per column, W of
 * them (w rounded up to 1, 2, 4, 8 or 16; the packed B panel has zeros
 * there), so a tile costs W FMAs a depth instead of 2 mr. The sums are
 * columns of C: they are stored through a small buffer.
 * With few columns the sums are also split by depth, U ways (depth p into
 * sum p % U, added at the end), so that W x U >= 8 chains keep two FMA
 * pipes of latency 4 busy: with one chain, as a 1x1 layer on a 1x1 map
 * has, every FMA waited for the last, and convsel's GEMV ran 2.5-3.7x
 * slower than oneDNN's on weights in cache.
 * AVX2 reads the panel's 6 rows with a plain 8-float load (LOAD_IN; the 2
 * extra lanes hold the next depth's rows and are never stored) at every
 * depth but the last, which the masked load keeps inside the panel:
 * VMASKMOVPS loads missing the cache ran 2x slower on Zen 3 (M 256, N 6,
 * K 256 with the packed A cycling through 9 MB: 13.7 GFLOP/s masked, 28
 * plain, 1 thread; 26 and 28 with A in L2). AVX-512 masks with k
 * registers, a different instruction, not measured here: unchanged. */
#define DEFINE_NARROW(target, name, w_, u_, mr, MASK, VEC, ZERO, LOAD, LOAD_IN, FMA, SET1, STORE,  \
                      LANES)                                                                       \
    target static void name(size_t kc, const float *restrict a, const float *restrict b,           \
                            size_t ldb, float *restrict c, size_t ldc, size_t h, size_t w,         \
                            bool accumulate) {                                                     \
        enum { W = (w_), U = (u_), MR = (mr) };                                                    \
        MASK;                                                                                      \
        VEC sum[U][W];                                                                             \
        _Pragma("GCC unroll 16") for (int u = 0; u < U; u++)                                       \
            _Pragma("GCC unroll 16") for (int j = 0; j < W; j++) sum[u][j] = ZERO;                 \
        size_t p = 0;                                                                              \
        for (; p + U < kc; p += U)                                                                 \
            _Pragma("GCC unroll 16") for (int u = 0; u < U; u++) {                                 \
                const VEC av = LOAD_IN(a + (p + u) * MR);                                          \
                _Pragma("GCC unroll 16") for (int j = 0; j < W; j++) sum[u][j] =                   \
                    FMA(av, SET1(b[(p + u) * ldb + j]), sum[u][j]);                                \
            }                                                                                      \
        for (; p < kc; p++) {                                                                      \
            const VEC av = LOAD(a + p * MR);                                                       \
            _Pragma("GCC unroll 16") for (int j = 0; j < W; j++) sum[0][j] =                       \
                FMA(av, SET1(b[p * ldb + j]), sum[0][j]);                                          \
        }                                                                                          \
        _Pragma("GCC unroll 16") for (int u = 1; u < U; u++)                                       \
            _Pragma("GCC unroll 16") for (int j = 0; j < W; j++) sum[0][j] += sum[u][j];           \
        float t[W][LANES];                                                                         \
        _Pragma("GCC unroll 16") for (int j = 0; j < W; j++) STORE(t[j], sum[0][j]);               \
        for (size_t i = 0; i < h; i++)                                                             \
            for (size_t j = 0; j < w; j++)                                                         \
                c[i * ldc + j] = (accumulate ? c[i * ldc + j] : 0.0f) + t[j][i];                   \
    }

#define NARROW_MAX_AVX512 16
#define NARROW_MAX_AVX2 8
#define LOAD14(at) _mm512_maskz_loadu_ps(rows, (at))
#define NARROW_AVX512(w_, u_)                                                                      \
    DEFINE_NARROW(CPU_TARGET_AVX512, narrow##w_##_avx512, w_, u_, 14,                              \
                  const __mmask16 rows = (__mmask16)((1u << MR) - 1), __m512, _mm512_setzero_ps(), \
                  LOAD14, LOAD14, _mm512_fmadd_ps, _mm512_set1_ps, _mm512_storeu_ps, 16)
NARROW_AVX512(1, 8)
NARROW_AVX512(2, 4)
NARROW_AVX512(4, 2)
NARROW_AVX512(8, 1)
NARROW_AVX512(16, 1)
#define LOAD6(at) _mm256_maskload_ps((at), rows)
#define LOAD6_IN(at) _mm256_loadu_ps(at)
#define NARROW_AVX2(w_, u_)                                                                        \
    DEFINE_NARROW(CPU_TARGET_AVX2, narrow##w_##_avx2, w_, u_, 6,                                   \
                  const __m256i rows = _mm256_setr_epi32(-1, -1, -1, -1, -1, -1, 0, 0), __m256,    \
                  _mm256_setzero_ps(), LOAD6, LOAD6_IN, _mm256_fmadd_ps, _mm256_set1_ps,           \
                  _mm256_storeu_ps, 8)
NARROW_AVX2(1, 8)
NARROW_AVX2(2, 4)
NARROW_AVX2(4, 2)
NARROW_AVX2(8, 1)

CPU_TARGET_AVX512 static void narrow_avx512(size_t kc, const float *restrict a,
                                            const float *restrict b, size_t ldb, float *restrict c,
                                            size_t ldc, size_t h, size_t w, bool accumulate) {
    if (w == 1)
        narrow1_avx512(kc, a, b, ldb, c, ldc, h, w, accumulate);
    else if (w == 2)
        narrow2_avx512(kc, a, b, ldb, c, ldc, h, w, accumulate);
    else if (w <= 4)
        narrow4_avx512(kc, a, b, ldb, c, ldc, h, w, accumulate);
    else if (w <= 8)
        narrow8_avx512(kc, a, b, ldb, c, ldc, h, w, accumulate);
    else
        narrow16_avx512(kc, a, b, ldb, c, ldc, h, w, accumulate);
}

CPU_TARGET_AVX2 static void narrow_avx2(size_t kc, const float *restrict a, const float *restrict b,
                                        size_t ldb, float *restrict c, size_t ldc, size_t h,
                                        size_t w, bool accumulate) {
    if (w == 1)
        narrow1_avx2(kc, a, b, ldb, c, ldc, h, w, accumulate);
    else if (w == 2)
        narrow2_avx2(kc, a, b, ldb, c, ldc, h, w, accumulate);
    else if (w <= 4)
        narrow4_avx2(kc, a, b, ldb, c, ldc, h, w, accumulate);
    else
        narrow8_avx2(kc, a, b, ldb, c, ldc, h, w, accumulate);
}
#endif

/* GEMV: C's column (m rows, ldc apart) = A (row-major, lda) * b (k
 * floats), for a C of one column (a 1x1 layer on a 1x1 map). Each weight
 * is read once, so A is read as it is, eight rows at a time (eight
 * chains of sums, and eight streams the prefetcher follows), a vector of
 * depths each; packed panels (the narrow tiles) read the same floats
 * through masked 14-float loads that mostly straddle two cache lines, and
 * ran 1.6-2.4x slower than oneDNN's here. A depth left over past the last
 * whole vector is summed one at a time. */
#define DEFINE_GEMV(target, name, VEC, V)                                                          \
    target static void name(size_t m, size_t k, const float *restrict a, size_t lda,               \
                            const float *restrict b, float *restrict c, size_t ldc) {              \
        enum { R = 8 };                                                                            \
        const size_t whole = k / (V) * (V);                                                        \
        for (size_t i0 = 0; i0 < m; i0 += R) {                                                     \
            const size_t rows = m - i0 < R ? m - i0 : R;                                           \
            const float *row[R];                                                                   \
            for (size_t r = 0; r < R; r++)                                                         \
                row[r] = a + (i0 + (r < rows ? r : 0)) * lda; /* rows past m repeat row 0 */       \
            VEC acc[R];                                                                            \
            _Pragma("GCC unroll 8") for (int r = 0; r < R; r++) acc[r] = (VEC){0};                 \
            for (size_t p = 0; p < whole; p += (V)) {                                              \
                const VEC bv = *(const VEC *)(b + p);                                              \
                _Pragma("GCC unroll 8") for (int r = 0; r < R; r++) acc[r] +=                      \
                    *(const VEC *)(row[r] + p) * bv;                                               \
            }                                                                                      \
            for (size_t r = 0; r < rows; r++) {                                                    \
                float sum = 0.0f;                                                                  \
                for (int l = 0; l < (V); l++)                                                      \
                    sum += acc[r][l];                                                              \
                for (size_t p = whole; p < k; p++)                                                 \
                    sum += row[r][p] * b[p];                                                       \
                c[(i0 + r) * ldc] = sum;                                                           \
            }                                                                                      \
        }                                                                                          \
    }

DEFINE_GEMV(, gemv_generic, v4f, 4)
#ifdef CPU_X86_VARIANTS
DEFINE_GEMV(CPU_TARGET_AVX2, gemv_avx2, v8f, 8)
DEFINE_GEMV(CPU_TARGET_AVX512, gemv_avx512, v16f, 16)
#endif

static const struct sgemm_kernel kernels[3] = {
    {4, 8, 512, 112, CPU_GENERIC, ukernel_4x8_generic, NULL, {NULL}, NULL, 0, gemv_generic},
#ifdef CPU_X86_VARIANTS
    {6,
     16,
     512,
     108,
     CPU_AVX2,
     ukernel_6x16_avx2,
     transpose16_avx2,
     {NULL, ukernel_1of6x16_avx2, ukernel_2of6x16_avx2, ukernel_3of6x16_avx2, ukernel_4of6x16_avx2,
      ukernel_5of6x16_avx2},
     narrow_avx2,
     NARROW_MAX_AVX2,
     gemv_avx2},
    {14,
     32,
     512,
     112,
     CPU_AVX512,
     ukernel_14x32_avx512,
     transpose16_avx512,
     {NULL, ukernel_1of14x32_avx512, ukernel_2of14x32_avx512, ukernel_3of14x32_avx512,
      ukernel_4of14x32_avx512, ukernel_5of14x32_avx512, ukernel_6of14x32_avx512,
      ukernel_7of14x32_avx512, ukernel_8of14x32_avx512, ukernel_9of14x32_avx512,
      ukernel_10of14x32_avx512, ukernel_11of14x32_avx512, ukernel_12of14x32_avx512,
      ukernel_13of14x32_avx512},
     narrow_avx512,
     NARROW_MAX_AVX512,
     gemv_avx512},
#endif
};

const struct sgemm_kernel *sgemm_kernel_for(enum cpu_isa isa) {
    if ((unsigned)isa >= sizeof kernels / sizeof kernels[0] || kernels[isa].ukernel == NULL ||
        !cpu_supports(isa))
        return NULL;
    return &kernels[isa];
}

const struct sgemm_kernel *sgemm_kernel_best(void) {
    enum cpu_isa isa = cpu_best_isa();
    while ((unsigned)isa >= sizeof kernels / sizeof kernels[0] || kernels[isa].ukernel == NULL)
        isa = (enum cpu_isa)(isa - 1);
    return &kernels[isa];
}

/* ---------------------------- packing ---------------------------- */

static size_t round_up(size_t v, size_t m) {
    return (v + m - 1) / m * m;
}

typedef float v16u __attribute__((vector_size(64), aligned(4)));

/* Plain matrices: A's rows (is_a) or B's columns, at depths [p0, p0+kc). */
static void pack_matrix(const struct sgemm_kernel *kn, const struct sgemm_operand *o, bool is_a,
                        size_t i0, size_t i1, size_t p0, size_t kc, size_t width, float *out) {
    /* Element (i, p) of the operand as the GEMM sees it (A: row i, column
     * p; B: row p, column i) lives at x[i * si + p * sp]. */
    const bool row_major_i = is_a != o->trans;
    const size_t si = row_major_i ? o->ld : 1, sp = row_major_i ? 1 : o->ld;
    /* Whole AVX-512 panels from contiguous rows: PANELS_AT_ONCE panels per
     * pass over the rows, so that each row is read 1 KiB at a time (one
     * row per panel would read 128 bytes from each of kc rows, a TLB miss
     * each) while only a few panels are written. */
    enum { PANELS_AT_ONCE = 8 };
    size_t q = i0;
    if (si == 1 && width == 32)
        for (; q + PANELS_AT_ONCE * 32 <= i1; q += PANELS_AT_ONCE * 32) {
            const float *src = o->matrix + p0 * sp + q;
            float *panels = out + (q - i0) * kc;
            for (size_t p = 0; p < kc; p++) {
                const v16u *from = (const v16u *)(src + p * sp);
                for (size_t t = 0; t < PANELS_AT_ONCE; t++) {
                    v16u *to = (v16u *)(panels + t * 32 * kc + p * 32);
                    to[0] = from[2 * t];
                    to[1] = from[2 * t + 1];
                }
            }
        }
    for (; q < i1; q += width) {
        const size_t w = i1 - q < width ? i1 - q : width;
        float *panel = out + (q - i0) * kc;
        if (si == 1) { /* a row of the panel is contiguous in memory */
            /* a loop, not memcpy: a panel's row is 1-32 floats (a narrow B
             * of a 1x1 layer on a 2x2 map: 4), and a call per depth cost
             * more than the copy */
            const float *src = o->matrix + p0 * sp + q;
            for (size_t p = 0; p < kc; p++) {
                for (size_t j = 0; j < w; j++)
                    panel[p * width + j] = src[p * sp + j];
                for (size_t j = w; j < width; j++)
                    panel[p * width + j] = 0.0f;
            }
            continue;
        }
        /* The panel's rows are strided: a transposition. Blocks of 16 depths
         * are read row by row (contiguous, 64 bytes each) into a small tile
         * in L1, then written out depth by depth. */
        float tmp[32][16];
        const float *rows[32];
        for (size_t j = 0; j < w; j++)
            rows[j] = o->matrix + (q + j) * si + p0 * sp;
        size_t p = 0;
        if (sp == 1 && width <= 16 && kn->transpose16)
            for (; p + 16 <= kc; p += 16) {
                const float *at[16];
                for (size_t j = 0; j < w; j++)
                    at[j] = rows[j] + p;
                kn->transpose16(at, w, width, panel + p * width);
            }
        if (sp == 1)
            for (; p + 16 <= kc; p += 16) {
                for (size_t j = 0; j < w; j++)
                    memcpy(tmp[j], rows[j] + p, sizeof tmp[j]);
                for (size_t t = 0; t < 16; t++) {
                    float *dst = panel + (p + t) * width;
                    for (size_t j = 0; j < w; j++)
                        dst[j] = tmp[j][t];
                    for (size_t j = w; j < width; j++)
                        dst[j] = 0.0f;
                }
            }
        for (; p < kc; p++) {
            float *dst = panel + p * width;
            for (size_t j = 0; j < w; j++)
                dst[j] = rows[j][p * sp];
            for (size_t j = w; j < width; j++)
                dst[j] = 0.0f;
        }
    }
}

static void pack_operand(const struct sgemm_kernel *kn, const struct sgemm_operand *o, bool is_a,
                         size_t i0, size_t i1, size_t p0, size_t kc, size_t width, float *out) {
    if (o->pack)
        o->pack(o->ctx, i0, i1, p0, kc, width, out);
    else
        pack_matrix(kn, o, is_a, i0, i1, p0, kc, width, out);
}

/* The block of a packed operand (rows padded to rows_pad) at depth p0 and
 * row i0 (a multiple of the panel width): blocks of KC are laid out one
 * after the other, each rows_pad x kc. */
static const float *packed_at(const float *base, size_t rows_pad, size_t p0, size_t kc, size_t i0) {
    return base + p0 * rows_pad + i0 * kc;
}

size_t sgemm_packed_floats(const struct sgemm_kernel *kernel, bool is_a, size_t rows, size_t k) {
    if (kernel == NULL)
        kernel = sgemm_kernel_best();
    return round_up(rows ? rows : 1, is_a ? kernel->mr : kernel->nr) * (k ? k : 1);
}

struct pack_job {
    const struct sgemm_kernel *kernel;
    const struct sgemm_operand *src;
    bool is_a;
    size_t rows, rows_pad, k, width;
    float *out;
};

/* Task = one panel of every depth block. */
static void pack_tasks(void *ctx, size_t begin, size_t end) {
    const struct pack_job *j = ctx;
    const size_t i0 = begin * j->width, i1 = end * j->width < j->rows ? end * j->width : j->rows;
    const size_t kb = j->kernel->kc;
    for (size_t p0 = 0; p0 < j->k; p0 += kb) {
        const size_t kc = j->k - p0 < kb ? j->k - p0 : kb;
        pack_operand(j->kernel, j->src, j->is_a, i0, i1, p0, kc, j->width,
                     (float *)packed_at(j->out, j->rows_pad, p0, kc, i0));
    }
}

void sgemm_pack(const struct sgemm_kernel *kernel, bool is_a, const struct sgemm_operand *src,
                size_t rows, size_t k, float *out, struct thread_pool *pool) {
    if (kernel == NULL)
        kernel = sgemm_kernel_best();
    const size_t width = is_a ? kernel->mr : kernel->nr;
    struct pack_job j = {kernel, src, is_a, rows, round_up(rows, width), k, width, out};
    thread_pool_parallel_for(pool, j.rows_pad / width, pack_tasks, &j);
}

/* ---------------------------- per-thread buffers ---------------------------- */

/* Packing buffers live with the thread, so a call allocates nothing once
 * warm; the key's destructor frees them when the thread ends. `shared` is
 * the calling thread's buffer for an operand packed once for every range. */
struct buffers {
    float *a, *b, *shared, *narrow;
    size_t a_cap, b_cap, shared_cap, narrow_cap;
};

static pthread_key_t buffers_key;
static pthread_once_t buffers_once = PTHREAD_ONCE_INIT;

static void free_buffers(void *p) {
    struct buffers *bf = p;
    free(bf->a);
    free(bf->b);
    free(bf->shared);
    free(bf->narrow);
    free(bf);
}

static void make_key(void) {
    pthread_key_create(&buffers_key, free_buffers);
}

static float *grow(float **buf, size_t *cap, size_t need) {
    if (need <= *cap)
        return *buf;
    free(*buf);
    *cap = 0;
    *buf = aligned_alloc(64, round_up(need * sizeof(float), 64));
    if (*buf != NULL)
        *cap = need;
    return *buf;
}

static struct buffers *thread_buffers(void) {
    pthread_once(&buffers_once, make_key);
    struct buffers *bf = pthread_getspecific(buffers_key);
    if (bf == NULL && (bf = calloc(1, sizeof *bf)) != NULL)
        pthread_setspecific(buffers_key, bf);
    return bf;
}

/* ---------------------------- driver ---------------------------- */

/* One tile of C (h x w): the narrow kernel where w is small enough, else
 * the kernel for h rows (the full one, or the last panel's own where the
 * ISA has it), through a scratch tile where the kernel would write past
 * C: columns beyond w, or rows beyond h when only the full kernel exists.
 * B's rows are ldb apart: nr in a packed panel, the matrix's row stride
 * when the kernel reads a row-major B in place. */
static void tile(const struct sgemm_kernel *kn, size_t kc, const float *a, const float *b,
                 size_t ldb, float *c, size_t ldc, size_t h, size_t w, bool acc) {
    if (w <= kn->narrow_max) {
        kn->narrow(kc, a, b, ldb, c, ldc, h, w, acc);
        return;
    }
    const bool own_rows = h < kn->mr && kn->rows[h];
    const sgemm_ukernel_fn kernel = own_rows ? kn->rows[h] : kn->ukernel;
    if (w == kn->nr && (h == kn->mr || own_rows)) {
        kernel(kc, a, b, ldb, c, ldc, acc);
        return;
    }
    float edge[SGEMM_MAX_MR * SGEMM_MAX_NR];
    for (size_t i = 0; acc && i < h; i++)
        memcpy(edge + i * kn->nr, c + i * ldc, w * sizeof *c);
    kernel(kc, a, b, ldb, edge, kn->nr, acc);
    for (size_t i = 0; i < h; i++)
        memcpy(c + i * ldc, edge + i * kn->nr, w * sizeof *c);
}

/* A row-major B is read in place when A has at most two blocks of rows:
 * then each B panel is read once or twice, and packing would cost a pass
 * over K x N floats, as much time as the arithmetic (a 1x1 layer of 64
 * output channels). With more blocks the panels' strided rows are read
 * again and again, and a packed (contiguous) copy is faster. */
static bool b_readable_in_place(const struct sgemm_op *op) {
    return op->b.matrix && !op->b.trans && op->m <= 2 * op->kernel->mc;
}

/* The part of C one range computes: rows [i0, i1) x columns [j0, j1)
 * over depths [k0, k1) (k0 a multiple of KC), written (not added) to c,
 * whose row i is at c + i * ldc: C itself, or a depth range's buffer. */
struct range {
    size_t i0, i1, j0, j1, k0, k1;
    float *c;
    size_t ldc;
};

/* One range, with A and B packed (into this thread's buffers) as needed.
 * b_narrow > 0: b_packed is a narrow B, b_narrow columns a depth over all
 * of K (pack_narrow_b). False when a buffer cannot be had. */
static bool run_range(const struct sgemm_op *op, const float *a_packed, const float *b_packed,
                      size_t b_narrow, const struct range *r) {
    const struct sgemm_kernel *kn = op->kernel;
    const size_t mr = kn->mr, nr = kn->nr, mc_max = kn->mc, kb = kn->kc;
    const size_t m_pad = round_up(op->m, mr), n_pad = round_up(op->n, nr);
    struct buffers *bf = thread_buffers();
    float *pa = NULL, *pb = NULL;
    if (!a_packed && (!bf || !(pa = grow(&bf->a, &bf->a_cap, mc_max * kb))))
        return false;
    if (!b_packed && (!bf || !(pb = grow(&bf->b, &bf->b_cap, round_up(NC, nr) * kb))))
        return false;
    /* B in place: only a last partial panel (which would read past the
     * matrix's columns) is packed. */
    const bool b_in_place = !b_packed && b_readable_in_place(op);
    for (size_t p0 = r->k0; p0 < r->k1; p0 += kb) {
        const size_t kc = r->k1 - p0 < kb ? r->k1 - p0 : kb;
        const bool acc = p0 > r->k0;
        for (size_t jc = r->j0; jc < r->j1; jc += NC) {
            const size_t nc = r->j1 - jc < NC ? r->j1 - jc : NC;
            const size_t full = b_in_place ? nc / nr * nr : 0; /* panels read in place */
            const float *bp = b_narrow   ? b_packed + p0 * b_narrow
                              : b_packed ? packed_at(b_packed, n_pad, p0, kc, jc)
                                         : pb;
            if (!b_packed && full < nc)
                pack_operand(kn, &op->b, false, jc + full, jc + nc, p0, kc, nr, pb);
            for (size_t ic = r->i0; ic < r->i1; ic += mc_max) {
                const size_t mc = r->i1 - ic < mc_max ? r->i1 - ic : mc_max;
                const float *ap = a_packed ? packed_at(a_packed, m_pad, p0, kc, ic) : pa;
                if (!a_packed)
                    pack_operand(kn, &op->a, true, ic, ic + mc, p0, kc, mr, pa);
                for (size_t jr = 0; jr < nc; jr += nr) {
                    const float *b =
                        jr < full ? op->b.matrix + p0 * op->b.ld + jc + jr : bp + (jr - full) * kc;
                    const size_t ldb = jr < full ? op->b.ld : b_narrow ? b_narrow : nr;
                    for (size_t ir = 0; ir < mc; ir += mr)
                        tile(kn, kc, ap + ir * kc, b, ldb, r->c + (ic + ir) * r->ldc + jc + jr,
                             r->ldc, mc - ir < mr ? mc - ir : mr, nc - jr < nr ? nc - jr : nr, acc);
                }
            }
        }
    }
    return true;
}

/* Without buffers: slow but correct, straight from the operands. */
static float element(const struct sgemm_operand *o, bool is_a, size_t i, size_t p) {
    if (o->matrix)
        return (is_a != o->trans) ? o->matrix[i * o->ld + p] : o->matrix[p * o->ld + i];
    float v;
    o->pack(o->ctx, i, i + 1, p, 1, 1, &v);
    return v;
}

static void run_unbuffered(const struct sgemm_op *op, const struct range *r) {
    const struct sgemm_kernel *kn = op->kernel;
    const size_t m_pad = round_up(op->m, kn->mr), n_pad = round_up(op->n, kn->nr);
    const size_t kb = kn->kc;
    for (size_t i = r->i0; i < r->i1; i++)
        for (size_t j = r->j0; j < r->j1; j++) {
            float sum = 0.0f;
            for (size_t p = r->k0; p < r->k1; p++) {
                const size_t p0 = p / kb * kb, kc = op->k - p0 < kb ? op->k - p0 : kb;
                const float a = op->a.packed
                                    ? packed_at(op->a.packed, m_pad, p0, kc,
                                                i / kn->mr * kn->mr)[(p - p0) * kn->mr + i % kn->mr]
                                    : element(&op->a, true, i, p);
                const float b = op->b.packed
                                    ? packed_at(op->b.packed, n_pad, p0, kc,
                                                j / kn->nr * kn->nr)[(p - p0) * kn->nr + j % kn->nr]
                                    : element(&op->b, false, j, p);
                sum += a * b;
            }
            r->c[i * r->ldc + j] = sum;
        }
}

struct range_job {
    const struct sgemm_op *op;
    const float *a_packed, *b_packed;
    size_t b_narrow;        /* > 0: b_packed is a narrow B of this many columns a depth */
    enum sgemm_split split; /* COLUMNS, ROWS or DEPTH */
    size_t ranges;          /* COLUMNS, DEPTH: how many */
    float *partial;         /* DEPTH: ranges 1.. write m x n each here; range 0 writes C */
};

static void run_or_fallback(const struct range_job *j, const struct range *r) {
    if (!run_range(j->op, j->a_packed, j->b_packed, j->b_narrow, r))
        run_unbuffered(j->op, r);
}

static void range_tasks(void *ctx, size_t begin, size_t end) {
    const struct range_job *j = ctx;
    const struct sgemm_op *op = j->op;
    struct range r = {0, op->m, 0, op->n, 0, op->k, op->c, op->ldc};
    if (j->split == SGEMM_SPLIT_ROWS) {
        r.i0 = begin * op->kernel->mr;
        r.i1 = end * op->kernel->mr < op->m ? end * op->kernel->mr : op->m;
    } else if (j->split == SGEMM_SPLIT_COLUMNS) {
        /* tasks are column ranges of whole panels, shared out evenly;
         * contiguous tasks make one range */
        const size_t panels = (op->n + op->kernel->nr - 1) / op->kernel->nr;
        r.j0 = begin * panels / j->ranges * op->kernel->nr;
        r.j1 = end * panels / j->ranges * op->kernel->nr;
        r.j1 = r.j1 < op->n ? r.j1 : op->n;
        if (r.j0 >= r.j1)
            return;
    } else {
        /* one task per depth range: whole KC blocks, shared out evenly */
        const size_t kb = op->kernel->kc;
        const size_t blocks = (op->k + kb - 1) / kb;
        for (size_t t = begin; t < end; t++) {
            const size_t b0 = t * blocks / j->ranges, b1 = (t + 1) * blocks / j->ranges;
            r.k0 = b0 * kb;
            r.k1 = b1 * kb < op->k ? b1 * kb : op->k;
            r.c = t == 0 ? op->c : j->partial + (t - 1) * op->m * op->n;
            r.ldc = t == 0 ? op->ldc : op->n;
            run_or_fallback(j, &r);
        }
        return;
    }
    run_or_fallback(j, &r);
}

/* DEPTH: C's rows [begin, end) += every other range's buffer. */
static void sum_tasks(void *ctx, size_t begin, size_t end) {
    const struct range_job *j = ctx;
    const struct sgemm_op *op = j->op;
    for (size_t i = begin; i < end; i++) {
        float *restrict c = op->c + i * op->ldc;
        for (size_t t = 1; t < j->ranges; t++) {
            const float *restrict part = j->partial + (t - 1) * op->m * op->n + i * op->n;
            for (size_t x = 0; x < op->n; x++)
                c[x] += part[x];
        }
    }
}

/* Column and depth ranges per thread: two, so that a thread slowed by
 * another process leaves the second of its ranges to the others. Each
 * column range packs the A blocks it reads into its own buffer, just
 * before the kernels read them from L2. Packing A once for all ranges (as
 * the row split does B) was slower wherever the column split is chosen,
 * although it packs less: the shared copy is a pass of its own over
 * memory, and the kernels then read it back from L3 (bench_sgemm, AVX-512,
 * two runs: 1024^3 81-83 % of peak against 76-77 %, 2048^3 84-85 against
 * 77-81, 512x784x4608 77-78 against 64-73; one range per thread was
 * faster again in a quiet run, 84-87 % on 1024^3, but leaves a thread
 * slowed by another process with half the work). */
#define RANGES_PER_THREAD 2

/* Below this many FLOPs a GEMM runs on the calling thread alone: waking
 * the pool costs more than it saves (8x784x72, 0.9 MFLOP: 151 GFLOP/s on
 * one thread against 59 on two; at 2.4-3.6 MFLOP the two were level). */
#define SERIAL_FLOP 2e6

/* The split for op on `threads` threads, when not forced; op has
 * row_tasks panels of A's rows and col_tasks of B's columns. */
static enum sgemm_split choose_split(const struct sgemm_op *op, size_t threads, size_t row_tasks,
                                     size_t col_tasks) {
    if (threads < 2 || row_tasks < threads)
        return SGEMM_SPLIT_COLUMNS;
    /* Split the columns unless there are too few of them for the threads,
     * or clearly fewer than rows (a 7x7 map: n = 49 against 512 rows), or
     * when whole row panels share the tiles out more evenly (by 5 %) than
     * whole column panels: a 14x14 map has 7 column panels, 4 and 3 to
     * two threads, where 128 rows are 10 panels, 5 and 5 (1.38x measured
     * on 128x196x1152; 1.07-1.43x on such shapes, the rest unchanged). */
    const size_t col_share = (col_tasks + threads - 1) / threads * row_tasks;
    const size_t row_share = (row_tasks + threads - 1) / threads * col_tasks;
    if (!(col_tasks < 2 * threads || op->n * 2 < op->m || row_share * 20 < col_share * 19))
        return SGEMM_SPLIT_COLUMNS;
    /* Rows, but so few panels that the pool hands them out one by one
     * (thread_pool.h: about four ranges a thread), and each range reads
     * all of B again: with K of two blocks or more, ranges of the depth
     * read A and B once (128x49x20800 1.29-1.33x, 160x49x960 1.14x,
     * 128x49x2048 1.14x; from 19 panels up the rows were as fast or
     * faster: 256x49x9216 0.92x, 512x49x4608 0.88-0.91x). */
    if (row_tasks < 8 * threads && op->k > op->kernel->kc)
        return SGEMM_SPLIT_DEPTH;
    return SGEMM_SPLIT_ROWS;
}

/* The columns a narrow kernel reads for a tile of w (narrow_avx512,
 * narrow_avx2): w rounded up to a power of two. */
static size_t narrow_columns(size_t w) {
    size_t cols = 1;
    while (cols < w)
        cols *= 2;
    return cols;
}

/* All of B (n <= width columns) into out: width floats a depth, zeros
 * past n, over all of K. */
static void pack_b_columns(const struct sgemm_op *op, size_t width, float *out) {
    const size_t kb = op->kernel->kc;
    for (size_t p0 = 0; p0 < op->k; p0 += kb) {
        const size_t kc = op->k - p0 < kb ? op->k - p0 : kb;
        pack_operand(op->kernel, &op->b, false, 0, op->n, p0, kc, width, out + p0 * width);
    }
}

/* A B of at most narrow_max columns (a 1x1 layer on a 1x1 map: one) is
 * packed once for every range, narrow_columns(n) wide over all of K: a
 * panel nr wide would put each depth's few columns on a cache line of
 * their own (K x 128 bytes on AVX-512 for N = 1, more than L1 holds from
 * K = 384), read again for every panel of A. True when it was. */
static bool pack_narrow_b(struct range_job *j) {
    const struct sgemm_op *op = j->op;
    if (j->b_packed || op->n > op->kernel->narrow_max || op->kernel->narrow == NULL)
        return false;
    const size_t width = narrow_columns(op->n);
    struct buffers *bf = thread_buffers();
    float *out = bf ? grow(&bf->narrow, &bf->narrow_cap, width * op->k) : NULL;
    if (out == NULL)
        return false; /* packed by each range, as wider Bs are */
    pack_b_columns(op, width, out);
    j->b_packed = out;
    j->b_narrow = width;
    return true;
}

struct gemv_job {
    const struct sgemm_op *op;
    const float *b; /* B's one column, contiguous */
};

/* Tasks are blocks of GEMV_ROWS rows of C. */
#define GEMV_ROWS 8
static void gemv_tasks(void *ctx, size_t begin, size_t end) {
    const struct gemv_job *j = ctx;
    const struct sgemm_op *op = j->op;
    const size_t i0 = begin * GEMV_ROWS, i1 = end * GEMV_ROWS < op->m ? end * GEMV_ROWS : op->m;
    op->kernel->gemv(i1 - i0, op->k, op->a.matrix + i0 * op->a.ld, op->a.ld, j->b,
                     op->c + i0 * op->ldc, op->ldc);
}

/* C of one column from a plain row-major A (DEFINE_GEMV): B's column is
 * made contiguous (K floats) and the threads take blocks of rows. False
 * when it does not apply or no buffer can be had. */
static bool run_gemv(const struct sgemm_op *op, struct thread_pool *pool) {
    if (op->n != 1 || op->a.matrix == NULL || op->a.trans || op->b.packed ||
        op->kernel->gemv == NULL)
        return false;
    const float *b = op->b.matrix;
    if (b == NULL || op->b.trans || op->b.ld != 1) {
        struct buffers *bf = thread_buffers();
        float *out = bf ? grow(&bf->narrow, &bf->narrow_cap, op->k) : NULL;
        if (out == NULL)
            return false;
        pack_b_columns(op, 1, out);
        b = out;
    }
    struct gemv_job j = {op, b};
    thread_pool_parallel_for(pool, (op->m + GEMV_ROWS - 1) / GEMV_ROWS, gemv_tasks, &j);
    return true;
}

bool sgemm_is_serial(const struct sgemm_op *op) {
    const bool forced = op->split > SGEMM_SPLIT_AUTO && op->split <= SGEMM_SPLIT_DEPTH;
    return !forced && 2.0 * (double)op->m * (double)op->n * (double)op->k < SERIAL_FLOP;
}

void sgemm_run(const struct sgemm_op *in, struct thread_pool *pool) {
    struct sgemm_op op = *in;
    if (op.kernel == NULL)
        op.kernel = sgemm_kernel_best();
    if (op.m == 0 || op.n == 0)
        return;
    if (op.k == 0) {
        for (size_t i = 0; i < op.m; i++)
            memset(op.c + i * op.ldc, 0, op.n * sizeof *op.c);
        return;
    }
    const size_t mr = op.kernel->mr, nr = op.kernel->nr;
    const bool forced = op.split > SGEMM_SPLIT_AUTO && op.split <= SGEMM_SPLIT_DEPTH;
    if (sgemm_is_serial(&op))
        pool = NULL;
    if (!forced && run_gemv(&op, pool)) /* a forced split is timed as it is */
        return;
    const size_t threads = (size_t)(pool ? thread_pool_threads(pool) : 1);
    const size_t col_tasks = (op.n + nr - 1) / nr, row_tasks = (op.m + mr - 1) / mr;
    struct range_job j = {.op = &op,
                          .a_packed = op.a.packed,
                          .b_packed = op.b.packed,
                          .split =
                              forced ? op.split : choose_split(&op, threads, row_tasks, col_tasks)};
    pack_narrow_b(&j);
    if (j.split == SGEMM_SPLIT_DEPTH) {
        const size_t blocks = (op.k + op.kernel->kc - 1) / op.kernel->kc,
                     want = threads * RANGES_PER_THREAD;
        j.ranges = blocks < want ? blocks : want;
        struct buffers *bf = j.ranges > 1 ? thread_buffers() : NULL;
        j.partial = bf ? grow(&bf->shared, &bf->shared_cap, (j.ranges - 1) * op.m * op.n) : NULL;
        if (j.ranges > 1 && j.partial == NULL)
            j.ranges = 1; /* no buffer: one range, on one thread */
        thread_pool_parallel_for(pool, j.ranges, range_tasks, &j);
        if (j.ranges > 1)
            thread_pool_parallel_for(pool, op.m, sum_tasks, &j);
        return;
    }
    if (j.split == SGEMM_SPLIT_COLUMNS) {
        /* A packed by the caller (a convolution's weights): one task per
         * panel, which the pool hands out in chunks of contiguous panels;
         * else RANGES_PER_THREAD ranges each, packing their own A. */
        const size_t want = threads > 1 ? threads * RANGES_PER_THREAD : 1;
        j.ranges = j.a_packed || col_tasks < want ? col_tasks : want;
        thread_pool_parallel_for(pool, j.ranges, range_tasks, &j);
        return;
    }
    /* Row ranges all read the whole of B: it is packed once, by all
     * threads, unless it came packed or is read in place. */
    const bool pack_b = threads > 1 && !j.b_packed && !b_readable_in_place(&op);
    float *shared = NULL;
    if (pack_b) {
        struct buffers *bf = thread_buffers();
        const size_t need = sgemm_packed_floats(op.kernel, false, op.n, op.k);
        shared = bf ? grow(&bf->shared, &bf->shared_cap, need) : NULL;
    }
    if (shared) {
        sgemm_pack(op.kernel, false, &op.b, op.n, op.k, shared, pool);
        j.b_packed = shared;
    }
    thread_pool_parallel_for(pool, row_tasks, range_tasks, &j);
}

void sgemm(const struct sgemm_args *g, struct thread_pool *pool) {
    const struct sgemm_op op = {
        .m = g->m,
        .n = g->n,
        .k = g->k,
        .a = {.matrix = g->a, .ld = g->lda, .trans = g->a_trans},
        .b = {.matrix = g->b, .ld = g->ldb, .trans = g->b_trans},
        .c = g->c,
        .ldc = g->ldc,
    };
    sgemm_run(&op, pool);
}

bool sgemm_variant(enum cpu_isa isa, const struct sgemm_args *g, struct thread_pool *pool) {
    const struct sgemm_kernel *kn = sgemm_kernel_for(isa);
    if (kn == NULL)
        return false;
    const struct sgemm_op op = {
        .kernel = kn,
        .m = g->m,
        .n = g->n,
        .k = g->k,
        .a = {.matrix = g->a, .ld = g->lda, .trans = g->a_trans},
        .b = {.matrix = g->b, .ld = g->ldb, .trans = g->b_trans},
        .c = g->c,
        .ldc = g->ldc,
    };
    sgemm_run(&op, pool);
    return true;
}
