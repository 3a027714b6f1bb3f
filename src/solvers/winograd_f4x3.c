/* winograd_f4x3.c -- Winograd F(4x4, 3x3): 3x3, stride 1, dilation 1,
 * groups 1, any packed layout. Each 4x4 output tile comes from a 6x6 input
 * tile with 36 multiplications per (input channel, output channel) instead
 * of 144: the filters and input tiles are transformed (U = G g G^T,
 * V = B^T d B), the 36 transformed positions become 36 GEMMs
 * M[i] (K x T) = U[i] (K x C) * V[i] (C x T), and each output tile is
 * A^T m A. Tiles are processed in blocks so the workspace stays bounded;
 * transforms run on the handle's pool, the GEMMs on convsel's GEMM.
 * Where a block has few tiles (small maps at small batches) the GEMMs are
 * turned around, M[i]^T (T x K) = V[i]^T U[i] (tiles_as_rows).
 * With constant weights (convsel_set_weights_constant) U is computed once
 * and kept in the handle's plan cache.
 *
 * Error: the transforms have entries up to 5 and 1/24, so rounding is
 * amplified; the error bound used across the field for F(4x4,3x3) fp32 is
 * 1e-3 relative to max|y| (oneDNN's and NNPACK's tests), and that is the
 * tolerance here; tests/test_solvers.c reports the measured worst case. */
#include <stdlib.h>

#include "solvers/kernels/sgemm.h"
#include "solvers/kernels/winograd_kernels.h"
#include "solvers/plan_cache.h"
#include "solvers/solver.h"

#define TILE_BLOCK 512 /* tiles per block: V and M are 36 x C (or K) x TILE_BLOCK */

/* G (6x3) of F(4x4, 3x3) (Lavin & Gray), for the filter transform. */
static const float G[6][3] = {
    {1.0f / 4, 0, 0},
    {-1.0f / 6, -1.0f / 6, -1.0f / 6},
    {-1.0f / 6, 1.0f / 6, -1.0f / 6},
    {1.0f / 24, 1.0f / 12, 1.0f / 6},
    {1.0f / 24, -1.0f / 12, 1.0f / 6},
    {0, 0, 1},
};
/* B^T and A^T are spelled out in kernels/winograd_kernels.c. */

static bool is_applicable(const struct conv_problem *p, const char **reason) {
    if (!p->packed || p->r != 3 || p->s != 3 || p->stride_h != 1 || p->stride_w != 1 ||
        p->dil_h != 1 || p->dil_w != 1 || p->groups != 1) {
        if (reason)
            *reason = "winograd_f4x3 needs packed tensors, 3x3, stride 1, dilation 1, groups 1";
        return false;
    }
    /* Correct on any map, but below one tile most of each tile's work is
     * thrown away: it was never the fastest on the 40 such problems tuned
     * (both databases), and HDemucs' 768 -> 1536 on a 1x130 map ran 3.8x
     * oneDNN's direct. Refusing keeps the model from picking it there. */
    if (p->oh < 4 || p->ow < 4) {
        if (reason)
            *reason = "winograd_f4x3 needs an output map of at least 4x4 (one tile)";
        return false;
    }
    return true;
}

static int64_t tiles(const struct conv_problem *p) {
    return p->n * ((p->oh + 3) / 4) * ((p->ow + 3) / 4);
}

static int64_t block_tiles(const struct conv_problem *p) {
    const int64_t t = tiles(p);
    return t < TILE_BLOCK ? t : TILE_BLOCK;
}

/* Whether the tiles are the rows of the GEMMs' products (M[i] is T x K,
 * U[i] their B) rather than their columns (M[i] K x T, U[i] their A):
 * when a block has fewer tiles than the kernel's width (nr: 16 on AVX2,
 * 32 on AVX-512), which as columns would not fill one panel. 256 -> 256
 * channels on a 7x9 map (6 tiles) ran its GEMMs at ~15 % of peak, 80 % of
 * the solver's time in the narrow kernel, 1.8x im2col's time for a third
 * of its multiplications; as rows T fills the kernel's 6 (AVX2) or 14
 * rows and K its columns. On AVX2, 2 threads, rows were 1.3-2.6x faster
 * under 16 tiles and 0.74-0.95x from 16 up (docs/solvers.md); AVX-512's
 * boundary is not measured. Fixed per problem (by the largest block),
 * since U is packed once for every block and kept across calls. */
