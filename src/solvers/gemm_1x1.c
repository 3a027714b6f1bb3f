/* gemm_1x1.c -- 1x1 convolutions as plain GEMMs, no im2col. With stride 1
 * and no padding the input itself is the columns matrix: (C x H*W) in NCHW,
 * (H*W x C) in NHWC, for each image and group. The strided variant first
 * gathers the sampled pixels into the workspace (C x OH*OW), which is
 * 1/stride^2 of the input, then runs the same GEMM. */
#include "solvers/gemm_common.h"

static bool is_1x1_unpadded(const struct conv_problem *p, const char **reason) {
    if (!p->packed) {
        if (reason)
            *reason = "needs packed x and y tensors";
        return false;
    }
    if (p->r != 1 || p->s != 1 || p->pad_h != 0 || p->pad_w != 0) {
        if (reason)
            *reason = "needs a 1x1 filter and no padding";
        return false;
    }
    const int64_t taps = p->c / p->groups;
    if (taps > INT32_MAX || p->oh * p->ow > INT32_MAX || p->k > INT32_MAX || p->c > INT32_MAX ||
        p->h * p->w > INT32_MAX) {
        if (reason)
            *reason = "GEMM dimensions exceed the BLAS int range";
        return false;
    }
    return true;
}

/* ---------------------------- stride 1 ---------------------------- */

static bool unit_applicable(const struct conv_problem *p, const char **reason) {
    if (!is_1x1_unpadded(p, reason))
        return false;
    if (p->stride_h != 1 || p->stride_w != 1) {
        if (reason)
            *reason = "gemm_1x1 needs stride 1 (gemm_1x1_strided handles larger strides)";
        return false;
    }
    return true;
}

static size_t no_workspace(const struct conv_problem *p) {
    (void)p;
    return 0;
}

static convsel_status_t unit_run(const struct conv_run_args *a) {
    const struct conv_problem *p = a->p;
    const int64_t cg = p->c / p->groups;
    for (int64_t n = 0; n < p->n; n++)
        for (int64_t g = 0; g < p->groups; g++) {
            const float *x = a->x + n * p->x_stride[DIM_N] + g * cg * p->x_stride[DIM_C];
            /* NCHW: rows are channels (stride H*W); NHWC: rows are pixels (stride C) */
            const int ld = (int)(p->layout == CONVSEL_LAYOUT_NCHW ? p->h * p->w : p->c);
            gemm_group(p, a->w, x, ld, n, g, a->y, a->pool);
        }
    return CONVSEL_STATUS_SUCCESS;
}

const struct solver solver_gemm_1x1 = {
    .name = "gemm_1x1",
    .description = "1x1, stride 1, no padding: one GEMM per image and group, no im2col",
    /* the same fp32 GEMM accumulation as im2col_gemm (see there) */
    .tolerance = 1e-4,
    .is_applicable = unit_applicable,
    .workspace_size = no_workspace,
    .run = unit_run,
};

/* ---------------------------- strided ---------------------------- */

static bool strided_applicable(const struct conv_problem *p, const char **reason) {
    if (!is_1x1_unpadded(p, reason))
        return false;
    if (p->stride_h == 1 && p->stride_w == 1) {
        if (reason)
            *reason = "gemm_1x1_strided is for strides > 1 (gemm_1x1 handles stride 1)";
        return false;
    }
    return true;
}

static size_t strided_workspace(const struct conv_problem *p) {
    return (size_t)(p->c / p->groups) * (size_t)(p->oh * p->ow) * sizeof(float);
}

static convsel_status_t strided_run(const struct conv_run_args *a) {
    const struct conv_problem *p = a->p;
    const int64_t cg = p->c / p->groups, pix = p->oh * p->ow;
    const int64_t *xs = p->x_stride;
    float *cols = a->workspace;
    const bool nchw = p->layout == CONVSEL_LAYOUT_NCHW;
    for (int64_t n = 0; n < p->n; n++)
        for (int64_t g = 0; g < p->groups; g++) {
            for (int64_t c = 0; c < cg; c++) {
                const float *src = a->x + n * xs[DIM_N] + (g * cg + c) * xs[DIM_C];
                for (int64_t oy = 0; oy < p->oh; oy++)
                    for (int64_t ox = 0; ox < p->ow; ox++) {
                        const float v =
                            src[oy * p->stride_h * xs[DIM_H] + ox * p->stride_w * xs[DIM_W]];
                        cols[nchw ? c * pix + oy * p->ow + ox : (oy * p->ow + ox) * cg + c] = v;
                    }
            }
            gemm_group(p, a->w, cols, (int)(nchw ? pix : cg), n, g, a->y, a->pool);
        }
    return CONVSEL_STATUS_SUCCESS;
}

const struct solver solver_gemm_1x1_strided = {
    .name = "gemm_1x1_strided",
    .description = "1x1, stride > 1, no padding: gather the sampled pixels, then one GEMM",
    .tolerance = 1e-4,
    .is_applicable = strided_applicable,
    .workspace_size = strided_workspace,
    .run = strided_run,
};
