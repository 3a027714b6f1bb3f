/* onednn_conv.c -- solvers backed by oneDNN 2.6 (Debian libdnnl-dev):
 * direct and Winograd F(4x4,3x3) in oneDNN's blocked layouts, and its
 * GEMM-based convolution on the caller's own NCHW layout. oneDNN computes in its own blocked
 * layouts; the reorders from the caller's NCHW/NHWC tensors and back are
 * part of each call (as an application with an NCHW API would pay them),
 * and so is packing the weights -- unless the handle was told the weights
 * are constant (convsel_set_weights_constant): then a plan reorders them
 * once and reuses them while the weights pointer stays the same. What is
 * cached, per handle, is the set-up (and those packed weights).
 *
 * Applicability is decided from the shape, because asking oneDNN (creating
 * its descriptors) costs 20-190 us and immediate mode must rank a new
 * problem in a few microseconds. The rules below are what oneDNN 2.6
 * answers; tests/test_onednn_applicability.c asks oneDNN itself
 * (onednn_implements) on thousands of problems and fails on any
 * disagreement, so a different oneDNN cannot silently change them. */
#include "solvers/onednn_plan.h"
#include "solvers/plan_cache.h"
#include "solvers/solver.h"
#include "util/cpu.h"

/* Their plans are cached under their own addresses. */
extern const struct solver solver_onednn_direct, solver_onednn_winograd, solver_onednn_gemm;

static size_t no_workspace(const struct conv_problem *p) {
    (void)p;
    return 0;
}

static bool refuse(const char **reason, const char *why) {
    if (reason)
        *reason = why;
    return false;
}

/* oneDNN runs an NCHW problem with KCRS weights in place as im2col + its
 * JIT GEMM (x64:gemm:jit) for every shape; other plain layouts fall, for
 * many shapes, to its reference code. */
static bool gemm_applicable(const struct conv_problem *p, const char **reason) {
    if (!p->packed || p->layout != CONVSEL_LAYOUT_NCHW || p->filter_layout != CONVSEL_FILTER_KCRS)
        return refuse(reason, "onednn_gemm needs packed NCHW tensors and KCRS weights");
    return true;
}

/* Without AVX-512 oneDNN's direct kernels (measured: its AVX2 ones) work
 * in blocks of 8 channels and compute up to 3 output columns a step. Its
 * direct algorithm runs the GEMM implementation instead when
 * - a grouped convolution (not depthwise) has output channels per group
 *   not a multiple of 8, or input channels per group not a multiple of 8
 *   while the input has 8 channels or more;
 * - the left or right padding is wider than that step (or than the
 *   output), or, with more than one output channel, as wide as the
 *   filter's extent in either dimension (with one output channel it
 *   sometimes keeps its direct kernel there: the rule leaves those
 *   duplicates in rather than refuse a direct kernel).
 * The right and bottom padding are what the last output reaches past the
 * input. Agreement with oneDNN: tests/test_onednn_applicability.c. */
static bool direct_runs_gemm_without_avx512(const struct conv_problem *p) {
    const int64_t c_per_group = p->c / p->groups, k_per_group = p->k / p->groups;
    if (p->groups > 1 && !(c_per_group == 1 && k_per_group == 1) &&
        (k_per_group % 8 != 0 || (c_per_group % 8 != 0 && p->c >= 8)))
        return true;
    const int64_t ext_h = (p->r - 1) * p->dil_h + 1, ext_w = (p->s - 1) * p->dil_w + 1;
    const int64_t pad_b = (p->oh - 1) * p->stride_h + ext_h - (p->h + p->pad_h);
    const int64_t pad_r = (p->ow - 1) * p->stride_w + ext_w - (p->w + p->pad_w);
    const int64_t step = p->ow < 3 ? p->ow : 3;
    if (p->pad_w > step || pad_r > step)
        return true;
    return p->k > 1 && (p->pad_h >= ext_h || pad_b >= ext_h || p->pad_w >= ext_w || pad_r >= ext_w);
}

