/* gemm_common.c -- see gemm_common.h. The filter is used as the other
 * operand in its own order: its (k, c, r, s) or (k, r, s, c) order is the
 * order of the taps. The GEMM is convsel's own (kernels/sgemm.h says
 * why). */
#include "solvers/gemm_common.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "solvers/plan_cache.h"

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

static int64_t taps_of(const struct conv_problem *p) {
    return p->c / p->groups * p->r * p->s;
}

static bool weights_are_a(const struct conv_problem *p) {
    return p->layout == CONVSEL_LAYOUT_NCHW;
}

static size_t group_floats(const struct conv_problem *p) {
    return sgemm_packed_floats(NULL, weights_are_a(p), (size_t)(p->k / p->groups),
                               (size_t)taps_of(p));
}

size_t gemm_packed_weights_floats(const struct conv_problem *p) {
    return group_floats(p) * (size_t)p->groups;
}

size_t gemm_weights_workspace_bytes(const struct conv_problem *p) {
    return gemm_packed_weights_floats(p) * sizeof(float) + 64;
}

const float *gemm_group_weights(const struct conv_problem *p, const float *packed, int64_t g) {
    return packed + (size_t)g * group_floats(p);
}

struct weights_job {
    const struct conv_problem *p;
    const float *w;
    float *out;
};

/* W_g as the kernel's operand: A (kg x taps) for NCHW, B = W_g^T for NHWC. */
static struct sgemm_operand group_matrix(const struct conv_problem *p, const float *w, int64_t g) {
    const int64_t kg = p->k / p->groups, taps = taps_of(p);
    return (struct sgemm_operand){
        .matrix = w + g * kg * taps, .ld = (size_t)taps, .trans = !weights_are_a(p)};
}

/* Task = one group, packed on this thread (grouped layers: many small ones). */
static void pack_groups(void *ctx, size_t begin, size_t end) {
    const struct weights_job *j = ctx;
    const struct conv_problem *p = j->p;
    for (size_t g = begin; g < end; g++) {
        const struct sgemm_operand m = group_matrix(p, j->w, (int64_t)g);
        sgemm_pack(NULL, weights_are_a(p), &m, (size_t)(p->k / p->groups), (size_t)taps_of(p),
                   j->out + g * group_floats(p), NULL);
    }
}

static void pack_weights(const struct conv_run_args *a, float *out) {
    const struct conv_problem *p = a->p;
    if (p->groups == 1) {
        const struct sgemm_operand m = group_matrix(p, a->w, 0);
        sgemm_pack(NULL, weights_are_a(p), &m, (size_t)p->k, (size_t)taps_of(p), out, a->pool);
        return;
    }
    struct weights_job j = {p, a->w, out};
    thread_pool_parallel_for(a->pool, (size_t)p->groups, pack_groups, &j);
}

const float *gemm_packed_weights(const struct conv_run_args *a, const struct solver *owner,
                                 float *scratch) {
    return plan_constant_weights(a, owner, gemm_packed_weights_floats(a->p), pack_weights, scratch);
}

void gemm_group(const struct conv_problem *p, const float *packed_weights,
                const struct sgemm_operand *x_g, int64_t n, int64_t g, float *y,
                struct thread_pool *pool) {
    const int64_t kg = p->k / p->groups, pix = p->oh * p->ow;
    const struct sgemm_operand w = {.packed = gemm_group_weights(p, packed_weights, g)};
    struct sgemm_op op = {.k = (size_t)taps_of(p)};
    if (weights_are_a(p)) {
        /* y_g (kg x pix) = W_g (kg x taps) * X_g (taps x pix) */
        op.m = (size_t)kg, op.n = (size_t)pix, op.a = w, op.b = *x_g;
        op.c = y + n * p->y_stride[DIM_N] + g * kg * p->y_stride[DIM_C], op.ldc = (size_t)pix;
    } else {
        /* y_g (pix x kg, row stride k) = X_g (pix x taps) * W_g^T (taps x kg) */
        op.m = (size_t)pix, op.n = (size_t)kg, op.a = *x_g, op.b = w;
        op.c = y + n * p->y_stride[DIM_N] + g * kg, op.ldc = (size_t)p->k;
    }
    sgemm_run(&op, pool);
}

/* One run of pixels of a panel block that share an output row. */
struct segment {
    const float *image; /* the group's first channel in its image */
    int64_t oy, ox, len;
    size_t dst; /* offset of its first value within the block's tap row */
};

/* The taps (c, r, s) of depth p in the filter layout's order. */
static void tap_of(const struct conv_problem *p, int64_t t, int64_t *c, int64_t *r, int64_t *s) {
    const int64_t cg = p->c / p->groups;
    if (p->filter_layout == CONVSEL_FILTER_KCRS) {
        *c = t / (p->r * p->s), *r = t / p->s % p->r, *s = t % p->s;
    } else {
        *r = t / (p->s * cg), *s = t / cg % p->s, *c = t % cg;
    }
}

/* Panels are filled PANELS_AT_ONCE at a time, tap by tap: each tap reads
 * one input row per output row the block covers (a few hundred bytes in a
 * row) instead of 32 floats from each of thousands of taps. */
#define PANELS_AT_ONCE 8

