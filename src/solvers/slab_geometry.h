/* slab_geometry.h -- a problem's planar geometry in the form the slab
 * kernels take (kernels/depthwise_kernels.h), for the solvers that pack
 * input planes into slabs: depthwise, direct and direct_blocked. Kernels
 * never see problems, so the translation lives here, once. */
#ifndef CONVSEL_SOLVERS_SLAB_GEOMETRY_H
#define CONVSEL_SOLVERS_SLAB_GEOMETRY_H

#include "core/problem.h"
#include "solvers/kernels/depthwise_kernels.h"

/* One plane of p: sizes, filter, stride, dilation and padding; the NHWC
 * channel fields (c, k, mult) set to one plane's (1, 1, 1). */
static inline struct dw_geometry slab_geometry(const struct conv_problem *p) {
    return (struct dw_geometry){.h = p->h,
                                .w = p->w,
                                .r = p->r,
                                .s = p->s,
                                .ow = p->ow,
                                .stride_h = p->stride_h,
                                .stride_w = p->stride_w,
                                .dil_h = p->dil_h,
                                .dil_w = p->dil_w,
                                .pad_h = p->pad_h,
                                .pad_w = p->pad_w,
                                .c = 1,
                                .k = 1,
                                .mult = 1};
}

#endif
