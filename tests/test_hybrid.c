/* test_hybrid.c -- find modes (convsel_set_find_mode, CONVSEL_FIND_MODE):
 *  - the switch: set, get, names, a bad mode refused, the variable read;
 *  - immediate mode measures nothing;
 *  - exhaustive mode: the first AUTO call of a problem times every
 *    applicable solver once and its output is right; convsel_get_solutions
 *    then lists them first (source "measured", fastest first, with times);
 *    later calls measure nothing and run the fastest; a workspace too small
 *    for it runs the fastest that fits;
 *  - hybrid mode with no model and no database (the least sure ranking)
 *    measures its top three;
 *  - 8 threads, one handle each, released by a barrier onto one new
 *    problem: exactly one measurement, every output right (also run under
 *    ThreadSanitizer: label concurrency). The model cache's guarantees. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/verify.h"
#include "heur/measured.h"
#include "problem_builder.h"
#include "testutil.h"

enum { THREADS = 8 };

struct run {
    struct test_descs d;
    float *x, *w, *y, *want;
};

static void run_init(convsel_handle_t h, const struct test_problem *tp, struct run *r, int seed) {
    CHECK(test_descs_create(h, tp, &r->d) == CONVSEL_STATUS_SUCCESS);
    r->x = malloc(r->d.x_count * sizeof *r->x);
    r->w = malloc(r->d.w_count * sizeof *r->w);
    r->y = malloc(r->d.y_count * sizeof *r->y);
    r->want = malloc(r->d.y_count * sizeof *r->want);
    for (size_t i = 0; i < r->d.x_count; i++)
        r->x[i] = (float)((i * 7 + (size_t)seed) % 13) / 13.0f - 0.5f;
    for (size_t i = 0; i < r->d.w_count; i++)
        r->w[i] = (float)((i * 5 + 3) % 11) / 11.0f - 0.5f;
    convsel_solver_id_t ref;
    convsel_solver_find(h, "reference", &ref);
    CHECK(convsel_convolution_forward(h, ref, r->d.x, r->x, r->d.w, r->w, r->d.conv, r->d.y,
                                      r->want, NULL, 0) == CONVSEL_STATUS_SUCCESS);
}

static void run_free(struct run *r) {
    free(r->x), free(r->w), free(r->y), free(r->want);
    test_descs_destroy(&r->d);
}

/* forward with AUTO and a workspace of `ws` bytes (SIZE_MAX: as queried);
 * true when the output matches the reference */
static bool forward_ok(convsel_handle_t h, struct run *r, size_t ws) {
    size_t need = 0;
    if (ws == SIZE_MAX &&
        convsel_get_forward_workspace_size(h, CONVSEL_SOLVER_AUTO, r->d.x, r->d.w, r->d.conv,
                                           r->d.y, &need) != CONVSEL_STATUS_SUCCESS)
        return false;
    if (ws != SIZE_MAX)
        need = ws;
    void *buf = need ? malloc(need) : NULL;
    memset(r->y, 0, r->d.y_count * sizeof *r->y);
    const convsel_status_t st = convsel_convolution_forward(
        h, CONVSEL_SOLVER_AUTO, r->d.x, r->x, r->d.w, r->w, r->d.conv, r->d.y, r->y, buf, need);
    free(buf);
    const struct verify_result v = verify_compare(r->y, r->want, r->d.y_count);
    if (st != CONVSEL_STATUS_SUCCESS)
        printf("  forward: %s\n", convsel_get_error_message(h));
    return st == CONVSEL_STATUS_SUCCESS && verify_passes(&v, 1e-3);
}

static long published(void) {
    long n = 0;
    measured_stats(&n, NULL);
    return n;
}

static struct test_problem problem(int64_t c) {
    struct test_problem tp = test_problem_default();
    tp.c = c, tp.k = 24, tp.h = tp.w = 12, tp.r = tp.s = 3, tp.pad_h = tp.pad_w = 1;
    return tp;
}

