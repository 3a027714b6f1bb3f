/* fallback.c -- the hand-written choice used when no model or database
 * answer is available: a pure function of the problem, no I/O, no
 * allocation, always an applicable solver. The rules are general
 * algorithm knowledge, not thresholds fitted to a benchmark:
 *   - depthwise (groups = channels, or one channel in and out) runs on the
 *     depthwise solver: as a GEMM it falls to ~1% of peak;
 *   - a 1x1 convolution with stride 1 and no padding is a plain GEMM on
 *     the input, no layout change: oneDNN's JIT GEMM on the caller's
 *     NCHW tensors where it applies (its GEMM is the faster one today),
 *     else convsel's;
 *   - 3x3, stride 1, dilation 1 with enough channels to amortize the
 *     transforms (64 in and out) and an output map of at least one 4x4
 *     tile is Winograd's case (2.25-4x fewer multiplications; on a smaller
 *     map most of each tile is padding: 256 -> 16 channels on a 1x1 map ran
 *     58x slower than oneDNN's direct on AVX2), oneDNN's where it applies
 *     (its kernels are faster today), else convsel's;
 *   - grouped with at most 8 input channels per group (ResNeXt's 32x4d,
 *     RegNet's narrow groups) is the blocked direct solver's: every output
 *     channel of a group from its input packed once, where oneDNN's
 *     8- and 16-channel blocks are mostly empty (on the AVX2 database's 28
 *     such corpus layers it was the fastest on all 28, 1.37x oneDNN's
 *     direct at the geomean);
 *   - everything else goes to oneDNN's direct convolution, which holds up
 *     across shapes (few channels, large or strided filters, dilation,
 *     groups), or, where it refuses because oneDNN would run its GEMM
 *     there (without AVX-512: wide padding), to oneDNN's GEMM;
 *   - if none of those applies, the first applicable solver in registry
 *     order, and at worst the reference. */
#include <string.h>

#include "heur/select.h"
#include "solvers/solver.h"

static int applicable(const char *name, const struct conv_problem *p) {
    const int id = solver_find(name);
    return id >= 0 && solver_get(id)->is_applicable(p, NULL) ? id : -1;
}

int heur_rules_solver(const struct conv_problem *p) {
    const bool depthwise = problem_is_depthwise(p); /* one channel in and out too */
    const bool one_by_one = p->r == 1 && p->s == 1 && p->pad_h == 0 && p->pad_w == 0 &&
                            p->stride_h == 1 && p->stride_w == 1;
    const bool winograd_shape = p->r == 3 && p->s == 3 && p->stride_h == 1 && p->stride_w == 1 &&
                                p->dil_h == 1 && p->dil_w == 1 && p->groups == 1 && p->c >= 64 &&
                                p->k >= 64 && p->oh >= 4 && p->ow >= 4;
    const char *prefer[4] = {NULL, NULL, NULL, NULL};
    if (depthwise)
        prefer[0] = "depthwise";
    else if (one_by_one)
        prefer[0] = "onednn_gemm", prefer[1] = "gemm_1x1";
    else if (winograd_shape)
        prefer[0] = "onednn_winograd", prefer[1] = "winograd_f4x3";
    else if (p->groups > 1 && p->c / p->groups <= 8)
        prefer[0] = "direct_blocked";
    prefer[2] = "onednn_direct", prefer[3] = "onednn_gemm";
    for (int i = 0; i < 4; i++) {
        const int id = prefer[i] ? applicable(prefer[i], p) : -1;
        if (id >= 0)
            return id;
    }
    const int ref = solver_reference_id();
    for (int id = 0; id < solver_count(); id++)
        if (id != ref && solver_get(id)->is_applicable(p, NULL))
            return id;
    return ref;
}
