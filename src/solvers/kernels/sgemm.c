/* sgemm.c -- see sgemm.h.
 *
 * Structure (the usual one): for each block of KC rows of B, pack that
 * block of B into NR-wide panels and the matching columns of A into MR-tall
 * panels, then a micro-kernel multiplies one A panel by one B panel into an
 * MR x NR tile of C held in registers. The micro-kernel is written once
 * with GCC vector extensions (vector width V, tile MR x 2V) and compiled
 * for each ISA level with the tile that fits its registers (AVX-512:
 * 8 x 32, 16 accumulators; AVX2: 6 x 16, 12 of its 16 registers; 12 x 32
 * measured no faster here). The rows macros go up to 14. Edge tiles are
 * computed into a scratch tile and copied. Threads take disjoint column
 * ranges of C (multiples of NR), or disjoint row ranges when C has fewer
 * columns than rows, so they share nothing but A and B. */
#include "solvers/kernels/sgemm.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define KC 256 /* rows of B per packed block: A and B panels stay in L1/L2 */

/* ---------------------------- packing ---------------------------- */

/* Packs columns [j0, j0+nc) of rows [p0, p0+kc) of B into NR-wide panels:
 * panel q holds kc rows of NR floats (zero beyond column n). */
static void pack_b(const struct sgemm_args *g, size_t p0, size_t kc, size_t j0, size_t nc,
                   size_t nr, float *out) {
    for (size_t q = 0; q < nc; q += nr) {
        const size_t w = nc - q < nr ? nc - q : nr;
        for (size_t p = 0; p < kc; p++) {
            float *dst = out + q * kc + p * nr;
            if (g->b_trans) { /* B is stored n x k */
                for (size_t j = 0; j < w; j++)
                    dst[j] = g->b[(j0 + q + j) * g->ldb + p0 + p];
            } else {
                memcpy(dst, g->b + (p0 + p) * g->ldb + j0 + q, w * sizeof *dst);
            }
            for (size_t j = w; j < nr; j++)
                dst[j] = 0.0f;
        }
    }
}

/* Packs rows [r0, r1) of columns [p0, p0+kc) of A into MR-tall panels:
 * panel holds kc columns of MR floats (zero beyond row r1). */
static void pack_a(const struct sgemm_args *g, size_t p0, size_t kc, size_t r0, size_t r1,
                   size_t mr, float *out) {
    for (size_t i0 = r0; i0 < r1; i0 += mr) {
        const size_t h = r1 - i0 < mr ? r1 - i0 : mr;
        float *panel = out + (i0 - r0) * kc;
        for (size_t p = 0; p < kc; p++)
            for (size_t i = 0; i < mr; i++) {
                float v = 0.0f;
                if (i < h)
                    v = g->a_trans ? g->a[(p0 + p) * g->lda + i0 + i]
                                   : g->a[(i0 + i) * g->lda + p0 + p];
                panel[p * mr + i] = v;
            }
    }
}

/* ---------------------------- micro-kernels ---------------------------- */

/* C tile (MR x 2V at c, row stride ldc) = or += A panel * B panel. The
 * accumulators are named variables, not an array, so that the compiler
 * keeps all of them in registers (with an array it spilled them). Rows
 * beyond MR are dead code the compiler removes. */
#define ACC_ROW(i)                                                                                 \
    if ((i) < MR) {                                                                                \
        const VEC ai = a[p * MR + (i)] - (VEC){0}; /* x - (+0) == x: a pure broadcast */           \
        c##i##0 += ai * b0;                                                                        \
        c##i##1 += ai * b1;                                                                        \
    }
#define STORE_ROW(i)                                                                               \
    if ((i) < MR) {                                                                                \
        VEC *r0 = (VEC *)(c + (i)*ldc), *r1 = (VEC *)(c + (i)*ldc + V);                            \
        if (accumulate) {                                                                          \
            *r0 += c##i##0;                                                                        \
            *r1 += c##i##1;                                                                        \
        } else {                                                                                   \
            *r0 = c##i##0;                                                                         \
            *r1 = c##i##1;                                                                         \
        }                                                                                          \
    }
