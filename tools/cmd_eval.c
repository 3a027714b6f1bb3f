/* cmd_eval.c -- `convsel eval --db DB`: how good a ranking is on measured
 * problems, without running anything. For every (machine, problem) in the
 * database: top-1 (the ranking's first solver is the fastest measured),
 * top-3 (the fastest is among the first three) and regret (measured time
 * of the first solver / time of the fastest); the geomean regret over all
 * problems is the figure that matters to a user.
 *
 * Today it scores the hand-written rules (the model plugs in beside them).
 * A first choice the database has no time for (tune times every applicable
 * solver but the reference, so this only happens for records from another
 * build) is counted as "unmeasured" and left out of the regret. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "core/problem.h"
#include "db/perfdb.h"
#include "heur/select.h"
#include "solvers/solver.h"

static const char summary[] =
    "Scores a ranking against the measurements in a performance database: for every\n"
    "problem, whether its first solver is the fastest measured (top-1), whether the fastest\n"
    "is among its first three (top-3), and the regret (time of its first solver / fastest).\n"
    "Prints 'top1 = A/N', 'top3 = B/N', 'geomean regret = X.XXX' and the worst problems.\n"
    "Today the ranking scored is the hand-written rules (--ranking rules).";

struct rec {
    char *machine, *key;
    int solver;
    double ms;
};

struct records {
    struct rec *v;
    size_t n, cap, unknown;
    const char *machine_filter;
};

static bool collect(void *ctx, const char *machine, const char *key, const char *solver,
                    double ms) {
    struct records *r = ctx;
    if (r->machine_filter && strcmp(machine, r->machine_filter) != 0)
        return true;
    const int id = solver_find(solver);
    if (id < 0 || !(ms > 0) || !isfinite(ms)) {
        r->unknown++;
        return true;
    }
    if (r->n == r->cap) {
        const size_t cap = r->cap ? 2 * r->cap : 4096;
        struct rec *grown = realloc(r->v, cap * sizeof *grown);
        if (!grown)
            return false;
        r->v = grown, r->cap = cap;
    }
    r->v[r->n] = (struct rec){strdup(machine), strdup(key), id, ms};
    if (!r->v[r->n].machine || !r->v[r->n].key) {
        free(r->v[r->n].machine);
        free(r->v[r->n].key);
        return false;
    }
    r->n++;
    return true;
}

static int by_problem(const void *pa, const void *pb) {
    const struct rec *a = pa, *b = pb;
    const int c = strcmp(a->machine, b->machine);
    return c ? c : strcmp(a->key, b->key);
}

struct worst {
    double regret;
    char what[200];
};

struct tally {
    int problems, top1, top3, unmeasured, bad_keys;
    double log_regret;
    int fastest_count[SOLVER_MAX], picked_count[SOLVER_MAX];
    struct worst worst[5];
};

static void note_worst(struct tally *t, double regret, const char *key, const char *pick,
                       const char *best) {
    int slot = -1;
    for (int i = 0; i < 5; i++)
        if (slot < 0 || t->worst[i].regret < t->worst[slot].regret)
            slot = i;
    if (regret <= t->worst[slot].regret)
        return;
    t->worst[slot].regret = regret;
    snprintf(t->worst[slot].what, sizeof t->worst[slot].what, "%s: %s, fastest %s", key, pick,
             best);
}

/* Scores one problem: records g[0..n) share machine and key. */
static void score(struct tally *t, const struct rec *g, size_t n) {
    struct conv_problem p;
    char err[PROBLEM_ERROR_MAX];
    if (problem_key_parse(g[0].key, &p, err, sizeof err) != CONVSEL_STATUS_SUCCESS) {
        t->bad_keys++;
        return;
    }
    double t_of[SOLVER_MAX];
    for (int i = 0; i < SOLVER_MAX; i++)
        t_of[i] = -1;
    size_t best = 0;
    for (size_t i = 0; i < n; i++) {
        t_of[g[i].solver] = g[i].ms;
        if (g[i].ms < g[best].ms)
            best = i;
    }
    struct heur_choice ranked[SOLVER_MAX];
    const int m = heur_rank_rules(&p, ranked, SOLVER_MAX);
    const int pick = ranked[0].solver, fastest = g[best].solver;
    t->problems++;
    t->fastest_count[fastest]++;
    t->picked_count[pick]++;
    t->top1 += pick == fastest;
    for (int i = 0; i < m && i < 3; i++)
        t->top3 += ranked[i].solver == fastest;
    if (t_of[pick] < 0) {
        t->unmeasured++;
        return;
    }
    const double regret = t_of[pick] / g[best].ms;
    t->log_regret += log(regret);
    note_worst(t, regret, g[0].key, solver_get(pick)->name, solver_get(fastest)->name);
}

