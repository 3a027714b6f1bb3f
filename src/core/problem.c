/* problem.c -- validation of a convolution problem and its derived sizes.
 *
 * This is the one place where sizes from the outside world are checked, so
 * every later computation (offsets, spans, workspace sizes) can assume that
 * all dimensions are in [1, CONV_DIM_MAX] and that every product it forms
 * from them fits in int64_t and size_t.
 */
#include "core/problem.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Each dimension, pad, stride and dilation is at most this. Bounding them
 * keeps sums like h + 2*pad and dil*(r-1)+1 far from overflow. */
#define CONV_DIM_MAX INT64_C(2147483647)

static convsel_status_t fail(char *err, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static convsel_status_t fail(char *err, size_t cap, const char *fmt, ...) {
    if (err != NULL && cap > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, cap, fmt, ap);
        va_end(ap);
    }
    return CONVSEL_STATUS_BAD_PARAM;
}

static bool check_range(int64_t v, int64_t lo, const char *field, char *err, size_t cap) {
    if (v < lo) {
        fail(err, cap, "%s = %" PRId64 ": must be >= %" PRId64, field, v, lo);
        return false;
    }
    if (v > CONV_DIM_MAX) {
        fail(err, cap, "%s = %" PRId64 ": must be <= %" PRId64, field, v, CONV_DIM_MAX);
        return false;
    }
    return true;
}

void problem_set_packed_strides(struct conv_problem *p) {
    if (p->layout == CONVSEL_LAYOUT_NCHW) {
        p->x_stride[DIM_W] = 1;
        p->x_stride[DIM_H] = p->w;
        p->x_stride[DIM_C] = p->h * p->w;
        p->x_stride[DIM_N] = p->c * p->h * p->w;
        p->y_stride[DIM_W] = 1;
        p->y_stride[DIM_H] = p->ow;
        p->y_stride[DIM_C] = p->oh * p->ow;
        p->y_stride[DIM_N] = p->k * p->oh * p->ow;
    } else {
        p->x_stride[DIM_C] = 1;
        p->x_stride[DIM_W] = p->c;
        p->x_stride[DIM_H] = p->w * p->c;
        p->x_stride[DIM_N] = p->h * p->w * p->c;
        p->y_stride[DIM_C] = 1;
        p->y_stride[DIM_W] = p->k;
        p->y_stride[DIM_H] = p->ow * p->k;
        p->y_stride[DIM_N] = p->oh * p->ow * p->k;
    }
}

/* Checks that strides follow the layout's order without overlap and computes
 * the span (largest offset + 1). dims is indexed by DIM_*. */
static bool check_strides(const char *tensor, convsel_layout_t layout, const int64_t dims[4],
                          const int64_t stride[4], size_t *span_out, char *err, size_t cap) {
    static const char *const names[4] = {"stride_n", "stride_c", "stride_h", "stride_w"};
    /* Innermost to outermost dimension for each layout. */
    static const int order[2][4] = {{DIM_W, DIM_H, DIM_C, DIM_N}, {DIM_C, DIM_W, DIM_H, DIM_N}};
    const int *ord = order[layout == CONVSEL_LAYOUT_NHWC];
    int64_t need = 1; /* the smallest stride the next dimension may have */
    for (int i = 0; i < 4; i++) {
        const int d = ord[i];
        if (stride[d] < need) {
            fail(err, cap, "%s.%s = %" PRId64 ": must be >= %" PRId64 " for a %s tensor", tensor,
                 names[d], stride[d], need, layout == CONVSEL_LAYOUT_NCHW ? "NCHW" : "NHWC");
            return false;
        }
        if (__builtin_mul_overflow(dims[d], stride[d], &need)) {
            fail(err, cap, "%s: size overflows (%s = %" PRId64 ")", tensor, names[d], stride[d]);
            return false;
        }
    }
    /* need == dims[outer] * stride[outer] bounds every offset, and the byte
     * count of the span must fit in size_t and ptrdiff_t. */
    int64_t bytes;
    if (__builtin_mul_overflow(need, (int64_t)sizeof(float), &bytes) ||
        (uint64_t)bytes > (uint64_t)PTRDIFF_MAX || (uint64_t)bytes > (uint64_t)SIZE_MAX) {
        fail(err, cap, "%s: size overflows (%" PRId64 " elements)", tensor, need);
        return false;
    }
    int64_t span = 1;
    for (int d = 0; d < 4; d++)
        span += (dims[d] - 1) * stride[d];
    *span_out = (size_t)span;
    return true;
}

static bool all_zero(const int64_t v[4]) {
    return v[0] == 0 && v[1] == 0 && v[2] == 0 && v[3] == 0;
}

/* Output length of one spatial dimension, or 0 when the filter does not fit. */
static int64_t out_len(int64_t in, int64_t pad, int64_t taps, int64_t dil, int64_t stride) {
    const int64_t padded = in + 2 * pad;
    const int64_t extent = dil * (taps - 1) + 1;
    if (padded < extent)
        return 0;
    return (padded - extent) / stride + 1;
}

