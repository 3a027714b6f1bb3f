/* fallback.c -- the hand-written choice used when no model or database
 * answer is available: a pure function of the problem, no I/O, no
 * allocation. The registry lists solvers in order of preference, so the
 * first applicable one that is not the reference wins. */
#include "heur/select.h"
#include "solvers/solver.h"

int heur_select_solver(const struct conv_problem *p) {
    const int ref = solver_reference_id();
    for (int id = 0; id < solver_count(); id++)
        if (id != ref && solver_get(id)->is_applicable(p, NULL))
            return id;
    return ref;
}
