/* test_model_cache.c -- the model cache's guarantees, each provoked on
 * purpose: exactly one load under a barrier-started stampede (the loader
 * held at a gate while the test looks), failures published to everyone,
 * parallel loads of distinct keys, re-entrant loads, invalidation while
 * readers run, and a 64-thread stress test with random delays. Runs in the
 * release, ASan+UBSan and ThreadSanitizer builds. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "heur/model_cache.h"
#include "testutil.h"

/* ---------------- a loader that can be held at a gate ---------------- */

struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool open;
};

struct value {
    uint64_t magic; /* MAGIC while alive */
    int id;
};
#define MAGIC 0x5eedf00dcafebeefull

struct loader_ctx {
    atomic_int invocations;
    struct gate *gate; /* NULL: do not wait */
    bool fail;
    struct model_cache *cache; /* for re-entrant loads */
    int id;
};

static void free_value(void *v) {
    ((struct value *)v)->magic = 0; /* dead: a later read would notice */
    free(v);
}

static bool loader(void *arg, const struct cache_key *key, void **out, void (**free_out)(void *),
                   char *err, size_t cap) {
    struct loader_ctx *ctx = arg;
    atomic_fetch_add(&ctx->invocations, 1);
    if (ctx->gate) {
        pthread_mutex_lock(&ctx->gate->mu);
        while (!ctx->gate->open)
            pthread_cond_wait(&ctx->gate->cv, &ctx->gate->mu);
        pthread_mutex_unlock(&ctx->gate->mu);
    }
    if (ctx->fail) {
        snprintf(err, cap, "%s/%s: no such model file", key->target, key->kind);
        return false;
    }
    struct value *v = malloc(sizeof *v);
    v->magic = MAGIC;
    v->id = ctx->id;
    *out = v;
    *free_out = free_value;
    return true;
}

