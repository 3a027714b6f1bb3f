/* problem_builder.c -- see problem_builder.h. */
#include "problem_builder.h"

#include <stdlib.h>
#include <string.h>

#include "util/rng.h"

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

void test_data_create(convsel_handle_t h, const struct test_descs *d, unsigned long long seed,
                      struct test_data *t) {
    t->x = malloc(d->x_count * sizeof *t->x);
    t->w = malloc(d->w_count * sizeof *t->w);
    t->y = malloc(d->y_count * sizeof *t->y);
    t->ref = malloc(d->y_count * sizeof *t->ref);
    struct rng g = rng_seed(seed);
    rng_fill(&g, t->x, d->x_count);
    rng_fill(&g, t->w, d->w_count);
    convsel_solver_id_t ref;
    convsel_solver_find(h, "reference", &ref);
    convsel_convolution_forward(h, ref, d->x, t->x, d->w, t->w, d->conv, d->y, t->ref, NULL, 0);
}

void test_data_destroy(struct test_data *t) {
    free(t->x), free(t->w), free(t->y), free(t->ref);
}
