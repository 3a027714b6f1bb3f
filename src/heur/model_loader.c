/* model_loader.c -- see model_loader.h. */
#include "heur/model_loader.h"

#include <stdio.h>

static void free_model(void *m) {
    nn_model_free(m);
}

bool heur_load_model_file(void *ctx, const struct cache_key *key, void **value_out,
                          void (**free_out)(void *), char *err, size_t err_cap) {
    const char *path = ctx;
    char msg[NN_ERROR_MAX];
    struct nn_model *m = NULL;
    if (nn_model_load_file(path, NULL, &m, msg, sizeof msg) != NN_OK) {
        snprintf(err, err_cap, "%s/%s%s%s: %s", key->target, key->kind, key->solver[0] ? "/" : "",
                 key->solver, msg);
        return false;
    }
    *value_out = m;
    *free_out = free_model;
    return true;
}
