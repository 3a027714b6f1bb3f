/* dataset.c -- see dataset.h. */
#include "train/dataset.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heur/select.h"
#include "util/machine.h"

struct raw {
    char *machine, *key;
    int solver;
    double ms, min_ms;
};

struct loader {
    struct raw *v;
    size_t n, cap;
    const char *machine;
    struct measurement_counts counts;
    bool out_of_memory;
};

static bool keep(void *ctx, const struct perfdb_row *row) {
    struct loader *l = ctx;
    if (l->machine && strcmp(row->machine, l->machine) != 0)
        return true;
    const int id = measurement_solver(row, &l->counts);
    if (id < 0)
        return true;
    if (l->n == l->cap) {
        const size_t cap = l->cap ? 2 * l->cap : 4096;
        struct raw *grown = realloc(l->v, cap * sizeof *grown);
        if (!grown)
            return !(l->out_of_memory = true);
        l->v = grown, l->cap = cap;
    }
    struct raw r = {strdup(row->machine), strdup(row->problem_key), id, row->median_ms,
                    row->min_ms};
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
        for (j = i + 1; j < l->n && by_problem(&l->v[i], &l->v[j]) == 0; j++) {
        }
        /* the key parsed when it was read (perfdb_for_each) */
        problem_key_parse(l->v[i].key, &q->p, NULL, 0);
        snprintf(q->key, sizeof q->key, "%s", l->v[i].key);
        for (int s = 0; s < SOLVER_MAX; s++)
            q->ms[s] = q->min_ms[s] = -1;
        q->fastest = -1;
        for (size_t k = i; k < j; k++) {
            const int id = l->v[k].solver;
            q->ms[id] = l->v[k].ms;
            q->min_ms[id] = l->v[k].min_ms;
            if (q->fastest < 0 || l->v[k].ms < q->ms[q->fastest])
                q->fastest = id;
        }
        d->n++;
    }
    return true;
}

static int by_key(const void *a, const void *b) {
    return strcmp(((const struct ds_problem *)a)->key, ((const struct ds_problem *)b)->key);
}

static struct ds_problem *find(struct dataset *d, const char *key) {
    struct ds_problem probe;
    snprintf(probe.key, sizeof probe.key, "%s", key);
    return bsearch(&probe, d->v, (size_t)d->n, sizeof *d->v, by_key);
}

static bool mark_origin(void *ctx, const char *key, const char *network, const char *family,
                        const char *kind) {
    struct ds_problem *q = find(ctx, key);
    if (q) {
        q->kind = strcmp(kind, "layer") == 0 ? DS_LAYER : DS_PERTURBED;
        snprintf(q->network, sizeof q->network, "%s", network);
        snprintf(q->family, sizeof q->family, "%s", family);
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
    struct perfdb_scan scan;
    bool ok = perfdb_for_each(db, keep, &l, &scan, err, err_cap) >= 0;
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
        if (!machine_signature_parse(out->machine, NULL, 0, NULL, &out->threads))
            out->threads = 1;
        out->counts = l.counts;
        measurement_counts_add_scan(&out->counts, &scan);
        if (!group(&l, out)) {
            snprintf(err, err_cap, "%s: out of memory", db_path);
            ok = false;
        }
    }
    if (ok) /* by key already: the records were sorted by (machine, key) */
        ok = perfdb_for_each_origin(db, mark_origin, out, err, err_cap) >= 0;
    if (ok)
        ok = perfdb_get_limits(db, out->machine, &out->limits, err, err_cap) >= 0;
    perfdb_close(db);
    free_raw(&l);
    if (!ok)
        dataset_free(out);
    return ok;
}

void dataset_free(struct dataset *d) {
    free(d->v);
    memset(d, 0, sizeof *d);
}

/* The keys of a problem list, sorted. */
static char (*list_keys(const char *path, int *n, char *err, size_t cap))[CONVSEL_PROBLEM_KEY_MAX] {
    struct problem_list list = {0};
    if (!problem_list_read(path, &list, err, cap))
        return NULL;
    char(*keys)[CONVSEL_PROBLEM_KEY_MAX] = calloc((size_t)list.n + 1, sizeof *keys);
    if (keys == NULL)
        snprintf(err, cap, "%s: out of memory", path);
    for (int i = 0; keys && i < list.n; i++)
        problem_key_format(&list.rows[i].p, keys[i], sizeof keys[i]);
    *n = list.n;
    problem_list_free(&list);
    return keys;
}

int dataset_exclude_list(struct dataset *d, const char *path, char *err, size_t cap) {
    int n_keys = 0;
    char(*keys)[CONVSEL_PROBLEM_KEY_MAX] = list_keys(path, &n_keys, err, cap);
    if (keys == NULL)
        return -1;
    int removed = 0, kept = 0;
    for (int i = 0; i < d->n; i++) {
        bool listed = false;
        for (int j = 0; j < n_keys && !listed; j++)
            listed = strcmp(d->v[i].key, keys[j]) == 0;
        if (listed)
            removed++;
        else
            d->v[kept++] = d->v[i];
    }
    d->n = kept;
    free(keys);
    return removed;
}

int dataset_mark_corpus(struct dataset *d, const char *path, char *err, size_t cap) {
    struct problem_list list = {0};
    if (!problem_list_read(path, &list, err, cap))
        return -1;
    int found = 0;
    for (int i = 0; i < list.n; i++) {
        char key[CONVSEL_PROBLEM_KEY_MAX];
        problem_key_format(&list.rows[i].p, key, sizeof key);
        struct ds_problem *q = find(d, key);
        if (q == NULL)
            continue;
        found++;
        q->kind = DS_LAYER;
        snprintf(q->network, sizeof q->network, "%s", list.rows[i].network);
        snprintf(q->family, sizeof q->family, "%s", list.rows[i].family);
    }
    problem_list_free(&list);
    return found;
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
