/* onednn_conv.c -- solvers backed by oneDNN 2.6 (Debian libdnnl-dev):
 * direct and Winograd F(4x4,3x3). oneDNN computes in its own blocked
 * layouts; the reorders from the caller's NCHW/NHWC tensors and back are
 * part of each call (as an application with an NCHW API would pay them),
 * and so is packing the weights: nothing is cached in convsel between
 * calls. Rebuilding the primitive each call is cheap because oneDNN keeps
 * its own primitive cache. oneDNN here threads with OpenMP; the handle's
 * thread count is applied per call with omp_set_num_threads, which affects
 * only the calling thread's parallel regions. */
#include <dnnl.h>
#include <pthread.h>
#include <string.h>

#include "solvers/solver.h"

/* libgomp's C ABI; declared here so no OpenMP compiler support is needed. */
void omp_set_num_threads(int n);

static dnnl_engine_t engine;
static dnnl_status_t engine_status = dnnl_runtime_error;
static pthread_once_t engine_once = PTHREAD_ONCE_INIT;

/* One CPU engine for the process: engines are thread-safe; streams are
 * created per call. */
static void make_engine(void) { engine_status = dnnl_engine_create(&engine, dnnl_cpu, 0); }


static size_t no_workspace(const struct conv_problem *p) {
    (void)p;
    return 0;
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

/* Everything one call creates, released in one place. */
struct call {
    dnnl_stream_t stream;
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t conv;
    dnnl_memory_t user[3], inner[3]; /* x, w, y */
    dnnl_primitive_t reorder[3];
};

static void release(struct call *c) {
    for (int i = 0; i < 3; i++) {
        dnnl_primitive_destroy(c->reorder[i]);
        dnnl_memory_destroy(c->inner[i]);
        dnnl_memory_destroy(c->user[i]);
    }
    dnnl_primitive_destroy(c->conv);
    dnnl_primitive_desc_destroy(c->pd);
    dnnl_stream_destroy(c->stream);
}

/* Sets up inner[i] in the layout oneDNN chose, and the reorder between it
 * and user[i] (to_inner: user -> inner, else inner -> user). */
static bool prepare_arg(struct call *c, int i, const dnnl_memory_desc_t *want, bool to_inner) {
    const dnnl_memory_desc_t *have;
    if (dnnl_memory_get_memory_desc(c->user[i], &have) != dnnl_success)
        return false;
    if (dnnl_memory_desc_equal(have, want)) {
        c->inner[i] = NULL;
        return true;
    }
    dnnl_primitive_desc_t rpd = NULL;
    bool ok = dnnl_memory_create(&c->inner[i], want, engine, DNNL_MEMORY_ALLOCATE) ==
                  dnnl_success &&
              dnnl_reorder_primitive_desc_create(&rpd, to_inner ? have : want, engine,
                                                 to_inner ? want : have, engine, NULL) ==
                  dnnl_success &&
              dnnl_primitive_create(&c->reorder[i], rpd) == dnnl_success;
    dnnl_primitive_desc_destroy(rpd);
    return ok;
}

static bool run_reorder(struct call *c, int i, bool to_inner) {
    if (c->inner[i] == NULL)
        return true;
    const dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, to_inner ? c->user[i] : c->inner[i]},
                                     {DNNL_ARG_TO, to_inner ? c->inner[i] : c->user[i]}};
    return dnnl_primitive_execute(c->reorder[i], c->stream, 2, args) == dnnl_success;
}

/* The convolution's primitive descriptor for p with alg, in the layouts
 * oneDNN prefers; false when oneDNN has no implementation. */
