/* model_cache.c -- see model_cache.h for the guarantees. The design, and
 * why each piece is there:
 *
 * Slots. A fixed array probed linearly from the key's hash. A slot's key is
 * reserved under the mutex; its entry pointer is published with a release
 * store once the load is done. The entry itself holds a copy of the key, so
 * a reader needs only the entry pointer: acquire-load it, compare keys,
 * done. A slot with no entry yet (loading, or invalidated) sends the reader
 * to the locked path, which knows every reserved key.
 *
 * Loading. The first caller of a key marks the slot LOADING, records itself
 * as the loader, and runs the loader with the mutex released, so slow loads
 * of different keys overlap and lookups of loaded keys are never blocked.
 * Other callers of that key wait on the condition variable. A caller that
 * finds its own thread as the loader is a re-entrant load and gets an
 * error instead of waiting for itself.
 *
 * Reclamation. Nothing published is freed before cache_destroy: an
 * invalidated entry goes to a retired list. That is what makes the
 * lock-free read safe without reference counts or epochs.
 *
 * Hit counting. A shared counter would put a contended write back on the
 * hot path, so each thread counts in its own cache-line-sized counter,
 * registered once per (thread, cache) under the mutex; stats sum them.
 */
#include "heur/model_cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum slot_state { SLOT_EMPTY, SLOT_LOADING, SLOT_READY };

struct slot {
    _Atomic(const struct cache_entry *) entry; /* read without the lock */
    /* The rest is guarded by the cache's mutex. */
    bool used;
    enum slot_state state;
    pthread_t loader;
    char key[CACHE_KEY_MAX];
};

/* One thread's hit counter, alone on its cache line. */
struct hit_counter {
    alignas(64) _Atomic uint64_t hits;
};

#define MAX_HIT_COUNTERS 1024

struct model_cache {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t generation; /* unique per cache; identifies it in thread-local state */
    unsigned delay_us;   /* CONVSEL_TEST_LOAD_DELAY_US */
    struct slot slots[CACHE_CAPACITY];
    /* Guarded by mu. */
    struct cache_stats stats;
    const struct cache_entry **retired;
    size_t n_retired, cap_retired;
    struct hit_counter *counters[MAX_HIT_COUNTERS];
    int n_counters;
    /* Hits of threads beyond MAX_HIT_COUNTERS: a shared counter, by necessity. */
    _Atomic uint64_t overflow_hits;
};

static const struct cache_entry entry_recursive = {
    .key = "",
    .status = CACHE_RECURSIVE,
    .error = "re-entrant load: the loader asked the cache for its own key"};
static const struct cache_entry entry_full = {
    .key = "", .status = CACHE_FULL, .error = "model cache full (256 keys)"};
static const struct cache_entry entry_bad_key = {
    .key = "", .status = CACHE_BAD_KEY, .error = "cache key NULL or longer than 159 characters"};
static const struct cache_entry entry_no_memory = {
    .key = "", .status = CACHE_NO_MEMORY, .error = "out of memory creating a cache entry"};

static bool is_static(const struct cache_entry *e) {
    return e == &entry_recursive || e == &entry_full || e == &entry_bad_key ||
           e == &entry_no_memory;
}

static _Atomic uint64_t next_generation = 1;

/* ---------------------------- keys ---------------------------- */

bool cache_key_format(const struct cache_key *k, char out[CACHE_KEY_MAX]) {
    if (k == NULL || k->target == NULL || k->kind == NULL || k->solver == NULL)
        return false;
    const char *parts[3] = {k->target, k->kind, k->solver};
    size_t used = 0;
    for (int p = 0; p < 3; p++) {
        const size_t len = strlen(parts[p]);
        if (used + len + 1 >= CACHE_KEY_MAX)
            return false;
        memcpy(out + used, parts[p], len);
        used += len;
        out[used++] = p < 2 ? '/' : '\0';
    }
    return true;
}

