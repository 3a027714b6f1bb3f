/* db_snapshot.c -- the read-once database snapshot (see db_snapshot.h).
 * Which records count is measurement.c's rule, shared with the trainer.
 *
 * The database is optional: a missing default file is normal (nothing was
 * tuned) and silent; a file that is named by CONVSEL_DB but missing, or
 * that cannot be read, is reported once on stderr and ranking carries on
 * with the model or the rules. */
#include "heur/db_snapshot.h"

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/perfdb.h"
#include "heur/measurement.h"

#define MAX_ENTRIES (4u << 20)

#define MAX_MACHINES 16 /* machines whose weights mode and costs are kept */

static struct {
    struct db_entry *entries;
    size_t count;
    struct db_machine machines[MAX_MACHINES];
    int machine_count;
    char status[PATH_MAX + PERFDB_ERROR_MAX + 128];
} snap;

static pthread_once_t snap_once = PTHREAD_ONCE_INIT;

struct loader {
    size_t cap;
    struct measurement_counts counts;
    bool out_of_memory;
};

static bool keep(void *ctx, const struct perfdb_row *row) {
    struct loader *l = ctx;
    const int id = measurement_solver(row, &l->counts);
    if (id < 0)
        return true;
    if (snap.count == l->cap) {
        const size_t cap = l->cap ? 2 * l->cap : 1024;
        struct db_entry *grown =
            cap <= MAX_ENTRIES ? realloc(snap.entries, cap * sizeof *grown) : NULL;
        if (!grown) {
            l->out_of_memory = true;
            return false;
        }
        snap.entries = grown, l->cap = cap;
    }
    char *m = strdup(row->machine), *k = strdup(row->problem_key);
    if (!m || !k) {
        free(m);
        free(k);
        l->out_of_memory = true;
        return false;
    }
    snap.entries[snap.count++] = (struct db_entry){m, k, id, row->median_ms};
    return true;
}

static int by_key_then_time(const void *pa, const void *pb) {
    const struct db_entry *a = pa, *b = pb;
    int c = strcmp(a->machine, b->machine);
    if (c == 0)
        c = strcmp(a->problem_key, b->problem_key);
    if (c == 0)
        c = (a->median_ms > b->median_ms) - (a->median_ms < b->median_ms);
    return c;
}

static void drop_all(void) {
    for (size_t i = 0; i < snap.count; i++) {
        free((void *)snap.entries[i].machine);
        free((void *)snap.entries[i].problem_key);
    }
    free(snap.entries);
    snap.entries = NULL, snap.count = 0;
}

/* For each machine of the (sorted) entries: the weights mode its timings
 * were taken in and its per-call weights costs. A value that is missing
 * or malformed leaves the defaults: constant, no costs; a malformed one
 * is said once, on stderr (the snapshot loads once per process). */
static void load_machines(struct perfdb *db) {
    for (size_t i = 0; i < snap.count && snap.machine_count < MAX_MACHINES; i++) {
        if (i > 0 && strcmp(snap.entries[i].machine, snap.entries[i - 1].machine) == 0)
            continue;
        struct db_machine *m = &snap.machines[snap.machine_count++];
        char err[PERFDB_ERROR_MAX];
        struct machine_limits limits;
        m->machine = snap.entries[i].machine;
        m->weights_constant = true;
        if (perfdb_get_weights_mode(db, m->machine, &m->weights_constant, err, sizeof err) < 0)
            fprintf(stderr, "convsel: warning: %s; its timings are taken as constant-weights\n",
                    err);
        const int have = perfdb_get_limits(db, m->machine, &limits, err, sizeof err);
        if (have == 1)
            m->weights = limits.weights;
        else if (have < 0)
            fprintf(stderr, "convsel: warning: %s; per-call weights costs not used\n", err);
    }
}

static void load(void) {
    char path[PATH_MAX], err[PERFDB_ERROR_MAX];
    const char *named = getenv("CONVSEL_DB");
    if (!perfdb_default_path(path, sizeof path, err, sizeof err)) {
        snprintf(snap.status, sizeof snap.status, "none (%s)", err);
        return;
    }
    if (access(path, F_OK) != 0) {
        snprintf(snap.status, sizeof snap.status, "%s: absent", path);
        if (named && *named)
            fprintf(stderr, "convsel: warning: CONVSEL_DB=%s does not exist; ranking without it\n",
                    path);
        return;
    }
    /* A short busy timeout: the first ranking must not wait 10 s for a
     * writer holding a rollback journal's lock; it ranks without the file. */
    struct perfdb *db = perfdb_open(path, true, PERFDB_LIBRARY_BUSY_MS, err, sizeof err);
    struct loader l = {0};
    struct perfdb_scan scan;
    const int64_t read = db ? perfdb_for_each(db, keep, &l, &scan, err, sizeof err) : -1;
    if (read >= 0 && !l.out_of_memory && snap.count > 0) {
        qsort(snap.entries, snap.count, sizeof *snap.entries, by_key_then_time);
        load_machines(db);
    }
    perfdb_close(db);
    if (read < 0 || l.out_of_memory) {
        drop_all();
        if (l.out_of_memory)
            snprintf(err, sizeof err, "%.300s: out of memory after %zu records", path, snap.count);
        snprintf(snap.status, sizeof snap.status, "not used: %s", err);
        fprintf(stderr, "convsel: warning: %s; ranking without it\n", err);
        return;
    }
    measurement_counts_add_scan(&l.counts, &scan);
    char counts[512];
    measurement_counts_describe(&l.counts, counts, sizeof counts);
    snprintf(snap.status, sizeof snap.status, "%s: %s", path, counts);
}

size_t db_snapshot_find(const char *machine, const char *problem_key,
                        const struct db_entry **first) {
    pthread_once(&snap_once, load);
    const struct db_entry probe = {machine, problem_key, 0, -INFINITY};
    /* lower bound: the first entry not before (machine, key, -inf) */
    size_t lo = 0, hi = snap.count;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (by_key_then_time(&snap.entries[mid], &probe) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t n = 0;
    while (lo + n < snap.count && strcmp(snap.entries[lo + n].machine, machine) == 0 &&
           strcmp(snap.entries[lo + n].problem_key, problem_key) == 0)
        n++;
    *first = n ? &snap.entries[lo] : NULL;
    return n;
}

const struct db_machine *db_snapshot_machine(const char *machine) {
    pthread_once(&snap_once, load);
    for (int i = 0; i < snap.machine_count; i++)
        if (strcmp(snap.machines[i].machine, machine) == 0)
            return &snap.machines[i];
    return NULL;
}

const char *db_snapshot_status(void) {
    pthread_once(&snap_once, load);
    return snap.status;
}
