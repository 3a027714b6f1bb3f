/* dataset.c -- see dataset.h. */
#include "dataset.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "heur/select.h"
#include "problem_csv.h"

struct raw {
    char *machine, *key;
    int solver;
    double ms;
};

struct loader {
    struct raw *v;
    size_t n, cap, ignored;
    const char *machine;
    bool out_of_memory;
};

static bool keep(void *ctx, const char *machine, const char *key, const char *solver, double ms) {
    struct loader *l = ctx;
    if (l->machine && strcmp(machine, l->machine) != 0)
        return true;
    const int id = solver_find(solver);
    if (id < 0 || !(ms > 0) || !isfinite(ms) || strlen(key) >= CONVSEL_PROBLEM_KEY_MAX) {
        l->ignored++;
        return true;
    }
    if (l->n == l->cap) {
        const size_t cap = l->cap ? 2 * l->cap : 4096;
        struct raw *grown = realloc(l->v, cap * sizeof *grown);
        if (!grown)
            return !(l->out_of_memory = true);
        l->v = grown, l->cap = cap;
    }
    struct raw r = {strdup(machine), strdup(key), id, ms};
    if (!r.machine || !r.key) {
        free(r.machine), free(r.key);
        return !(l->out_of_memory = true);
    }
    l->v[l->n++] = r;
    return true;
}

static int by_problem(const void *pa, const void *pb) {
    const struct raw *a = pa, *b = pb;
    const int c = strcmp(a->machine, b->machine);
    return c ? c : strcmp(a->key, b->key);
}

static void free_raw(struct loader *l) {
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i].machine), free(l->v[i].key);
    free(l->v);
}

/* Groups sorted records into problems; false when out of memory. */
static bool group(struct loader *l, struct dataset *d) {
    d->v = calloc(l->n ? l->n : 1, sizeof *d->v);
    if (!d->v)
        return false;
    for (size_t i = 0, j; i < l->n; i = j) {
        struct ds_problem *q = &d->v[d->n];
        char perr[PROBLEM_ERROR_MAX];
        for (j = i + 1; j < l->n && by_problem(&l->v[i], &l->v[j]) == 0; j++) {
        }
        if (problem_key_parse(l->v[i].key, &q->p, perr, sizeof perr) != CONVSEL_STATUS_SUCCESS) {
            d->ignored += j - i;
            continue;
        }
        snprintf(q->key, sizeof q->key, "%s", l->v[i].key);
        for (int s = 0; s < SOLVER_MAX; s++)
            q->ms[s] = -1;
        q->fastest = -1;
        for (size_t k = i; k < j; k++) {
            /* A solver the registry no longer offers for this problem (a
             * rule added since the tuning, e.g. one refusing a duplicate of
             * another solver's kernel) is not a contender: the library will
             * never rank it here, so it must not be a label either. */
            const int id = l->v[k].solver;
            if (!solver_get(id)->is_applicable(&q->p, NULL)) {
                d->inapplicable++;
                continue;
            }
            q->ms[id] = l->v[k].ms;
            if (q->fastest < 0 || l->v[k].ms < q->ms[q->fastest])
                q->fastest = id;
        }
        if (q->fastest >= 0)
            d->n++;
    }
    return true;
}

bool dataset_load(const char *db_path, const char *machine, struct dataset *out, char *err,
                  size_t err_cap) {
    memset(out, 0, sizeof *out);
    struct perfdb *db = perfdb_open(db_path, true, 0, err, err_cap);
    if (!db)
        return false;
    struct loader l = {.machine = machine};
    const int64_t read = perfdb_for_each(db, keep, &l, err, err_cap);
    perfdb_close(db);
    bool ok = read >= 0;
    if (ok && l.out_of_memory)
        ok = false, snprintf(err, err_cap, "%s: out of memory", db_path);
    if (ok && l.n > 0) /* qsort wants a valid pointer even for 0 elements */
        qsort(l.v, l.n, sizeof *l.v, by_problem);
    if (ok && l.n && strcmp(l.v[0].machine, l.v[l.n - 1].machine) != 0) {
        snprintf(err, err_cap,
                 "%s holds several machine signatures (%s ... %s): pick one with "
                 "--machine",
                 db_path, l.v[0].machine, l.v[l.n - 1].machine);
        ok = false;
    }
    if (ok && l.n == 0) {
        snprintf(err, err_cap, "%s: no measured problems%s%s", db_path,
                 machine ? " for machine " : "", machine ? machine : "");
        ok = false;
    }
    if (ok) {
        snprintf(out->machine, sizeof out->machine, "%s", l.v[0].machine);
        const char *t = strrchr(out->machine, '-');
        out->threads = t ? atoi(t + 1) : 1;
        if (out->threads < 1)
            out->threads = 1;
        out->ignored = l.ignored;
        if (!group(&l, out)) {
            snprintf(err, err_cap, "%s: out of memory", db_path);
            ok = false;
        }
    }
    free_raw(&l);
    if (!ok)
        dataset_free(out);
    return ok;
}

