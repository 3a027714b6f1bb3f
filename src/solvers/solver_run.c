/* solver_run.c -- the one way solvers are run (see solver.h): the place
 * for what holds for every solver, such as leaving tiny problems on the
 * calling thread. */
#include "solvers/solver.h"

convsel_status_t solver_run(const struct solver *s, const struct conv_run_args *a) {
    if (a->pool == NULL || problem_flops(a->p) >= SOLVER_SERIAL_FLOPS)
        return s->run(a);
    struct conv_run_args serial = *a;
    serial.pool = NULL;
    return s->run(&serial);
}
