/* depthwise_kernels.h -- the inner loops of the depthwise solver, one
 * output row at a time, in variants per ISA level. Kernels only compute:
 * no allocation, no threads, no checks (the solver has made them). */
#ifndef CONVSEL_SOLVERS_KERNELS_DEPTHWISE_H
#define CONVSEL_SOLVERS_KERNELS_DEPTHWISE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/cpu.h"

/* Geometry shared by every row of one problem. */
struct dw_geometry {
    int64_t h, w, r, s, ow;
    int64_t stride_h, stride_w, dil_h, dil_w, pad_h, pad_w;
    int64_t c, k, mult; /* NHWC: input and output channels, k = c * mult */
};

/* NCHW works on slabs: the input rows a band of output rows of one
 * channel reads, copied with the padding written out as zeros and the
 * columns split into stride_w phases (phase q holds padded columns q,
 * q + stride_w, ...). Every tap then reads DW_COLS contiguous floats per
 * output block, whatever the padding, stride or dilation: no bounds in the
 * inner loop, and the slab stays in L1. */
#define DW_COLS 16

/* Floats of the slab the solvers keep on a task's stack: 32 KiB, within
 * L1 with room for taps and output. */
#define DW_SLAB_FLOATS 8192

struct dw_slab {
    int64_t band;      /* output rows per band (the last may have fewer) */
    int64_t phase_len; /* floats per phase of a slab row */
    int64_t row_pitch; /* floats per slab row: stride_w * phase_len */
};

/* The slab layout for g with at most max_floats per slab, and bands small
 * enough that planes * bands >= min_tasks where possible; false when not
 * even one output row fits (very wide rows: use nchw_row). */
bool dw_slab_plan(const struct dw_geometry *g, int64_t oh, int64_t planes, int64_t min_tasks,
                  size_t max_floats, struct dw_slab *out);

/* Input rows a band of `rows` output rows reads. */
int64_t dw_slab_rows(const struct dw_geometry *g, int64_t rows);

/* Zeroes a slab for a band of `rows` output rows: the padding. */
void dw_slab_clear(const struct dw_geometry *g, const struct dw_slab *sl, int64_t rows,
                   float *slab);

/* Copies the input plane x (h x w; element (i, j) at i * row_stride +
 * j * col_stride: w and 1 when packed, w * c and c for a channel of NHWC)
 * into the slab of output rows [oy0, oy0 + rows). Only the input's
 * positions are written: the padding's stay as dw_slab_clear left them,
 * since they are the same for every plane of a band (planes of one band
 * reuse the slab, cleared once). */
void dw_slab_pack(const struct dw_geometry *g, const struct dw_slab *sl, const float *x,
                  int64_t row_stride, int64_t col_stride, int64_t oy0, int64_t rows, float *slab);

/* NCHW on small maps (see depthwise_small.inc): output channels
 * [k0, k0 + lanes) of some images at once, lanes <= the variant's
 * small_lanes, in a work buffer of dw_small_floats floats (tile, weights
 * and outputs). Output pixels of a row are computed in blocks of up to
 * DW_SMALL_BLOCK; the tile and the outputs have slack for the last
 * block's pixels past the row. */
#define DW_SMALL_BLOCK 8
#define DW_SMALL_SLACK(g) ((DW_SMALL_BLOCK - 1) * (g)->stride_w)

/* Tile columns: the padded input a plane's ow outputs read across (its
 * rows are dw_slab_rows(g, oh), below: a slab of the whole plane). */
static inline int64_t dw_small_tile_cols(const struct dw_geometry *g) {
    return (g->ow - 1) * g->stride_w + (g->s - 1) * g->dil_w + 1;
}

/* Floats of the work buffer nchw_small needs for `lanes` channels. */
static inline size_t dw_small_floats(const struct dw_geometry *g, int64_t oh, int64_t lanes) {
    return (size_t)((dw_slab_rows(g, oh) * dw_small_tile_cols(g) + DW_SMALL_SLACK(g) + g->r * g->s +
                     oh * g->ow + DW_SMALL_BLOCK) *
                    lanes);
}

struct dw_kernels {
    /* NCHW: `rows` output rows of one channel from their packed slab; y is
     * the first of them (rows x ow, packed). accumulate: add to y (the
     * direct solver sums its input channels so) instead of writing it. */
    void (*nchw_band)(const struct dw_geometry *g, const struct dw_slab *sl, const float *slab,
                      const float *taps, int64_t rows, bool accumulate, float *y);
    /* NCHW, rows too wide for a slab: output row oy of one channel. x is the input plane (h x w,
     * packed), taps the channel's r*s weights, y the output row (ow). */
    void (*nchw_row)(const struct dw_geometry *g, const float *x, const float *taps, int64_t oy,
                     float *y);
    /* NHWC: output row oy of one image, all channels. x is the image
     * (h x w x c), taps the weights as [r][s][k], y the row (ow x k). */
    void (*nhwc_row)(const struct dw_geometry *g, const float *x, const float *taps, int64_t oy,
                     float *y);
    /* NCHW, small maps: output channels [k0, k0 + lanes) of `images`
     * images, all oh rows. x is the first image (images of g->c planes of
     * h x w, packed), w all g->k filters (r x s each), y the first image's
     * output (images of g->k planes of oh x ow, packed), work a buffer of
     * dw_small_floats(g, oh, small_lanes) floats. */
    void (*nchw_small)(const struct dw_geometry *g, int64_t oh, const float *x, int64_t images,
                       const float *w, int64_t k0, int64_t lanes, float *work, float *y);
    int64_t small_lanes; /* channels per nchw_small call: the vector width */
    enum cpu_isa isa;
};

/* The kernels for this CPU (the best variant it runs). */
const struct dw_kernels *dw_kernels(void);

/* A given variant, for tests; NULL when this CPU cannot run it. */
const struct dw_kernels *dw_kernels_variant(enum cpu_isa isa);

/* The AVX-512 variant's loops (16-float vectors: the band kernel with its
 * reusing block, the small-map kernel on 16 channels) compiled for the
 * baseline, for tests on machines without AVX-512: the same code paths at
 * the same width, slowly. */
const struct dw_kernels *dw_kernels_wide_for_tests(void);

#endif