void dataset_free(struct dataset *d) {
    free(d->v);
    memset(d, 0, sizeof *d);
}

static uint64_t key_hash(const char *key) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const unsigned char *c = (const unsigned char *)key; *c; c++)
        h = (h ^ *c) * 1099511628211ull;
    return h;
}

bool dataset_is_test(const char *key) {
    return key_hash(key) % 5 == 0;
}

/* h / 5 does not depend on h % 5: the validation quarter is a fair sample
 * of the training problems. */
bool dataset_is_validation(const char *key) {
    const uint64_t h = key_hash(key);
    return h % 5 != 0 && h / 5 % 4 == 0;
}

int ds_score_add(struct ds_score *s, const struct ds_problem *q, const int *rank, int n_rank,
                 double *regret) {
    int pick = -1, seen = 0;
    for (int i = 0; i < n_rank && seen < 3; i++) {
        if (q->ms[rank[i]] < 0)
            continue;
        if (pick < 0)
            pick = rank[i];
        s->top3 += rank[i] == q->fastest;
        seen++;
    }
    if (pick < 0)
        return -1;
    s->n++;
    s->top1 += pick == q->fastest;
    *regret = q->ms[pick] / q->ms[q->fastest];
    s->log_regret += log(*regret);
    s->within5 += *regret <= 1.05;
    return pick;
}

int ds_rules_ranking(const struct conv_problem *p, int ids[SOLVER_MAX]) {
    struct heur_choice c[SOLVER_MAX];
    const int n = heur_rank_rules(p, c, SOLVER_MAX);
    for (int i = 0; i < n; i++)
        ids[i] = c[i].solver;
    return n;
}

void ds_score_print(const char *label, const struct ds_score *s) {
    const double n = s->n ? s->n : 1;
    printf("%-9s top1 = %d/%d (%.1f%%)  top3 = %d/%d (%.1f%%)  within 5%% = %d/%d (%.1f%%)  "
           "geomean regret = %.3f\n",
           label, s->top1, s->n, 100.0 * s->top1 / n, s->top3, s->n, 100.0 * s->top3 / n,
           s->within5, s->n, 100.0 * s->within5 / n, s->n ? exp(s->log_regret / s->n) : 1.0);
}

int dataset_exclude_csv(struct dataset *d, const char *command, const char *csv_path) {
    struct problem_row *rows = NULL;
    int n_rows = 0, removed = -1;
    if (problem_csv_read(command, csv_path, &rows, &n_rows) != EXIT_OK)
        return -1;
    char(*keys)[CONVSEL_PROBLEM_KEY_MAX] = calloc((size_t)n_rows + 1, sizeof *keys);
    convsel_handle_t h = NULL;
    if (keys == NULL || convsel_handle_create(&h) != CONVSEL_STATUS_SUCCESS) {
        fprintf(stderr, "convsel %s: out of memory\n", command);
        goto done;
    }
    for (int i = 0; i < n_rows; i++) {
        struct problem_descs pd;
        if (problem_descs_create(command, h, &rows[i].pf, &pd) != EXIT_OK) {
            fprintf(stderr, "  (%s, row %s)\n", csv_path, rows[i].name);
            goto done;
        }
        convsel_get_problem_key(h, pd.x, pd.w, pd.conv, pd.y, keys[i], sizeof keys[i], NULL);
        problem_descs_destroy(&pd);
    }
    removed = 0;
    int kept = 0;
    for (int i = 0; i < d->n; i++) {
        bool listed = false;
        for (int j = 0; j < n_rows && !listed; j++)
            listed = strcmp(d->v[i].key, keys[j]) == 0;
        if (listed)
            removed++;
        else
            d->v[kept++] = d->v[i];
    }
    d->n = kept;
done:
    convsel_handle_destroy(h);
    free(keys);
    free(rows);
    return removed;
}
