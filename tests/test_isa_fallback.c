/* test_isa_fallback.c -- the AVX2 and generic kernels on this machine.
 * CONVSEL_ISA caps the level the kernels run at. This test re-runs itself
 * under each level (a fresh process: the level is read once); there every
 * one of convsel's own solvers (GEMM 1x1 plain and strided, im2col in both
 * layouts, grouped, Winograd, depthwise in both layouts and strided,
 * direct, direct_blocked) runs against the reference within its tolerance and prints a
 * hash of its output's bits, and the kernel tables the solvers dispatch
 * to must be the level's. The generic level's bits must differ from the
 * CPU's for most cases (no FMA rounds differently: equal bits would mean
 * the cap changed nothing). `convsel conv` names the level and why; a level above the
 * CPU's is never taken; an unknown word is a warning, not a crash. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nn/kernels.h"
#include "problem_builder.h"
#include "solvers/kernels/blocked_kernels.h"
#include "solvers/kernels/depthwise_kernels.h"
#include "solvers/kernels/sgemm.h"
#include "solvers/kernels/winograd_kernels.h"
#include "solvers/solver.h"
#include "testutil.h"
#include "util/cpu.h"

struct fallback_case {
    const char *solver;
    struct test_problem p;
};

#define P(n_, c_, h_, w_, k_, r_, s_, pad_, stride_, g_, layout_)                                  \
    {                                                                                              \
        .n = n_, .c = c_, .h = h_, .w = w_, .k = k_, .r = r_, .s = s_, .pad_h = pad_,              \
        .pad_w = pad_, .stride_h = stride_, .stride_w = stride_, .dil_h = 1, .dil_w = 1,           \
        .groups = g_, .layout = CONVSEL_LAYOUT_##layout_,                                          \
        .filter_layout = CONVSEL_LAYOUT_##layout_ == CONVSEL_LAYOUT_NHWC ? CONVSEL_FILTER_KRSC     \
                                                                         : CONVSEL_FILTER_KCRS     \
    }

static const struct fallback_case cases[] = {
    {"gemm_1x1", P(2, 48, 13, 11, 40, 1, 1, 0, 1, 1, NCHW)},
    {"gemm_1x1_strided", P(1, 48, 14, 14, 36, 1, 1, 0, 2, 1, NCHW)},
    {"im2col_gemm", P(2, 19, 17, 15, 33, 3, 3, 1, 1, 1, NCHW)},
    {"im2col_gemm", P(1, 24, 12, 12, 20, 3, 3, 1, 1, 1, NHWC)},
    {"grouped_gemm", P(1, 32, 14, 14, 32, 3, 3, 1, 1, 4, NCHW)},
    {"winograd_f4x3", P(1, 32, 18, 18, 24, 3, 3, 1, 1, 1, NCHW)},
    {"depthwise", P(1, 24, 30, 29, 24, 3, 3, 1, 1, 24, NCHW)},
    {"depthwise", P(1, 24, 20, 20, 48, 5, 5, 2, 2, 24, NCHW)},
    {"depthwise", P(1, 32, 16, 16, 32, 3, 3, 1, 1, 32, NHWC)},
    {"direct", P(1, 5, 23, 21, 3, 7, 7, 3, 2, 1, NCHW)},
    {"direct_blocked", P(2, 32, 15, 17, 28, 3, 3, 1, 1, 4, NCHW)},
    {"direct_blocked", P(1, 3, 1, 90, 10, 1, 5, 2, 2, 1, NCHW)},
};
enum { N_CASES = sizeof cases / sizeof *cases };

static uint64_t hash_floats(const float *v, size_t n) {
    uint64_t h = 1469598103934665603ull;
    const unsigned char *b = (const unsigned char *)v;
    for (size_t i = 0; i < n * sizeof *v; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* Under the level the environment set: each case verified, its hash printed. */
static int child(void) {
    convsel_handle_t h;
    if (convsel_handle_create(&h) != CONVSEL_STATUS_SUCCESS)
        return 1;
    convsel_set_num_threads(h, 2);
    for (int i = 0; i < N_CASES; i++) {
        struct test_descs d;
        CHECK(test_descs_create(h, &cases[i].p, &d) == CONVSEL_STATUS_SUCCESS);
        struct test_data t;
        test_data_create(h, &d, 1000 + (unsigned)i, &t);
        convsel_solver_id_t id;
        CHECK_STATUS(h, convsel_solver_find(h, cases[i].solver, &id), CONVSEL_STATUS_SUCCESS);
        size_t ws = 0;
        CHECK_STATUS(h, convsel_get_forward_workspace_size(h, id, d.x, d.w, d.conv, d.y, &ws),
                     CONVSEL_STATUS_SUCCESS);
        void *work = ws ? malloc(ws) : NULL;
        CHECK_STATUS(
            h, convsel_convolution_forward(h, id, d.x, t.x, d.w, t.w, d.conv, d.y, t.y, work, ws),
            CONVSEL_STATUS_SUCCESS);
        double err = 0, scale = 0;
        for (size_t j = 0; j < d.y_count; j++) {
            err = fmax(err, fabs((double)t.y[j] - t.ref[j]));
            scale = fmax(scale, fabs((double)t.ref[j]));
        }
        const double tol = solver_get(solver_find(cases[i].solver))->tolerance;
        CHECK(err <= tol * scale);
        printf("case %d %s rel_err %.3e hash %016llx\n", i, cases[i].solver, err / scale,
               (unsigned long long)hash_floats(t.y, d.y_count));
        free(work);
        test_data_destroy(&t);
        test_descs_destroy(&d);
    }
    convsel_handle_destroy(h);
    /* the tables the solvers dispatch to, as they pick them */
    printf("dispatch sgemm=%s depthwise=%s winograd=%s blocked=%s nn=%s\n",
           cpu_isa_name(sgemm_kernel_best()->isa), cpu_isa_name(dw_kernels()->isa),
           cpu_isa_name(wino_kernels()->isa), cpu_isa_name(db_kernels()->isa), nn_kernels()->isa);
    return test_finish("test_isa_fallback (child)");
}

