/* measurement.c -- see measurement.h. */
#include "heur/measurement.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "solvers/solver.h"

int measurement_solver(const struct perfdb_row *row, struct measurement_counts *c) {
    const int id = solver_find(row->solver);
    if (id < 0) {
        c->unknown++;
        return -1;
    }
    if (!solver_get(id)->is_applicable(row->problem, NULL)) {
        c->inapplicable++;
        return -1;
    }
    c->used++;
    return id;
}

void measurement_counts_add_scan(struct measurement_counts *c, const struct perfdb_scan *scan) {
    c->rows += scan->rows;
    if (scan->invalid && !c->invalid)
        snprintf(c->first_invalid, sizeof c->first_invalid, "%s", scan->first_invalid);
    c->invalid += scan->invalid;
}

void measurement_counts_describe(const struct measurement_counts *c, char *buf, size_t cap) {
    size_t n =
        (size_t)snprintf(buf, cap, "%" PRId64 " records: %" PRId64 " used", c->rows, c->used);
    if (c->invalid && n < cap)
        n += (size_t)snprintf(buf + n, cap - n, ", %" PRId64 " invalid (first: %s)", c->invalid,
                              c->first_invalid);
    if (c->unknown && n < cap)
        n += (size_t)snprintf(buf + n, cap - n, ", %" PRId64 " of unknown solvers", c->unknown);
    if (c->inapplicable && n < cap)
        snprintf(buf + n, cap - n, ", %" PRId64 " of solvers that no longer apply",
                 c->inapplicable);
}
