/* model_cache.h -- a process-wide, load-once cache of immutable objects
 * (neural-network models, metadata, ...), keyed by (target, kind, solver).
 *
 * Guarantees:
 *  - Exactly once: concurrent first callers of a key wait (blocking, no
 *    spinning) for the one load; loads of different keys run in parallel.
 *  - Hot path after warm-up: one acquire load of the slot's entry pointer
 *    and a compare of the key stored in that immutable entry. No lock and
 *    no write to memory shared between threads (hit statistics are
 *    per-thread counters).
 *  - Failures (missing file, parse error, failed embedded test) are
 *    published as immutable error entries: every caller gets the same
 *    status and message and the loader does not run again, until
 *    cache_invalidate() drops the entry so the next caller retries.
 *  - Entries are never freed while the cache exists. An invalidated entry
 *    is retired, not freed: pointers already handed out stay valid until
 *    cache_destroy(), which frees everything (current and retired).
 *  - A loader that asks the cache for its own key gets an error entry
 *    (CACHE_RECURSIVE), not a deadlock. A loader that fails leaves the slot
 *    usable.
 *  - CONVSEL_TEST_LOAD_DELAY_US, read at cache creation, sleeps that many
 *    microseconds inside every load to widen race windows in tests.
 *
 * Capacity is fixed (CACHE_CAPACITY keys); a lookup of a new key in a full
 * cache returns the static CACHE_FULL error entry. Do not fork() while a
 * load is in flight.
 */
#ifndef CONVSEL_HEUR_MODEL_CACHE_H
#define CONVSEL_HEUR_MODEL_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CACHE_CAPACITY 256
#define CACHE_KEY_MAX 160
#define CACHE_ERROR_MAX 512

struct cache_key {
    const char *target; /* e.g. "gfx942", "avx512" */
    const char *kind;   /* e.g. "tunanet", "metadata", "ktn_encoder" */
    const char *solver; /* "" when the object is not per solver */
    /* The key's hash, set by cache_key_init so a key used again and again
     * is hashed once; 0 means "hash on every lookup". */
    uint64_t hash;
};

/* Fills k and its hash. The strings are not copied and must not change
 * while k is used with this hash. */
void cache_key_init(struct cache_key *k, const char *target, const char *kind, const char *solver);

enum cache_status {
    CACHE_OK = 0,
    CACHE_LOAD_FAILED, /* the loader failed; the message says why */
    CACHE_RECURSIVE,   /* the loader asked for its own key */
    CACHE_FULL,        /* CACHE_CAPACITY distinct keys already */
    CACHE_BAD_KEY,     /* key too long or NULL parts */
    CACHE_NO_MEMORY,
};

/* An immutable entry. value is NULL unless status == CACHE_OK. */
struct cache_entry {
    char key[CACHE_KEY_MAX]; /* "target/kind/solver" */
    enum cache_status status;
    char error[CACHE_ERROR_MAX];
    const void *value;
    void (*free_value)(void *value);
};

/* Loads the object for key. On success sets *value_out (and *free_out, how
 * to free it; may stay NULL) and returns true; on failure writes a message
 * into err and returns false. Runs outside the cache's lock. */
typedef bool (*cache_loader_fn)(void *ctx, const struct cache_key *key, void **value_out,
                                void (**free_out)(void *), char *err, size_t err_cap);

struct cache_stats {
    uint64_t hits;     /* lookups answered by the lock-free path */
    uint64_t misses;   /* lookups that took the lock */
    uint64_t loads;    /* loader invocations */
    uint64_t waits;    /* lookups that blocked on another thread's load */
    uint64_t failures; /* loads that produced an error entry */
    uint64_t invalidations;
};

struct model_cache;

/* Creates an empty cache, or NULL when out of memory. */
struct model_cache *cache_create(void);

/* Frees the cache and every entry it ever published. No lookup may be in
 * flight, and no pointer from it may be used afterwards. NULL is ignored. */
void cache_destroy(struct model_cache *c);

/* The process-wide cache (created on first use, never destroyed). */
struct model_cache *cache_global(void);

/* Returns the entry for key, loading it with loader(ctx, key) on the first
 * call. Never NULL. The entry (and its value) stays valid until
 * cache_destroy. */
const struct cache_entry *cache_get(struct model_cache *c, const struct cache_key *key,
                                    cache_loader_fn loader, void *ctx);

/* A key bound to its slot in one cache, for callers that look the same key
 * up again and again (a heuristic's per-arch model). A slot, once reserved
 * for a key, keeps it for the cache's lifetime, so a bound lookup needs no
 * hashing and no key comparison: the hot path is one acquire load. */
struct cache_ref {
    struct cache_key key;
    uint64_t generation; /* of the cache it is bound to */
    int slot;            /* -1: unbound (cache full or bad key) */
};

/* Binds ref to key in cache c, reserving the key's slot without loading
 * anything. The key's strings are not copied and must outlive ref. Returns
 * false (ref then works through the ordinary lookup) if the key is bad or
 * the cache full. */
bool cache_ref_init(struct model_cache *c, struct cache_ref *ref, const char *target,
                    const char *kind, const char *solver);

/* cache_get for a bound key; same results and guarantees. A ref bound to
 * another cache is looked up the ordinary way. */
const struct cache_entry *cache_get_ref(struct model_cache *c, const struct cache_ref *ref,
                                        cache_loader_fn loader, void *ctx);

/* Drops the key's entry so that the next cache_get loads again. The old
 * entry is retired (still valid for anyone holding it). Returns false if
 * the key is unknown or its load is in flight. */
bool cache_invalidate(struct model_cache *c, const struct cache_key *key);

/* Writes "target/kind/solver" into out; false if a part is NULL or the key
 * does not fit. */
bool cache_key_format(const struct cache_key *key, char out[CACHE_KEY_MAX]);

/* A snapshot of the counters. */
struct cache_stats cache_get_stats(struct model_cache *c);

#endif /* CONVSEL_HEUR_MODEL_CACHE_H */
