/* cmd_models.c -- `convsel models check PATH...`: load model files (or
 * every file of a directory), run their embedded tests, and report each
 * file's layers, size, load time and prediction time. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "nn/model.h"
#include "util/clock.h"
#include "util/stats.h"

static const char summary[] =
    "Loads each frugally-deep model file (or every file in a directory), runs the file's\n"
    "embedded tests, and prints one line per file: layer types, parameter count, load time\n"
    "and time per prediction. JSON files without an architecture (metadata) are skipped.\n"
    "Ends with 'models: N checked, P passed, F failed, S skipped'; exits 1 if any failed.";

struct tally {
    int checked, passed, failed, skipped;
};

/* Median time of one prediction on zero inputs, in microseconds. */
static double time_prediction(const struct nn_model *m) {
    const size_t n_in = nn_model_num_inputs(m), n_out = nn_model_num_outputs(m);
    float **in = calloc(n_in, sizeof *in), **out = calloc(n_out, sizeof *out);
    void *scratch = malloc(nn_model_scratch_bytes(m) + sizeof(float));
    double samples[101], result = -1;
    bool ok = in && out && scratch;
    for (size_t i = 0; ok && i < n_in; i++)
        ok = (in[i] = calloc(nn_shape_volume(nn_model_input_shape(m, i)), sizeof(float))) != NULL;
    for (size_t i = 0; ok && i < n_out; i++)
        ok = (out[i] = calloc(nn_shape_volume(nn_model_output_shape(m, i)), sizeof(float))) != NULL;
    for (int r = -5; ok && r < 101; r++) { /* 5 warm-up runs */
        const int64_t t0 = clock_now_ns();
        ok = nn_model_predict(m, (const float *const *)in, out, scratch, nn_model_scratch_bytes(m),
                              NULL, 0) == NN_OK;
        if (r >= 0)
            samples[r] = (double)(clock_now_ns() - t0) * 1e-3;
    }
    if (ok)
        result = stats_median(samples, 101);
    for (size_t i = 0; in && i < n_in; i++)
        free(in[i]);
    for (size_t i = 0; out && i < n_out; i++)
        free(out[i]);
    free(in);
    free(out);
    free(scratch);
    return result;
}

static void check_file(const char *path, struct tally *t) {
    char err[NN_ERROR_MAX];
    struct nn_model *m = NULL;
    const int64_t t0 = clock_now_ns();
    enum nn_status st = nn_model_load_file(path, NULL, &m, err, sizeof err);
    const double load_ms = (double)(clock_now_ns() - t0) * 1e-6;
    t->checked++;
    if (st == NN_ERR_NOT_MODEL) {
        t->skipped++;
        printf("%s: skipped (not a model)\n", path);
        return;
    }
    if (st != NN_OK) {
        t->failed++;
        printf("%s: FAILED: %s\n", path, err);
        return;
    }
    t->passed++;
    printf("%s: passed: %s; %zu params; %zu embedded test%s; load %.1f ms; predict %.1f us\n", path,
           nn_model_layer_summary(m), nn_model_param_count(m), nn_model_num_tests(m),
           nn_model_num_tests(m) == 1 ? "" : "s", load_ms, time_prediction(m));
    nn_model_free(m);
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void check_dir(const char *dir, struct tally *t) {
    DIR *d = opendir(dir);
    if (d == NULL) {
        t->checked++;
        t->failed++;
        printf("%s: FAILED: cannot open directory\n", dir);
        return;
    }
    char **names = NULL;
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        char **grown = realloc(names, (n + 1) * sizeof *names);
        if (grown == NULL)
            break;
        names = grown;
        const size_t len = strlen(dir) + strlen(e->d_name) + 2;
        if ((names[n] = malloc(len)) == NULL)
            break;
        snprintf(names[n++], len, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode) && strstr(names[i], ".md") == NULL &&
            strstr(names[i], ".txt") == NULL)
            check_file(names[i], t);
        free(names[i]);
    }
    free(names);
}

int cmd_models(int argc, char **argv) {
    if (argc < 2 || strcmp(argv[1], "check") != 0) {
        if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
            printf("usage: convsel models check PATH...\n\n%s\n", summary);
            return EXIT_OK;
        }
        fprintf(stderr, "usage: convsel models check PATH...  (see convsel models --help)\n");
        return EXIT_USAGE;
    }
    if (argc >= 3 && (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0)) {
        printf("usage: convsel models check PATH...\n\n%s\n", summary);
        return EXIT_OK;
    }
    if (argc < 3) {
        fprintf(stderr, "convsel models check: no PATH given\n");
        return EXIT_USAGE;
    }
    struct tally t = {0};
    for (int i = 2; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
            check_dir(argv[i], &t);
        else
            check_file(argv[i], &t);
    }
    printf("models: %d checked, %d passed, %d failed, %d skipped\n", t.checked, t.passed, t.failed,
           t.skipped);
    return t.failed ? EXIT_FAILED : EXIT_OK;
}
