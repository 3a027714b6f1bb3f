/* cmd_models.c -- `convsel models check PATH...`: load model files (or
 * every file of a directory), run their embedded tests, and report each
 * file's layers, size, load time and prediction time. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "compat/miopen/miopen.h"
#include "db/perfdb.h"
#include "heur/ranking_model.h"
#include "nn/model.h"
#include "util/clock.h"
#include "util/cpu.h"
#include "util/file.h"
#include "util/stats.h"

static const char summary[] =
    "Loads each frugally-deep model file (or every model file in a directory: *.tn.model,\n"
    "*.ktn.model, *.json), runs the file's embedded tests, and prints one line per file: layer\n"
    "types, parameter count, load time and time per prediction. JSON files without an\n"
    "architecture (metadata) are skipped as models; in a directory, each <name>_metadata.tn.model\n"
    "is then judged with its model exactly as the library loads them: a convsel ranking model\n"
    "for <name> = generic, avx2 or avx512, MIOpen's TunaNet for gfx908, gfx90a or gfx942.\n"
    "An entry named like a model that is not a regular file (a FIFO, a directory, a symlink\n"
    "loop) fails, and so does a directory without model files.\n"
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

static bool ends_with(const char *s, const char *suffix) {
    const size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* A file name the library or the runtime would read as a model or metadata. */
static bool looks_like_model(const char *name) {
    return ends_with(name, ".tn.model") || ends_with(name, ".ktn.model") ||
           ends_with(name, ".json");
}

/* DIR/<prefix>_metadata.tn.model, as the library loads it: a convsel
 * ranking model for a CPU ISA (ranking_model_open: metadata and model
 * together, strict), or MIOpen's TunaNet for a GPU arch (the compat
 * loader, through a ranking of one problem). Anything else: no library
 * reads it. */
static void check_pair(const char *dir, const char *prefix, struct tally *t) {
    char err[FILE_ERROR_MAX + PERFDB_ERROR_MAX];
    enum cpu_isa isa;
    t->checked++;
    if (cpu_isa_parse(prefix, &isa)) {
        struct ranking_model *m = ranking_model_open(dir, prefix, err, sizeof err);
        if (m == NULL) {
            t->failed++;
            printf("%s/%s: FAILED as a ranking model: %s\n", dir, prefix, err);
            return;
        }
        const struct model_metadata *meta = ranking_model_metadata(m);
        t->passed++;
        printf("%s/%s: passed as a ranking model: %d solvers; feature bounds %s; machine "
               "limits %s\n",
               dir, prefix, meta->num_solvers,
               meta->bounds.present ? "yes" : "no (extrapolation not detected)",
               meta->limits.present ? "yes" : "no (estimates not floored)");
        ranking_model_close(m);
        return;
    }
    if (strncmp(prefix, "gfx", 3) == 0) {
        struct miopen_problem p = {MIOPEN_FWD, MIOPEN_FP32, "NCHW", 1, 64, 56, 56, 64, 3, 3,
                                   1,          1,           1,      1, 1,  1,  1,  0,  0};
        miopen_problem_finish(&p);
        struct miopen_ranked_solver ranked[MIOPEN_MAX_SOLVERS];
        size_t n = 0;
        const enum miopen_status st =
            miopen_tunanet_rank(dir, prefix, &p, NULL, NULL, ranked, &n, err, sizeof err);
        if (st == MIOPEN_OK) {
            t->passed++;
            printf("%s/%s: passed as MIOpen TunaNet: %zu solvers ranked\n", dir, prefix, n);
        } else {
            t->failed++;
            printf("%s/%s: FAILED as MIOpen TunaNet: %s\n", dir, prefix, err);
        }
        return;
    }
    t->failed++;
    printf("%s/%s_metadata.tn.model: FAILED: neither a CPU ISA (generic, avx2, avx512) nor a "
           "MIOpen arch (gfx...): no loader reads it\n",
           dir, prefix);
}

static void check_dir(const char *dir, struct tally *t) {
    DIR *d = opendir(dir);
    if (d == NULL) {
        t->checked++;
        t->failed++;
        printf("%s: FAILED: cannot open the directory: %s\n", dir, strerror(errno));
        return;
    }
    char **names = NULL;
    size_t n = 0;
    bool oom = false;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        char **grown = realloc(names, (n + 1) * sizeof *names);
        const size_t len = strlen(dir) + strlen(e->d_name) + 2;
        char *name = grown ? malloc(len) : NULL;
        if (grown)
            names = grown;
        if (name == NULL) {
            oom = true;
            break;
        }
        snprintf(name, len, "%s/%s", dir, e->d_name);
        names[n++] = name;
    }
    closedir(d);
    if (oom) {
        t->checked++, t->failed++;
        printf("%s: FAILED: out of memory listing it\n", dir);
    }
    if (n > 0) /* qsort wants a valid pointer even for 0 elements */
        qsort(names, n, sizeof *names, by_name);
    int models = 0;
    for (size_t i = 0; i < n; i++) {
        const char *base = strrchr(names[i], '/') + 1;
        char why[FILE_ERROR_MAX];
        const enum file_kind kind = file_kind_of(names[i], why, sizeof why);
        if (kind != FILE_REGULAR) {
            /* named like a model but not a file the loader can read */
            if (looks_like_model(base)) {
                t->checked++, t->failed++, models++;
                printf("%s: FAILED: %s\n", names[i], why);
            }
            continue;
        }
        if (!looks_like_model(base))
            continue;
        models++;
        check_file(names[i], t);
        if (ends_with(base, "_metadata.tn.model")) {
            char prefix[256];
            snprintf(prefix, sizeof prefix, "%.*s", (int)(strlen(base) - 18), base);
            check_pair(dir, prefix, t);
        }
    }
    if (models == 0 && !oom) {
        t->checked++, t->failed++;
        printf("%s: FAILED: no model files (*.tn.model, *.ktn.model, *.json)\n", dir);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
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
