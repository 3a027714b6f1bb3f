/* test_solver_winograd.c -- convsel's Winograd F(4x4,3x3): the vectorized
 * transform kernels of every ISA variant against a scalar evaluation of
 * the transform matrices, and the solver against the reference on edge
 * shapes: outputs smaller than a tile, not a multiple of 4, more tiles than
 * one block (512), both layouts and filter layouts, padding 0, 1, 2, with
 * the GEMMs both ways round (under 16 tiles a block they are turned
 * around: the cases of 1, 4, 8 and 9 tiles), weights per call and constant
 * (the second call with the kept transform). The measured error is
 * printed against the stated bound (1e-3). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/verify.h"
#include "problem_builder.h"
#include "solvers/kernels/winograd_kernels.h"
#include "testutil.h"
#include "util/rng.h"

static const double BT[6][6] = {
    {4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0},
    {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1},
};
static const double AT[4][6] = {
    {1, 1, 1, 1, 1, 0},
    {0, 1, -1, 2, -2, 0},
    {0, 1, 1, 4, 4, 0},
    {0, 1, -1, 8, -8, 1},
};

static void test_kernels(void) {
    struct rng g = rng_seed(8);
    for (int isa = CPU_GENERIC; isa <= CPU_AVX512; isa++) {
        const struct wino_kernels *k = wino_kernels_variant((enum cpu_isa)isa);
        if (k == NULL)
            continue;
        float d[36 * WINO_LANES], v[36 * WINO_LANES], o[16 * WINO_LANES];
        rng_fill(&g, d, 36 * WINO_LANES);
        k->input(d, v, WINO_LANES);
        k->output(d, WINO_LANES, o);
        double worst = 0;
        for (int l = 0; l < WINO_LANES; l++) {
            for (int i = 0; i < 6; i++) /* V = B^T d B */
                for (int j = 0; j < 6; j++) {
                    double acc = 0;
                    for (int a = 0; a < 6; a++)
                        for (int b = 0; b < 6; b++)
                            acc += BT[i][a] * d[(a * 6 + b) * WINO_LANES + l] * BT[j][b];
                    worst = fmax(worst, fabs(acc - v[(i * 6 + j) * WINO_LANES + l]));
                }
            for (int i = 0; i < 4; i++) /* O = A^T m A */
                for (int j = 0; j < 4; j++) {
                    double acc = 0;
                    for (int a = 0; a < 6; a++)
                        for (int b = 0; b < 6; b++)
                            acc += AT[i][a] * d[(a * 6 + b) * WINO_LANES + l] * AT[j][b];
                    worst = fmax(worst, fabs(acc - o[(i * 4 + j) * WINO_LANES + l]));
                }
        }
        printf("%s transforms: worst abs error %.2e\n", cpu_isa_name((enum cpu_isa)isa), worst);
        CHECK(worst < 1e-4);
    }
}

int main(void) {
    test_kernels();
    convsel_handle_t h;
    convsel_handle_create(&h);
    convsel_solver_id_t id, ref;
    CHECK_STATUS(h, convsel_solver_find(h, "winograd_f4x3", &id), CONVSEL_STATUS_SUCCESS);
    convsel_solver_find(h, "reference", &ref);
    const int64_t cases[][5] = {                 /* n, c, hw, k, pad */
                                {1, 3, 4, 2, 1}, /* one tile */
                                {1, 5, 6, 4, 0}, /* one tile, no padding */
                                {2, 8, 7, 8, 1},
                                {1, 16, 13, 9, 2},
                                {3, 4, 50, 5, 1},
                                {1, 32, 94, 16, 1},
                                /* filters in blocks of 16 with a partial last block,
                                 * per thread's range */
                                {1, 20, 9, 37, 1},
                                {2, 7, 12, 50, 0},
                                /* tiles as rows: 4 tiles, 819 channels (51 column
                                 * panels of 16 and one of 3; the output
                                 * transform's last block of channels 3 lanes) */
                                {1, 12, 7, 819, 1}};
    struct rng g = rng_seed(5);
    double worst = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int v = 0; v < 8; v++) {
            struct test_problem tp = test_problem_default();
            tp.n = cases[i][0], tp.c = cases[i][1], tp.h = tp.w = cases[i][2], tp.k = cases[i][3];
            tp.pad_h = tp.pad_w = cases[i][4];
            tp.layout = v & 1 ? CONVSEL_LAYOUT_NHWC : CONVSEL_LAYOUT_NCHW;
            tp.filter_layout = v & 2 ? CONVSEL_FILTER_KRSC : CONVSEL_FILTER_KCRS;
            struct test_descs d;
            if (!CHECK_STATUS(h, test_descs_create(h, &tp, &d), CONVSEL_STATUS_SUCCESS))
                continue;
            float *x = malloc(d.x_count * sizeof *x), *w = malloc(d.w_count * sizeof *w);
            float *y = malloc(d.y_count * sizeof *y), *r = malloc(d.y_count * sizeof *r);
            rng_fill(&g, x, d.x_count);
            rng_fill(&g, w, d.w_count);
            size_t ws;
            convsel_get_forward_workspace_size(h, id, d.x, d.w, d.conv, d.y, &ws);
            void *work = malloc(ws);
            /* constant: the first call transforms and keeps, the second reuses */
            const int constant = v >> 2;
            convsel_set_weights_constant(h, constant);
            convsel_convolution_forward(h, ref, d.x, x, d.w, w, d.conv, d.y, r, NULL, 0);
            for (int call = 0; call <= constant; call++) {
                memset(y, 0, d.y_count * sizeof *y);
                CHECK_STATUS(
                    h, convsel_convolution_forward(h, id, d.x, x, d.w, w, d.conv, d.y, y, work, ws),
                    CONVSEL_STATUS_SUCCESS);
                const struct verify_result vr = verify_compare(y, r, d.y_count);
                worst = fmax(worst, vr.rel_error);
                if (!CHECK(verify_passes(&vr, 1e-3)))
                    printf("case %zu variant %d call %d: error %.2e\n", i, v, call, vr.rel_error);
            }
            free(x), free(w), free(y), free(r), free(work);
            test_descs_destroy(&d);
        }
    printf("winograd_f4x3 worst max|y-ref|/max|ref| %.2e (bound 1e-3)\n", worst);
    /* Output maps under one tile are refused, by rows or by columns alone
     * (HDemucs' 1-row maps), with a reason that says so. */
    const int64_t small[][2] = {{3, 3}, {1, 130}, {130, 3}};
    for (size_t i = 0; i < sizeof small / sizeof small[0]; i++) {
        struct test_problem tp = test_problem_default();
        tp.c = 8, tp.k = 8, tp.h = small[i][0], tp.w = small[i][1], tp.pad_h = tp.pad_w = 1;
        struct test_descs d;
        if (!CHECK_STATUS(h, test_descs_create(h, &tp, &d), CONVSEL_STATUS_SUCCESS))
            continue;
        size_t ws;
        CHECK_STATUS(h, convsel_get_forward_workspace_size(h, id, d.x, d.w, d.conv, d.y, &ws),
                     CONVSEL_STATUS_NOT_SUPPORTED);
        CHECK(strstr(convsel_get_error_message(h), "at least 4x4") != NULL);
        test_descs_destroy(&d);
    }
    convsel_handle_destroy(h);
    return test_finish("test_solver_winograd");
}
