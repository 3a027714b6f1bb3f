/* forward.c -- the public calls that take a problem from descriptors to a
 * solver: shape and key queries, solver lookup, workspace, forward. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "api/descriptors.h"
#include "api/handle.h"
#include "api/hybrid.h"
#include "heur/select.h"
#include "solvers/solver.h"

convsel_status_t convsel_get_conv_output_shape(convsel_handle_t h, const_convsel_tensor_desc_t x,
                                               const_convsel_filter_desc_t w,
                                               const_convsel_conv_desc_t conv, int64_t *n_out,
                                               int64_t *k_out, int64_t *oh_out, int64_t *ow_out) {
    if (h == NULL)
        return CONVSEL_STATUS_BAD_PARAM;
    struct conv_problem p;
    convsel_status_t st = problem_from_descriptors(h, x, w, conv, NULL, &p);
    if (st != CONVSEL_STATUS_SUCCESS)
        return st;
    if (n_out)
        *n_out = p.n;
    if (k_out)
        *k_out = p.k;
    if (oh_out)
        *oh_out = p.oh;
    if (ow_out)
        *ow_out = p.ow;
    return CONVSEL_STATUS_SUCCESS;
}

convsel_status_t convsel_get_problem_key(convsel_handle_t h, const_convsel_tensor_desc_t x,
                                         const_convsel_filter_desc_t w,
                                         const_convsel_conv_desc_t conv,
                                         const_convsel_tensor_desc_t y, char *key_out,
                                         size_t key_capacity, size_t *key_len_out) {
    if (h == NULL)
        return CONVSEL_STATUS_BAD_PARAM;
    if (key_out == NULL && key_capacity != 0)
        return handle_fail(h, CONVSEL_STATUS_BAD_PARAM, "key_out is NULL but key_capacity = %zu",
                           key_capacity);
    if (y == NULL) /* the key names the whole problem, the output's layout included */
        return handle_fail(h, CONVSEL_STATUS_BAD_PARAM, "y_desc is NULL");
    struct conv_problem p;
    convsel_status_t st = problem_from_descriptors(h, x, w, conv, y, &p);
    if (st != CONVSEL_STATUS_SUCCESS)
        return st;
    size_t len = problem_key_format(&p, key_out, key_capacity);
    if (key_len_out)
        *key_len_out = len;
    return CONVSEL_STATUS_SUCCESS;
}

/* ---------------------------- solvers ---------------------------- */

int32_t convsel_solver_count(void) {
    return solver_count();
}

const char *convsel_solver_name(convsel_solver_id_t id) {
    const struct solver *s = solver_get(id);
    return s ? s->name : NULL;
}

convsel_status_t convsel_solver_find(convsel_handle_t h, const char *name,
                                     convsel_solver_id_t *id_out) {
    if (h == NULL)
        return CONVSEL_STATUS_BAD_PARAM;
    if (name == NULL || id_out == NULL)
        return handle_fail(h, CONVSEL_STATUS_BAD_PARAM, "%s is NULL",
                           name == NULL ? "name" : "id_out");
    int id = solver_find(name);
    if (id >= 0) {
        *id_out = id;
        return CONVSEL_STATUS_SUCCESS;
    }
    char known[HANDLE_ERROR_MAX / 2] = "";
    for (int i = 0; i < solver_count(); i++) {
        size_t used = strlen(known);
        snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "", solver_get(i)->name);
    }
    return handle_fail(h, CONVSEL_STATUS_BAD_PARAM, "solver '%.64s': unknown (known: %s)", name,
                       known);
}

/* Builds the problem and resolves `id` (AUTO or explicit) to an applicable
 * solver. On success *solver_out is set. */
static convsel_status_t prepare(convsel_handle_t h, convsel_solver_id_t id,
                                const_convsel_tensor_desc_t x, const_convsel_filter_desc_t w,
                                const_convsel_conv_desc_t conv, const_convsel_tensor_desc_t y,
                                struct conv_problem *p, const struct solver **solver_out) {
    if (h == NULL)
        return CONVSEL_STATUS_BAD_PARAM;
    if (id != CONVSEL_SOLVER_AUTO && solver_get(id) == NULL)
        return handle_fail(h, CONVSEL_STATUS_BAD_PARAM,
                           "solver = %" PRId32 ": unknown id (valid: -1 for AUTO, 0..%d)", id,
                           solver_count() - 1);
    convsel_status_t st = problem_from_descriptors(h, x, w, conv, y, p);
    if (st != CONVSEL_STATUS_SUCCESS)
        return st;
    if (id == CONVSEL_SOLVER_AUTO) /* measured in this process (hybrid), else ranked */
        id = hybrid_pick(h, p, SIZE_MAX);
    const struct solver *s = solver_get(id);
    const char *reason = "not applicable";
    if (!s->is_applicable(p, &reason))
        return handle_fail(h, CONVSEL_STATUS_NOT_SUPPORTED, "solver %s: %s", s->name, reason);
    *solver_out = s;
    return CONVSEL_STATUS_SUCCESS;
}

