/* test_nn_kernels.c -- every ISA variant of the nn kernels this CPU can run
 * gives the generic result (within fp32 rounding; FMA changes the last
 * bits), on sizes around and between vector widths. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "nn/kernels.h"
#include "testutil.h"
#include "util/rng.h"

int main(void) {
    const struct nn_kernels *generic = nn_kernels_variant("generic");
    CHECK(generic != NULL && nn_kernels() != NULL);
    printf("chosen: %s\n", nn_kernels()->isa);
    const char *isas[] = {"avx512", "avx2"};
    struct rng g = rng_seed(5);
    int variants = 0;
    for (int v = 0; v < 2; v++) {
        const struct nn_kernels *k = nn_kernels_variant(isas[v]);
        if (k == NULL) {
            printf("%s: not supported by this CPU, not tested\n", isas[v]);
            continue;
        }
        variants++;
        const size_t sizes[] = {1, 3, 7, 8, 15, 16, 17, 31, 32, 33, 64, 100, 257};
        for (size_t a = 0; a < sizeof sizes / sizeof sizes[0]; a++)
            for (size_t b = 0; b < sizeof sizes / sizeof sizes[0]; b++) {
                const size_t rows = sizes[a], cols = sizes[b];
                float *x = malloc(rows * sizeof *x), *w = malloc(rows * cols * sizeof *w);
                float *y0 = malloc(cols * sizeof *y0), *y1 = malloc(cols * sizeof *y1);
                rng_fill(&g, x, rows);
                rng_fill(&g, w, rows * cols);
                rng_fill(&g, y0, cols);
                for (size_t j = 0; j < cols; j++)
                    y1[j] = y0[j];
                generic->vec_mat_acc(x, rows, w, cols, y0);
                k->vec_mat_acc(x, rows, w, cols, y1);
                bool ok = true;
                for (size_t j = 0; j < cols; j++)
                    ok &= fabsf(y0[j] - y1[j]) <= 1e-5f * (float)rows;
                if (!CHECK(ok))
                    fprintf(stderr, "  %s rows %zu cols %zu\n", isas[v], rows, cols);
                free(x), free(w), free(y0), free(y1);
            }
    }
    printf("%d ISA variants checked against generic\n", variants);
    CHECK(nn_kernels_variant("sse9") == NULL);
    return test_finish("test_nn_kernels");
}
