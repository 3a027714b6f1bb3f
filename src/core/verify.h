/* verify.h -- comparison of a solver's output with the reference output.
 *
 * The metric is max|y - ref| / max|ref| over the whole output tensor: the
 * error relative to the output's scale. Per-element relative error is
 * meaningless where ref is near zero, which happens constantly in a
 * convolution of random data. */
#ifndef CONVSEL_CORE_VERIFY_H
#define CONVSEL_CORE_VERIFY_H

#include <stdbool.h>
#include <stddef.h>

struct verify_result {
    double max_abs_error; /* max |y - ref| */
    double max_ref;       /* max |ref| */
    double rel_error;     /* max_abs_error / max_ref (max_abs_error when max_ref is 0) */
    size_t worst_index;   /* where max_abs_error occurs */
    size_t nonfinite;     /* elements of y that are NaN or Inf where ref is finite */
};

/* Compares count elements of y and ref. */
struct verify_result verify_compare(const float *y, const float *ref, size_t count);

/* True when r is within tolerance (and has no non-finite element). */
bool verify_passes(const struct verify_result *r, double tolerance);

#endif /* CONVSEL_CORE_VERIFY_H */
