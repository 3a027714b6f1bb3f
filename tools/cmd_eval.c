/* cmd_eval.c -- `convsel eval --db DB`: how good a ranking is on measured
 * problems, without running anything. For every problem of one machine
 * signature: top-1 (the ranking's first measured solver is the fastest
 * measured), top-3 (the fastest is among its first three measured
 * solvers) and regret (time of its first measured solver / fastest); the
 * geomean regret is the figure that matters to a user. Reported over all
 * problems and over the held-out split `convsel train` keeps out of
 * training (dataset_is_test). The ranking scored is the hand-written rules,
 * or with --model DIR the trained model in DIR as the library runs it
 * (the frugally-deep runtime, not the trainer's arithmetic). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "dataset.h"
#include "heur/ranking_model.h"

static const char summary[] =
    "Scores a ranking against the measurements in a performance database: for every\n"
    "problem, whether its first solver is the fastest measured (top-1), whether the fastest\n"
    "is among its first three (top-3), and the regret (time of its first solver / fastest).\n"
    "Prints 'top1 = A/N', 'top3 = B/N', 'geomean regret = X.XXX' for all problems and for\n"
    "the held-out split of convsel train, how often each solver is fastest and chosen, and\n"
    "the worst problems. The ranking scored is the hand-written rules, or with --model DIR\n"
    "the model DIR/<isa>.tn.model (the ISA of the database's machine signature).";

struct worst {
    double regret;
    char what[CONVSEL_PROBLEM_KEY_MAX + 64];
};

static void note_worst(struct worst w[5], double regret, const struct ds_problem *q, int pick) {
    int slot = 0;
    for (int i = 1; i < 5; i++)
        if (w[i].regret < w[slot].regret)
            slot = i;
    if (regret <= w[slot].regret)
        return;
    w[slot].regret = regret;
    snprintf(w[slot].what, sizeof w[slot].what, "%s: %s, fastest %s", q->key,
             solver_get(pick)->name, solver_get(q->fastest)->name);
}

/* The ranking scored: the model's when there is one, else the rules'.
 * Returns how many solvers ids[] holds (-1: the prediction failed). */
static int ranking_of(const struct ds_problem *q, const struct ranking_model *m, int threads,
                      int ids[SOLVER_MAX]) {
    double ms[SOLVER_MAX];
    return m ? ranking_model_rank(m, &q->p, threads, ids, ms) : ds_rules_ranking(&q->p, ids);
}

int cmd_eval(int argc, char **argv) {
    const char *db_path = NULL, *model_dir = NULL, *machine = NULL;
    bool misses = false;
    const struct cli_flag flags[] = {
        {NULL, "--db", CLI_STRING, &db_path, "PATH", "performance database (default $CONVSEL_DB)"},
        {NULL, "--machine", CLI_STRING, &machine, "SIG",
         "machine signature, e.g. avx512-2c-2t (default: the only one)"},
        {NULL, "--model", CLI_STRING, &model_dir, "DIR",
         "score the model in DIR (default: score the rules)"},
        {NULL, "--misses", CLI_SWITCH, &misses, "",
         "list every held-out problem whose pick is not the fastest"},
    };
    int rc = cli_parse("eval", summary, argc, argv, flags, sizeof flags / sizeof flags[0]);
    if (rc != EXIT_OK)
        return rc < 0 ? EXIT_OK : rc;
    char path[4096], err[PERFDB_ERROR_MAX];
    if (db_path)
        snprintf(path, sizeof path, "%s", db_path);
    else if (!perfdb_default_path(path, sizeof path, err, sizeof err)) {
        fprintf(stderr, "convsel eval: %s\n", err);
        return EXIT_USAGE;
    }
    struct dataset d;
    if (!dataset_load(path, machine, &d, err, sizeof err)) {
        fprintf(stderr, "convsel eval: %s\n", err);
        return EXIT_FAILED;
    }
    struct ranking_model *model = NULL;
    char ranking[4200] = "rules";
    if (model_dir) {
        char target[PERFDB_MACHINE_MAX];
        snprintf(target, sizeof target, "%.*s", (int)strcspn(d.machine, "-"), d.machine);
        if ((model = ranking_model_open(model_dir, target, err, sizeof err)) == NULL) {
            fprintf(stderr, "convsel eval: --model %s: %s\n", model_dir, err);
            dataset_free(&d);
            return EXIT_FAILED;
        }
        snprintf(ranking, sizeof ranking, "model %s/%s.tn.model", model_dir, target);
    }
    struct ds_score all = {0}, held_out = {0};
    struct worst worst[5] = {{0}};
    int fastest[SOLVER_MAX] = {0}, chosen[SOLVER_MAX] = {0};
    for (int i = 0; i < d.n; i++) {
        double regret = 1;
        int ids[SOLVER_MAX];
        const int n = ranking_of(&d.v[i], model, d.threads, ids);
        const int pick = ds_score_add(&all, &d.v[i], ids, n, &regret);
        if (pick < 0)
            continue;
        if (dataset_is_test(d.v[i].key)) {
            ds_score_add(&held_out, &d.v[i], ids, n, &regret);
            if (misses && pick != d.v[i].fastest)
                printf("miss %6.2fx  %s: %s %.4f ms, fastest %s %.4f ms\n", regret, d.v[i].key,
                       solver_get(pick)->name, d.v[i].ms[pick], solver_get(d.v[i].fastest)->name,
                       d.v[i].ms[d.v[i].fastest]);
        }
        fastest[d.v[i].fastest]++;
        chosen[pick]++;
        note_worst(worst, regret, &d.v[i], pick);
    }
    printf("eval: ranking %s on %d problems of %s from %s\n", ranking, all.n, d.machine, path);
    ds_score_print("all", &all);
    ds_score_print("held-out", &held_out);
    printf("%-20s %8s %8s\n", "solver", "fastest", "chosen");
    for (int id = 0; id < solver_count(); id++)
        if (fastest[id] || chosen[id])
            printf("%-20s %8d %8d\n", solver_get(id)->name, fastest[id], chosen[id]);
    printf("worst regrets:\n");
    for (int k = 0; k < 5; k++) {
        int w = 0;
        for (int i = 1; i < 5; i++)
            if (worst[i].regret > worst[w].regret)
                w = i;
        if (worst[w].regret <= 0)
            break;
        printf("  %7.2fx  %s\n", worst[w].regret, worst[w].what);
        worst[w].regret = 0;
    }
    if (d.ignored)
        printf("ignored: %zu records of unknown solvers, invalid times or keys\n", d.ignored);
    if (d.inapplicable)
        printf("ignored: %zu records of solvers that no longer apply to their problem\n",
               d.inapplicable);
    ranking_model_close(model);
    dataset_free(&d);
    return EXIT_OK;
}