int cmd_eval(int argc, char **argv) {
    const char *db_path = NULL, *ranking = "rules", *machine = NULL;
    const struct cli_flag flags[] = {
        {NULL, "--db", CLI_STRING, &db_path, "PATH", "performance database (default $CONVSEL_DB)"},
        {NULL, "--machine", CLI_STRING, &machine, "SIG",
         "only this machine signature, e.g. avx512-2c-2t (default: all)"},
        {NULL, "--ranking", CLI_STRING, &ranking, "rules", "the ranking to score (default rules)"},
    };
    int rc = cli_parse("eval", summary, argc, argv, flags, sizeof flags / sizeof flags[0]);
    if (rc != EXIT_OK)
        return rc < 0 ? EXIT_OK : rc;
    if (strcmp(ranking, "rules") != 0) {
        fprintf(stderr, "convsel eval: --ranking %s: only 'rules' exists in this build\n", ranking);
        return EXIT_USAGE;
    }
    char path[4096], err[PERFDB_ERROR_MAX];
    if (db_path)
        snprintf(path, sizeof path, "%s", db_path);
    else if (!perfdb_default_path(path, sizeof path, err, sizeof err)) {
        fprintf(stderr, "convsel eval: %s\n", err);
        return EXIT_USAGE;
    }
    struct perfdb *db = perfdb_open(path, true, 0, err, sizeof err);
    if (!db) {
        fprintf(stderr, "convsel eval: %s\n", err);
        return EXIT_FAILED;
    }
    struct records r = {.machine_filter = machine};
    const int64_t read = perfdb_for_each(db, collect, &r, err, sizeof err);
    perfdb_close(db);
    struct tally t = {0};
    if (read < 0) {
        fprintf(stderr, "convsel eval: %s\n", err);
        rc = EXIT_FAILED;
    } else {
        qsort(r.v, r.n, sizeof *r.v, by_problem);
        for (size_t i = 0, j; i < r.n; i = j) {
            for (j = i + 1; j < r.n && by_problem(&r.v[i], &r.v[j]) == 0; j++) {
            }
            score(&t, &r.v[i], j - i);
        }
    }
    if (rc == EXIT_OK && t.problems == 0) {
        fprintf(stderr, "convsel eval: %s: no measured problems%s%s\n", path,
                machine ? " for machine " : "", machine ? machine : "");
        rc = EXIT_FAILED;
    }
    if (rc == EXIT_OK) {
        const int scored = t.problems - t.unmeasured;
        printf("eval: ranking '%s' on %d problems from %s\n", ranking, t.problems, path);
        printf("top1 = %d/%d (%.1f%%)\n", t.top1, t.problems, 100.0 * t.top1 / t.problems);
        printf("top3 = %d/%d (%.1f%%)\n", t.top3, t.problems, 100.0 * t.top3 / t.problems);
        printf("geomean regret = %.3f (%d problems; %d whose first choice has no time)\n",
               scored ? exp(t.log_regret / scored) : 1.0, scored, t.unmeasured);
        printf("%-20s %8s %8s\n", "solver", "fastest", "chosen");
        for (int id = 0; id < solver_count(); id++)
            if (t.fastest_count[id] || t.picked_count[id])
                printf("%-20s %8d %8d\n", solver_get(id)->name, t.fastest_count[id],
                       t.picked_count[id]);
        printf("worst regrets:\n");
        for (int k = 0; k < 5; k++) {
            int w = 0;
            for (int i = 1; i < 5; i++)
                if (t.worst[i].regret > t.worst[w].regret)
                    w = i;
            if (t.worst[w].regret <= 0)
                break;
            printf("  %7.2fx  %s\n", t.worst[w].regret, t.worst[w].what);
            t.worst[w].regret = 0;
        }
        if (r.unknown || t.bad_keys)
            printf("ignored: %zu records of unknown solvers or invalid times, %d bad keys\n",
                   r.unknown, t.bad_keys);
    }
    for (size_t i = 0; i < r.n; i++) {
        free(r.v[i].machine);
        free(r.v[i].key);
    }
    free(r.v);
    return rc;
}
