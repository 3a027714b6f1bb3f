/* gemm_common.c -- see gemm_common.h. The filter is used in place as the
 * other operand: its (k, c, r, s) or (k, r, s, c) order is the order of the
 * columns matrix's taps. The GEMM is convsel's own (kernels/sgemm.c): on
 * this machine class OpenBLAS 0.3.21 does not recognize the CPU and runs
 * SSE3 kernels, 3-6x slower (build/bench_sgemm). */
#include "solvers/gemm_common.h"

#include "solvers/kernels/sgemm.h"

void gemm_group(const struct conv_problem *p, const float *w, const float *cols, int ld, int64_t n,
                int64_t g, float *y, struct thread_pool *pool) {
    const int64_t kg = p->k / p->groups;
    const int taps = (int)(p->c / p->groups * p->r * p->s), pix = (int)(p->oh * p->ow);
    const float *wg = w + g * kg * taps;
    if (p->layout == CONVSEL_LAYOUT_NCHW) {
        /* y_g (kg x pix) = W_g (kg x taps) * cols (taps x pix) */
        const struct sgemm_args a = {
            (size_t)kg,   (size_t)pix,
            (size_t)taps, wg,
            (size_t)taps, false,
            cols,         (size_t)ld,
            false,        y + n * p->y_stride[DIM_N] + g * kg * p->y_stride[DIM_C],
            (size_t)pix};
        sgemm(&a, pool);
    } else {
        /* y_g (pix x kg, row stride k) = cols (pix x taps) * W_g^T (taps x kg) */
        const struct sgemm_args a = {
            (size_t)pix, (size_t)kg, (size_t)taps, cols, (size_t)ld,
            false,       wg,         (size_t)taps, true, y + n * p->y_stride[DIM_N] + g * kg,
            (size_t)p->k};
        sgemm(&a, pool);
    }
}
