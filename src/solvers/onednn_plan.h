/* onednn_plan.h -- one convolution set up in oneDNN 2.6: the primitive in
 * oneDNN's preferred layouts plus the reorders from and to the caller's
 * NCHW/NHWC tensors. Used by the oneDNN-backed solvers (a plan per call)
 * and by `convsel bench` for its onednn-auto baseline. */
#ifndef CONVSEL_SOLVERS_ONEDNN_PLAN_H
#define CONVSEL_SOLVERS_ONEDNN_PLAN_H

#include "core/problem.h"

/* DIRECT, WINOGRAD, AUTO: oneDNN's algorithms in the layouts it prefers
 * (reorders around them). GEMM: direct convolution with every tensor in
 * the caller's plain layout, which oneDNN runs as im2col + its own JIT
 * GEMM: no reorders, no weight packing (a plan that would fall to oneDNN's
 * reference code is refused). */
enum onednn_alg { ONEDNN_DIRECT, ONEDNN_WINOGRAD, ONEDNN_AUTO, ONEDNN_GEMM };

struct onednn_plan;

/* Whether oneDNN runs p with alg, reorders included, asked of oneDNN itself
 * (20-190 us a question). The solvers decide from the shape instead;
 * tests/test_onednn_applicability.c holds their rules to this answer. */
bool onednn_implements(const struct conv_problem *p, enum onednn_alg alg);

/* Whether oneDNN's direct algorithm would run p through its GEMM
 * implementation (x64:gemm:jit) rather than a direct kernel: in NCHW/KCRS
 * that is onednn_gemm's kernel, which onednn_direct's shape rule refuses
 * to duplicate (tests/test_onednn_applicability.c holds the rule to this). */
bool onednn_direct_runs_gemm(const struct conv_problem *p);

/* Sets p up for num_threads OpenMP threads; NULL when oneDNN cannot run p
 * (or on allocation failure). oneDNN fixes a primitive's thread count when
 * it creates it (from omp_get_max_threads), not when it runs: a plan made
 * for 2 threads runs on 2 whatever onednn_plan_run is told, so a plan must
 * be run with the count it was made for. */
struct onednn_plan *onednn_plan_create(const struct conv_problem *p, enum onednn_alg alg,
                                       int num_threads);

/* y = conv(x, w) with num_threads OpenMP threads (set for the calling
 * thread only): reorders in, convolution, reorder out. With
 * weights_constant the weights reordered into oneDNN's layout are kept and
 * reused while w is the same address (the caller promises its data does not
 * change); otherwise they are reordered on every run. */
convsel_status_t onednn_plan_run(struct onednn_plan *plan, const float *x, const float *w, float *y,
                                 int num_threads, bool weights_constant);

/* oneDNN's name for the implementation it chose, e.g. "brgconv:avx512_core". */
const char *onednn_plan_impl(const struct onednn_plan *plan);

/* The memory the plan holds: its blocked buffers (what the plan cache counts). */
size_t onednn_plan_bytes(const struct onednn_plan *plan);

void onednn_plan_destroy(struct onednn_plan *plan);

#endif
