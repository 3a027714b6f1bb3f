/* plan_cache.c -- see plan_cache.h. A handful of entries: a linear scan
 * costs less than hashing the key. */
#include "solvers/plan_cache.h"

#include <stdlib.h>
#include <string.h>

struct plan_entry {
    const void *owner; /* NULL: free slot */
    char key[CONVSEL_PROBLEM_KEY_MAX];
    void *plan;
    void (*free_plan)(void *);
    unsigned long last_use;
};

struct plan_cache {
    struct plan_entry e[PLAN_CACHE_CAPACITY];
    unsigned long clock;
    long hits, stores, evictions;
};

struct plan_cache *plan_cache_create(void) {
    return calloc(1, sizeof(struct plan_cache));
}

static void release(struct plan_entry *e) {
    if (e->owner && e->free_plan)
        e->free_plan(e->plan);
    memset(e, 0, sizeof *e);
}

void plan_cache_destroy(struct plan_cache *c) {
    if (c == NULL)
        return;
    for (int i = 0; i < PLAN_CACHE_CAPACITY; i++)
        release(&c->e[i]);
    free(c);
}

void *plan_cache_find(struct plan_cache *c, const void *owner, const char *key) {
    if (c == NULL || owner == NULL || key == NULL)
        return NULL;
    for (int i = 0; i < PLAN_CACHE_CAPACITY; i++)
        if (c->e[i].owner == owner && strcmp(c->e[i].key, key) == 0) {
            c->e[i].last_use = ++c->clock;
            c->hits++;
            return c->e[i].plan;
        }
    return NULL;
}

bool plan_cache_put(struct plan_cache *c, const void *owner, const char *key, void *plan,
                    void (*free_plan)(void *)) {
    if (c == NULL || owner == NULL || key == NULL || strlen(key) >= CONVSEL_PROBLEM_KEY_MAX) {
        if (free_plan)
            free_plan(plan);
        return false;
    }
    int slot = 0;
    for (int i = 0; i < PLAN_CACHE_CAPACITY; i++) {
        if (c->e[i].owner == NULL) {
            slot = i;
            break;
        }
        if (c->e[i].last_use < c->e[slot].last_use)
            slot = i;
    }
    c->evictions += c->e[slot].owner != NULL;
    release(&c->e[slot]);
    struct plan_entry *e = &c->e[slot];
    e->owner = owner;
    strcpy(e->key, key);
    e->plan = plan;
    e->free_plan = free_plan;
    e->last_use = ++c->clock;
    c->stores++;
    return true;
}

void plan_cache_stats(const struct plan_cache *c, long *hits, long *stores, long *evictions) {
    *hits = c ? c->hits : 0;
    *stores = c ? c->stores : 0;
    *evictions = c ? c->evictions : 0;
}
