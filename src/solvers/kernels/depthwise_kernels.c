/* depthwise_kernels.c -- see depthwise_kernels.h. Each loop body is
 * written once (always_inline) and compiled for x86-64-v4, x86-64-v3 and
 * the baseline. NCHW bands accumulate blocks of DW_ROWS rows of outputs
 * in vector registers (GCC vector types of the ISA's width: 16 floats, one
 * zmm per row, on AVX-512; 8 floats, one ymm, on AVX2 and two xmm on the
 * baseline: depthwise_band.inc), one multiply-add per tap and row, reading
 * the slab (planned for DW_COLS = 16, which both widths divide) with
 * unaligned loads. The row kernels resolve bounds per filter tap as a range
 * of output columns, so their inner loops have no branches and vectorize:
 * over output columns in NCHW (contiguous when the stride is 1), over
 * channels in NHWC. */
#include "solvers/kernels/depthwise_kernels.h"

#include <string.h>

/* Output rows per register block: 6 independent accumulators hide the
 * multiply-add latency (12 with two sets of sums: 12 of AVX2's 16
 * registers). */
#define DW_ROWS 6

int64_t dw_slab_rows(const struct dw_geometry *g, int64_t rows) {
    return (rows - 1) * g->stride_h + (g->r - 1) * g->dil_h + 1;
}

bool dw_slab_plan(const struct dw_geometry *g, int64_t oh, int64_t planes, int64_t min_tasks,
                  size_t max_floats, struct dw_slab *out) {
    const int64_t ow_blocks = (g->ow + DW_COLS - 1) / DW_COLS;
    out->phase_len = ow_blocks * DW_COLS + (g->s - 1) * g->dil_w / g->stride_w;
    out->row_pitch = g->stride_w * out->phase_len;
    const size_t fit = max_floats / (size_t)out->row_pitch;
    const int64_t fit_rows = fit < (size_t)INT64_MAX ? (int64_t)fit : INT64_MAX;
    const int64_t first = dw_slab_rows(g, 1); /* input rows of one output row */
    if (fit_rows < first)
        return false;
    int64_t band = (fit_rows - first) / g->stride_h + 1;
    const int64_t bands_wanted = (min_tasks + planes - 1) / planes;
    const int64_t balanced = (oh + bands_wanted - 1) / bands_wanted;
    band = band < balanced ? band : balanced;
    out->band = band < oh ? band : oh;
    return true;
}

void dw_slab_clear(const struct dw_geometry *g, const struct dw_slab *sl, int64_t rows,
                   float *slab) {
    memset(slab, 0, (size_t)(dw_slab_rows(g, rows) * sl->row_pitch) * sizeof(float));
}

/* Phase q's slab indices [*lo, *hi) that hold input columns (index j is
 * input column j * stride_w + q - pad_w). */
static void phase_range(const struct dw_geometry *g, const struct dw_slab *sl, int64_t q,
                        int64_t *lo, int64_t *hi) {
    const int64_t sw = g->stride_w, first = q - g->pad_w;
    *lo = first >= 0 ? 0 : (-first + sw - 1) / sw;
    *hi = g->w - 1 - first < 0 ? 0 : (g->w - 1 - first) / sw + 1;
    *hi = *hi < sl->phase_len ? *hi : sl->phase_len;
}

/* Stride 2 across on a packed row: both phases in one pass over the row,
 * which the compiler vectorizes (pairs of loads, then even and odd lanes
 * apart). Phase by phase, a strided scalar copy was 64 % of MobileNet-v2's
 * stride-2 depthwise layer (perf, 8x144x56x56, 1 thread). */
static void pack_row_stride2(const float *restrict row, int64_t lo0, int64_t hi0, int64_t lo1,
                             int64_t hi1, float *restrict d0, float *restrict d1) {
    /* d0[j] = row[2j], d1[j] = row[2j + 1] */
    const int64_t lo = lo0 > lo1 ? lo0 : lo1, hi = hi0 < hi1 ? hi0 : hi1;
    for (int64_t j = lo0; j < (lo < hi0 ? lo : hi0); j++)
        d0[j] = row[2 * j];
    for (int64_t j = lo1; j < (lo < hi1 ? lo : hi1); j++)
        d1[j] = row[2 * j + 1];
    for (int64_t j = lo; j < hi; j++) {
        d0[j] = row[2 * j];
        d1[j] = row[2 * j + 1];
    }
    for (int64_t j = (hi > lo0 ? hi : lo0); j < hi0; j++)
        d0[j] = row[2 * j];
    for (int64_t j = (hi > lo1 ? hi : lo1); j < hi1; j++)
        d1[j] = row[2 * j + 1];
}