convsel_status_t problem_validate(struct conv_problem *p, char *err, size_t cap) {
    if (p->layout != CONVSEL_LAYOUT_NCHW && p->layout != CONVSEL_LAYOUT_NHWC)
        return fail(err, cap, "x_desc.layout = %d: unknown layout", (int)p->layout);
    if (p->filter_layout != CONVSEL_FILTER_KCRS && p->filter_layout != CONVSEL_FILTER_KRSC)
        return fail(err, cap, "w_desc.layout = %d: unknown filter layout", (int)p->filter_layout);

    const struct {
        int64_t v;
        int64_t lo;
        const char *name;
    } fields[] = {
        {p->n, 1, "x_desc.n"},
        {p->c, 1, "x_desc.c"},
        {p->h, 1, "x_desc.h"},
        {p->w, 1, "x_desc.w"},
        {p->k, 1, "w_desc.k"},
        {p->r, 1, "w_desc.r"},
        {p->s, 1, "w_desc.s"},
        {p->pad_h, 0, "conv_desc.pad_h"},
        {p->pad_w, 0, "conv_desc.pad_w"},
        {p->stride_h, 1, "conv_desc.stride_h"},
        {p->stride_w, 1, "conv_desc.stride_w"},
        {p->dil_h, 1, "conv_desc.dilation_h"},
        {p->dil_w, 1, "conv_desc.dilation_w"},
        {p->groups, 1, "conv_desc.groups"},
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (!check_range(fields[i].v, fields[i].lo, fields[i].name, err, cap))
            return CONVSEL_STATUS_BAD_PARAM;

    if (p->c % p->groups != 0)
        return fail(err, cap, "conv_desc.groups = %" PRId64 ": must divide x_desc.c = %" PRId64,
                    p->groups, p->c);
    if (p->k % p->groups != 0)
        return fail(err, cap, "conv_desc.groups = %" PRId64 ": must divide w_desc.k = %" PRId64,
                    p->groups, p->k);

    p->oh = out_len(p->h, p->pad_h, p->r, p->dil_h, p->stride_h);
    p->ow = out_len(p->w, p->pad_w, p->s, p->dil_w, p->stride_w);
    if (p->oh < 1)
        return fail(err, cap,
                    "output height = 0: w_desc.r = %" PRId64 " (dilation %" PRId64
                    ") does not fit x_desc.h = %" PRId64 " padded by conv_desc.pad_h = %" PRId64,
                    p->r, p->dil_h, p->h, p->pad_h);
    if (p->ow < 1)
        return fail(err, cap,
                    "output width = 0: w_desc.s = %" PRId64 " (dilation %" PRId64
                    ") does not fit x_desc.w = %" PRId64 " padded by conv_desc.pad_w = %" PRId64,
                    p->s, p->dil_w, p->w, p->pad_w);

    int64_t w_elems, w_bytes;
    if (__builtin_mul_overflow(p->k, p->c / p->groups, &w_elems) ||
        __builtin_mul_overflow(w_elems, p->r, &w_elems) ||
        __builtin_mul_overflow(w_elems, p->s, &w_elems) ||
        __builtin_mul_overflow(w_elems, (int64_t)sizeof(float), &w_bytes) ||
        (uint64_t)w_bytes > (uint64_t)PTRDIFF_MAX)
        return fail(err, cap, "w_desc: size overflows (k*c*r*s too large)");
    p->w_elems = (size_t)w_elems;

    /* All-zero strides mean "packed". Packed strides are products of the
     * dimensions, so check the element counts before forming them. */
    const int64_t xd[4] = {p->n, p->c, p->h, p->w};
    const int64_t yd[4] = {p->n, p->k, p->oh, p->ow};
    const bool x_packed = all_zero(p->x_stride), y_packed = all_zero(p->y_stride);
    if (x_packed || y_packed) {
        int64_t cnt;
        if (__builtin_mul_overflow(p->n, p->c, &cnt) || __builtin_mul_overflow(cnt, p->h, &cnt) ||
            __builtin_mul_overflow(cnt, p->w, &cnt))
            return fail(err, cap, "x_desc: size overflows (n*c*h*w too large)");
        if (__builtin_mul_overflow(p->n, p->k, &cnt) || __builtin_mul_overflow(cnt, p->oh, &cnt) ||
            __builtin_mul_overflow(cnt, p->ow, &cnt))
            return fail(err, cap, "y_desc: size overflows (n*k*oh*ow too large)");
        struct conv_problem packed = *p;
        problem_set_packed_strides(&packed);
        if (x_packed)
            memcpy(p->x_stride, packed.x_stride, sizeof p->x_stride);
        if (y_packed)
            memcpy(p->y_stride, packed.y_stride, sizeof p->y_stride);
    }
    if (!check_strides("x_desc", p->layout, xd, p->x_stride, &p->x_span, err, cap))
        return CONVSEL_STATUS_BAD_PARAM;
    if (!check_strides("y_desc", p->layout, yd, p->y_stride, &p->y_span, err, cap))
        return CONVSEL_STATUS_BAD_PARAM;

    struct conv_problem packed = *p;
    problem_set_packed_strides(&packed);
    p->packed = true;
    for (int d = 0; d < 4; d++)
        if (p->x_stride[d] != packed.x_stride[d] || p->y_stride[d] != packed.y_stride[d])
            p->packed = false;
    return CONVSEL_STATUS_SUCCESS;
}

double problem_flops(const struct conv_problem *p) {
    return 2.0 * (double)p->n * (double)p->k * (double)p->oh * (double)p->ow *
           (double)(p->c / p->groups) * (double)p->r * (double)p->s;
}
