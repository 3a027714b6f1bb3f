/* gemm_common.h -- what the GEMM-based solvers share: the GEMM step for one
 * image and group, y_g = W_g * X_g, where X_g is a (C/g x P) matrix in NCHW
 * (row stride x_ld) or a (P x C) matrix in NHWC, P = output pixels; and
 * im2col, which builds X_g from the input for any filter. */
#ifndef CONVSEL_SOLVERS_GEMM_COMMON_H
#define CONVSEL_SOLVERS_GEMM_COMMON_H

#include "solvers/solver.h"

/* Computes image n, group g of y from a columns matrix `cols` laid out for
 * p's layout with K = taps (c/g * r * s in filter order) rows/columns:
 *   NCHW: cols is (K x P) with row stride ld;
 *   NHWC: cols is (P x K) with row stride ld. */
void gemm_group(const struct conv_problem *p, const float *w, const float *cols, int ld, int64_t n,
                int64_t g, float *y, struct thread_pool *pool);

/* Whether p suits the GEMM solvers: packed tensors and GEMM dimensions in
 * int range. Otherwise false, with the reason. */
bool im2col_gemm_fits(const struct conv_problem *p, const char **reason);

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
