/* test_problem_key.c -- the canonical key: exact text, round trip through
 * the parser, and rejection of malformed keys. */
#include <stdio.h>
#include <string.h>

#include "core/problem.h"
#include "problem_builder.h"
#include "testutil.h"
#include "util/rng.h"

static void test_documented_example(convsel_handle_t h) {
    struct test_problem tp = test_problem_default();
    tp.c = 64, tp.h = 56, tp.w = 56, tp.k = 64, tp.pad_h = 1, tp.pad_w = 1;
    struct test_descs d;
    CHECK_STATUS(h, test_descs_create(h, &tp, &d), CONVSEL_STATUS_SUCCESS);
    char key[CONVSEL_PROBLEM_KEY_MAX];
    size_t len = 0;
    CHECK_STATUS(h, convsel_get_problem_key(h, d.x, d.w, d.conv, d.y, key, sizeof key, &len),
                 CONVSEL_STATUS_SUCCESS);
    CHECK(strcmp(key, "64-56-56-3x3-64-56-56-1-1x1-1x1-1x1-g1-NCHW-FP32-F") == 0);
    CHECK(len == strlen(key));

    /* Truncation reports the needed length, like snprintf. */
    char small[8];
    CHECK_STATUS(h, convsel_get_problem_key(h, d.x, d.w, d.conv, d.y, small, sizeof small, &len),
                 CONVSEL_STATUS_SUCCESS);
    CHECK(len == strlen(key) && strlen(small) == 7 && strncmp(small, key, 7) == 0);
    CHECK_STATUS(h, convsel_get_problem_key(h, d.x, d.w, d.conv, d.y, NULL, 0, &len),
                 CONVSEL_STATUS_SUCCESS);
    CHECK(len == strlen(key));
    CHECK_STATUS(h, convsel_get_problem_key(h, d.x, d.w, d.conv, d.y, NULL, 10, &len),
                 CONVSEL_STATUS_BAD_PARAM);
    test_descs_destroy(&d);

    /* Every field in its place, and the mixed layouts. */
    tp = (struct test_problem){.n = 8,
                               .c = 6,
                               .h = 17,
                               .w = 19,
                               .k = 9,
                               .r = 1,
                               .s = 7,
                               .pad_h = 0,
                               .pad_w = 3,
                               .stride_h = 2,
                               .stride_w = 1,
                               .dil_h = 1,
                               .dil_w = 2,
                               .groups = 3,
                               .layout = CONVSEL_LAYOUT_NHWC,
                               .filter_layout = CONVSEL_FILTER_KCRS};
    CHECK_STATUS(h, test_descs_create(h, &tp, &d), CONVSEL_STATUS_SUCCESS);
    /* issue #18: "convsel_get_problem_key with a NULL y_desc returns
     * SUCCESS" -- the key names the output too */
    CHECK_STATUS(h, convsel_get_problem_key(h, d.x, d.w, d.conv, NULL, key, sizeof key, NULL),
                 CONVSEL_STATUS_BAD_PARAM);
    CHECK_MESSAGE(h, "y_desc is NULL");
    CHECK_STATUS(h, convsel_get_problem_key(h, d.x, d.w, d.conv, d.y, key, sizeof key, NULL),
                 CONVSEL_STATUS_SUCCESS);
    /* oh = (17-1)/2+1 = 9; ow = (19+6-13)/1+1 = 13 */
    CHECK(strcmp(key, "6-17-19-1x7-9-9-13-8-0x3-2x1-1x2-g3-NHWC_KCRS-FP32-F") == 0);
    test_descs_destroy(&d);
}

