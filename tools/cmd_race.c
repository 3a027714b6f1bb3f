/* cmd_race.c -- `convsel race`: the reproduction harness for the MIOpen
 * model-cache bug, modelled on PyTorch's
 * test_cudnn_multiple_threads_same_device.
 *
 * Each run re-executes this binary as a child process (a cold cache every
 * time). The child starts T threads at a barrier; each repeatedly convolves
 * its 1x1xHxH all-ones tensor with a 1x1x2x2 all-ones filter and divides by
 * 4, so every iteration is a new problem shape, and for every shape it
 * looks the model up in the cache and runs a prediction, as the per-shape
 * heuristic does. Each prediction is compared bit for bit with a private
 * copy of the model loaded outside the cache; the final sum must be
 * (H - iterations)^2. The parent tallies children killed by a signal,
 * wrong results and loads beyond the one expected per process. */
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "convsel/convsel.h"
#include "heur/model_cache.h"
#include "heur/model_loader.h"
#include "unguarded_cache.h"

static const char summary[] =
    "Runs the model-cache race harness: RUNS fresh processes, each with THREADS threads\n"
    "started by a barrier, each thread doing ITERS iterations of conv(1x1xHxH ones, 2x2 ones)/4\n"
    "from H = SIZE, with a cache lookup and a model prediction for every new shape.\n"
    "--variant safe uses convsel's model cache; unguarded uses a deliberately racy map shaped\n"
    "like MIOpen's before its fix. --delay-us sets CONVSEL_TEST_LOAD_DELAY_US in the children.\n"
    "Ends with 'race: variant=V runs=N crashed=C wrong=W extra_loads=E'.\n"
    "Defaults follow the PyTorch test (H = 2048, 1000 iterations); that is ~20 GFLOP per\n"
    "thread per run, so use --size/--iters for many runs on a small machine.";

struct race_options {
    int64_t runs, threads, delay_us, size, iters, timeout;
    const char *variant, *model;
    bool child, verbose;
};

/* ---------------------------- child ---------------------------- */

struct child_state {
    const struct race_options *o;
    bool unguarded;
    struct model_cache *cache;
    struct unguarded_cache ucache;
    const struct nn_model *private_model; /* loaded outside any cache */
    pthread_barrier_t start;
    long wrong;
    pthread_mutex_t mu;
};

static const struct nn_model *lookup(struct child_state *cs) {
    const struct cache_key key = {"race", "model", "", 0};
    if (cs->unguarded)
        return unguarded_get(&cs->ucache, &key, heur_load_model_file, (void *)cs->o->model);
    return heur_entry_model(cache_get(cs->cache, &key, heur_load_model_file, (void *)cs->o->model));
}

/* Deterministic per-shape features of the model's input size. */
static void features(float *f, size_t n, int64_t h) {
    for (size_t i = 0; i < n; i++)
        f[i] = sinf((float)i + 0.001f * (float)h);
}

/* One prediction with the cached model, checked against the private copy.
 * Returns false when they differ (or the cached model is missing). */
static bool predict_checked(struct child_state *cs, int64_t h, float *in, float *out, float *want,
                            void *scratch) {
    const struct nn_model *m = lookup(cs);
    if (m == NULL)
        return false;
    const size_t n_in = nn_shape_volume(nn_model_input_shape(cs->private_model, 0));
    const size_t n_out = nn_shape_volume(nn_model_output_shape(cs->private_model, 0));
    features(in, n_in, h);
    const float *ins[1] = {in};
    float *outs[1] = {out}, *wants[1] = {want};
    const size_t bytes = nn_model_scratch_bytes(cs->private_model);
    if (nn_model_predict(m, ins, outs, scratch, bytes, NULL, 0) != NN_OK ||
        nn_model_predict(cs->private_model, ins, wants, scratch, bytes, NULL, 0) != NN_OK)
        return false;
    return memcmp(out, want, n_out * sizeof *out) == 0;
}