/* oneDNN has a reference implementation for every fp32 convolution, and
 * reorders between any plain layout and its own. But for some shapes its
 * direct algorithm picks its GEMM implementation: onednn_gemm's kernel,
 * wherever onednn_gemm applies. Two solvers timing one kernel make the
 * tuning's fastest a coin flip between them (on 244 tuned problems they
 * measured 0.97-1.01 of each other, p25-p75), so onednn_direct refuses
 * those. With AVX-512 they are the grouped convolutions (depthwise with a
 * channel multiplier included) with at most 16 input channels per group,
 * unless both per-group channel counts are multiples of 4; without it,
 * direct_runs_gemm_without_avx512 says which. */
static bool direct_applicable(const struct conv_problem *p, const char **reason) {
    if (!p->packed)
        return refuse(reason, "oneDNN solvers need packed x and y tensors");
    if (!gemm_applicable(p, NULL))
        return true;
    const int64_t c_per_group = p->c / p->groups, k_per_group = p->k / p->groups;
    if (cpu_supports(CPU_AVX512)) {
        if (p->groups > 1 && !(c_per_group == 1 && k_per_group == 1) && c_per_group <= 16 &&
            (c_per_group % 4 != 0 || k_per_group % 4 != 0))
            return refuse(reason, "oneDNN runs this grouped convolution with its GEMM "
                                  "implementation: that is onednn_gemm");
    } else if (direct_runs_gemm_without_avx512(p)) {
        return refuse(reason, "without AVX-512, oneDNN runs this convolution with its GEMM "
                              "implementation: that is onednn_gemm");
    }
    return true;
}

/* oneDNN 2.6 has Winograd only as an AVX-512 kernel: 3x3, stride 1, no
 * dilation or groups, padding at most 1 (any channel counts: it pads them
 * to its blocks), and it cannot reorder KRSC weights into its Winograd
 * layout. Those are oneDNN's rules (test_onednn_applicability holds them
 * to its answer). One is convsel's: an output map of at least 4x4, as for
 * winograd_f4x3. Below one 4x4 tile most of each tile is thrown away: in
 * the AVX-512 database it was the fastest on none of the 26 problems with
 * an output side under 4 (geomean 3.4x the fastest; on a side of 1, as
 * HDemucs' 768 -> 1536 on 1x130, 6.8x), and the model picked it there
 * (4.9x the fastest with HDemucs left out). */
static bool winograd_applicable(const struct conv_problem *p, const char **reason) {
    if (!p->packed || p->r != 3 || p->s != 3 || p->stride_h != 1 || p->stride_w != 1 ||
        p->dil_h != 1 || p->dil_w != 1 || p->groups != 1)
        return refuse(reason,
                      "oneDNN Winograd needs packed tensors, 3x3, stride 1, dilation 1, groups 1");
    if (p->pad_h > 1 || p->pad_w > 1)
        return refuse(reason, "oneDNN Winograd needs padding of at most 1");
    if (p->filter_layout != CONVSEL_FILTER_KCRS)
        return refuse(reason, "oneDNN Winograd cannot reorder KRSC weights into its layout");
    if (!cpu_supports(CPU_AVX512))
        return refuse(reason, "oneDNN Winograd needs AVX-512");
    if (p->oh < 4 || p->ow < 4)
        return refuse(reason, "onednn_winograd needs an output map of at least 4x4 (one tile)");
    return true;
}

static void free_plan(void *plan) {
    onednn_plan_destroy(plan);
}

/* Setting a problem up in oneDNN (descriptors, primitive, reorders, blocked
 * buffers) costs tens of microseconds and page faults on every buffer, so
 * the plan is kept in the handle's cache; the tensors are bound and
 * reordered on every run (the weights too, unless declared constant). */