/* FNV-1a over "target/kind/solver" without building the string; never 0. */
static uint64_t hash_parts(const char *target, const char *kind, const char *solver) {
    const char *parts[3] = {target, kind, solver};
    uint64_t h = 1469598103934665603ull;
    for (int p = 0; p < 3; p++) {
        for (const char *s = parts[p]; *s; s++)
            h = (h ^ (unsigned char)*s) * 1099511628211ull;
        if (p < 2)
            h = (h ^ '/') * 1099511628211ull;
    }
    return h ? h : 1;
}

void cache_key_init(struct cache_key *k, const char *target, const char *kind, const char *solver) {
    k->target = target;
    k->kind = kind;
    k->solver = solver;
    k->hash = target && kind && solver ? hash_parts(target, kind, solver) : 0;
}

static size_t key_hash(const struct cache_key *k) {
    const uint64_t h = k->hash ? k->hash : hash_parts(k->target, k->kind, k->solver);
    return (size_t)(h % CACHE_CAPACITY);
}

/* Whether a formatted key equals "target/kind/solver", without building it. */
static bool key_matches(const char *text, const struct cache_key *k) {
    const char *parts[3] = {k->target, k->kind, k->solver};
    for (int p = 0; p < 3; p++) {
        for (const char *s = parts[p]; *s; s++, text++)
            if (*text != *s)
                return false;
        if (*text++ != (p < 2 ? '/' : '\0'))
            return false;
    }
    return true;
}

/* ---------------------------- lifetime ---------------------------- */

struct model_cache *cache_create(void) {
    struct model_cache *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    c->generation = atomic_fetch_add(&next_generation, 1);
    const char *delay = getenv("CONVSEL_TEST_LOAD_DELAY_US");
    if (delay != NULL) {
        char *end;
        errno = 0;
        unsigned long us = strtoul(delay, &end, 10);
        if (errno == 0 && *end == '\0' && us <= 10000000ul)
            c->delay_us = (unsigned)us;
    }
    return c;
}

static void free_entry(const struct cache_entry *e) {
    if (e == NULL || is_static(e))
        return;
    if (e->free_value != NULL && e->value != NULL)
        e->free_value((void *)e->value);
    free((void *)e);
}

void cache_destroy(struct model_cache *c) {
    if (c == NULL)
        return;
    for (int i = 0; i < CACHE_CAPACITY; i++)
        free_entry(atomic_load_explicit(&c->slots[i].entry, memory_order_relaxed));
    for (size_t i = 0; i < c->n_retired; i++)
        free_entry(c->retired[i]);
    for (int i = 0; i < c->n_counters; i++)
        free(c->counters[i]);
    free(c->retired);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    free(c);
}

static struct model_cache *global_cache;
static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static void global_init(void) {
    global_cache = cache_create();
}

struct model_cache *cache_global(void) {
    pthread_once(&global_once, global_init);
    return global_cache;
}

/* ---------------------------- hit counting ---------------------------- */

#define THREAD_COUNTERS 4

/* initial-exec: a plain %fs-relative access even in the shared library
 * (the general-dynamic default calls __tls_get_addr on every hit). */
#define TLS_FAST __attribute__((tls_model("initial-exec")))

static _Thread_local TLS_FAST struct {
    uint64_t generation;
    struct hit_counter *counter;
} thread_counters[THREAD_COUNTERS];
static _Thread_local TLS_FAST unsigned thread_counter_next;

static void count_hit(struct model_cache *c) {
    for (int i = 0; i < THREAD_COUNTERS; i++)
        if (thread_counters[i].generation == c->generation) {
            /* Only this thread writes this counter: load + store, no RMW. */
            _Atomic uint64_t *h = &thread_counters[i].counter->hits;
            atomic_store_explicit(h, atomic_load_explicit(h, memory_order_relaxed) + 1,
                                  memory_order_relaxed);
            return;
        }
    /* First hit of this thread on this cache: register a counter. */
    struct hit_counter *hc = NULL;
    pthread_mutex_lock(&c->mu);
    if (c->n_counters < MAX_HIT_COUNTERS && (hc = aligned_alloc(64, sizeof *hc)) != NULL) {
        atomic_init(&hc->hits, 1);
        c->counters[c->n_counters++] = hc;
    }
    pthread_mutex_unlock(&c->mu);
    if (hc == NULL) {
        atomic_fetch_add_explicit(&c->overflow_hits, 1, memory_order_relaxed);
        return;
    }
    const unsigned i = thread_counter_next++ % THREAD_COUNTERS;
    thread_counters[i].generation = c->generation;
    thread_counters[i].counter = hc;
}

