/* test_fallback.c -- the fallback rules: the documented choices on typical
 * shapes, and on 1000 random problems always a solver that applies. */
#include <stdio.h>
#include <string.h>

#include "core/problem.h"
#include "heur/select.h"
#include "solvers/solver.h"
#include "testutil.h"
#include "util/cpu.h"
#include "util/rng.h"

static const char *choice(int64_t n, int64_t c, int64_t hw, int64_t k, int64_t f, int64_t pad,
                          int64_t stride, int64_t dil, int64_t g, convsel_filter_layout_t fl) {
    struct conv_problem p = {.n = n,
                             .c = c,
                             .h = hw,
                             .w = hw,
                             .k = k,
                             .r = f,
                             .s = f,
                             .pad_h = pad,
                             .pad_w = pad,
                             .stride_h = stride,
                             .stride_w = stride,
                             .dil_h = dil,
                             .dil_w = dil,
                             .groups = g,
                             .filter_layout = fl};
    char err[PROBLEM_ERROR_MAX];
    if (problem_validate(&p, err, sizeof err) != CONVSEL_STATUS_SUCCESS)
        return "invalid";
    return solver_get(heur_rules_solver(&p))->name;
}

int main(void) {
    const convsel_filter_layout_t kcrs = CONVSEL_FILTER_KCRS, krsc = CONVSEL_FILTER_KRSC;
    CHECK(strcmp(choice(1, 32, 112, 32, 3, 1, 1, 1, 32, kcrs), "depthwise") == 0);
    CHECK(strcmp(choice(1, 64, 56, 256, 1, 0, 1, 1, 1, kcrs), "onednn_gemm") == 0);
    /* oneDNN's GEMM path takes only KCRS weights here: convsel's own GEMM takes KRSC */
    CHECK(strcmp(choice(1, 64, 56, 256, 1, 0, 1, 1, 1, krsc), "gemm_1x1") == 0);
    /* oneDNN 2.6 has Winograd only for AVX-512; without it, convsel's own */
    CHECK(strcmp(choice(1, 64, 56, 64, 3, 1, 1, 1, 1, kcrs),
                 cpu_supports(CPU_AVX512) ? "onednn_winograd" : "winograd_f4x3") == 0);
    /* one channel in and out: a depthwise layer of one group */
    CHECK(strcmp(choice(1, 1, 80, 1, 11, 5, 1, 1, 1, kcrs), "depthwise") == 0);
    /* a map smaller than one 4x4 Winograd tile: direct (SSD's 3x3 on 1x1) */
    CHECK(strcmp(choice(1, 256, 1, 64, 3, 1, 1, 1, 1, kcrs), "onednn_direct") == 0);
    CHECK(strcmp(choice(1, 256, 3, 64, 3, 1, 1, 1, 1, kcrs), "onednn_direct") == 0);
    CHECK(strcmp(choice(1, 256, 4, 64, 3, 1, 1, 1, 1, kcrs),
                 cpu_supports(CPU_AVX512) ? "onednn_winograd" : "winograd_f4x3") == 0);
    /* padded wider than oneDNN's AVX2 direct kernels take: oneDNN's GEMM, not
     * the first applicable solver (depthwise, for one input channel) */
    CHECK(strcmp(choice(1, 1, 64, 8, 9, 4, 1, 1, 1, kcrs),
                 cpu_supports(CPU_AVX512) ? "onednn_direct" : "onednn_gemm") == 0);
    /* oneDNN's Winograd refuses KRSC weights: convsel's own takes it */
    CHECK(strcmp(choice(1, 64, 56, 64, 3, 1, 1, 1, 1, krsc), "winograd_f4x3") == 0);
    CHECK(strcmp(choice(1, 3, 224, 64, 7, 3, 2, 1, 1, kcrs), "onednn_direct") == 0);
    /* narrow groups: the blocked direct solver (NCHW); wider ones oneDNN's */
    CHECK(strcmp(choice(8, 256, 28, 256, 3, 1, 1, 1, 32, kcrs), "direct_blocked") == 0);
    CHECK(strcmp(choice(1, 72, 56, 72, 3, 1, 2, 1, 9, kcrs), "direct_blocked") == 0);
    CHECK(strcmp(choice(1, 1024, 14, 1024, 3, 1, 1, 1, 32, kcrs), "onednn_direct") == 0);
    CHECK(strcmp(choice(1, 16, 20, 16, 3, 1, 1, 1, 1, kcrs), "onednn_direct") ==
          0); /* few channels */
    CHECK(strcmp(choice(8, 256, 28, 256, 3, 2, 1, 2, 1, kcrs), "onednn_direct") == 0); /* dilated */
    /* random problems: the choice always applies */
    struct rng g = rng_seed(17);
    int checked = 0;
    for (int i = 0; i < 1000; i++) {
        struct conv_problem p = {.groups = rng_int(&g, 1, 3)};
        p.n = rng_int(&g, 1, 3), p.c = p.groups * rng_int(&g, 1, 8),
        p.k = p.groups * rng_int(&g, 1, 8);
        p.h = rng_int(&g, 1, 20), p.w = rng_int(&g, 1, 20), p.r = rng_int(&g, 1, 5),
        p.s = rng_int(&g, 1, 5);
        p.pad_h = rng_int(&g, 0, 2), p.pad_w = rng_int(&g, 0, 2), p.stride_h = rng_int(&g, 1, 3);
        p.stride_w = rng_int(&g, 1, 3), p.dil_h = rng_int(&g, 1, 2), p.dil_w = rng_int(&g, 1, 2);
        p.layout = rng_int(&g, 0, 1) ? CONVSEL_LAYOUT_NHWC : CONVSEL_LAYOUT_NCHW;
        p.filter_layout = rng_int(&g, 0, 1) ? krsc : kcrs;
        char err[PROBLEM_ERROR_MAX];
        if (problem_validate(&p, err, sizeof err) != CONVSEL_STATUS_SUCCESS)
            continue;
        const int id = heur_rules_solver(&p);
        CHECK(id >= 0 && id != solver_reference_id() && solver_get(id)->is_applicable(&p, NULL));
        checked++;
    }
    printf("%d random problems: the fallback always chose an applicable solver\n", checked);
    CHECK(checked > 300);
    return test_finish("test_fallback");
}
