/* train.c -- see train.h. */
#include "train/train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heur/policy.h"
#include "heur/ranking_model.h"
#include "util/file.h"
#include "util/machine.h"

/* The outputs: every solver measured on some problem, in registry order. */
static void choose_outputs(const struct dataset *d, struct trained *t) {
    bool used[SOLVER_MAX] = {false};
    for (int i = 0; i < d->n; i++)
        for (int s = 0; s < solver_count(); s++)
            used[s] |= d->v[i].ms[s] >= 0;
    t->outputs = 0;
    for (int s = 0; s < solver_count() && t->outputs < MLP_MAX_OUT; s++)
        if (used[s])
            t->solver_of[t->outputs++] = s;
}

/* Statistics and bounds of the training problems' raw features. */
static bool feature_summary(const struct dataset *d, const enum train_role *role,
                            struct trained *t) {
    float *rows = malloc(((size_t)d->n + 1) * FEATURE_COUNT * sizeof *rows);
    if (!rows)
        return false;
    size_t n = 0;
    struct feature_bounds *b = &t->meta.bounds, *kb = t->meta.kind_bounds;
    for (int f = 0; f < FEATURE_COUNT; f++) {
        b->min[f] = INFINITY, b->max[f] = -INFINITY;
        for (int k = 0; k < PROBLEM_KINDS; k++)
            kb[k].min[f] = INFINITY, kb[k].max[f] = -INFINITY;
    }
    for (int i = 0; i < d->n; i++) {
        if (role[i] != ROLE_TRAIN)
            continue;
        float *x = &rows[n++ * FEATURE_COUNT];
        features_of(&d->v[i].p, d->threads, t->meta.channel_block, x);
        struct feature_bounds *k = &kb[policy_kind(&d->v[i].p)];
        k->present = true;
        for (int f = 0; f < FEATURE_COUNT; f++) {
            b->min[f] = fminf(b->min[f], x[f]);
            b->max[f] = fmaxf(b->max[f], x[f]);
            k->min[f] = fminf(k->min[f], x[f]);
            k->max[f] = fmaxf(k->max[f], x[f]);
        }
    }
    b->present = n > 0;
    for (int k = 0; k < PROBLEM_KINDS; k++)
        if (!kb[k].present)
            memset(&kb[k], 0, sizeof kb[k]);
    feature_stats_compute(rows, n, &t->meta.stats);
    if (n > 0) {
        memcpy(t->test_x, rows, sizeof t->test_x);
        features_normalize(t->test_x, &t->meta.stats);
    }
    free(rows);
    t->trained_on = (int)n;
    return true;
}

