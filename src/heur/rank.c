/* rank.c -- the solver ranking (see select.h): database, then the
 * trained model, then rules. A source only ever adds solvers that apply and are
 * not yet ranked, so the list has each applicable solver at most once. */
#include <stdbool.h>

#include "db/perfdb.h"
#include "heur/db_snapshot.h"
#include "heur/ranking_model.h"
#include "heur/select.h"
#include "solvers/solver.h"

struct ranking {
    struct heur_choice *out;
    int max, n;
    bool taken[SOLVER_MAX];
};

static void add(struct ranking *r, const struct conv_problem *p, int id, double ms,
                convsel_ranking_source_t source) {
    if (r->n >= r->max || id < 0 || id >= solver_count() || r->taken[id] ||
        !solver_get(id)->is_applicable(p, NULL))
        return;
    r->taken[id] = true;
    r->out[r->n++] = (struct heur_choice){id, ms, source};
}

/* The rules' order: their pick, every other applicable solver, the reference. */
static void add_rules(struct ranking *r, const struct conv_problem *p) {
    add(r, p, heur_rules_solver(p), -1, CONVSEL_RANKED_BY_RULES);
    const int ref = solver_reference_id();
    for (int id = 0; id < solver_count(); id++)
        if (id != ref)
            add(r, p, id, -1, CONVSEL_RANKED_BY_RULES);
    add(r, p, ref, -1, CONVSEL_RANKED_BY_RULES);
}

/* The model's predictions, fastest first. */
static void add_model(struct ranking *r, const struct conv_problem *p, int threads) {
    const struct ranking_model *m = ranking_model_get();
    double ms[SOLVER_MAX];
    int order[SOLVER_MAX];
    const int n = m ? ranking_model_rank(m, p, threads, order, ms) : 0;
    for (int i = 0; i < n; i++)
        add(r, p, order[i], ms[order[i]], CONVSEL_RANKED_BY_MODEL);
}

int heur_rank_rules(const struct conv_problem *p, struct heur_choice *out, int max) {
    struct ranking r = {.out = out, .max = max};
    add_rules(&r, p);
    return r.n;
}

int heur_rank(const struct conv_problem *p, int threads, struct heur_choice *out, int max) {
    struct ranking r = {.out = out, .max = max};
    char machine[PERFDB_MACHINE_MAX], key[256];
    perfdb_machine_signature(threads, machine, sizeof machine);
    problem_key_format(p, key, sizeof key);
    const struct db_entry *e = NULL;
    const size_t measured = db_snapshot_find(machine, key, &e);
    for (size_t i = 0; i < measured; i++)
        add(&r, p, e[i].solver, e[i].median_ms, CONVSEL_RANKED_BY_DATABASE);
    add_model(&r, p, threads);
    add_rules(&r, p);
    return r.n;
}

int heur_select_solver(const struct conv_problem *p, int threads) {
    struct heur_choice first;
    return heur_rank(p, threads, &first, 1) == 1 ? first.solver : solver_reference_id();
}
