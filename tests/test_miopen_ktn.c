/* test_miopen_ktn.c -- MIOpen's two upstream ConvAsm1x1U Kernel Tuning Net
 * expectations (test/gtest/kernel_tuning_net.cpp at ROCm/MIOpen@2d1fd99),
 * reproduced offline: encoder -> greedy constrained decoding with the
 * ConvAsm1x1U validator -> perf-config string. Plus the guarded cases:
 * EOS on top, no valid token, missing files, problems the model refuses. */
#include <stdio.h>
#include <string.h>

#include "compat/miopen/miopen.h"
#include "testutil.h"

static char dir[2048];

static struct miopen_problem problem(enum miopen_direction d, enum miopen_dtype t, int64_t n,
                                     int64_t c, int64_t k, int64_t hw) {
    struct miopen_problem p = {.direction = d,
                               .dtype = t,
                               .layout = "NCHW",
                               .n = n,
                               .c = c,
                               .h = hw,
                               .w = hw,
                               .k = k,
                               .fy = 1,
                               .fx = 1,
                               .sh = 1,
                               .sw = 1,
                               .dh = 1,
                               .dw = 1,
                               .g = 1};
    miopen_problem_finish(&p);
    return p;
}

static void expect_config(const struct miopen_problem *p, const char *want) {
    char config[128] = "", msg[MIOPEN_MESSAGE_MAX] = "";
    const enum miopen_status st =
        miopen_ktn_conv_asm_1x1u(dir, "gfx908", p, config, sizeof config, msg, sizeof msg);
    printf("ConvAsm1x1U %s n%lld c%lld k%lld %lldx%lld: %s (upstream: %s) %s\n",
           p->direction == MIOPEN_FWD ? "fwd" : "bwd", (long long)p->n, (long long)p->c,
           (long long)p->k, (long long)p->h, (long long)p->w, config, want, msg);
    CHECK(st == MIOPEN_OK);
    CHECK(strcmp(config, want) == 0);
}

/* Validators for the guarded cases. */
static bool reject_all(void *state, int index, const char *value) {
    (void)state, (void)index, (void)value;
    return false;
}

static int seen_steps;
static bool accept_all(void *state, int index, const char *value) {
    (void)state, (void)value;
    seen_steps = index + 1;
    return true;
}

int main(void) {
    const char *shared = test_shared_dir();
    if (shared == NULL)
        test_skip("test_miopen_ktn", "../shared (CONVSEL_SHARED_DIR) is absent");
    snprintf(dir, sizeof dir, "%s/miopen-ai-models", shared);

    /* The two upstream cases. */
    struct miopen_problem bwd = problem(MIOPEN_BWD_DATA, MIOPEN_FP32, 512, 192, 288, 56);
    expect_config(&bwd, "1,16,1,64,2,2,1,4");
    struct miopen_problem fwd = problem(MIOPEN_FWD, MIOPEN_FP16, 256, 2048, 512, 7);
    expect_config(&fwd, "2,8,4,16,1,4,1,4");

    /* Refused problems name the failed check. */
    char config[128], msg[MIOPEN_MESSAGE_MAX];
    struct miopen_problem p = fwd;
    p.sh = p.sw = 2;
    miopen_problem_finish(&p);
    CHECK(miopen_ktn_conv_asm_1x1u(dir, "gfx908", &p, config, sizeof config, msg, sizeof msg) ==
              MIOPEN_NOT_APPLICABLE &&
          strstr(msg, "needs stride 1"));
    p = fwd;
    p.fy = p.fx = 3;
    p.ph = p.pw = 1;
    miopen_problem_finish(&p);
    CHECK(miopen_ktn_conv_asm_1x1u(dir, "gfx908", &p, config, sizeof config, msg, sizeof msg) ==
              MIOPEN_NOT_APPLICABLE &&
          strstr(msg, "1x1 filter"));
    CHECK(miopen_ktn_conv_asm_1x1u(dir, "gfx90a", &fwd, config, sizeof config, msg, sizeof msg) ==
              MIOPEN_NOT_APPLICABLE &&
          strstr(msg, "gfx908 only"));
    p = fwd;
    p.direction = MIOPEN_BWD_WEIGHTS;
    CHECK(miopen_ktn_conv_asm_1x1u(dir, "gfx908", &p, config, sizeof config, msg, sizeof msg) ==
              MIOPEN_NOT_APPLICABLE &&
          strstr(msg, "forward and backward-data"));

    /* Guarded edge cases of the decoding loop. */
    float features[64] = {0};
    for (int i = 0; i < 8; i++)
        features[i * 9] = 1.0f + (float)i;
    CHECK(miopen_ktn_decode(dir, "gfx908", "ConvAsm1x1U", MIOPEN_FWD, features, 64, true,
                            reject_all, NULL, msg, sizeof msg) == MIOPEN_NO_PREDICTION);
    CHECK(strstr(msg, "end-of-sequence ranked above every valid token for parameter 0") ||
          strstr(msg, "no token is valid for parameter 0"));
    CHECK(miopen_ktn_decode(dir, "gfx908", "ConvAsm1x1U", MIOPEN_FWD, features, 64, true,
                            accept_all, NULL, msg, sizeof msg) == MIOPEN_OK ||
          strstr(msg, "end-of-sequence"));
    printf("accept-all validator: %d steps (%s)\n", seen_steps, msg);
    CHECK(miopen_ktn_decode(dir, "gfx908", "ConvAsm1x1U", MIOPEN_BWD_WEIGHTS, features, 64, true,
                            accept_all, NULL, msg, sizeof msg) == MIOPEN_NO_PREDICTION &&
          strstr(msg, "no parameter count for 'wrw'"));
    CHECK(miopen_ktn_decode(dir, "gfx908", "ConvAsm1x1U", MIOPEN_FWD, features, 49, true,
                            accept_all, NULL, msg, sizeof msg) == MIOPEN_MODEL_ERROR &&
          strstr(msg, "49 features do not fit"));
    CHECK(miopen_ktn_decode(dir, "gfx908", "NoSuchSolver", MIOPEN_FWD, features, 64, true,
                            accept_all, NULL, msg, sizeof msg) == MIOPEN_MODEL_ERROR &&
          strstr(msg, "gfx908_NoSuchSolver_metadata.ktn.model"));

    /* The gfx90a forward model takes 18 raw values (transform = false). */
    float raw[18] = {2, 64, 209, 209, 128, 104, 104, 3, 3, 0, 0, 2, 2, 1, 1, 128, 1, 110};
    const enum miopen_status st =
        miopen_ktn_decode(dir, "gfx90a", "ConvHipIgemmGroupFwdXdlops", MIOPEN_FWD, raw, 18, false,
                          accept_all, NULL, msg, sizeof msg);
    CHECK(st == MIOPEN_OK || st == MIOPEN_NO_PREDICTION);
    printf("gfx90a ConvHipIgemmGroupFwdXdlops, accept-all: %d steps, status %d %s\n", seen_steps,
           st, msg);
    return test_finish("test_miopen_ktn");
}
