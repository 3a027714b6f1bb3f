/* descs.h -- the public descriptors of a conv_problem and random
 * buffers, for the modules of src/tune that time problems through the
 * public API (tune.c, weights_probe.c). */
#ifndef CONVSEL_TUNE_DESCS_H
#define CONVSEL_TUNE_DESCS_H

#include <stdbool.h>
#include <stddef.h>

#include "convsel/convsel.h"
#include "core/problem.h"
#include "util/rng.h"

struct descs {
    convsel_tensor_desc_t x, y;
    convsel_filter_desc_t w;
    convsel_conv_desc_t conv;
};

/* False (nothing to destroy) when out of memory. */
bool descs_create(const struct conv_problem *p, struct descs *d);
void descs_destroy(struct descs *d);

/* count floats (at least one) from r; NULL when out of memory. */
float *random_buffer(size_t count, struct rng *r);

#endif