static void open_gate(struct gate *g) {
    pthread_mutex_lock(&g->mu);
    g->open = true;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Waits up to 10 s for *v to reach want. */
static bool wait_for(atomic_int *v, int want) {
    for (int i = 0; i < 10000 && atomic_load(v) < want; i++)
        sleep_ms(1);
    return atomic_load(v) == want;
}

/* ---------------- stampede on one cold key ---------------- */

struct stampede {
    struct model_cache *cache;
    struct loader_ctx ctx;
    pthread_barrier_t start;
    atomic_int returned;
    const struct cache_entry *got[64];
};

struct worker_arg {
    struct stampede *s;
    int index;
};

static void *stampede_worker(void *arg) {
    struct worker_arg *w = arg;
    const struct cache_key key = {"gfx942", "tunanet", "", 0};
    pthread_barrier_wait(&w->s->start);
    w->s->got[w->index] = cache_get(w->s->cache, &key, loader, &w->s->ctx);
    atomic_fetch_add(&w->s->returned, 1);
    return NULL;
}

static void test_stampede(int threads, bool fail) {
    struct gate gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
    struct stampede s = {.cache = cache_create()};
    s.ctx.gate = &gate;
    s.ctx.fail = fail;
    s.ctx.id = 7;
    pthread_barrier_init(&s.start, NULL, (unsigned)threads);
    pthread_t t[64];
    struct worker_arg args[64];
    for (int i = 0; i < threads; i++) {
        args[i] = (struct worker_arg){&s, i};
        pthread_create(&t[i], NULL, stampede_worker, &args[i]);
    }
    /* The loader is held: exactly one load started, nobody returned. */
    CHECK(wait_for(&s.ctx.invocations, 1));
    sleep_ms(50); /* give every other thread time to arrive and (wrongly) load or return */
    CHECK(atomic_load(&s.ctx.invocations) == 1);
    CHECK(atomic_load(&s.returned) == 0);
    open_gate(&gate);
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    CHECK(atomic_load(&s.ctx.invocations) == 1);
    CHECK(atomic_load(&s.returned) == threads);
    bool same = true;
    for (int i = 0; i < threads; i++)
        same &= s.got[i] == s.got[0];
    CHECK(same);
    if (fail) {
        CHECK(s.got[0]->status == CACHE_LOAD_FAILED && s.got[0]->value == NULL);
        CHECK(strcmp(s.got[0]->error, "gfx942/tunanet: no such model file") == 0);
    } else {
        CHECK(s.got[0]->status == CACHE_OK);
        const struct value *v = s.got[0]->value;
        CHECK(v->magic == MAGIC && v->id == 7);
    }
    const struct cache_stats st = cache_get_stats(s.cache);
    CHECK(st.loads == 1 && st.failures == (fail ? 1u : 0u));
    CHECK(st.hits + st.misses == (uint64_t)threads);
    CHECK(st.waits >= 1 && st.waits <= (uint64_t)threads - 1);
    printf("stampede %d threads%s: loads=%llu waits=%llu hits=%llu misses=%llu\n", threads,
           fail ? " (failing loader)" : "", (unsigned long long)st.loads,
           (unsigned long long)st.waits, (unsigned long long)st.hits,
           (unsigned long long)st.misses);

    /* Later calls do not run the loader again, failed or not. */
    const struct cache_key key = {"gfx942", "tunanet", "", 0};
    s.ctx.gate = NULL;
    CHECK(cache_get(s.cache, &key, loader, &s.ctx) == s.got[0]);
    CHECK(atomic_load(&s.ctx.invocations) == 1);
    if (fail) { /* an explicit invalidate allows a retry, which now succeeds */
        s.ctx.fail = false;
        CHECK(cache_invalidate(s.cache, &key));
        const struct cache_entry *e = cache_get(s.cache, &key, loader, &s.ctx);
        CHECK(e->status == CACHE_OK && atomic_load(&s.ctx.invocations) == 2);
        CHECK(s.got[0]->status == CACHE_LOAD_FAILED); /* the retired entry is still readable */
    }
    pthread_barrier_destroy(&s.start);
    cache_destroy(s.cache);
}

/* ---------------- distinct keys load in parallel ---------------- */

struct parallel_arg {
    struct model_cache *cache;
    struct loader_ctx *ctx;
    const char *solver;
    const struct cache_entry *got;
};

static void *parallel_worker(void *arg) {
    struct parallel_arg *p = arg;
    const struct cache_key key = {"gfx90a", "ktn_encoder", p->solver, 0};
    p->got = cache_get(p->cache, &key, loader, p->ctx);
    return NULL;
}

static void test_distinct_keys_in_parallel(void) {
    struct model_cache *c = cache_create();
    struct gate gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
    struct loader_ctx held = {.gate = &gate, .id = 1}, free_ctx = {.id = 2};
    struct parallel_arg a = {c, &held, "ConvAsm1x1U", NULL}, b = {c, &free_ctx, "ConvHip", NULL};
    pthread_t ta, tb;
    pthread_create(&ta, NULL, parallel_worker, &a);
    CHECK(wait_for(&held.invocations, 1)); /* A's load is in flight and held */
    pthread_create(&tb, NULL, parallel_worker, &b);
    pthread_join(tb, NULL); /* B completes while A is still held */
    CHECK(b.got->status == CACHE_OK && ((const struct value *)b.got->value)->id == 2);
    CHECK(a.got == NULL);
    /* a lookup of a loaded key is not blocked by A's load either */
    const struct cache_key kb = {"gfx90a", "ktn_encoder", "ConvHip", 0};
    CHECK(cache_get(c, &kb, loader, &free_ctx) == b.got);
    open_gate(&gate);
    pthread_join(ta, NULL);
    CHECK(a.got->status == CACHE_OK && ((const struct value *)a.got->value)->id == 1);
    cache_destroy(c);
}

/* ---------------- re-entrant loads ---------------- */

static bool reentrant_loader(void *arg, const struct cache_key *key, void **out,
                             void (**free_out)(void *), char *err, size_t cap) {
    struct loader_ctx *ctx = arg;
    atomic_fetch_add(&ctx->invocations, 1);
    /* A different key from inside a load is fine... */
    const struct cache_key meta = {key->target, "metadata", "", 0};
    struct loader_ctx inner = {.id = 99};
    const struct cache_entry *m = cache_get(ctx->cache, &meta, loader, &inner);
    /* ...the same key is the re-entrant case. */
    const struct cache_entry *self = cache_get(ctx->cache, key, reentrant_loader, ctx);
    if (self->status != CACHE_RECURSIVE || m->status != CACHE_OK)
        return loader(ctx, key, out, free_out, err, cap);
    snprintf(err, cap, "%s", self->error);
    return false;
}

static void test_reentrancy(void) {
    struct model_cache *c = cache_create();
    struct loader_ctx ctx = {.cache = c};
    const struct cache_key key = {"gfx908", "tunanet", "", 0};
    alarm(30); /* a deadlock fails the test instead of hanging CI */
    const struct cache_entry *e = cache_get(c, &key, reentrant_loader, &ctx);
    alarm(0);
    CHECK(e->status == CACHE_LOAD_FAILED);
    CHECK(strstr(e->error, "re-entrant load") != NULL);
    CHECK(atomic_load(&ctx.invocations) == 1);
    const struct cache_key meta = {"gfx908", "metadata", "", 0};
    CHECK(cache_get(c, &meta, loader, &ctx)->status == CACHE_OK); /* loaded by the inner call */
    cache_destroy(c);
}

/* ---------------- invalidate while readers run ---------------- */

struct reader_arg {
    struct model_cache *cache;
    atomic_bool *stop;
    long reads, bad;
};

static struct loader_ctx reload_ctx = {.id = 5};

static void *reader(void *arg) {
    struct reader_arg *r = arg;
    const struct cache_key key = {"avx512", "tunanet", "", 0};
    while (!atomic_load(r->stop)) {
        const struct cache_entry *e = cache_get(r->cache, &key, loader, &reload_ctx);
        const struct value *v = e->value;
        /* the entry may be retired meanwhile, but never freed */
        if (e->status != CACHE_OK || v->magic != MAGIC || v->id != 5)
            r->bad++;
        r->reads++;
    }
    return NULL;
}

static void test_invalidate_while_reading(void) {
    struct model_cache *c = cache_create();
    atomic_bool stop = false;
    struct reader_arg args[8];
    pthread_t t[8];
    for (int i = 0; i < 8; i++) {
        args[i] = (struct reader_arg){c, &stop, 0, 0};
        pthread_create(&t[i], NULL, reader, &args[i]);
    }
    const struct cache_key key = {"avx512", "tunanet", "", 0};
    int invalidated = 0;
    for (int i = 0; i < 200; i++) {
        invalidated += cache_invalidate(c, &key);
        sleep_ms(1);
    }
    atomic_store(&stop, true);
    long reads = 0, bad = 0;
    for (int i = 0; i < 8; i++) {
        pthread_join(t[i], NULL);
        reads += args[i].reads;
        bad += args[i].bad;
    }
    printf("invalidate while reading: %d invalidations, %ld reads, %ld bad\n", invalidated, reads,
           bad);
    CHECK(bad == 0 && reads > 0 && invalidated > 0);
    const struct cache_stats st = cache_get_stats(c);
    CHECK(st.loads == (uint64_t)invalidated + 1 || st.loads == (uint64_t)invalidated);
    CHECK(!cache_invalidate(c, &(struct cache_key){"no", "such", "key", 0}));
    cache_destroy(c);
}

/* ---------------- stress ---------------- */

#define STRESS_KEYS 32
#define STRESS_THREADS 64

static struct loader_ctx stress_ctx[STRESS_KEYS];
static _Atomic(const struct cache_entry *) first_seen[STRESS_KEYS];
static atomic_long mismatches;
static pthread_barrier_t stress_start;
static struct model_cache *stress_cache;

static bool stress_loader(void *arg, const struct cache_key *key, void **out,
                          void (**free_out)(void *), char *err, size_t cap) {
    struct loader_ctx *ctx = arg;
    sleep_ms(rand() % 3); /* random extra delay on top of CONVSEL_TEST_LOAD_DELAY_US */
    return loader(ctx, key, out, free_out, err, cap);
}

static void *stress_worker(void *arg) {
    unsigned seed = (unsigned)(uintptr_t)arg;
    pthread_barrier_wait(&stress_start);
    for (int i = 0; i < 400; i++) {
        const int k = (int)(rand_r(&seed) % STRESS_KEYS);
        char solver[16];
        snprintf(solver, sizeof solver, "s%d", k);
        const struct cache_key key = {"stress", "model", solver, 0};
        const struct cache_entry *e = cache_get(stress_cache, &key, stress_loader, &stress_ctx[k]);
        const struct cache_entry *expected = NULL;
        if (!atomic_compare_exchange_strong(&first_seen[k], &expected, e) && expected != e)
            atomic_fetch_add(&mismatches, 1);
        const struct value *v = e->value;
        if (e->status != CACHE_OK || v->magic != MAGIC || v->id != k)
            atomic_fetch_add(&mismatches, 1);
        if (rand_r(&seed) % 16 == 0)
            sched_yield();
    }
    return NULL;
}

static void test_stress(void) {
    setenv("CONVSEL_TEST_LOAD_DELAY_US", "300", 1);
    stress_cache = cache_create();
    unsetenv("CONVSEL_TEST_LOAD_DELAY_US");
    for (int k = 0; k < STRESS_KEYS; k++)
        stress_ctx[k].id = k;
    pthread_barrier_init(&stress_start, NULL, STRESS_THREADS);
    pthread_t t[STRESS_THREADS];
    for (int i = 0; i < STRESS_THREADS; i++)
        pthread_create(&t[i], NULL, stress_worker, (void *)(uintptr_t)(i + 1));
    for (int i = 0; i < STRESS_THREADS; i++)
        pthread_join(t[i], NULL);
    int loads_ok = 0;
    for (int k = 0; k < STRESS_KEYS; k++)
        loads_ok += atomic_load(&stress_ctx[k].invocations) == 1;
    const struct cache_stats st = cache_get_stats(stress_cache);
    printf("stress: %d threads x 400 lookups over %d keys: loads=%llu waits=%llu hits=%llu "
           "misses=%llu mismatches=%ld\n",
           STRESS_THREADS, STRESS_KEYS, (unsigned long long)st.loads, (unsigned long long)st.waits,
           (unsigned long long)st.hits, (unsigned long long)st.misses, atomic_load(&mismatches));
    CHECK(loads_ok == STRESS_KEYS); /* every key loaded exactly once */
    CHECK(st.loads == STRESS_KEYS);
    CHECK(atomic_load(&mismatches) == 0);
    CHECK(st.hits + st.misses == (uint64_t)STRESS_THREADS * 400);
    pthread_barrier_destroy(&stress_start);
    cache_destroy(stress_cache);
}

/* ---------------- edges ---------------- */

static bool null_loader(void *ctx, const struct cache_key *key, void **out,
                        void (**free_out)(void *), char *err, size_t cap) {
    (void)ctx, (void)key, (void)out, (void)free_out, (void)err, (void)cap;
    return true; /* claims success, produces nothing */
}

static void test_edges(void) {
    struct model_cache *c = cache_create();
    struct loader_ctx ctx = {.id = 1};
    CHECK(cache_get(c, NULL, loader, &ctx)->status == CACHE_BAD_KEY);
    CHECK(cache_get(c, &(struct cache_key){"a", NULL, "", 0}, loader, &ctx)->status ==
          CACHE_BAD_KEY);
    char longname[300];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    CHECK(cache_get(c, &(struct cache_key){longname, "k", "", 0}, loader, &ctx)->status ==
          CACHE_BAD_KEY);
    CHECK(cache_get(c, &(struct cache_key){"a", "k", "", 0}, NULL, &ctx)->status == CACHE_BAD_KEY);
    const struct cache_entry *e =
        cache_get(c, &(struct cache_key){"a", "null", "", 0}, null_loader, NULL);
    CHECK(e->status == CACHE_LOAD_FAILED && strstr(e->error, "loader returned no object"));
    /* fill the cache: 256 keys fit, the 257th does not */
    int ok = 0;
    for (int i = 0; i < CACHE_CAPACITY + 1; i++) {
        char solver[16];
        snprintf(solver, sizeof solver, "%d", i);
        ok += cache_get(c, &(struct cache_key){"fill", "k", solver, 0}, loader, &ctx)->status ==
              CACHE_OK;
    }
    CHECK(ok == CACHE_CAPACITY - 1); /* "a/null/" already holds one slot */
    CHECK(cache_get(c, &(struct cache_key){"fill", "k", "x", 0}, loader, &ctx)->status ==
          CACHE_FULL);
    /* a warm lookup from a new thread is counted as a hit */
    const struct cache_stats before = cache_get_stats(c);
    for (int i = 0; i < 10; i++)
        cache_get(c, &(struct cache_key){"fill", "k", "3", 0}, loader, &ctx);
    const struct cache_stats after = cache_get_stats(c);
    CHECK(after.hits == before.hits + 10 && after.misses == before.misses);
    /* a pre-hashed key finds the same entry as one hashed per lookup */
    struct cache_key pre;
    cache_key_init(&pre, "fill", "k", "3");
    CHECK(pre.hash != 0);
    CHECK(cache_get(c, &pre, loader, &ctx) ==
          cache_get(c, &(struct cache_key){"fill", "k", "3", 0}, loader, &ctx));
    char text[CACHE_KEY_MAX];
    CHECK(cache_key_format(&pre, text) && strcmp(text, "fill/k/3") == 0);
    /* a bound key: same entry, counted as a hit; bound to another cache it
     * falls back to the ordinary lookup; in a full cache it cannot bind */
    struct cache_ref ref;
    CHECK(cache_ref_init(c, &ref, "fill", "k", "3"));
    const struct cache_stats b0 = cache_get_stats(c);
    CHECK(cache_get_ref(c, &ref, loader, &ctx) == cache_get(c, &pre, loader, &ctx));
    CHECK(cache_get_stats(c).hits == b0.hits + 2);
    struct model_cache *other = cache_create();
    const struct cache_entry *oe = cache_get_ref(other, &ref, loader, &ctx);
    CHECK(oe->status == CACHE_OK && oe != cache_get(c, &pre, loader, &ctx));
    cache_destroy(other);
    CHECK(!cache_ref_init(c, &ref, "fill", "k", "new key in a full cache"));
    CHECK(cache_get_ref(c, &ref, loader, &ctx)->status == CACHE_FULL);
    cache_destroy(c);
    cache_destroy(NULL);
    CHECK(cache_global() != NULL && cache_global() == cache_global());
}

int main(void) {
    test_stampede(16, false);
    test_stampede(64, false);
    test_stampede(16, true);
    test_stampede(64, true);
    test_distinct_keys_in_parallel();
    test_reentrancy();
    test_invalidate_while_reading();
    test_stress();
    test_edges();
    return test_finish("test_model_cache");
}