#define MICRO_KERNEL_BODY                                                                          \
    VEC c00 = {0}, c01 = {0}, c10 = {0}, c11 = {0}, c20 = {0}, c21 = {0}, c30 = {0}, c31 = {0};    \
    VEC c40 = {0}, c41 = {0}, c50 = {0}, c51 = {0}, c60 = {0}, c61 = {0}, c70 = {0}, c71 = {0};    \
    VEC c80 = {0}, c81 = {0}, c90 = {0}, c91 = {0}, c100 = {0}, c101 = {0}, c110 = {0};            \
    VEC c111 = {0}, c120 = {0}, c121 = {0}, c130 = {0}, c131 = {0};                                \
    for (size_t p = 0; p < kc; p++) {                                                              \
        const VEC b0 = *(const VEC *)(b + p * 2 * V), b1 = *(const VEC *)(b + p * 2 * V + V);      \
        ACC_ROW(0)                                                                                 \
        ACC_ROW(1)                                                                                 \
        ACC_ROW(2)                                                                                 \
        ACC_ROW(3)                                                                                 \
        ACC_ROW(4)                                                                                 \
        ACC_ROW(5)                                                                                 \
        ACC_ROW(6)                                                                                 \
        ACC_ROW(7) ACC_ROW(8) ACC_ROW(9) ACC_ROW(10) ACC_ROW(11) ACC_ROW(12) ACC_ROW(13)           \
    }                                                                                              \
    STORE_ROW(0)                                                                                   \
    STORE_ROW(1)                                                                                   \
    STORE_ROW(2)                                                                                   \
    STORE_ROW(3)                                                                                   \
    STORE_ROW(4)                                                                                   \
    STORE_ROW(5)                                                                                   \
    STORE_ROW(6)                                                                                   \
    STORE_ROW(7) STORE_ROW(8) STORE_ROW(9) STORE_ROW(10) STORE_ROW(11) STORE_ROW(12) STORE_ROW(13)

typedef float v4f __attribute__((vector_size(16), aligned(4)));
typedef float v8f __attribute__((vector_size(32), aligned(4)));
typedef float v16f __attribute__((vector_size(64), aligned(4)));

static void ukernel_4x8_generic(size_t kc, const float *restrict a, const float *restrict b,
                                float *restrict c, size_t ldc, bool accumulate) {
    enum { MR = 4, V = 4 };
    typedef v4f VEC;
    MICRO_KERNEL_BODY
}

#ifdef CPU_X86_VARIANTS
CPU_TARGET_AVX2 static void ukernel_6x16_avx2(size_t kc, const float *restrict a,
                                              const float *restrict b, float *restrict c,
                                              size_t ldc, bool accumulate) {
    enum { MR = 6, V = 8 };
    typedef v8f VEC;
    MICRO_KERNEL_BODY
}

CPU_TARGET_AVX512 static void ukernel_8x32_avx512(size_t kc, const float *restrict a,
                                                  const float *restrict b, float *restrict c,
                                                  size_t ldc, bool accumulate) {
    enum { MR = 8, V = 16 };
    typedef v16f VEC;
    MICRO_KERNEL_BODY
}
#endif

struct variant {
    size_t mr, nr;
    void (*ukernel)(size_t kc, const float *restrict a, const float *restrict b, float *restrict c,
                    size_t ldc, bool accumulate);
};

static const struct variant variants[3] = {
    {4, 8, ukernel_4x8_generic},
#ifdef CPU_X86_VARIANTS
    {6, 16, ukernel_6x16_avx2},
    {8, 32, ukernel_8x32_avx512},
#endif
};

/* ---------------------------- per-thread buffers ---------------------------- */

/* Packing buffers live with the thread, so a call allocates nothing once
 * warm; the key's destructor frees them when the thread ends. */
struct buffers {
    float *a, *b;
    size_t a_cap, b_cap;
};

static pthread_key_t buffers_key;
static pthread_once_t buffers_once = PTHREAD_ONCE_INIT;

static void free_buffers(void *p) {
    struct buffers *bf = p;
    free(bf->a);
    free(bf->b);
    free(bf);
}

static void make_key(void) {
    pthread_key_create(&buffers_key, free_buffers);
}

static float *grow(float **buf, size_t *cap, size_t need) {
    if (need <= *cap)
        return *buf;
    free(*buf);
    *cap = 0;
    *buf = aligned_alloc(64, (need * sizeof(float) + 63) / 64 * 64);
    if (*buf != NULL)
        *cap = need;
    return *buf;
}

static struct buffers *thread_buffers(void) {
    pthread_once(&buffers_once, make_key);
    struct buffers *bf = pthread_getspecific(buffers_key);
    if (bf == NULL && (bf = calloc(1, sizeof *bf)) != NULL)
        pthread_setspecific(buffers_key, bf);
    return bf;
}

/* ---------------------------- driver ---------------------------- */

struct job {
    const struct sgemm_args *g;
    const struct variant *v;
    bool by_rows; /* tasks are blocks of ROW_BLOCK rows, else NR-wide column panels */
};

/* Rows of C per task when the threads split A's rows. */
#define ROW_BLOCK 32

