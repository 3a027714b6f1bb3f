/* rank.c -- the solver ranking (see select.h): database, then the
 * trained model, then rules. A source only ever adds solvers that apply and are
 * not yet ranked, so the list has each applicable solver at most once. */
#include <stdbool.h>

#include "db/perfdb.h"
#include "heur/db_snapshot.h"
#include "heur/ranking_model.h"
#include "heur/select.h"
#include "solvers/solver.h"
#include "util/stats.h"

struct ranking {
    struct heur_choice *out;
    int max, n;
    bool taken[SOLVER_MAX];
};

static void add(struct ranking *r, const struct conv_problem *p, int id, double ms,
                convsel_ranking_source_t source, bool extrapolated) {
    if (r->n >= r->max || id < 0 || id >= solver_count() || r->taken[id] ||
        !solver_get(id)->is_applicable(p, NULL))
        return;
    r->taken[id] = true;
    r->out[r->n++] = (struct heur_choice){id, ms, source, extrapolated};
}

/* The rules' order: their pick, every other applicable solver, the reference. */
static void add_rules(struct ranking *r, const struct conv_problem *p) {
    add(r, p, heur_rules_solver(p), -1, CONVSEL_RANKED_BY_RULES, false);
    const int ref = solver_reference_id();
    for (int id = 0; id < solver_count(); id++)
        if (id != ref)
            add(r, p, id, -1, CONVSEL_RANKED_BY_RULES, false);
    add(r, p, ref, -1, CONVSEL_RANKED_BY_RULES, false);
}

/* The model's predictions, through the policy. */
static void add_model(struct ranking *r, const struct conv_problem *p, int threads,
                      bool weights_constant, struct heur_info *info) {
    const struct ranking_model *m = ranking_model_get();
    struct policy_ranking pr;
    if (m == NULL || !ranking_model_rank(m, p, threads, weights_constant, &pr))
        return;
    info->model = pr.n > 0;
    info->extrapolating = pr.extrapolating;
    info->feature = pr.feature;
    info->value = pr.value;
    info->unsure = pr.unsure;
    for (int i = 0; i < pr.n; i++)
        add(r, p, pr.order[i], pr.ms[pr.order[i]], CONVSEL_RANKED_BY_MODEL, pr.extrapolating);
}

/* The costs to add to a machine's database timings for a handle: none
 * when the handle's weights mode is the one they were taken in; for
 * per-call weights over constant-weights timings, the database's own
 * measured costs, else the model's. (Per-call timings for a constant
 * handle are left as they are: an overestimate only of the solvers that
 * transform, never a trap.) */
static const struct weights_costs *db_weights_costs(const struct db_machine *dm,
                                                    bool weights_constant) {
    if (dm == NULL || weights_constant || !dm->weights_constant)
        return NULL;
    if (dm->weights.count > 0)
        return &dm->weights;
    const struct ranking_model *m = ranking_model_get();
    return m ? &ranking_model_metadata(m)->limits.weights : NULL;
}

int heur_rank_rules(const struct conv_problem *p, struct heur_choice *out, int max) {
    struct ranking r = {.out = out, .max = max};
    add_rules(&r, p);
    return r.n;
}

int heur_rank(const struct conv_problem *p, int threads, bool weights_constant,
              struct heur_choice *out, int max, struct heur_info *info) {
    struct heur_info local;
    if (info == NULL)
        info = &local;
    *info = (struct heur_info){.feature = -1};
    struct ranking r = {.out = out, .max = max};
    char machine[PERFDB_MACHINE_MAX], key[CONVSEL_PROBLEM_KEY_MAX];
    machine_signature(threads, machine, sizeof machine);
    problem_key_format(p, key, sizeof key);
    const struct db_entry *e = NULL;
    const size_t measured = db_snapshot_find(machine, key, &e);
    double ms[SOLVER_MAX];
    int order[SOLVER_MAX], n = 0;
    const struct db_machine *dm = measured ? db_snapshot_machine(machine) : NULL;
    const struct weights_costs *costs = db_weights_costs(dm, weights_constant);
    for (size_t i = 0; i < measured && n < SOLVER_MAX; i++) {
        ms[n] = e[i].median_ms;
        if (costs)
            ms[n] += policy_weights_ms(costs, solver_get(e[i].solver), p);
        order[n] = n;
        n++;
    }
    stats_order_by_time(ms, order, n);
    for (int i = 0; i < n; i++)
        add(&r, p, e[order[i]].solver, ms[order[i]], CONVSEL_RANKED_BY_DATABASE, false);
    info->measured = r.n > 0;
    add_model(&r, p, threads, weights_constant, info);
    /* nothing measured and no model: the rules' order, which knows no
     * times, is the least sure ranking there is */
    if (!info->measured && !info->model)
        info->unsure = true;
    add_rules(&r, p);
    return r.n;
}

int heur_select_solver(const struct conv_problem *p, int threads, bool weights_constant) {
    struct heur_choice first;
    return heur_rank(p, threads, weights_constant, &first, 1, NULL) == 1 ? first.solver
                                                                         : solver_reference_id();
}
