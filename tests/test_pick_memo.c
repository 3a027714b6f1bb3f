/* test_pick_memo.c -- api/pick_memo.c: a pick is remembered per problem,
 * thread count and weights mode, never returned for another; and through
 * the API, AUTO runs what convsel_get_solutions ranks first, call after
 * call, whichever mode the handle is switched to. */
#include <stdio.h>
#include <string.h>

#include "api/pick_memo.h"
#include "problem_builder.h"
#include "testutil.h"

/* c -> k channels, 3x3, pad 1, on 14x14, from its key. */
static struct conv_problem problem(int64_t c, int64_t k) {
    char key[CONVSEL_PROBLEM_KEY_MAX], err[PROBLEM_ERROR_MAX];
    snprintf(key, sizeof key, "%lld-14-14-3x3-%lld-14-14-1-1x1-1x1-1x1-g1-NCHW-FP32-F",
             (long long)c, (long long)k);
    struct conv_problem p;
    CHECK(problem_key_parse(key, &p, err, sizeof err) == CONVSEL_STATUS_SUCCESS);
    return p;
}

static void memo(void) {
    struct pick_memo m;
    pick_memo_init(&m);
    const struct conv_problem a = problem(16, 32), b = problem(16, 33);
    CHECK(pick_memo_find(&m, &a, 2, false) == -1);
    pick_memo_put(&m, &a, 2, false, 5);
    CHECK(pick_memo_find(&m, &a, 2, false) == 5);
    CHECK(pick_memo_find(&m, &a, 1, false) == -1); /* other threads */
    CHECK(pick_memo_find(&m, &a, 2, true) == -1);  /* other weights mode */
    CHECK(pick_memo_find(&m, &b, 2, false) == -1); /* other problem */
    struct conv_problem nhwc = a;
    nhwc.layout = CONVSEL_LAYOUT_NHWC;
    memset(nhwc.x_stride, 0, sizeof nhwc.x_stride), memset(nhwc.y_stride, 0, sizeof nhwc.y_stride);
    char err[PROBLEM_ERROR_MAX];
    CHECK(problem_validate(&nhwc, err, sizeof err) == CONVSEL_STATUS_SUCCESS);
    CHECK(pick_memo_find(&m, &nhwc, 2, false) == -1);
    /* every slot filled by other problems: a is evicted or kept, never wrong */
    for (int c = 1; c <= 4 * PICK_MEMO_SLOTS; c++) {
        const struct conv_problem q = problem(c, 7);
        pick_memo_put(&m, &q, 2, false, c % 9);
    }
    const int got = pick_memo_find(&m, &a, 2, false);
    CHECK(got == -1 || got == 5);
    int right = 0;
    for (int c = 1; c <= 4 * PICK_MEMO_SLOTS; c++) {
        const struct conv_problem q = problem(c, 7);
        const int s = pick_memo_find(&m, &q, 2, false);
        CHECK(s == -1 || s == c % 9);
        right += s == c % 9;
    }
    CHECK(right > 0 && m.hits > 0 && m.misses > 0);
}

/* AUTO's workspace is that of get_solutions' first solution, across
 * repeated calls (memo hits) and mode and thread switches. */
static void through_the_api(void) {
    convsel_handle_t h;
    convsel_handle_create(&h);
    struct test_problem tp = test_problem_default();
    tp.c = 64, tp.k = 64, tp.h = tp.w = 14;
    struct test_descs d;
    CHECK(test_descs_create(h, &tp, &d) == 0);
    for (int round = 0; round < 8; round++) {
        convsel_set_weights_constant(h, round & 1);
        convsel_set_num_threads(h, round & 2 ? 1 : 2);
        for (int again = 0; again < 2; again++) {
            convsel_solution_t s[16];
            int n = 0;
            size_t ws = 0;
            CHECK(convsel_get_solutions(h, d.x, d.w, d.conv, d.y, 16, s, &n) ==
                      CONVSEL_STATUS_SUCCESS &&
                  n >= 1);
            CHECK(convsel_get_forward_workspace_size(h, CONVSEL_SOLVER_AUTO, d.x, d.w, d.conv, d.y,
                                                     &ws) == CONVSEL_STATUS_SUCCESS &&
                  ws == s[0].workspace_bytes);
        }
    }
    test_descs_destroy(&d);
    convsel_handle_destroy(h);
}

int main(void) {
    memo();
    through_the_api();
    return test_finish("test_pick_memo");
}
