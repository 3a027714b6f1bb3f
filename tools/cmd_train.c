/* cmd_train.c -- `convsel train --db DB --out DIR`: fits the ranking model
 * (train_mlp.c) to one machine signature's measurements, held out one
 * problem in five (dataset_is_test), and writes DIR/<isa>.tn.model
 * (frugally-deep JSON with an embedded test) and DIR/<isa>_metadata.tn.model
 * (features.h), <isa> being the signature's first part (avx512-2c-2t ->
 * avx512): the library picks the model by the ISA of the CPU it runs on. The written model is then
 * loaded back through the runtime, which checks its embedded test, and
 * scored on the held-out problems beside the rules. Same data, same seed:
 * the same files. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "dataset.h"
#include "heur/features.h"
#include "nn/model.h"
#include "train_mlp.h"
#include "util/stats.h"

static const char summary[] =
    "Trains the ranking model on a performance database: an MLP from the problem's features\n"
    "to log2 of every solver's time, loss masked to the measured solvers, one problem in five\n"
    "held out. Writes OUT/<isa>.tn.model and OUT/<isa>_metadata.tn.model (<isa> from the\n"
    "machine signature: avx512, avx2 or generic; the library loads the one of its CPU), loads the\n"
    "model back (its embedded test must pass) and prints top1, top3 and geomean regret on\n"
    "the held-out problems for the model and for the rules.";

struct training {
    struct dataset d;
    bool validate;              /* --validate: train without the validation quarter, score it */
    int solver_of[MLP_MAX_OUT]; /* model output -> registry id */
    int outputs;
    float *x, *y;
    bool *mask;
    struct feature_stats stats;
};

/* What a problem is for: fitted, scored for choosing hyperparameters
 * (--validate), or scored as the held-out figure. */
enum role { ROLE_TRAIN, ROLE_VALIDATION, ROLE_HELD_OUT };

static enum role role_of(const struct training *t, const char *key) {
    if (dataset_is_test(key))
        return ROLE_HELD_OUT;
    return t->validate && dataset_is_validation(key) ? ROLE_VALIDATION : ROLE_TRAIN;
}

/* Builds normalized features and targets for every problem. */
static bool prepare(struct training *t) {
    bool used[SOLVER_MAX] = {false};
    for (int i = 0; i < t->d.n; i++)
        for (int s = 0; s < solver_count(); s++)
            used[s] |= t->d.v[i].ms[s] >= 0;
    for (int s = 0; s < solver_count(); s++)
        if (used[s])
            t->solver_of[t->outputs++] = s;
    const size_t n = (size_t)t->d.n;
    t->x = malloc(n * FEATURE_COUNT * sizeof *t->x);
    t->y = malloc(n * (size_t)t->outputs * sizeof *t->y);
    t->mask = malloc(n * (size_t)t->outputs * sizeof *t->mask);
    float *train_rows = malloc(n * FEATURE_COUNT * sizeof *train_rows);
    if (!t->x || !t->y || !t->mask || !train_rows) {
        free(train_rows);
        return false;
    }
    size_t n_train = 0;
    for (size_t i = 0; i < n; i++) {
        features_of(&t->d.v[i].p, t->d.threads, &t->x[i * FEATURE_COUNT]);
        if (role_of(t, t->d.v[i].key) == ROLE_TRAIN)
            memcpy(&train_rows[n_train++ * FEATURE_COUNT], &t->x[i * FEATURE_COUNT],
                   FEATURE_COUNT * sizeof(float));
        for (int o = 0; o < t->outputs; o++) {
            const double ms = t->d.v[i].ms[t->solver_of[o]];
            t->mask[i * t->outputs + o] = ms >= 0;
            t->y[i * t->outputs + o] = ms >= 0 ? (float)log2(ms) : 0.0f;
        }
    }
    feature_stats_compute(train_rows, n_train, &t->stats);
    free(train_rows);
    for (size_t i = 0; i < n; i++)
        features_normalize(&t->x[i * FEATURE_COUNT], &t->stats);
    return true;
}

