/* cmd_eval.c -- `convsel eval`: how good a ranking is on measured
 * problems, without running anything (src/train/eval.c). The ranking is
 * the rules, or with --model DIR a trained model as the library runs it.
 * With --families, leave one family out: for each family of real layers a
 * model is trained without the family and scored on its layers -- the
 * figure that says how immediate mode does on a network nobody tuned. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "heur/ranking_model.h"
#include "train/eval.h"
#include "util/machine.h"

static const char summary[] =
    "Scores a ranking against the measurements in a performance database: for every\n"
    "problem, whether its first solver is the fastest measured (top-1), whether the fastest\n"
    "is among its first three (top-3), the regret (time of its first solver / fastest), and\n"
    "the error of every estimate (|log2(estimated / measured)|: median and 95th percentile).\n"
    "Prints 'top1 = A/N', 'top3 = B/N', 'geomean regret = X.XXX' for all problems and for\n"
    "the held-out split of convsel train, how often each solver is fastest and chosen, and\n"
    "the worst picks. The ranking scored is the hand-written rules, or with --model DIR\n"
    "the model DIR/<isa>.tn.model (the ISA of the database's machine signature).\n"
    "--families: leave one family out. For each family of real layers (recorded by tune\n"
    "--corpus, or given with --corpus DIR), trains a model (with the training flags below)\n"
    "without the family's layers and their perturbations, and scores it on the family's\n"
    "layers; prints a line per family and 'families: top1 = ..., geomean regret = ...' over\n"
    "all of them, with the worst picks (marked where the model extrapolated and the policy\n"
    "made the safe pick). --family F,G scores those families only (a quicker look at a few).\n"
    "--exclude FILE leaves a problem list out (the suite).";

static void print_score(const char *label, const struct ds_score *s) {
    char line[256];
    eval_format_score(label, s, line, sizeof line);
    printf("%s\n", line);
}

static void print_worst(const struct dataset *d, const struct eval_report *r) {
    printf("worst picks (regret: problem, pick, fastest):\n");
    for (int i = 0; i < r->n_worst; i++) {
        const struct ds_problem *q = &d->v[r->worst[i].problem];
        const struct eval_extrapolation *x = &r->worst[i].x;
        char note[96] = "";
        if (x->feature >= 0)
            snprintf(note, sizeof note, " (extrapolating on %s%s)", feature_names[x->feature],
                     x->safe_pick ? ": the safe pick" : ", the scale: the model's order");
        printf("  %7.2fx  %s%s%s: %s %.4f ms, fastest %s %.4f ms%s\n", r->worst[i].regret, q->key,
               q->network[0] ? " " : "", q->network, solver_get(r->worst[i].pick)->name,
               q->ms[r->worst[i].pick], solver_get(q->fastest)->name, q->ms[q->fastest], note);
    }
}

static void print_estimates(const char *label, const struct eval_report *r) {
    double median, p95;
    eval_estimate_error(r, &median, &p95);
    if (r->n_est)
        printf("%-9s estimate error |log2(est/measured)|: median %.3f, p95 %.3f (%zu estimates)\n",
               label, median, p95, r->n_est);
}

struct families_ctx {
    const struct dataset *d;
};

static void print_family(void *ctx, const struct eval_family *f) {
    const struct families_ctx *c = ctx;
    const struct eval_report *r = f->report;
    double median, p95;
    eval_estimate_error(r, &median, &p95);
    const struct ds_score *s = &r->score;
    const double worst = r->n_worst ? r->worst[0].regret : 1.0;
    printf("family %-16s %4d layers (trained on %5d): top1 %5.1f%%  regret %.3f  worst %.2fx  "
           "est err median %.2f p95 %.2f%s%s\n",
           f->family, f->layers, f->trained, s->n ? 100.0 * s->top1 / s->n : 0.0,
           s->n ? exp(s->log_regret / s->n) : 1.0, worst, median, p95, r->n_worst ? "  " : "",
           r->n_worst ? c->d->v[r->worst[0].problem].network : "");
    fflush(stdout);
}

int cmd_eval(int argc, char **argv) {
    const char *db_path = NULL, *model_dir = NULL, *machine = NULL, *corpus = NULL, *exclude = NULL,
               *only = NULL;
    bool misses = false, families = false;
    struct train_options o = TRAIN_DEFAULT_OPTIONS;
    int64_t epochs = o.epochs, hidden = o.hidden, seed = (int64_t)o.seed, ensemble = o.ensemble;
    double rank_weight = 0;
    const int cpus = machine_cores();
    int64_t jobs = cpus > EVAL_JOBS_MAX ? EVAL_JOBS_MAX : cpus;
    const struct cli_flag flags[] = {
        {NULL, "--db", CLI_STRING, &db_path, "PATH", "performance database (default $CONVSEL_DB)"},
        {NULL, "--machine", CLI_STRING, &machine, "SIG",
         "machine signature, e.g. avx512-2c-2t (default: the only one)"},
        {NULL, "--model", CLI_STRING, &model_dir, "DIR",
         "score the model in DIR (default: score the rules)"},
        {NULL, "--misses", CLI_SWITCH, &misses, "",
         "list every held-out problem whose pick is not the fastest"},
        {NULL, "--families", CLI_SWITCH, &families, "",
         "leave one family out: train without each family, score on its layers"},
        {NULL, "--family", CLI_STRING, &only, "F[,F...]",
         "--families: only these families (names as the per-family lines print them)"},
        {NULL, "--corpus", CLI_STRING, &corpus, "FILE|DIR",
         "the corpus (data/networks): marks its layers, for databases tuned without origins"},
        {NULL, "--exclude", CLI_STRING, &exclude, "FILE", "leave out the problems of this CSV"},
        {NULL, "--epochs", CLI_INT, &epochs, "E", "--families: as convsel train (default 300)"},
        {NULL, "--hidden", CLI_INT, &hidden, "H", "--families: as convsel train (default 64)"},
        {NULL, "--seed", CLI_INT, &seed, "S", "--families: as convsel train (default 1)"},
        {NULL, "--ensemble", CLI_INT, &ensemble, "K", "--families: as convsel train (default 1)"},
        {NULL, "--rank-weight", CLI_DOUBLE, &rank_weight, "W",
         "--families: as convsel train (default 0)"},
        {NULL, "--jobs", CLI_INT, &jobs, "N",
         "--families: trainings at once (default: the online CPUs; results do not depend on it)"},
    };
    int rc = cli_parse("eval", summary, argc, argv, flags, sizeof flags / sizeof flags[0]);
    if (rc != EXIT_OK)
        return rc < 0 ? EXIT_OK : rc;
    if (!cli_train_options("eval", epochs, hidden, seed, ensemble, rank_weight, &o))
        return EXIT_USAGE;
    if (jobs < 1 || jobs > EVAL_JOBS_MAX) {
        fprintf(stderr, "convsel eval: --jobs %lld: must be in 1..%d\n", (long long)jobs,
                EVAL_JOBS_MAX);
        return EXIT_USAGE;
    }
    if (only && !families) {
        fprintf(stderr, "convsel eval: --family needs --families\n");
        return EXIT_USAGE;
    }
    if (only &&
        (!only[0] || only[strlen(only) - 1] == ',' || strstr(only, ",,") || only[0] == ',')) {
        fprintf(stderr, "convsel eval: --family '%s': an empty family name\n", only);
        return EXIT_USAGE;
    }
    if (families && model_dir) {
        fprintf(stderr, "convsel eval: --families trains its own models; --model scores one\n");
        return EXIT_USAGE;
    }
    char path[4096],
        err[PROBLEM_LIST_ERROR_MAX > PERFDB_ERROR_MAX ? PROBLEM_LIST_ERROR_MAX : PERFDB_ERROR_MAX];
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
    if (exclude) {
        const int removed = dataset_exclude_list(&d, exclude, err, sizeof err);
        if (removed < 0) {
            fprintf(stderr, "convsel eval: --exclude %s\n", err);
            dataset_free(&d);
            return EXIT_USAGE;
        }
        printf("eval: --exclude %s: %d problems left out\n", exclude, removed);
    }
    if (corpus) {
        const int found = dataset_mark_corpus(&d, corpus, err, sizeof err);
        if (found < 0) {
            fprintf(stderr, "convsel eval: --corpus %s\n", err);
            dataset_free(&d);
            return EXIT_USAGE;
        }
        printf("eval: --corpus %s: %d of its layers are in the database\n", corpus, found);
    }
    char counts[512];
    measurement_counts_describe(&d.counts, counts, sizeof counts);
    if (families) {
        printf("eval: leave one family out on %s (%d problems; %s), training flags: %d epochs, "
               "%d hidden, ensemble %d, seed %llu\n",
               path, d.n, counts, o.epochs, o.hidden, o.ensemble, o.seed);
        struct families_ctx ctx = {&d};
        struct eval_report overall;
        if (!eval_families(&d, &o, d.limits.present ? &d.limits : NULL, only, (int)jobs,
                           print_family, &ctx, &overall, err, sizeof err)) {
            fprintf(stderr, "convsel eval: %s\n", err);
            dataset_free(&d);
            return EXIT_FAILED;
        }
        print_score("families", &overall.score);
        print_estimates("families", &overall);
        printf("extrapolated on %d of %d layers\n", overall.extrapolated, overall.score.n);
        print_worst(&d, &overall);
        eval_report_free(&overall);
        dataset_free(&d);
        return EXIT_OK;
    }
    struct ranking_model *model = NULL;
    char ranking[RANKING_MODEL_PATH_MAX + 16] = "rules";
    if (model_dir) {
        char target[PERFDB_MACHINE_MAX] = "";
        machine_signature_parse(d.machine, target, sizeof target, NULL, NULL);
        if ((model = ranking_model_open(model_dir, target, err, sizeof err)) == NULL) {
            fprintf(stderr, "convsel eval: --model %s: %s\n", model_dir, err);
            dataset_free(&d);
            return EXIT_FAILED;
        }
        char net[RANKING_MODEL_PATH_MAX];
        ranking_model_path(model_dir, target, RANKING_MODEL_NET, net, sizeof net);
        snprintf(ranking, sizeof ranking, "model %s", net);
    }
    struct eval_report all, held_out, layers;
    memset(&all, 0, sizeof all), memset(&held_out, 0, sizeof held_out);
    memset(&layers, 0, sizeof layers);
    const eval_ranking_fn rank = model ? eval_rank_library : eval_rank_rules;
    for (int i = 0; i < d.n; i++) {
        const int pick = eval_add(&all, &d, i, rank, model);
        if (pick < 0)
            continue;
        if (d.v[i].kind == DS_LAYER)
            eval_add(&layers, &d, i, rank, model);
        if (dataset_is_test(d.v[i].key)) {
            eval_add(&held_out, &d, i, rank, model);
            if (misses && pick != d.v[i].fastest)
                printf("miss %6.2fx  %s: %s %.4f ms, fastest %s %.4f ms\n",
                       d.v[i].ms[pick] / d.v[i].ms[d.v[i].fastest], d.v[i].key,
                       solver_get(pick)->name, d.v[i].ms[pick], solver_get(d.v[i].fastest)->name,
                       d.v[i].ms[d.v[i].fastest]);
        }
    }
    printf("eval: ranking %s on %d problems of %s from %s (%s)\n", ranking, all.score.n, d.machine,
           path, counts);
    print_score("all", &all.score);
    print_score("held-out", &held_out.score);
    if (layers.score.n)
        print_score("layers", &layers.score);
    print_estimates("all", &all);
    print_estimates("held-out", &held_out);
    if (model)
        printf("extrapolated on %d of %d problems\n", all.extrapolated, all.score.n);
    printf("%-20s %8s %8s\n", "solver", "fastest", "chosen");
    for (int id = 0; id < solver_count(); id++)
        if (all.fastest[id] || all.chosen[id])
            printf("%-20s %8d %8d\n", solver_get(id)->name, all.fastest[id], all.chosen[id]);
    print_worst(&d, &all);
    eval_report_free(&all);
    eval_report_free(&held_out);
    eval_report_free(&layers);
    ranking_model_close(model);
    dataset_free(&d);
    return EXIT_OK;
}