/* Computes the tile rows [r0, r1) x columns [j0, j0 + nc) of C. */
static void run_tile(const struct sgemm_args *g, const struct variant *v, size_t r0, size_t r1,
                     size_t j0, size_t nc) {
    const size_t mr = v->mr, nr = v->nr;
    const size_t m_pad = (r1 - r0 + mr - 1) / mr * mr, nc_pad = (nc + nr - 1) / nr * nr;
    struct buffers *bf = thread_buffers();
    float *pa = bf ? grow(&bf->a, &bf->a_cap, m_pad * KC) : NULL;
    float *pb = bf ? grow(&bf->b, &bf->b_cap, nc_pad * KC) : NULL;
    if (pa == NULL || pb == NULL) { /* no buffers: slow but correct, unpacked */
        for (size_t i = r0; i < r1; i++)
            for (size_t j = j0; j < j0 + nc; j++) {
                float sum = 0.0f;
                for (size_t p = 0; p < g->k; p++)
                    sum += (g->a_trans ? g->a[p * g->lda + i] : g->a[i * g->lda + p]) *
                           (g->b_trans ? g->b[j * g->ldb + p] : g->b[p * g->ldb + j]);
                g->c[i * g->ldc + j] = sum;
            }
        return;
    }
    float edge[14 * 32];
    for (size_t p0 = 0; p0 < g->k; p0 += KC) {
        const size_t kc = g->k - p0 < KC ? g->k - p0 : KC;
        pack_b(g, p0, kc, j0, nc, nr, pb);
        pack_a(g, p0, kc, r0, r1, mr, pa);
        const bool acc = p0 > 0;
        for (size_t q = 0; q < nc; q += nr)
            for (size_t i0 = r0; i0 < r1; i0 += mr) {
                const size_t h = r1 - i0 < mr ? r1 - i0 : mr;
                const size_t w = nc - q < nr ? nc - q : nr;
                float *c = g->c + i0 * g->ldc + j0 + q;
                const float *a = pa + (i0 - r0) * kc;
                if (h == mr && w == nr) {
                    v->ukernel(kc, a, pb + q * kc, c, g->ldc, acc);
                    continue;
                }
                /* an edge tile: compute it whole, keep the valid part */
                for (size_t i = 0; i < h; i++)
                    memcpy(edge + i * nr, c + i * g->ldc, w * sizeof *c);
                v->ukernel(kc, a, pb + q * kc, edge, nr, acc);
                for (size_t i = 0; i < h; i++)
                    memcpy(c + i * g->ldc, edge + i * nr, w * sizeof *c);
            }
    }
}

static void run_tasks(void *ctx, size_t begin, size_t end) {
    const struct job *jb = ctx;
    const struct sgemm_args *g = jb->g;
    if (jb->by_rows) {
        const size_t r1 = end * ROW_BLOCK < g->m ? end * ROW_BLOCK : g->m;
        run_tile(g, jb->v, begin * ROW_BLOCK, r1, 0, g->n);
    } else {
        const size_t j0 = begin * jb->v->nr;
        const size_t j1 = end * jb->v->nr < g->n ? end * jb->v->nr : g->n;
        run_tile(g, jb->v, 0, g->m, j0, j1 - j0);
    }
}

static void run(const struct variant *v, const struct sgemm_args *g, struct thread_pool *pool) {
    if (g->m == 0 || g->n == 0)
        return;
    if (g->k == 0) {
        for (size_t i = 0; i < g->m; i++)
            memset(g->c + i * g->ldc, 0, g->n * sizeof *g->c);
        return;
    }
    /* Every task packs the whole of the operand it does not split: column
     * tasks each pack all of A, row tasks all of B. So split the larger
     * one's partner: with few columns (a 7x7 map: n = 49) and many rows,
     * splitting the columns would pack A once per thread for little work. */
    const size_t col_tasks = (g->n + v->nr - 1) / v->nr;
    const size_t row_tasks = (g->m + ROW_BLOCK - 1) / ROW_BLOCK;
    const size_t threads = (size_t)(pool ? thread_pool_threads(pool) : 1);
    struct job jb = {g, v, row_tasks >= threads && (g->n < g->m || col_tasks < threads)};
    thread_pool_parallel_for(pool, jb.by_rows ? row_tasks : col_tasks, run_tasks, &jb);
}

bool sgemm_variant(enum cpu_isa isa, const struct sgemm_args *g, struct thread_pool *pool) {
    if (!cpu_supports(isa) || (unsigned)isa >= sizeof variants / sizeof variants[0] ||
        variants[isa].ukernel == NULL)
        return false;
    run(&variants[isa], g, pool);
    return true;
}

void sgemm(const struct sgemm_args *g, struct thread_pool *pool) {
    enum cpu_isa isa = cpu_best_isa();
    while ((unsigned)isa >= sizeof variants / sizeof variants[0])
        isa = (enum cpu_isa)(isa - 1);
    run(&variants[isa], g, pool);
}
