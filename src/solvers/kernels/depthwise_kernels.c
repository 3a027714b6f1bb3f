/* depthwise_kernels.c -- see depthwise_kernels.h. Each loop body is
 * written once (always_inline) and compiled for x86-64-v4, x86-64-v3 and
 * the baseline. NCHW bands accumulate blocks of DW_ROWS x DW_COLS outputs
 * in vector registers (GCC vector types: one zmm per row on AVX-512, two
 * ymm on AVX2), one multiply-add per tap and row, reading the slab with
 * unaligned loads. The row kernels resolve bounds per filter tap as a range
 * of output columns, so their inner loops have no branches and vectorize:
 * over output columns in NCHW (contiguous when the stride is 1), over
 * channels in NHWC. */
#include "solvers/kernels/depthwise_kernels.h"

#include <string.h>

/* Output rows per register block: 6 independent accumulators hide the
 * multiply-add latency (and fill 12 of AVX2's 16 registers). */
#define DW_ROWS 6

typedef float dw_vec __attribute__((vector_size(DW_COLS * sizeof(float))));

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
        if ((cols) == DW_COLS) {                                                                   \
            for (int q_ = 0; q_ < (nrows); q_++)                                                   \
                memcpy((out) + q_ * (ow), &(part)[0][q_], sizeof(part)[0][q_]);                    \
        } else {                                                                                   \
            for (int q_ = 0; q_ < (nrows); q_++)                                                   \
                for (int64_t i_ = 0; i_ < (cols); i_++)                                            \
                    (out)[q_ * (ow) + i_] = (part)[0][q_][i_];                                     \
        }                                                                                          \
    } while (0)

/* nrows (1..DW_ROWS) output rows from slab row oy * stride_h on, all
 * column blocks, written or (accumulate) added to y. nrows, unit_w (stride
 * and dilation 1 across: every tap in phase 0), accumulate and split are
 * constants after inlining; the geometry is read into locals once, since
 * the stores to y could otherwise alias it. split: even and odd taps of a
 * filter row go to two sets of sums, added at the end. Without it a
 * block's rows are its only independent sums, and on a 1-D layer (H = 1:
 * one row) each tap waits for the multiply-add of the one before (latency
 * 4, on two pipes). Measured, interleaved x3 on 2 threads: QuartzNet's
 * 1x87 depthwise 0.18-0.23 -> 0.15 ms; 2-D layers, whose 6-row blocks
 * already have 6 sums, 1.00-1.04x. AVX-512 has the registers (12 zmm);
 * AVX2's dw_vec is two ymm, so one set already holds 12 sums in its 16. */
static inline __attribute__((always_inline)) void
band_block(const struct dw_geometry *g, const struct dw_slab *sl, const float *restrict slab,
           const float *restrict taps, int64_t oy, const int nrows, const bool unit_w,
           const bool accumulate, const bool split, float *restrict y) {
    const int64_t sw = unit_w ? 1 : g->stride_w, dil_w = unit_w ? 1 : g->dil_w;
    const int64_t dq = dil_w % sw, dj = dil_w / sw, fr = g->r, fs = g->s, ow = g->ow;
    const int64_t pitch = sl->row_pitch, len = sl->phase_len;
    const int64_t row_step = g->stride_h * pitch, tap_row_step = g->dil_h * pitch;
    const float *first_row = slab + oy * g->stride_h * pitch;
    for (int64_t ox = 0; ox < ow; ox += DW_COLS) {
        const int64_t cols = ow - ox < DW_COLS ? ow - ox : DW_COLS;
        float *out = y + oy * ow + ox;
        /* part[0] is the result; part[1] holds the odd taps when split, and is
         * added to it at the end */
        const int sets = split ? 2 : 1;
        dw_vec part[2][DW_ROWS];
        for (int q = 0; q < nrows; q++) {
            for (int u = 0; u < sets; u++)
                part[u][q] = (dw_vec){0};
            if (accumulate)
                memcpy(&part[0][q], out + q * ow, (size_t)cols * sizeof(float));
        }
        for (int64_t r = 0; r < fr; r++) {
            const float *row = first_row + r * tap_row_step + ox;
            const float *rt = taps + r * fs;
            int64_t phase = 0, j = 0; /* of tap s: padded column s * dil_w */
            int64_t s = 0;
            for (; sets > 1 && s + sets <= fs; s += sets) {
                const float *src[2];
                for (int u = 0; u < sets; u++) {
                    src[u] = unit_w ? row + s + u : row + phase * len + j;
                    if (!unit_w)
                        next_tap(dq, dj, sw, &phase, &j);
                }
                for (int q = 0; q < nrows; q++)
                    for (int u = 0; u < sets; u++) {
                        dw_vec v;
                        memcpy(&v, src[u] + q * row_step, sizeof v);
                        part[u][q] += rt[s + u] * v;
                    }
            }
            for (; s < fs; s++) {
                const float t = rt[s];
                const float *src = unit_w ? row + s : row + phase * len + j;
                for (int q = 0; q < nrows; q++) {
                    dw_vec v;
                    memcpy(&v, src + q * row_step, sizeof v);
                    part[0][q] += t * v;
                }
                if (!unit_w)
                    next_tap(dq, dj, sw, &phase, &j);
            }
        }
        STORE_BLOCK(part, nrows, sets, cols, out, ow);
    }
}