static bool make_pd(const struct conv_problem *p, dnnl_alg_kind_t alg, dnnl_primitive_desc_t *pd) {
    dnnl_memory_desc_t ux, uw, uy, ax, aw, ay;
    *pd = NULL;
    pthread_once(&engine_once, make_engine);
    if (engine_status != dnnl_success || !user_mds(p, &ux, &uw, &uy))
        return false;
    const dnnl_dims_t any4x = {p->n, p->c, p->h, p->w}, any4y = {p->n, p->k, p->oh, p->ow};
    dnnl_memory_desc_init_by_tag(&ax, 4, any4x, dnnl_f32, dnnl_format_tag_any);
    dnnl_memory_desc_init_by_tag(&ay, 4, any4y, dnnl_f32, dnnl_format_tag_any);
    dnnl_memory_desc_init_by_tag(&aw, uw.ndims, uw.dims, dnnl_f32, dnnl_format_tag_any);
    /* oneDNN counts dilation from 0 and wants the right padding that makes
     * the output size come out exactly (it may be negative). */
    const dnnl_dims_t strides = {p->stride_h, p->stride_w};
    const dnnl_dims_t dilates = {p->dil_h - 1, p->dil_w - 1};
    const dnnl_dims_t pad_l = {p->pad_h, p->pad_w};
    const dnnl_dims_t pad_r = {(p->oh - 1) * p->stride_h + (p->r - 1) * p->dil_h + 1 - p->h - p->pad_h,
                               (p->ow - 1) * p->stride_w + (p->s - 1) * p->dil_w + 1 - p->w - p->pad_w};
    dnnl_convolution_desc_t cd;
    return dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, alg, &ax, &aw,
                                                      NULL, &ay, strides, dilates, pad_l,
                                                      pad_r) == dnnl_success &&
           dnnl_primitive_desc_create(pd, &cd, NULL, engine, NULL) == dnnl_success;
}

/* ---------------------------- applicability ---------------------------- */

/* Whether oneDNN can run p with alg, reorders between the caller's layouts
 * and its own included (it cannot, for instance, turn KRSC weights into its
 * Winograd layout). */
