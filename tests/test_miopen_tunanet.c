/* test_miopen_tunanet.c -- MIOpen's six upstream TunaNet expectations
 * (test/gtest/tuna_net.cpp at ROCm/MIOpen@2d1fd99), reproduced offline from
 * its shipped model files, plus the applicability checks, the unknown-arch
 * rule, and identical rankings from 16 threads on a cold cache.
 *
 * The upstream assertion is a quirk kept as is: the expected value is the
 * position, in the full ranked list, of the solver with the largest
 * registry id (110 for gfx908, 114 for gfx90a). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "compat/miopen/miopen.h"
#include "testutil.h"

static char dir[2048];

static struct miopen_problem problem(enum miopen_dtype t, int64_t g, int64_t n, int64_t c,
                                     int64_t k, int64_t h, int64_t w, int64_t f, int64_t pad,
                                     int64_t stride, int64_t dil) {
    struct miopen_problem p = {.direction = MIOPEN_FWD,
                               .dtype = t,
                               .layout = "NCHW",
                               .n = n,
                               .c = c,
                               .h = h,
                               .w = w,
                               .k = k,
                               .fy = f,
                               .fx = f,
                               .ph = pad,
                               .pw = pad,
                               .sh = stride,
                               .sw = stride,
                               .dh = dil,
                               .dw = dil,
                               .g = g};
    miopen_problem_finish(&p);
    return p;
}

static int position_of_max_id(const struct miopen_ranked_solver *r, size_t n) {
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
        if (r[i].id > r[best].id)
            best = i;
    return (int)best;
}

static void test_upstream_cases(void) {
    const struct {
        const char *arch;
        struct miopen_problem p;
        int expected;
    } cases[] = {
        {"gfx908", problem(MIOPEN_FP32, 1, 5, 256, 64, 267, 300, 1, 0, 1, 1), 4},
        {"gfx908", problem(MIOPEN_FP16, 1, 16, 256, 512, 20, 84, 5, 1, 1, 1), 3},
        {"gfx908", problem(MIOPEN_BF16, 1, 32, 1024, 512, 15, 15, 1, 0, 1, 1), 4},
        {"gfx90a", problem(MIOPEN_FP32, 1, 5, 3, 64, 1301, 1333, 7, 3, 2, 1), 6},
        {"gfx90a", problem(MIOPEN_FP16, 1, 24, 1024, 2048, 14, 14, 1, 0, 2, 1), 4},
        {"gfx90a", problem(MIOPEN_BF16, 1, 2, 480, 192, 28, 28, 1, 0, 1, 1), 6},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct miopen_ranked_solver r[MIOPEN_MAX_SOLVERS];
        size_t n = 0;
        char msg[MIOPEN_MESSAGE_MAX] = "";
        const enum miopen_status st = miopen_tunanet_rank(dir, cases[i].arch, &cases[i].p, NULL,
                                                          NULL, r, &n, msg, sizeof msg);
        if (!CHECK(st == MIOPEN_OK)) {
            fprintf(stderr, "  case %zu: %s\n", i, msg);
            continue;
        }
        const int got = position_of_max_id(r, n);
        printf("%s case %zu: top %s (%.3f); max-id solver at %d (upstream expects %d)\n",
               cases[i].arch, i, r[0].name, (double)r[0].score, got, cases[i].expected);
        CHECK(got == cases[i].expected);
        CHECK(n == (strcmp(cases[i].arch, "gfx908") == 0 ? 9u : 23u));
    }
}

static void test_checks(void) {
    struct miopen_ranked_solver r[MIOPEN_MAX_SOLVERS];
    size_t n;
    char msg[MIOPEN_MESSAGE_MAX];
    struct miopen_problem p = problem(MIOPEN_FP32, 2, 1, 64, 64, 14, 14, 3, 1, 1, 1);
    CHECK(miopen_tunanet_rank(dir, "gfx908", &p, NULL, NULL, r, &n, msg, sizeof msg) ==
          MIOPEN_NOT_APPLICABLE);
    CHECK(strstr(msg, "group count 2 != 1") != NULL);
    CHECK(miopen_tunanet_rank(dir, "gfx942", &p, NULL, NULL, r, &n, msg, sizeof msg) == MIOPEN_OK);
    p = problem(MIOPEN_FP32, 1, 1, 64, 64, 14, 14, 3, 1, 1, 1);
    p.fx = 1;
    miopen_problem_finish(&p);
    CHECK(miopen_tunanet_rank(dir, "gfx908", &p, NULL, NULL, r, &n, msg, sizeof msg) ==
              MIOPEN_NOT_APPLICABLE &&
          strstr(msg, "filter 3x1 is not square"));
    p = problem(MIOPEN_FP32, 1, 1, 64, 64, 14, 14, 3, 1, 1, 1);
    p.sw = 2;
    miopen_problem_finish(&p);
    CHECK(miopen_tunanet_rank(dir, "gfx90a", &p, NULL, NULL, r, &n, msg, sizeof msg) ==
              MIOPEN_NOT_APPLICABLE &&
          strstr(msg, "stride 1x2 differs"));
    p = problem(MIOPEN_FP32, 1, 1, 64, 64, 14, 14, 3, 2, 1, 2);
    CHECK(miopen_tunanet_rank(dir, "gfx908", &p, NULL, NULL, r, &n, msg, sizeof msg) ==
              MIOPEN_NOT_APPLICABLE &&
          strstr(msg, "dilation 2x2 is not 1x1"));
    CHECK(miopen_tunanet_rank(dir, "gfx942", &p, NULL, NULL, r, &n, msg, sizeof msg) == MIOPEN_OK);
    p.layout = "NHWC";
    CHECK(miopen_tunanet_rank(dir, "gfx942", &p, NULL, NULL, r, &n, msg, sizeof msg) ==
              MIOPEN_NOT_APPLICABLE &&
          strstr(msg, "layout NHWC is not NCHW"));
    p.layout = "NCHW";
    CHECK(miopen_tunanet_rank(dir, "gfx1100", &p, NULL, NULL, r, &n, msg, sizeof msg) ==
              MIOPEN_UNKNOWN_ARCH &&
          strstr(msg, "unknown arch 'gfx1100'"));
    CHECK(miopen_tunanet_rank("/nonexistent", "gfx942", &p, NULL, NULL, r, &n, msg, sizeof msg) ==
              MIOPEN_MODEL_ERROR &&
          strstr(msg, "/nonexistent/gfx942_metadata.tn.model: does not exist"));
}

static bool nothing_applies(void *ctx, const char *name, const struct miopen_problem *p) {
    (void)ctx, (void)name, (void)p;
    return false;
}

static bool only_gemm(void *ctx, const char *name, const struct miopen_problem *p) {
    (void)ctx, (void)p;
    return strncmp(name, "Gemm", 4) == 0;
}

static void test_applicability_callback(void) {
    struct miopen_ranked_solver r[MIOPEN_MAX_SOLVERS];
    size_t n;
    char msg[MIOPEN_MESSAGE_MAX];
    const struct miopen_problem p = problem(MIOPEN_FP32, 1, 1, 64, 64, 14, 14, 3, 1, 1, 1);
    CHECK(miopen_tunanet_rank(dir, "gfx942", &p, nothing_applies, NULL, r, &n, msg, sizeof msg) ==
              MIOPEN_NOT_APPLICABLE &&
          strstr(msg, "none of the model's 21 solvers is applicable"));
    CHECK(miopen_tunanet_rank(dir, "gfx942", &p, only_gemm, NULL, r, &n, msg, sizeof msg) ==
          MIOPEN_OK);
}

/* ---- 16 threads on a cold cache rank exactly as one thread does ---- */

