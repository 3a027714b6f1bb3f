/* test_solutions_threads.c -- the database snapshot's first read under
 * contention: 8 threads, one handle each, released by a barrier, rank the
 * same measured problem as the very first thing the process does. Every
 * thread must see the database's ranking (none a half-built snapshot),
 * and ThreadSanitizer (make test-tsan) must see no race. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/perfdb.h"
#include "problem_builder.h"
#include "testutil.h"

enum { THREADS = 8, ROUNDS = 50 };

static pthread_barrier_t start;
static struct test_problem tp;

struct result {
    char first[32];
    int database_hits, mismatches;
};

static void *ranker(void *arg) {
    struct result *r = arg;
    convsel_handle_t h;
    convsel_handle_create(&h);
    convsel_set_num_threads(h, 2);
    struct test_descs d;
    test_descs_create(h, &tp, &d);
    pthread_barrier_wait(&start);
    for (int i = 0; i < ROUNDS; i++) {
        convsel_solution_t s[8];
        int n = 0;
        if (convsel_get_solutions(h, d.x, d.w, d.conv, d.y, 8, s, &n) != CONVSEL_STATUS_SUCCESS) {
            r->mismatches++;
            continue;
        }
        if (i == 0)
            snprintf(r->first, sizeof r->first, "%s", s[0].name);
        r->database_hits += s[0].source == CONVSEL_RANKED_BY_DATABASE;
        r->mismatches += strcmp(r->first, s[0].name) != 0;
    }
    test_descs_destroy(&d);
    convsel_handle_destroy(h);
    return NULL;
}

int main(void) {
    test_tmpdir("solthreads");
    char path[600], err[PERFDB_ERROR_MAX], key[CONVSEL_PROBLEM_KEY_MAX];
    snprintf(path, sizeof path, "%s", test_tmp_path("perf.db"));
    setenv("CONVSEL_DB", path, 1);

    tp = test_problem_default();
    tp.c = 8, tp.k = 8, tp.h = tp.w = 10, tp.r = tp.s = 3, tp.pad_h = tp.pad_w = 1;
    /* The key comes from the library without ranking anything (that would load the snapshot). */
    convsel_handle_t h;
    convsel_handle_create(&h);
    struct test_descs d;
    CHECK(test_descs_create(h, &tp, &d) == CONVSEL_STATUS_SUCCESS);
    CHECK(convsel_get_problem_key(h, d.x, d.w, d.conv, d.y, key, sizeof key, NULL) == 0);
    test_descs_destroy(&d);
    convsel_handle_destroy(h);
    struct perfdb_record r = {.median_ms = 0.05, .min_ms = 0.05, .max_ms = 0.06, .runs = 5};
    machine_signature(2, r.machine, sizeof r.machine);
    snprintf(r.solver, sizeof r.solver, "im2col_gemm");
    CHECK(problem_key_parse(key, &r.problem, err, sizeof err) == CONVSEL_STATUS_SUCCESS);
    struct perfdb *db = perfdb_open(path, false, 0, err, sizeof err);
    CHECK(db && perfdb_put(db, &r, 1, err, sizeof err));
    perfdb_close(db);

    pthread_t t[THREADS];
    struct result res[THREADS];
    memset(res, 0, sizeof res);
    pthread_barrier_init(&start, NULL, THREADS);
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, ranker, &res[i]);
    int hits = 0, mismatches = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        hits += res[i].database_hits;
        mismatches += res[i].mismatches + (strcmp(res[i].first, "im2col_gemm") != 0);
    }
    pthread_barrier_destroy(&start);
    printf("%d threads x %d rankings: %d from the database, %d mismatches\n", THREADS, ROUNDS, hits,
           mismatches);
    CHECK(hits == THREADS * ROUNDS && mismatches == 0);
    test_tmpdir_remove();
    return test_finish("test_solutions_threads");
}
