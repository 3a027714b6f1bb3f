/* test_solvers.c -- every registered solver against the reference on 500
 * random problems (odd sizes, 1x1, large pads, dilation, groups, depthwise,
 * both layouts and filter layouts, batch > 1), each within the tolerance
 * its file states. Also: solvers must not write outside y. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/verify.h"
#include "problem_builder.h"
#include "solvers/solver.h"
#include "testutil.h"
#include "util/cpu.h"
#include "util/rng.h"

#define GUARD 16 /* floats of canary after y */

static struct test_problem random_problem(struct rng *g) {
    struct test_problem tp = test_problem_default();
    const int kind = (int)rng_int(g, 0, 5);
    tp.groups = kind == 4 ? 0 : rng_int(g, 1, 3); /* kind 4: depthwise, set below */
    tp.n = rng_int(g, 1, 4);
    const int64_t cg = rng_int(g, 1, 9), kg = rng_int(g, 1, 9);
    tp.h = rng_int(g, 1, 23);
    tp.w = rng_int(g, 1, 23);
    tp.r = kind == 0 ? 1 : kind == 1 ? 3 : rng_int(g, 1, 7);
    tp.s = kind == 0 ? 1 : kind == 1 ? 3 : rng_int(g, 1, 7);
    tp.pad_h = kind == 0 ? 0 : rng_int(g, 0, kind == 5 ? 6 : 2);
    tp.pad_w = kind == 0 ? 0 : rng_int(g, 0, kind == 5 ? 6 : 2);
    tp.stride_h = rng_int(g, 1, kind == 1 ? 1 : 3);
    tp.stride_w = rng_int(g, 1, kind == 1 ? 1 : 3);
    tp.dil_h = kind <= 1 ? 1 : rng_int(g, 1, 3);
    tp.dil_w = kind <= 1 ? 1 : rng_int(g, 1, 3);
    if (kind == 4) { /* depthwise, channel multiplier 1..3 */
        tp.groups = rng_int(g, 1, 16);
        tp.c = tp.groups;
        tp.k = tp.groups * rng_int(g, 1, 3);
    } else {
        tp.c = tp.groups * cg;
        tp.k = tp.groups * kg;
    }
    tp.layout = rng_int(g, 0, 1) ? CONVSEL_LAYOUT_NHWC : CONVSEL_LAYOUT_NCHW;
    tp.filter_layout = rng_int(g, 0, 1) ? CONVSEL_FILTER_KRSC : CONVSEL_FILTER_KCRS;
    return tp;
}

/* Realistic layer shapes (scaled down), so that solvers with narrow
 * applicability (Winograd, 1x1 GEMM) are exercised on the shapes they are
 * for: {n, c, hw, k, rs, pad, stride, dil, groups}. */
static const int64_t named[][9] = {
    {1, 64, 14, 64, 3, 1, 1, 1, 1},  {2, 32, 28, 64, 3, 1, 1, 1, 1},
    {1, 16, 15, 32, 3, 1, 1, 1, 1},  {1, 128, 7, 128, 3, 1, 1, 1, 1},
    {2, 64, 14, 256, 1, 0, 1, 1, 1}, {1, 256, 14, 64, 1, 0, 2, 1, 1},
    {1, 3, 32, 16, 7, 3, 2, 1, 1},   {1, 32, 16, 32, 3, 1, 1, 1, 32},
    {1, 64, 12, 64, 3, 1, 1, 1, 8},  {1, 32, 17, 32, 3, 2, 1, 2, 1},
    {2, 16, 9, 32, 5, 2, 1, 1, 1},   {1, 48, 10, 48, 3, 0, 1, 1, 1},
};

static struct test_problem named_problem(size_t i, int variant) {
    const int64_t *v = named[i];
    struct test_problem tp = test_problem_default();
    tp.n = v[0], tp.c = v[1], tp.h = tp.w = v[2], tp.k = v[3], tp.r = tp.s = v[4];
    tp.pad_h = tp.pad_w = v[5], tp.stride_h = tp.stride_w = v[6], tp.dil_h = tp.dil_w = v[7];
    tp.groups = v[8];
    tp.layout = variant & 1 ? CONVSEL_LAYOUT_NHWC : CONVSEL_LAYOUT_NCHW;
    tp.filter_layout = variant & 2 ? CONVSEL_FILTER_KRSC : CONVSEL_FILTER_KCRS;
    return tp;
}

