/* bench_sgemm.c -- convsel's GEMM against OpenBLAS's cblas_sgemm on the
 * GEMM shapes of convolutions (M = output channels, N = pixels, K = taps),
 * side by side, interleaved, best of 7. OpenBLAS runs with whatever
 * OPENBLAS_CORETYPE / OPENBLAS_NUM_THREADS the environment says.
 *   build/bench_sgemm [THREADS=2] */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

#include "solvers/kernels/sgemm.h"
#include "util/clock.h"
#include "util/rng.h"

int main(int argc, char **argv) {
    const int threads = argc > 1 ? atoi(argv[1]) : 2;
    struct thread_pool *pool = threads > 1 ? thread_pool_create(threads) : NULL;
    const size_t shapes[][3] = {{64, 3136, 576}, {64, 3136, 64},    {256, 3136, 64},
                                {512, 784, 256}, {128, 784, 1152},  {1024, 196, 256},
                                {512, 49, 2048}, {1024, 1024, 1024}};
    printf("%d threads (convsel pool); OpenBLAS: %s, %d threads\n", threads,
           openblas_get_corename(), openblas_get_num_threads());
    printf("%6s %6s %6s %12s %12s %7s\n", "M", "N", "K", "convsel", "openblas", "ratio");
    struct rng g = rng_seed(1);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const size_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
        float *a = malloc(m * k * sizeof *a), *b = malloc(k * n * sizeof *b),
              *c = malloc(m * n * sizeof *c);
        rng_fill(&g, a, m * k);
        rng_fill(&g, b, k * n);
        const struct sgemm_args args = {m, n, k, a, k, false, b, n, false, c, n};
        double best[2] = {1e9, 1e9};
        for (int r = 0; r < 8; r++) {
            int64_t t0 = clock_now_ns();
            sgemm(&args, pool);
            const double t1 = (double)(clock_now_ns() - t0);
            t0 = clock_now_ns();
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0f, a,
                        (int)k, b, (int)n, 0.0f, c, (int)n);
            const double t2 = (double)(clock_now_ns() - t0);
            if (r > 0) { /* the first round warms up */
                best[0] = t1 < best[0] ? t1 : best[0];
                best[1] = t2 < best[1] ? t2 : best[1];
            }
        }
        const double flop = 2.0 * (double)m * (double)n * (double)k;
        printf("%6zu %6zu %6zu %12.1f %12.1f %6.2fx\n", m, n, k, flop / best[0], flop / best[1],
               best[1] / best[0]);
        free(a), free(b), free(c);
    }
    thread_pool_destroy(pool);
    return 0;
}
