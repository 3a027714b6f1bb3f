/* cmd_train.c -- `convsel train --db DB --out DIR`: fits the ranking model
 * (src/train/train.c) to one machine signature's measurements, one problem
 * in five held out (dataset_is_test), writes DIR/<isa>.tn.model and its
 * metadata, loads the model back through the runtime (which checks its
 * embedded test) and scores it (src/train/eval.c) beside the rules. Same
 * data, same seed: the same files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "heur/ranking_model.h"
#include "nn/model.h"
#include "train/eval.h"
#include "train/train.h"

static const char summary[] =
    "Trains the ranking model on a performance database: an MLP from the problem's features\n"
    "to log2 of every solver's time, loss masked to the measured solvers, one problem in five\n"
    "held out. Writes OUT/<isa>.tn.model and OUT/<isa>_metadata.tn.model (<isa> from the\n"
    "machine signature: avx512, avx2 or generic; the library loads the one of its CPU), loads the\n"
    "model back (its embedded test must pass) and prints top1, top3 and geomean regret on\n"
    "the held-out problems for the model and for the rules. The metadata keeps the range of\n"
    "every feature over the training problems (the library says when it extrapolates), the\n"
    "machine's limits measured when it was tuned (no estimate below them), and per kind of\n"
    "layer the solvers with the mildest worst cases (the pick when it extrapolates).";

/* What a problem is for: fitted, scored for choosing hyperparameters
 * (--validate), or scored as the held-out figure. */
static enum train_role role_of(const char *key, bool validate) {
    if (dataset_is_test(key))
        return ROLE_HELD_OUT;
    return validate && dataset_is_validation(key) ? ROLE_VALIDATION : ROLE_TRAIN;
}

static void print_line(void *ctx, const char *line) {
    (void)ctx;
    printf("train: %s\n", line);
}

static void print_score(const char *label, const struct ds_score *s) {
    char line[256];
    eval_format_score(label, s, line, sizeof line);
    printf("%s\n", line);
}

/* The model (the trainer's arithmetic, through the library's policy) and
 * the rules on the problems the model was not fitted to: the held-out
 * split, or with --validate only the validation quarter (the held-out
 * figure stays unseen while hyperparameters are chosen). */
static void report(const struct dataset *d, const enum train_role *role, struct trained *t,
                   bool validate) {
    const enum train_role scored = validate ? ROLE_VALIDATION : ROLE_HELD_OUT;
    struct eval_report model[3], rules;
    memset(model, 0, sizeof model), memset(&rules, 0, sizeof rules);
    for (int i = 0; i < d->n; i++) {
        if (role[i] > ROLE_HELD_OUT)
            continue;
        eval_add(&model[role[i]], d, i, eval_rank_trained, t);
        if (role[i] == scored)
            eval_add(&rules, d, i, eval_rank_rules, NULL);
    }
    printf("%s problems (%d):\n", validate ? "validation" : "held-out", model[scored].score.n);
    print_score("model", &model[scored].score);
    print_score("rules", &rules.score);
    if (validate)
        printf("held-out problems (%d): not scored under --validate\n",
               model[ROLE_HELD_OUT].score.n);
    printf("training problems (%d):\n", model[ROLE_TRAIN].score.n);
    print_score("model", &model[ROLE_TRAIN].score);
    for (int r = 0; r < 3; r++)
        eval_report_free(&model[r]);
    eval_report_free(&rules);
}