static void test_round_trip(void) {
    struct rng g = rng_seed(7);
    const convsel_layout_t layouts[2] = {CONVSEL_LAYOUT_NCHW, CONVSEL_LAYOUT_NHWC};
    const convsel_filter_layout_t flayouts[2] = {CONVSEL_FILTER_KCRS, CONVSEL_FILTER_KRSC};
    int checked = 0;
    for (int i = 0; i < 2000; i++) {
        struct conv_problem p = {0};
        p.groups = rng_int(&g, 1, 4);
        p.n = rng_int(&g, 1, 64);
        p.c = p.groups * rng_int(&g, 1, 300);
        p.k = p.groups * rng_int(&g, 1, 300);
        p.h = rng_int(&g, 1, 300);
        p.w = rng_int(&g, 1, 300);
        p.r = rng_int(&g, 1, 11);
        p.s = rng_int(&g, 1, 11);
        p.pad_h = rng_int(&g, 0, 5);
        p.pad_w = rng_int(&g, 0, 5);
        p.stride_h = rng_int(&g, 1, 4);
        p.stride_w = rng_int(&g, 1, 4);
        p.dil_h = rng_int(&g, 1, 3);
        p.dil_w = rng_int(&g, 1, 3);
        p.layout = layouts[rng_int(&g, 0, 1)];
        p.filter_layout = flayouts[rng_int(&g, 0, 1)];
        char err[PROBLEM_ERROR_MAX];
        if (problem_validate(&p, err, sizeof err) != CONVSEL_STATUS_SUCCESS)
            continue; /* filter does not fit: not a problem */
        char key[CONVSEL_PROBLEM_KEY_MAX], key2[CONVSEL_PROBLEM_KEY_MAX];
        problem_key_format(&p, key, sizeof key);
        struct conv_problem q;
        if (!CHECK(problem_key_parse(key, &q, err, sizeof err) == CONVSEL_STATUS_SUCCESS)) {
            fprintf(stderr, "  key %s: %s\n", key, err);
            continue;
        }
        problem_key_format(&q, key2, sizeof key2);
        CHECK(strcmp(key, key2) == 0);
        CHECK(q.n == p.n && q.c == p.c && q.h == p.h && q.w == p.w && q.k == p.k && q.r == p.r &&
              q.s == p.s && q.pad_h == p.pad_h && q.pad_w == p.pad_w && q.stride_h == p.stride_h &&
              q.stride_w == p.stride_w && q.dil_h == p.dil_h && q.dil_w == p.dil_w &&
              q.groups == p.groups && q.layout == p.layout && q.filter_layout == p.filter_layout &&
              q.oh == p.oh && q.ow == p.ow && q.packed);
        checked++;
    }
    CHECK(checked > 1000);
}

static void test_malformed(void) {
    const struct {
        const char *key;
        const char *error;
    } bad[] = {
        {"", "field C"},
        {"64-56-56-3x3-64-56-56-1-1x1-1x1-1x1-g1-NCHW-FP32", "FP32-F"},
        {"64-56-56-3x3-64-56-56-1-1x1-1x1-1x1-g1-NCHW-FP16-F", "FP32-F"},
        {"64-56-56-3x3-64-56-56-1-1x1-1x1-1x1-g1-NCHW-FP32-B", "FP32-F"},
        {"64-56-56-3x3-64-56-56-1-1x1-1x1-1x1-g1-NCHW-FP32-F-", "FP32-F"},
        {"64-56-56-3x3-64-56-56-1-1x1-1x1-1x1-g1-NCWH-FP32-F", "LAYOUT"},
        {"64-56-56-3x3-64-56-56-1-1x1-1x1-1x1-1-NCHW-FP32-F", "field G"},
        {"64-56-56-3-3-64-56-56-1-1x1-1x1-1x1-g1-NCHW-FP32-F", "after field R"},
        {"-64-56-56-3x3-64-56-56-1-1x1-1x1-1x1-g1-NCHW-FP32-F", "field C"},
        {"64-+56-56-3x3-64-56-56-1-1x1-1x1-1x1-g1-NCHW-FP32-F", "field H"},
        /* found by fuzz_problem_key: a leading zero is not the canonical spelling */
        {"32-112-112-3x3-32-112-112-1-1x1-1x1-01x1-g32-NCHW_KRSC-FP32-F", "field DILH"},
        {"064-56-56-3x3-64-56-56-1-1x1-1x1-1x1-g1-NCHW-FP32-F", "field C"},
        {"64-56-56-3x3-64-55-56-1-1x1-1x1-1x1-g1-NCHW-FP32-F", "OH x OW = 55x56"},
        {"0-56-56-3x3-64-56-56-1-1x1-1x1-1x1-g1-NCHW-FP32-F", "x_desc.c = 0"},
        {"64-56-56-3x3-64-56-56-1-1x1-1x1-1x1-g3-NCHW-FP32-F", "conv_desc.groups = 3"},
        {"64-56-56-3x3-64-56-56-1-1x1-0x1-1x1-g1-NCHW-FP32-F", "stride_h = 0"},
        {"1234567890123456789-56-56-3x3-64-56-56-1-1x1-1x1-1x1-g1-NCHW-FP32-F", "field C"},
        {"99999999999-56-56-3x3-64-56-56-1-1x1-1x1-1x1-g1-NCHW-FP32-F", "must be <="},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct conv_problem p;
        char err[PROBLEM_ERROR_MAX] = "";
        CHECK(problem_key_parse(bad[i].key, &p, err, sizeof err) == CONVSEL_STATUS_BAD_PARAM);
        if (!CHECK(strstr(err, bad[i].error) != NULL))
            fprintf(stderr, "  key '%s': error '%s' lacks '%s'\n", bad[i].key, err, bad[i].error);
    }
    struct conv_problem p;
    char err[PROBLEM_ERROR_MAX];
    CHECK(problem_key_parse(NULL, &p, err, sizeof err) == CONVSEL_STATUS_BAD_PARAM);
}

int main(void) {
    convsel_handle_t h;
    convsel_handle_create(&h);
    test_documented_example(h);
    test_round_trip();
    test_malformed();
    convsel_handle_destroy(h);
    return test_finish("test_problem_key");
}
