/* problem_sample.h -- the generator of realistic problems behind
 * `convsel tune --sample N --seed S`. */
#ifndef CONVSEL_TOOLS_PROBLEM_SAMPLE_H
#define CONVSEL_TOOLS_PROBLEM_SAMPLE_H

#include <stdbool.h>

#include "problem_csv.h"
#include "util/rng.h"

/* Draws the next problem from r: batch 1-32 and channels 1-1024
 * log-uniform, square inputs 7-224 log-uniform (some rectangular), the
 * filter shapes networks use (1x1, 3x3, 5x5, 7x7, 1x7/7x1, 1x3/3x1, 2x2),
 * stride 1 or 2, "same" or no padding, some dilation, 15% depthwise and
 * 10% grouped. Problems above max_flops (2*N*K*OH*OW*C/G*R*S) are drawn
 * again, so the sequence depends only on the seed and max_flops. With
 * network_channels, channel counts of 16 and more are rounded to a
 * multiple of 8 (per-group counts of 8 and more to a multiple of 4), as
 * networks' are; the draws are the same, so only the counts change. */
void problem_sample(struct rng *r, double max_flops, bool network_channels, struct problem_row *out,
                    int index);

#endif
