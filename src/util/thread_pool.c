/* thread_pool.c -- see thread_pool.h. A job is published under the mutex
 * with a new generation number; workers and the caller take chunks from an
 * atomic cursor. Workers enter a job under the mutex (counted in `active`)
 * and the caller neither returns nor publishes the next job while any
 * worker is still inside one: a worker that woke late must never read a
 * job's fields while they are being rewritten. */
#include "util/thread_pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "util/openmp.h"

struct thread_pool {
    pthread_mutex_t mu;
    pthread_cond_t work; /* a new job (or shutdown) */
    pthread_cond_t done; /* the job's last chunk finished */
    int threads;
    pthread_t *workers;
    /* The current job: written under mu before the generation changes. */
    unsigned long generation;
    bool shutdown;
    thread_pool_fn fn;
    void *ctx;
    size_t n, chunk;
    atomic_size_t next;      /* first task not yet taken */
    atomic_size_t remaining; /* tasks not yet finished */
    int active;              /* workers inside the current job (under mu) */
};

/* Takes and runs chunks until none are left. */
static void work_on(struct thread_pool *p) {
    for (;;) {
        const size_t begin = atomic_fetch_add(&p->next, p->chunk);
        if (begin >= p->n)
            return;
        const size_t end = begin + p->chunk < p->n ? begin + p->chunk : p->n;
        p->fn(p->ctx, begin, end);
        atomic_fetch_sub(&p->remaining, end - begin);
    }
}

static void *worker_main(void *arg) {
    struct thread_pool *p = arg;
    unsigned long seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->shutdown && p->generation == seen)
            pthread_cond_wait(&p->work, &p->mu);
        if (p->shutdown)
            break;
        seen = p->generation;
        p->active++;
        pthread_mutex_unlock(&p->mu);
        work_on(p);
        pthread_mutex_lock(&p->mu);
        p->active--;
        pthread_cond_broadcast(&p->done); /* the caller waits for tasks and workers */
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

struct thread_pool *thread_pool_create(int threads) {
    if (threads < 1 || threads > 256)
        return NULL;
    struct thread_pool *p = calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    p->threads = threads;
    p->workers = calloc((size_t)threads, sizeof *p->workers);
    int started = 0;
    while (p->workers && started < threads - 1 &&
           pthread_create(&p->workers[started], NULL, worker_main, p) == 0)
        started++;
    if (p->workers == NULL || started < threads - 1) {
        p->threads = started + 1;
        thread_pool_destroy(p);
        return NULL;
    }
    return p;
}

void thread_pool_destroy(struct thread_pool *p) {
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->mu);
    p->shutdown = true;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; p->workers && i < p->threads - 1; i++)
        pthread_join(p->workers[i], NULL);
    free(p->workers);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    free(p);
}

int thread_pool_threads(const struct thread_pool *p) {
    return p ? p->threads : 1;
}

struct openmp_job {
    thread_pool_fn fn;
    void *ctx;
    size_t n, chunk;
    atomic_size_t next;
};

static void openmp_body(void *data) {
    struct openmp_job *j = data;
    for (;;) {
        const size_t begin = atomic_fetch_add(&j->next, j->chunk);
        if (begin >= j->n)
            return;
        j->fn(j->ctx, begin, begin + j->chunk < j->n ? begin + j->chunk : j->n);
    }
}

void thread_pool_parallel_for(struct thread_pool *p, size_t n, thread_pool_fn fn, void *ctx) {
    if (n == 0)
        return;
    if (p == NULL || p->threads == 1 || n == 1) {
        fn(ctx, 0, n);
        return;
    }
    /* About 4 chunks per thread: balance without much cursor traffic. */
    size_t chunk = n / ((size_t)p->threads * 4);
    if (openmp_team_hot()) { /* see util/openmp.h */
        struct openmp_job j = {fn, ctx, n, chunk ? chunk : 1, 0};
        GOMP_parallel(openmp_body, &j, (unsigned)p->threads, 0);
        openmp_region_ended(); /* the team spins again */
        return;
    }
    pthread_mutex_lock(&p->mu);
    while (p->active > 0) /* stragglers of the previous job */
        pthread_cond_wait(&p->done, &p->mu);
    p->fn = fn;
    p->ctx = ctx;
    p->n = n;
    p->chunk = chunk ? chunk : 1;
    atomic_store(&p->next, 0);
    atomic_store(&p->remaining, n);
    p->generation++;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    work_on(p);
    pthread_mutex_lock(&p->mu);
    while (atomic_load(&p->remaining) != 0 || p->active > 0)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}
