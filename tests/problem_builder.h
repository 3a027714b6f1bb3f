/* problem_builder.h -- builds the four descriptors of a problem in one call,
 * for tests. */
#ifndef CONVSEL_TESTS_PROBLEM_BUILDER_H
#define CONVSEL_TESTS_PROBLEM_BUILDER_H

#include "convsel/convsel.h"

struct test_problem {
    int64_t n, c, h, w, k, r, s, pad_h, pad_w, stride_h, stride_w, dil_h, dil_w, groups;
    convsel_layout_t layout;
    convsel_filter_layout_t filter_layout;
};

struct test_descs {
    convsel_tensor_desc_t x, y;
    convsel_filter_desc_t w;
    convsel_conv_desc_t conv;
    int64_t oh, ow;
    size_t x_count, w_count, y_count;
};

/* A 1-image, 1-channel, stride-1 problem to modify. */
struct test_problem test_problem_default(void);

/* Sets x, w, conv from tp; when the shape is valid also sets y (packed) and
 * the counts. Returns the status of the output-shape query. */
convsel_status_t test_descs_create(convsel_handle_t h, const struct test_problem *tp,
                                   struct test_descs *d);
void test_descs_destroy(struct test_descs *d);

/* Data for a problem: x and w filled from seed, y allocated, ref the
 * reference solver's answer. */
struct test_data {
    float *x, *w, *y, *ref;
};

void test_data_create(convsel_handle_t h, const struct test_descs *d, unsigned long long seed,
                      struct test_data *t);
void test_data_destroy(struct test_data *t);

#endif
