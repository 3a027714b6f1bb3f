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
 * the output in memory. The weights are reordered into the workspace,
 * DB_KB output channels interleaved (a copy the size of the weights), on
 * every call, or once when the caller declared them constant (kept in the
 * handle's plan, as the GEMM solvers keep their packed weights: the
 * reorder's strided writes were 40 % of a 2048-channel g32 layer on a 7x7
 * map). */
#include <string.h>

#include "solvers/kernels/blocked_kernels.h"
#include "solvers/plan_cache.h"
#include "solvers/slab_geometry.h"
#include "solvers/solver.h"

extern const struct solver solver_depthwise;
extern const struct solver solver_direct_blocked; /* its plans' owner */

/* The slabs of a band live on the task's stack: 64 KiB at most (the
 * direct and depthwise solvers keep 32-64 KiB there). A band is planned to
 * fit half of it, L1-sized, and takes the whole only when a single output
 * row needs more. */
#define SLABS_FLOATS 16384

/* Input channels per group up to which a dense layer (one group) is a
 * stem: above it the GEMM solvers and oneDNN run it well. */
#define STEM_CHANNELS 4

/* Output rows a band is planned for at least, where the map has them: two
 * of AVX2's row blocks, one of AVX-512's. A group of many channels whose
 * slabs of that many rows would not fit is packed and summed in chunks of
 * channels (each chunk's sums added to y): with all 120 channels of a
 * RegNet group at once, a band held one row, a block one vector. */
#define BAND_ROWS 6

struct layout {
    struct dw_slab slab;
    int64_t chunk; /* input channels packed and summed at once */
};

/* The band layout for p: chunks of channels whose slabs of BAND_ROWS rows
 * fit SLABS_FLOATS / 2 (L1-sized), the band as long as that allows and
 * planes * bands >= min_tasks where the rows allow; one channel in all of
 * SLABS_FLOATS when not even one fits half. false when that is too small. */
static bool plan(const struct conv_problem *p, int64_t planes, int64_t min_tasks,
                 struct layout *out) {
    const struct dw_geometry g = slab_geometry(p);
    const int64_t cg = p->c / p->groups;
    struct dw_slab one;
    if (!dw_slab_plan(&g, p->oh, 1, 1, SLABS_FLOATS, &one))
        return false;
    const int64_t rows = p->oh < BAND_ROWS ? p->oh : BAND_ROWS;
    const int64_t fit = SLABS_FLOATS / 2 / (dw_slab_rows(&g, rows) * one.row_pitch);
    if (fit < 1) {
        out->chunk = 1;
        return dw_slab_plan(&g, p->oh, planes, min_tasks, SLABS_FLOATS, &out->slab);
    }
    const int64_t chunks = (cg + fit - 1) / fit;
    out->chunk = (cg + chunks - 1) / chunks; /* as even as they go */
    return dw_slab_plan(&g, p->oh, planes, min_tasks, SLABS_FLOATS / 2 / out->chunk, &out->slab);
}