static int by_double(const void *pa, const void *pb) {
    const double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* Per class of problem (policy_safe_class), the outputs ordered by the
 * 99th percentile of their regret on the training problems of that class
 * (heur/policy.h): solvers measured on fewer than 20 of them are left out. */
static bool safe_lists(const struct dataset *d, const enum train_role *role, struct trained *t) {
    double *regret = malloc(((size_t)d->n + 1) * sizeof *regret);
    if (!regret)
        return false;
    for (int cls = 0; cls < SAFE_CLASSES; cls++) {
        double p99[MLP_MAX_OUT];
        int outs[MLP_MAX_OUT], n_outs = 0;
        for (int o = 0; o < t->outputs; o++) {
            const int id = t->solver_of[o];
            size_t n = 0;
            for (int i = 0; i < d->n; i++) {
                const struct ds_problem *q = &d->v[i];
                if (role[i] == ROLE_TRAIN && policy_safe_class(&q->p) == cls && q->ms[id] > 0)
                    regret[n++] = q->ms[id] / q->ms[q->fastest];
            }
            if (n < 20)
                continue;
            qsort(regret, n, sizeof *regret, by_double);
            p99[o] = regret[(size_t)((double)(n - 1) * 0.99)];
            outs[n_outs++] = o;
        }
        for (int a = 1; a < n_outs; a++) /* insertion sort by p99 */
            for (int b = a; b > 0 && p99[outs[b]] < p99[outs[b - 1]]; b--) {
                const int tmp = outs[b];
                outs[b] = outs[b - 1];
                outs[b - 1] = tmp;
            }
        t->meta.safe_count[cls] = n_outs;
        memcpy(t->meta.safe[cls], outs, (size_t)n_outs * sizeof outs[0]);
    }
    free(regret);
    return true;
}

/* The envelope (features.h): bins of log2 floor ms from ENVELOPE_LOG2_MIN,
 * ENVELOPE_WIDTH wide; a bin's range needs ENVELOPE_MIN_COUNT measurements
 * of the solver. */
#define ENVELOPE_LOG2_MIN -20.0f
#define ENVELOPE_WIDTH 1.0f
#define ENVELOPE_BINS 32
#define ENVELOPE_MIN_COUNT 20

/* Per output and bin, the 1st and 99th percentiles of log2(measured /
 * floor) over the training problems; bins with too few take the nearest
 * filled bin's range. Without limits there is no floor, and no envelope. */
static bool estimate_envelope(const struct dataset *d, const enum train_role *role,
                              struct trained *t) {
    struct estimate_envelope *e = &t->meta.envelope;
    memset(e, 0, sizeof *e);
    if (!t->meta.limits.present)
        return true;
    e->log2_min = ENVELOPE_LOG2_MIN, e->width = ENVELOPE_WIDTH, e->bins = ENVELOPE_BINS;
    double *r = malloc(2 * ((size_t)d->n + 1) * sizeof *r); /* the solver's, then a bin's */
    int *bin = malloc(((size_t)d->n + 1) * sizeof *bin);
    if (!r || !bin) {
        free(r), free(bin);
        return false;
    }
    for (int o = 0; o < t->outputs; o++) {
        const int id = t->solver_of[o];
        const struct solver *s = solver_get(id);
        size_t n = 0;
        for (int i = 0; i < d->n; i++) {
            const struct ds_problem *q = &d->v[i];
            const double floor = policy_floor_ms(&t->meta.limits, &q->p, s);
            if (role[i] != ROLE_TRAIN || !(q->ms[id] > 0) || !(floor > 0))
                continue;
            bin[n] = policy_envelope_bin(e, floor);
            r[n++] = log2(q->ms[id] / floor);
        }
        bool filled[ENVELOPE_BINS] = {false};
        for (int b = 0; b < ENVELOPE_BINS; b++) {
            size_t m = 0;
            for (size_t i = 0; i < n; i++)
                if (bin[i] == b)
                    r[n + m++] = r[i];
            if (m < ENVELOPE_MIN_COUNT)
                continue;
            qsort(&r[n], m, sizeof *r, by_double);
            e->lo[id][b] = (float)r[n + (size_t)((double)(m - 1) * 0.01)];
            e->hi[id][b] = (float)r[n + (size_t)((double)(m - 1) * 0.99)];
            filled[b] = e->has[id] = true;
        }
        for (int b = 0; e->has[id] && b < ENVELOPE_BINS; b++) {
            int near = -1;
            for (int dist = 0; near < 0; dist++)
                near = b - dist >= 0 && filled[b - dist]              ? b - dist
                       : b + dist < ENVELOPE_BINS && filled[b + dist] ? b + dist
                                                                      : -1;
            e->lo[id][b] = e->lo[id][near], e->hi[id][b] = e->hi[id][near];
        }
    }
    free(r), free(bin);
    e->present = true;
    return true;
}

bool train_fit(const struct dataset *d, const enum train_role *role, const struct train_options *o,
               const struct machine_limits *limits, train_log_fn log, void *ctx, struct trained *t,
               char *err, size_t cap) {
    memset(t, 0, sizeof *t);
    choose_outputs(d, t);
    t->meta.channel_block = features_channel_block(d->machine); /* before any features_of */
    if (!feature_summary(d, role, t)) {
        snprintf(err, cap, "out of memory");
        return false;
    }
    if (t->trained_on == 0) {
        snprintf(err, cap, "no training problems");
        return false;
    }
    t->meta.num_solvers = t->outputs;
    for (int i = 0; i < t->outputs; i++)
        snprintf(t->meta.solver_names[i], METADATA_NAME_MAX, "%s",
                 solver_get(t->solver_of[i])->name);
    /* The ISA part of the signature names the model; the thread count is a feature. */
    if (!machine_signature_parse(d->machine, t->meta.target, sizeof t->meta.target, NULL, NULL))
        snprintf(t->meta.target, sizeof t->meta.target, "%.*s", (int)strcspn(d->machine, "-"),
                 d->machine); /* dataset_load refuses such signatures; kept total */
    if (limits)
        t->meta.limits = *limits;
    if (!safe_lists(d, role, t) || !estimate_envelope(d, role, t)) {
        snprintf(err, cap, "out of memory");
        return false;
    }
    const size_t n = (size_t)t->trained_on, outs = (size_t)t->outputs;
    float *x = malloc(n * FEATURE_COUNT * sizeof *x), *y = malloc(n * outs * sizeof *y);
    bool *mask = malloc(n * outs * sizeof *mask);
    bool ok = x && y && mask;
    struct mlp_data data = {.x = x, .y = y, .mask = mask};
    double mean = 0;
    long counted = 0;
    for (int i = 0; ok && i < d->n; i++) {
        if (role[i] != ROLE_TRAIN)
            continue;
        const size_t r = (size_t)data.count++;
        features_of(&d->v[i].p, d->threads, t->meta.channel_block, &x[r * FEATURE_COUNT]);
        features_normalize(&x[r * FEATURE_COUNT], &t->meta.stats);
        for (size_t j = 0; j < outs; j++) {
            const double ms = d->v[i].ms[t->solver_of[j]];
            mask[r * outs + j] = ms >= 0;
            y[r * outs + j] = ms >= 0 ? (float)log2(ms) : 0.0f;
            if (ms >= 0)
                mean += y[r * outs + j], counted++;
        }
    }
    t->count = o->ensemble;
    for (int i = 0; ok && i < o->ensemble; i++) {
        const unsigned long long seed = o->seed + (unsigned long long)i;
        if (!mlp_init(&t->members[i], FEATURE_COUNT, o->hidden, t->outputs, seed,
                      counted ? (float)(mean / counted) : 0.0f)) {
            ok = false;
            break;
        }
        const struct mlp_train_options opts = {.epochs = o->epochs,
                                               .batch = 32,
                                               .lr = 2e-3f,
                                               .rank_weight = o->rank_weight,
                                               .seed = seed};
        const double loss = mlp_train(&t->members[i], &data, &opts);
        if (log) {
            char line[160];
            snprintf(line, sizeof line,
                     "model %d/%d (seed %llu): %d epochs, training loss %.4f (mean squared error "
                     "of log2 ms)",
                     i + 1, o->ensemble, seed, o->epochs, loss);
            log(ctx, line);
        }
    }
    free(x), free(y), free(mask);
    if (!ok) {
        train_free(t);
        snprintf(err, cap, "out of memory");
    }
    return ok;
}

void train_free(struct trained *t) {
    for (int i = 0; i < MLP_MAX_MEMBERS; i++)
        mlp_free(&t->members[i]);
    t->count = 0;
}

void train_predict(const struct trained *t, const struct conv_problem *p, int threads,
                   double log2_ms[SOLVER_MAX]) {
    float x[FEATURE_COUNT], y[MLP_MAX_OUT];
    policy_model_input(&t->meta, p, threads, x);
    mlp_ensemble_forward(t->members, t->count, x, y);
    for (int id = 0; id < SOLVER_MAX; id++)
        log2_ms[id] = NAN;
    for (int o = 0; o < t->outputs; o++)
        log2_ms[t->solver_of[o]] = y[o];
}

bool train_write(const struct trained *t, const char *dir, char *model_path, size_t path_cap,
                 char *err, size_t cap) {
    char meta_path[RANKING_MODEL_PATH_MAX];
    if (!ranking_model_path(dir, t->meta.target, RANKING_MODEL_NET, model_path, path_cap) ||
        !ranking_model_path(dir, t->meta.target, RANKING_MODEL_METADATA, meta_path,
                            sizeof meta_path)) {
        snprintf(err, cap, "output directory path too long (%zu bytes)", strlen(dir));
        return false;
    }
    FILE *f = file_open_write(model_path, NULL, err, cap);
    if (f == NULL)
        return false;
    bool ok = mlp_write_fdeep(t->members, t->count, f, t->test_x);
    if (fclose(f) != 0)
        ok = false;
    char *json = ok ? metadata_to_json(&t->meta) : NULL;
    FILE *g = json ? file_open_write(meta_path, NULL, err, cap) : NULL;
    if (ok && json == NULL)
        snprintf(err, cap, "out of memory");
    ok = ok && g && fputs(json, g) >= 0;
    if (g && fclose(g) != 0)
        ok = false;
    free(json);
    if (!ok && g)
        snprintf(err, cap, "cannot write %s or %s", model_path, meta_path);
    return ok;
}
