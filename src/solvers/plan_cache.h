/* plan_cache.h -- a handle's cache of solver plans: whatever a solver sets up
 * for a problem before it can run it (oneDNN's primitive descriptors,
 * primitives, reorders and blocked buffers), kept for the next call on the
 * same problem. A handle is used by one thread at a time, so the cache has
 * no lock; it holds at most PLAN_CACHE_CAPACITY plans and PLAN_CACHE_BYTES
 * of the memory they hold, and evicts the least recently used. The
 * capacity is a network's worth of layers: a model whose layers did not
 * all fit would set every layer up again on every forward pass (with 8
 * plans ResNet-50 at batch 1 ran 3x slower than PyTorch; with 256, 0.8x
 * its time). Plans hold no caller data between calls (the tensors are
 * bound per run) except, when the caller declared its weights constant
 * (conv_run_args.weights_constant), a transformed copy of the weights
 * keyed by their address. */
#ifndef CONVSEL_SOLVERS_PLAN_CACHE_H
#define CONVSEL_SOLVERS_PLAN_CACHE_H

#include <stdbool.h>

#include "convsel/convsel.h"

#include <stddef.h>

#define PLAN_CACHE_CAPACITY 256
#define PLAN_CACHE_BYTES ((size_t)1 << 30) /* 1 GiB: blocked buffers and packed weights */

struct plan_cache;

struct plan_cache *plan_cache_create(void);
void plan_cache_destroy(struct plan_cache *c); /* frees every plan */

/* The key a solver stores its plan under: the problem key, and, when the
 * weights are declared constant, their address too. A network repeats
 * layer shapes (ResNet-50 runs six identical 3x3 layers in one stage): one
 * plan per shape would keep one layer's transformed weights and transform
 * again for each of the others on every forward pass (5 ms a call for
 * oneDNN's Winograd there); a plan per layer keeps each layer's.
 * key must hold CONVSEL_PROBLEM_KEY_MAX bytes. */
struct conv_run_args;
void plan_key_format(const struct conv_run_args *a, char *key);

/* The plan `owner` (a solver) stored for the key, or NULL. */
void *plan_cache_find(struct plan_cache *c, const void *owner, const char *key);

/* Stores a plan that holds `bytes` of memory, evicting (freeing) the least
 * recently used until it fits. On failure (key too long) frees the plan
 * and returns false. */
bool plan_cache_put(struct plan_cache *c, const void *owner, const char *key, void *plan,
                    void (*free_plan)(void *), size_t bytes);

/* Weights in a solver's own form: `transform` writes the form of a->w
 * (`floats` floats) into its output. When the caller declared the weights
 * constant the form is kept in the handle's plan for `owner` and made again
 * only when the weights' address changes; otherwise (or when no plan can
 * be kept) it is written to `scratch`, which may then not be NULL. NULL
 * only when neither is available. */
typedef void (*plan_weights_fn)(const struct conv_run_args *a, float *out);
const float *plan_constant_weights(const struct conv_run_args *a, const void *owner, size_t floats,
                                   plan_weights_fn transform, float *scratch);

/* Statistics, for tests: lookups that found a plan, plans stored, evicted. */
void plan_cache_stats(const struct plan_cache *c, long *hits, long *stores, long *evictions);

/* The memory the stored plans hold, as their owners declared it. */
size_t plan_cache_bytes(const struct plan_cache *c);

#endif