/* Copies the rows of the training problems into contiguous arrays. */
static struct mlp_data training_rows(const struct training *t, float *x, float *y, bool *m) {
    struct mlp_data s = {.x = x, .y = y, .mask = m};
    for (int i = 0; i < t->d.n; i++) {
        if (role_of(t, t->d.v[i].key) != ROLE_TRAIN)
            continue;
        memcpy(&x[(size_t)s.count * FEATURE_COUNT], &t->x[(size_t)i * FEATURE_COUNT],
               FEATURE_COUNT * sizeof(float));
        memcpy(&y[(size_t)s.count * t->outputs], &t->y[(size_t)i * t->outputs],
               (size_t)t->outputs * sizeof(float));
        memcpy(&m[(size_t)s.count * t->outputs], &t->mask[(size_t)i * t->outputs],
               (size_t)t->outputs * sizeof(bool));
        s.count++;
    }
    return s;
}

/* Scores the model and the rules on the problems the model was not fitted
 * to: the held-out split, or with --validate only the validation quarter
 * (the held-out figure stays unseen while hyperparameters are chosen). */
static void evaluate(const struct training *t, const struct mlp *members, int count) {
    const enum role scored = t->validate ? ROLE_VALIDATION : ROLE_HELD_OUT;
    struct ds_score model[3] = {{0}}, rules = {0};
    double regret;
    for (int i = 0; i < t->d.n; i++) {
        const struct ds_problem *q = &t->d.v[i];
        float pred[MLP_MAX_OUT];
        mlp_ensemble_forward(members, count, &t->x[(size_t)i * FEATURE_COUNT], pred);
        double predicted[SOLVER_MAX]; /* by solver id */
        int ids[MLP_MAX_OUT];
        for (int o = 0; o < t->outputs; o++) {
            ids[o] = t->solver_of[o];
            predicted[ids[o]] = pred[o];
        }
        stats_order_by_time(predicted, ids, t->outputs);
        const enum role r = role_of(t, q->key);
        ds_score_add(&model[r], q, ids, t->outputs, &regret);
        if (r == scored) { /* the rules are reported beside the model there only */
            int rule_ids[SOLVER_MAX];
            const int n = ds_rules_ranking(&q->p, rule_ids);
            ds_score_add(&rules, q, rule_ids, n, &regret);
        }
    }
    printf("%s problems (%d):\n", t->validate ? "validation" : "held-out", model[scored].n);
    ds_score_print("model", &model[scored]);
    ds_score_print("rules", &rules);
    if (t->validate)
        printf("held-out problems (%d): not scored under --validate\n", model[ROLE_HELD_OUT].n);
    printf("training problems (%d):\n", model[ROLE_TRAIN].n);
    ds_score_print("model", &model[ROLE_TRAIN]);
}

static bool write_files(const struct training *t, const struct mlp *members, int count,
                        const char *dir, char *model_path, size_t cap) {
    struct model_metadata meta = {.stats = t->stats, .num_solvers = t->outputs};
    for (int o = 0; o < t->outputs; o++)
        snprintf(meta.solver_names[o], METADATA_NAME_MAX, "%s", solver_get(t->solver_of[o])->name);
    /* The ISA part of the signature names the model; the thread count is a feature. */
    snprintf(meta.target, sizeof meta.target, "%.*s", (int)strcspn(t->d.machine, "-"),
             t->d.machine);
    char meta_path[4200];
    snprintf(model_path, cap, "%s/%s.tn.model", dir, meta.target);
    snprintf(meta_path, sizeof meta_path, "%s/%s_metadata.tn.model", dir, meta.target);
    FILE *f = fopen(model_path, "w");
    bool ok = f && mlp_write_fdeep(members, count, f, &t->x[0]);
    if (f && fclose(f) != 0)
        ok = false;
    char *json = metadata_to_json(&meta);
    FILE *g = json ? fopen(meta_path, "w") : NULL;
    ok = ok && g && fputs(json, g) >= 0;
    if (g && fclose(g) != 0)
        ok = false;
    free(json);
    if (!ok)
        fprintf(stderr, "convsel train: cannot write %s or %s\n", model_path, meta_path);
    else
        printf("wrote %s\nwrote %s\n", model_path, meta_path);
    return ok;
}

