/* gemm_common.c -- see gemm_common.h. The filter is used in place as the
 * other operand: its (k, c, r, s) or (k, r, s, c) order is the order of the
 * columns matrix's taps. */
#include "solvers/gemm_common.h"

#include <cblas.h>

void gemm_group(const struct conv_problem *p, const float *w, const float *cols, int ld, int64_t n,
                int64_t g, float *y) {
    const int64_t kg = p->k / p->groups;
    const int taps = (int)(p->c / p->groups * p->r * p->s), pix = (int)(p->oh * p->ow);
    const float *wg = w + g * kg * taps;
    if (p->layout == CONVSEL_LAYOUT_NCHW) {
        float *yg = y + n * p->y_stride[DIM_N] + g * kg * p->y_stride[DIM_C];
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)kg, pix, taps, 1.0f, wg, taps,
                    cols, ld, 0.0f, yg, pix);
    } else {
        float *yg = y + n * p->y_stride[DIM_N] + g * kg;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, pix, (int)kg, taps, 1.0f, cols, ld, wg,
                    taps, 0.0f, yg, (int)p->k);
    }
}
