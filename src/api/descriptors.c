/* descriptors.c -- descriptor lifetime and setters, and the translation of
 * descriptors into a validated conv_problem. Setters only store values;
 * problem_from_descriptors judges them, with a handle to report on. */
#include "api/descriptors.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "api/handle.h"

static bool layout_known(convsel_layout_t l) {
    return l == CONVSEL_LAYOUT_NCHW || l == CONVSEL_LAYOUT_NHWC;
}

static const char *layout_name(convsel_layout_t l) {
    return l == CONVSEL_LAYOUT_NCHW ? "NCHW" : "NHWC";
}

/* Allocates a zeroed descriptor of `size` bytes into *out. */
static convsel_status_t create_desc(void **out, size_t size) {
    if (out == NULL)
        return CONVSEL_STATUS_BAD_PARAM;
    *out = calloc(1, size);
    return *out ? CONVSEL_STATUS_SUCCESS : CONVSEL_STATUS_ALLOC_FAILED;
}

/* ---------------------------- tensor ---------------------------- */

convsel_status_t convsel_tensor_desc_create(convsel_tensor_desc_t *desc_out) {
    return create_desc((void **)desc_out, sizeof **desc_out);
}

void convsel_tensor_desc_destroy(convsel_tensor_desc_t desc) {
    free(desc);
}

convsel_status_t convsel_tensor_desc_set_4d(convsel_tensor_desc_t d, convsel_layout_t layout,
                                            int64_t n, int64_t c, int64_t h, int64_t w) {
    return convsel_tensor_desc_set_4d_strided(d, layout, n, c, h, w, 0, 0, 0, 0);
}

convsel_status_t convsel_tensor_desc_set_4d_strided(convsel_tensor_desc_t d,
                                                    convsel_layout_t layout, int64_t n, int64_t c,
                                                    int64_t h, int64_t w, int64_t sn, int64_t sc,
                                                    int64_t sh, int64_t sw) {
    if (d == NULL || !layout_known(layout))
        return CONVSEL_STATUS_BAD_PARAM;
    d->layout = layout;
    d->dims[DIM_N] = n;
    d->dims[DIM_C] = c;
    d->dims[DIM_H] = h;
    d->dims[DIM_W] = w;
    d->stride[DIM_N] = sn;
    d->stride[DIM_C] = sc;
    d->stride[DIM_H] = sh;
    d->stride[DIM_W] = sw;
    return CONVSEL_STATUS_SUCCESS;
}

static void put(int64_t *dst, int64_t v) {
    if (dst != NULL)
        *dst = v;
}

convsel_status_t convsel_tensor_desc_get_4d(const_convsel_tensor_desc_t d,
                                            convsel_layout_t *layout_out, int64_t *n_out,
                                            int64_t *c_out, int64_t *h_out, int64_t *w_out,
                                            int64_t *sn_out, int64_t *sc_out, int64_t *sh_out,
                                            int64_t *sw_out) {
    if (d == NULL)
        return CONVSEL_STATUS_BAD_PARAM;
    if (layout_out != NULL)
        *layout_out = d->layout;
    put(n_out, d->dims[DIM_N]);
    put(c_out, d->dims[DIM_C]);
    put(h_out, d->dims[DIM_H]);
    put(w_out, d->dims[DIM_W]);
    put(sn_out, d->stride[DIM_N]);
    put(sc_out, d->stride[DIM_C]);
    put(sh_out, d->stride[DIM_H]);
    put(sw_out, d->stride[DIM_W]);
    return CONVSEL_STATUS_SUCCESS;
}

/* ---------------------------- filter ---------------------------- */

convsel_status_t convsel_filter_desc_create(convsel_filter_desc_t *desc_out) {
    return create_desc((void **)desc_out, sizeof **desc_out);
}

void convsel_filter_desc_destroy(convsel_filter_desc_t desc) {
    free(desc);
}

convsel_status_t convsel_filter_desc_set(convsel_filter_desc_t d, convsel_filter_layout_t layout,
                                         int64_t k, int64_t c, int64_t r, int64_t s) {
    if (d == NULL || (layout != CONVSEL_FILTER_KCRS && layout != CONVSEL_FILTER_KRSC))
        return CONVSEL_STATUS_BAD_PARAM;
    d->layout = layout;
    d->k = k;
    d->c = c;
    d->r = r;
    d->s = s;
    return CONVSEL_STATUS_SUCCESS;
}

convsel_status_t convsel_filter_desc_get(const_convsel_filter_desc_t d,
                                         convsel_filter_layout_t *layout_out, int64_t *k_out,
                                         int64_t *c_out, int64_t *r_out, int64_t *s_out) {
    if (d == NULL)
        return CONVSEL_STATUS_BAD_PARAM;
    if (layout_out != NULL)
        *layout_out = d->layout;
    put(k_out, d->k);
    put(c_out, d->c);
    put(r_out, d->r);
    put(s_out, d->s);
    return CONVSEL_STATUS_SUCCESS;
}

/* ---------------------------- convolution ---------------------------- */

