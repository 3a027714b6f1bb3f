/* gemm_1x1.c -- 1x1 convolutions as plain GEMMs, no im2col. With stride 1
 * and no padding the input itself is the GEMM's operand: (C x H*W) in
 * NCHW, (H*W x C) in NHWC, for each image and group. With a larger stride
 * the sampled pixels are packed by the GEMM straight from x in NCHW (the
 * im2col packer of a 1x1 filter), and gathered into the workspace (OH*OW x
 * C/g, 1/stride^2 of the input) in NHWC. The weights are packed once per
 * call, or once per address when constant (gemm_common.h), but on a 1x1
 * map in NCHW (unit_gemv), where they are read as they are. */
#include <string.h>

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

/* NCHW, several images, small maps: one GEMM over the pixels of every
 * image (N = n x H*W) instead of one per image. Per image, N is H*W (49
 * on a 7x7 map) and each GEMM streams the whole packed weights again (4
 * MiB for 2048 -> 512 channels, past L2): ResNet-50's last 1x1 at batch
 * 32 ran at 55 % of peak where oneDNN ran 68 %. The GEMM packs B from
 * each image's rows (fold_pack) and writes C (K x n*H*W) into the
 * workspace, from where each image's K x H*W block is copied to y
 * (gemm_folds decides; 1x1, stride 1: h*w = oh*ow).
 * Unfolded, B is x itself, read in place; folded, all of x is copied into
 * packed panels and all of y out of the workspace. That pays only where
 * the weights, streamed once per image otherwise, outweigh an image's x
 * and y: Faster R-CNN's 256 -> 3 1x1 on 13x17 at batch 2 (3 KiB of
 * weights) took 0.118 ms folded, against 0.011 ms for one image. Or where
 * the GEMM is compute-bound, at 2KC/(C+K) >= 192 FLOPs per element copied,
 * and the copies are cheap beside a wider N: 512 -> 128 on 14x14 at batch
 * 4 ran 0.72 ms folded, 0.87 ms per image (docs/gemm1x1-fold-2026-12-03.txt
 * has the grid this rule was drawn from). */
static bool unit_folds(const struct conv_problem *p) {
    const int64_t kc = p->k * p->c, c_plus_k = p->c + p->k;
    return gemm_folds(p) && (kc >= c_plus_k * p->h * p->w || 2 * kc >= 192 * c_plus_k);
}

/* NCHW, a 1x1 map, not folded (one image, or weights too small to fold
 * for): each image and group is a GEMV (N = 1), which reads every weight
 * once. It reads the weights as they are (sgemm's GEMV) instead of
 * packing them: packing is a pass of its own over all of them, on every
 * call, and panels of 14 rows are slower to read back than rows (a
 * squeeze-excitation layer's 2048 -> 512: docs/gemv-2026-12-04.txt). */
static bool unit_gemv(const struct conv_problem *p) {
    return p->layout == CONVSEL_LAYOUT_NCHW && p->h * p->w == 1 && !unit_folds(p);
}

static size_t unit_workspace(const struct conv_problem *p) {
    if (unit_gemv(p))
        return 0;
    const size_t weights = gemm_weights_workspace_bytes(p);
    return unit_folds(p)
               ? gemm_round_up_64(weights) + (size_t)(p->k * p->n * p->h * p->w) * sizeof(float)
               : weights;
}

struct fold {
    const struct conv_problem *p;
    const float *x;
    float *c; /* K x n*H*W */
};

/* B (C x n*H*W): column j is pixel j % H*W of image j / H*W (sgemm_pack_fn).
 * A panel's columns are runs of pixels of one image each, found once per
 * panel; each depth then copies its runs in a loop. A run is at most a
 * panel (16-32 floats), and a memcpy and a memset per run and depth, with
 * a division to find the run, cost as much as the copy (gemm_common.c's
 * im2col packer measured so). */
static void fold_pack(const void *ctx, size_t j0, size_t j1, size_t p0, size_t kc, size_t width,
                      float *out) {
    const struct fold *f = ctx;
    const size_t hw = (size_t)(f->p->h * f->p->w), image = (size_t)f->p->x_stride[DIM_N];
    for (size_t jb = j0; jb < j1; jb += width) {
        float *panel = out + (jb - j0) / width * kc * width;
        const size_t end = jb + width < j1 ? jb + width : j1;
        struct {
            size_t at, from, len; /* panel lane, offset in a channel plane, floats */
        } run[SGEMM_MAX_NR];
        size_t runs = 0;
        for (size_t j = jb; j < end; runs++) {
            const size_t n = j / hw, pix = j % hw;
            const size_t len = hw - pix < end - j ? hw - pix : end - j;
            run[runs].at = j - jb, run[runs].from = n * image + pix, run[runs].len = len;
            j += len;
        }
        for (size_t q = 0; q < kc; q++) {
            float *dst = panel + q * width;
            const float *channel = f->x + (p0 + q) * hw;
            for (size_t r = 0; r < runs; r++)
                for (size_t k = 0; k < run[r].len; k++)
                    dst[run[r].at + k] = channel[run[r].from + k];
            for (size_t k = end - jb; k < width; k++)
                dst[k] = 0.0f;
        }
    }
}