void dw_slab_pack(const struct dw_geometry *g, const struct dw_slab *sl, const float *x,
                  int64_t row_stride, int64_t col_stride, int64_t oy0, int64_t rows, float *slab) {
    const int64_t sw = g->stride_w, len = sl->phase_len;
    int64_t i0 = g->pad_h - oy0 * g->stride_h; /* first slab row inside the input */
    int64_t i1 = g->h + i0;                    /* and one past the last */
    i0 = i0 > 0 ? i0 : 0;
    i1 = i1 < dw_slab_rows(g, rows) ? i1 : dw_slab_rows(g, rows);
    /* slab row i is input row i + oy0 * stride_h - pad_h */
    const float *src = x + (oy0 * g->stride_h - g->pad_h) * row_stride;
    if (sw == 2 && col_stride == 1) {
        int64_t lo0, hi0, lo1, hi1;
        phase_range(g, sl, 0, &lo0, &hi0);
        phase_range(g, sl, 1, &lo1, &hi1);
        for (int64_t i = i0; i < i1; i++) {
            float *dst = slab + i * sl->row_pitch;
            pack_row_stride2(src + i * row_stride - g->pad_w, lo0, hi0, lo1, hi1, dst, dst + len);
        }
        return;
    }
    for (int64_t q = 0; q < sw; q++) {
        /* phase q, index j holds input column j * sw + first */
        const int64_t first = q - g->pad_w;
        int64_t lo, hi;
        phase_range(g, sl, q, &lo, &hi);
        if (lo >= hi)
            continue;
        for (int64_t i = i0; i < i1; i++) {
            float *dst = slab + i * sl->row_pitch + q * len;
            const float *row = src + i * row_stride + first * col_stride;
            const int64_t step = sw * col_stride;
            if (step == 1)
                memcpy(dst + lo, row + lo, (size_t)(hi - lo) * sizeof(float));
            else
                for (int64_t j = lo; j < hi; j++)
                    dst[j] = row[j * step];
        }
    }
}

/* The next tap across, dil_w = dq + dj * sw columns on: phase and index
 * in the slab's stride-phase layout. */
static inline __attribute__((always_inline)) void next_tap(int64_t dq, int64_t dj, int64_t sw,
                                                           int64_t *phase, int64_t *j) {
    *phase += dq, *j += dj;
    if (*phase >= sw)
        *phase -= sw, ++*j;
}

/* A row of the output into a block's sums: whole vectors by a copy of
 * constant size (no call), a short last block element by element; a
 * memcpy of `cols` floats was a library call per row and channel. */
#define LOAD_ROW(sum, from, cols)                                                                  \
    do {                                                                                           \
        if ((cols) == BAND_COLS)                                                                   \
            memcpy(&(sum), (from), sizeof(sum));                                                   \
        else                                                                                       \
            for (int64_t i_ = 0; i_ < (cols); i_++)                                                \
                (sum)[i_] = (from)[i_];                                                            \
    } while (0)

/* The block's sums (sets of them per row, added) to its nrows x cols of
 * the output, rows ow apart. A macro, not a function, so that both blocks
 * keep the code their loops had: an inline function taking the sums
 * measured 0.87-0.98x in one interleaved run (this harness's noise is
 * about 5 %). */
#define STORE_BLOCK(part, nrows, sets, cols, out, ow)                                              \
    do {                                                                                           \
        for (int q_ = 0; q_ < (nrows); q_++)                                                       \
            for (int u_ = 1; u_ < (sets); u_++)                                                    \
                (part)[0][q_] += (part)[u_][q_];                                                   \
        if ((cols) == BAND_COLS) { /* BAND_COLS: of the band code that uses it */                  \
            for (int q_ = 0; q_ < (nrows); q_++)                                                   \
                memcpy((out) + q_ * (ow), &(part)[0][q_], sizeof(part)[0][q_]);                    \
        } else {                                                                                   \
            for (int q_ = 0; q_ < (nrows); q_++)                                                   \
                for (int64_t i_ = 0; i_ < (cols); i_++)                                            \
                    (out)[q_ * (ow) + i_] = (part)[0][q_][i_];                                     \
        }                                                                                          \
    } while (0)

