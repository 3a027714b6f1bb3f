/* problem_builder.c -- see problem_builder.h. */
#include "problem_builder.h"

#include <string.h>

struct test_problem test_problem_default(void) {
    return (struct test_problem){
        .n = 1,
        .c = 1,
        .h = 5,
        .w = 5,
        .k = 1,
        .r = 3,
        .s = 3,
        .stride_h = 1,
        .stride_w = 1,
        .dil_h = 1,
        .dil_w = 1,
        .groups = 1,
        .layout = CONVSEL_LAYOUT_NCHW,
        .filter_layout = CONVSEL_FILTER_KCRS,
    };
}

convsel_status_t test_descs_create(convsel_handle_t h, const struct test_problem *tp,
                                   struct test_descs *d) {
    memset(d, 0, sizeof *d);
    convsel_tensor_desc_create(&d->x);
    convsel_tensor_desc_create(&d->y);
    convsel_filter_desc_create(&d->w);
    convsel_conv_desc_create(&d->conv);
    convsel_tensor_desc_set_4d(d->x, tp->layout, tp->n, tp->c, tp->h, tp->w);
    const int64_t wc = tp->groups > 0 ? tp->c / tp->groups : tp->c;
    convsel_filter_desc_set(d->w, tp->filter_layout, tp->k, wc, tp->r, tp->s);
    convsel_conv_desc_set(d->conv, tp->pad_h, tp->pad_w, tp->stride_h, tp->stride_w, tp->dil_h,
                          tp->dil_w, tp->groups);
    int64_t n, k;
    convsel_status_t st =
        convsel_get_conv_output_shape(h, d->x, d->w, d->conv, &n, &k, &d->oh, &d->ow);
    if (st == CONVSEL_STATUS_SUCCESS) {
        convsel_tensor_desc_set_4d(d->y, tp->layout, n, k, d->oh, d->ow);
        d->x_count = (size_t)(tp->n * tp->c * tp->h * tp->w);
        d->w_count = (size_t)(tp->k * wc * tp->r * tp->s);
        d->y_count = (size_t)(n * k * d->oh * d->ow);
    }
    return st;
}

void test_descs_destroy(struct test_descs *d) {
    convsel_tensor_desc_destroy(d->x);
    convsel_tensor_desc_destroy(d->y);
    convsel_filter_desc_destroy(d->w);
    convsel_conv_desc_destroy(d->conv);
}
