/* test_cli.c -- the convsel command as a user runs it: exit codes, the
 * acceptance commands of the foundation issue, messages naming flags. */
#include <stdio.h>
#include <string.h>

#include "testutil.h"

static char out[65536];

/* Runs `convsel ARGS`, checks the exit code and that the output contains
 * each of the NULL-terminated needles. */
static void expect(const char *args, int want_rc, const char *const *needles) {
    int rc = test_convsel(NULL, args, out, sizeof out);
    if (!CHECK(rc == want_rc))
        fprintf(stderr, "  '%s' exited %d, want %d; output:\n%s\n", args, rc, want_rc, out);
    for (; needles && *needles; needles++)
        if (!CHECK(strstr(out, *needles) != NULL))
            fprintf(stderr, "  '%s': output lacks '%s'; output:\n%s\n", args, *needles, out);
}

#define NEEDLES(...) ((const char *const[]){__VA_ARGS__, NULL})

int main(void) {
    /* Acceptance commands. */
    expect("conv -n 1 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -V 1 -i 2", 0,
           NEEDLES("problem   64-56-56-3x3-64-56-56-1-1x1-1x1-1x1-g1-NCHW-FP32-F", "solver ",
                   "median", "GFLOP/s", "max abs err", "max rel err", "\nverified\n"));
    expect("conv -n 1 -c 0 -H 8 -W 8 -k 4 -y 3 -x 3", 2, NEEDLES("x_desc.c = 0", "flag -c"));
    expect("conv -n 1 -c 64 -H 8 -W 8 -k 64 -y 3 -x 3 -g 3", 2,
           NEEDLES("conv_desc.groups = 3", "flag -g"));

    /* Every problem flag, NHWC, explicit solvers. */
    expect("conv -n 2 -c 6 -H 9 -W 11 -k 4 -y 3 -x 2 -p 2 -q 0 -u 2 -v 1 -l 2 -j 1 -g 2 "
           "--layout NHWC -V 1 -i 1",
           0, NEEDLES("6-9-11-3x2-4-5-10-2-2x0-2x1-2x1-g2-NHWC-FP32-F", "verified"));
    expect("conv --batchsize=1 --in_channels 8 --in_h 7 --in_w 7 --out_channels 8 -S reference "
           "-V 1 -i 1",
           0, NEEDLES("solver    reference", "verified"));
    expect("conv -c 8 -H 7 -W 7 -k 8 -S im2col_gemm -V 1 -i 1 --threads 1", 0,
           NEEDLES("solver    im2col_gemm", "threads   1", "verified"));

    /* constant weights: the timed runs reuse the transformed weights, and
     * the output is still the reference's (a 1x1 map: the narrow GEMM) */
    expect("conv -c 64 -H 1 -W 1 -k 96 -y 1 -x 1 -p 0 -q 0 -S gemm_1x1 --weights constant -V 1 "
           "-i 3",
           0, NEEDLES("weights   constant", "verified"));
    expect("conv -c 8 -H 7 -W 7 -k 8 -i 1", 0, NEEDLES("weights   per-call"));

    /* the pool's spin: a bad value is named, the default applies, the
     * result is still verified; 0 (never spin) and a long spin verify too */
    const char *const spins[] = {"CONVSEL_POOL_SPIN_US=lots", "CONVSEL_POOL_SPIN_US=0",
                                 "CONVSEL_POOL_SPIN_US=10000"};
    for (int i = 0; i < 3; i++) {
        const int rc = test_convsel(spins[i],
                                    "conv -n 2 -c 32 -H 20 -W 20 -k 32 -y 3 -x 3 -g 32 "
                                    "-S depthwise --threads 2 -V 1 -i 20",
                                    out, sizeof out);
        CHECK(rc == 0 && strstr(out, "verified") != NULL);
        CHECK((i == 0) == (strstr(out, "CONVSEL_POOL_SPIN_US=lots: takes a whole number from 0 "
                                       "to 10000; using the default") != NULL));
    }
    expect("conv --weights sometimes", 2,
           NEEDLES("--weights sometimes: must be constant or per-call"));

    expect("conv -n 2 -c 32 -H 14 -W 14 -k 16 -y 1 -x 1 -p 0 -q 0 --find", 0,
           NEEDLES("rank solver", "gemm_1x1", "im2col_gemm", "GFLOP/s"));

    /* Bad input: exit 2 and a message naming what is wrong. */
    expect("conv -n -1", 2, NEEDLES("x_desc.n = -1", "flag -n"));
    expect("conv -y 60", 2, NEEDLES("output height = 0"));
    expect("conv -u 0", 2, NEEDLES("conv_desc.stride_h = 0", "flag -u"));
    expect("conv -p -1", 2, NEEDLES("conv_desc.pad_h = -1", "flag -p"));
    expect("conv -l 0", 2, NEEDLES("dilation_h = 0", "flag -l"));
    expect("conv -n 2000000000 -c 2000000000 -H 2000000000", 2, NEEDLES("size overflows"));
    expect("conv -H 99999999999", 2, NEEDLES("x_desc.h = 99999999999", "must be <="));
    expect("conv -c abc", 2, NEEDLES("'-c' expects an integer, got 'abc'"));
    expect("conv -c 12x", 2, NEEDLES("expects an integer"));
    expect("conv -c 99999999999999999999999", 2, NEEDLES("expects an integer"));
    expect("conv -c", 2, NEEDLES("'-c' needs a value"));
    expect("conv -Z 3", 2, NEEDLES("unknown flag '-Z'"));
    expect("conv stray", 2, NEEDLES("unknown argument 'stray'"));
    expect("conv --layout NCWH", 2, NEEDLES("--layout 'NCWH'"));
    expect("conv -S nope", 2, NEEDLES("solver 'nope': unknown", "reference"));
    expect("conv -i 0", 2, NEEDLES("-i 0"));
    expect("conv -V 2", 2, NEEDLES("-V 2"));
    expect("conv --threads 0", 2, NEEDLES("--threads 0: must be in 1..256"));
    expect("frobnicate", 2, NEEDLES("unknown command 'frobnicate'"));
    expect("", 2, NEEDLES("usage: convsel"));

    /* Help. */
    expect("--help", 0, NEEDLES("conv", "exit status"));
    expect("conv --help", 0,
           NEEDLES("usage: convsel conv", "-n, --batchsize", "-g, --group_count", "--layout",
                   "-V, --verify", "-S, --solver"));
    expect("--version", 0, NEEDLES("convsel 0.1.0"));
    return test_finish("test_cli");
}
