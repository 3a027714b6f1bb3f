/* test_thread_pool.c -- every task runs exactly once, on several threads,
 * for any task count; jobs back to back; two pools used at once from two
 * threads (two handles); jobs right after an OpenMP region run on the
 * OpenMP team, later ones on the pool again; under ThreadSanitizer too. */
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
    return test_finish("test_thread_pool");
}
