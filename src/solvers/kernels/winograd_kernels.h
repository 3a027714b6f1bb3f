/* winograd_kernels.h -- the F(4x4,3x3) input and output transforms for a
 * batch of WINO_LANES tiles at once, vectorized across the tiles, in
 * variants per ISA level. */
#ifndef CONVSEL_SOLVERS_KERNELS_WINOGRAD_H
#define CONVSEL_SOLVERS_KERNELS_WINOGRAD_H

#include "util/cpu.h"

#define WINO_LANES 16

struct wino_kernels {
    /* d: 36 x WINO_LANES input values (6x6 tile-major per position);
     * v: 36 outputs, position i at v + i * v_stride, WINO_LANES each. */
    void (*input)(const float *d, float *v, long v_stride);
    /* m: 36 positions, position i at m + i * m_stride (WINO_LANES each);
     * o: 16 x WINO_LANES outputs (4x4 tile). */
    void (*output)(const float *m, long m_stride, float *o);
    enum cpu_isa isa;
};

const struct wino_kernels *wino_kernels(void);
const struct wino_kernels *wino_kernels_variant(enum cpu_isa isa);

#endif
