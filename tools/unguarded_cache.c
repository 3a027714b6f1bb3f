/* unguarded_cache.c -- see unguarded_cache.h. Every access here is a data
 * race when two threads miss at once; that is the point. */
#include "unguarded_cache.h"

#include <string.h>
#include <time.h>

static int find(const struct unguarded_cache *c, const char *key) {
    for (int i = 0; i < c->n; i++)
        if (strcmp(c->items[i].key, key) == 0)
            return i;
    return -1;
}

const void *unguarded_get(struct unguarded_cache *c, const struct cache_key *key,
                          cache_loader_fn loader, void *ctx) {
    char text[CACHE_KEY_MAX];
    if (!cache_key_format(key, text))
        return NULL;
    int i = find(c, text);
    if (i >= 0)
        return c->items[i].value; /* "return models.at(key)" */
    void *value = NULL;
    void (*free_value)(void *) = NULL;
    char err[CACHE_ERROR_MAX];
    c->loads++;
    if (!loader(ctx, key, &value, &free_value, err, sizeof err))
        return NULL;
    if (c->delay_us) { /* CONVSEL_TEST_LOAD_DELAY_US: widen the window */
        struct timespec ts = {c->delay_us / 1000000, (long)(c->delay_us % 1000000) * 1000};
        nanosleep(&ts, NULL);
    }
    /* "models[key] = std::move(model)": overwrite, destroying the old model. */
    i = find(c, text);
    if (i < 0 && c->n < UNGUARDED_CAPACITY)
        i = c->n++;
    if (i < 0)
        return value;
    if (c->items[i].value != NULL && c->items[i].free_value != NULL)
        c->items[i].free_value(c->items[i].value);
    memcpy(c->items[i].key, text, sizeof text);
    c->items[i].value = value;
    c->items[i].free_value = free_value;
    return c->items[i].value;
}
