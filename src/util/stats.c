/* stats.c -- medians, quantiles and orderings of timings. */
#include "util/stats.h"

#include <stdlib.h>

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double stats_quantile_sorted(const double *v, size_t n, double q) {
    if (n == 0)
        return 0.0;
    const double pos = q * (double)(n - 1);
    const size_t lo = (size_t)pos;
    const size_t hi = lo + 1 < n ? lo + 1 : lo;
    const double frac = pos - (double)lo;
    return v[lo] * (1.0 - frac) + v[hi] * frac;
}

double stats_median(double *v, size_t n) {
    qsort(v, n, sizeof *v, cmp_double);
    return stats_quantile_sorted(v, n, 0.5);
}

void stats_order_by_time(const double *time, int *ids, int n) {
    for (int a = 1; a < n; a++)
        for (int b = a; b > 0 && time[ids[b]] < time[ids[b - 1]]; b--) {
            const int t = ids[b];
            ids[b] = ids[b - 1], ids[b - 1] = t;
        }
}
