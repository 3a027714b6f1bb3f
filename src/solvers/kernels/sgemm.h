/* sgemm.h -- convsel's own single-precision GEMM: C = A * B (beta 0),
 * row-major, blocked for the caches, with a register-tiled micro-kernel
 * per ISA level (AVX-512 14x32, AVX2 6x16, generic 4x8) chosen at run time
 * by CPU feature.
 *
 * Either operand can be given three ways: a plain matrix (lda, optionally
 * transposed), already packed (sgemm_pack: the weights of a convolution,
 * packed once and reused across the batch and across calls), or packed on
 * the fly by a callback that reads the operand from wherever it lives (the
 * im2col of an input tensor, so that the column matrix is never written
 * out). The kernels know nothing of convolutions: the callbacks do.
 *
 * It exists because no library offers the fused packing (an im2col read
 * straight into panels, weights packed once for every call), and because
 * the GEMMs Debian ships choose kernels by CPU family, not feature
 * (OpenBLAS runs SSE3 or Haswell kernels on this CPU unless told, BLIS its
 * generic ones) or spin their threads; build/bench_sgemm times them all. */
#ifndef CONVSEL_SOLVERS_KERNELS_SGEMM_H
#define CONVSEL_SOLVERS_KERNELS_SGEMM_H

#include <stdbool.h>
#include <stddef.h>

#include "util/cpu.h"
#include "util/thread_pool.h"

#define SGEMM_MAX_MR 14 /* the largest kernel tile (AVX-512 14 x 32) */
#define SGEMM_MAX_NR 32

/* C tile (rows x nr, row stride ldc) = or += A panel (kc x mr) * B (kc
 * rows of nr, ldb apart). */
typedef void (*sgemm_ukernel_fn)(size_t kc, const float *restrict a, const float *restrict b,
                                 size_t ldb, float *restrict c, size_t ldc, bool accumulate);

/* A micro-kernel and its tile: rows of A per panel (mr), columns of B (nr);
 * and its blocking for the caches: the depth of a packed block (kc) and
 * the rows of A packed at a time (mc, a multiple of mr). */
struct sgemm_kernel {
    size_t mr, nr, kc, mc;
    enum cpu_isa isa;
    sgemm_ukernel_fn ukernel; /* all mr rows */
    /* Optional: 16 depths of up to 16 rows (rows[j][0..15], j < w) into
     * panel order out[t * width + j], for packing a row-major A. */
    void (*transpose16)(const float *const *rows, size_t w, size_t width, float *out);
    /* Optional: kernels for the first r < mr rows of a panel (rows[r]),
     * for the last panel of an A whose rows are not a multiple of mr. */
    sgemm_ukernel_fn rows[SGEMM_MAX_MR];
    /* Optional: a tile of h <= mr rows and w <= narrow_max columns (an
     * edge of C, or all of a C of few columns), at a cost that follows w
     * (the full kernel computes nr columns for any w). */
    void (*narrow)(size_t kc, const float *restrict a, const float *restrict b, size_t ldb,
                   float *restrict c, size_t ldc, size_t h, size_t w, bool accumulate);
    size_t narrow_max;
    /* C's one column (m rows, ldc apart) = a plain row-major A (lda) * a
     * contiguous b of k floats: a GEMM of N = 1, A read as it is. */
    void (*gemv)(size_t m, size_t k, const float *restrict a, size_t lda, const float *restrict b,
                 float *restrict c, size_t ldc);
};

/* The kernel for this CPU (cpu_best_isa), or for isa (NULL when the CPU
 * cannot run it: tests force the lower levels). */
const struct sgemm_kernel *sgemm_kernel_best(void);
const struct sgemm_kernel *sgemm_kernel_for(enum cpu_isa isa);

/* Packs rows (for A) or columns (for B) [i0, i1) at depths [p0, p0 + kc)
 * into panels `width` wide (the kernel's mr for A, nr for B; a B of at
 * most narrow_max columns in one panel of its width rounded up to a power
 * of two):
 *   out[((i - i0) / width) * kc * width + (p - p0) * width + (i - i0) % width]
 * with zeros for i >= i1 up to the next multiple of width. i0 is a
 * multiple of width. Called concurrently for disjoint ranges. */
typedef void (*sgemm_pack_fn)(const void *ctx, size_t i0, size_t i1, size_t p0, size_t kc,
                              size_t width, float *out);

/* One operand of C = A * B. Set exactly one of: matrix (a plain
 * row-major matrix, ld its row stride; trans: stored transposed), packed
 * (from sgemm_pack with the same kernel and shape), pack (a callback). */
struct sgemm_operand {
    const float *matrix;
    size_t ld;
    bool trans;
    const float *packed;
    sgemm_pack_fn pack;
    const void *ctx;
};

/* How sgemm_run shares C out among the pool's threads. AUTO chooses; the
 * others force a split (tests check each, bench_sgemm --splits times them
 * side by side). DEPTH: each thread computes all of C over its own range of
 * K into a buffer of its own, and the buffers are summed into C: for a
 * small C with a deep K, where ranges of rows or columns are too few to
 * balance or read the other operand again and again. */
enum sgemm_split {
    SGEMM_SPLIT_AUTO = 0,
    SGEMM_SPLIT_COLUMNS,
    SGEMM_SPLIT_ROWS,
    SGEMM_SPLIT_DEPTH,
};

struct sgemm_op {
    const struct sgemm_kernel *kernel; /* NULL: sgemm_kernel_best() */
    size_t m, n, k;
    struct sgemm_operand a; /* m x k */
    struct sgemm_operand b; /* k x n */
    float *c;               /* m x n, row stride ldc */
    size_t ldc;
    enum sgemm_split split; /* 0 (AUTO) unless forced */
};

/* C = A * B on the pool's threads (pool may be NULL). Threads take
 * disjoint column ranges of C (each packing the blocks of A it reads), or
 * row ranges when C has few columns (B, which every row range reads
 * whole, packed once first, in parallel), or depth ranges (op.split). */
void sgemm_run(const struct sgemm_op *op, struct thread_pool *pool);

/* Whether sgemm_run runs op on the calling thread alone whatever the pool:
 * too few FLOPs to pay for waking it, and no forced split. A caller with
 * work of its own around the GEMM (copying C out) keeps it on the same
 * thread then, or it pays the wake-up sgemm_run avoided. */
bool sgemm_is_serial(const struct sgemm_op *op);

/* Floats of a packed A (rows = m) or B (rows = n) of depth k for kernel. */
size_t sgemm_packed_floats(const struct sgemm_kernel *kernel, bool is_a, size_t rows, size_t k);

/* Packs operand src (matrix or callback) of rows = m (A) or n (B) and depth
 * k into out (sgemm_packed_floats of them), on the pool's threads. */
void sgemm_pack(const struct sgemm_kernel *kernel, bool is_a, const struct sgemm_operand *src,
                size_t rows, size_t k, float *out, struct thread_pool *pool);

/* The plain form: C (m x n, ldc) = A (m x k, lda; or k x m when a_trans) *
 * B (k x n, ldb; or n x k when b_trans). */
struct sgemm_args {
    size_t m, n, k;
    const float *a;
    size_t lda;
    bool a_trans;
    const float *b;
    size_t ldb;
    bool b_trans;
    float *c;
    size_t ldc;
};
void sgemm(const struct sgemm_args *g, struct thread_pool *pool);

/* The same with a given ISA variant, for tests; false if this CPU cannot
 * run it. */
bool sgemm_variant(enum cpu_isa isa, const struct sgemm_args *g, struct thread_pool *pool);

#endif
