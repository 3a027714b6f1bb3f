/* thread_pool.c -- see thread_pool.h.
 *
 * Publishing a job. The job's fields (fn, ctx, n, chunk) are plain memory,
 * written by the caller while `generation` is odd and no worker is inside
 * a job (`active` is 0); an even generation marks them complete. A worker
 * counts itself in `active` *before* it reads the generation, and reads the
 * fields only when that generation is even and new to it. Every operation
 * on these counters is sequentially consistent, so either the worker's read
 * comes before the caller makes the generation odd -- and then the caller
 * sees the worker in `active` and waits for it to leave -- or it comes after
 * the next even generation, whose fields are then complete. A worker that
 * wakes late for a job already finished finds no task left and leaves.
 *
 * Waiting. Workers spin (bounded by spin_ns) for the next job before they
 * block on `work`, and the caller spins for the job's last task before it
 * blocks on `done`. Both blocks use the same handshake: the sleeper
 * announces itself (`sleepers`, `caller_waits`), then re-checks under the
 * mutex; the waker changes the state, then looks for a sleeper and
 * broadcasts under the mutex. One of the two always sees the other. */
#include "util/thread_pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "util/clock.h"
#include "util/openmp.h"

struct thread_pool {
    pthread_mutex_t mu;
    pthread_cond_t work; /* a new job (or shutdown), for sleeping workers */
    pthread_cond_t done; /* tasks or workers finished, for a sleeping caller */
    int threads;
    pthread_t *workers;
    atomic_llong spin_ns;
    atomic_bool shutdown;
    atomic_ulong generation; /* odd while the job below is being written */
    thread_pool_fn fn;
    void *ctx;
    size_t n, chunk;
    atomic_size_t next;      /* first task not yet taken */
    atomic_size_t remaining; /* tasks not yet finished */
    atomic_int active;       /* workers that may be reading the job */
    atomic_int sleepers;     /* workers blocked, or about to block, on `work` */
    atomic_bool caller_waits;
};

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Spins are checked against the clock every SPIN_CHECK pauses (a pause is
 * tens of nanoseconds; the clock read about twenty). */
#define SPIN_CHECK 64

static void wake_caller(struct thread_pool *p) {
    if (atomic_load(&p->caller_waits)) {
        pthread_mutex_lock(&p->mu);
        pthread_cond_broadcast(&p->done);
        pthread_mutex_unlock(&p->mu);
    }
}

/* Takes and runs chunks until none are left. */
static void work_on(struct thread_pool *p) {
    for (;;) {
        const size_t begin = atomic_fetch_add(&p->next, p->chunk);
        if (begin >= p->n)
            return;
        const size_t end = begin + p->chunk < p->n ? begin + p->chunk : p->n;
        p->fn(p->ctx, begin, end);
        if (atomic_fetch_sub(&p->remaining, end - begin) == end - begin)
            wake_caller(p); /* the job's last task */
    }
}

/* Whether generation g is a complete job the worker has not taken yet. */
static bool new_job(unsigned long g, unsigned long seen) {
    return g != seen && g % 2 == 0;
}

static bool job_ready(struct thread_pool *p, unsigned long seen) {
    return atomic_load(&p->shutdown) || new_job(atomic_load(&p->generation), seen);
}

/* Spins until until(p, arg) holds (true) or the pool's spin time has
 * passed (false); with yield_to_openmp, also gives up when a oneDNN call
 * starts on any thread: its OpenMP team needs the cores (util/openmp.h). */
static bool spin_until(struct thread_pool *p, bool (*until)(struct thread_pool *, unsigned long),
                       unsigned long arg, bool yield_to_openmp) {
    const int64_t budget = atomic_load(&p->spin_ns);
    if (budget <= 0)
        return false;
    const int64_t start = clock_now_ns();
    const unsigned long regions = yield_to_openmp ? openmp_regions_started() : 0;
    for (unsigned i = 1;; i++) {
        if (until(p, arg))
            return true;
        cpu_relax();
        if (i % SPIN_CHECK == 0 && (clock_now_ns() - start > budget ||
                                    (yield_to_openmp && openmp_regions_started() != regions)))
            return false;
    }
}

/* Returns when a job newer than `seen` may be published, or at shutdown. */
static void await_job(struct thread_pool *p, unsigned long seen) {
    if (spin_until(p, job_ready, seen, true))
        return;
    pthread_mutex_lock(&p->mu);
    atomic_fetch_add(&p->sleepers, 1);
    while (!job_ready(p, seen))
        pthread_cond_wait(&p->work, &p->mu);
    atomic_fetch_sub(&p->sleepers, 1);
    pthread_mutex_unlock(&p->mu);
}

static void *worker_main(void *arg) {
    struct thread_pool *p = arg;
    unsigned long seen = 0;
    for (;;) {
        await_job(p, seen);
        if (atomic_load(&p->shutdown))
            return NULL;
        atomic_fetch_add(&p->active, 1);
        const unsigned long g = atomic_load(&p->generation);
        if (new_job(g, seen)) {
            seen = g;
            work_on(p);
        }
        if (atomic_fetch_sub(&p->active, 1) == 1)
            wake_caller(p); /* a caller may be waiting to write the next job */
    }
}

static bool tasks_done(struct thread_pool *p, unsigned long unused) {
    (void)unused;
    return atomic_load(&p->remaining) == 0;
}

static bool workers_out(struct thread_pool *p, unsigned long unused) {
    (void)unused;
    return atomic_load(&p->active) == 0;
}

/* The caller's wait: spin, then block on `done`. */
static void caller_wait(struct thread_pool *p, bool (*until)(struct thread_pool *, unsigned long)) {
    if (spin_until(p, until, 0, false))
        return;
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->caller_waits, true);
    while (!until(p, 0))
        pthread_cond_wait(&p->done, &p->mu);
    atomic_store(&p->caller_waits, false);
    pthread_mutex_unlock(&p->mu);
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
    atomic_init(&p->spin_ns, THREAD_POOL_SPIN_NS_DEFAULT);
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
    atomic_store(&p->shutdown, true);
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

void thread_pool_set_spin_ns(struct thread_pool *p, int64_t ns) {
    if (p != NULL)
        atomic_store(&p->spin_ns, ns > 0 ? ns : 0);
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
        openmp_region_starting();
        GOMP_parallel(openmp_body, &j, (unsigned)p->threads, 0);
        openmp_region_ended(); /* the team spins again */
        return;
    }
    atomic_fetch_add(&p->generation, 1); /* odd: being written */
    caller_wait(p, workers_out);         /* late workers of the previous job */
    p->fn = fn;
    p->ctx = ctx;
    p->n = n;
    p->chunk = chunk ? chunk : 1;
    atomic_store(&p->next, 0);
    atomic_store(&p->remaining, n);
    atomic_fetch_add(&p->generation, 1); /* even: published */
    if (atomic_load(&p->sleepers) > 0) {
        pthread_mutex_lock(&p->mu);
        pthread_cond_broadcast(&p->work);
        pthread_mutex_unlock(&p->mu);
    }
    work_on(p);
    caller_wait(p, tasks_done);
}
