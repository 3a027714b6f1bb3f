/* files.c -- see files.h. The model directory is part of the cache key
 * (folded into the kind as a hash), so two directories never share an
 * entry. */
#include "compat/miopen/files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heur/model_cache.h"
#include "heur/model_loader.h"
#include "util/file.h"
#include "util/json.h"

static void kind_for(const char *dir, const char *kind, char *out, size_t cap) {
    uint32_t h = 2166136261u;
    for (const char *s = dir; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    snprintf(out, cap, "%s@%08x", kind, h);
}

const struct nn_model *miopen_cached_model(const char *dir, const char *file, const char *arch,
                                           const char *kind, const char *solver, char *msg,
                                           size_t cap) {
    char path[4096], k[64];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    kind_for(dir, kind, k, sizeof k);
    const struct cache_key key = {arch, k, solver, 0};
    const struct cache_entry *e = cache_get(cache_global(), &key, heur_load_model_file, path);
    if (e->status != CACHE_OK)
        snprintf(msg, cap, "%s: %s", path, e->error);
    return heur_entry_model(e);
}

struct metadata_ctx {
    const char *path;
    miopen_metadata_builder build;
    void (*free_fn)(void *);
};

static bool load_metadata(void *arg, const struct cache_key *key, void **out,
                          void (**free_out)(void *), char *err, size_t cap) {
    (void)key;
    const struct metadata_ctx *ctx = arg;
    char *text = NULL;
    size_t size = 0;
    if (file_read_all(ctx->path, (1 << 24) - 1, &text, &size, err, cap) != FILE_READ_OK)
        return false;
    char perr[256];
    cJSON *root = json_parse(text, size, perr, sizeof perr);
    free(text);
    if (root == NULL) {
        snprintf(err, cap, "%s: %s", ctx->path, perr);
        return false;
    }
    char berr[256] = "";
    void *md = ctx->build(root, berr, sizeof berr);
    cJSON_Delete(root);
    if (md == NULL) {
        snprintf(err, cap, "%s: %s", ctx->path, berr);
        return false;
    }
    *out = md;
    *free_out = ctx->free_fn;
    return true;
}

const void *miopen_cached_metadata(const char *dir, const char *file, const char *arch,
                                   const char *kind, const char *solver,
                                   miopen_metadata_builder build, void (*free_fn)(void *),
                                   char *msg, size_t cap) {
    char path[4096], k[64];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    kind_for(dir, kind, k, sizeof k);
    struct metadata_ctx ctx = {path, build, free_fn};
    const struct cache_key key = {arch, k, solver, 0};
    const struct cache_entry *e = cache_get(cache_global(), &key, load_metadata, &ctx);
    if (e->status != CACHE_OK) {
        snprintf(msg, cap, "%s", e->error);
        return NULL;
    }
    return e->value;
}
