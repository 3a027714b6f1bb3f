/* test_thread_pool.c -- every task runs exactly once, on several threads,
 * for any task count; jobs back to back; two pools used at once from two
 * threads (two handles); jobs right after an OpenMP region run on the
 * OpenMP team, later ones on the pool again; under ThreadSanitizer too.
 * The spin before sleeping: jobs that find the workers spinning, asleep,
 * or in between (pauses around the spin's length, barrier-started pools
 * on two threads), with every spin length from 0 up; the workers take
 * part in jobs whether they spun or slept. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "openmp_probe.h"
#include "testutil.h"
#include "util/openmp.h"
#include "util/thread_pool.h"

struct job {
    atomic_int *hits;
    atomic_int calls;
};

static void mark(void *ctx, size_t begin, size_t end) {
    struct job *j = ctx;
    atomic_fetch_add(&j->calls, 1);
    for (size_t i = begin; i < end; i++)
        atomic_fetch_add(&j->hits[i], 1);
}

static bool run_job(struct thread_pool *p, size_t n) {
    struct job j = {calloc(n + 1, sizeof(atomic_int)), 0};
    thread_pool_parallel_for(p, n, mark, &j);
    bool ok = true;
    for (size_t i = 0; i < n; i++)
        ok &= atomic_load(&j.hits[i]) == 1;
    free(j.hits);
    return ok;
}

static void check_openmp_handoff(void) {
    struct thread_pool *p = thread_pool_create(2);
    CHECK(openmp_probe_job_team(p) == 1);
    openmp_region_ended();                /* on this thread */
    CHECK(openmp_probe_job_team(p) == 2); /* on the OpenMP team */
    CHECK(run_job(p, 1000) && run_job(p, 3));
    const struct timespec wait = {0, OPENMP_HOT_NS + 5000000};
    nanosleep(&wait, NULL);
    CHECK(openmp_probe_job_team(p) == 1); /* the team has gone to sleep: the pool again */
    thread_pool_destroy(p);
}

static void *user_thread(void *arg) {
    struct thread_pool *p = thread_pool_create(2);
    long bad = 0;
    for (int r = 0; r < 300; r++)
        bad += !run_job(p, (size_t)(r % 50) + 1);
    thread_pool_destroy(p);
    *(long *)arg = bad;
    return NULL;
}

/* A task that keeps its thread busy long enough for a sleeping worker to
 * wake, and counts the tasks run on threads other than the caller's. */
struct slow_job {
    pthread_t caller;
    atomic_int elsewhere;
};

static void slow_task(void *ctx, size_t begin, size_t end) {
    struct slow_job *j = ctx;
    for (size_t i = begin; i < end; i++) {
        const struct timespec t = {0, 300000};
        nanosleep(&t, NULL);
        if (!pthread_equal(pthread_self(), j->caller))
            atomic_fetch_add(&j->elsewhere, 1);
    }
}

static int workers_took_part(struct thread_pool *p) {
    int jobs_with_worker = 0;
    for (int r = 0; r < 20; r++) {
        struct slow_job j = {pthread_self(), 0};
        thread_pool_parallel_for(p, 8, slow_task, &j);
        jobs_with_worker += atomic_load(&j.elsewhere) > 0;
        const struct timespec gap = {0, (r % 2) * 2000000}; /* asleep, or still spinning */
        nanosleep(&gap, NULL);
    }
    return jobs_with_worker;
}

struct stress {
    pthread_barrier_t *start;
    int64_t spin_ns;
    long bad;
};

/* Tiny jobs with pauses from none to twice the spin: the worker is caught
 * spinning, going to sleep, asleep and waking. */
static void *stress_thread(void *arg) {
    struct stress *s = arg;
    struct thread_pool *p = thread_pool_create(3);
    thread_pool_set_spin_ns(p, s->spin_ns);
    pthread_barrier_wait(s->start);
    for (int r = 0; r < 400; r++) {
        s->bad += !run_job(p, (size_t)(r % 9) + 2);
        if (r % 3 == 1) {
            const struct timespec gap = {0, (long)(s->spin_ns * (r % 7) / 3)};
            nanosleep(&gap, NULL);
        }
    }
    thread_pool_destroy(p);
    return NULL;
}

static void check_spin(void) {
    const int64_t spins[] = {0, 1000, 20000, 50000, 1000000};
    for (size_t i = 0; i < sizeof spins / sizeof spins[0]; i++) {
        pthread_barrier_t start;
        pthread_barrier_init(&start, NULL, 2);
        struct stress s[2] = {{&start, spins[i], 0}, {&start, spins[i] / 2 + 500, 0}};
        pthread_t t[2];
        for (int k = 0; k < 2; k++)
            pthread_create(&t[k], NULL, stress_thread, &s[k]);
        for (int k = 0; k < 2; k++)
            pthread_join(t[k], NULL);
        pthread_barrier_destroy(&start);
        CHECK(s[0].bad == 0 && s[1].bad == 0);
    }
    /* Spinning or sleeping, the worker takes tasks: 8 tasks of 0.3 ms
     * leave it time to wake. A loaded machine may starve it now and then,
     * so the check is that it took part in most jobs, not all. */
    const int64_t modes[] = {0, THREAD_POOL_SPIN_NS_DEFAULT};
    for (int m = 0; m < 2; m++) {
        struct thread_pool *p = thread_pool_create(2);
        thread_pool_set_spin_ns(p, modes[m]);
        const int with_worker = workers_took_part(p);
        CHECK(with_worker >= 10);
        if (with_worker < 10)
            fprintf(stderr, "spin %lld ns: the worker took part in %d of 20 jobs\n",
                    (long long)modes[m], with_worker);
        thread_pool_destroy(p);
    }
    thread_pool_set_spin_ns(NULL, 5); /* ignored */
    /* A oneDNN region starting anywhere is counted: spinners watch it. */
    const unsigned long before = openmp_regions_started();
    openmp_region_starting();
    CHECK(openmp_regions_started() == before + 1);
    /* A pool destroyed while its workers spin. */
    for (int r = 0; r < 20; r++) {
        struct thread_pool *p = thread_pool_create(4);
        thread_pool_set_spin_ns(p, 10000000);
        CHECK(run_job(p, 64));
        thread_pool_destroy(p);
    }
}

int main(void) {
    CHECK(thread_pool_create(0) == NULL && thread_pool_create(257) == NULL);
    for (int threads = 1; threads <= 8; threads *= 2) {
        struct thread_pool *p = thread_pool_create(threads);
        CHECK(p != NULL && thread_pool_threads(p) == threads);
        const size_t sizes[] = {0, 1, 2, 3, 7, 64, 1000, 100003};
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
            CHECK(run_job(p, sizes[i]));
        int ok = 0;
        for (int r = 0; r < 200; r++) /* back to back */
            ok += run_job(p, 37);
        CHECK(ok == 200);
        thread_pool_destroy(p);
    }
    CHECK(run_job(NULL, 10)); /* no pool: serial */
    thread_pool_destroy(NULL);
    /* two handles' pools, used at once */
    pthread_t t[2];
    long bad[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, user_thread, &bad[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    CHECK(bad[0] == 0 && bad[1] == 0);
    check_openmp_handoff();
    check_spin();
    return test_finish("test_thread_pool");
}