int cmd_train(int argc, char **argv) {
    const char *db_path = NULL, *out_dir = NULL, *machine = NULL, *exclude = NULL;
    int64_t epochs = 300, hidden = 64, seed = 1, ensemble = 1;
    double rank_weight = 0;
    struct training t = {0};
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
        {NULL, "--validate", CLI_SWITCH, &t.validate, NULL,
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
    if (epochs < 1 || epochs > 100000 || hidden < 1 || hidden > MLP_MAX_HIDDEN || ensemble < 1 ||
        ensemble > MLP_MAX_MEMBERS || !(rank_weight >= 0 && rank_weight <= 100)) {
        fprintf(stderr,
                "convsel train: --epochs must be in 1..100000, --hidden in 1..%d, --ensemble "
                "in 1..%d and --rank-weight in 0..100\n",
                MLP_MAX_HIDDEN, MLP_MAX_MEMBERS);
        return EXIT_USAGE;
    }
    struct stat st;
    if (stat(out_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "convsel train: --out %s: not a directory\n", out_dir);
        return EXIT_USAGE;
    }
    char err[PERFDB_ERROR_MAX];
    if (!dataset_load(db_path, machine, &t.d, err, sizeof err)) {
        fprintf(stderr, "convsel train: %s\n", err);
        return EXIT_FAILED;
    }
    if (exclude) {
        const int removed = dataset_exclude_csv(&t.d, "train", exclude);
        if (removed < 0) {
            dataset_free(&t.d);
            return EXIT_USAGE;
        }
        printf("train: --exclude %s: %d problems left out\n", exclude, removed);
    }
    struct mlp members[MLP_MAX_MEMBERS] = {{0}};
    const int count = (int)ensemble;
    const size_t n = (size_t)t.d.n;
    float *xs = malloc(n * FEATURE_COUNT * sizeof *xs), *ys = malloc(n * MLP_MAX_OUT * sizeof *ys);
    bool *ms = malloc(n * MLP_MAX_OUT * sizeof *ms);
    rc = EXIT_FAILED;
    if (!xs || !ys || !ms || !prepare(&t)) {
        fprintf(stderr, "convsel train: out of memory\n");
        goto done;
    }
    const struct mlp_data train = training_rows(&t, xs, ys, ms);
    double mean = 0;
    long counted = 0;
    for (size_t i = 0; i < (size_t)train.count * t.outputs; i++)
        if (train.mask[i])
            mean += train.y[i], counted++;
    printf("train: %s: %d problems (%d training, %d %s), %d solvers, %zu records ignored, %zu of "
           "solvers that no longer apply\n",
           t.d.machine, t.d.n, train.count, t.d.n - train.count,
           t.validate ? "validation or held out" : "held out", t.outputs, t.d.ignored,
           t.d.inapplicable);
    if (train.count == 0) {
        fprintf(stderr, "convsel train: no training problems (all held out)\n");
        goto done;
    }
    for (int i = 0; i < count; i++) {
        const unsigned long long member_seed = (unsigned long long)(seed + i);
        if (!mlp_init(&members[i], FEATURE_COUNT, (int)hidden, t.outputs, member_seed,
                      counted ? (float)(mean / counted) : 0.0f)) {
            fprintf(stderr, "convsel train: out of memory\n");
            goto done;
        }
        const struct mlp_train_options opts = {
            .epochs = (int)epochs,
            .batch = 32,
            .lr = 2e-3f,
            .rank_weight = (float)rank_weight,
            .seed = member_seed,
        };
        const double loss = mlp_train(&members[i], &train, &opts);
        printf("train: model %d/%d (seed %llu): %lld epochs, training loss %.4f (mean squared "
               "error of log2 ms)\n",
               i + 1, count, member_seed, (long long)epochs, loss);
    }
    char model_path[4200];
    if (!write_files(&t, members, count, out_dir, model_path, sizeof model_path))
        goto done;
    struct nn_model *loaded = NULL;
    char nerr[NN_ERROR_MAX];
    if (nn_model_load_file(model_path, NULL, &loaded, nerr, sizeof nerr) != NN_OK) {
        fprintf(stderr, "convsel train: the written model does not load: %s\n", nerr);
        goto done;
    }
    printf("loaded back: %zu embedded test passed\n", nn_model_num_tests(loaded));
    nn_model_free(loaded);
    evaluate(&t, members, count);
    rc = EXIT_OK;
done:
    for (int i = 0; i < count; i++)
        mlp_free(&members[i]);
    free(xs), free(ys), free(ms);
    free(t.x), free(t.y), free(t.mask);
    dataset_free(&t.d);
    return rc;
}