typedef float dw_vec16 __attribute__((vector_size(16 * sizeof(float))));
typedef float dw_vec8 __attribute__((vector_size(8 * sizeof(float))));

#define BAND_VEC dw_vec16
#define BAND_COLS 16
#define BAND(name) name##_16
#include "solvers/kernels/depthwise_band.inc"

#define BAND_VEC dw_vec8
#define BAND_COLS 8
#define BAND(name) name##_8
#include "solvers/kernels/depthwise_band.inc"

/* dst[j][i] = src[i][j] for an 8x8 block of floats: rows of 8 at src[i],
 * written as rows of 8 at dst[j]. Three rounds of two-source shuffles
 * (unpack, pair, 128-bit halves on AVX2), where element by element it is
 * 64 scalar loads and stores. Rows are loaded and stored as whole vectors
 * of unaligned type: by memcpy into an array GCC copied them in 16-byte
 * halves and read them back whole, a store-forwarding stall per row. */
typedef float dw_uvec8 __attribute__((vector_size(8 * sizeof(float)), aligned(4), may_alias));
static inline __attribute__((always_inline)) void dw_transpose8(const float *const src[8],
                                                                float *const dst[8]) {
    /* __builtin_shufflevector: GCC 12 and clang both have it (clang has no
     * __builtin_shuffle, and the fuzzing build compiles this file with it) */
    dw_vec8 a[8], t[8], u[8];
    for (int i = 0; i < 8; i++)
        a[i] = *(const dw_uvec8 *)src[i];
    for (int i = 0; i < 8; i += 2) {
        t[i] = __builtin_shufflevector(a[i], a[i + 1], 0, 8, 1, 9, 4, 12, 5, 13);
        t[i + 1] = __builtin_shufflevector(a[i], a[i + 1], 2, 10, 3, 11, 6, 14, 7, 15);
    }
    for (int i = 0; i < 8; i += 4)
        for (int h = 0; h < 2; h++) {
            u[i + 2 * h] =
                __builtin_shufflevector(t[i + h], t[i + h + 2], 0, 1, 8, 9, 4, 5, 12, 13);
            u[i + 2 * h + 1] =
                __builtin_shufflevector(t[i + h], t[i + h + 2], 2, 3, 10, 11, 6, 7, 14, 15);
        }
    for (int j = 0; j < 4; j++) {
        *(dw_uvec8 *)dst[j] = __builtin_shufflevector(u[j], u[j + 4], 0, 1, 2, 3, 8, 9, 10, 11);
        *(dw_uvec8 *)dst[j + 4] =
            __builtin_shufflevector(u[j], u[j + 4], 4, 5, 6, 7, 12, 13, 14, 15);
    }
}

#define SMALL_VEC dw_vec16
#define SMALL_LANES 16
#define SMALL(name) name##_16
#include "solvers/kernels/depthwise_small.inc"

#define SMALL_VEC dw_vec8
#define SMALL_LANES 8
#define SMALL(name) name##_8
#include "solvers/kernels/depthwise_small.inc"

/* Output columns [*lo, *hi) whose tap s lands inside the input row. */
static inline __attribute__((always_inline)) void tap_range(const struct dw_geometry *g, int64_t s,
                                                            int64_t *lo, int64_t *hi) {
    const int64_t off = s * g->dil_w - g->pad_w; /* ix = ox * stride + off */
    int64_t a = off >= 0 ? 0 : (-off + g->stride_w - 1) / g->stride_w;
    int64_t b = g->w - 1 - off < 0 ? 0 : (g->w - 1 - off) / g->stride_w + 1;
    *lo = a;
    *hi = b < g->ow ? b : g->ow;
}

static inline __attribute__((always_inline)) void nchw_row_body(const struct dw_geometry *g,
                                                                const float *restrict x,
                                                                const float *restrict taps,
                                                                int64_t oy, float *restrict y) {
    for (int64_t ox = 0; ox < g->ow; ox++)
        y[ox] = 0.0f;
    for (int64_t r = 0; r < g->r; r++) {
        const int64_t iy = oy * g->stride_h - g->pad_h + r * g->dil_h;
        if (iy < 0 || iy >= g->h)
            continue;
        const float *restrict row = x + iy * g->w;
        for (int64_t s = 0; s < g->s; s++) {
            int64_t lo, hi;
            tap_range(g, s, &lo, &hi);
            const float t = taps[r * g->s + s];
            const float *restrict src = row + s * g->dil_w - g->pad_w;
            if (g->stride_w == 1)
                for (int64_t ox = lo; ox < hi; ox++)
                    y[ox] += t * src[ox];
            else
                for (int64_t ox = lo; ox < hi; ox++)
                    y[ox] += t * src[ox * g->stride_w];
        }
    }
}

