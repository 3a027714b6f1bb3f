/* onednn_plan.c -- see onednn_plan.h. A plan keeps the weights it
 * reordered only for a caller that declared them constant. */
#include "solvers/onednn_plan.h"

#include <dnnl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/openmp.h"

static dnnl_engine_t engine;
static dnnl_status_t engine_status = dnnl_runtime_error;
static pthread_once_t engine_once = PTHREAD_ONCE_INIT;

/* One CPU engine for the process: engines are thread-safe; streams are
 * created per call. */
static void make_engine(void) {
    engine_status = dnnl_engine_create(&engine, dnnl_cpu, 0);
}

/* The user-side memory descriptors. */
static bool user_mds(const struct conv_problem *p, dnnl_memory_desc_t *x, dnnl_memory_desc_t *w,
                     dnnl_memory_desc_t *y) {
    const bool nhwc = p->layout == CONVSEL_LAYOUT_NHWC;
    const bool krsc = p->filter_layout == CONVSEL_FILTER_KRSC;
    const dnnl_dims_t xd = {p->n, p->c, p->h, p->w}, yd = {p->n, p->k, p->oh, p->ow};
    const dnnl_format_tag_t act = nhwc ? dnnl_nhwc : dnnl_nchw;
    if (dnnl_memory_desc_init_by_tag(x, 4, xd, dnnl_f32, act) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(y, 4, yd, dnnl_f32, act) != dnnl_success)
        return false;
    if (p->groups == 1) {
        const dnnl_dims_t wd = {p->k, p->c, p->r, p->s};
        return dnnl_memory_desc_init_by_tag(w, 4, wd, dnnl_f32, krsc ? dnnl_ohwi : dnnl_oihw) ==
               dnnl_success;
    }
    const dnnl_dims_t wd = {p->groups, p->k / p->groups, p->c / p->groups, p->r, p->s};
    return dnnl_memory_desc_init_by_tag(w, 5, wd, dnnl_f32, krsc ? dnnl_abdec : dnnl_abcde) ==
           dnnl_success;
}

static dnnl_alg_kind_t alg_kind(enum onednn_alg alg) {
    return alg == ONEDNN_DIRECT || alg == ONEDNN_GEMM ? dnnl_convolution_direct
           : alg == ONEDNN_WINOGRAD                   ? dnnl_convolution_winograd
                                                      : dnnl_convolution_auto;
}

/* The convolution's primitive descriptor for p with alg, in the layouts
 * oneDNN prefers; false when oneDNN has no implementation. */
static bool make_pd(const struct conv_problem *p, enum onednn_alg alg, dnnl_primitive_desc_t *pd) {
    dnnl_memory_desc_t ux, uw, uy, ax, aw, ay;
    *pd = NULL;
    pthread_once(&engine_once, make_engine);
    if (engine_status != dnnl_success || !user_mds(p, &ux, &uw, &uy))
        return false;
    const dnnl_dims_t any4x = {p->n, p->c, p->h, p->w}, any4y = {p->n, p->k, p->oh, p->ow};
    if (alg == ONEDNN_GEMM) { /* the caller's layouts, as they are */
        ax = ux, aw = uw, ay = uy;
    } else {
        dnnl_memory_desc_init_by_tag(&ax, 4, any4x, dnnl_f32, dnnl_format_tag_any);
        dnnl_memory_desc_init_by_tag(&ay, 4, any4y, dnnl_f32, dnnl_format_tag_any);
        dnnl_memory_desc_init_by_tag(&aw, uw.ndims, uw.dims, dnnl_f32, dnnl_format_tag_any);
    }
    /* oneDNN counts dilation from 0 and wants the right padding that makes
     * the output size come out exactly (it may be negative). */
    const dnnl_dims_t strides = {p->stride_h, p->stride_w};
    const dnnl_dims_t dilates = {p->dil_h - 1, p->dil_w - 1};
    const dnnl_dims_t pad_l = {p->pad_h, p->pad_w};
    const dnnl_dims_t pad_r = {
        (p->oh - 1) * p->stride_h + (p->r - 1) * p->dil_h + 1 - p->h - p->pad_h,
        (p->ow - 1) * p->stride_w + (p->s - 1) * p->dil_w + 1 - p->w - p->pad_w};
    dnnl_convolution_desc_t cd;
    if (dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, alg_kind(alg), &ax,
                                                   &aw, NULL, &ay, strides, dilates, pad_l,
                                                   pad_r) != dnnl_success ||
        dnnl_primitive_desc_create(pd, &cd, NULL, engine, NULL) != dnnl_success) {
        *pd = NULL;
        return false;
    }
    /* In plain layouts oneDNN falls back to its reference code where its
     * GEMM path does not apply: orders of magnitude slower, never wanted. */
    const char *impl = NULL;
    if (alg == ONEDNN_GEMM &&
        (dnnl_primitive_desc_query(*pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success ||
         impl == NULL || strstr(impl, "ref") != NULL)) {
        dnnl_primitive_desc_destroy(*pd);
        *pd = NULL;
        return false;
    }
    return true;
}

