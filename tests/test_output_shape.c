/* test_output_shape.c -- output-size arithmetic, checked against values
 * worked out by hand from oh = floor((h + 2p - d(r-1) - 1) / u) + 1. */
#include "problem_builder.h"
#include "testutil.h"

struct shape_case {
    int64_t h, pad, r, dil, stride;
    int64_t want; /* hand-computed */
};

static const struct shape_case cases[] = {
    {56, 1, 3, 1, 1, 56},                       /* "same" 3x3 */
    {56, 0, 3, 1, 1, 54},                       /* valid 3x3 */
    {56, 1, 3, 1, 2, 28},                       /* (56+2-3)/2+1 = 27.5 -> 27+1 */
    {224, 3, 7, 1, 2, 112},                     /* ResNet stem: (224+6-7)/2+1 = 112 */
    {227, 0, 11, 1, 4, 55},                     /* AlexNet conv1: (227-11)/4+1 = 55 */
    {33, 6, 3, 6, 1, 33},                       /* ASPP: (33+12-13)/1+1 = 33 */
    {5, 0, 3, 2, 1, 1},                         /* dilated extent 5 fits once */
    {1, 0, 1, 1, 1, 1},     {7, 0, 1, 1, 2, 4}, /* 1x1 stride 2: (7-1)/2+1 */
    {8, 0, 1, 1, 3, 3},                         /* (8-1)/3+1 = 3 */
    {3, 2, 5, 1, 1, 3},                         /* (3+4-5)+1 */
    {2, 0, 3, 1, 1, 0},                         /* filter larger than input: invalid */
    {4, 0, 3, 2, 1, 0},                         /* dilated extent 5 > 4: invalid */
    {1, 1, 3, 1, 1, 1},                         /* padding makes it fit */
};

int main(void) {
    convsel_handle_t h;
    convsel_handle_create(&h);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct shape_case *c = &cases[i];
        /* The same case along height and, transposed, along width. */
        for (int axis = 0; axis < 2; axis++) {
            struct test_problem tp = test_problem_default();
            if (axis == 0) {
                tp.h = c->h, tp.pad_h = c->pad, tp.r = c->r, tp.dil_h = c->dil,
                tp.stride_h = c->stride;
            } else {
                tp.w = c->h, tp.pad_w = c->pad, tp.s = c->r, tp.dil_w = c->dil,
                tp.stride_w = c->stride;
            }
            struct test_descs d;
            convsel_status_t st = test_descs_create(h, &tp, &d);
            if (c->want == 0) {
                CHECK_STATUS(h, st, CONVSEL_STATUS_BAD_PARAM);
                CHECK_MESSAGE(h, axis == 0 ? "output height = 0" : "output width = 0");
            } else {
                CHECK_STATUS(h, st, CONVSEL_STATUS_SUCCESS);
                CHECK((axis == 0 ? d.oh : d.ow) == c->want);
            }
            test_descs_destroy(&d);
        }
    }
    /* n and k pass through; outputs may be NULL. */
    struct test_problem tp = test_problem_default();
    tp.n = 7, tp.c = 6, tp.k = 9, tp.groups = 3;
    struct test_descs d;
    CHECK_STATUS(h, test_descs_create(h, &tp, &d), CONVSEL_STATUS_SUCCESS);
    int64_t n, k;
    CHECK(convsel_get_conv_output_shape(h, d.x, d.w, d.conv, &n, &k, NULL, NULL) ==
              CONVSEL_STATUS_SUCCESS &&
          n == 7 && k == 9);
    CHECK(convsel_get_conv_output_shape(NULL, d.x, d.w, d.conv, &n, &k, NULL, NULL) ==
          CONVSEL_STATUS_BAD_PARAM);
    test_descs_destroy(&d);
    convsel_handle_destroy(h);
    return test_finish("test_output_shape");
}
