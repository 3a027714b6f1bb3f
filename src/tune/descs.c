/* descs.c -- see descs.h. */
#include "tune/descs.h"

#include <stdlib.h>
#include <string.h>

void descs_destroy(struct descs *d) {
    convsel_tensor_desc_destroy(d->x);
    convsel_tensor_desc_destroy(d->y);
    convsel_filter_desc_destroy(d->w);
    convsel_conv_desc_destroy(d->conv);
    memset(d, 0, sizeof *d);
}

bool descs_create(const struct conv_problem *p, struct descs *d) {
    memset(d, 0, sizeof *d);
    if (convsel_tensor_desc_create(&d->x) || convsel_tensor_desc_create(&d->y) ||
        convsel_filter_desc_create(&d->w) || convsel_conv_desc_create(&d->conv)) {
        descs_destroy(d);
        return false;
    }
    convsel_tensor_desc_set_4d(d->x, p->layout, p->n, p->c, p->h, p->w);
    convsel_tensor_desc_set_4d(d->y, p->layout, p->n, p->k, p->oh, p->ow);
    convsel_filter_desc_set(d->w, p->filter_layout, p->k, p->c / p->groups, p->r, p->s);
    convsel_conv_desc_set(d->conv, p->pad_h, p->pad_w, p->stride_h, p->stride_w, p->dil_h, p->dil_w,
                          p->groups);
    return true;
}

float *random_buffer(size_t count, struct rng *r) {
    float *v = malloc((count ? count : 1) * sizeof *v);
    if (v)
        rng_fill(r, v, count);
    return v;
}
