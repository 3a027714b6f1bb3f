/* direct_blocked.c -- direct convolution in register blocks of output
 * channels, for the layers convsel's GEMM solvers run badly: grouped
 * layers (ResNeXt, RegNet: groups of 4-64 channels, whose per-group GEMMs
 * are too small to pack well) and stems (3 input channels: im2col makes a
 * GEMM with a depth of 27-147 that the packing dominates). On the tuned
 * corpus those reached 30 % and 35 % of the FMA peak where oneDNN's direct
 * reached 52-55 %.
 *
 * A task is a band of output rows of one group of one image. The group's
 * input channels are packed into slabs once (the depthwise layout: padding
 * written as zeros, columns split by stride phase, so every tap reads
 * contiguous floats), and every output channel of the group is computed
 * from them, DB_KB at a time, with the sums over all channels and taps in
 * registers (kernels/blocked_kernels.h). `direct` instead re-packs each
 * input channel for every output channel and adds each channel's band into
 * the output in memory. The weights are reordered per call into the
 * workspace, DB_KB output channels interleaved: 4 * k * c / groups * r * s
 * bytes, a copy the size of the weights. */
#include "solvers/kernels/blocked_kernels.h"
#include "solvers/solver.h"

extern const struct solver solver_depthwise;

/* The slabs of a band live on the task's stack: 64 KiB at most (the
 * direct and depthwise solvers keep 32-64 KiB there). A band is planned to
 * fit half of it, L1-sized, and takes the whole only when a single output
 * row needs more. */
#define SLABS_FLOATS 16384

/* Input channels per group up to which a dense layer (one group) is a
 * stem: above it the GEMM solvers and oneDNN run it well. */
#define STEM_CHANNELS 4

static struct dw_geometry geometry(const struct conv_problem *p) {
    return (struct dw_geometry){p->h,        p->w,        p->r,     p->s,     p->ow,
                                p->stride_h, p->stride_w, p->dil_h, p->dil_w, p->pad_h,
                                p->pad_w,    1,           1,        1};
}

/* The band layout for p: slabs of cg channels within SLABS_FLOATS / 2, or
 * SLABS_FLOATS when one output row needs it; false when even that is too
 * small. planes * bands >= min_tasks where the rows allow. */
static bool plan(const struct conv_problem *p, int64_t planes, int64_t min_tasks,
                 struct dw_slab *out) {
    const struct dw_geometry g = geometry(p);
    const int64_t cg = p->c / p->groups;
    return dw_slab_plan(&g, p->oh, planes, min_tasks, SLABS_FLOATS / 2 / cg, out) ||
           dw_slab_plan(&g, p->oh, planes, min_tasks, SLABS_FLOATS / cg, out);
}

static bool is_applicable(const struct conv_problem *p, const char **reason) {
    const char *why = NULL;
    struct dw_slab sl;
    const int64_t cg = p->c / p->groups;
    if (p->layout != CONVSEL_LAYOUT_NCHW || !p->packed)
        why = "direct_blocked needs packed NCHW x and y";
    else if (solver_depthwise.is_applicable(p, NULL))
        why = "direct_blocked: depthwise problems (groups = input channels) go to the depthwise "
              "solver";
    else if (p->groups < 2 && cg > STEM_CHANNELS)
        why = "direct_blocked is for grouped layers and stems (at most 4 input channels): dense "
              "layers go to the GEMM solvers";
    else if (p->s > DB_MAX_S)
        why = "direct_blocked: filters wider than 1024 columns are not supported";
    else if (!plan(p, 1, 1, &sl))
        why = "direct_blocked: one output row's input rows of a group do not fit its 64 KiB "
              "of slabs";
    if (why && reason)
        *reason = why;
    return why == NULL;
}

static int64_t blocks_per_group(const struct conv_problem *p) {
    return (p->k / p->groups + DB_KB - 1) / DB_KB;
}

static size_t taps_per_group(const struct conv_problem *p) {
    return (size_t)(blocks_per_group(p) * DB_KB * (p->c / p->groups) * p->r * p->s);
}

static size_t workspace_size(const struct conv_problem *p) {
    return taps_per_group(p) * (size_t)p->groups * sizeof(float);
}

