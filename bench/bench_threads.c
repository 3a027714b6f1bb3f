/* bench_threads.c -- the scenario that exposed MIOpen's bug, for speed:
 * U user threads, each with its own handle, run the same convolution at
 * once, with T solver threads per handle, for solvers on two threading
 * models: depthwise and im2col_gemm (convsel's pool, which spins briefly
 * and then sleeps: CONVSEL_POOL_SPIN_US), onednn_direct (OpenMP). A
 * spin-waiting runtime on two shared cores shows up as 2 users x 2 threads
 * being far slower than 2 x 1.
 * Prints the per-call latency (ms): median, p90 and min over all calls.
 *   build/bench_threads [CALLS=20] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convsel/convsel.h"
#include "util/clock.h"
#include "util/rng.h"
#include "util/stats.h"

struct config {
    const char *solver;
    int64_t n, c, hw, k, f, pad, groups;
};

static const struct config configs[] = {
    {"depthwise", 1, 32, 112, 32, 3, 1, 32},   /* mnv2_dw32_112 */
    {"im2col_gemm", 1, 64, 56, 64, 3, 1, 1},   /* rn50_res2_3x3 */
    {"onednn_direct", 1, 64, 56, 64, 3, 1, 1}, /* rn50_res2_3x3 */
};

struct user {
    const struct config *cfg;
    int threads, calls;
    pthread_barrier_t *start;
    double *samples;
};

static void *user_main(void *arg) {
    struct user *u = arg;
    const struct config *c = u->cfg;
    convsel_handle_t h;
    convsel_tensor_desc_t xd, yd;
    convsel_filter_desc_t wd;
    convsel_conv_desc_t cd;
    convsel_handle_create(&h);
    convsel_set_num_threads(h, u->threads);
    convsel_tensor_desc_create(&xd);
    convsel_tensor_desc_create(&yd);
    convsel_filter_desc_create(&wd);
    convsel_conv_desc_create(&cd);
    convsel_tensor_desc_set_4d(xd, CONVSEL_LAYOUT_NCHW, c->n, c->c, c->hw, c->hw);
    convsel_filter_desc_set(wd, CONVSEL_FILTER_KCRS, c->k, c->c / c->groups, c->f, c->f);
    convsel_conv_desc_set(cd, c->pad, c->pad, 1, 1, 1, 1, c->groups);
    int64_t n, k, oh, ow;
    convsel_get_conv_output_shape(h, xd, wd, cd, &n, &k, &oh, &ow);
    convsel_tensor_desc_set_4d(yd, CONVSEL_LAYOUT_NCHW, n, k, oh, ow);
    convsel_solver_id_t id;
    convsel_solver_find(h, c->solver, &id);
    size_t ws = 0;
    convsel_get_forward_workspace_size(h, id, xd, wd, cd, yd, &ws);
    const size_t xn = (size_t)(c->n * c->c * c->hw * c->hw),
                 wn = (size_t)(c->k * c->c / c->groups * c->f * c->f);
    float *x = malloc(xn * sizeof *x), *w = malloc(wn * sizeof *w),
          *y = malloc((size_t)(n * k * oh * ow) * sizeof *y);
    void *work = ws ? malloc(ws) : NULL;
    struct rng g = rng_seed(1);
    rng_fill(&g, x, xn);
    rng_fill(&g, w, wn);
    convsel_convolution_forward(h, id, xd, x, wd, w, cd, yd, y, work, ws); /* warm-up */
    pthread_barrier_wait(u->start);
    for (int i = 0; i < u->calls; i++) {
        const int64_t t0 = clock_now_ns();
        convsel_convolution_forward(h, id, xd, x, wd, w, cd, yd, y, work, ws);
        u->samples[i] = (double)(clock_now_ns() - t0) * 1e-6;
    }
    free(x), free(w), free(y), free(work);
    convsel_tensor_desc_destroy(xd);
    convsel_tensor_desc_destroy(yd);
    convsel_filter_desc_destroy(wd);
    convsel_conv_desc_destroy(cd);
    convsel_handle_destroy(h);
    return NULL;
}

/* Runs `users` concurrent users once; their per-call times go to samples. */
static void measure(const struct config *c, int users, int threads, int calls, double *samples) {
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)users);
    struct user u[2];
    pthread_t t[2];
    for (int i = 0; i < users; i++) {
        u[i] = (struct user){c, threads, calls, &start, samples + i * calls};
        pthread_create(&t[i], NULL, user_main, &u[i]);
    }
    for (int i = 0; i < users; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&start);
}

#define ROUNDS 5

int main(int argc, char **argv) {
    const int calls = argc > 1 ? atoi(argv[1]) : 20;
    if (calls < 1 || calls > 100000) {
        fprintf(stderr, "usage: bench_threads [CALLS=20]\n");
        return 2;
    }
    printf(
        "per-call latency, ms: median/p90/min over all calls of all users; the 4 configurations\n"
        "take turns for %d rounds of %d calls per user (a shared machine: interleaving keeps a\n"
        "burst of outside load from landing on one configuration)\n",
        ROUNDS, calls);
    printf("%-15s %20s %20s %20s %20s\n", "solver", "1 user x 1 thr", "1 user x 2 thr",
           "2 users x 1 thr", "2 users x 2 thr");
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) {
        char cell[4][32];
        const int users[4] = {1, 1, 2, 2}, threads[4] = {1, 2, 1, 2};
        double *samples[4];
        for (int m = 0; m < 4; m++)
            samples[m] = malloc((size_t)(ROUNDS * 2 * calls) * sizeof(double));
        for (int r = 0; r < ROUNDS; r++)
            for (int m = 0; m < 4; m++)
                measure(&configs[i], users[m], threads[m], calls,
                        samples[m] + (size_t)(r * users[m] * calls));
        for (int m = 0; m < 4; m++) {
            const size_t n = (size_t)(ROUNDS * users[m] * calls);
            const double med = stats_median(samples[m], n);
            snprintf(cell[m], sizeof cell[m], "%.3f/%.3f/%.3f", med,
                     stats_quantile_sorted(samples[m], n, 0.9), samples[m][0]);
            free(samples[m]);
        }
        printf("%-15s %20s %20s %20s %20s\n", configs[i].solver, cell[0], cell[1], cell[2],
               cell[3]);
        fflush(stdout);
    }
    return 0;
}