static bool is_applicable(const struct conv_problem *p, const char **reason) {
    const char *why = NULL;
    struct layout sl;
    const int64_t cg = p->c / p->groups;
    if (p->layout != CONVSEL_LAYOUT_NCHW || !p->packed)
        why = "direct_blocked needs packed NCHW x and y";
    else if (solver_depthwise.is_applicable(p, NULL))
        why = "direct_blocked: depthwise problems (groups = input channels) go to the depthwise "
              "solver";
    else if (p->groups < 2 && cg > STEM_CHANNELS)
        why = "direct_blocked is for grouped layers and stems (at most 4 input channels): dense "
              "layers go to the GEMM solvers";
    else if (p->r == 1 && p->s == 1)
        why = "direct_blocked: 1x1 filters go to the GEMM solvers (tuned on AVX2, it was the "
              "fastest on 12 of 763 such problems and 1.9-2.1x the fastest at the geomean)";
    else if (p->stride_h >= 8 || p->stride_w >= 8)
        why = "direct_blocked: strides of 8 or more go to im2col (patch stems: where patches do "
              "not overlap, im2col copies no more than the input; tuned on AVX2 this solver was "
              "the fastest on none of the 19 such problems, 1.97x the fastest at the geomean)";
    else if (p->s > DB_MAX_S)
        why = "direct_blocked: filters wider than 1024 columns are not supported";
    else if (!plan(p, 1, 1, &sl))
        why = "direct_blocked: one output row's input rows of one channel do not fit its 64 KiB "
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

/* w (KCRS or KRSC) as [group][block][c][r][s][DB_KB], zeros past k: read in
 * the weights' order, written DB_KB floats apart. */
static void reorder_weights(const struct conv_run_args *a, float *out) {
    const struct conv_problem *p = a->p;
    const int64_t cg = p->c / p->groups, kg = p->k / p->groups, taps = p->r * p->s;
    if (kg % DB_KB)
        memset(out, 0, workspace_size(p));
    for (int64_t g = 0; g < p->groups; g++)
        for (int64_t k = 0; k < kg; k++) {
            float *to =
                out + g * (int64_t)taps_per_group(p) + k / DB_KB * cg * taps * DB_KB + k % DB_KB;
            const float *w = a->w + (g * kg + k) * cg * taps;
            if (p->filter_layout == CONVSEL_FILTER_KCRS) /* c, r, s in order */
                for (int64_t i = 0; i < cg * taps; i++)
                    to[i * DB_KB] = w[i];
            else /* r, s, c in order */
                for (int64_t t = 0; t < taps; t++)
                    for (int64_t c = 0; c < cg; c++)
                        to[(c * taps + t) * DB_KB] = w[t * cg + c];
        }
}

struct blocked_job {
    const struct conv_problem *p;
    const struct db_kernels *kern;
    struct dw_geometry g;
    struct layout lay;
    int64_t slab_floats;       /* from one channel's slab to the next */
    int32_t col_off[DB_MAX_S]; /* db_column_offsets of the layout */
    const float *x, *taps;
    float *y;
};

/* Task = (band, image, group), band slowest: the slabs' padding is the same
 * for every plane of a band, so they are cleared once per band. */
static void band_tasks(void *ctx, size_t begin, size_t end) {
    const struct blocked_job *j = ctx;
    const struct conv_problem *p = j->p;
    const struct dw_slab *sl = &j->lay.slab;
    const int64_t cg = p->c / p->groups, kg = p->k / p->groups, planes = p->n * p->groups;
    const int64_t plane = p->h * p->w, y_plane = p->oh * p->ow, taps = p->r * p->s;
    const int64_t slab_floats = j->slab_floats;
    float slabs[SLABS_FLOATS] __attribute__((aligned(64)));
    int64_t cleared = -1;
    for (size_t t = begin; t < end; t++) {
        const int64_t band = (int64_t)t / planes, ng = (int64_t)t % planes;
        const int64_t n = ng / p->groups, g = ng % p->groups;
        const int64_t oy0 = band * sl->band;
        const int64_t rows = p->oh - oy0 < sl->band ? p->oh - oy0 : sl->band;
        if (band != cleared) {
            for (int64_t c = 0; c < j->lay.chunk; c++)
                dw_slab_clear(&j->g, sl, rows, slabs + c * slab_floats);
            cleared = band;
        }
        const float *x = j->x + (n * p->c + g * cg) * plane;
        for (int64_t c0 = 0; c0 < cg; c0 += j->lay.chunk) {
            const int64_t cc = cg - c0 < j->lay.chunk ? cg - c0 : j->lay.chunk;
            for (int64_t c = 0; c < cc; c++)
                dw_slab_pack(&j->g, sl, x + (c0 + c) * plane, p->w, 1, oy0, rows,
                             slabs + c * slab_floats);
            const struct db_band b = {
                .g = &j->g,
                .sl = sl,
                .slabs = slabs,
                .slab_floats = slab_floats,
                .cg = cc,
                .col_off = j->col_off,
                .taps = j->taps + (size_t)g * taps_per_group(p) + c0 * taps * DB_KB,
                .block_floats = cg * taps * DB_KB,
                .kg = kg,
                .accumulate = c0 > 0,
                .rows = rows,
                .y = j->y + (n * p->k + g * kg) * y_plane + oy0 * p->ow,
                .y_plane = y_plane,
            };
            j->kern->band(&b);
        }
    }
}

static convsel_status_t run(const struct conv_run_args *a) {
    const struct conv_problem *p = a->p;
    struct blocked_job j = {
        .p = p, .kern = db_kernels(), .g = slab_geometry(p), .x = a->x, .y = a->y};
    /* 4 tasks per thread at least, for balance, where the rows allow */
    if (!plan(p, p->n * p->groups, 4 * (int64_t)a->num_threads, &j.lay))
        return CONVSEL_STATUS_INTERNAL;
    j.slab_floats = dw_slab_rows(&j.g, j.lay.slab.band) * j.lay.slab.row_pitch;
    db_column_offsets(&j.g, &j.lay.slab, j.col_off);
    j.taps = plan_constant_weights(a, &solver_direct_blocked, workspace_size(p) / sizeof(float),
                                   reorder_weights, a->workspace);
    const int64_t bands = (p->oh + j.lay.slab.band - 1) / j.lay.slab.band;
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
