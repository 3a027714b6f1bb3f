/* test_descriptors.c -- descriptor lifetime, setters, getters, handle basics. */
#include <string.h>

#include "testutil.h"

static void test_handle(void) {
    convsel_handle_t h;
    CHECK(convsel_handle_create(&h) == CONVSEL_STATUS_SUCCESS);
    CHECK(convsel_handle_create(NULL) == CONVSEL_STATUS_BAD_PARAM);
    int t = 0;
    CHECK(convsel_get_num_threads(h, &t) == CONVSEL_STATUS_SUCCESS && t >= 1);
    CHECK_STATUS(h, convsel_set_num_threads(h, 3), CONVSEL_STATUS_SUCCESS);
    CHECK(convsel_get_num_threads(h, &t) == CONVSEL_STATUS_SUCCESS && t == 3);
    CHECK_STATUS(h, convsel_set_num_threads(h, 0), CONVSEL_STATUS_BAD_PARAM);
    CHECK_MESSAGE(h, "num_threads = 0");
    CHECK_STATUS(h, convsel_set_num_threads(h, 100000), CONVSEL_STATUS_BAD_PARAM);
    CHECK(convsel_get_num_threads(h, &t) == CONVSEL_STATUS_SUCCESS && t == 3);
    CHECK(convsel_set_num_threads(NULL, 2) == CONVSEL_STATUS_BAD_PARAM);
    CHECK(convsel_get_num_threads(NULL, &t) == CONVSEL_STATUS_BAD_PARAM);
    CHECK(convsel_get_num_threads(h, NULL) == CONVSEL_STATUS_BAD_PARAM);
    CHECK(strcmp(convsel_get_error_message(NULL), "NULL handle") == 0);
    convsel_handle_destroy(h);
    convsel_handle_destroy(NULL);

    convsel_handle_create(&h);
    CHECK(strcmp(convsel_get_error_message(h), "success") == 0);
    convsel_handle_destroy(h);
}

static void test_status_strings(void) {
    CHECK(strcmp(convsel_status_string(CONVSEL_STATUS_SUCCESS), "success") == 0);
    CHECK(strcmp(convsel_status_string(CONVSEL_STATUS_BAD_PARAM), "bad parameter") == 0);
    CHECK(strcmp(convsel_status_string(CONVSEL_STATUS_NOT_SUPPORTED), "not supported") == 0);
    CHECK(strcmp(convsel_status_string(CONVSEL_STATUS_ALLOC_FAILED), "allocation failed") == 0);
    CHECK(strcmp(convsel_status_string(CONVSEL_STATUS_INTERNAL), "internal error") == 0);
    CHECK(strcmp(convsel_status_string((convsel_status_t)99), "unknown status") == 0);
    CHECK(strcmp(convsel_version(), "0.1.0") == 0);
}

static void test_tensor_desc(void) {
    convsel_tensor_desc_t t;
    CHECK(convsel_tensor_desc_create(&t) == CONVSEL_STATUS_SUCCESS);
    CHECK(convsel_tensor_desc_create(NULL) == CONVSEL_STATUS_BAD_PARAM);
    CHECK(convsel_tensor_desc_set_4d(t, CONVSEL_LAYOUT_NHWC, 2, 3, 4, 5) == CONVSEL_STATUS_SUCCESS);
    convsel_layout_t l;
    int64_t n, c, h, w, sn, sc, sh, sw;
    CHECK(convsel_tensor_desc_get_4d(t, &l, &n, &c, &h, &w, &sn, &sc, &sh, &sw) ==
          CONVSEL_STATUS_SUCCESS);
    CHECK(l == CONVSEL_LAYOUT_NHWC && n == 2 && c == 3 && h == 4 && w == 5);
    CHECK(sn == 0 && sc == 0 && sh == 0 && sw == 0); /* packed: computed on use */
    CHECK(convsel_tensor_desc_set_4d_strided(t, CONVSEL_LAYOUT_NCHW, 1, 2, 3, 4, 100, 40, 8, 2) ==
          CONVSEL_STATUS_SUCCESS);
    CHECK(convsel_tensor_desc_get_4d(t, &l, NULL, NULL, NULL, NULL, &sn, &sc, &sh, &sw) ==
          CONVSEL_STATUS_SUCCESS);
    CHECK(l == CONVSEL_LAYOUT_NCHW && sn == 100 && sc == 40 && sh == 8 && sw == 2);
    CHECK(convsel_tensor_desc_set_4d(t, (convsel_layout_t)7, 1, 1, 1, 1) ==
          CONVSEL_STATUS_BAD_PARAM);
    CHECK(convsel_tensor_desc_set_4d(NULL, CONVSEL_LAYOUT_NCHW, 1, 1, 1, 1) ==
          CONVSEL_STATUS_BAD_PARAM);
    CHECK(convsel_tensor_desc_get_4d(NULL, &l, &n, &c, &h, &w, NULL, NULL, NULL, NULL) ==
          CONVSEL_STATUS_BAD_PARAM);
    convsel_tensor_desc_destroy(t);
    convsel_tensor_desc_destroy(NULL);
}