/* w (KCRS or KRSC) as [group][block][c][r][s][DB_KB], zeros past k. */
static void reorder_weights(const struct conv_problem *p, const float *w, float *out) {
    const int64_t cg = p->c / p->groups, kg = p->k / p->groups, blocks = blocks_per_group(p);
    for (int64_t g = 0; g < p->groups; g++)
        for (int64_t b = 0; b < blocks; b++)
            for (int64_t c = 0; c < cg; c++)
                for (int64_t r = 0; r < p->r; r++)
                    for (int64_t s = 0; s < p->s; s++)
                        for (int64_t i = 0; i < DB_KB; i++) {
                            const int64_t k = b * DB_KB + i;
                            *out++ = k < kg ? w[problem_filter_offset(p, g * kg + k, c, r, s)] : 0;
                        }
}

struct blocked_job {
    const struct conv_problem *p;
    const struct db_kernels *kern;
    struct dw_geometry g;
    struct dw_slab slab;
    const float *x, *taps;
    float *y;
};

/* Task = (band, image, group), band slowest: the slabs' padding is the same
 * for every plane of a band, so they are cleared once per band. */
static void band_tasks(void *ctx, size_t begin, size_t end) {
    const struct blocked_job *j = ctx;
    const struct conv_problem *p = j->p;
    const int64_t cg = p->c / p->groups, kg = p->k / p->groups, planes = p->n * p->groups;
    const int64_t plane = p->h * p->w, y_plane = p->oh * p->ow;
    float slabs[SLABS_FLOATS] __attribute__((aligned(64)));
    int32_t col_off[DB_MAX_S];
    db_column_offsets(&j->g, &j->slab, col_off);
    const int64_t slab_floats = dw_slab_rows(&j->g, j->slab.band) * j->slab.row_pitch;
    int64_t cleared = -1;
    for (size_t t = begin; t < end; t++) {
        const int64_t band = (int64_t)t / planes, ng = (int64_t)t % planes;
        const int64_t n = ng / p->groups, g = ng % p->groups;
        const int64_t oy0 = band * j->slab.band;
        const int64_t rows = p->oh - oy0 < j->slab.band ? p->oh - oy0 : j->slab.band;
        if (band != cleared) {
            for (int64_t c = 0; c < cg; c++)
                dw_slab_clear(&j->g, &j->slab, rows, slabs + c * slab_floats);
            cleared = band;
        }
        const float *x = j->x + (n * p->c + g * cg) * plane;
        for (int64_t c = 0; c < cg; c++)
            dw_slab_pack(&j->g, &j->slab, x + c * plane, p->w, 1, oy0, rows,
                         slabs + c * slab_floats);
        const struct db_band b = {
            .g = &j->g,
            .sl = &j->slab,
            .slabs = slabs,
            .slab_floats = slab_floats,
            .cg = cg,
            .col_off = col_off,
            .taps = j->taps + (size_t)g * taps_per_group(p),
            .kg = kg,
            .rows = rows,
            .y = j->y + (n * p->k + g * kg) * y_plane + oy0 * p->ow,
            .y_plane = y_plane,
        };
        j->kern->band(&b);
    }
}

static convsel_status_t run(const struct conv_run_args *a) {
    const struct conv_problem *p = a->p;
    struct blocked_job j = {
        .p = p, .kern = db_kernels(), .g = geometry(p), .x = a->x, .taps = a->workspace, .y = a->y};
    /* 4 tasks per thread at least, for balance, where the rows allow */
    if (!plan(p, p->n * p->groups, 4 * (int64_t)a->num_threads, &j.slab))
        return CONVSEL_STATUS_INTERNAL;
    reorder_weights(p, a->w, a->workspace);
    const int64_t bands = (p->oh + j.slab.band - 1) / j.slab.band;
    thread_pool_parallel_for(a->pool, (size_t)(p->n * p->groups * bands), band_tasks, &j);
    return CONVSEL_STATUS_SUCCESS;
}

const struct solver solver_direct_blocked = {
    .name = "direct_blocked",
    .description = "direct in register blocks of output channels, a group's input packed once per "
                   "band: grouped layers and stems",
    /* fp32 sums of c/groups * r * s products in one register each, in
     * channel order: like direct's */
    .tolerance = 1e-4,
    .is_applicable = is_applicable,
    .workspace_size = workspace_size,
    .run = run,
};