extern const struct solver solver_gemm_1x1, solver_gemm_1x1_strided; /* plans' owners */

static convsel_status_t unit_run(const struct conv_run_args *a) {
    const struct conv_problem *p = a->p;
    const int64_t cg = p->c / p->groups;
    if (unit_gemv(p)) {
        /* y_g (kg x 1) = W_g (kg x cg, rows of cg in KCRS and KRSC alike) * x_g */
        const int64_t kg = p->k / p->groups;
        for (int64_t n = 0; n < p->n; n++)
            for (int64_t g = 0; g < p->groups; g++) {
                const struct sgemm_op op = {
                    .m = (size_t)kg,
                    .n = 1,
                    .k = (size_t)cg,
                    .a = {.matrix = a->w + g * kg * cg, .ld = (size_t)cg},
                    .b = {.matrix = a->x + n * p->x_stride[DIM_N] + g * cg * p->x_stride[DIM_C],
                          .ld = (size_t)p->x_stride[DIM_C]},
                    .c = a->y + n * p->y_stride[DIM_N] + g * kg * p->y_stride[DIM_C],
                    .ldc = (size_t)p->y_stride[DIM_C]};
                sgemm_run(&op, a->pool);
            }
        return CONVSEL_STATUS_SUCCESS;
    }
    const float *weights = gemm_packed_weights(a, &solver_gemm_1x1, a->workspace);
    if (unit_folds(p)) {
        const size_t cols = (size_t)(p->n * p->h * p->w);
        struct fold f = {
            p, a->x,
            (float *)((char *)a->workspace + gemm_round_up_64(gemm_weights_workspace_bytes(p)))};
        const struct sgemm_op op = {.m = (size_t)p->k,
                                    .n = cols,
                                    .k = (size_t)p->c,
                                    .a = {.packed = gemm_group_weights(p, weights, 0)},
                                    .b = {.pack = fold_pack, .ctx = &f},
                                    .c = f.c,
                                    .ldc = cols};
        gemm_fold_run(p, &op, a->y, a->pool);
        return CONVSEL_STATUS_SUCCESS;
    }
    for (int64_t n = 0; n < p->n; n++)
        for (int64_t g = 0; g < p->groups; g++) {
            const float *x = a->x + n * p->x_stride[DIM_N] + g * cg * p->x_stride[DIM_C];
            /* NCHW: rows are channels (stride H*W); NHWC: rows are pixels (stride C) */
            const size_t ld = (size_t)(p->layout == CONVSEL_LAYOUT_NCHW ? p->h * p->w : p->c);
            const struct sgemm_operand x_g = {.matrix = x, .ld = ld};
            gemm_group(p, weights, &x_g, n, g, a->y, a->pool);
        }
    return CONVSEL_STATUS_SUCCESS;
}

const struct solver solver_gemm_1x1 = {
    .name = "gemm_1x1",
    .description = "1x1, stride 1, no padding: one GEMM per image and group (or one over "
                   "the batch on small NCHW maps), no im2col",
    /* the same fp32 GEMM accumulation as im2col_gemm (see there) */
    .tolerance = 1e-4,
    .is_applicable = unit_applicable,
    .workspace_size = unit_workspace,
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

static size_t gathered_bytes(const struct conv_problem *p) {
    if (p->layout == CONVSEL_LAYOUT_NCHW)
        return 0;
    return (size_t)(p->c / p->groups) * (size_t)(p->oh * p->ow) * sizeof(float);
}

/* NHWC: the gathered pixels, then the packed weights. */
static size_t strided_workspace(const struct conv_problem *p) {
    return gathered_bytes(p) + gemm_weights_workspace_bytes(p);
}

static convsel_status_t strided_run(const struct conv_run_args *a) {
    const struct conv_problem *p = a->p;
    const int64_t cg = p->c / p->groups;
    const int64_t *xs = p->x_stride;
    float *cols = a->workspace;
    const float *weights = gemm_packed_weights(a, &solver_gemm_1x1_strided,
                                               (float *)((char *)a->workspace + gathered_bytes(p)));
    for (int64_t n = 0; n < p->n; n++)
        for (int64_t g = 0; g < p->groups; g++) {
            if (p->layout == CONVSEL_LAYOUT_NCHW) {
                const struct gemm_im2col fields = {p, a->x, n, g, 0};
                const struct sgemm_operand x_g = {.pack = gemm_im2col_pack, .ctx = &fields};
                gemm_group(p, weights, &x_g, n, g, a->y, a->pool);
                continue;
            }
            for (int64_t oy = 0; oy < p->oh; oy++) /* NHWC: (pix x cg), runs of channels */
                for (int64_t ox = 0; ox < p->ow; ox++)
                    memcpy(cols + (oy * p->ow + ox) * cg,
                           a->x + n * xs[DIM_N] + g * cg * xs[DIM_C] +
                               oy * p->stride_h * xs[DIM_H] + ox * p->stride_w * xs[DIM_W],
                           (size_t)cg * sizeof *cols);
            const struct sgemm_operand x_g = {.matrix = cols, .ld = (size_t)cg};
            gemm_group(p, weights, &x_g, n, g, a->y, a->pool);
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
