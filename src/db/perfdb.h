/* perfdb.h -- the performance database: measured solver times per problem
 * and machine, in SQLite.
 *
 * Nothing in the convolution path depends on it: every function reports
 * failure (with a message that names the file and what went wrong) and the
 * caller carries on without the database. Several processes may write the
 * same file at once (tuning shards): each write is one IMMEDIATE
 * transaction under a busy timeout, so writers queue instead of failing
 * with "database is locked", and no row is lost. */
#ifndef CONVSEL_DB_PERFDB_H
#define CONVSEL_DB_PERFDB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/problem.h"

#define PERFDB_ERROR_MAX 512
#define PERFDB_NAME_MAX 64
#define PERFDB_MACHINE_MAX 64

struct perfdb;

/* One measurement: a solver on a problem on a machine. */
struct perfdb_record {
    char machine[PERFDB_MACHINE_MAX]; /* perfdb_machine_signature */
    struct conv_problem problem;      /* validated */
    char solver[PERFDB_NAME_MAX];
    double median_ms, min_ms, max_ms; /* max/min is the spread */
    int runs;
    size_t workspace_bytes;
    int64_t timestamp; /* seconds since the epoch; 0 = now */
};

/* "avx512-2c-2t": vector ISA, online cores, threads the measurement used.
 * Results from one signature say nothing about another. */
void perfdb_machine_signature(int threads, char *buf, size_t cap);

/* The database path: $CONVSEL_DB, else $XDG_DATA_HOME/convsel/perf.db,
 * else $HOME/.local/share/convsel/perf.db. Returns false (with a message)
 * when none can be formed. Does not create anything. */
bool perfdb_default_path(char *buf, size_t cap, char *err, size_t err_cap);

/* Opens (creating when writable and absent) the database at path.
 * read_only opens without write access and never creates. busy_ms is how
 * long a statement waits for another process's lock (0 = the default,
 * 10 s). On failure returns NULL and a message in err. */
struct perfdb *perfdb_open(const char *path, bool read_only, int busy_ms, char *err,
                           size_t err_cap);
void perfdb_close(struct perfdb *db);

/* "wal" when write-ahead logging is on, else the rollback journal mode
 * the filesystem allowed ("delete"). */
const char *perfdb_journal_mode(const struct perfdb *db);

/* Inserts or replaces n records in one transaction: all or none. */
bool perfdb_put(struct perfdb *db, const struct perfdb_record *records, int n, char *err,
                size_t err_cap);

/* The fastest solver recorded for this problem key on this machine.
 * Returns 1 found, 0 not found, -1 error (message in err). */
int perfdb_best(struct perfdb *db, const char *machine, const char *problem_key,
                struct perfdb_record *out, char *err, size_t err_cap);

/* Whether any record exists for (machine, problem key): tuning skips
 * those. Returns 1, 0 or -1 like perfdb_best. */
int perfdb_has_problem(struct perfdb *db, const char *machine, const char *problem_key, char *err,
                       size_t err_cap);

/* Calls fn for every record (machine, problem key, solver, median ms),
 * in no particular order; stops early when fn returns false. Returns the
 * number of records visited, or -1 on error. */
typedef bool (*perfdb_visit_fn)(void *ctx, const char *machine, const char *problem_key,
                                const char *solver, double median_ms);
int64_t perfdb_for_each(struct perfdb *db, perfdb_visit_fn fn, void *ctx, char *err,
                        size_t err_cap);

/* Number of records, or -1 on error. */
int64_t perfdb_count(struct perfdb *db, char *err, size_t err_cap);

/* Copies every record of the database at src_path into db (replacing
 * equal keys) in one transaction; returns the rows copied or -1. */
int64_t perfdb_merge_from(struct perfdb *db, const char *src_path, char *err, size_t err_cap);

#endif
