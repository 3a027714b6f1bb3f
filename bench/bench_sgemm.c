/* bench_sgemm.c -- single-precision GEMM from every source this machine
 * has, side by side in one run: convsel's own (kernels/sgemm.c), oneDNN's
 * dnnl_sgemm (linked), BLIS 0.9 and OpenBLAS (each opened with dlopen,
 * RTLD_LOCAL, so their cblas_sgemm symbols do not clash), and libxsmm 1.17
 * where the build found it (Debian ships it as static libraries only:
 * linked, libxsmm_xgemm_omp, its OpenMP-tiled GEMM over its JIT kernels;
 * column-major, so it computes C^T = B^T A^T). Shapes: the
 * GEMMs convsel's im2col and 1x1 solvers issue for the problems of a CSV
 * (M = output channels per group, N = output pixels, K = input channels
 * per group x filter taps), plus 1024^3 and 2048^3. Row-major C = A * B.
 *
 * Method: every source runs each shape once to warm up, then the sources
 * take turns (interleaved rounds, a new order each round) for at least
 * 5 rounds and 0.3 s per shape; medians and the max/min spread. The FMA
 * peak is measured at the start and the end of the run on the same threads
 * (util/peak.c) and every figure is also given as a share of it. Outputs
 * are compared with convsel's (max relative error).
 *
 *   build/bench_sgemm [--threads T] [--problems CSV] [--rounds R]
 *                     [--splits | --blocking KC:MC[:W][,KC:MC[:W]...]]
 *
 * --splits: instead of the libraries, convsel's GEMM with each way of
 * sharing C out among the threads forced (columns, rows, depth: sgemm.h)
 * beside its own choice, interleaved the same way: the A/B run that
 * chooses between them.
 *
 * --blocking: instead of the libraries, convsel's GEMM with its kernel's
 * own blocking beside copies of the kernel with each depth block KC and
 * A block of MC rows given (up to four), and with narrow tiles up to W
 * columns wide (0: none; sgemm.h), interleaved the same way.
 *
 * The libraries use their own threads, and three threaded runtimes taking
 * turns on two cores collapse when any of them spins after its call
 * (medians of 1-3 GFLOP/s for BLIS were measured so): the program re-runs
 * itself with OMP_WAIT_POLICY=PASSIVE (oneDNN's OpenMP team sleeps) and
 * OPENBLAS_THREAD_TIMEOUT=4 (OpenBLAS's threads sleep after ~16 cycles)
 * unless they are set. OpenBLAS honours OPENBLAS_CORETYPE (this
 * environment pins Haswell; unset it in the command to let it pick its
 * AVX-512 kernels), BLIS BLIS_ARCH_TYPE (it does not recognise Zen 5 and
 * runs generic kernels; 0 forces skx), BLIS_NUM_THREADS and
 * OMP_NUM_THREADS are set to T (OMP_NUM_THREADS before the re-run: set
 * after libgomp had loaded, it was ignored, and oneDNN ran on every core
 * with --threads 1). */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dnnl.h"
#ifdef CONVSEL_HAVE_LIBXSMM
#include <libxsmm.h>
#endif
#include "solvers/kernels/sgemm.h"
#include "tune/problem_list.h"
#include "util/clock.h"
#include "util/peak.h"
#include "util/rng.h"
#include "util/stats.h"

enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111 };
typedef void (*cblas_sgemm_fn)(int, int, int, int, int, int, float, const float *, int,
                               const float *, int, float, float *, int);

#define MAX_SOURCES 5 /* convsel, oneDNN, libxsmm, BLIS, OpenBLAS; or convsel's 4 splits */

struct source {
    const char *name;
    cblas_sgemm_fn cblas;       /* for the dlopen'ed libraries */
    int kind;                   /* 0 convsel, 1 dnnl, 2 cblas, 3 libxsmm */
    enum sgemm_split split;     /* convsel: forced, or AUTO */
    struct sgemm_kernel kernel; /* convsel with --blocking: this kernel's copy, reblocked */
    double t[64];
    int runs;
};

struct shape {
    size_t m, n, k;
};

