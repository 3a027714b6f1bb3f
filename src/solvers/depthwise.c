/* depthwise.c -- depthwise convolution (groups = input channels, any
 * channel multiplier), direct, for NCHW and NHWC. Depthwise layers are
 * memory-bound and tiny in FLOPs; as a GEMM they fall to ~1% of peak.
 * NCHW: a task is a band of output rows of one channel; its input rows are
 * packed into a slab on the task's stack (padding as zeros, columns split by
 * stride phase: kernels/depthwise_kernels.h) that stays in L1 while the
 * band kernel reads it once per tap. Rows too wide for a slab fall back to
 * a row kernel. Small maps (a few columns) are vectorized over channels
 * instead: a task is a block of channels over a chunk of images. NHWC: a task is an output row of
 * one image, vectorized over channels; the weights are first turned into [r][s][k] in the workspace
 * so the channel loop is contiguous. */
#include "solvers/kernels/depthwise_kernels.h"
#include "solvers/slab_geometry.h"
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

/* The small-map kernel's stack buffer (weights, tile and sums, with slack). */
#define DW_SMALL_WORK_FLOATS 8192

/* NCHW maps narrow enough go to the small-map kernel, vectorized over
 * channels (kernels/depthwise_small.inc), where its tile fits. The widths
 * are measured (AVX2, 2 threads, bench/ab_conv.sh against the band
 * kernel, 5 interleaved rounds, corpus layers): 1.13-3.3x on maps up to 8
 * wide, and 1.39-1.56x on strided ones 9-12 wide (the band kernel splits
 * their columns by phase); 0.87-0.91x on unstrided ones 12-15 wide, 0.92x
 * on a strided one 14 wide. */
#define DW_SMALL_MAX_OW 8
#define DW_SMALL_MAX_OW_STRIDED 12

static bool use_small(const struct conv_problem *p, const struct dw_geometry *g,
                      const struct dw_kernels *kern) {
    const int64_t max_ow = p->stride_w > 1 ? DW_SMALL_MAX_OW_STRIDED : DW_SMALL_MAX_OW;
    return p->ow <= max_ow && dw_small_floats(g, p->oh, kern->small_lanes) <= DW_SMALL_WORK_FLOATS;
}

struct dw_job {
    const struct conv_problem *p;
    const struct dw_kernels *kern;
    struct dw_geometry g;
    struct dw_slab slab;
    int64_t bands;  /* per output plane */
    int64_t blocks; /* small maps: blocks of small_lanes output channels */
    int64_t images; /* small maps: images per task */
    const float *x, *w;
    float *y;
};

/* NCHW: task = (band of output rows, image, output channel), band
 * slowest, so that a thread's consecutive tasks share the band and its
 * slab's padding: cleared once, then only the input is copied in. */
static void nchw_band_tasks(void *ctx, size_t begin, size_t end) {
    const struct dw_job *j = ctx;
    const struct conv_problem *p = j->p;
    const int64_t m = p->k / p->c, planes = p->n * p->k;
    float slab[DW_SLAB_FLOATS] __attribute__((aligned(64)));
    int64_t cleared = -1; /* the band the slab's padding is for */
    for (size_t t = begin; t < end; t++) {
        const int64_t band = (int64_t)t / planes, nk = (int64_t)t % planes;
        const int64_t k = nk % p->k, n = nk / p->k;
        const int64_t oy0 = band * j->slab.band;
        const int64_t rows = p->oh - oy0 < j->slab.band ? p->oh - oy0 : j->slab.band;
        const float *x = j->x + n * p->x_stride[DIM_N] + (k / m) * p->x_stride[DIM_C];
        float *y = j->y + n * p->y_stride[DIM_N] + k * p->y_stride[DIM_C] + oy0 * p->ow;
        if (band != cleared) {
            dw_slab_clear(&j->g, &j->slab, rows, slab);
            cleared = band;
        }
        dw_slab_pack(&j->g, &j->slab, x, p->w, 1, oy0, rows, slab);
        j->kern->nchw_band(&j->g, &j->slab, slab, j->w + k * p->r * p->s, rows, false, y);
    }
}

/* NCHW, rows too wide for a slab: task = (image, output channel, output row). */
static void nchw_row_tasks(void *ctx, size_t begin, size_t end) {
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

/* NCHW, small maps: task = (block of small_lanes output channels, chunk of
 * images), the weights transposed once per task. */
static void nchw_small_tasks(void *ctx, size_t begin, size_t end) {
    const struct dw_job *j = ctx;
    const struct conv_problem *p = j->p;
    const int64_t lanes = j->kern->small_lanes;
    float work[DW_SMALL_WORK_FLOATS] __attribute__((aligned(64)));
    for (size_t t = begin; t < end; t++) {
        const int64_t k0 = (int64_t)t % j->blocks * lanes, n0 = (int64_t)t / j->blocks * j->images;
        const int64_t count = p->k - k0 < lanes ? p->k - k0 : lanes;
        const int64_t images = p->n - n0 < j->images ? p->n - n0 : j->images;
        j->kern->nchw_small(&j->g, p->oh, j->x + n0 * p->x_stride[DIM_N], images, j->w, k0, count,
                            work, j->y + n0 * p->y_stride[DIM_N]);
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
        .g = slab_geometry(p),
        .x = a->x,
        .w = a->w,
        .y = a->y,
    };
    j.g.c = p->c, j.g.k = p->k, j.g.mult = p->k / p->c; /* NHWC rows: all channels */
    /* With one input channel per group the KCRS and KRSC orders coincide:
     * weight (k, r, s) is at (k * r + r) * s + s in both. */
    if (p->layout == CONVSEL_LAYOUT_NCHW && use_small(p, &j.g, j.kern)) {
        /* images per task: as many as leave 4 tasks per thread */
        j.blocks = (p->k + j.kern->small_lanes - 1) / j.kern->small_lanes;
        const int64_t want = 4 * (int64_t)a->num_threads,
                      chunks_wanted = (want + j.blocks - 1) / j.blocks;
        const int64_t chunks = chunks_wanted < p->n ? chunks_wanted : p->n;
        j.images = (p->n + chunks - 1) / chunks;
        const int64_t tasks = j.blocks * ((p->n + j.images - 1) / j.images);
        thread_pool_parallel_for(a->pool, (size_t)tasks, nchw_small_tasks, &j);
        return CONVSEL_STATUS_SUCCESS;
    }
    if (p->layout == CONVSEL_LAYOUT_NCHW) {
        /* 4 tasks per thread at least, for balance, where the planes allow */
        if (dw_slab_plan(&j.g, p->oh, p->n * p->k, 4 * (int64_t)a->num_threads, DW_SLAB_FLOATS,
                         &j.slab)) {
            j.bands = (p->oh + j.slab.band - 1) / j.slab.band;
            thread_pool_parallel_for(a->pool, (size_t)(p->n * p->k * j.bands), nchw_band_tasks, &j);
        } else {
            thread_pool_parallel_for(a->pool, (size_t)(p->n * p->k * p->oh), nchw_row_tasks, &j);
        }
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
