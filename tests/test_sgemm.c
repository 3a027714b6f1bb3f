/* test_sgemm.c -- convsel's GEMM, every ISA variant this CPU runs, against
 * a double-precision triple loop: shapes around and between the register
 * tiles and the K block, padded leading dimensions, A transposed or not,
 * one thread and a pool of three. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "solvers/kernels/sgemm.h"
#include "testutil.h"
#include "util/rng.h"

static bool check(enum cpu_isa isa, size_t m, size_t n, size_t k, bool trans,
                  struct thread_pool *pool, struct rng *g) {
    /* trans: A and B both transposed (and otherwise neither) */
    const size_t lda = (trans ? m : k) + 3, ldb = (trans ? k : n) + 5, ldc = n + 7;
    float *a = malloc((trans ? k : m) * lda * sizeof *a + 4);
    float *b = malloc((trans ? n : k) * ldb * sizeof *b + 4);
    float *c = malloc(m * ldc * sizeof *c + 4);
    rng_fill(g, a, (trans ? k : m) * lda);
    rng_fill(g, b, (trans ? n : k) * ldb);
    for (size_t i = 0; i < m * ldc; i++)
        c[i] = 777.0f; /* every element of C must be written; padding must not */
    const struct sgemm_args args = {m, n, k, a, lda, trans, b, ldb, trans, c, ldc};
    if (!sgemm_variant(isa, &args, pool)) {
        free(a), free(b), free(c);
        return true; /* unsupported: nothing to check */
    }
    bool ok = true;
    for (size_t i = 0; i < m && ok; i++) {
        for (size_t j = 0; j < n && ok; j++) {
            double want = 0, mag = 0;
            for (size_t p = 0; p < k; p++) {
                const double av = trans ? a[p * lda + i] : a[i * lda + p];
                const double bv = trans ? b[j * ldb + p] : b[p * ldb + j];
                want += av * bv;
                mag += fabs(av * bv);
            }
            ok = fabs(c[i * ldc + j] - want) <= 1e-5 * (mag + 1);
        }
        for (size_t j = n; j < ldc && ok; j++)
            ok = c[i * ldc + j] == 777.0f;
    }
    if (!ok)
        fprintf(stderr, "  %s m%zu n%zu k%zu trans %d\n", cpu_isa_name(isa), m, n, k, trans);
    free(a), free(b), free(c);
    return ok;
}

int main(void) {
    struct rng g = rng_seed(21);
    struct thread_pool *pool = thread_pool_create(3);
    /* m >= 3 row blocks with n < m: the threads split rows (100: a short last block) */
    const size_t ms[] = {1, 5, 8, 9, 17, 64, 100, 200};
    const size_t ns[] = {1, 7, 16, 31, 33, 100};
    const size_t ks[] = {1, 3, 255, 256, 257, 600};
    int checked = 0;
    for (int isa = CPU_GENERIC; isa <= CPU_AVX512; isa++) {
        if (!cpu_supports((enum cpu_isa)isa)) {
            printf("%s: not supported by this CPU, not tested\n", cpu_isa_name((enum cpu_isa)isa));
            continue;
        }
        for (size_t a = 0; a < sizeof ms / sizeof ms[0]; a++)
            for (size_t b = 0; b < sizeof ns / sizeof ns[0]; b++)
                for (size_t c = 0; c < sizeof ks / sizeof ks[0]; c++) {
                    CHECK(check((enum cpu_isa)isa, ms[a], ns[b], ks[c], (a + b + c) % 2, NULL, &g));
                    if ((a + b + c) % 3 == 0 || a >= 6) /* every big-m shape on the pool */
                        CHECK(check((enum cpu_isa)isa, ms[a], ns[b], ks[c], (a + b) % 2, pool, &g));
                }
        checked++;
    }
    /* k = 0 gives zeros; the default entry point works */
    float c[4] = {1, 2, 3, 4}, a[1] = {0}, b[1] = {0};
    const struct sgemm_args z = {2, 2, 0, a, 1, false, b, 2, false, c, 2};
    sgemm(&z, NULL);
    CHECK(c[0] == 0 && c[1] == 0 && c[2] == 0 && c[3] == 0);
    printf("%d ISA variants checked\n", checked);
    thread_pool_destroy(pool);
    return test_finish("test_sgemm");
}