static bool tiles_as_rows(const struct conv_problem *p) {
    return block_tiles(p) < (int64_t)sgemm_kernel_best()->nr;
}

/* U[i] packed for the GEMM kernel (one per position): as A (K x C) or,
 * with tiles_as_rows, as B (C x K). */
static size_t packed_u_floats(const struct conv_problem *p) {
    return sgemm_packed_floats(NULL, !tiles_as_rows(p), (size_t)p->k, (size_t)p->c);
}

/* U (36 x C x K), then V (36 x C x TB) and M (36 x K x TB), then U packed. */
static size_t workspace_size(const struct conv_problem *p) {
    const size_t tb = (size_t)block_tiles(p);
    return 36 *
           ((size_t)(p->k * p->c) + (size_t)p->c * tb + (size_t)p->k * tb + packed_u_floats(p)) *
           sizeof(float);
}

struct wino {
    const struct conv_problem *p;
    const float *x, *w;
    float *y, *u, *v, *m;
    const float *u_packed;  /* U[i] packed for the kernel: the plan's or the workspace's */
    int64_t th, tw, t0, tb; /* tiles per image row/column; current block */
};

#define FILTER_KB 16 /* filters transformed together, one vector */

/* U[i][c][k] = (G g G^T)[i] for filters k in [begin, end), FILTER_KB
 * filters at a time, innermost: each position gets contiguous stores, and
 * U[i] is C x K, the transposed A that the GEMM packs by plain copies.
 * Transforming one (k, c) at a time into U[i][k][c] scattered 36 single
 * stores K x C apart and made packing a transpose: per-call weights then
 * cost ~22 ns per weight element (512 -> 512 channels at 7x7: 52 ms of a
 * 55 ms call, `convsel bench --weights per-call`). */
static void filter_transform(void *ctx, size_t begin, size_t end) {
    const struct wino *s = ctx;
    const struct conv_problem *p = s->p;
    const size_t kk = (size_t)p->k, cc = (size_t)p->c;
    for (size_t k0 = begin; k0 < end; k0 += FILTER_KB) {
        const int nb = end - k0 < FILTER_KB ? (int)(end - k0) : FILTER_KB;
        for (int64_t c = 0; c < p->c; c++) {
            float g[3][3][FILTER_KB] = {{{0}}}, tmp[6][3][FILTER_KB];
            for (int l = 0; l < nb; l++)
                for (int r = 0; r < 3; r++)
                    for (int q = 0; q < 3; q++)
                        g[r][q][l] = s->w[problem_filter_offset(p, (int64_t)(k0 + l), c, r, q)];
            for (int i = 0; i < 6; i++)
                for (int q = 0; q < 3; q++)
                    for (int l = 0; l < FILTER_KB; l++)
                        tmp[i][q][l] =
                            G[i][0] * g[0][q][l] + G[i][1] * g[1][q][l] + G[i][2] * g[2][q][l];
            for (int i = 0; i < 6; i++)
                for (int j = 0; j < 6; j++) {
                    float *u = s->u + ((size_t)(i * 6 + j) * cc + (size_t)c) * kk + k0;
                    if (nb == FILTER_KB) {
                        for (int l = 0; l < FILTER_KB; l++)
                            u[l] = tmp[i][0][l] * G[j][0] + tmp[i][1][l] * G[j][1] +
                                   tmp[i][2][l] * G[j][2];
                    } else {
                        for (int l = 0; l < nb; l++)
                            u[l] = tmp[i][0][l] * G[j][0] + tmp[i][1][l] * G[j][1] +
                                   tmp[i][2][l] * G[j][2];
                    }
                }
        }
    }
}

/* Image, tile row and column of tile t of the block; next_tile() walks
 * them in order without divisions. */
struct tile_pos {
    int64_t n, ty, tx;
};

static struct tile_pos tile_at(const struct wino *s, int64_t t) {
    const int64_t g = s->t0 + t;
    return (struct tile_pos){g / (s->th * s->tw), g / s->tw % s->th, g % s->tw};
}