static char out[1 << 14];

/* Runs the child under CONVSEL_ISA=level; fills hashes; returns its status. */
static int run_level(const char *level, unsigned long long hashes[N_CASES]) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "CONVSEL_ISA=%s /proc/%d/exe --child", level, (int)getpid());
    const int rc = test_run_command(cmd, out, sizeof out);
    for (int i = 0; i < N_CASES; i++) {
        char key[32];
        snprintf(key, sizeof key, "case %d ", i);
        const char *at = strstr(out, key);
        const char *hash = at ? strstr(at, "hash ") : NULL;
        hashes[i] = 0;
        if (!hash || sscanf(hash, "hash %llx", &hashes[i]) != 1)
            CHECK(!"a case's hash is missing");
    }
    if (rc != 0)
        fprintf(stderr, "%s", out);
    return rc;
}

#ifdef __OPTIMIZE__
#define OPTIMISED 1
#else
#define OPTIMISED 0
#endif

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--child") == 0)
        return child();
    const char *levels[] = {"generic", "avx2", "avx512"};
    const enum cpu_isa hw = cpu_supports(CPU_AVX512) ? CPU_AVX512
                            : cpu_supports(CPU_AVX2) ? CPU_AVX2
                                                     : CPU_GENERIC;
    unsigned long long hashes[3][N_CASES];
    for (int l = 0; l < 3; l++) {
        CHECK(run_level(levels[l], hashes[l]) == 0);
        const char *taken = levels[l < (int)hw ? l : (int)hw];
        char want[128];
        snprintf(want, sizeof want, "dispatch sgemm=%s depthwise=%s winograd=%s blocked=%s nn=%s",
                 taken, taken, taken, taken, taken);
        CHECK(test_contains(out, want));
    }
    /* generic has no FMA, so its bits differ; AVX2 and AVX-512 run the
     * same chain of FMAs per output element (the vector width changes how
     * many elements at once, not the order within one), so theirs agree and
     * the dispatch line is what shows the AVX2 code ran. The kernels are
     * plain C compiled per target, so the FMAs are the optimiser's
     * contraction: an unoptimised build (the Debug ASan one) has none, and
     * every level computes generic's bits. */
#ifndef __OPTIMIZE__
    printf("unoptimised build: no FMA contraction, so generic's bits are not compared\n");
#endif
    for (int l = 0; l < 1 && l < (int)hw && OPTIMISED; l++) {
        int differ = 0;
        for (int i = 0; i < N_CASES; i++)
            differ += hashes[l][i] != hashes[hw][i];
        printf("%s: %d of %d outputs differ in their bits from %s's\n", levels[l], differ, N_CASES,
               levels[hw]);
        CHECK(2 * differ >= N_CASES);
    }
    for (int l = (int)hw + 1; l < 3; l++) /* above the CPU: its own level, the same bits */
        CHECK(memcmp(hashes[l], hashes[hw], sizeof hashes[l]) == 0);

    /* convsel conv names the level and why */
    for (int l = 0; l < 3; l++) {
        char env[64], want[160];
        snprintf(env, sizeof env, "CONVSEL_ISA=%s", levels[l]);
        const int taken = l < (int)hw ? l : (int)hw;
        if (taken < (int)hw)
            snprintf(want, sizeof want, "kernels   %s (CONVSEL_ISA=%s; this CPU runs %s)\n",
                     levels[taken], levels[taken], levels[hw]);
        else
            snprintf(want, sizeof want, "kernels   %s", levels[taken]);
        CHECK(test_convsel(env, "conv -n 1 -c 8 -H 9 -W 9 -k 8 -S im2col_gemm -V 1 -i 1", out,
                           sizeof out) == 0);
        CHECK(test_contains(out, want) && test_contains(out, "\nverified"));
    }
    /* an unknown level: one warning, the CPU's own level, a right answer */
    CHECK(test_convsel("CONVSEL_ISA=sse9", "conv -n 1 -c 8 -H 9 -W 9 -k 8 -S im2col_gemm -V 1 -i 1",
                       out, sizeof out) == 0);
    CHECK(test_contains(out, "CONVSEL_ISA=sse9: takes generic, avx2 or avx512; using the default"));
    CHECK(test_contains(out, "\nverified"));
    return test_finish("test_isa_fallback");
}
