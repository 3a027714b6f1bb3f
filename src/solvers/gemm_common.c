/* gemm_common.c -- see gemm_common.h. The filter is used in place as the
 * other operand: its (k, c, r, s) or (k, r, s, c) order is the order of the
 * columns matrix's taps. The GEMM is convsel's own (kernels/sgemm.c): on
 * this machine class OpenBLAS 0.3.21 does not recognize the CPU and runs
 * SSE3 kernels, 3-6x slower (build/bench_sgemm). */
#include "solvers/gemm_common.h"

#include <stdint.h>
#include <string.h>

#include "solvers/kernels/sgemm.h"

void gemm_group(const struct conv_problem *p, const float *w, const float *cols, int ld, int64_t n,
                int64_t g, float *y, struct thread_pool *pool) {
    const int64_t kg = p->k / p->groups;
    const int taps = (int)(p->c / p->groups * p->r * p->s), pix = (int)(p->oh * p->ow);
    const float *wg = w + g * kg * taps;
    if (p->layout == CONVSEL_LAYOUT_NCHW) {
        /* y_g (kg x pix) = W_g (kg x taps) * cols (taps x pix) */
        const struct sgemm_args a = {
            (size_t)kg,   (size_t)pix,
            (size_t)taps, wg,
            (size_t)taps, false,
            cols,         (size_t)ld,
            false,        y + n * p->y_stride[DIM_N] + g * kg * p->y_stride[DIM_C],
            (size_t)pix};
        sgemm(&a, pool);
    } else {
        /* y_g (pix x kg, row stride k) = cols (pix x taps) * W_g^T (taps x kg) */
        const struct sgemm_args a = {
            (size_t)pix, (size_t)kg, (size_t)taps, cols, (size_t)ld,
            false,       wg,         (size_t)taps, true, y + n * p->y_stride[DIM_N] + g * kg,
            (size_t)p->k};
        sgemm(&a, pool);
    }
}

bool im2col_gemm_fits(const struct conv_problem *p, const char **reason) {
    if (!p->packed) {
        if (reason)
            *reason = "the GEMM solvers need packed x and y tensors";
        return false;
    }
    const int64_t crs = p->c / p->groups * p->r * p->s;
    if (crs > INT32_MAX || p->oh * p->ow > INT32_MAX || p->k > INT32_MAX) {
        if (reason)
            *reason = "the GEMM solvers need GEMM dimensions in int range";
        return false;
    }
    return true;
}

/* Position of filter tap (c, r, s) within one row of W_g. */
static inline int64_t tap_index(const struct conv_problem *p, int64_t c, int64_t r, int64_t s) {
    const int64_t cg = p->c / p->groups;
    if (p->filter_layout == CONVSEL_FILTER_KCRS)
        return (c * p->r + r) * p->s + s;
    return (r * p->s + s) * cg + c;
}

/* Output columns [*lo, *hi) whose tap s reads inside the input row. */
static void inside_columns(const struct conv_problem *p, int64_t s, int64_t *lo, int64_t *hi) {
    const int64_t off = s * p->dil_w - p->pad_w; /* ix = ox * stride + off */
    const int64_t a = off >= 0 ? 0 : (-off + p->stride_w - 1) / p->stride_w;
    const int64_t b = p->w - 1 - off < 0 ? 0 : (p->w - 1 - off) / p->stride_w + 1;
    *lo = a < p->ow ? a : p->ow;
    *hi = b < p->ow ? b : p->ow;
    if (*hi < *lo)
        *hi = *lo;
}

void im2col_channels(const struct conv_problem *p, const float *x, int64_t n, int64_t g, int64_t c0,
                     int64_t c1, float *cols, int64_t t_stride, int64_t j_stride) {
    const int64_t cg = p->c / p->groups;
    const int64_t *xs = p->x_stride;
    for (int64_t c = c0; c < c1; c++)
        for (int64_t r = 0; r < p->r; r++)
            for (int64_t s = 0; s < p->s; s++) {
                float *dst = cols + tap_index(p, c, r, s) * t_stride;
                const float *src = x + n * xs[DIM_N] + (g * cg + c) * xs[DIM_C];
                int64_t lo, hi;
                inside_columns(p, s, &lo, &hi);
                const int64_t off = s * p->dil_w - p->pad_w;
                for (int64_t oy = 0; oy < p->oh; oy++) {
                    const int64_t iy = oy * p->stride_h - p->pad_h + r * p->dil_h;
                    float *out = dst + oy * p->ow * j_stride;
                    if (iy < 0 || iy >= p->h) {
                        for (int64_t ox = 0; ox < p->ow; ox++)
                            out[ox * j_stride] = 0.0f;
                        continue;
                    }
                    const float *row = src + iy * xs[DIM_H];
                    for (int64_t ox = 0; ox < lo; ox++)
                        out[ox * j_stride] = 0.0f;
                    if (j_stride == 1 && p->stride_w == 1 && xs[DIM_W] == 1)
                        memcpy(out + lo, row + lo + off, (size_t)(hi - lo) * sizeof *out);
                    else
                        for (int64_t ox = lo; ox < hi; ox++)
                            out[ox * j_stride] = row[(ox * p->stride_w + off) * xs[DIM_W]];
                    for (int64_t ox = hi; ox < p->ow; ox++)
                        out[ox * j_stride] = 0.0f;
                }
            }
}

/* Channel-major im2col (above) writes NHWC columns with a stride of
 * c/g*r*s floats and reads x with a stride of c: a cache miss per element,
 * 12x slower than NCHW on a 64-channel 3x3 layer. Pixel-major copies runs
 * of c/g contiguous floats instead. */
bool im2col_by_rows(const struct conv_problem *p) {
    return p->layout == CONVSEL_LAYOUT_NHWC && p->filter_layout == CONVSEL_FILTER_KRSC &&
           p->x_stride[DIM_C] == 1;
}

void im2col_rows_nhwc(const struct conv_problem *p, const float *x, int64_t n, int64_t g,
                      int64_t oy0, int64_t oy1, float *cols) {
    const int64_t cg = p->c / p->groups, taps = cg * p->r * p->s;
    const int64_t *xs = p->x_stride;
    const float *image = x + n * xs[DIM_N] + g * cg;
    for (int64_t oy = oy0; oy < oy1; oy++)
        for (int64_t ox = 0; ox < p->ow; ox++) {
            float *dst = cols + (oy * p->ow + ox) * taps;
            for (int64_t r = 0; r < p->r; r++) {
                const int64_t iy = oy * p->stride_h - p->pad_h + r * p->dil_h;
                for (int64_t s = 0; s < p->s; s++, dst += cg) {
                    const int64_t ix = ox * p->stride_w - p->pad_w + s * p->dil_w;
                    if (iy < 0 || iy >= p->h || ix < 0 || ix >= p->w)
                        memset(dst, 0, (size_t)cg * sizeof *dst);
                    else
                        memcpy(dst, image + iy * xs[DIM_H] + ix * xs[DIM_W],
                               (size_t)cg * sizeof *dst);
                }
            }
        }
}
