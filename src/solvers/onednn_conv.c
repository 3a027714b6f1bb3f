/* onednn_conv.c -- solvers backed by oneDNN 2.6 (Debian libdnnl-dev):
 * direct and Winograd F(4x4,3x3). oneDNN computes in its own blocked
 * layouts; the reorders from the caller's NCHW/NHWC tensors and back are
 * part of each call (as an application with an NCHW API would pay them),
 * and so is packing the weights: nothing is cached in convsel between
 * calls (onednn_plan.c). oneDNN decides what it can run; the answer is
 * remembered per problem. */
#include "solvers/onednn_plan.h"
#include "solvers/solver.h"

static size_t no_workspace(const struct conv_problem *p) {
    (void)p;
    return 0;
}

static bool direct_applicable(const struct conv_problem *p, const char **reason) {
    if (!p->packed) {
        if (reason)
            *reason = "oneDNN solvers need packed x and y tensors";
        return false;
    }
    if (!onednn_implements(p, ONEDNN_DIRECT)) {
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
    if (!onednn_implements(p, ONEDNN_WINOGRAD)) {
        if (reason)
            *reason = "oneDNN has no Winograd implementation for this problem (it needs, among "
                      "others, channel counts that fill its vector blocks and KCRS weights)";
        return false;
    }
    return true;
}

static convsel_status_t run_with(const struct conv_run_args *a, enum onednn_alg alg) {
    struct onednn_plan *plan = onednn_plan_create(a->p, alg, NULL);
    if (plan == NULL)
        return CONVSEL_STATUS_NOT_SUPPORTED;
    const convsel_status_t st = onednn_plan_run(plan, a->x, a->w, a->y, a->num_threads);
    onednn_plan_destroy(plan);
    return st;
}

static convsel_status_t direct_run(const struct conv_run_args *a) {
    return run_with(a, ONEDNN_DIRECT);
}

static convsel_status_t winograd_run(const struct conv_run_args *a) {
    return run_with(a, ONEDNN_WINOGRAD);
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