/* ---------------------------- lookup ---------------------------- */

/* The lock-free path: the published entry for key, or NULL. */
static const struct cache_entry *find_published(struct model_cache *c, const struct cache_key *key,
                                                size_t h) {
    for (size_t i = 0; i < CACHE_CAPACITY; i++) {
        const struct cache_entry *e =
            atomic_load_explicit(&c->slots[(h + i) % CACHE_CAPACITY].entry, memory_order_acquire);
        if (e == NULL)
            return NULL; /* empty, loading or invalidated: ask under the lock */
        if (key_matches(e->key, key))
            return e;
    }
    return NULL;
}

/* Under the lock: the slot reserved for key, reserving one if needed. */
static struct slot *find_slot(struct model_cache *c, const char *key, size_t h, bool reserve) {
    for (size_t i = 0; i < CACHE_CAPACITY; i++) {
        struct slot *s = &c->slots[(h + i) % CACHE_CAPACITY];
        if (s->used && strcmp(s->key, key) == 0)
            return s;
        if (!s->used) {
            if (!reserve)
                return NULL;
            s->used = true;
            s->state = SLOT_EMPTY;
            memcpy(s->key, key, CACHE_KEY_MAX);
            return s;
        }
    }
    return NULL;
}

static void sleep_us(unsigned us) {
    struct timespec ts = {us / 1000000, (long)(us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Runs the loader and builds the (immutable) entry; never NULL. */
static const struct cache_entry *load_entry(struct model_cache *c, const char *key_text,
                                            const struct cache_key *key, cache_loader_fn loader,
                                            void *ctx) {
    struct cache_entry *e = calloc(1, sizeof *e);
    if (c->delay_us)
        sleep_us(c->delay_us);
    if (e == NULL)
        return &entry_no_memory;
    memcpy(e->key, key_text, CACHE_KEY_MAX);
    void *value = NULL;
    void (*free_value)(void *) = NULL;
    if (loader(ctx, key, &value, &free_value, e->error, sizeof e->error)) {
        e->status = CACHE_OK;
        e->value = value;
        e->free_value = free_value;
        if (value == NULL) { /* a loader must produce something */
            e->status = CACHE_LOAD_FAILED;
            snprintf(e->error, sizeof e->error, "%s: loader returned no object", key_text);
        }
    } else {
        e->status = CACHE_LOAD_FAILED;
        if (e->error[0] == '\0')
            snprintf(e->error, sizeof e->error, "%s: load failed", key_text);
    }
    return e;
}

/* If a loading thread is cancelled, free the slot for the next caller. */
static void loader_cancelled(void *arg) {
    void **a = arg;
    struct model_cache *c = a[0];
    struct slot *s = a[1];
    pthread_mutex_lock(&c->mu);
    s->state = SLOT_EMPTY;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

const struct cache_entry *cache_get(struct model_cache *c, const struct cache_key *key,
                                    cache_loader_fn loader, void *ctx) {
    if (c == NULL || loader == NULL || key == NULL || key->target == NULL || key->kind == NULL ||
        key->solver == NULL)
        return &entry_bad_key;
    const size_t h = key_hash(key);
    const struct cache_entry *e = find_published(c, key, h);
    if (e != NULL) {
        count_hit(c);
        return e;
    }
    char text[CACHE_KEY_MAX];
    if (!cache_key_format(key, text))
        return &entry_bad_key;

    pthread_mutex_lock(&c->mu);
    c->stats.misses++;
    struct slot *s = find_slot(c, text, h, true);
    bool waited = false;
    e = NULL;
    while (e == NULL) {
        if (s == NULL) {
            e = &entry_full;
        } else if (s->state == SLOT_READY) {
            e = atomic_load_explicit(&s->entry, memory_order_relaxed);
        } else if (s->state == SLOT_LOADING) {
            if (pthread_equal(s->loader, pthread_self())) {
                e = &entry_recursive;
                break;
            }
            if (!waited)
                c->stats.waits++;
            waited = true;
            pthread_cond_wait(&c->cv, &c->mu);
        } else { /* SLOT_EMPTY: this thread loads */
            s->state = SLOT_LOADING;
            s->loader = pthread_self();
            c->stats.loads++;
            pthread_mutex_unlock(&c->mu);
            void *cleanup_arg[2] = {c, s};
            const struct cache_entry *ne;
            pthread_cleanup_push(loader_cancelled, cleanup_arg);
            ne = load_entry(c, text, key, loader, ctx);
            pthread_cleanup_pop(0);
            pthread_mutex_lock(&c->mu);
            atomic_store_explicit(&s->entry, ne, memory_order_release);
            s->state = SLOT_READY;
            if (ne->status != CACHE_OK)
                c->stats.failures++;
            pthread_cond_broadcast(&c->cv);
            e = ne;
        }
    }
    pthread_mutex_unlock(&c->mu);
    return e;
}

bool cache_invalidate(struct model_cache *c, const struct cache_key *key) {
    char text[CACHE_KEY_MAX];
    if (c == NULL || !cache_key_format(key, text))
        return false;
    bool done = false;
    pthread_mutex_lock(&c->mu);
    struct slot *s = find_slot(c, text, key_hash(key), false);
    if (s != NULL && s->state == SLOT_READY) {
        if (c->n_retired == c->cap_retired) {
            const size_t ncap = c->cap_retired ? 2 * c->cap_retired : 16;
            const struct cache_entry **nr = realloc(c->retired, ncap * sizeof *nr);
            if (nr != NULL) {
                c->retired = nr;
                c->cap_retired = ncap;
            }
        }
        if (c->n_retired < c->cap_retired) {
            c->retired[c->n_retired++] = atomic_load_explicit(&s->entry, memory_order_relaxed);
            atomic_store_explicit(&s->entry, NULL, memory_order_release);
            s->state = SLOT_EMPTY;
            c->stats.invalidations++;
            done = true;
        }
    }
    pthread_mutex_unlock(&c->mu);
    return done;
}

struct cache_stats cache_get_stats(struct model_cache *c) {
    struct cache_stats st = {0};
    if (c == NULL)
        return st;
    pthread_mutex_lock(&c->mu);
    st = c->stats;
    for (int i = 0; i < c->n_counters; i++)
        st.hits += atomic_load_explicit(&c->counters[i]->hits, memory_order_relaxed);
    st.hits += atomic_load_explicit(&c->overflow_hits, memory_order_relaxed);
    pthread_mutex_unlock(&c->mu);
    return st;
}

/* ---------------------------- bound keys ---------------------------- */

bool cache_ref_init(struct model_cache *c, struct cache_ref *ref, const char *target,
                    const char *kind, const char *solver) {
    cache_key_init(&ref->key, target, kind, solver);
    ref->generation = 0;
    ref->slot = -1;
    char text[CACHE_KEY_MAX];
    if (c == NULL || !cache_key_format(&ref->key, text))
        return false;
    pthread_mutex_lock(&c->mu);
    struct slot *s = find_slot(c, text, key_hash(&ref->key), true);
    if (s != NULL) {
        ref->slot = (int)(s - c->slots);
        ref->generation = c->generation;
    }
    pthread_mutex_unlock(&c->mu);
    return s != NULL;
}

const struct cache_entry *cache_get_ref(struct model_cache *c, const struct cache_ref *ref,
                                        cache_loader_fn loader, void *ctx) {
    if (c != NULL && ref != NULL && ref->generation == c->generation && loader != NULL) {
        const struct cache_entry *e =
            atomic_load_explicit(&c->slots[ref->slot].entry, memory_order_acquire);
        if (e != NULL) {
            count_hit(c);
            return e;
        }
    }
    return cache_get(c, ref ? &ref->key : NULL, loader, ctx);
}
