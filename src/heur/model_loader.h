/* model_loader.h -- cache loaders for model files, so every model the
 * library uses is loaded through the model cache. */
#ifndef CONVSEL_HEUR_MODEL_LOADER_H
#define CONVSEL_HEUR_MODEL_LOADER_H

#include "heur/model_cache.h"
#include "nn/model.h"

/* A cache_loader_fn for a frugally-deep model: ctx is the file path
 * (const char *). The cached value is a struct nn_model. */
bool heur_load_model_file(void *ctx, const struct cache_key *key, void **value_out,
                          void (**free_out)(void *), char *err, size_t err_cap);

/* The model in entry, or NULL (with the entry's message) on failure. */
static inline const struct nn_model *heur_entry_model(const struct cache_entry *e) {
    return e->status == CACHE_OK ? (const struct nn_model *)e->value : NULL;
}

#endif
