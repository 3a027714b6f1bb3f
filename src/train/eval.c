/* eval.c -- see eval.h. */
#include "train/eval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heur/policy.h"
#include "util/thread_pool.h"

void eval_report_free(struct eval_report *r) {
    free(r->est_err);
    memset(r, 0, sizeof *r);
}

static bool add_error(struct eval_report *r, double e) {
    if (r->n_est == r->cap_est) {
        const size_t cap = r->cap_est ? 2 * r->cap_est : 1024;
        double *grown = realloc(r->est_err, cap * sizeof *grown);
        if (grown == NULL)
            return false;
        r->est_err = grown, r->cap_est = cap;
    }
    r->est_err[r->n_est++] = e;
    return true;
}

static void note_worst(struct eval_report *r, struct eval_pick p) {
    const double regret = p.regret;
    int at = r->n_worst;
    if (at == EVAL_WORST && regret <= r->worst[EVAL_WORST - 1].regret)
        return;
    if (at == EVAL_WORST)
        at--;
    while (at > 0 && r->worst[at - 1].regret < regret) {
        r->worst[at] = r->worst[at - 1];
        at--;
    }
    r->worst[at] = p;
    if (r->n_worst < EVAL_WORST)
        r->n_worst++;
}

int eval_add(struct eval_report *r, const struct dataset *d, int i, eval_ranking_fn rank,
             void *ctx) {
    const struct ds_problem *q = &d->v[i];
    int ids[SOLVER_MAX];
    double est[SOLVER_MAX];
    for (int s = 0; s < SOLVER_MAX; s++)
        est[s] = -1;
    struct eval_extrapolation x = {-1, false};
    const int n = rank(ctx, q, d->threads, ids, est, &x);
    double regret = 1;
    const int pick = n > 0 ? ds_score_add(&r->score, q, ids, n, &regret) : -1;
    if (pick < 0)
        return -1;
    r->fastest[q->fastest]++;
    r->chosen[pick]++;
    r->extrapolated += x.feature >= 0;
    note_worst(r, (struct eval_pick){regret, i, pick, x});
    for (int s = 0; s < SOLVER_MAX; s++)
        if (est[s] > 0 && q->ms[s] > 0)
            add_error(r, fabs(log2(est[s] / q->ms[s])));
    return pick;
}

bool eval_report_merge(struct eval_report *a, const struct eval_report *b) {
    a->score.n += b->score.n;
    a->score.top1 += b->score.top1;
    a->score.top3 += b->score.top3;
    a->score.within5 += b->score.within5;
    a->score.log_regret += b->score.log_regret;
    a->extrapolated += b->extrapolated;
    for (int s = 0; s < SOLVER_MAX; s++)
        a->fastest[s] += b->fastest[s], a->chosen[s] += b->chosen[s];
    for (int i = 0; i < b->n_worst; i++)
        note_worst(a, b->worst[i]);
    for (size_t i = 0; i < b->n_est; i++)
        if (!add_error(a, b->est_err[i]))
            return false;
    return true;
}