#define NAMED_RUNS (int)(4 * sizeof named / sizeof named[0])

int main(void) {
    convsel_handle_t h;
    convsel_handle_create(&h);
    convsel_set_num_threads(h, 2);
    struct rng g = rng_seed(11);
    int problems = 0;
    int runs[64] = {0};
    double worst[64] = {0}; /* largest relative error seen per solver */
    while (problems < 500 + NAMED_RUNS) {
        const int named_index = problems - 500;
        struct test_problem tp = named_index >= 0
                                     ? named_problem((size_t)named_index / 4, named_index % 4)
                                     : random_problem(&g);
        struct test_descs d;
        if (test_descs_create(h, &tp, &d) != CONVSEL_STATUS_SUCCESS) {
            test_descs_destroy(&d);
            continue;
        }
        problems++;
        float *x = malloc(d.x_count * sizeof *x), *w = malloc(d.w_count * sizeof *w);
        float *ref = malloc(d.y_count * sizeof *ref);
        float *y = malloc((d.y_count + GUARD) * sizeof *y);
        rng_fill(&g, x, d.x_count);
        rng_fill(&g, w, d.w_count);
        CHECK_STATUS(h,
                     convsel_convolution_forward(h, solver_reference_id(), d.x, x, d.w, w, d.conv,
                                                 d.y, ref, NULL, 0),
                     CONVSEL_STATUS_SUCCESS);
        for (int id = 0; id < convsel_solver_count(); id++) {
            if (convsel_solver_is_applicable(h, id, d.x, d.w, d.conv, d.y) !=
                CONVSEL_STATUS_SUCCESS)
                continue;
            size_t ws = 0;
            CHECK_STATUS(h, convsel_get_forward_workspace_size(h, id, d.x, d.w, d.conv, d.y, &ws),
                         CONVSEL_STATUS_SUCCESS);
            void *work = ws ? malloc(ws) : NULL;
            for (size_t i = 0; i < d.y_count + GUARD; i++)
                y[i] = NAN; /* a solver must write every output */
            for (size_t i = d.y_count; i < d.y_count + GUARD; i++)
                y[i] = 12345.0f;
            CHECK_STATUS(
                h, convsel_convolution_forward(h, id, d.x, x, d.w, w, d.conv, d.y, y, work, ws),
                CONVSEL_STATUS_SUCCESS);
            struct verify_result r = verify_compare(y, ref, d.y_count);
            if (r.rel_error > worst[id])
                worst[id] = r.rel_error;
            const double tol = solver_get(id)->tolerance;
            if (!CHECK(verify_passes(&r, tol))) {
                char key[CONVSEL_PROBLEM_KEY_MAX];
                convsel_get_problem_key(h, d.x, d.w, d.conv, d.y, key, sizeof key, NULL);
                fprintf(stderr, "  %s on %s: rel error %.3g > %.1g (%zu non-finite)\n",
                        convsel_solver_name(id), key, r.rel_error, tol, r.nonfinite);
            }
            bool guard_ok = true;
            for (size_t i = d.y_count; i < d.y_count + GUARD; i++)
                guard_ok &= y[i] == 12345.0f;
            CHECK(guard_ok);
            runs[id]++;
            free(work);
        }
        free(x), free(w), free(ref), free(y);
        test_descs_destroy(&d);
    }
    for (int id = 0; id < convsel_solver_count(); id++) {
        printf("  %-20s ran on %3d of %d problems, worst max|y-ref|/max|ref| %.2e (tolerance "
               "%.0e)\n",
               convsel_solver_name(id), runs[id], problems, worst[id], solver_get(id)->tolerance);
        if (strcmp(convsel_solver_name(id), "onednn_winograd") == 0 && !cpu_supports(CPU_AVX512)) {
            printf("  onednn_winograd: not run: oneDNN 2.6 has Winograd only for AVX-512, which "
                   "this CPU lacks\n");
            CHECK(runs[id] == 0);
        } else {
            CHECK(runs[id] >= 10); /* every solver is exercised, on more than a handful */
        }
    }
    convsel_handle_destroy(h);
    return test_finish("test_solvers");
}