/* ---------------------------- applicability ---------------------------- */

/* Whether oneDNN can run p with alg, reorders between the caller's layouts
 * and its own included (it cannot, for instance, turn KRSC weights into its
 * Winograd layout). */
bool onednn_implements(const struct conv_problem *p, enum onednn_alg alg) {
    dnnl_primitive_desc_t pd;
    dnnl_memory_desc_t user[3];
    if (!make_pd(p, alg, &pd) || !user_mds(p, &user[0], &user[1], &user[2])) {
        dnnl_primitive_desc_destroy(pd);
        return false;
    }
    const dnnl_query_t what[3] = {dnnl_query_src_md, dnnl_query_weights_md, dnnl_query_dst_md};
    bool ok = true;
    for (int i = 0; ok && i < 3; i++) {
        const dnnl_memory_desc_t *inner = dnnl_primitive_desc_query_md(pd, what[i], 0);
        if (inner == NULL) {
            ok = false;
        } else if (!dnnl_memory_desc_equal(inner, &user[i])) {
            dnnl_primitive_desc_t rpd = NULL;
            ok = dnnl_reorder_primitive_desc_create(&rpd, i < 2 ? &user[i] : inner, engine,
                                                    i < 2 ? inner : &user[i], engine,
                                                    NULL) == dnnl_success;
            dnnl_primitive_desc_destroy(rpd);
        }
    }
    dnnl_primitive_desc_destroy(pd);
    return ok;
}

bool onednn_direct_runs_gemm(const struct conv_problem *p) {
    dnnl_primitive_desc_t pd;
    if (!make_pd(p, ONEDNN_DIRECT, &pd))
        return false;
    const char *impl = NULL;
    const bool gemm =
        dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success &&
        impl != NULL && strstr(impl, "gemm") != NULL;
    dnnl_primitive_desc_destroy(pd);
    return gemm;
}

/* ---------------------------- plans ---------------------------- */

struct onednn_plan {
    dnnl_stream_t stream;
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t conv;
    dnnl_memory_t user[3], inner[3]; /* x, w, y; user handles are set per run */
    dnnl_primitive_t reorder[3];
    const float *packed_from; /* inner[1] holds these weights, reordered (constant weights) */
};

void onednn_plan_destroy(struct onednn_plan *c) {
    if (c == NULL)
        return;
    for (int i = 0; i < 3; i++) {
        dnnl_primitive_destroy(c->reorder[i]);
        dnnl_memory_destroy(c->inner[i]);
        dnnl_memory_destroy(c->user[i]);
    }
    dnnl_primitive_destroy(c->conv);
    dnnl_primitive_desc_destroy(c->pd);
    dnnl_stream_destroy(c->stream);
    free(c);
}

/* Sets up inner[i] in the layout oneDNN chose, and the reorder between it
 * and user[i] (to_inner: user -> inner, else inner -> user). */
static bool prepare_arg(struct onednn_plan *c, int i, const dnnl_memory_desc_t *want,
                        bool to_inner) {
    const dnnl_memory_desc_t *have;
    if (want == NULL || dnnl_memory_get_memory_desc(c->user[i], &have) != dnnl_success)
        return false;
    if (dnnl_memory_desc_equal(have, want))
        return true;
    dnnl_primitive_desc_t rpd = NULL;
    const bool ok =
        dnnl_memory_create(&c->inner[i], want, engine, DNNL_MEMORY_ALLOCATE) == dnnl_success &&
        dnnl_reorder_primitive_desc_create(&rpd, to_inner ? have : want, engine,
                                           to_inner ? want : have, engine, NULL) == dnnl_success &&
        dnnl_primitive_create(&c->reorder[i], rpd) == dnnl_success;
    dnnl_primitive_desc_destroy(rpd);
    return ok;
}

