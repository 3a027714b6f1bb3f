/* depthwise.c -- depthwise convolution (groups = input channels, any
 * channel multiplier), direct, for NCHW and NHWC. Depthwise layers are
 * memory-bound and tiny in FLOPs; as a GEMM they fall to ~1% of peak. Here
 * each output row is one task on the handle's threads, computed by a
 * vectorized row kernel (kernels/depthwise_kernels.c). NHWC first turns the
 * weights into [r][s][k] in the workspace so the channel loop is
 * contiguous. */
#include "solvers/kernels/depthwise_kernels.h"
#include "solvers/solver.h"

static bool is_applicable(const struct conv_problem *p, const char **reason) {
    if (!p->packed) {
        if (reason)
            *reason = "depthwise needs packed x and y tensors";
        return false;
    }
    if (p->groups != p->c || p->k % p->c != 0) {
        if (reason)
            *reason = "depthwise needs groups = input channels (and a whole channel multiplier)";
        return false;
    }
    return true;
}

static size_t workspace_size(const struct conv_problem *p) {
    return p->layout == CONVSEL_LAYOUT_NHWC ? (size_t)(p->k * p->r * p->s) * sizeof(float) : 0;
}

struct dw_job {
    const struct conv_problem *p;
    const struct dw_kernels *kern;
    struct dw_geometry g;
    const float *x, *w;
    float *y;
};

/* NCHW: task = (image, output channel, output row). */
static void nchw_tasks(void *ctx, size_t begin, size_t end) {
    const struct dw_job *j = ctx;
    const struct conv_problem *p = j->p;
    const int64_t m = p->k / p->c;
    for (size_t t = begin; t < end; t++) {
        const int64_t oy = (int64_t)t % p->oh, nk = (int64_t)t / p->oh;
        const int64_t k = nk % p->k, n = nk / p->k;
        const float *x = j->x + n * p->x_stride[DIM_N] + (k / m) * p->x_stride[DIM_C];
        float *y = j->y + n * p->y_stride[DIM_N] + k * p->y_stride[DIM_C] + oy * p->ow;
        j->kern->nchw_row(&j->g, x, j->w + k * p->r * p->s, oy, y);
    }
}

/* NHWC: task = (image, output row). */
static void nhwc_tasks(void *ctx, size_t begin, size_t end) {
    const struct dw_job *j = ctx;
    const struct conv_problem *p = j->p;
    for (size_t t = begin; t < end; t++) {
        const int64_t oy = (int64_t)t % p->oh, n = (int64_t)t / p->oh;
        j->kern->nhwc_row(&j->g, j->x + n * p->x_stride[DIM_N], j->w, oy,
                          j->y + n * p->y_stride[DIM_N] + oy * p->y_stride[DIM_H]);
    }
}

static convsel_status_t run(const struct conv_run_args *a) {
    const struct conv_problem *p = a->p;
    struct dw_job j = {
        .p = p,
        .kern = dw_kernels(),
        .g = {p->h, p->w, p->r, p->s, p->ow, p->stride_h, p->stride_w, p->dil_h, p->dil_w, p->pad_h,
              p->pad_w, p->c, p->k, p->k / p->c},
        .x = a->x,
        .w = a->w,
        .y = a->y,
    };
    /* With one input channel per group the KCRS and KRSC orders coincide:
     * weight (k, r, s) is at (k * r + r) * s + s in both. */
    if (p->layout == CONVSEL_LAYOUT_NCHW) {
        thread_pool_parallel_for(a->pool, (size_t)(p->n * p->k * p->oh), nchw_tasks, &j);
        return CONVSEL_STATUS_SUCCESS;
    }
    float *taps = a->workspace; /* [r][s][k] */
    for (int64_t k = 0; k < p->k; k++)
        for (int64_t rs = 0; rs < p->r * p->s; rs++)
            taps[rs * p->k + k] = a->w[k * p->r * p->s + rs];
    j.w = taps;
    thread_pool_parallel_for(a->pool, (size_t)(p->n * p->oh), nhwc_tasks, &j);
    return CONVSEL_STATUS_SUCCESS;
}

const struct solver solver_depthwise = {
    .name = "depthwise",
    .description = "depthwise (groups = channels), direct, vectorized rows, NCHW and NHWC",
    /* fp32 sums of r*s products: a few ulps for the filters used in practice */
    .tolerance = 1e-5,
    .is_applicable = is_applicable,
    .workspace_size = workspace_size,
    .run = run,
};