convsel_status_t convsel_conv_desc_create(convsel_conv_desc_t *desc_out) {
    const convsel_status_t st = create_desc((void **)desc_out, sizeof **desc_out);
    if (st == CONVSEL_STATUS_SUCCESS)
        (*desc_out)->stride_h = (*desc_out)->stride_w = (*desc_out)->dil_h = (*desc_out)->dil_w =
            (*desc_out)->groups = 1;
    return st;
}

void convsel_conv_desc_destroy(convsel_conv_desc_t desc) {
    free(desc);
}

convsel_status_t convsel_conv_desc_set(convsel_conv_desc_t d, int64_t pad_h, int64_t pad_w,
                                       int64_t stride_h, int64_t stride_w, int64_t dil_h,
                                       int64_t dil_w, int64_t groups) {
    if (d == NULL)
        return CONVSEL_STATUS_BAD_PARAM;
    d->pad_h = pad_h;
    d->pad_w = pad_w;
    d->stride_h = stride_h;
    d->stride_w = stride_w;
    d->dil_h = dil_h;
    d->dil_w = dil_w;
    d->groups = groups;
    return CONVSEL_STATUS_SUCCESS;
}

convsel_status_t convsel_conv_desc_get(const_convsel_conv_desc_t d, int64_t *pad_h_out,
                                       int64_t *pad_w_out, int64_t *stride_h_out,
                                       int64_t *stride_w_out, int64_t *dil_h_out,
                                       int64_t *dil_w_out, int64_t *groups_out) {
    if (d == NULL)
        return CONVSEL_STATUS_BAD_PARAM;
    put(pad_h_out, d->pad_h);
    put(pad_w_out, d->pad_w);
    put(stride_h_out, d->stride_h);
    put(stride_w_out, d->stride_w);
    put(dil_h_out, d->dil_h);
    put(dil_w_out, d->dil_w);
    put(groups_out, d->groups);
    return CONVSEL_STATUS_SUCCESS;
}

/* ---------------------------- problem ---------------------------- */

static bool strided(const_convsel_tensor_desc_t d) {
    return d->stride[0] || d->stride[1] || d->stride[2] || d->stride[3];
}

convsel_status_t problem_from_descriptors(convsel_handle_t h, const_convsel_tensor_desc_t x,
                                          const_convsel_filter_desc_t w,
                                          const_convsel_conv_desc_t conv,
                                          const_convsel_tensor_desc_t y, struct conv_problem *p) {
    const convsel_status_t bad = CONVSEL_STATUS_BAD_PARAM;
    if (x == NULL)
        return handle_fail(h, bad, "x_desc is NULL");
    if (w == NULL)
        return handle_fail(h, bad, "w_desc is NULL");
    if (conv == NULL)
        return handle_fail(h, bad, "conv_desc is NULL");

    memset(p, 0, sizeof *p);
    p->n = x->dims[DIM_N];
    p->c = x->dims[DIM_C];
    p->h = x->dims[DIM_H];
    p->w = x->dims[DIM_W];
    p->k = w->k;
    p->r = w->r;
    p->s = w->s;
    p->pad_h = conv->pad_h;
    p->pad_w = conv->pad_w;
    p->stride_h = conv->stride_h;
    p->stride_w = conv->stride_w;
    p->dil_h = conv->dil_h;
    p->dil_w = conv->dil_w;
    p->groups = conv->groups;
    p->layout = x->layout;
    p->filter_layout = w->layout;
    if (strided(x))
        memcpy(p->x_stride, x->stride, sizeof p->x_stride);

    char err[PROBLEM_ERROR_MAX];
    if (problem_validate(p, err, sizeof err) != CONVSEL_STATUS_SUCCESS)
        return handle_fail(h, bad, "%s", err);
    if (w->c != p->c / p->groups)
        return handle_fail(h, bad,
                           "w_desc.c = %" PRId64
                           ": must equal x_desc.c / conv_desc.groups = %" PRId64 " / %" PRId64
                           " = %" PRId64,
                           w->c, p->c, p->groups, p->c / p->groups);
    if (y == NULL)
        return CONVSEL_STATUS_SUCCESS;

    if (y->layout != x->layout)
        return handle_fail(h, bad, "y_desc.layout = %s: must equal x_desc.layout = %s",
                           layout_name(y->layout), layout_name(x->layout));
    const struct {
        const char *field;
        int64_t got, want;
        const char *source;
    } dims[] = {
        {"y_desc.n", y->dims[DIM_N], p->n, "x_desc.n"},
        {"y_desc.c", y->dims[DIM_C], p->k, "w_desc.k"},
        {"y_desc.h", y->dims[DIM_H], p->oh, "the output height"},
        {"y_desc.w", y->dims[DIM_W], p->ow, "the output width"},
    };
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
        if (dims[i].got != dims[i].want)
            return handle_fail(h, bad, "%s = %" PRId64 ": must equal %s = %" PRId64, dims[i].field,
                               dims[i].got, dims[i].source, dims[i].want);
    if (strided(y)) {
        memcpy(p->y_stride, y->stride, sizeof p->y_stride);
        if (problem_validate(p, err, sizeof err) != CONVSEL_STATUS_SUCCESS)
            return handle_fail(h, bad, "%s", err);
    }
    return CONVSEL_STATUS_SUCCESS;
}
