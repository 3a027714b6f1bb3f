/* unguarded_cache.h -- THE BUG, ON PURPOSE. A model cache shaped like
 * MIOpen's before its fix: an unsynchronized map; find; on a miss load and
 * insert by overwriting (which destroys a model another thread may be
 * using); return a reference. It exists only so the race harness
 * (`convsel race --variant unguarded`) and the tests can show that they
 * catch exactly that defect. It is not part of the library. */
#ifndef CONVSEL_TOOLS_UNGUARDED_CACHE_H
#define CONVSEL_TOOLS_UNGUARDED_CACHE_H

#include "heur/model_cache.h"

#define UNGUARDED_CAPACITY 16

struct unguarded_cache {
    int n;
    struct {
        char key[CACHE_KEY_MAX];
        void *value;
        void (*free_value)(void *);
    } items[UNGUARDED_CAPACITY];
    int loads; /* unsynchronized too, like everything here */
    unsigned delay_us;
};

/* Returns the value for key, loading on a miss; NULL if the load failed. */
const void *unguarded_get(struct unguarded_cache *c, const struct cache_key *key,
                          cache_loader_fn loader, void *ctx);

#endif