int cmd_train(int argc, char **argv) {
    const char *db_path = NULL, *out_dir = NULL, *machine = NULL, *exclude = NULL;
    struct train_options o = TRAIN_DEFAULT_OPTIONS;
    int64_t epochs = o.epochs, hidden = o.hidden, seed = (int64_t)o.seed, ensemble = o.ensemble;
    double rank_weight = 0;
    bool validate = false;
    const struct cli_flag flags[] = {
        {NULL, "--db", CLI_STRING, &db_path, "PATH", "performance database (required)"},
        {NULL, "--out", CLI_STRING, &out_dir, "DIR", "directory for the model files (required)"},
        {NULL, "--machine", CLI_STRING, &machine, "SIG",
         "machine signature (default: the only one)"},
        {NULL, "--exclude", CLI_STRING, &exclude, "FILE",
         "leave out the problems of this CSV (e.g. the benchmark suite)"},
        {NULL, "--epochs", CLI_INT, &epochs, "E", "passes over the training set (default 300)"},
        {NULL, "--hidden", CLI_INT, &hidden, "H", "units per hidden layer (default 64)"},
        {NULL, "--seed", CLI_INT, &seed, "S", "initialization and shuffling seed (default 1)"},
        {NULL, "--ensemble", CLI_INT, &ensemble, "K",
         "average K models trained from seeds S..S+K-1 (default 1)"},
        {NULL, "--rank-weight", CLI_DOUBLE, &rank_weight, "W",
         "weight of the listwise ranking term beside the squared error (default 0)"},
        {NULL, "--validate", CLI_SWITCH, &validate, NULL,
         "for choosing the flags above: also keep one training problem in four out and score "
         "those instead of the held-out split"},
    };
    int rc = cli_parse("train", summary, argc, argv, flags, sizeof flags / sizeof flags[0]);
    if (rc != EXIT_OK)
        return rc < 0 ? EXIT_OK : rc;
    if (!db_path || !out_dir) {
        fprintf(stderr, "convsel train: --db and --out are required\n");
        return EXIT_USAGE;
    }
    if (!cli_train_options("train", epochs, hidden, seed, ensemble, rank_weight, &o))
        return EXIT_USAGE;
    struct stat st;
    if (stat(out_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "convsel train: --out %s: not a directory\n", out_dir);
        return EXIT_USAGE;
    }
    char err[PROBLEM_LIST_ERROR_MAX > PERFDB_ERROR_MAX ? PROBLEM_LIST_ERROR_MAX : PERFDB_ERROR_MAX];
    struct dataset d;
    if (!dataset_load(db_path, machine, &d, err, sizeof err)) {
        fprintf(stderr, "convsel train: %s\n", err);
        return EXIT_FAILED;
    }
    if (exclude) {
        const int removed = dataset_exclude_list(&d, exclude, err, sizeof err);
        if (removed < 0) {
            fprintf(stderr, "convsel train: --exclude %s\n", err);
            dataset_free(&d);
            return EXIT_USAGE;
        }
        printf("train: --exclude %s: %d problems left out\n", exclude, removed);
    }
    enum train_role *role = calloc((size_t)d.n + 1, sizeof *role);
    int n_train = 0;
    for (int i = 0; role && i < d.n; i++)
        n_train += (role[i] = role_of(d.v[i].key, validate)) == ROLE_TRAIN;
    char counts[512];
    measurement_counts_describe(&d.counts, counts, sizeof counts);
    printf("train: %s: %d problems (%d training, %d %s); %s\n", d.machine, d.n, n_train,
           d.n - n_train, validate ? "validation or held out" : "held out", counts);
    const bool have_limits = d.limits.present;
    if (!have_limits)
        printf("train: the database has no machine limits for %s (tuned before they were "
               "measured): estimates will not be floored\n",
               d.machine);
    struct trained t;
    rc = EXIT_FAILED;
    if (role == NULL) {
        fprintf(stderr, "convsel train: out of memory\n");
    } else if (!train_fit(&d, role, &o, have_limits ? &d.limits : NULL, print_line, NULL, &t, err,
                          sizeof err)) {
        fprintf(stderr, "convsel train: %s\n", err);
    } else {
        char model_path[RANKING_MODEL_PATH_MAX], meta_path[RANKING_MODEL_PATH_MAX];
        struct nn_model *loaded = NULL;
        char nerr[NN_ERROR_MAX];
        if (!train_write(&t, out_dir, model_path, sizeof model_path, err, sizeof err)) {
            fprintf(stderr, "convsel train: %s\n", err);
        } else if (ranking_model_path(out_dir, t.meta.target, RANKING_MODEL_METADATA, meta_path,
                                      sizeof meta_path),
                   printf("wrote %s\nwrote %s\n", model_path, meta_path),
                   nn_model_load_file(model_path, NULL, &loaded, nerr, sizeof nerr) != NN_OK) {
            fprintf(stderr, "convsel train: the written model does not load: %s\n", nerr);
        } else {
            printf("loaded back: %zu embedded test passed\n", nn_model_num_tests(loaded));
            nn_model_free(loaded);
            report(&d, role, &t, validate);
            rc = EXIT_OK;
        }
        train_free(&t);
    }
    free(role);
    dataset_free(&d);
    return rc;
}