struct ranking {
    enum miopen_status status;
    struct miopen_ranked_solver r[MIOPEN_MAX_SOLVERS];
    size_t n;
};

static pthread_barrier_t start;

static void rank_one(struct ranking *out) {
    const struct miopen_problem p = problem(MIOPEN_FP16, 1, 8, 256, 128, 28, 28, 3, 1, 1, 1);
    char msg[MIOPEN_MESSAGE_MAX];
    out->status =
        miopen_tunanet_rank(dir, "gfx90a", &p, NULL, NULL, out->r, &out->n, msg, sizeof msg);
}

static void *rank_worker(void *arg) {
    pthread_barrier_wait(&start);
    rank_one(arg);
    return NULL;
}

static bool same_ranking(const struct ranking *a, const struct ranking *b) {
    if (a->status != MIOPEN_OK || b->status != MIOPEN_OK || a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->r[i].name, b->r[i].name) != 0 || a->r[i].score != b->r[i].score)
            return false;
    return true;
}

int main(void) {
    const char *shared = test_shared_dir();
    if (shared == NULL)
        test_skip("test_miopen_tunanet", "../shared (CONVSEL_SHARED_DIR) is absent");
    snprintf(dir, sizeof dir, "%s/miopen-ai-models", shared);

    /* 16 threads at a barrier on a cold cache, then one thread alone. */
    static struct ranking threaded[16], single;
    pthread_t t[16];
    pthread_barrier_init(&start, NULL, 16);
    for (int i = 0; i < 16; i++)
        pthread_create(&t[i], NULL, rank_worker, &threaded[i]);
    for (int i = 0; i < 16; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&start);
    rank_one(&single);
    int same = 0;
    for (int i = 0; i < 16; i++)
        same += same_ranking(&threaded[i], &single);
    printf("16 threads on a cold cache: %d of 16 rankings identical to the single-thread one\n",
           same);
    CHECK(same == 16);

    test_upstream_cases();
    test_checks();
    test_applicability_callback();
    return test_finish("test_miopen_tunanet");
}