static void switches(void) {
    convsel_handle_t h;
    CHECK(convsel_handle_create(&h) == CONVSEL_STATUS_SUCCESS);
    convsel_find_mode_t mode = 99;
    /* CONVSEL_FIND_MODE=exhaustive was set before the first handle */
    CHECK(convsel_get_find_mode(h, &mode) == CONVSEL_STATUS_SUCCESS &&
          mode == CONVSEL_FIND_MODE_EXHAUSTIVE);
    CHECK(convsel_set_find_mode(h, CONVSEL_FIND_MODE_HYBRID) == CONVSEL_STATUS_SUCCESS);
    CHECK(convsel_get_find_mode(h, &mode) == CONVSEL_STATUS_SUCCESS &&
          mode == CONVSEL_FIND_MODE_HYBRID);
    CHECK(convsel_set_find_mode(h, (convsel_find_mode_t)3) == CONVSEL_STATUS_BAD_PARAM);
    CHECK_MESSAGE(h, "mode = 3: must be");
    CHECK(convsel_set_find_mode(NULL, CONVSEL_FIND_MODE_HYBRID) == CONVSEL_STATUS_BAD_PARAM);
    CHECK(convsel_get_find_mode(h, NULL) == CONVSEL_STATUS_BAD_PARAM);
    CHECK(strcmp(convsel_find_mode_string(CONVSEL_FIND_MODE_IMMEDIATE), "immediate") == 0 &&
          strcmp(convsel_find_mode_string(CONVSEL_FIND_MODE_EXHAUSTIVE), "exhaustive") == 0 &&
          strcmp(convsel_find_mode_string((convsel_find_mode_t)7), "unknown") == 0);
    CHECK(strcmp(convsel_ranking_source_string(CONVSEL_RANKED_BY_MEASUREMENT), "measured") == 0);
    convsel_handle_destroy(h);
}