static inline __attribute__((always_inline)) void nhwc_row_body(const struct dw_geometry *g,
                                                                const float *restrict x,
                                                                const float *restrict taps,
                                                                int64_t oy, float *restrict y) {
    const int64_t k = g->k, c = g->c, m = g->mult;
    for (int64_t i = 0; i < g->ow * k; i++)
        y[i] = 0.0f;
    for (int64_t r = 0; r < g->r; r++) {
        const int64_t iy = oy * g->stride_h - g->pad_h + r * g->dil_h;
        if (iy < 0 || iy >= g->h)
            continue;
        for (int64_t s = 0; s < g->s; s++) {
            int64_t lo, hi;
            tap_range(g, s, &lo, &hi);
            const float *restrict t = taps + (r * g->s + s) * k;
            for (int64_t ox = lo; ox < hi; ox++) {
                const int64_t ix = ox * g->stride_w + s * g->dil_w - g->pad_w;
                const float *restrict px = x + (iy * g->w + ix) * c;
                float *restrict py = y + ox * k;
                if (m == 1) {
                    for (int64_t ch = 0; ch < k; ch++)
                        py[ch] += px[ch] * t[ch];
                } else {
                    for (int64_t ch = 0; ch < c; ch++)
                        for (int64_t j = 0; j < m; j++)
                            py[ch * m + j] += px[ch] * t[ch * m + j];
                }
            }
        }
    }
}

#define DEFINE_VARIANT(suffix, attr, width, split, reuse)                                          \
    attr static void nchw_band_##suffix(const struct dw_geometry *g, const struct dw_slab *sl,     \
                                        const float *slab, const float *taps, int64_t rows,        \
                                        bool accumulate, float *y) {                               \
        nchw_band_body_##width(g, sl, slab, taps, rows, accumulate, split, reuse, y);              \
    }                                                                                              \
    attr static void nchw_row_##suffix(const struct dw_geometry *g, const float *x,                \
                                       const float *taps, int64_t oy, float *y) {                  \
        nchw_row_body(g, x, taps, oy, y);                                                          \
    }                                                                                              \
    attr static void nhwc_row_##suffix(const struct dw_geometry *g, const float *x,                \
                                       const float *taps, int64_t oy, float *y) {                  \
        nhwc_row_body(g, x, taps, oy, y);                                                          \
    }                                                                                              \
    attr static void nchw_small_##suffix(const struct dw_geometry *g, int64_t oh, const float *x,  \
                                         int64_t images, const float *w, int64_t k0,               \
                                         int64_t lanes, float *work, float *y) {                   \
        small_body_##width(g, oh, x, images, w, k0, lanes, work, y);                               \
    }

DEFINE_VARIANT(generic, , 8, false, false)
DEFINE_VARIANT(wide_generic, , 16, true, true)
static const struct dw_kernels generic = {
    nchw_band_generic, nchw_row_generic, nhwc_row_generic, nchw_small_generic, 8, CPU_GENERIC};
static const struct dw_kernels wide = {nchw_band_wide_generic,
                                       nchw_row_wide_generic,
                                       nhwc_row_wide_generic,
                                       nchw_small_wide_generic,
                                       16,
                                       CPU_GENERIC};

#ifdef CPU_X86_VARIANTS
DEFINE_VARIANT(avx2, CPU_TARGET_AVX2, 8, true, false)
DEFINE_VARIANT(avx512, CPU_TARGET_AVX512, 16, true, true)
static const struct dw_kernels avx2 = {
    nchw_band_avx2, nchw_row_avx2, nhwc_row_avx2, nchw_small_avx2, 8, CPU_AVX2};
static const struct dw_kernels avx512 = {
    nchw_band_avx512, nchw_row_avx512, nhwc_row_avx512, nchw_small_avx512, 16, CPU_AVX512};
#endif

static const void *const table[3] = CPU_VARIANT_TABLE(generic, avx2, avx512);

const struct dw_kernels *dw_kernels_variant(enum cpu_isa isa) {
    return cpu_variant(table, isa);
}

const struct dw_kernels *dw_kernels(void) {
    return cpu_best_variant(table);
}

const struct dw_kernels *dw_kernels_wide_for_tests(void) {
    return &wide;
}
