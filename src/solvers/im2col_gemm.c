/* im2col_gemm.c -- im2col followed by one GEMM per image and group.
 *
 * Applies to every packed problem. For each image and group the receptive
 * fields are copied into a column matrix whose inner order matches the
 * filter layout, so the filter is used in place as the other GEMM operand:
 *   NCHW: y_g[kg][oh*ow] = W_g[kg][crs] * col[crs][oh*ow]
 *   NHWC: y_g[oh*ow][kg] = col[oh*ow][crs] * W_g[kg][crs]^T   (ldc = k)
 * The im2col is split over the handle's threads by input channel (by
 * output row for NHWC with KRSC weights, whose taps are runs of channels);
 * the GEMM step is shared with the 1x1 and grouped solvers (gemm_common.c).
 */
#include "solvers/gemm_common.h"

static bool is_applicable(const struct conv_problem *p, const char **reason) {
    return im2col_gemm_fits(p, reason);
}

static size_t workspace_size(const struct conv_problem *p) {
    return (size_t)(p->c / p->groups * p->r * p->s) * (size_t)(p->oh * p->ow) * sizeof(float);
}

struct im2col_job {
    const struct conv_problem *p;
    const float *x;
    int64_t n, g, t_stride, j_stride;
    float *col;
};

/* Task = one input channel of the group: its taps are disjoint rows (NCHW)
 * or columns (NHWC) of col. */
static void im2col_tasks(void *ctx, size_t begin, size_t end) {
    const struct im2col_job *j = ctx;
    im2col_channels(j->p, j->x, j->n, j->g, (int64_t)begin, (int64_t)end, j->col, j->t_stride,
                    j->j_stride);
}

/* NHWC with KRSC weights: task = one output row, its pixels' rows of col. */
static void im2col_row_tasks(void *ctx, size_t begin, size_t end) {
    const struct im2col_job *j = ctx;
    im2col_rows_nhwc(j->p, j->x, j->n, j->g, (int64_t)begin, (int64_t)end, j->col);
}

static convsel_status_t run(const struct conv_run_args *a) {
    const struct conv_problem *p = a->p;
    const int64_t taps = p->c / p->groups * p->r * p->s, pix = p->oh * p->ow;
    float *col = a->workspace;
    const bool nchw = p->layout == CONVSEL_LAYOUT_NCHW;
    for (int64_t n = 0; n < p->n; n++)
        for (int64_t g = 0; g < p->groups; g++) {
            /* NCHW: col is (taps x pix); NHWC: (pix x taps) */
            struct im2col_job j = {p, a->x, n, g, nchw ? pix : 1, nchw ? 1 : taps, col};
            if (im2col_by_rows(p))
                thread_pool_parallel_for(a->pool, (size_t)p->oh, im2col_row_tasks, &j);
            else
                thread_pool_parallel_for(a->pool, (size_t)(p->c / p->groups), im2col_tasks, &j);
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