static void *child_worker(void *arg) {
    struct child_state *cs = arg;
    const int64_t size = cs->o->size;
    float *a = malloc((size_t)(size * size) * sizeof *a),
          *b = malloc((size_t)(size * size) * sizeof *b);
    const float w[4] = {1, 1, 1, 1};
    const size_t n_in = nn_shape_volume(nn_model_input_shape(cs->private_model, 0));
    const size_t n_out = nn_shape_volume(nn_model_output_shape(cs->private_model, 0));
    float *in = malloc(n_in * sizeof *in), *out = malloc(n_out * sizeof *out),
          *want = malloc(n_out * sizeof *want);
    /* Scratch sized from the private copy: the same file, so the same plan. */
    void *scratch = malloc(nn_model_scratch_bytes(cs->private_model));
    convsel_handle_t h;
    convsel_tensor_desc_t xd, yd;
    convsel_filter_desc_t wd;
    convsel_conv_desc_t cd;
    convsel_handle_create(&h);
    convsel_set_num_threads(h, 1);
    convsel_tensor_desc_create(&xd);
    convsel_tensor_desc_create(&yd);
    convsel_filter_desc_create(&wd);
    convsel_conv_desc_create(&cd);
    convsel_filter_desc_set(wd, CONVSEL_FILTER_KCRS, 1, 1, 2, 2);
    for (int64_t i = 0; i < size * size; i++)
        a[i] = 1.0f;
    long wrong = 0;
    pthread_barrier_wait(&cs->start);
    int64_t H = size;
    for (int64_t it = 0; it < cs->o->iters; it++, H--) {
        if (!predict_checked(cs, H, in, out, want, scratch))
            wrong++;
        convsel_tensor_desc_set_4d(xd, CONVSEL_LAYOUT_NCHW, 1, 1, H, H);
        convsel_tensor_desc_set_4d(yd, CONVSEL_LAYOUT_NCHW, 1, 1, H - 1, H - 1);
        size_t ws = 0;
        void *work = NULL;
        if (convsel_get_forward_workspace_size(h, CONVSEL_SOLVER_AUTO, xd, wd, cd, yd, &ws) ||
            (ws && (work = malloc(ws)) == NULL) ||
            convsel_convolution_forward(h, CONVSEL_SOLVER_AUTO, xd, a, wd, w, cd, yd, b, work,
                                        ws)) {
            wrong++;
            free(work);
            break;
        }
        free(work);
        for (int64_t i = 0; i < (H - 1) * (H - 1); i++)
            b[i] /= 4.0f;
        float *t = a;
        a = b;
        b = t;
    }
    double sum = 0;
    for (int64_t i = 0; i < H * H; i++)
        sum += a[i];
    if (sum != (double)(H * H))
        wrong++;
    pthread_mutex_lock(&cs->mu);
    cs->wrong += wrong;
    pthread_mutex_unlock(&cs->mu);
    convsel_tensor_desc_destroy(xd);
    convsel_tensor_desc_destroy(yd);
    convsel_filter_desc_destroy(wd);
    convsel_conv_desc_destroy(cd);
    convsel_handle_destroy(h);
    free(a), free(b), free(in), free(out), free(want), free(scratch);
    return NULL;
}

/* Loads the model file; the workers predict with one input and one output
 * (as the ranking models have), so any other model is refused, by name. */
static int load_model(const char *path, struct nn_model **out) {
    char err[NN_ERROR_MAX];
    if (nn_model_load_file(path, NULL, out, err, sizeof err) != NN_OK) {
        fprintf(stderr, "convsel race: %s\n", err);
        return EXIT_USAGE;
    }
    const size_t ins = nn_model_num_inputs(*out), outs = nn_model_num_outputs(*out);
    if (ins == 1 && outs == 1)
        return EXIT_OK;
    fprintf(stderr,
            "convsel race: --model %s: %zu inputs and %zu outputs; race needs a model with one "
            "of each\n",
            path, ins, outs);
    nn_model_free(*out);
    *out = NULL;
    return EXIT_USAGE;
}

