/* measurement.h -- which database records count as measurements of a
 * solver, one rule for every reader: the library's snapshot
 * (db_snapshot.c) and the trainer's dataset (src/train/dataset.c).
 *
 * A record counts when it passed the database's own validation (a key that
 * parses, times in range: perfdb_for_each), names a solver this build has,
 * and that solver applies to the problem (a rule added since the tuning,
 * e.g. one refusing a duplicate of another solver's kernel, makes its old
 * records no contender and no label). Both readers count what they drop
 * the same way and describe it with measurement_counts_describe, so
 * `convsel conv`, `eval`, `train` and `tune` say the same thing about the
 * same file. */
#ifndef CONVSEL_HEUR_MEASUREMENT_H
#define CONVSEL_HEUR_MEASUREMENT_H

#include <stddef.h>
#include <stdint.h>

#include "db/perfdb.h"

struct measurement_counts {
    int64_t rows;         /* records in the file */
    int64_t used;         /* records taken */
    int64_t invalid;      /* key or times refused by the database's validation */
    int64_t unknown;      /* solvers this build does not have */
    int64_t inapplicable; /* solvers that no longer apply to their problem */
    char first_invalid[256];
};

/* The registry id of row's solver when the record counts, else -1 (and
 * the reason is counted in c). */
int measurement_solver(const struct perfdb_row *row, struct measurement_counts *c);

/* Adds a scan's totals (perfdb_for_each) to c. */
void measurement_counts_add_scan(struct measurement_counts *c, const struct perfdb_scan *scan);

/* "N records: U used, I invalid (first: ...), S of unknown solvers, A of
 * solvers that no longer apply" -- the parts that are zero left out. */
void measurement_counts_describe(const struct measurement_counts *c, char *buf, size_t cap);

#endif
