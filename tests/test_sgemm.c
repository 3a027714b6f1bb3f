/* test_sgemm.c -- convsel's GEMM, every ISA variant this CPU runs, against
 * a double-precision triple loop: shapes around and between the register
 * tiles (AVX-512 14x32: m = 14, 15, 28, 29; every height of a last row
 * panel, which has a kernel of its own), the 16-depth transposition (AVX-512
 * in one 16 x 16 block, AVX2 in 8 x 8 blocks: A panels of 6, B of 16)
 * of A and the K block (511, 512, 513), padded leading dimensions, A
 * transposed or not, one thread and a pool of three; and the three ways
 * of giving an operand (sgemm_run): plain, packed beforehand (sgemm_pack),
 * and packed by a callback, in every combination, on every split, with
 * the kernel's own blocking and a smaller one. */
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

/* A callback packer over a plain row-major matrix, as a convolution's
 * im2col packer reads its input. */
struct plain {
    const float *x;
    size_t ld;
    bool is_a;
};

static void pack_plain(const void *ctx, size_t i0, size_t i1, size_t p0, size_t kc, size_t width,
                       float *out) {
    const struct plain *m = ctx;
    for (size_t i = i0; i < i0 + (i1 - i0 + width - 1) / width * width; i++)
        for (size_t p = 0; p < kc; p++) {
            const float v = i >= i1   ? 0.0f
                            : m->is_a ? m->x[i * m->ld + p0 + p]
                                      : m->x[(p0 + p) * m->ld + i];
            out[((i - i0) / width) * kc * width + p * width + (i - i0) % width] = v;
        }
}

/* sgemm_pack of a plain matrix (A row-major, B transposed: its panels
 * are a transposition, 8 x 8 or 16 x 16 blocks in registers) equals the
 * same packing through the callback, element for element, and writes
 * nothing past the packed size: AVX2's transposition stores the first 6
 * floats of each vector (A's panels) piecewise, and a store one float too
 * wide would land in the guard after the last panel. (The narrow B widths
 * 1, 2, 4 go through sgemm_run's checks above, n = 1, 2, 3, under ASan.) */
static bool check_pack(const struct sgemm_kernel *kn, bool is_a, size_t rows, size_t k,
                       struct rng *g) {
    enum { GUARD = 16 };
    /* A (rows x k) or B^T (rows = B's columns, x k), depths contiguous */
    const size_t ld = k + 3, floats = sgemm_packed_floats(kn, is_a, rows, k);
    float *x = malloc(rows * ld * sizeof *x);
    float *got = malloc((floats + GUARD) * sizeof *got), *want = malloc(floats * sizeof *want);
    rng_fill(g, x, rows * ld);
    for (size_t i = 0; i < floats + GUARD; i++)
        got[i] = -555.0f;
    const struct sgemm_operand plain = {.matrix = x, .ld = ld, .trans = !is_a};
    const struct plain cb_ctx = {x, ld, true};
    const struct sgemm_operand cb = {.pack = pack_plain, .ctx = &cb_ctx};
    sgemm_pack(kn, is_a, &plain, rows, k, got, NULL);
    sgemm_pack(kn, is_a, &cb, rows, k, want, NULL);
    bool ok = true;
    for (size_t i = 0; i < floats && ok; i++)
        ok = got[i] == want[i];
    for (size_t i = floats; i < floats + GUARD && ok; i++)
        ok = got[i] == -555.0f;
    if (!ok)
        fprintf(stderr, "  pack %s rows %zu k %zu (mr %zu nr %zu)\n", is_a ? "A" : "B^T", rows, k,
                kn->mr, kn->nr);
    free(x), free(got), free(want);
    return ok;
}

/* C = A * B with A and B each plain (0), packed (1) or a callback (2),
 * shared out among the threads as `split` says. */
