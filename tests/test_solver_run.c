/* test_solver_run.c -- solver_run, the one way solvers are run: problems
 * below SOLVER_SERIAL_FLOPS reach the solver without the pool (the calling
 * thread does the work), larger ones with it; everything else passes
 * through unchanged, and so does the solver's status. Then through the
 * public API: a tiny problem on a 2-thread handle still gives every
 * solver's verified answer, and a oneDNN call on it (tiny, so without the
 * pool) leaves this thread's OpenMP team awake: the next pool job runs on
 * that team. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/verify.h"
#include "openmp_probe.h"
#include "problem_builder.h"
#include "solvers/solver.h"
#include "testutil.h"
#include "util/openmp.h"

static struct conv_run_args seen;

static convsel_status_t spy_run(const struct conv_run_args *a) {
    seen = *a;
    return CONVSEL_STATUS_NOT_SUPPORTED;
}

static const struct solver spy = {.name = "spy", .run = spy_run};

/* A 3x3 problem of c -> k channels on an h x h map (only what
 * problem_flops reads is set). */
static struct conv_problem sized(int64_t c, int64_t k, int64_t h) {
    return (struct conv_problem){
        .n = 1, .c = c, .k = k, .h = h, .w = h, .r = 3, .s = 3, .oh = h, .ow = h, .groups = 1};
}

int main(void) {
    struct thread_pool *pool = thread_pool_create(2);
    CHECK(pool != NULL);
    float x[1], w[1], y[1];
    const struct conv_problem tiny = sized(4, 4, 16);   /* 2*4*4*9*256 = 73728 FLOP */
    const struct conv_problem large = sized(64, 64, 8); /* 2*64*64*9*64 = 4.7 MFLOP */
    CHECK(problem_flops(&tiny) < SOLVER_SERIAL_FLOPS);
    CHECK(problem_flops(&large) >= SOLVER_SERIAL_FLOPS);
    struct conv_run_args a = {
        .x = x, .w = w, .y = y, .num_threads = 2, .pool = pool, .weights_constant = true};
    a.p = &tiny;
    CHECK(solver_run(&spy, &a) == CONVSEL_STATUS_NOT_SUPPORTED);
    CHECK(seen.pool == NULL && seen.p == &tiny && seen.num_threads == 2 && seen.x == x &&
          seen.w == w && seen.y == y && seen.weights_constant);
    a.p = &large;
    CHECK(solver_run(&spy, &a) == CONVSEL_STATUS_NOT_SUPPORTED);
    CHECK(seen.pool == pool && seen.p == &large && seen.num_threads == 2);
    thread_pool_destroy(pool);

    /* every applicable solver, a tiny problem, a 2-thread handle: verified */
    convsel_handle_t h;
    convsel_handle_create(&h);
    convsel_set_num_threads(h, 2);
    struct test_problem tp = test_problem_default();
    tp.c = 3, tp.k = 5, tp.h = tp.w = 9, tp.pad_h = tp.pad_w = 1;
    struct test_descs d;
    CHECK_STATUS(h, test_descs_create(h, &tp, &d), CONVSEL_STATUS_SUCCESS);
    struct test_data t;
    test_data_create(h, &d, 21, &t);
    int ran = 0;
    for (int id = 0; id < solver_count(); id++) {
        size_t bytes = 0;
        if (convsel_get_forward_workspace_size(h, id, d.x, d.w, d.conv, d.y, &bytes) !=
            CONVSEL_STATUS_SUCCESS)
            continue; /* not applicable */
        void *space = bytes ? malloc(bytes) : NULL;
        if (convsel_convolution_forward(h, id, d.x, t.x, d.w, t.w, d.conv, d.y, t.y, space,
                                        bytes) == CONVSEL_STATUS_SUCCESS) {
            const struct verify_result r = verify_compare(t.y, t.ref, d.y_count);
            if (!CHECK(r.max_abs_error < 1e-4 && r.nonfinite == 0))
                printf("  %s: max error %.3g\n", solver_get(id)->name, r.max_abs_error);
            ran++;
        }
        free(space);
    }
    printf("%d solvers ran the tiny problem on a 2-thread handle\n", ran);
    CHECK(ran >= 4);
    struct thread_pool *after = thread_pool_create(2);
    const struct timespec wait = {0, OPENMP_HOT_NS + 5000000};
    nanosleep(&wait, NULL);
    CHECK(openmp_probe_job_team(after) == 1);
    convsel_solver_id_t onednn;
    CHECK_STATUS(h, convsel_solver_find(h, "onednn_direct", &onednn), CONVSEL_STATUS_SUCCESS);
    CHECK_STATUS(
        h, convsel_convolution_forward(h, onednn, d.x, t.x, d.w, t.w, d.conv, d.y, t.y, NULL, 0),
        CONVSEL_STATUS_SUCCESS);
    CHECK(openmp_probe_job_team(after) > 1);
    thread_pool_destroy(after);
    test_data_destroy(&t);
    test_descs_destroy(&d);
    convsel_handle_destroy(h);
    return test_finish("test_solver_run");
}