static void modes(void) {
    convsel_handle_t h;
    CHECK(convsel_handle_create(&h) == CONVSEL_STATUS_SUCCESS);
    convsel_set_num_threads(h, 2);
    /* immediate: nothing measured */
    convsel_set_find_mode(h, CONVSEL_FIND_MODE_IMMEDIATE);
    struct test_problem tp = problem(8);
    struct run r;
    run_init(h, &tp, &r, 1);
    const long before = published();
    CHECK(forward_ok(h, &r, SIZE_MAX) && published() == before);
    /* exhaustive: the first call measures, once */
    convsel_set_find_mode(h, CONVSEL_FIND_MODE_EXHAUSTIVE);
    CHECK(forward_ok(h, &r, SIZE_MAX) && published() == before + 1);
    convsel_solution_t s[32];
    int n = 0, applicable = 0;
    CHECK(convsel_get_solutions(h, r.d.x, r.d.w, r.d.conv, r.d.y, 32, s, &n) ==
          CONVSEL_STATUS_SUCCESS);
    for (int id = 0; id < convsel_solver_count(); id++)
        applicable += strcmp(convsel_solver_name(id), "reference") != 0 &&
                      convsel_solver_is_applicable(h, id, r.d.x, r.d.w, r.d.conv, r.d.y) ==
                          CONVSEL_STATUS_SUCCESS;
    int measured = 0;
    for (int i = 0; i < n; i++)
        if (s[i].source == CONVSEL_RANKED_BY_MEASUREMENT) {
            CHECK(i == measured && s[i].time_ms > 0 &&
                  (i == 0 || s[i - 1].time_ms <= s[i].time_ms));
            measured++;
        }
    printf("exhaustive: %d of %d applicable solvers timed; fastest %s %.4f ms\n", measured,
           applicable, n ? s[0].name : "-", n ? s[0].time_ms : 0.0);
    CHECK(measured >= 1 && measured <= applicable);
    /* later calls: no new measurement; AUTO resolves to the fastest */
    CHECK(forward_ok(h, &r, SIZE_MAX) && forward_ok(h, &r, SIZE_MAX) && published() == before + 1);
    size_t ws = 0;
    CHECK(convsel_get_forward_workspace_size(h, CONVSEL_SOLVER_AUTO, r.d.x, r.d.w, r.d.conv, r.d.y,
                                             &ws) == CONVSEL_STATUS_SUCCESS);
    CHECK(ws == s[0].workspace_bytes);
    /* no workspace at all: the fastest measured solver that needs none */
    CHECK(forward_ok(h, &r, 0));
    run_free(&r);
    /* hybrid, with neither model nor database: measures its top three */
    convsel_set_find_mode(h, CONVSEL_FIND_MODE_HYBRID);
    tp = problem(12);
    run_init(h, &tp, &r, 2);
    const long hybrid_before = published();
    CHECK(forward_ok(h, &r, SIZE_MAX) && published() == hybrid_before + 1);
    CHECK(convsel_get_solutions(h, r.d.x, r.d.w, r.d.conv, r.d.y, 32, s, &n) ==
          CONVSEL_STATUS_SUCCESS);
    measured = 0;
    for (int i = 0; i < n; i++)
        measured += s[i].source == CONVSEL_RANKED_BY_MEASUREMENT;
    CHECK(measured >= 1 && measured <= 3);
    /* the same problem on another thread count is another measurement */
    convsel_set_num_threads(h, 1);
    CHECK(forward_ok(h, &r, SIZE_MAX) && published() == hybrid_before + 2);
    /* and with constant weights: per-call runs transformed the weights */
    CHECK(convsel_set_weights_constant(h, 1) == CONVSEL_STATUS_SUCCESS);
    CHECK(convsel_get_solutions(h, r.d.x, r.d.w, r.d.conv, r.d.y, 32, s, &n) ==
              CONVSEL_STATUS_SUCCESS &&
          n >= 1 && s[0].source != CONVSEL_RANKED_BY_MEASUREMENT);
    CHECK(forward_ok(h, &r, SIZE_MAX) && published() == hybrid_before + 3);
    CHECK(forward_ok(h, &r, SIZE_MAX) && published() == hybrid_before + 3);
    convsel_set_weights_constant(h, 0);
    CHECK(forward_ok(h, &r, SIZE_MAX) && published() == hybrid_before + 3);
    run_free(&r);
    convsel_handle_destroy(h);
}

static pthread_barrier_t start;
static struct test_problem shared_problem;

static void *worker(void *arg) {
    int *ok = arg;
    convsel_handle_t h;
    convsel_handle_create(&h);
    convsel_set_num_threads(h, 1);
    convsel_set_find_mode(h, CONVSEL_FIND_MODE_EXHAUSTIVE);
    struct run r;
    run_init(h, &shared_problem, &r, 3);
    pthread_barrier_wait(&start);
    *ok = forward_ok(h, &r, SIZE_MAX) && forward_ok(h, &r, SIZE_MAX);
    run_free(&r);
    convsel_handle_destroy(h);
    return NULL;
}

static void threads(void) {
    shared_problem = problem(20);
    pthread_barrier_init(&start, NULL, THREADS);
    pthread_t t[THREADS];
    int ok[THREADS] = {0};
    long waits_before = 0, waits_after = 0;
    measured_stats(NULL, &waits_before);
    const long before = published();
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, &ok[i]);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    measured_stats(NULL, &waits_after);
    int good = 0;
    for (int i = 0; i < THREADS; i++)
        good += ok[i];
    printf("%d threads on one new problem: %ld measurement(s), %ld waited for it, %d of %d "
           "outputs right\n",
           THREADS, published() - before, waits_after - waits_before, good, THREADS);
    CHECK(published() - before == 1 && good == THREADS);
    pthread_barrier_destroy(&start);
}

int main(void) {
    setenv("CONVSEL_FIND_MODE", "exhaustive", 1);
    setenv("CONVSEL_DB", "", 1); /* the rules rank: nothing measured before */
    switches();
    modes();
    threads();
    return test_finish("test_hybrid");
}
