/* direct.c -- direct convolution, any layout, groups, stride, padding and
 * dilation: y[k] = sum over the group's input channels c of the plane of
 * x[c] convolved with w[k][c]. It is the depthwise solver's machinery run
 * once per input channel (the band kernel of kernels/depthwise_kernels.h,
 * adding into its output after the first channel): no im2col copy r*s
 * times the input, no reorders, the filter taps read where they are. That
 * suits what GEMM and Winograd do badly -- few channels, large or strided
 * filters -- and loses to them (and to oneDNN) on wide layers, where the
 * ranking does not pick it.
 *
 * A task is a band of output rows of one output channel of one image. The
 * kernel works on planes: an input channel is gathered into the task's
 * slab whatever x's strides (NHWC too), the taps of KRSC weights into a
 * small array, and when y is not NCHW-packed the band is summed in a
 * buffer on the task's stack and then scattered to y. */
#include "solvers/kernels/depthwise_kernels.h"
#include "solvers/slab_geometry.h"
#include "solvers/solver.h"

extern const struct solver solver_depthwise;

/* Taps gathered per (k, c) from KRSC weights: 32x32 filters at most. */
#define MAX_TAPS 1024

static bool is_applicable(const struct conv_problem *p, const char **reason) {
    const char *why = NULL;
    struct dw_slab sl;
    const struct dw_geometry g = slab_geometry(p);
    /* The depthwise solver runs the same band kernel once per channel:
     * timing both would only measure noise (and teach it to the model). */
    if (solver_depthwise.is_applicable(p, NULL))
        why = "direct: depthwise problems (groups = input channels) go to the depthwise solver, "
              "which runs the same kernel";
    else if (p->r * p->s > MAX_TAPS)
        why = "direct: filters of more than 1024 taps (r*s) are not supported";
    else if (!dw_slab_plan(&g, p->oh, 1, 1, DW_SLAB_FLOATS, &sl))
        why = "direct: an input row band does not fit its 32 KiB slab (rows too wide)";
    if (why && reason)
        *reason = why;
    return why == NULL;
}

static size_t workspace_size(const struct conv_problem *p) {
    (void)p;
    return 0;
}

struct direct_job {
    const struct conv_problem *p;
    const struct dw_kernels *kern;
    struct dw_geometry g;
    struct dw_slab slab;
    bool y_rows_packed; /* y's rows are ow contiguous floats, one after another */
    const float *x, *w;
    float *y;
};

/* The r*s taps of (k, c): where they are for KCRS, gathered for KRSC. */
static const float *filter_taps(const struct conv_problem *p, const float *w, int64_t k, int64_t c,
                                float *gathered) {
    if (p->filter_layout == CONVSEL_FILTER_KCRS)
        return w + problem_filter_offset(p, k, c, 0, 0);
    for (int64_t r = 0; r < p->r; r++)
        for (int64_t s = 0; s < p->s; s++)
            gathered[r * p->s + s] = w[problem_filter_offset(p, k, c, r, s)];
    return gathered;
}

/* Task = (band, image, output channel), band slowest: the slab's padding
 * is the same for every plane of a band, so it is cleared once per band. */
static void band_tasks(void *ctx, size_t begin, size_t end) {
    const struct direct_job *j = ctx;
    const struct conv_problem *p = j->p;
    const int64_t planes = p->n * p->k, cg = p->c / p->groups, kg = p->k / p->groups;
    float slab[DW_SLAB_FLOATS] __attribute__((aligned(64)));
    /* as many floats as the slab: a band's rows*ow never exceed them, since
     * a slab holds at least as many rows as the band, each at least ow
     * wide (dw_slab_plan) */
    float band_out[DW_SLAB_FLOATS] __attribute__((aligned(64)));
    float taps[MAX_TAPS];
    int64_t cleared = -1;
    for (size_t t = begin; t < end; t++) {
        const int64_t band = (int64_t)t / planes, nk = (int64_t)t % planes;
        const int64_t k = nk % p->k, n = nk / p->k, c0 = k / kg * cg;
        const int64_t oy0 = band * j->slab.band;
        const int64_t rows = p->oh - oy0 < j->slab.band ? p->oh - oy0 : j->slab.band;
        float *y =
            j->y + n * p->y_stride[DIM_N] + k * p->y_stride[DIM_C] + oy0 * p->y_stride[DIM_H];
        float *out = j->y_rows_packed ? y : band_out;
        if (band != cleared) {
            dw_slab_clear(&j->g, &j->slab, rows, slab);
            cleared = band;
        }
        for (int64_t c = 0; c < cg; c++) {
            const float *x = j->x + n * p->x_stride[DIM_N] + (c0 + c) * p->x_stride[DIM_C];
            dw_slab_pack(&j->g, &j->slab, x, p->x_stride[DIM_H], p->x_stride[DIM_W], oy0, rows,
                         slab);
            j->kern->nchw_band(&j->g, &j->slab, slab, filter_taps(p, j->w, k, c, taps), rows, c > 0,
                               out);
        }
        if (!j->y_rows_packed)
            for (int64_t i = 0; i < rows; i++)
                for (int64_t ox = 0; ox < p->ow; ox++)
                    y[i * p->y_stride[DIM_H] + ox * p->y_stride[DIM_W]] = band_out[i * p->ow + ox];
    }
}

static convsel_status_t run(const struct conv_run_args *a) {
    const struct conv_problem *p = a->p;
    struct direct_job j = {.p = p,
                           .kern = dw_kernels(),
                           .g = slab_geometry(p),
                           .y_rows_packed = p->y_stride[DIM_W] == 1 && p->y_stride[DIM_H] == p->ow,
                           .x = a->x,
                           .w = a->w,
                           .y = a->y};
    /* 4 tasks per thread at least, for balance, where the planes allow;
     * is_applicable has checked that a slab fits. */
    if (!dw_slab_plan(&j.g, p->oh, p->n * p->k, 4 * (int64_t)a->num_threads, DW_SLAB_FLOATS,
                      &j.slab))
        return CONVSEL_STATUS_INTERNAL;
    const int64_t bands = (p->oh + j.slab.band - 1) / j.slab.band;
    thread_pool_parallel_for(a->pool, (size_t)(p->n * p->k * bands), band_tasks, &j);
    return CONVSEL_STATUS_SUCCESS;
}

const struct solver solver_direct = {
    .name = "direct",
    .description = "direct, any layout: one input channel at a time through the depthwise band "
                   "kernel; no im2col, no reorders",
    /* fp32 sums of c/groups * r * s products, in channel order: like
     * im2col_gemm's */
    .tolerance = 1e-4,
    .is_applicable = is_applicable,
    .workspace_size = workspace_size,
    .run = run,
};
