/* test_torch_reference.c -- the reference solver against PyTorch
 * (python3-torch from Debian, run as /usr/bin/python3) on the 30 problems of
 * ../shared/reference/conv-suite.csv, each with batch 1 and the input
 * cropped to at most 16x16 (channels, filter, padding, stride, dilation and
 * groups as in the suite) so the reference finishes in seconds. Skips,
 * saying why, when torch or ../shared is absent. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/verify.h"
#include "problem_builder.h"
#include "testutil.h"

static float *read_floats(const char *dir, const char *name, const char *suffix, size_t count) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.%s", dir, name, suffix);
    FILE *f = fopen(path, "rb");
    float *v = malloc(count * sizeof *v);
    const bool ok = f && v && fread(v, sizeof *v, count, f) == count && fgetc(f) == EOF;
    if (f)
        fclose(f);
    if (!ok) {
        free(v);
        return NULL;
    }
    return v;
}

int main(void) {
    const char *shared = test_shared_dir();
    if (shared == NULL)
        test_skip("test_torch_reference", "../shared (CONVSEL_SHARED_DIR) is absent");
    char out[4096];
    if (test_run_command("/usr/bin/python3 -c 'import torch'", out, sizeof out) != 0)
        test_skip("test_torch_reference", "/usr/bin/python3 cannot import torch (python3-torch)");
    char dir[] = "/tmp/convsel-torch-XXXXXX";
    if (mkdtemp(dir) == NULL)
        test_skip("test_torch_reference", "cannot create a temporary directory");
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 %s/tests/torch_reference.py %s/reference/conv-suite.csv %s 16",
             CONVSEL_SOURCE_DIR, shared, dir);
    const int rc = test_run_command(cmd, out, sizeof out);
    printf("%s", out);
    if (!CHECK(rc == 0))
        return test_finish("test_torch_reference");

    char list[4200];
    snprintf(list, sizeof list, "%s/problems.txt", dir);
    FILE *f = fopen(list, "r");
    CHECK(f != NULL);
    convsel_handle_t h;
    convsel_handle_create(&h);
    convsel_solver_id_t ref;
    convsel_solver_find(h, "reference", &ref);
    char name[128];
    long long v[14];
    int problems = 0;
    double worst = 0;
    while (f &&
           fscanf(f, "%127s %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld",
                  name, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9],
                  &v[10], &v[11], &v[12], &v[13]) == 15) {
        struct test_problem tp = {.n = v[0],
                                  .c = v[1],
                                  .h = v[2],
                                  .w = v[3],
                                  .k = v[4],
                                  .r = v[5],
                                  .s = v[6],
                                  .pad_h = v[7],
                                  .pad_w = v[8],
                                  .stride_h = v[9],
                                  .stride_w = v[10],
                                  .dil_h = v[11],
                                  .dil_w = v[12],
                                  .groups = v[13],
                                  .layout = CONVSEL_LAYOUT_NCHW,
                                  .filter_layout = CONVSEL_FILTER_KCRS};
        struct test_descs d;
        if (!CHECK_STATUS(h, test_descs_create(h, &tp, &d), CONVSEL_STATUS_SUCCESS)) {
            fprintf(stderr, "  %s\n", name);
            continue;
        }
        float *x = read_floats(dir, name, "x", d.x_count),
              *w = read_floats(dir, name, "w", d.w_count);
        float *want = read_floats(dir, name, "y", d.y_count), *y = malloc(d.y_count * sizeof *y);
        if (CHECK(x && w && want)) {
            CHECK_STATUS(
                h, convsel_convolution_forward(h, ref, d.x, x, d.w, w, d.conv, d.y, y, NULL, 0),
                CONVSEL_STATUS_SUCCESS);
            const struct verify_result r = verify_compare(y, want, d.y_count);
            /* torch accumulates in fp32 (oneDNN/GEMM), the reference in double */
            if (!CHECK(verify_passes(&r, 1e-4)))
                fprintf(stderr, "  %s: max rel error %.3g\n", name, r.rel_error);
            worst = r.rel_error > worst ? r.rel_error : worst;
        }
        free(x), free(w), free(want), free(y);
        test_descs_destroy(&d);
        problems++;
    }
    if (f)
        fclose(f);
    printf("%d problems compared with torch; worst max|ref-torch|/max|torch| = %.2e\n", problems,
           worst);
    CHECK(problems == 30);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    test_run_command(cmd, out, sizeof out);
    convsel_handle_destroy(h);
    return test_finish("test_torch_reference");
}
