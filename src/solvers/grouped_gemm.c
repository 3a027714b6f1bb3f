/* grouped_gemm.c -- grouped convolution (groups >= 2) as one small GEMM per
 * group, the groups spread over the handle's threads.
 *
 * im2col_gemm runs the groups one after another, each GEMM split over the
 * threads; with many groups each GEMM is tiny (ResNeXt's 32 groups of 8
 * channels: 8 x 72 x 784) and the split costs more than it gains: 7 GFLOP/s
 * measured. Here a task is a whole group of one image -- its GEMM on one
 * thread, its receptive fields packed from x (NCHW) or gathered into the
 * workspace (NHWC) -- so the threads never wait for each other within a
 * group. The weights are packed once per call (or per address, constant). */
#include "solvers/gemm_common.h"

static bool is_applicable(const struct conv_problem *p, const char **reason) {
    if (p->groups < 2) {
        if (reason)
            *reason = "grouped_gemm needs groups >= 2";
        return false;
    }
    return im2col_gemm_fits(p, reason);
}

static size_t group_floats(const struct conv_problem *p) {
    return (size_t)(p->c / p->groups * p->r * p->s) * (size_t)(p->oh * p->ow);
}

/* NHWC: every group's columns for one image (as much as im2col_gemm needs
 * for a dense layer of the same channels); then the packed weights. */
static size_t cols_bytes(const struct conv_problem *p) {
    return p->layout == CONVSEL_LAYOUT_NCHW ? 0
                                            : group_floats(p) * (size_t)p->groups * sizeof(float);
}

static size_t workspace_size(const struct conv_problem *p) {
    return cols_bytes(p) + gemm_weights_workspace_bytes(p);
}

struct group_job {
    const struct conv_problem *p;
    const float *x, *weights;
    float *y, *cols;
    int64_t n;
};

static void group_tasks(void *ctx, size_t begin, size_t end) {
    const struct group_job *j = ctx;
    const struct conv_problem *p = j->p;
    const int64_t taps = p->c / p->groups * p->r * p->s;
    for (size_t g = begin; g < end; g++) {
        if (p->layout == CONVSEL_LAYOUT_NCHW) {
            const struct gemm_im2col fields = {p, j->x, j->n, (int64_t)g, 0};
            const struct sgemm_operand x_g = {.pack = gemm_im2col_pack, .ctx = &fields};
            gemm_group(p, j->weights, &x_g, j->n, (int64_t)g, j->y, NULL);
            continue;
        }
        float *cols = j->cols + g * group_floats(p); /* (pix x taps) */
        if (im2col_by_rows(p))
            im2col_rows_nhwc(p, j->x, j->n, (int64_t)g, 0, p->oh, cols);
        else
            im2col_channels(p, j->x, j->n, (int64_t)g, 0, p->c / p->groups, cols, 1, taps);
        const struct sgemm_operand x_g = {.matrix = cols, .ld = (size_t)taps};
        gemm_group(p, j->weights, &x_g, j->n, (int64_t)g, j->y, NULL);
    }
}

extern const struct solver solver_grouped_gemm; /* its plans' owner */

static convsel_status_t run(const struct conv_run_args *a) {
    const struct conv_problem *p = a->p;
    const float *weights = gemm_packed_weights(a, &solver_grouped_gemm,
                                               (float *)((char *)a->workspace + cols_bytes(p)));
    struct group_job j = {p, a->x, weights, a->y, a->workspace, 0};
    for (j.n = 0; j.n < p->n; j.n++)
        thread_pool_parallel_for(a->pool, (size_t)p->groups, group_tasks, &j);
    return CONVSEL_STATUS_SUCCESS;
}

const struct solver solver_grouped_gemm = {
    .name = "grouped_gemm",
    .description = "grouped convolution: im2col + GEMM per group, groups over the threads",
    /* the same arithmetic as im2col_gemm (see its tolerance) */
    .tolerance = 1e-4,
    .is_applicable = is_applicable,
    .workspace_size = workspace_size,
    .run = run,
};
