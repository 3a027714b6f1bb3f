/* gemm_common.h -- what the GEMM-based solvers share.
 *
 * The GEMM of image n, group g is y_g = W_g * X_g, X_g being the group's
 * receptive fields (taps c/g * r * s in the filter layout's order, by
 * output pixel):
 *   NCHW: y_g (kg x pix) = W_g (kg x taps) * X_g (taps x pix)
 *   NHWC: y_g (pix x kg, row stride k) = X_g (pix x taps) * W_g^T
 * The weights are packed for the GEMM kernel once per call (for every
 * image of the batch), or once per weights address when the caller
 * declared them constant (kept in the handle's plan cache). In NCHW the
 * receptive fields are never written out: the GEMM packs them straight
 * from x (gemm_im2col_pack); in NHWC they are gathered pixel by pixel
 * (runs of c/g floats) into a columns matrix first. */
#ifndef CONVSEL_SOLVERS_GEMM_COMMON_H
#define CONVSEL_SOLVERS_GEMM_COMMON_H

#include "solvers/kernels/sgemm.h"
#include "solvers/solver.h"

/* Whether p suits the GEMM solvers: packed tensors and GEMM dimensions in
 * int range. Otherwise false, with the reason. */
bool im2col_gemm_fits(const struct conv_problem *p, const char **reason);

/* Floats of every group's packed weights (the kernel's A for NCHW, B for NHWC). */
size_t gemm_packed_weights_floats(const struct conv_problem *p);

/* Bytes a solver's workspace reserves for them (0 when the plan holds them). */
size_t gemm_weights_workspace_bytes(const struct conv_problem *p);

/* The packed weights of this run: from the plan cache (owner's plan for
 * the problem, keyed by the weights' address) when a->weights_constant,
 * else packed now into scratch (gemm_packed_weights_floats of them),
 * on the pool's threads. NULL when the plan cannot be had and scratch is
 * NULL. */
const float *gemm_packed_weights(const struct conv_run_args *a, const struct solver *owner,
                                 float *scratch);

/* The packed weights of group g within them. */
const float *gemm_group_weights(const struct conv_problem *p, const float *packed, int64_t g);

/* The receptive fields of NCHW image n, group g as the GEMM's B operand,
 * packed from x on demand (sgemm_pack_fn): columns are output pixels,
 * depths are taps. Works for any filter, stride, padding and dilation and
 * either filter layout (the taps' order is the filter's). */
struct gemm_im2col {
    const struct conv_problem *p;
    const float *x;
    int64_t n, g;
    /* 0: the columns are image n's output pixels. Else the batch folded
     * into one GEMM: column j is pixel j % (oh*ow) of image n + j / (oh*ow),
     * for fold_images images. */
    int64_t fold_images;
};
void gemm_im2col_pack(const void *ctx, size_t j0, size_t j1, size_t p0, size_t kc, size_t width,
                      float *out);

/* The batch folded into one GEMM (NCHW, one group, small maps): per image
 * a map of at most this many output pixels gives GEMMs of so few columns
 * that each streams the packed weights again (gemm_1x1: 1x1 maps 4.05x
 * folded, 7x7 1.38-1.82x, 14x14 1.07-1.11x, 28x28 0.76-0.82x). */
#define GEMM_FOLD_MAX_PIXELS 256
bool gemm_folds(const struct conv_problem *p);

/* bytes rounded up to a cache line: where a second buffer follows the first
 * in one workspace. */
static inline size_t gemm_round_up_64(size_t bytes) {
    return (bytes + 63) / 64 * 64;
}

/* Folded: runs op, whose C is K x n*oh*ow (in a workspace), and copies C
 * to each image's y. The copy runs on the threads the GEMM ran on: on the
 * pool after a threaded GEMM, on the calling thread after a serial one
 * (a 64 -> 64 1x1 on 4x4 at batch 8, 1 MFLOP: 26 us on two threads when
 * the copy woke the pool for 1-2 us of work, 16 us on one). */
void gemm_fold_run(const struct conv_problem *p, const struct sgemm_op *op, float *y,
                   struct thread_pool *pool);

/* y_g of image n, group g: NCHW with B = X_g given as an operand (the
 * im2col packer, or x itself for an unpadded 1x1); NHWC with A = X_g
 * (a columns matrix, or x itself). The weights are packed (above). */
void gemm_group(const struct conv_problem *p, const float *packed_weights,
                const struct sgemm_operand *x_g, int64_t n, int64_t g, float *y,
                struct thread_pool *pool);

/* Copies the receptive fields of image n, group g, input channels [c0, c1)
 * of the group into cols: tap t (c/g * r * s, in the filter layout's order)
 * of output pixel j at cols[t * t_stride + j * j_stride]; zero where the
 * filter reads padding. Disjoint channel ranges write disjoint elements. */
void im2col_channels(const struct conv_problem *p, const float *x, int64_t n, int64_t g, int64_t c0,
                     int64_t c1, float *cols, int64_t t_stride, int64_t j_stride);

/* True when a pixel's taps of one (r, s) are contiguous on both sides --
 * NHWC tensors (channels innermost) and KRSC weights -- so im2col_rows_nhwc
 * can copy them as runs of c/g floats. */
bool im2col_by_rows(const struct conv_problem *p);

/* The same columns as im2col_channels for output rows [oy0, oy1) of image
 * n, group g, all channels, pixel by pixel: col is (pix x taps). Disjoint
 * row ranges write disjoint elements. Only where im2col_by_rows(p). */
void im2col_rows_nhwc(const struct conv_problem *p, const float *x, int64_t n, int64_t g,
                      int64_t oy0, int64_t oy1, float *cols);

#endif
