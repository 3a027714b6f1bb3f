/* measured.c -- see measured.h. */
#include "heur/measured.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convsel/convsel.h"
#include "util/machine.h"

#define BUCKETS 1024

struct node {
    struct node *next; /* immutable once the node is linked */
    uint64_t hash;
    atomic_bool ready; /* release-stored after `value` is complete */
    struct measured value;
    char key[]; /* "machine|problem key" */
};

static _Atomic(struct node *) buckets[BUCKETS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t published = PTHREAD_COND_INITIALIZER;
static atomic_long n_published, n_waits;

static uint64_t hash_of(const char *s) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const unsigned char *c = (const unsigned char *)s; *c; c++)
        h = (h ^ *c) * 1099511628211ull;
    return h;
}

static struct node *find(struct node *head, uint64_t hash, const char *key) {
    for (struct node *n = head; n; n = n->next)
        if (n->hash == hash && strcmp(n->key, key) == 0)
            return n;
    return NULL;
}

const struct measured *measured_get(const char *machine, const char *problem_key,
                                    struct measured_claim *claim) {
    char key[MACHINE_SIGNATURE_MAX + CONVSEL_PROBLEM_KEY_MAX + 2];
    snprintf(key, sizeof key, "%s|%s", machine, problem_key);
    const uint64_t hash = hash_of(key);
    _Atomic(struct node *) *bucket = &buckets[hash % BUCKETS];
    /* The hot path: no lock, one acquire load per node. */
    struct node *n = find(atomic_load_explicit(bucket, memory_order_acquire), hash, key);
    if (n && atomic_load_explicit(&n->ready, memory_order_acquire))
        return &n->value;
    if (claim == NULL)
        return NULL;
    pthread_mutex_lock(&lock);
    n = find(atomic_load_explicit(bucket, memory_order_relaxed), hash, key);
    if (n == NULL) { /* ours to measure */
        const size_t len = strlen(key) + 1;
        n = calloc(1, sizeof *n + len);
        if (n == NULL) { /* no memory: measure without telling anyone */
            pthread_mutex_unlock(&lock);
            claim->node = NULL;
            return NULL;
        }
        n->hash = hash;
        memcpy(n->key, key, len);
        n->next = atomic_load_explicit(bucket, memory_order_relaxed);
        atomic_store_explicit(bucket, n, memory_order_release);
        pthread_mutex_unlock(&lock);
        claim->node = n;
        return NULL;
    }
    if (!atomic_load_explicit(&n->ready, memory_order_acquire)) {
        atomic_fetch_add(&n_waits, 1);
        while (!atomic_load_explicit(&n->ready, memory_order_acquire))
            pthread_cond_wait(&published, &lock);
    }
    pthread_mutex_unlock(&lock);
    return &n->value;
}

void measured_publish(struct measured_claim *claim, const struct measured *m) {
    struct node *n = claim->node;
    if (n == NULL)
        return;
    n->value = *m;
    pthread_mutex_lock(&lock);
    atomic_store_explicit(&n->ready, true, memory_order_release);
    pthread_cond_broadcast(&published);
    pthread_mutex_unlock(&lock);
    atomic_fetch_add(&n_published, 1);
    claim->node = NULL;
}

void measured_stats(long *published_out, long *waits_out) {
    if (published_out)
        *published_out = atomic_load(&n_published);
    if (waits_out)
        *waits_out = atomic_load(&n_waits);
}
