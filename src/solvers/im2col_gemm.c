/* im2col_gemm.c -- im2col followed by one GEMM per image and group.
 *
 * Applies to every packed problem. For each image and group the receptive
 * fields are copied into a column matrix whose inner order matches the
 * filter layout, so the filter is used in place as the other GEMM operand:
 *   NCHW: y_g[kg][oh*ow] = W_g[kg][crs] * col[crs][oh*ow]
 *   NHWC: y_g[oh*ow][kg] = col[oh*ow][crs] * W_g[kg][crs]^T   (ldc = k)
 * The GEMM step is shared with the 1x1 solvers (gemm_common.c).
 */
#include "solvers/gemm_common.h"

/* Position of filter tap (c, r, s) within one row of W_g. */
static inline int64_t tap_index(const struct conv_problem *p, int64_t c, int64_t r, int64_t s) {
    const int64_t cg = p->c / p->groups;
    if (p->filter_layout == CONVSEL_FILTER_KCRS)
        return (c * p->r + r) * p->s + s;
    return (r * p->s + s) * cg + c;
}

static bool is_applicable(const struct conv_problem *p, const char **reason) {
    if (!p->packed) {
        if (reason)
            *reason = "im2col_gemm needs packed x and y tensors";
        return false;
    }
    const int64_t crs = p->c / p->groups * p->r * p->s;
    if (crs > INT32_MAX || p->oh * p->ow > INT32_MAX || p->k > INT32_MAX) {
        if (reason)
            *reason = "im2col_gemm: GEMM dimensions exceed the BLAS int range";
        return false;
    }
    return true;
}

static size_t workspace_size(const struct conv_problem *p) {
    return (size_t)(p->c / p->groups * p->r * p->s) * (size_t)(p->oh * p->ow) * sizeof(float);
}

/* Fills col for image n, group g. Element (tap t, pixel j) lives at
 * col[t * t_stride + j * j_stride]. */
static void im2col(const struct conv_problem *p, const float *x, int64_t n, int64_t g, float *col,
                   int64_t t_stride, int64_t j_stride) {
    const int64_t cg = p->c / p->groups;
    const int64_t *xs = p->x_stride;
    for (int64_t c = 0; c < cg; c++)
        for (int64_t r = 0; r < p->r; r++)
            for (int64_t s = 0; s < p->s; s++) {
                float *dst = col + tap_index(p, c, r, s) * t_stride;
                const float *src = x + n * xs[DIM_N] + (g * cg + c) * xs[DIM_C];
                for (int64_t oy = 0; oy < p->oh; oy++) {
                    const int64_t iy = oy * p->stride_h - p->pad_h + r * p->dil_h;
                    for (int64_t ox = 0; ox < p->ow; ox++) {
                        const int64_t ix = ox * p->stride_w - p->pad_w + s * p->dil_w;
                        const bool inside = iy >= 0 && iy < p->h && ix >= 0 && ix < p->w;
                        dst[(oy * p->ow + ox) * j_stride] =
                            inside ? src[iy * xs[DIM_H] + ix * xs[DIM_W]] : 0.0f;
                    }
                }
            }
}

static convsel_status_t run(const struct conv_run_args *a) {
    const struct conv_problem *p = a->p;
    const int64_t taps = p->c / p->groups * p->r * p->s, pix = p->oh * p->ow;
    float *col = a->workspace;
    const bool nchw = p->layout == CONVSEL_LAYOUT_NCHW;
    for (int64_t n = 0; n < p->n; n++)
        for (int64_t g = 0; g < p->groups; g++) {
            /* NCHW: col is (taps x pix); NHWC: (pix x taps) */
            im2col(p, a->x, n, g, col, nchw ? pix : 1, nchw ? 1 : taps);
            gemm_group(p, a->w, col, (int)(nchw ? pix : taps), n, g, a->y, a->pool);
        }
    return CONVSEL_STATUS_SUCCESS;
}

const struct solver solver_im2col_gemm = {
    .name = "im2col_gemm",
    .description = "im2col + GEMM (convsel's), any packed problem",
    /* fp32 accumulation over K = c/g*r*s terms: the rounding error relative
     * to max|y| grows like sqrt(K) * 2^-24 for random data (about 5e-6 at
     * K = 1e5); 1e-4 leaves a 20x margin and still catches any wrong tap. */
    .tolerance = 1e-4,
    .is_applicable = is_applicable,
    .workspace_size = workspace_size,
    .run = run,
};
