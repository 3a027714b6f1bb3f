/* db_snapshot.h -- the performance database as the selection path sees
 * it: read once per process, at the first ranking, into an immutable
 * sorted array that every thread searches without locks.
 *
 * Why a snapshot and not a query per call: a workspace query and the
 * convolution that follows must pick the same solver, and a tuning run
 * writing the file meanwhile must not change that; and a ranking must not
 * cost an SQLite statement. Measurements written later are seen by the
 * next process. */
#ifndef CONVSEL_HEUR_DB_SNAPSHOT_H
#define CONVSEL_HEUR_DB_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>

#include "util/peak.h"

struct db_entry {
    const char *machine;
    const char *problem_key;
    int solver; /* registry id; records of solvers this build lacks are dropped */
    double median_ms;
};

/* The measurements of one problem on one machine, fastest first (n may be
 * 0). The entries live until the process exits. */
size_t db_snapshot_find(const char *machine, const char *problem_key,
                        const struct db_entry **first);

/* What the timings of one machine are: taken with constant weights or
 * per-call ones (perfdb_get_weights_mode; constant when not recorded),
 * and what per-call weights cost each solver there (count 0: unknown). */
struct db_machine {
    const char *machine;
    bool weights_constant;
    struct weights_costs weights;
};

/* The machine's record, or NULL when the database has no timings of it. */
const struct db_machine *db_snapshot_machine(const char *machine);

/* One line on the database's state for the CLI: "PATH: N records",
 * "PATH: absent", or the reason it was not used. */
const char *db_snapshot_status(void);

#endif
