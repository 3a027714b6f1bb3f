/* registry.c -- the ordered list of solvers. A solver's id is its index
 * here. The order is the order of preference when nothing better is known
 * (see src/heur/fallback.c); the reference solver comes last. */
#include <string.h>

#include "solvers/solver.h"

extern const struct solver solver_depthwise;
extern const struct solver solver_direct;
extern const struct solver solver_direct_blocked;
extern const struct solver solver_gemm_1x1;
extern const struct solver solver_gemm_1x1_strided;
extern const struct solver solver_grouped_gemm;
extern const struct solver solver_im2col_gemm;
extern const struct solver solver_onednn_direct;
extern const struct solver solver_onednn_gemm;
extern const struct solver solver_onednn_winograd;
extern const struct solver solver_reference;
extern const struct solver solver_winograd_f4x3;

/* One solver per line, in order of preference. */
// clang-format off
static const struct solver *const registry[] = {
    &solver_depthwise,
    &solver_gemm_1x1,
    &solver_gemm_1x1_strided,
    &solver_winograd_f4x3,
    &solver_grouped_gemm,
    &solver_im2col_gemm,
    &solver_direct_blocked,
    &solver_direct,
    &solver_onednn_direct,
    &solver_onednn_winograd,
    &solver_onednn_gemm,
    &solver_reference,
};
// clang-format on

_Static_assert(sizeof registry / sizeof registry[0] <= SOLVER_MAX, "raise SOLVER_MAX");

int solver_count(void) {
    return (int)(sizeof registry / sizeof registry[0]);
}

const struct solver *solver_get(int id) {
    if (id < 0 || id >= solver_count())
        return NULL;
    return registry[id];
}

int solver_find(const char *name) {
    if (name == NULL)
        return -1;
    for (int i = 0; i < solver_count(); i++)
        if (strcmp(registry[i]->name, name) == 0)
            return i;
    return -1;
}

int solver_reference_id(void) {
    return solver_find("reference");
}
