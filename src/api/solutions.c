/* solutions.c -- convsel_get_solutions: the ranking of src/heur, with
 * names and workspace sizes, for the caller. */
#include <stdio.h>
#include <string.h>

#include "api/descriptors.h"
#include "api/handle.h"
#include "api/hybrid.h"
#include "heur/db_snapshot.h"
#include "heur/ranking_model.h"
#include "heur/select.h"
#include "solvers/solver.h"

const char *convsel_ranking_source_string(convsel_ranking_source_t source) {
    switch (source) {
    case CONVSEL_RANKED_BY_DATABASE: return "database";
    case CONVSEL_RANKED_BY_MODEL: return "model";
    case CONVSEL_RANKED_BY_RULES: return "rules";
    case CONVSEL_RANKED_BY_MEASUREMENT: return "measured";
    }
    return "unknown";
}

convsel_status_t convsel_get_solutions(convsel_handle_t h, const_convsel_tensor_desc_t x_desc,
                                       const_convsel_filter_desc_t w_desc,
                                       const_convsel_conv_desc_t conv_desc,
                                       const_convsel_tensor_desc_t y_desc, int max_solutions,
                                       convsel_solution_t *solutions_out, int *count_out) {
    if (h == NULL)
        return CONVSEL_STATUS_BAD_PARAM;
    if (solutions_out == NULL || count_out == NULL)
        return handle_fail(h, CONVSEL_STATUS_BAD_PARAM, "%s is NULL",
                           solutions_out == NULL ? "solutions_out" : "count_out");
    if (y_desc == NULL)
        return handle_fail(h, CONVSEL_STATUS_BAD_PARAM, "y_desc is NULL");
    if (max_solutions < 1)
        return handle_fail(h, CONVSEL_STATUS_BAD_PARAM, "max_solutions = %d: must be >= 1",
                           max_solutions);
    struct conv_problem p;
    convsel_status_t st = problem_from_descriptors(h, x_desc, w_desc, conv_desc, y_desc, &p);
    if (st != CONVSEL_STATUS_SUCCESS)
        return st;
    struct heur_choice ranked[SOLVER_MAX];
    int n = heur_rank(&p, h->num_threads, h->weights_constant, ranked, SOLVER_MAX, NULL);
    /* Solvers timed in this process (hybrid and exhaustive find modes)
     * come first, fastest first, with their times. */
    const struct measured *m = hybrid_lookup(h, &p);
    if (m) {
        struct heur_choice all[SOLVER_MAX];
        int k = 0;
        for (int i = 0; i < m->n; i++)
            all[k++] =
                (struct heur_choice){m->solver[i], m->ms[i], CONVSEL_RANKED_BY_MEASUREMENT, false};
        for (int i = 0; i < n && k < SOLVER_MAX; i++) {
            bool timed = false;
            for (int j = 0; j < m->n && !timed; j++)
                timed = m->solver[j] == ranked[i].solver;
            if (!timed)
                all[k++] = ranked[i];
        }
        memcpy(ranked, all, (size_t)k * sizeof *ranked);
        n = k;
    }
    if (n > max_solutions)
        n = max_solutions;
    for (int i = 0; i < n; i++) {
        const struct solver *s = solver_get(ranked[i].solver);
        solutions_out[i] = (convsel_solution_t){
            .solver = ranked[i].solver,
            .name = s->name,
            .time_ms = ranked[i].time_ms,
            .workspace_bytes = s->workspace_size(&p),
            .source = ranked[i].source,
            .flags = ranked[i].extrapolated ? CONVSEL_SOLUTION_EXTRAPOLATED : 0u};
    }
    *count_out = n;
    return CONVSEL_STATUS_SUCCESS;
}

/* One status line into the caller's buffer, snprintf-style. */
static convsel_status_t put_line(const char *line, char *buf, size_t cap, size_t *len_out) {
    if (buf == NULL && cap > 0)
        return CONVSEL_STATUS_BAD_PARAM;
    const int n = snprintf(buf, cap, "%s", line);
    if (len_out)
        *len_out = n > 0 ? (size_t)n : 0;
    return CONVSEL_STATUS_SUCCESS;
}

convsel_status_t convsel_get_model_status(char *buf, size_t cap, size_t *len_out) {
    char line[8192];
    ranking_model_status(line, sizeof line);
    return put_line(line, buf, cap, len_out);
}

convsel_status_t convsel_get_database_status(char *buf, size_t cap, size_t *len_out) {
    return put_line(db_snapshot_status(), buf, cap, len_out);
}