static convsel_status_t run_with(const struct conv_run_args *a, const struct solver *self,
                                 enum onednn_alg alg) {
    char key[CONVSEL_PROBLEM_KEY_MAX];
    plan_key_format(a, key);
    struct onednn_plan *plan = plan_cache_find(a->plans, self, key);
    const bool cached = plan != NULL;
    if (!cached && (plan = onednn_plan_create(a->p, alg, a->num_threads)) == NULL)
        return CONVSEL_STATUS_NOT_SUPPORTED;
    const convsel_status_t st =
        onednn_plan_run(plan, a->x, a->w, a->y, a->num_threads, a->weights_constant);
    if (!cached) {
        if (a->plans)
            plan_cache_put(a->plans, self, key, plan, free_plan, onednn_plan_bytes(plan));
        else
            onednn_plan_destroy(plan);
    }
    return st;
}

/* The plan of a->p in the cache, created now if it is not there. */
static convsel_status_t prepare_with(const struct conv_run_args *a, const struct solver *self,
                                     enum onednn_alg alg) {
    char key[CONVSEL_PROBLEM_KEY_MAX];
    plan_key_format(a, key);
    if (a->plans == NULL || plan_cache_find(a->plans, self, key) != NULL)
        return CONVSEL_STATUS_SUCCESS;
    struct onednn_plan *plan = onednn_plan_create(a->p, alg, a->num_threads);
    if (plan == NULL)
        return CONVSEL_STATUS_NOT_SUPPORTED;
    return plan_cache_put(a->plans, self, key, plan, free_plan, onednn_plan_bytes(plan))
               ? CONVSEL_STATUS_SUCCESS
               : CONVSEL_STATUS_ALLOC_FAILED;
}

static convsel_status_t gemm_prepare(const struct conv_run_args *a) {
    return prepare_with(a, &solver_onednn_gemm, ONEDNN_GEMM);
}

static convsel_status_t direct_prepare(const struct conv_run_args *a) {
    return prepare_with(a, &solver_onednn_direct, ONEDNN_DIRECT);
}

static convsel_status_t winograd_prepare(const struct conv_run_args *a) {
    return prepare_with(a, &solver_onednn_winograd, ONEDNN_WINOGRAD);
}

static convsel_status_t gemm_run(const struct conv_run_args *a) {
    return run_with(a, &solver_onednn_gemm, ONEDNN_GEMM);
}

static convsel_status_t direct_run(const struct conv_run_args *a) {
    return run_with(a, &solver_onednn_direct, ONEDNN_DIRECT);
}

static convsel_status_t winograd_run(const struct conv_run_args *a) {
    return run_with(a, &solver_onednn_winograd, ONEDNN_WINOGRAD);
}
const struct solver solver_onednn_direct = {
    .name = "onednn_direct",
    .description = "oneDNN direct convolution, reorders to/from the caller's layout included",
    /* fp32 accumulation in blocked order, like the GEMM solvers */
    .tolerance = 1e-4,
    .is_applicable = direct_applicable,
    .workspace_size = no_workspace,
    .run = direct_run,
    .prepare = direct_prepare,
};

const struct solver solver_onednn_winograd = {
    .name = "onednn_winograd",
    .description = "oneDNN Winograd F(4x4,3x3), reorders to/from the caller's layout included",
    /* Winograd F(4,3) transforms amplify rounding: oneDNN's own tests and
     * NNPACK accept 1e-3 relative error for it; tests/test_solvers.c measures
     * at most 7.2e-7 on its problems. */
    .tolerance = 1e-3,
    /* F(4x4,3x3): 36 multiplies per 16 outputs where direct does 144. */
    .work_fraction = 0.25,
    .is_applicable = winograd_applicable,
    .workspace_size = no_workspace,
    .run = winograd_run,
    .prepare = winograd_prepare,
};

const struct solver solver_onednn_gemm = {
    .name = "onednn_gemm",
    .description = "oneDNN im2col + JIT GEMM on the caller's NCHW tensors and KCRS weights "
                   "(no reorders, no weight packing)",
    /* fp32 accumulation over c/g*r*s terms, like im2col_gemm */
    .tolerance = 1e-4,
    .is_applicable = gemm_applicable,
    .workspace_size = no_workspace,
    .run = gemm_run,
    .prepare = gemm_prepare,
};