static void next_tile(const struct wino *s, struct tile_pos *tp) {
    if (++tp->tx == s->tw) {
        tp->tx = 0;
        if (++tp->ty == s->th) {
            tp->ty = 0;
            tp->n++;
        }
    }
}

/* Gathers tile tp of channel c into lane l of d ([position][lane]). */
static void gather_tile(const struct wino *s, size_t c, struct tile_pos tp, int64_t l, float *d) {
    const struct conv_problem *p = s->p;
    const int64_t *xs = p->x_stride;
    const int64_t y0 = tp.ty * 4 - p->pad_h, x0 = tp.tx * 4 - p->pad_w;
    const float *plane = s->x + tp.n * xs[DIM_N] + (int64_t)c * xs[DIM_C];
    if (y0 >= 0 && y0 + 6 <= p->h && x0 >= 0 && x0 + 6 <= p->w) { /* interior: no checks */
        for (int i = 0; i < 6; i++) {
            const float *row = plane + (y0 + i) * xs[DIM_H] + x0 * xs[DIM_W];
            for (int j = 0; j < 6; j++)
                d[(i * 6 + j) * WINO_LANES + l] = row[j * xs[DIM_W]];
        }
        return;
    }
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) {
            const int64_t iy = y0 + i, ix = x0 + j;
            d[(i * 6 + j) * WINO_LANES + l] = iy >= 0 && iy < p->h && ix >= 0 && ix < p->w
                                                  ? plane[iy * xs[DIM_H] + ix * xs[DIM_W]]
                                                  : 0.0f;
        }
}

/* V[i][c][t] = (B^T d B)[i] for channels c in [begin, end), WINO_LANES
 * tiles at a time through the vectorized kernel. */
static void input_transform(void *ctx, size_t begin, size_t end) {
    const struct wino *s = ctx;
    const struct conv_problem *p = s->p;
    const struct wino_kernels *kern = wino_kernels();
    float d[36 * WINO_LANES], v[36 * WINO_LANES];
    for (size_t c = begin; c < end; c++) {
        struct tile_pos tp = tile_at(s, 0);
        for (int64_t t0 = 0; t0 < s->tb; t0 += WINO_LANES) {
            const int64_t lanes = s->tb - t0 < WINO_LANES ? s->tb - t0 : WINO_LANES;
            for (int64_t l = 0; l < lanes; l++, next_tile(s, &tp))
                gather_tile(s, c, tp, l, d);
            for (int64_t l = lanes; l < WINO_LANES; l++)
                for (int i = 0; i < 36; i++)
                    d[i * WINO_LANES + l] = 0.0f;
            kern->input(d, v, WINO_LANES);
            /* loops, not memcpy: 36 calls of at most 16 floats each per
             * 16 tiles cost as much as the copies (gemm_common.c's im2col
             * packer measured so) */
            for (int i = 0; i < 36; i++) {
                float *to = s->v + ((size_t)i * (size_t)p->c + c) * (size_t)s->tb + (size_t)t0;
                for (int64_t l = 0; l < lanes; l++)
                    to[l] = v[i * WINO_LANES + l];
            }
        }
    }
}

/* Writes lane l of o (16 x WINO_LANES outputs of A^T m A) to channel k's
 * output tile tp, the part of it inside the output map. Inlined: called
 * once per tile and channel, as a call it cost 1.2x the whole solver on
 * 64 channels at 56x56 (7 % of the samples in the call alone). */
static inline __attribute__((always_inline)) void
store_tile(const struct wino *s, struct tile_pos tp, int64_t k, const float *o, int64_t l) {
    const struct conv_problem *p = s->p;
    const int64_t *ys = p->y_stride;
    float *out =
        s->y + tp.n * ys[DIM_N] + k * ys[DIM_C] + tp.ty * 4 * ys[DIM_H] + tp.tx * 4 * ys[DIM_W];
    const int rows = p->oh - tp.ty * 4 < 4 ? (int)(p->oh - tp.ty * 4) : 4;
    const int cols = p->ow - tp.tx * 4 < 4 ? (int)(p->ow - tp.tx * 4) : 4;
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            out[i * ys[DIM_H] + j * ys[DIM_W]] = o[(i * 4 + j) * WINO_LANES + l];
}

