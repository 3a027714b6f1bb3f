/* depthwise_kernels.h -- the inner loops of the depthwise solver, one
 * output row at a time, in variants per ISA level. Kernels only compute:
 * no allocation, no threads, no checks (the solver has made them). */
#ifndef CONVSEL_SOLVERS_KERNELS_DEPTHWISE_H
#define CONVSEL_SOLVERS_KERNELS_DEPTHWISE_H

#include <stdint.h>

#include "util/cpu.h"

/* Geometry shared by every row of one problem. */
struct dw_geometry {
    int64_t h, w, r, s, ow;
    int64_t stride_h, stride_w, dil_h, dil_w, pad_h, pad_w;
    int64_t c, k, mult; /* NHWC: input and output channels, k = c * mult */
};

struct dw_kernels {
    /* NCHW: output row oy of one channel. x is the input plane (h x w,
     * packed), taps the channel's r*s weights, y the output row (ow). */
    void (*nchw_row)(const struct dw_geometry *g, const float *x, const float *taps, int64_t oy,
                     float *y);
    /* NHWC: output row oy of one image, all channels. x is the image
     * (h x w x c), taps the weights as [r][s][k], y the row (ow x k). */
    void (*nhwc_row)(const struct dw_geometry *g, const float *x, const float *taps, int64_t oy,
                     float *y);
    enum cpu_isa isa;
};

/* The kernels for this CPU (the best variant it runs). */
const struct dw_kernels *dw_kernels(void);

/* A given variant, for tests; NULL when this CPU cannot run it. */
const struct dw_kernels *dw_kernels_variant(enum cpu_isa isa);

#endif
