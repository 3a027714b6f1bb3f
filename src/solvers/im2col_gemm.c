/* im2col_gemm.c -- im2col and one GEMM per image and group (or, NCHW
 * with one group on small maps, one GEMM over the batch).
 *
 * Applies to every packed problem. The weights are the GEMM's other
 * operand in their own order (gemm_common.h), packed for the kernel once
 * per call -- for every image of the batch -- or once per weights address
 * when they are constant:
 *   NCHW: y_g[kg][oh*ow] = W_g[kg][crs] * X_g[crs][oh*ow]
 *   NHWC: y_g[oh*ow][kg] = X_g[oh*ow][crs] * W_g[kg][crs]^T   (ldc = k)
 * In NCHW the receptive fields X_g are packed by the GEMM straight from x
 * (no columns matrix is written: for a 64-channel 3x3 layer at 56x56 that
 * matrix is 7 MB, as much memory traffic as the arithmetic takes time). In
 * NHWC they are gathered into the workspace first, split over the handle's
 * threads by output row (pixel by pixel, runs of c/g floats) or, with KCRS
 * weights, by input channel. */
#include "solvers/gemm_common.h"

static bool is_applicable(const struct conv_problem *p, const char **reason) {
    return im2col_gemm_fits(p, reason);
}

/* NHWC: the columns matrix. NCHW folded (gemm_folds): C, K x n*oh*ow,
 * before it goes to y (rounded up to keep the weights aligned). */
static size_t cols_bytes(const struct conv_problem *p) {
    if (p->layout == CONVSEL_LAYOUT_NCHW)
        return gemm_folds(p)
                   ? gemm_round_up_64((size_t)(p->k * p->n * p->oh * p->ow) * sizeof(float))
                   : 0;
    return (size_t)(p->c / p->groups * p->r * p->s) * (size_t)(p->oh * p->ow) * sizeof(float);
}

/* The NHWC columns (or the folded C), then the packed weights. */
static size_t workspace_size(const struct conv_problem *p) {
    return cols_bytes(p) + gemm_weights_workspace_bytes(p);
}

struct im2col_job {
    const struct conv_problem *p;
    const float *x;
    int64_t n, g, t_stride, j_stride;
    float *col;
};

/* Task = one input channel of the group: its taps are disjoint columns of col. */
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

extern const struct solver solver_im2col_gemm; /* its plans' owner */

static convsel_status_t run(const struct conv_run_args *a) {
    const struct conv_problem *p = a->p;
    const int64_t taps = p->c / p->groups * p->r * p->s;
    float *col = a->workspace;
    const float *weights = gemm_packed_weights(a, &solver_im2col_gemm,
                                               (float *)((char *)a->workspace + cols_bytes(p)));
    if (gemm_folds(p)) {
        /* one GEMM over the batch: the packed weights are streamed once,
         * not once per image (GoogLeNet's 5x5 on 832 channels at batch 8,
         * a 7x7 map: 49 columns an image) */
        const size_t cols = (size_t)(p->n * p->oh * p->ow);
        const struct gemm_im2col fields = {p, a->x, 0, 0, p->n};
        const struct sgemm_op op = {.m = (size_t)p->k,
                                    .n = cols,
                                    .k = (size_t)taps,
                                    .a = {.packed = gemm_group_weights(p, weights, 0)},
                                    .b = {.pack = gemm_im2col_pack, .ctx = &fields},
                                    .c = col,
                                    .ldc = cols};
        gemm_fold_run(p, &op, a->y, a->pool);
        return CONVSEL_STATUS_SUCCESS;
    }
    for (int64_t n = 0; n < p->n; n++)
        for (int64_t g = 0; g < p->groups; g++) {
            if (p->layout == CONVSEL_LAYOUT_NCHW) {
                const struct gemm_im2col fields = {p, a->x, n, g, 0};
                const struct sgemm_operand x_g = {.pack = gemm_im2col_pack, .ctx = &fields};
                gemm_group(p, weights, &x_g, n, g, a->y, a->pool);
                continue;
            }
            /* NHWC: col is (pix x taps) */
            struct im2col_job j = {p, a->x, n, g, 1, taps, col};
            if (im2col_by_rows(p))
                thread_pool_parallel_for(a->pool, (size_t)p->oh, im2col_row_tasks, &j);
            else
                thread_pool_parallel_for(a->pool, (size_t)(p->c / p->groups), im2col_tasks, &j);
            const struct sgemm_operand x_g = {.matrix = col, .ld = (size_t)taps};
            gemm_group(p, weights, &x_g, n, g, a->y, a->pool);
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