static int run_child(const struct race_options *o) {
    struct child_state cs = {.o = o, .unguarded = strcmp(o->variant, "unguarded") == 0};
    struct nn_model *private_model;
    const int rc = load_model(o->model, &private_model);
    if (rc != EXIT_OK)
        return rc;
    cs.private_model = private_model;
    cs.cache = cache_create(); /* reads CONVSEL_TEST_LOAD_DELAY_US */
    cs.ucache.delay_us = (unsigned)o->delay_us;
    pthread_mutex_init(&cs.mu, NULL);
    pthread_barrier_init(&cs.start, NULL, (unsigned)o->threads);
    pthread_t *t = calloc((size_t)o->threads, sizeof *t);
    alarm((unsigned)o->timeout); /* a hang ends the child with SIGALRM */
    for (int64_t i = 0; i < o->threads; i++)
        pthread_create(&t[i], NULL, child_worker, &cs);
    for (int64_t i = 0; i < o->threads; i++)
        pthread_join(t[i], NULL);
    const struct cache_stats st = cache_get_stats(cs.cache);
    const long loads = cs.unguarded ? cs.ucache.loads : (long)st.loads;
    printf("child: loads=%ld wrong=%ld hits=%llu misses=%llu waits=%llu failures=%llu\n", loads,
           cs.wrong, (unsigned long long)st.hits, (unsigned long long)st.misses,
           (unsigned long long)st.waits, (unsigned long long)st.failures);
    /* Every thread has joined: release everything, so that LeakSanitizer
     * (ASan builds) sees a clean exit. */
    free(t);
    cache_destroy(cs.cache);
    for (int i = 0; i < cs.ucache.n; i++)
        if (cs.ucache.items[i].free_value)
            cs.ucache.items[i].free_value(cs.ucache.items[i].value);
    nn_model_free(private_model);
    return cs.wrong ? EXIT_FAILED : EXIT_OK;
}

/* ---------------------------- parent ---------------------------- */

static int run_parent(const struct race_options *o, char **argv0) {
    long crashed = 0, wrong = 0, extra = 0, by_signal[65] = {0};
    unsigned long long total[4] = {0}; /* hits, misses, waits, failures of the safe cache */
    char delay[32];
    snprintf(delay, sizeof delay, "%lld", (long long)o->delay_us);
    char n[6][32];
    snprintf(n[0], sizeof n[0], "%lld", (long long)o->threads);
    snprintf(n[1], sizeof n[1], "%lld", (long long)o->size);
    snprintf(n[2], sizeof n[2], "%lld", (long long)o->iters);
    snprintf(n[3], sizeof n[3], "%lld", (long long)o->timeout);
    snprintf(n[4], sizeof n[4], "%lld", (long long)o->delay_us);
    char *child_argv[] = {argv0[0],
                          "race",
                          "--child",
                          "--threads",
                          n[0],
                          "--size",
                          n[1],
                          "--iters",
                          n[2],
                          "--timeout",
                          n[3],
                          "--delay-us",
                          n[4],
                          "--variant",
                          (char *)o->variant,
                          "--model",
                          (char *)o->model,
                          NULL};
    for (int64_t r = 0; r < o->runs; r++) {
        int pipefd[2];
        if (pipe(pipefd) != 0) {
            perror("convsel race: pipe");
            return EXIT_FAILED;
        }
        const pid_t pid = fork();
        if (pid == 0) {
            dup2(pipefd[1], STDOUT_FILENO);
            if (!o->verbose) { /* glibc's "double free" etc. would drown the tally */
                FILE *null = freopen("/dev/null", "w", stderr);
                (void)null;
            }
            close(pipefd[0]);
            close(pipefd[1]);
            setenv("CONVSEL_TEST_LOAD_DELAY_US", delay, 1);
            execv("/proc/self/exe", child_argv);
            _exit(127);
        }
        close(pipefd[1]);
        char line[256] = "";
        FILE *f = fdopen(pipefd[0], "r");
        if (f == NULL || fgets(line, sizeof line, f) == NULL)
            line[0] = '\0';
        if (f)
            fclose(f);
        int status = 0;
        waitpid(pid, &status, 0);
        long loads = 0, w = 0;
        unsigned long long st[4] = {0};
        const bool reported = sscanf(line,
                                     "child: loads=%ld wrong=%ld hits=%llu misses=%llu "
                                     "waits=%llu failures=%llu",
                                     &loads, &w, &st[0], &st[1], &st[2], &st[3]) == 6;
        for (int k = 0; reported && k < 4; k++)
            total[k] += st[k];
        if (WIFSIGNALED(status)) {
            crashed++;
            by_signal[WTERMSIG(status) < 65 ? WTERMSIG(status) : 0]++;
        } else if (!reported || WEXITSTATUS(status) > EXIT_FAILED) {
            crashed++;
            by_signal[0]++;
        } else {
            wrong += w > 0;
            extra += loads > 1 ? loads - 1 : 0;
        }
        if (isatty(STDERR_FILENO))
            fprintf(stderr, "\rrun %lld/%lld: crashed=%ld wrong=%ld", (long long)r + 1,
                    (long long)o->runs, crashed, wrong);
    }
    if (isatty(STDERR_FILENO))
        fprintf(stderr, "\n");
    for (int s = 0; s < 65; s++)
        if (by_signal[s])
            printf("  %ld run(s) ended by %s\n", by_signal[s],
                   s == 0 ? "an error exit" : strsignal(s));
    if (strcmp(o->variant, "safe") == 0)
        printf(
            "  model cache, summed over the runs: hits=%llu misses=%llu waits=%llu failures=%llu\n",
            total[0], total[1], total[2], total[3]);
    printf("race: variant=%s runs=%lld crashed=%ld wrong=%ld extra_loads=%ld\n", o->variant,
           (long long)o->runs, crashed, wrong, extra);
    return EXIT_OK;
}