static bool check_operands(const struct sgemm_kernel *kn, size_t m, size_t n, size_t k, int how_a,
                           int how_b, enum sgemm_split split, struct thread_pool *pool,
                           struct rng *g) {
    float *a = malloc(m * k * sizeof *a), *b = malloc(k * n * sizeof *b);
    float *c = malloc(m * n * sizeof *c);
    float *pa = malloc(sgemm_packed_floats(kn, true, m, k) * sizeof *pa);
    float *pb = malloc(sgemm_packed_floats(kn, false, n, k) * sizeof *pb);
    rng_fill(g, a, m * k);
    rng_fill(g, b, k * n);
    const struct plain ma = {a, k, true}, mb = {b, n, false};
    struct sgemm_operand oa = {.matrix = a, .ld = k}, ob = {.matrix = b, .ld = n};
    if (how_a == 1)
        sgemm_pack(kn, true, &oa, m, k, pa, pool), oa = (struct sgemm_operand){.packed = pa};
    else if (how_a == 2)
        oa = (struct sgemm_operand){.pack = pack_plain, .ctx = &ma};
    if (how_b == 1)
        sgemm_pack(kn, false, &ob, n, k, pb, pool), ob = (struct sgemm_operand){.packed = pb};
    else if (how_b == 2)
        ob = (struct sgemm_operand){.pack = pack_plain, .ctx = &mb};
    for (size_t i = 0; i < m * n; i++)
        c[i] = 777.0f; /* every element must be written, not added to */
    const struct sgemm_op op = {kn, m, n, k, oa, ob, c, n, split};
    sgemm_run(&op, pool);
    bool ok = true;
    for (size_t i = 0; i < m && ok; i++)
        for (size_t j = 0; j < n && ok; j++) {
            double want = 0, mag = 0;
            for (size_t p = 0; p < k; p++) {
                want += (double)a[i * k + p] * b[p * n + j];
                mag += fabs((double)a[i * k + p] * b[p * n + j]);
            }
            ok = fabs(c[i * n + j] - want) <= 1e-5 * (mag + 1);
        }
    if (!ok)
        fprintf(stderr, "  operands A %d B %d split %d: m%zu n%zu k%zu (kc %zu, mc %zu)\n", how_a,
                how_b, (int)split, m, n, k, kn->kc, kn->mc);
    free(a), free(b), free(c), free(pa), free(pb);
    return ok;
}

