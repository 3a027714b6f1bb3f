/* plan_cache.c -- see plan_cache.h. A flat array scanned linearly: each
 * entry carries a hash of (owner, key), so a lookup compares one integer
 * per entry and a string only on a match, which stays well under a
 * microsecond at 256 entries (a network's layers) without a hash table's
 * upkeep. */
#include "solvers/plan_cache.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solvers/solver.h"

struct plan_entry {
    const void *owner; /* NULL: free slot */
    uint64_t hash;
    char key[CONVSEL_PROBLEM_KEY_MAX];
    void *plan;
    void (*free_plan)(void *);
    size_t bytes;
    unsigned long last_use;
};

struct plan_cache {
    struct plan_entry e[PLAN_CACHE_CAPACITY];
    int used;
    size_t bytes;
    unsigned long clock;
    long hits, stores, evictions;
};

static uint64_t hash_of(const void *owner, const char *key) {
    uint64_t h = 1469598103934665603ull ^ (uint64_t)(uintptr_t)owner;
    for (const char *s = key; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

void plan_key_format(const struct conv_run_args *a, char *key) {
    const size_t n = problem_key_format(a->p, key, CONVSEL_PROBLEM_KEY_MAX);
    if (a->weights_constant && n + 20 < CONVSEL_PROBLEM_KEY_MAX)
        snprintf(key + n, CONVSEL_PROBLEM_KEY_MAX - n, "@%p", (const void *)a->w);
}

struct plan_cache *plan_cache_create(void) {
    return calloc(1, sizeof(struct plan_cache));
}

static void release(struct plan_cache *c, struct plan_entry *e) {
    if (e->owner) {
        if (e->free_plan)
            e->free_plan(e->plan);
        c->used--;
        c->bytes -= e->bytes;
    }
    memset(e, 0, sizeof *e);
}

void plan_cache_destroy(struct plan_cache *c) {
    if (c == NULL)
        return;
    for (int i = 0; i < PLAN_CACHE_CAPACITY; i++)
        release(c, &c->e[i]);
    free(c);
}

void *plan_cache_find(struct plan_cache *c, const void *owner, const char *key) {
    if (c == NULL || owner == NULL || key == NULL)
        return NULL;
    const uint64_t h = hash_of(owner, key);
    for (int i = 0; i < PLAN_CACHE_CAPACITY; i++)
        if (c->e[i].hash == h && c->e[i].owner == owner && strcmp(c->e[i].key, key) == 0) {
            c->e[i].last_use = ++c->clock;
            c->hits++;
            return c->e[i].plan;
        }
    return NULL;
}

/* The least recently used entry, or -1 when the cache is empty. */
static int lru(const struct plan_cache *c) {
    int slot = -1;
    for (int i = 0; i < PLAN_CACHE_CAPACITY; i++)
        if (c->e[i].owner && (slot < 0 || c->e[i].last_use < c->e[slot].last_use))
            slot = i;
    return slot;
}

bool plan_cache_put(struct plan_cache *c, const void *owner, const char *key, void *plan,
                    void (*free_plan)(void *), size_t bytes) {
    if (c == NULL || owner == NULL || key == NULL || strlen(key) >= CONVSEL_PROBLEM_KEY_MAX) {
        if (free_plan)
            free_plan(plan);
        return false;
    }
    /* Room: fewer than the capacity, and the bytes within the budget (a
     * plan larger than the whole budget is kept alone). */
    while (c->used > 0 && (c->used == PLAN_CACHE_CAPACITY || c->bytes + bytes > PLAN_CACHE_BYTES)) {
        c->evictions++;
        release(c, &c->e[lru(c)]);
    }
    int slot = 0;
    while (c->e[slot].owner != NULL)
        slot++;
    struct plan_entry *e = &c->e[slot];
    e->owner = owner;
    e->hash = hash_of(owner, key);
    strcpy(e->key, key);
    e->plan = plan;
    e->free_plan = free_plan;
    e->bytes = bytes;
    e->last_use = ++c->clock;
    c->used++;
    c->bytes += bytes;
    c->stores++;
    return true;
}

void plan_cache_stats(const struct plan_cache *c, long *hits, long *stores, long *evictions) {
    *hits = c ? c->hits : 0;
    *stores = c ? c->stores : 0;
    *evictions = c ? c->evictions : 0;
}

size_t plan_cache_bytes(const struct plan_cache *c) {
    return c ? c->bytes : 0;
}

/* A constant-weights plan: the form of the weights at `from`. */
struct weights_plan {
    const float *from; /* NULL until data holds a complete form */
    float data[];
};

const float *plan_constant_weights(const struct conv_run_args *a, const void *owner, size_t floats,
                                   plan_weights_fn transform, float *scratch) {
    struct weights_plan *plan = NULL;
    if (a->weights_constant && a->plans) {
        char key[CONVSEL_PROBLEM_KEY_MAX];
        plan_key_format(a, key);
        plan = plan_cache_find(a->plans, owner, key);
        const size_t bytes = sizeof *plan + floats * sizeof(float);
        if (plan == NULL && (plan = malloc(bytes)) != NULL) {
            plan->from = NULL;
            if (!plan_cache_put(a->plans, owner, key, plan, free, bytes))
                plan = NULL; /* freed by the cache */
        }
    }
    if (plan && plan->from == a->w)
        return plan->data;
    float *out = plan ? plan->data : scratch;
    if (out == NULL)
        return NULL;
    transform(a, out);
    if (plan)
        plan->from = a->w;
    return out;
}