convsel_status_t convsel_solver_is_applicable(convsel_handle_t h, convsel_solver_id_t id,
                                              const_convsel_tensor_desc_t x,
                                              const_convsel_filter_desc_t w,
                                              const_convsel_conv_desc_t conv,
                                              const_convsel_tensor_desc_t y) {
    if (h == NULL)
        return CONVSEL_STATUS_BAD_PARAM;
    if (solver_get(id) == NULL) /* AUTO is not a solver: it always resolves to one that applies */
        return handle_fail(h, CONVSEL_STATUS_BAD_PARAM,
                           "solver = %" PRId32 ": not a solver id (valid: 0..%d)", id,
                           solver_count() - 1);
    if (y == NULL)
        return handle_fail(h, CONVSEL_STATUS_BAD_PARAM, "y_desc is NULL");
    struct conv_problem p;
    const struct solver *s = NULL;
    return prepare(h, id, x, w, conv, y, &p, &s);
}

convsel_status_t convsel_get_forward_workspace_size(convsel_handle_t h, convsel_solver_id_t id,
                                                    const_convsel_tensor_desc_t x,
                                                    const_convsel_filter_desc_t w,
                                                    const_convsel_conv_desc_t conv,
                                                    const_convsel_tensor_desc_t y,
                                                    size_t *workspace_bytes_out) {
    struct conv_problem p;
    const struct solver *s = NULL;
    convsel_status_t st = prepare(h, id, x, w, conv, y, &p, &s);
    if (st != CONVSEL_STATUS_SUCCESS)
        return st;
    if (workspace_bytes_out == NULL)
        return handle_fail(h, CONVSEL_STATUS_BAD_PARAM, "workspace_bytes_out is NULL");
    *workspace_bytes_out = s->workspace_size(&p);
    return CONVSEL_STATUS_SUCCESS;
}

convsel_status_t convsel_convolution_forward(convsel_handle_t h, convsel_solver_id_t id,
                                             const_convsel_tensor_desc_t x_desc, const float *x,
                                             const_convsel_filter_desc_t w_desc, const float *w,
                                             const_convsel_conv_desc_t conv_desc,
                                             const_convsel_tensor_desc_t y_desc, float *y,
                                             void *workspace, size_t workspace_bytes) {
    if (h == NULL)
        return CONVSEL_STATUS_BAD_PARAM;
    if (y_desc == NULL)
        return handle_fail(h, CONVSEL_STATUS_BAD_PARAM, "y_desc is NULL");
    struct conv_problem p;
    const struct solver *s = NULL;
    convsel_status_t st = prepare(h, id, x_desc, w_desc, conv_desc, y_desc, &p, &s);
    if (st != CONVSEL_STATUS_SUCCESS)
        return st;
    if (x == NULL || w == NULL || y == NULL)
        return handle_fail(h, CONVSEL_STATUS_BAD_PARAM, "%s is NULL",
                           x == NULL   ? "x"
                           : w == NULL ? "w"
                                       : "y");
    if (id == CONVSEL_SOLVER_AUTO && h->find_mode != CONVSEL_FIND_MODE_IMMEDIATE) {
        const struct solver *pick = NULL;
        bool done = false;
        st = hybrid_forward(h, &p, x, w, y, workspace_bytes, &pick, &done);
        if (st != CONVSEL_STATUS_SUCCESS || done)
            return st;
        if (pick) /* measured: the fastest whose workspace fits what the caller gave */
            s = pick;
    }
    const size_t need = s->workspace_size(&p);
    if (workspace_bytes < need)
        return handle_fail(h, CONVSEL_STATUS_BAD_PARAM,
                           "workspace_bytes = %zu: solver %s needs %zu bytes", workspace_bytes,
                           s->name, need);
    if (need > 0 && workspace == NULL)
        return handle_fail(h, CONVSEL_STATUS_BAD_PARAM,
                           "workspace is NULL: solver %s needs %zu bytes", s->name, need);
    const struct conv_run_args args = handle_run_args(h, &p, x, w, y, workspace, workspace_bytes);
    st = solver_run(s, &args);
    if (st != CONVSEL_STATUS_SUCCESS)
        return handle_fail(h, st, "solver %s failed: %s", s->name, convsel_status_string(st));
    return CONVSEL_STATUS_SUCCESS;
}