static void test_filter_and_conv_desc(void) {
    convsel_filter_desc_t f;
    CHECK(convsel_filter_desc_create(&f) == CONVSEL_STATUS_SUCCESS);
    CHECK(convsel_filter_desc_set(f, CONVSEL_FILTER_KRSC, 8, 4, 3, 5) == CONVSEL_STATUS_SUCCESS);
    convsel_filter_layout_t fl;
    int64_t k, c, r, s;
    CHECK(convsel_filter_desc_get(f, &fl, &k, &c, &r, &s) == CONVSEL_STATUS_SUCCESS);
    CHECK(fl == CONVSEL_FILTER_KRSC && k == 8 && c == 4 && r == 3 && s == 5);
    CHECK(convsel_filter_desc_set(f, (convsel_filter_layout_t)-1, 1, 1, 1, 1) ==
          CONVSEL_STATUS_BAD_PARAM);
    CHECK(convsel_filter_desc_create(NULL) == CONVSEL_STATUS_BAD_PARAM);
    convsel_filter_desc_destroy(f);
    convsel_filter_desc_destroy(NULL);

    convsel_conv_desc_t cd;
    CHECK(convsel_conv_desc_create(&cd) == CONVSEL_STATUS_SUCCESS);
    int64_t ph, pw, uh, uw, dh, dw, g;
    CHECK(convsel_conv_desc_get(cd, &ph, &pw, &uh, &uw, &dh, &dw, &g) == CONVSEL_STATUS_SUCCESS);
    CHECK(ph == 0 && pw == 0 && uh == 1 && uw == 1 && dh == 1 && dw == 1 && g == 1);
    CHECK(convsel_conv_desc_set(cd, 1, 2, 3, 4, 5, 6, 7) == CONVSEL_STATUS_SUCCESS);
    CHECK(convsel_conv_desc_get(cd, &ph, &pw, &uh, &uw, &dh, &dw, &g) == CONVSEL_STATUS_SUCCESS);
    CHECK(ph == 1 && pw == 2 && uh == 3 && uw == 4 && dh == 5 && dw == 6 && g == 7);
    CHECK(convsel_conv_desc_set(NULL, 0, 0, 1, 1, 1, 1, 1) == CONVSEL_STATUS_BAD_PARAM);
    CHECK(convsel_conv_desc_get(NULL, &ph, NULL, NULL, NULL, NULL, NULL, NULL) ==
          CONVSEL_STATUS_BAD_PARAM);
    convsel_conv_desc_destroy(cd);
    convsel_conv_desc_destroy(NULL);
}

static void test_solver_registry(void) {
    convsel_handle_t h;
    convsel_handle_create(&h);
    CHECK(convsel_solver_count() >= 2);
    convsel_solver_id_t id = -5;
    CHECK_STATUS(h, convsel_solver_find(h, "reference", &id), CONVSEL_STATUS_SUCCESS);
    CHECK(id >= 0 && strcmp(convsel_solver_name(id), "reference") == 0);
    CHECK_STATUS(h, convsel_solver_find(h, "no_such_solver", &id), CONVSEL_STATUS_BAD_PARAM);
    CHECK_MESSAGE(h, "no_such_solver");
    CHECK_MESSAGE(h, "reference"); /* the message lists the known names */
    CHECK_STATUS(h, convsel_solver_find(h, NULL, &id), CONVSEL_STATUS_BAD_PARAM);
    CHECK(convsel_solver_name(-1) == NULL);
    CHECK(convsel_solver_name(convsel_solver_count()) == NULL);
    for (int i = 0; i < convsel_solver_count(); i++) {
        convsel_solver_id_t back;
        CHECK(convsel_solver_find(h, convsel_solver_name(i), &back) == CONVSEL_STATUS_SUCCESS &&
              back == i);
    }
    convsel_handle_destroy(h);
}

int main(void) {
    test_handle();
    test_status_strings();
    test_tensor_desc();
    test_filter_and_conv_desc();
    test_solver_registry();
    return test_finish("test_descriptors");
}