static int by_value(const void *pa, const void *pb) {
    const double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

void eval_estimate_error(const struct eval_report *r, double *median, double *p95) {
    *median = *p95 = 0;
    if (r->n_est == 0)
        return;
    double *v = malloc(r->n_est * sizeof *v);
    if (v == NULL)
        return;
    memcpy(v, r->est_err, r->n_est * sizeof *v);
    qsort(v, r->n_est, sizeof *v, by_value);
    *median = v[r->n_est / 2];
    *p95 = v[(size_t)((double)(r->n_est - 1) * 0.95)];
    free(v);
}

int eval_rank_rules(void *ctx, const struct ds_problem *q, int threads, int ids[SOLVER_MAX],
                    double est_ms[SOLVER_MAX], struct eval_extrapolation *x) {
    (void)ctx, (void)threads, (void)est_ms, (void)x;
    return ds_rules_ranking(&q->p, ids);
}

static int from_policy(const struct policy_ranking *pr, int ids[SOLVER_MAX],
                       double est_ms[SOLVER_MAX], struct eval_extrapolation *x) {
    for (int i = 0; i < pr->n; i++)
        ids[i] = pr->order[i];
    for (int s = 0; s < SOLVER_MAX; s++)
        est_ms[s] = pr->ms[s];
    x->feature = pr->extrapolating ? pr->feature : -1;
    x->safe_pick = pr->extrapolating && !pr->scale_only;
    return pr->n;
}

int eval_rank_library(void *ctx, const struct ds_problem *q, int threads, int ids[SOLVER_MAX],
                      double est_ms[SOLVER_MAX], struct eval_extrapolation *x) {
    struct policy_ranking pr;
    if (!ranking_model_rank(ctx, &q->p, threads, true, &pr))
        return -1;
    return from_policy(&pr, ids, est_ms, x);
}

int eval_rank_trained(void *ctx, const struct ds_problem *q, int threads, int ids[SOLVER_MAX],
                      double est_ms[SOLVER_MAX], struct eval_extrapolation *x) {
    const struct trained *t = ctx;
    double log2_ms[SOLVER_MAX];
    train_predict(t, &q->p, threads, log2_ms);
    struct policy_ranking pr;
    policy_rank(&t->meta, &q->p, threads, true, log2_ms, &pr);
    return from_policy(&pr, ids, est_ms, x);
}

/* One fold of leave-one-family-out: trains without the family and scores
 * its layers. Folds share nothing but the (read-only) dataset, so they run
 * on threads of their own. */
struct fold {
    const char *family;
    int layers, trained;
    struct eval_report r;
    bool ok;
    char err[256];
};

struct folds {
    const struct dataset *d;
    const struct train_options *o;
    const struct machine_limits *limits;
    struct fold *v;
    int n;
};

static void run_fold(const struct folds *j, struct fold *f) {
    const struct dataset *d = j->d;
    enum train_role *role = malloc(((size_t)d->n + 1) * sizeof *role);
    if (role == NULL) {
        snprintf(f->err, sizeof f->err, "out of memory");
        return;
    }
    for (int i = 0; i < d->n; i++)
        role[i] = strcmp(d->v[i].family, f->family) == 0 ? ROLE_HELD_OUT : ROLE_TRAIN;
    struct trained t;
    if (train_fit(d, role, j->o, j->limits, NULL, NULL, &t, f->err, sizeof f->err)) {
        f->trained = t.trained_on;
        f->ok = true;
        for (int i = 0; i < d->n; i++)
            if (role[i] == ROLE_HELD_OUT && d->v[i].kind == DS_LAYER) {
                f->layers++;
                eval_add(&f->r, d, i, eval_rank_trained, &t);
            }
        train_free(&t);
    }
    free(role);
}

static int by_family(const void *a, const void *b) {
    return strcmp(((const struct fold *)a)->family, ((const struct fold *)b)->family);
}

static void fold_range(void *ctx, size_t begin, size_t end) {
    struct folds *j = ctx;
    for (size_t f = begin; f < end; f++)
        run_fold(j, &j->v[f]);
}

/* Whether `name` is one of the comma-separated names of `list`. */
static bool listed(const char *list, const char *name) {
    const size_t len = strlen(name);
    for (const char *at = list; *at;) {
        const size_t n = strcspn(at, ",");
        if (n == len && strncmp(at, name, n) == 0)
            return true;
        at += n + (at[n] == ',');
    }
    return false;
}

/* The first name of `only` that no family of j has, or NULL; its length in *len. */
static const char *unknown_family(const char *only, const struct fold *v, int n, size_t *len) {
    for (const char *at = only; *at;) {
        *len = strcspn(at, ",");
        bool found = false;
        for (int f = 0; f < n && !found; f++)
            found = strlen(v[f].family) == *len && strncmp(v[f].family, at, *len) == 0;
        if (!found)
            return at;
        at += *len + (at[*len] == ',');
    }
    return NULL;
}

bool eval_families(const struct dataset *d, const struct train_options *o,
                   const struct machine_limits *limits, const char *only, int jobs,
                   eval_family_fn fn, void *ctx, struct eval_report *overall, char *err,
                   size_t cap) {
    memset(overall, 0, sizeof *overall);
    struct folds j = {.d = d, .o = o, .limits = limits};
    j.v = calloc((size_t)d->n + 1, sizeof *j.v);
    if (j.v == NULL) {
        snprintf(err, cap, "out of memory");
        return false;
    }
    for (int i = 0; i < d->n; i++) {
        if (d->v[i].kind != DS_LAYER || !d->v[i].family[0])
            continue;
        bool seen = false;
        for (int f = 0; f < j.n && !seen; f++)
            seen = strcmp(j.v[f].family, d->v[i].family) == 0;
        if (!seen)
            j.v[j.n++].family = d->v[i].family;
    }
    if (j.n == 0) {
        snprintf(err, cap,
                 "no real layers with a family in the data (tune with --corpus, or give the corpus "
                 "with --corpus to eval)");
        free(j.v);
        return false;
    }
    size_t len = 0;
    const char *unknown = only ? unknown_family(only, j.v, j.n, &len) : NULL;
    if (unknown) {
        snprintf(err, cap, "no layers of a family '%.*s' in the data (%d families)", (int)len,
                 unknown, j.n);
        free(j.v);
        return false;
    }
    if (only) {
        int kept = 0;
        for (int f = 0; f < j.n; f++)
            if (listed(only, j.v[f].family))
                j.v[kept++] = j.v[f];
        j.n = kept;
    }
    qsort(j.v, (size_t)j.n, sizeof *j.v, by_family);
    if (jobs > j.n)
        jobs = j.n;
    /* no pool (one job, or it cannot be made): the folds run here, one by one */
    struct thread_pool *pool = jobs > 1 ? thread_pool_create(jobs) : NULL;
    thread_pool_parallel_for(pool, (size_t)j.n, fold_range, &j);
    thread_pool_destroy(pool);
    bool ok = true;
    for (int f = 0; f < j.n; f++) {
        struct fold *v = &j.v[f];
        if (ok && !v->ok) {
            snprintf(err, cap, "%s", v->err);
            ok = false;
        }
        if (ok && fn)
            fn(ctx, &(struct eval_family){v->family, v->layers, v->trained, &v->r});
        if (ok && !(ok = eval_report_merge(overall, &v->r)))
            snprintf(err, cap, "out of memory");
        eval_report_free(&v->r);
    }
    free(j.v);
    return ok;
}

void eval_format_score(const char *label, const struct ds_score *s, char *buf, size_t cap) {
    const double n = s->n ? s->n : 1;
    snprintf(buf, cap,
             "%-9s top1 = %d/%d (%.1f%%)  top3 = %d/%d (%.1f%%)  within 5%% = %d/%d (%.1f%%)  "
             "geomean regret = %.3f",
             label, s->top1, s->n, 100.0 * s->top1 / n, s->top3, s->n, 100.0 * s->top3 / n,
             s->within5, s->n, 100.0 * s->within5 / n, s->n ? exp(s->log_regret / s->n) : 1.0);
}
