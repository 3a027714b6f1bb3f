/* gemm_common.h -- the GEMM step shared by the GEMM-based solvers: for one
 * image and group, y_g = W_g * X_g, where X_g is a (C/g x P) matrix in NCHW
 * (row stride x_ld) or a (P x C) matrix in NHWC, P = output pixels. */
#ifndef CONVSEL_SOLVERS_GEMM_COMMON_H
#define CONVSEL_SOLVERS_GEMM_COMMON_H

#include "solvers/solver.h"

/* Computes image n, group g of y from a columns matrix `cols` laid out for
 * p's layout with K = taps (c/g * r * s in filter order) rows/columns:
 *   NCHW: cols is (K x P) with row stride ld;
 *   NHWC: cols is (P x K) with row stride ld. */
void gemm_group(const struct conv_problem *p, const float *w, const float *cols, int ld, int64_t n,
                int64_t g, float *y, struct thread_pool *pool);

#endif
