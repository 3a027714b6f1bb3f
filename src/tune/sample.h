/* sample.h -- the problems `convsel tune` measures when it is not given a
 * list: random draws shaped like networks' layers, and draws around the
 * corpus of real layers (data/networks/).
 *
 * Why both: the model is used on real networks, and real layers sit in
 * corners a random draw rarely visits (1-D layers 4000 samples wide, 4x4
 * patch stems at stride 4, detection heads on 800x1088 maps, 1024-channel
 * 1x1 layers on 7x7 maps); a model that only saw the random draw
 * extrapolates there without noticing. The perturbations keep a layer's
 * kind (filter, stride, padding, dilation, grouping) and move its batch,
 * channels and sizes, so the model learns the neighbourhood of each real
 * layer, not only the layer. */
#ifndef CONVSEL_TUNE_SAMPLE_H
#define CONVSEL_TUNE_SAMPLE_H

#include <stdbool.h>

#include "tune/problem_list.h"
#include "util/rng.h"

/* Draws the next problem from r: batch 1-32 and channels 1-1024
 * log-uniform, square inputs 7-224 log-uniform (some rectangular), the
 * filter shapes networks use (1x1, 3x3, 5x5, 7x7, 1x7/7x1, 1x3/3x1, 2x2),
 * stride 1 or 2, "same" or no padding, some dilation, 15% depthwise and
 * 10% grouped. Problems above max_flops (2*N*K*OH*OW*C/G*R*S) are drawn
 * again, so the sequence depends only on the seed and max_flops. With
 * network_channels, channel counts of 16 and more are rounded to a
 * multiple of 8 (per-group counts of 8 and more to a multiple of 4), as
 * networks' are; the draws are the same, so only the counts change. The
 * row is named "sample<index>" and has no network or family. */
void sample_random(struct rng *r, double max_flops, bool network_channels, struct problem_row *out,
                   int index);

/* A perturbation of a real layer: the same filter, stride, padding,
 * dilation and kind of grouping (dense, grouped with the same group count,
 * depthwise with the same channel multiplier); then, each with probability
 * one half (at least one of them), the batch drawn from 1-32 log-uniform,
 * the channels scaled by 2^u for u uniform in [-1, 1] (on multiples of 8
 * when the layer's are), and the input height and width scaled together by
 * 2^u (a 1-D layer stays H = 1). Redrawn until the result is valid, at most
 * max_flops, and not the layer itself; false after 64 tries (a layer with
 * nothing to move). The row keeps the layer's network and family and is
 * named "<index>~<layer name>". */
bool sample_perturb(struct rng *r, const struct problem_row *layer, double max_flops,
                    struct problem_row *out, int index);

#endif
