/* bench_model.c -- load and prediction times of a model file, one thread.
 * Prints the median and the 10th/90th percentiles of each so a noisy run is
 * visible as spread.
 *   build/bench_model MODEL [LOADS] [PREDICTIONS] */
#include <stdio.h>
#include <stdlib.h>

#include "nn/model.h"
#include "util/clock.h"
#include "util/stats.h"

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: bench_model MODEL [LOADS=20] [PREDICTIONS=20000]\n");
        return 2;
    }
    const int loads = argc > 2 ? atoi(argv[2]) : 20, preds = argc > 3 ? atoi(argv[3]) : 20000;
    if (loads < 1 || preds < 1) {
        fprintf(stderr, "bench_model: LOADS and PREDICTIONS must be >= 1\n");
        return 2;
    }
    double *lt = malloc((size_t)loads * sizeof *lt), *pt = malloc((size_t)preds * sizeof *pt);
    struct nn_model *m = NULL;
    char err[NN_ERROR_MAX];
    for (int i = 0; i < loads; i++) {
        nn_model_free(m);
        const int64_t t0 = clock_now_ns();
        if (nn_model_load_file(argv[1], NULL, &m, err, sizeof err) != NN_OK) {
            fprintf(stderr, "bench_model: %s\n", err);
            return 1;
        }
        lt[i] = (double)(clock_now_ns() - t0) * 1e-6;
    }
    const size_t n_in = nn_model_num_inputs(m), n_out = nn_model_num_outputs(m);
    float **in = calloc(n_in, sizeof *in), **out = calloc(n_out, sizeof *out);
    for (size_t i = 0; i < n_in; i++)
        in[i] = calloc(nn_shape_volume(nn_model_input_shape(m, i)), sizeof(float));
    for (size_t i = 0; i < n_out; i++)
        out[i] = calloc(nn_shape_volume(nn_model_output_shape(m, i)), sizeof(float));
    void *scratch = malloc(nn_model_scratch_bytes(m));
    for (int i = -100; i < preds; i++) {
        const int64_t t0 = clock_now_ns();
        nn_model_predict(m, (const float *const *)in, out, scratch, nn_model_scratch_bytes(m), NULL,
                         0);
        if (i >= 0)
            pt[i] = (double)(clock_now_ns() - t0) * 1e-3;
    }
    stats_median(lt, (size_t)loads);
    stats_median(pt, (size_t)preds);
    printf("%s: %zu params\n", argv[1], nn_model_param_count(m));
    printf("  load     median %8.2f ms   p10 %8.2f   p90 %8.2f   (%d loads)\n",
           stats_quantile_sorted(lt, (size_t)loads, 0.5),
           stats_quantile_sorted(lt, (size_t)loads, 0.1),
           stats_quantile_sorted(lt, (size_t)loads, 0.9), loads);
    printf("  predict  median %8.2f us   p10 %8.2f   p90 %8.2f   (%d predictions)\n",
           stats_quantile_sorted(pt, (size_t)preds, 0.5),
           stats_quantile_sorted(pt, (size_t)preds, 0.1),
           stats_quantile_sorted(pt, (size_t)preds, 0.9), preds);
    return 0;
}