/* m[i][l] = from[i * K * T + l] for the 36 positions i and lanes l under
 * `lanes`, zeros above: M[i] is K x T or T x K, K * T floats apart either
 * way. */
static void gather_positions(const struct wino *s, const float *from, int64_t lanes, float *m) {
    const size_t stride = (size_t)s->p->k * (size_t)s->tb;
    for (int i = 0; i < 36; i++) {
        for (int64_t l = 0; l < lanes; l++)
            m[i * WINO_LANES + l] = from[(size_t)i * stride + (size_t)l];
        for (int64_t l = lanes; l < WINO_LANES; l++)
            m[i * WINO_LANES + l] = 0.0f;
    }
}

/* y tile = A^T m A for output channels k in [begin, end), WINO_LANES
 * tiles at a time: M[i] is K x T. */
static void output_transform(void *ctx, size_t begin, size_t end) {
    const struct wino *s = ctx;
    const struct wino_kernels *kern = wino_kernels();
    float m[36 * WINO_LANES], o[16 * WINO_LANES];
    for (size_t k = begin; k < end; k++) {
        struct tile_pos tp = tile_at(s, 0);
        for (int64_t t0 = 0; t0 < s->tb; t0 += WINO_LANES) {
            const int64_t lanes = s->tb - t0 < WINO_LANES ? s->tb - t0 : WINO_LANES;
            gather_positions(s, s->m + k * (size_t)s->tb + (size_t)t0, lanes, m);
            kern->output(m, WINO_LANES, o);
            for (int64_t l = 0; l < lanes; l++, next_tile(s, &tp))
                store_tile(s, tp, (int64_t)k, o, l);
        }
    }
}

/* The same with tiles_as_rows (M[i] is T x K): blocks [begin, end) of
 * WINO_LANES output channels, one tile at a time, so that the lanes are
 * channels and read contiguously. */
static void output_transform_rows(void *ctx, size_t begin, size_t end) {
    const struct wino *s = ctx;
    const struct conv_problem *p = s->p;
    const struct wino_kernels *kern = wino_kernels();
    float m[36 * WINO_LANES], o[16 * WINO_LANES];
    for (size_t b = begin; b < end; b++) {
        const int64_t k0 = (int64_t)b * WINO_LANES;
        const int64_t lanes = p->k - k0 < WINO_LANES ? p->k - k0 : WINO_LANES;
        struct tile_pos tp = tile_at(s, 0);
        for (int64_t t = 0; t < s->tb; t++, next_tile(s, &tp)) {
            gather_positions(s, s->m + (size_t)t * (size_t)p->k + (size_t)k0, lanes, m);
            kern->output(m, WINO_LANES, o);
            for (int64_t l = 0; l < lanes; l++)
                store_tile(s, tp, k0 + l, o, l);
        }
    }
}

/* M[i] = U[i] * V[i] (or M[i]^T = V[i]^T U[i], tiles_as_rows) for
 * positions i in [begin, end): whole GEMMs per thread, one pool job for
 * all 36 (each job costs a wake-up). U[i] comes packed: every tile block
 * reuses it. */
static void position_gemms(void *ctx, size_t begin, size_t end) {
    const struct wino *s = ctx;
    const struct conv_problem *p = s->p;
    const bool rows = tiles_as_rows(p);
    for (size_t i = begin; i < end; i++) {
        const float *v = s->v + i * (size_t)(p->c * s->tb);
        float *m = s->m + i * (size_t)(p->k * s->tb);
        if (rows) {
            const struct sgemm_op op = {
                .m = (size_t)s->tb,
                .n = (size_t)p->k,
                .k = (size_t)p->c,
                .a = {.matrix = v, .ld = (size_t)s->tb, .trans = true},
                .b = {.packed = s->u_packed + i * packed_u_floats(p)},
                .c = m,
                .ldc = (size_t)p->k,
            };
            sgemm_run(&op, NULL);
            continue;
        }
        const struct sgemm_op op = {
            .m = (size_t)p->k,
            .n = (size_t)s->tb,
            .k = (size_t)p->c,
            .a = {.packed = s->u_packed + i * packed_u_floats(p)},
            .b = {.matrix = v, .ld = (size_t)s->tb},
            .c = m,
            .ldc = (size_t)s->tb,
        };
        sgemm_run(&op, NULL);
    }
}

