/* stats.h -- order statistics of timing samples. */
#ifndef CONVSEL_UTIL_STATS_H
#define CONVSEL_UTIL_STATS_H

#include <stddef.h>

/* Sorts v[0..n) in place and returns its median (0 for n == 0). */
double stats_median(double *v, size_t n);

/* The q-quantile (0..1) of v[0..n), which must already be sorted. */
double stats_quantile_sorted(const double *v, size_t n, double q);

/* Orders ids[0..n) by time[ids[i]], fastest first; ties keep their
 * order. For a handful of solvers: an insertion sort. */
void stats_order_by_time(const double *time, int *ids, int n);

#endif /* CONVSEL_UTIL_STATS_H */
