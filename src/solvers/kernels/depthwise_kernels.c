/* depthwise_kernels.c -- see depthwise_kernels.h. Each loop body is
 * written once (always_inline) and compiled for x86-64-v4, x86-64-v3 and
 * the baseline. Bounds are resolved per filter tap as a range of output
 * columns, so the inner loops have no branches and vectorize: over output
 * columns in NCHW (contiguous when the stride is 1), over channels in NHWC. */
#include "solvers/kernels/depthwise_kernels.h"

#include <string.h>

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

#define DEFINE_VARIANT(suffix, attr)                                                               \
    attr static void nchw_row_##suffix(const struct dw_geometry *g, const float *x,                \
                                       const float *taps, int64_t oy, float *y) {                  \
        nchw_row_body(g, x, taps, oy, y);                                                          \
    }                                                                                              \
    attr static void nhwc_row_##suffix(const struct dw_geometry *g, const float *x,                \
                                       const float *taps, int64_t oy, float *y) {                  \
        nhwc_row_body(g, x, taps, oy, y);                                                          \
    }

DEFINE_VARIANT(generic, )
static const struct dw_kernels generic = {nchw_row_generic, nhwc_row_generic, CPU_GENERIC};

#ifdef CPU_X86_VARIANTS
DEFINE_VARIANT(avx2, CPU_TARGET_AVX2)
DEFINE_VARIANT(avx512, CPU_TARGET_AVX512)
static const struct dw_kernels avx2 = {nchw_row_avx2, nhwc_row_avx2, CPU_AVX2};
static const struct dw_kernels avx512 = {nchw_row_avx512, nhwc_row_avx512, CPU_AVX512};
#endif

static const void *const table[3] = CPU_VARIANT_TABLE(generic, avx2, avx512);

const struct dw_kernels *dw_kernels_variant(enum cpu_isa isa) {
    return cpu_variant(table, isa);
}

const struct dw_kernels *dw_kernels(void) {
    return cpu_best_variant(table);
}
