/* blocked_kernels.h -- the inner loops of the direct_blocked solver, in
 * variants per ISA level. Kernels only compute: no allocation, no threads,
 * no checks (the solver has made them).
 *
 * A band of output rows of one group of one image is computed from its
 * input channels packed into slabs (the depthwise kernels' layout,
 * depthwise_kernels.h: padding as zeros, columns split by stride phase),
 * in register blocks of DB_KB output channels x NQ vectors of output
 * columns: every tap loads NQ input vectors and broadcasts DB_KB weights
 * for DB_KB * NQ multiply-adds, and the sums over the whole group stay in
 * registers until they are stored. */
#ifndef CONVSEL_SOLVERS_KERNELS_BLOCKED_H
#define CONVSEL_SOLVERS_KERNELS_BLOCKED_H

#include <stdbool.h>
#include <stdint.h>

#include "solvers/kernels/depthwise_kernels.h"
#include "util/cpu.h"

/* Output channels per register block. The weights are laid out for it:
 * [block][c][r][s][DB_KB], the last block padded with zeros. */
#define DB_KB 4

/* Filter columns the kernel takes (its table of column offsets). */
#define DB_MAX_S 1024

struct db_band {
    const struct dw_geometry *g;
    const struct dw_slab *sl;
    const float *slabs;     /* cg slabs of this band, slab_floats apart */
    int64_t slab_floats;    /* >= dw_slab_rows(g, rows) * sl->row_pitch */
    int64_t cg;             /* input channels in the slabs: the group's, or a chunk */
    const int32_t *col_off; /* per filter column s: where it reads in a slab row */
    const float *taps;      /* weights of the slabs' first channel: [block][c][r][s][DB_KB] */
    int64_t block_floats;   /* floats from one block of the weights to the next */
    int64_t kg;             /* output channels of the group */
    bool accumulate;        /* add to y (a later chunk of the group's channels) */
    int64_t rows;           /* output rows of the band */
    float *y;               /* the group's first output channel at the band's first row */
    int64_t y_plane;        /* floats from one output channel to the next */
};

struct db_kernels {
    void (*band)(const struct db_band *b);
    enum cpu_isa isa;
    int lanes; /* floats per vector */
};

/* Offsets of the filter columns in a slab row: column s reads padded
 * column ox * stride_w + s * dil_w, which is phase (s * dil_w) % stride_w
 * at index ox + (s * dil_w) / stride_w. */
void db_column_offsets(const struct dw_geometry *g, const struct dw_slab *sl, int32_t *col_off);

/* The kernels for this CPU (the best variant it runs). */
const struct db_kernels *db_kernels(void);

/* A given variant, for tests; NULL when this CPU cannot run it. */
const struct db_kernels *db_kernels_variant(enum cpu_isa isa);

/* The AVX-512 variant's loop (16-float vectors) compiled for this CPU's
 * AVX2 or baseline, for tests on machines without AVX-512: the same code
 * path at the same width, slowly. */
const struct db_kernels *db_kernels_wide_for_tests(void);

#endif