/* The same block for stride and dilation 1 both ways and a filter FS
 * wide (a constant): slab row t feeds output rows t - r for every filter
 * row r, so each of its FS input vectors is loaded once (into registers)
 * and used by every output row of the block it reaches, where the loop
 * above loads it again for each. AVX-512 only: the FS vectors and the 12
 * sums fit its 32 registers, not AVX2's 16. Measured interleaved
 * (docs/depthwise-reuse-2026-12-02.txt): 3x3 1.11-1.13x on 56x56 and
 * 112x112 maps, 5x5 1.14-1.16x; 7 wide read 0.91-0.98x and stays on
 * band_block. */
static inline __attribute__((always_inline)) void
band_block_reuse(const struct dw_geometry *g, const struct dw_slab *sl, const float *restrict slab,
                 const float *restrict taps, int64_t oy, const int nrows, const int FS,
                 const bool accumulate, float *restrict y) {
    const int64_t fr = g->r, ow = g->ow, pitch = sl->row_pitch;
    const float *first_row = slab + oy * pitch;
    for (int64_t ox = 0; ox < ow; ox += DW_COLS) {
        const int64_t cols = ow - ox < DW_COLS ? ow - ox : DW_COLS;
        float *out = y + oy * ow + ox;
        dw_vec part[2][DW_ROWS]; /* even and odd taps, as in band_block */
        for (int q = 0; q < nrows; q++) {
            part[0][q] = part[1][q] = (dw_vec){0};
            if (accumulate)
                memcpy(&part[0][q], out + q * ow, (size_t)cols * sizeof(float));
        }
        for (int64_t t = 0; t < nrows + fr - 1; t++) {
            const float *row = first_row + t * pitch + ox;
            dw_vec v[5]; /* FS <= 5 */
            for (int u = 0; u < FS; u++)
                memcpy(&v[u], row + u, sizeof v[u]);
            for (int q = 0; q < nrows; q++) {
                const int64_t r = t - q;
                if (r < 0 || r >= fr)
                    continue;
                const float *rt = taps + r * FS;
                for (int u = 0; u < FS; u++)
                    part[u & 1][q] += rt[u] * v[u];
            }
        }
        STORE_BLOCK(part, nrows, 2, cols, out, ow);
    }
}

/* One block of nrows: the reusing loop where it applies (reuse: the ISA
 * has the registers), else band_block. */
static inline __attribute__((always_inline)) void
any_block(const struct dw_geometry *g, const struct dw_slab *sl, const float *slab,
          const float *taps, int64_t oy, const int nrows, const bool unit_w, const bool accumulate,
          const bool split, const bool reuse, float *y) {
    if (reuse && unit_w && g->stride_h == 1 && g->dil_h == 1) {
        switch (g->s) {
        case 3: band_block_reuse(g, sl, slab, taps, oy, nrows, 3, accumulate, y); return;
        case 5: band_block_reuse(g, sl, slab, taps, oy, nrows, 5, accumulate, y); return;
        default: break; /* 7 wide measured 0.91-0.98x: not taken */
        }
    }
    band_block(g, sl, slab, taps, oy, nrows, unit_w, accumulate, split, y);
}

