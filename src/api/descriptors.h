/* descriptors.h -- the descriptor structs behind the opaque public types,
 * and the one function that turns descriptors into a validated problem. */
#ifndef CONVSEL_API_DESCRIPTORS_H
#define CONVSEL_API_DESCRIPTORS_H

#include "convsel/convsel.h"
#include "core/problem.h"

struct convsel_tensor_desc {
    convsel_layout_t layout;
    int64_t dims[4];   /* indexed by DIM_* */
    int64_t stride[4]; /* all 0: packed in `layout` */
};

struct convsel_filter_desc {
    convsel_filter_layout_t layout;
    int64_t k, c, r, s;
};

struct convsel_conv_desc {
    int64_t pad_h, pad_w, stride_h, stride_w, dil_h, dil_w, groups;
};

/* Validates x, w and conv (and y when non-NULL: layout, shape and strides)
 * together and fills *p. On failure records a message naming the field on h
 * and returns BAD_PARAM. h must be non-NULL. */
convsel_status_t problem_from_descriptors(convsel_handle_t h, const_convsel_tensor_desc_t x,
                                          const_convsel_filter_desc_t w,
                                          const_convsel_conv_desc_t conv,
                                          const_convsel_tensor_desc_t y, struct conv_problem *p);

#endif /* CONVSEL_API_DESCRIPTORS_H */