/* Packs U[i] for positions i in [begin, end). */
static void pack_positions(void *ctx, size_t begin, size_t end) {
    const struct wino *s = ctx;
    const struct conv_problem *p = s->p;
    const bool as_a = !tiles_as_rows(p);
    for (size_t i = begin; i < end; i++) {
        /* U[i] is C x K: A (K x C) stored transposed, or B as it is */
        const struct sgemm_operand u = {
            .matrix = s->u + i * (size_t)(p->k * p->c), .ld = (size_t)p->k, .trans = as_a};
        sgemm_pack(NULL, as_a, &u, (size_t)p->k, (size_t)p->c,
                   (float *)s->u_packed + i * packed_u_floats(p), NULL);
    }
}

extern const struct solver solver_winograd_f4x3; /* its plans' owner */

/* Transformed filters kept for constant weights: U of the weights at
 * `from`, packed for the GEMM kernel. */
struct wino_plan {
    const float *from; /* NULL until u holds a complete transform */
    float u[];
};

/* Points s->u_packed at this run's packed U: the plan's when the weights
 * are constant (transformed once per weights address), else the
 * workspace's, transformed (into s->u) and packed now. */
static void filters(const struct conv_run_args *a, struct wino *s) {
    const struct conv_problem *p = a->p;
    const size_t u_floats = 36 * packed_u_floats(p);
    struct wino_plan *plan = NULL;
    char key[CONVSEL_PROBLEM_KEY_MAX];
    if (a->weights_constant && a->plans) {
        plan_key_format(a, key);
        plan = plan_cache_find(a->plans, &solver_winograd_f4x3, key);
        if (plan == NULL && (plan = malloc(sizeof *plan + u_floats * sizeof(float))) != NULL) {
            plan->from = NULL;
            if (!plan_cache_put(a->plans, &solver_winograd_f4x3, key, plan, free,
                                sizeof *plan + u_floats * sizeof(float)))
                plan = NULL; /* freed by the cache */
        }
    }
    s->u = a->workspace;
    s->u_packed = plan ? plan->u : s->m + 36 * p->k * block_tiles(p);
    if (plan && plan->from == a->w)
        return;
    thread_pool_parallel_for(a->pool, (size_t)p->k, filter_transform, s);
    thread_pool_parallel_for(a->pool, 36, pack_positions, s);
    if (plan)
        plan->from = a->w;
}

static convsel_status_t run(const struct conv_run_args *a) {
    const struct conv_problem *p = a->p;
    const int64_t tb_max = block_tiles(p), total = tiles(p);
    struct wino s = {
        .p = p, .x = a->x, .w = a->w, .y = a->y, .th = (p->oh + 3) / 4, .tw = (p->ow + 3) / 4};
    s.v = (float *)a->workspace + 36 * p->k * p->c;
    s.m = s.v + 36 * p->c * tb_max;
    filters(a, &s);
    for (s.t0 = 0; s.t0 < total; s.t0 += tb_max) {
        s.tb = total - s.t0 < tb_max ? total - s.t0 : tb_max;
        thread_pool_parallel_for(a->pool, (size_t)p->c, input_transform, &s);
        thread_pool_parallel_for(a->pool, 36, position_gemms, &s);
        if (tiles_as_rows(p))
            thread_pool_parallel_for(a->pool, (size_t)(p->k + WINO_LANES - 1) / WINO_LANES,
                                     output_transform_rows, &s);
        else
            thread_pool_parallel_for(a->pool, (size_t)p->k, output_transform, &s);
    }
    return CONVSEL_STATUS_SUCCESS;
}

const struct solver solver_winograd_f4x3 = {
    .name = "winograd_f4x3",
    .description = "Winograd F(4x4,3x3): 3x3 stride 1, transforms + 36 GEMMs per tile block",
    .tolerance = 1e-3,
    /* 36 multiplies per 4x4 tile and channel pair where direct does 144 */
    .work_fraction = 0.25,
    .is_applicable = is_applicable,
    .workspace_size = workspace_size,
    .run = run,
};