static void run(struct source *s, const struct shape *sh, const float *a, const float *b, float *c,
                struct thread_pool *pool) {
    const int m = (int)sh->m, n = (int)sh->n, k = (int)sh->k;
    if (s->kind == 0) {
        const struct sgemm_op op = {.kernel = s->kernel.ukernel ? &s->kernel : NULL,
                                    .m = sh->m,
                                    .n = sh->n,
                                    .k = sh->k,
                                    .a = {.matrix = a, .ld = sh->k},
                                    .b = {.matrix = b, .ld = sh->n},
                                    .c = c,
                                    .ldc = sh->n,
                                    .split = s->split};
        sgemm_run(&op, pool);
    } else if (s->kind == 1) {
        dnnl_sgemm('N', 'N', m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
    } else if (s->kind == 3) {
#ifdef CONVSEL_HAVE_LIBXSMM
        const libxsmm_blasint xm = n, xn = m, xk = k; /* column-major: C^T = B^T A^T */
        const float one = 1.0f, zero = 0.0f;
        libxsmm_sgemm_omp("N", "N", &xm, &xn, &xk, &one, b, &xm, a, &xk, &zero, c, &xm);
#endif
    } else {
        s->cblas(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_NO_TRANS, m, n, k, 1.0f, a, k, b, n, 0.0f,
                 c, n);
    }
}

static cblas_sgemm_fn open_cblas(const char *lib, const char *threads_fn, int threads,
                                 const char **note) {
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (h == NULL) {
        *note = dlerror();
        return NULL;
    }
    void (*set_threads)(int) = (void (*)(int))dlsym(h, threads_fn);
    if (set_threads)
        set_threads(threads);
    return (cblas_sgemm_fn)dlsym(h, "cblas_sgemm");
}

static void add_shape(struct shape *v, int *n, size_t m, size_t cols, size_t k) {
    for (int i = 0; i < *n; i++)
        if (v[i].m == m && v[i].n == cols && v[i].k == k)
            return;
    if (*n < 64)
        v[(*n)++] = (struct shape){m, cols, k};
}

int main(int argc, char **argv) {
    int threads = 2, rounds = 5;
    const char *problems = NULL, *blocking = NULL;
    bool splits = false, bad = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--splits") == 0)
            splits = true;
        else if (i + 1 < argc && strcmp(argv[i], "--threads") == 0)
            threads = atoi(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--problems") == 0)
            problems = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--rounds") == 0)
            rounds = atoi(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--blocking") == 0)
            blocking = argv[++i];
        else
            bad = true;
    }
    if (bad || threads < 1 || threads > 256 || rounds < 1 || rounds > 64 || (splits && blocking)) {
        fprintf(stderr, "usage: bench_sgemm [--threads T] [--problems CSV] [--rounds 1..64] "
                        "[--splits | --blocking KC:MC[:W][,KC:MC[:W]...]]\n");
        return 2;
    }
    char env[32];
    snprintf(env, sizeof env, "%d", threads);
    /* libgomp reads its variables when it loads: they are set, and the
     * program re-run, before oneDNN's first parallel region. */
    const char *omp = getenv("OMP_NUM_THREADS");
    if (getenv("OMP_WAIT_POLICY") == NULL || getenv("OPENBLAS_THREAD_TIMEOUT") == NULL ||
        omp == NULL || strcmp(omp, env) != 0) {
        setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
        setenv("OPENBLAS_THREAD_TIMEOUT", "4", 0);
        setenv("OMP_NUM_THREADS", env, 1);
        execv("/proc/self/exe", argv);
        perror("bench_sgemm: re-running with the runtimes' variables");
    }
    setenv("BLIS_NUM_THREADS", env, 1);
    struct shape shapes[64];
    int n_shapes = 0;
    if (problems) {
        struct problem_list list = {0};
        char err[PROBLEM_LIST_ERROR_MAX];
        if (!problem_list_read(problems, &list, err, sizeof err)) {
            fprintf(stderr, "bench_sgemm: %s\n", err);
            return 2;
        }
        for (int i = 0; i < list.n; i++) {
            const struct conv_problem *p = &list.rows[i].p;
            if (p->groups == p->c && p->groups > 1)
                continue; /* depthwise: not a GEMM in any solver that wins it */
            add_shape(shapes, &n_shapes, (size_t)(p->k / p->groups), (size_t)(p->oh * p->ow),
                      (size_t)(p->c / p->groups * p->r * p->s));
        }
        problem_list_free(&list);
    } else {
        const size_t dflt[][3] = {{64, 3136, 576}, {64, 3136, 64},   {256, 3136, 64},
                                  {512, 784, 256}, {128, 784, 1152}, {1024, 196, 256},
                                  {512, 49, 2048}, {256, 196, 2304}, {32, 12544, 27}};
        for (size_t i = 0; i < sizeof dflt / sizeof dflt[0]; i++)
            add_shape(shapes, &n_shapes, dflt[i][0], dflt[i][1], dflt[i][2]);
    }
    add_shape(shapes, &n_shapes, 1024, 1024, 1024);
    add_shape(shapes, &n_shapes, 2048, 2048, 2048);

    struct source src[MAX_SOURCES] = {{.name = "convsel", .kind = 0},
                                      {.name = "onednn", .kind = 1}};
    int n_src = 2;
    if (splits) {
        src[1] = (struct source){.name = "columns", .split = SGEMM_SPLIT_COLUMNS};
        src[2] = (struct source){.name = "rows", .split = SGEMM_SPLIT_ROWS};
        src[3] = (struct source){.name = "depth", .split = SGEMM_SPLIT_DEPTH};
        n_src = 4;
    }
    static char names[MAX_SOURCES][24];
    if (blocking) { /* convsel's kernel with its own blocking, then each KC:MC given */
        n_src = 1;
        for (const char *at = blocking; *at && n_src < MAX_SOURCES;) {
            char *end;
            const unsigned long kc = strtoul(at, &end, 10);
            const unsigned long mc = *end == ':' ? strtoul(end + 1, &end, 10) : 0;
            struct sgemm_kernel kn = *sgemm_kernel_best();
            const bool has_narrow = *end == ':';
            const unsigned long narrow = has_narrow ? strtoul(end + 1, &end, 10) : kn.narrow_max;
            if (kc < 1 || kc > 4096 || mc < kn.mr || mc > 4096 || mc % kn.mr != 0 ||
                narrow > kn.narrow_max || (*end != ',' && *end != '\0')) {
                fprintf(stderr,
                        "bench_sgemm: --blocking wants KC:MC[:W] (KC 1..4096, MC a multiple of "
                        "%zu up to 4096, W narrow tiles up to 0..%zu columns wide) (at \"%s\")\n",
                        kn.mr, kn.narrow_max, at);
                return 2;
            }
            kn.kc = kc, kn.mc = mc, kn.narrow_max = narrow;
            if (has_narrow)
                snprintf(names[n_src], sizeof names[n_src], "%lu:%lu:%lu", kc, mc, narrow);
            else
                snprintf(names[n_src], sizeof names[n_src], "kc%lu:mc%lu", kc, mc);
            src[n_src] = (struct source){.name = names[n_src], .kernel = kn};
            n_src++;
            at = *end ? end + 1 : end;
        }
    }
#ifdef CONVSEL_HAVE_LIBXSMM
    if (!splits && !blocking) {
        libxsmm_init();
        src[n_src++] = (struct source){.name = "libxsmm", .kind = 3};
    }
#else
    printf("libxsmm: not available (not found when this was built: apt install libxsmm-dev)\n");
#endif
    const char *libs[2][3] = {{"blis", "libblis.so.4", "bli_thread_set_num_threads"},
                              {"openblas", "libopenblas.so.0", "openblas_set_num_threads"}};
    for (int l = 0; l < 2 && !splits && !blocking; l++) {
        const char *note = "";
        const cblas_sgemm_fn fn = open_cblas(libs[l][1], libs[l][2], threads, &note);
        if (fn)
            src[n_src++] = (struct source){.name = libs[l][0], .cblas = fn, .kind = 2};
        else
            printf("%s: not available (%s)\n", libs[l][0], note);
    }
    struct thread_pool *pool = threads > 1 ? thread_pool_create(threads) : NULL;
    const double peak0 = peak_gflops(threads);
    printf("%d threads; FMA peak %.1f GFLOP/s (start of run); OPENBLAS_CORETYPE=%s "
           "BLIS_ARCH_TYPE=%s OMP_WAIT_POLICY=%s OPENBLAS_THREAD_TIMEOUT=%s\n",
           threads, peak0, getenv("OPENBLAS_CORETYPE") ? getenv("OPENBLAS_CORETYPE") : "(unset)",
           getenv("BLIS_ARCH_TYPE") ? getenv("BLIS_ARCH_TYPE") : "(unset)",
           getenv("OMP_WAIT_POLICY"), getenv("OPENBLAS_THREAD_TIMEOUT"));
    printf("%6s %6s %6s", "M", "N", "K");
    for (int s = 0; s < n_src; s++)
        printf(" %17s", src[s].name);
    printf("   (GFLOP/s median, %% of peak, spread max/min)\n");
    struct rng g = rng_seed(1);
    double log_share[MAX_SOURCES] = {0};
    int conv_shapes = 0;
    for (int i = 0; i < n_shapes; i++) {
        const struct shape *sh = &shapes[i];
        float *a = malloc(sh->m * sh->k * sizeof *a), *b = malloc(sh->k * sh->n * sizeof *b);
        float *c = malloc(sh->m * sh->n * sizeof *c), *ref = malloc(sh->m * sh->n * sizeof *c);
        rng_fill(&g, a, sh->m * sh->k);
        rng_fill(&g, b, sh->k * sh->n);
        double err[MAX_SOURCES] = {0};
        run(&src[0], sh, a, b, ref, pool);
        for (int s = 0; s < n_src; s++) { /* warm up, and compare */
            src[s].runs = 0;
            run(&src[s], sh, a, b, c, pool);
            double worst = 0, scale = 0;
            for (size_t e = 0; e < sh->m * sh->n; e++) {
                worst = fmax(worst, fabs((double)c[e] - ref[e]));
                scale = fmax(scale, fabs((double)ref[e]));
            }
            err[s] = scale > 0 ? worst / scale : worst;
        }
        int order[MAX_SOURCES];
        for (int s = 0; s < MAX_SOURCES; s++)
            order[s] = s;
        const int64_t start = clock_now_ns();
        for (int r = 0; r < 64; r++) {
            rng_shuffle(&g, order, n_src);
            for (int j = 0; j < n_src; j++) {
                struct source *s = &src[order[j]];
                const int64_t t0 = clock_now_ns();
                run(s, sh, a, b, c, pool);
                s->t[s->runs++] = (double)(clock_now_ns() - t0) * 1e-9;
            }
            if (r + 1 >= rounds && clock_now_ns() - start > 300000000LL)
                break;
        }
        const double flop = 2.0 * (double)sh->m * (double)sh->n * (double)sh->k;
        printf("%6zu %6zu %6zu", sh->m, sh->n, sh->k);
        const bool square = sh->m == sh->n && sh->n == sh->k && sh->m >= 1024;
        conv_shapes += !square;
        for (int s = 0; s < n_src; s++) {
            const double med = stats_median(src[s].t, (size_t)src[s].runs);
            const double gf = flop / med * 1e-9;
            printf(" %6.1f %3.0f%% %5.2f", gf, 100 * gf / peak0,
                   src[s].t[src[s].runs - 1] / src[s].t[0]);
            if (!square)
                log_share[s] += log(gf / peak0);
            if (err[s] > 1e-4)
                printf("!");
        }
        printf("\n");
        fflush(stdout);
        free(a), free(b), free(c), free(ref);
    }
    const double peak1 = peak_gflops(threads);
    printf("FMA peak at the end of the run: %.1f GFLOP/s\n", peak1);
    for (int s = 0; s < n_src; s++)
        printf("geomean share of peak over the %d conv shapes: %-9s %.1f%%\n", conv_shapes,
               src[s].name, 100 * exp(log_share[s] / (conv_shapes ? conv_shapes : 1)));
    thread_pool_destroy(pool);
    return 0;
}