/* All rows of a band: blocks of DW_ROWS, then one block of the rest (one
 * case per remainder below). */
_Static_assert(DW_ROWS == 6, "band_rows has a case for each remainder 1..DW_ROWS-1");
static inline __attribute__((always_inline)) void
band_rows(const struct dw_geometry *g, const struct dw_slab *sl, const float *slab,
          const float *taps, int64_t rows, const bool unit_w, const bool accumulate,
          const bool split, const bool reuse, float *y) {
    int64_t oy = 0;
    for (; oy + DW_ROWS <= rows; oy += DW_ROWS)
        any_block(g, sl, slab, taps, oy, DW_ROWS, unit_w, accumulate, split, reuse, y);
    switch (rows - oy) {
    case 5: any_block(g, sl, slab, taps, oy, 5, unit_w, accumulate, split, reuse, y); break;
    case 4: any_block(g, sl, slab, taps, oy, 4, unit_w, accumulate, split, reuse, y); break;
    case 3: any_block(g, sl, slab, taps, oy, 3, unit_w, accumulate, split, reuse, y); break;
    case 2: any_block(g, sl, slab, taps, oy, 2, unit_w, accumulate, split, reuse, y); break;
    case 1: any_block(g, sl, slab, taps, oy, 1, unit_w, accumulate, split, reuse, y); break;
    default: break;
    }
}

/* One instance per (unit stride and dilation across, accumulate). */
static inline __attribute__((always_inline)) void
nchw_band_body(const struct dw_geometry *g, const struct dw_slab *sl, const float *slab,
               const float *taps, int64_t rows, bool accumulate, const bool split, const bool reuse,
               float *y) {
    const bool unit_w = g->stride_w == 1 && g->dil_w == 1;
    if (unit_w && !accumulate)
        band_rows(g, sl, slab, taps, rows, true, false, split, reuse, y);
    else if (unit_w)
        band_rows(g, sl, slab, taps, rows, true, true, split, reuse, y);
    else if (!accumulate)
        band_rows(g, sl, slab, taps, rows, false, false, split, false, y);
    else
        band_rows(g, sl, slab, taps, rows, false, true, split, false, y);
}

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

#define DEFINE_VARIANT(suffix, attr, split, reuse)                                                 \
    attr static void nchw_band_##suffix(const struct dw_geometry *g, const struct dw_slab *sl,     \
                                        const float *slab, const float *taps, int64_t rows,        \
                                        bool accumulate, float *y) {                               \
        nchw_band_body(g, sl, slab, taps, rows, accumulate, split, reuse, y);                      \
    }                                                                                              \
    attr static void nchw_row_##suffix(const struct dw_geometry *g, const float *x,                \
                                       const float *taps, int64_t oy, float *y) {                  \
        nchw_row_body(g, x, taps, oy, y);                                                          \
    }                                                                                              \
    attr static void nhwc_row_##suffix(const struct dw_geometry *g, const float *x,                \
                                       const float *taps, int64_t oy, float *y) {                  \
        nhwc_row_body(g, x, taps, oy, y);                                                          \
    }

DEFINE_VARIANT(generic, , false, false)
static const struct dw_kernels generic = {nchw_band_generic, nchw_row_generic, nhwc_row_generic,
                                          CPU_GENERIC};

#ifdef CPU_X86_VARIANTS
DEFINE_VARIANT(avx2, CPU_TARGET_AVX2, false, false)
DEFINE_VARIANT(avx512, CPU_TARGET_AVX512, true, true)
static const struct dw_kernels avx2 = {nchw_band_avx2, nchw_row_avx2, nhwc_row_avx2, CPU_AVX2};
static const struct dw_kernels avx512 = {nchw_band_avx512, nchw_row_avx512, nhwc_row_avx512,
                                         CPU_AVX512};
#endif

static const void *const table[3] = CPU_VARIANT_TABLE(generic, avx2, avx512);

const struct dw_kernels *dw_kernels_variant(enum cpu_isa isa) {
    return cpu_variant(table, isa);
}

const struct dw_kernels *dw_kernels(void) {
    return cpu_best_variant(table);
}