static bool run_reorder(struct onednn_plan *c, int i, bool to_inner) {
    if (c->inner[i] == NULL)
        return true;
    const dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, to_inner ? c->user[i] : c->inner[i]},
                                     {DNNL_ARG_TO, to_inner ? c->inner[i] : c->user[i]}};
    return dnnl_primitive_execute(c->reorder[i], c->stream, 2, args) == dnnl_success;
}

struct onednn_plan *onednn_plan_create(const struct conv_problem *p, enum onednn_alg alg,
                                       int num_threads) {
    omp_set_num_threads(num_threads); /* before oneDNN plans its primitives: see the header */
    struct onednn_plan *c = calloc(1, sizeof *c);
    dnnl_memory_desc_t ux, uw, uy;
    if (c == NULL || !make_pd(p, alg, &c->pd) || !user_mds(p, &ux, &uw, &uy) ||
        dnnl_stream_create(&c->stream, engine, dnnl_stream_default_flags) != dnnl_success ||
        dnnl_primitive_create(&c->conv, c->pd) != dnnl_success ||
        dnnl_memory_create(&c->user[0], &ux, engine, DNNL_MEMORY_NONE) != dnnl_success ||
        dnnl_memory_create(&c->user[1], &uw, engine, DNNL_MEMORY_NONE) != dnnl_success ||
        dnnl_memory_create(&c->user[2], &uy, engine, DNNL_MEMORY_NONE) != dnnl_success ||
        !prepare_arg(c, 0, dnnl_primitive_desc_query_md(c->pd, dnnl_query_src_md, 0), true) ||
        !prepare_arg(c, 1, dnnl_primitive_desc_query_md(c->pd, dnnl_query_weights_md, 0), true) ||
        !prepare_arg(c, 2, dnnl_primitive_desc_query_md(c->pd, dnnl_query_dst_md, 0), false)) {
        onednn_plan_destroy(c);
        return NULL;
    }
    return c;
}

convsel_status_t onednn_plan_run(struct onednn_plan *c, const float *x, const float *w, float *y,
                                 int num_threads, bool weights_constant) {
    omp_set_num_threads(num_threads);
    /* Without the promise, or for other weights, reorder them (again). */
    const bool reorder_weights = !weights_constant || c->packed_from != w;
    c->packed_from = NULL; /* until the reorder below has succeeded */
    if (dnnl_memory_set_data_handle(c->user[0], (void *)x) != dnnl_success ||
        dnnl_memory_set_data_handle(c->user[1], (void *)w) != dnnl_success ||
        dnnl_memory_set_data_handle(c->user[2], y) != dnnl_success)
        return CONVSEL_STATUS_INTERNAL;
    const dnnl_exec_arg_t args[3] = {
        {DNNL_ARG_SRC, c->inner[0] ? c->inner[0] : c->user[0]},
        {DNNL_ARG_WEIGHTS, c->inner[1] ? c->inner[1] : c->user[1]},
        {DNNL_ARG_DST, c->inner[2] ? c->inner[2] : c->user[2]},
    };
    openmp_region_starting(); /* the pool's spinners make way: util/openmp.h */
    const bool ran = run_reorder(c, 0, true) && (!reorder_weights || run_reorder(c, 1, true)) &&
                     dnnl_primitive_execute(c->conv, c->stream, 3, args) == dnnl_success &&
                     run_reorder(c, 2, false) && dnnl_stream_wait(c->stream) == dnnl_success;
    openmp_region_ended(); /* its team now spins: util/openmp.h */
    if (!ran)
        return CONVSEL_STATUS_INTERNAL;
    if (weights_constant)
        c->packed_from = w;
    return CONVSEL_STATUS_SUCCESS;
}

size_t onednn_plan_bytes(const struct onednn_plan *c) {
    size_t bytes = sizeof *c;
    for (int i = 0; i < 3; i++) {
        const dnnl_memory_desc_t *md;
        if (c->inner[i] && dnnl_memory_get_memory_desc(c->inner[i], &md) == dnnl_success)
            bytes += dnnl_memory_desc_get_size(md);
    }
    return bytes;
}

const char *onednn_plan_impl(const struct onednn_plan *c) {
    const char *name = NULL;
    if (dnnl_primitive_desc_query(c->pd, dnnl_query_impl_info_str, 0, &name) != dnnl_success)
        return "?";
    return name;
}