int cmd_race(int argc, char **argv) {
    struct race_options o = {.runs = 10,
                             .threads = 2,
                             .delay_us = 0,
                             .size = 2048,
                             .iters = 1000,
                             .timeout = 600,
                             .variant = "safe",
                             .model = "../shared/miopen-ai-models/gfx942.tn.model"};
    const struct cli_flag flags[] = {
        {NULL, "--runs", CLI_INT, &o.runs, "N", "fresh processes to run (default 10)"},
        {NULL, "--threads", CLI_INT, &o.threads, "T", "threads per process (default 2)"},
        {NULL, "--variant", CLI_STRING, &o.variant, "safe|unguarded", "the cache (default safe)"},
        {NULL, "--delay-us", CLI_INT, &o.delay_us, "D", "sleep inside each load (default 0)"},
        {NULL, "--size", CLI_INT, &o.size, "H", "initial image size (default 2048)"},
        {NULL, "--iters", CLI_INT, &o.iters, "I", "iterations per thread (default 1000)"},
        {NULL, "--model", CLI_STRING, &o.model, "PATH",
         "model file (default ../shared/miopen-ai-models/gfx942.tn.model)"},
        {NULL, "--timeout", CLI_INT, &o.timeout, "S", "seconds before a child counts as hung"},
        {NULL, "--verbose", CLI_SWITCH, &o.verbose, "", "show the children's error output"},
        {NULL, "--child", CLI_SWITCH, &o.child, "", "(internal: run one trial in this process)"},
    };
    int rc = cli_parse("race", summary, argc, argv, flags, sizeof flags / sizeof flags[0]);
    if (rc != EXIT_OK)
        return rc < 0 ? EXIT_OK : rc;
    const char *bad = o.runs < 1                          ? "--runs must be >= 1"
                      : o.threads < 1 || o.threads > 1024 ? "--threads must be in 1..1024"
                      : o.delay_us < 0 || o.delay_us > 10000000
                          ? "--delay-us must be in 0..10000000"
                      : o.size < 2 || o.size > 16384       ? "--size must be in 2..16384"
                      : o.iters < 1 || o.iters >= o.size   ? "--iters must be in 1..size-1"
                      : o.timeout < 1 || o.timeout > 86400 ? "--timeout must be in 1..86400"
                      : strcmp(o.variant, "safe") != 0 && strcmp(o.variant, "unguarded") != 0
                          ? "--variant must be safe or unguarded"
                          : NULL;
    if (bad) {
        fprintf(stderr, "convsel race: %s\n", bad);
        return EXIT_USAGE;
    }
    if (access(o.model, R_OK) != 0) {
        fprintf(stderr, "convsel race: --model %s: cannot read the model file\n", o.model);
        return EXIT_USAGE;
    }
    if (o.child)
        return run_child(&o);
    struct nn_model *check; /* refuse a bad model once, not in every child */
    if ((rc = load_model(o.model, &check)) != EXIT_OK)
        return rc;
    nn_model_free(check);
    return run_parent(&o, argv - 1);
}
