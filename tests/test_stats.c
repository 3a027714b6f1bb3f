/* test_stats.c -- the order statistics behind find, bench and rankings:
 * medians and quantiles of timings, and solvers ordered by time (stable,
 * so equal predictions keep the registry's order). */
#include <math.h>
#include <stdio.h>

#include "testutil.h"
#include "util/stats.h"

int main(void) {
    double v[5] = {5, 1, 4, 2, 3};
    CHECK(stats_median(v, 5) == 3 && v[0] == 1 && v[4] == 5); /* sorted in place */
    CHECK(stats_median(v, 0) == 0);
    CHECK(fabs(stats_quantile_sorted(v, 5, 0.25) - 2) < 1e-12);
    CHECK(fabs(stats_quantile_sorted(v, 5, 0.9) - 4.6) < 1e-12);

    /* times by solver id; ids 1 and 4 tie, and 4 comes first in ids[] */
    const double time[6] = {9, 2, -1, 0.5, 2, 7};
    int ids[5] = {0, 4, 1, 3, 5};
    stats_order_by_time(time, ids, 5);
    CHECK(ids[0] == 3 && ids[1] == 4 && ids[2] == 1 && ids[3] == 5 && ids[4] == 0);
    int one[1] = {2};
    stats_order_by_time(time, one, 1);
    CHECK(one[0] == 2);
    stats_order_by_time(time, NULL, 0); /* nothing to order */
    return test_finish("test_stats");
}