void gemm_im2col_pack(const void *ctx, size_t j0, size_t j1, size_t p0, size_t kc, size_t width,
                      float *out) {
    const struct gemm_im2col *m = ctx;
    const struct conv_problem *p = m->p;
    const int64_t *xs = p->x_stride, cg = p->c / p->groups;
    const float *image = m->x + m->n * xs[DIM_N] + m->g * cg * xs[DIM_C];
    const size_t pixels = (size_t)(p->oh * p->ow);
    struct segment seg[PANELS_AT_ONCE * 32 + PANELS_AT_ONCE];
    for (size_t q0 = j0; q0 < j1; q0 += PANELS_AT_ONCE * width) {
        const size_t q1 = q0 + PANELS_AT_ONCE * width < j1 ? q0 + PANELS_AT_ONCE * width : j1;
        const size_t panels = (q1 - q0 + width - 1) / width;
        float *block = out + (q0 - j0) * kc;
        int n_seg = 0;
        for (size_t j = q0; j < q1;) {
            /* folded: image j / pixels; a row's segment never crosses images */
            const size_t pix = m->fold_images ? j % pixels : j;
            const float *img = m->fold_images ? image + (int64_t)(j / pixels) * xs[DIM_N] : image;
            const int64_t oy = (int64_t)pix / p->ow, ox = (int64_t)pix % p->ow;
            const size_t panel = (j - q0) / width, lane = (j - q0) % width;
            size_t len = (size_t)(p->ow - ox);
            if (len > width - lane)
                len = width - lane;
            if (len > q1 - j)
                len = q1 - j;
            seg[n_seg++] = (struct segment){img, oy, ox, (int64_t)len, panel * kc * width + lane};
            j += len;
        }
        const size_t tail = panels * width - (q1 - q0); /* lanes past j1 in the last panel */
        for (size_t t = 0; t < kc; t++) {
            int64_t c, r, s;
            tap_of(p, (int64_t)(p0 + t), &c, &r, &s);
            for (int i = 0; i < n_seg; i++) {
                const float *chan = seg[i].image + c * xs[DIM_C];
                float *dst = block + seg[i].dst + t * width;
                const int64_t iy = seg[i].oy * p->stride_h - p->pad_h + r * p->dil_h;
                const int64_t len = seg[i].len;
                if (iy < 0 || iy >= p->h) {
                    memset(dst, 0, (size_t)len * sizeof *dst);
                    continue;
                }
                const float *row = chan + iy * xs[DIM_H];
                const int64_t ix0 = seg[i].ox * p->stride_w - p->pad_w + s * p->dil_w;
                if (xs[DIM_W] == 1 && ix0 >= 0 && ix0 + (len - 1) * p->stride_w < p->w) {
                    /* The common case, a run inside the row: copied here, not by
                     * memcpy. A run is at most one panel wide (16 floats on AVX2),
                     * and the library calls (a memset, a memcpy and a memset per
                     * run and tap) cost as much as the copy: without them
                     * im2col_gemm on ResNet-50's 3x3 64 -> 64 at 56x56 ran 1.12x
                     * (one thread) and 1.22x (two) as fast on AVX2. Strided runs
                     * skip the bounds test of each element below. */
                    const float *src = row + ix0;
                    if (p->stride_w == 1)
                        for (int64_t k = 0; k < len; k++)
                            dst[k] = src[k];
                    else
                        for (int64_t k = 0; k < len; k++)
                            dst[k] = src[k * p->stride_w];
                } else if (p->stride_w == 1 && xs[DIM_W] == 1) {
                    int64_t lo = -ix0 > 0 ? -ix0 : 0, hi = p->w - ix0 < len ? p->w - ix0 : len;
                    if (lo > len)
                        lo = len;
                    if (hi < lo)
                        hi = lo;
                    memset(dst, 0, (size_t)lo * sizeof *dst);
                    memcpy(dst + lo, row + ix0 + lo, (size_t)(hi - lo) * sizeof *dst);
                    memset(dst + hi, 0, (size_t)(len - hi) * sizeof *dst);
                } else {
                    for (int64_t k = 0; k < len; k++) {
                        const int64_t ix = ix0 + k * p->stride_w;
                        dst[k] = ix >= 0 && ix < p->w ? row[ix * xs[DIM_W]] : 0.0f;
                    }
                }
            }
            if (tail)
                memset(block + (panels - 1) * kc * width + t * width + (width - tail), 0,
                       tail * sizeof *block);
        }
    }
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

bool gemm_folds(const struct conv_problem *p) {
    return p->layout == CONVSEL_LAYOUT_NCHW && p->groups == 1 && p->n > 1 &&
           p->oh * p->ow <= GEMM_FOLD_MAX_PIXELS && p->n * p->oh * p->ow <= INT32_MAX;
}

struct fold_out {
    const struct conv_problem *p;
    const float *c;
    float *y;
};

/* C to y, output channels [k0, k1) (thread_pool_fn; ctx: struct fold_out). */
static void fold_scatter(void *ctx, size_t k0, size_t k1) {
    const struct fold_out *f = ctx;
    const size_t pixels = (size_t)(f->p->oh * f->p->ow), n = (size_t)f->p->n;
    for (size_t k = k0; k < k1; k++)
        for (size_t i = 0; i < n; i++) {
            float *to = f->y + i * (size_t)f->p->y_stride[DIM_N] + k * pixels;
            const float *from = f->c + (k * n + i) * pixels;
            if (pixels < 16) /* a 1x1-3x3 map: a call per image and channel cost more than this */
                for (size_t q = 0; q < pixels; q++)
                    to[q] = from[q];
            else
                memcpy(to, from, pixels * sizeof(float));
        }
}

void gemm_fold_run(const struct conv_problem *p, const struct sgemm_op *op, float *y,
                   struct thread_pool *pool) {
    sgemm_run(op, pool);
    struct fold_out out = {p, op->c, y};
    thread_pool_parallel_for(sgemm_is_serial(op) ? NULL : pool, (size_t)p->k, fold_scatter, &out);
}
