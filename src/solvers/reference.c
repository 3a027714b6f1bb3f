/* reference.c -- the oracle: a plain direct convolution that every other
 * solver is verified against.
 *
 * It is written to be obviously correct, not fast: one output element at a
 * time, the definition of cross-correlation from convsel.h spelled out,
 * accumulation in double, every tensor addressed through its strides so it
 * handles any layout, stride, padding, dilation and group count.
 */
#include "solvers/solver.h"

static bool is_applicable(const struct conv_problem *p, const char **reason) {
    (void)p;
    (void)reason;
    return true;
}

static size_t workspace_size(const struct conv_problem *p) {
    (void)p;
    return 0;
}

static convsel_status_t run(const struct conv_run_args *a) {
    const struct conv_problem *p = a->p;
    const int64_t cg = p->c / p->groups; /* input channels per group */
    const int64_t kg = p->k / p->groups; /* output channels per group */
    const int64_t *xs = p->x_stride, *ys = p->y_stride;

    for (int64_t n = 0; n < p->n; n++)
        for (int64_t k = 0; k < p->k; k++) {
            const int64_t g = k / kg;
            for (int64_t oy = 0; oy < p->oh; oy++)
                for (int64_t ox = 0; ox < p->ow; ox++) {
                    double acc = 0.0;
                    for (int64_t c = 0; c < cg; c++)
                        for (int64_t r = 0; r < p->r; r++) {
                            const int64_t iy = oy * p->stride_h - p->pad_h + r * p->dil_h;
                            if (iy < 0 || iy >= p->h)
                                continue;
                            for (int64_t s = 0; s < p->s; s++) {
                                const int64_t ix = ox * p->stride_w - p->pad_w + s * p->dil_w;
                                if (ix < 0 || ix >= p->w)
                                    continue;
                                const float xv = a->x[n * xs[DIM_N] + (g * cg + c) * xs[DIM_C] +
                                                      iy * xs[DIM_H] + ix * xs[DIM_W]];
                                const float wv = a->w[problem_filter_offset(p, k, c, r, s)];
                                acc += (double)xv * (double)wv;
                            }
                        }
                    a->y[n * ys[DIM_N] + k * ys[DIM_C] + oy * ys[DIM_H] + ox * ys[DIM_W]] =
                        (float)acc;
                }
        }
    return CONVSEL_STATUS_SUCCESS;
}

const struct solver solver_reference = {
    .name = "reference",
    .description = "direct convolution, double accumulation: the oracle",
    /* Only the final rounding to float separates it from exact arithmetic. */
    .tolerance = 1e-6,
    .is_applicable = is_applicable,
    .workspace_size = workspace_size,
    .run = run,
};
