/* verify.c -- see verify.h for the metric and why. */
#include "core/verify.h"

#include <math.h>

struct verify_result verify_compare(const float *y, const float *ref, size_t count) {
    struct verify_result r = {0};
    for (size_t i = 0; i < count; i++) {
        const double a = y[i], b = ref[i];
        if (!isfinite(a) && isfinite(b)) {
            r.nonfinite++;
            continue;
        }
        const double err = fabs(a - b);
        if (err > r.max_abs_error) {
            r.max_abs_error = err;
            r.worst_index = i;
        }
        if (fabs(b) > r.max_ref)
            r.max_ref = fabs(b);
    }
    r.rel_error = r.max_ref > 0 ? r.max_abs_error / r.max_ref : r.max_abs_error;
    return r;
}

bool verify_passes(const struct verify_result *r, double tolerance) {
    return r->nonfinite == 0 && r->rel_error <= tolerance;
}
