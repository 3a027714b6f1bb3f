/* plan_cache.h -- a handle's cache of solver plans: whatever a solver sets up
 * for a problem before it can run it (oneDNN's primitive descriptors,
 * primitives, reorders and blocked buffers), kept for the next call on the
 * same problem. A handle is used by one thread at a time, so the cache has
 * no lock; it holds at most PLAN_CACHE_CAPACITY plans and evicts the least
 * recently used. Plans hold no caller data between calls (the tensors are
 * bound per run) except, when the caller declared its weights constant
 * (conv_run_args.weights_constant), a transformed copy of the weights
 * keyed by their address. */
#ifndef CONVSEL_SOLVERS_PLAN_CACHE_H
#define CONVSEL_SOLVERS_PLAN_CACHE_H

#include <stdbool.h>

#include "convsel/convsel.h"

#define PLAN_CACHE_CAPACITY 8

struct plan_cache;

struct plan_cache *plan_cache_create(void);
void plan_cache_destroy(struct plan_cache *c); /* frees every plan */

/* The plan `owner` (a solver) stored for the problem key, or NULL. */
void *plan_cache_find(struct plan_cache *c, const void *owner, const char *key);

/* Stores a plan, evicting (freeing) the least recently used when full.
 * On failure (out of memory, key too long) frees the plan and returns false. */
bool plan_cache_put(struct plan_cache *c, const void *owner, const char *key, void *plan,
                    void (*free_plan)(void *));

/* Statistics, for tests: lookups that found a plan, plans stored, evicted. */
void plan_cache_stats(const struct plan_cache *c, long *hits, long *stores, long *evictions);

#endif