static bool probe(const struct conv_problem *p, dnnl_alg_kind_t alg) {
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

/* Whether oneDNN implements a problem is decided by oneDNN: creating the
 * descriptor is the only reliable test, and it costs 35 us (direct) to
 * 190 us (Winograd) here, so each answer is remembered per problem key
 * and algorithm. The table is small and bounded; when it is full, answers
 * are simply not remembered. Not a hot path: a mutex guards it. */
#define MEMO_SIZE 1024

static struct {
    char key[CONVSEL_PROBLEM_KEY_MAX];
    int alg;
    bool applicable;
} memo[MEMO_SIZE];
static int memo_used;
static pthread_mutex_t memo_lock = PTHREAD_MUTEX_INITIALIZER;

static bool onednn_implements(const struct conv_problem *p, dnnl_alg_kind_t alg) {
    char key[CONVSEL_PROBLEM_KEY_MAX];
    problem_key_format(p, key, sizeof key);
    pthread_mutex_lock(&memo_lock);
    for (int i = 0; i < memo_used; i++)
        if (memo[i].alg == (int)alg && strcmp(memo[i].key, key) == 0) {
            const bool a = memo[i].applicable;
            pthread_mutex_unlock(&memo_lock);
            return a;
        }
    pthread_mutex_unlock(&memo_lock);
    const bool applicable = probe(p, alg);
    pthread_mutex_lock(&memo_lock);
    if (memo_used < MEMO_SIZE) {
        memcpy(memo[memo_used].key, key, sizeof key);
        memo[memo_used].alg = (int)alg;
        memo[memo_used++].applicable = applicable;
    }
    pthread_mutex_unlock(&memo_lock);
    return applicable;
}

static bool direct_applicable(const struct conv_problem *p, const char **reason) {
    if (!p->packed) {
        if (reason)
            *reason = "oneDNN solvers need packed x and y tensors";
        return false;
    }
    if (!onednn_implements(p, dnnl_convolution_direct)) {
        if (reason)
            *reason = "oneDNN has no direct implementation for this problem";
        return false;
    }
    return true;
}

static bool winograd_applicable(const struct conv_problem *p, const char **reason) {
    if (!p->packed || p->r != 3 || p->s != 3 || p->stride_h != 1 || p->stride_w != 1 ||
        p->dil_h != 1 || p->dil_w != 1 || p->groups != 1) {
        if (reason)
            *reason = "oneDNN Winograd needs packed tensors, 3x3, stride 1, dilation 1, groups 1";
        return false;
    }
    if (!onednn_implements(p, dnnl_convolution_winograd)) {
        if (reason)
            *reason = "oneDNN has no Winograd implementation for this problem (it needs, among "
                      "others, channel counts that fill its vector blocks)";
        return false;
    }
    return true;
}

/* ---------------------------- running ---------------------------- */

static convsel_status_t run_with(const struct conv_run_args *a, dnnl_alg_kind_t alg) {
    const struct conv_problem *p = a->p;
    omp_set_num_threads(a->num_threads);
    struct call c;
    memset(&c, 0, sizeof c);
    convsel_status_t st = CONVSEL_STATUS_INTERNAL;
    dnnl_memory_desc_t ux, uw, uy;
    if (!make_pd(p, alg, &c.pd)) {
        st = CONVSEL_STATUS_NOT_SUPPORTED;
        goto done;
    }
    user_mds(p, &ux, &uw, &uy);
    if (dnnl_stream_create(&c.stream, engine, dnnl_stream_default_flags) != dnnl_success ||
        dnnl_primitive_create(&c.conv, c.pd) != dnnl_success ||
        dnnl_memory_create(&c.user[0], &ux, engine, (void *)a->x) != dnnl_success ||
        dnnl_memory_create(&c.user[1], &uw, engine, (void *)a->w) != dnnl_success ||
        dnnl_memory_create(&c.user[2], &uy, engine, a->y) != dnnl_success ||
        !prepare_arg(&c, 0, dnnl_primitive_desc_query_md(c.pd, dnnl_query_src_md, 0), true) ||
        !prepare_arg(&c, 1, dnnl_primitive_desc_query_md(c.pd, dnnl_query_weights_md, 0), true) ||
        !prepare_arg(&c, 2, dnnl_primitive_desc_query_md(c.pd, dnnl_query_dst_md, 0), false))
        goto done;
    const dnnl_exec_arg_t args[3] = {
        {DNNL_ARG_SRC, c.inner[0] ? c.inner[0] : c.user[0]},
        {DNNL_ARG_WEIGHTS, c.inner[1] ? c.inner[1] : c.user[1]},
        {DNNL_ARG_DST, c.inner[2] ? c.inner[2] : c.user[2]},
    };
    if (!run_reorder(&c, 0, true) || !run_reorder(&c, 1, true) ||
        dnnl_primitive_execute(c.conv, c.stream, 3, args) != dnnl_success ||
        !run_reorder(&c, 2, false) || dnnl_stream_wait(c.stream) != dnnl_success)
        goto done;
    st = CONVSEL_STATUS_SUCCESS;
done:
    release(&c);
    return st;
}

static convsel_status_t direct_run(const struct conv_run_args *a) {
    return run_with(a, dnnl_convolution_direct);
}

static convsel_status_t winograd_run(const struct conv_run_args *a) {
    return run_with(a, dnnl_convolution_winograd);
}

const struct solver solver_onednn_direct = {
    .name = "onednn_direct",
    .description = "oneDNN direct convolution, reorders to/from the caller's layout included",
    /* fp32 accumulation in blocked order, like the GEMM solvers */
    .tolerance = 1e-4,
    .is_applicable = direct_applicable,
    .workspace_size = no_workspace,
    .run = direct_run,
};

const struct solver solver_onednn_winograd = {
    .name = "onednn_winograd",
    .description = "oneDNN Winograd F(4x4,3x3), reorders to/from the caller's layout included",
    /* Winograd F(4,3) transforms amplify rounding: oneDNN's own tests and
     * NNPACK accept 1e-3 relative error for it; tests/test_solvers.c measures
     * at most 7.2e-7 on its problems. */
    .tolerance = 1e-3,
    .is_applicable = winograd_applicable,
    .workspace_size = no_workspace,
    .run = winograd_run,
};