int main(void) {
    struct rng g = rng_seed(21);
    struct thread_pool *pool = thread_pool_create(3);
    /* m >= 3 row blocks with n < m: the threads split rows (100: a short last block) */
    const size_t ms[] = {1, 5, 8, 14, 15, 29, 64, 100, 200};
    /* n: every narrow kernel's width (1, 2, 4 for 3, 8 for 7, 16) whole and
     * as an edge (33: 1, 42: 10, 100: 4), and wide edges (31). The AVX2
     * narrow kernels read 8 floats of a 6-row A panel at every depth but
     * the last: packed A of exactly sgemm_packed_floats, under ASan, is
     * what fails if the last depth is read so too (k 1 and 3: few depths) */
    const size_t ns[] = {1, 2, 3, 7, 16, 31, 33, 42, 100};
    const size_t ks[] = {1, 3, 17, 511, 512, 513, 1100};
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
                    if ((a + b + c) % 3 == 0 || a >= 7) /* every big-m shape on the pool */
                        CHECK(check((enum cpu_isa)isa, ms[a], ns[b], ks[c], (a + b) % 2, pool, &g));
                }
        /* every height of a last A panel (its own kernel), in full-width
         * tiles and an edge, in one K block and accumulated over two */
        const struct sgemm_kernel *kn = sgemm_kernel_for((enum cpu_isa)isa);
        for (size_t r = 1; r < kn->mr; r++)
            for (size_t k = 40; k < 1000; k += 490) {
                CHECK(check((enum cpu_isa)isa, 2 * kn->mr + r, 2 * kn->nr + 3, k, r % 2, NULL, &g));
                CHECK(check((enum cpu_isa)isa, 2 * kn->mr + r, 8 * kn->nr, k, r % 2, pool, &g));
            }
        /* the transposing packer against the callback: A and B panels of
         * every height up to two B panels, depths across a 16-block and a
         * KC block */
        for (size_t rows = 1; rows <= 2 * kn->nr + 1; rows++)
            for (size_t k = 15; k < 600; k += 290) {
                CHECK(check_pack(kn, true, rows, k, &g));
                CHECK(check_pack(kn, false, rows, k, &g));
            }
        checked++;
    }
    /* plain, packed and callback operands; a column split (n > m), a row
     * split (n small) and one for balance (128 x 196 on three threads: 7
     * column panels against 10 row panels), k across blocks; and each of
     * them with each split forced, depth ranges included (k of 1 to 6
     * blocks: 1 to 6 ranges on three threads, 1 or 2 on one) */
    const struct sgemm_kernel *best = sgemm_kernel_best();
    const size_t shapes[][3] = {{30, 300, 600},  {200, 20, 530},  {7, 9, 3},
                                {128, 196, 300}, {128, 49, 2600}, {20, 10, 1030}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int split = SGEMM_SPLIT_AUTO; split <= SGEMM_SPLIT_DEPTH; split++)
            for (int how_a = 0; how_a < 3; how_a++)
                for (int how_b = 0; how_b < 3; how_b++) {
                    if (split != SGEMM_SPLIT_AUTO && (how_a + how_b) % 2 && s < 4)
                        continue; /* forced splits of the small shapes: half the combinations */
                    CHECK(check_operands(best, shapes[s][0], shapes[s][1], shapes[s][2], how_a,
                                         how_b, (enum sgemm_split)split, NULL, &g));
                    CHECK(check_operands(best, shapes[s][0], shapes[s][1], shapes[s][2], how_a,
                                         how_b, (enum sgemm_split)split, pool, &g));
                }
    /* The blocking is the kernel's (bench_sgemm --blocking times copies of
     * it reblocked): a depth block of 100 and A blocks of two panels, so
     * that every loop of the driver runs several times; column ranges of
     * uneven widths (11 panels in 6 ranges) and fewer panels than ranges. */
    struct sgemm_kernel small = *best;
    small.kc = 100, small.mc = 2 * small.mr;
    const size_t reblocked[][3] = {{5 * small.mr + 3, 11 * small.nr - 5, 250},
                                   {3 * small.mr, 2 * small.nr, 401}};
    for (size_t s = 0; s < sizeof reblocked / sizeof reblocked[0]; s++)
        for (int split = SGEMM_SPLIT_AUTO; split <= SGEMM_SPLIT_DEPTH; split++)
            for (int how = 0; how < 9; how++)
                CHECK(check_operands(&small, reblocked[s][0], reblocked[s][1], reblocked[s][2],
                                     how / 3, how % 3, (enum sgemm_split)split, pool, &g));
    /* k = 0 gives zeros; the default entry point works */
    float c[4] = {1, 2, 3, 4}, a[1] = {0}, b[1] = {0};
    const struct sgemm_args z = {2, 2, 0, a, 1, false, b, 2, false, c, 2};
    sgemm(&z, NULL);
    CHECK(c[0] == 0 && c[1] == 0 && c[2] == 0 && c[3] == 0);
    /* the threshold below which sgemm_run leaves the pool alone (and
     * gemm_fold_run copies C out on the calling thread): a 1 MFLOP GEMM is
     * serial, a 268 MFLOP one is not, and a forced split never is */
    struct sgemm_op op = {.m = 64, .n = 128, .k = 64};
    CHECK(sgemm_is_serial(&op));
    op.split = SGEMM_SPLIT_ROWS;
    CHECK(!sgemm_is_serial(&op));
    op = (struct sgemm_op){.m = 512, .n = 512, .k = 512};
    CHECK(!sgemm_is_serial(&op));
    printf("%d ISA variants checked\n", checked);
    thread_pool_destroy(pool);
    return test_finish("test_sgemm");
}
