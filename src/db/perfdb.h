/* perfdb.h -- the performance database: measured solver times per problem
 * and machine, in SQLite.
 *
 * Nothing in the convolution path depends on it: every function reports
 * failure (with a message that names the file and what went wrong) and the
 * caller carries on without the database. Several processes may write the
 * same file at once (tuning shards): each write is one IMMEDIATE
 * transaction under a busy timeout, so writers queue instead of failing
 * with "database is locked", and no row is lost.
 *
 * The file is input like any other: it is opened only when it is a
 * regular file; it is written only when it is empty or a convsel database
 * of a schema this build knows (1, upgraded in place, or 2); it is checked
 * for corruption (PRAGMA quick_check) when opened; and every record read
 * passes one validation (perfdb_times_valid and the key's grammar), the
 * same for the library, `convsel eval`, `train` and `tune`. */
#ifndef CONVSEL_DB_PERFDB_H
#define CONVSEL_DB_PERFDB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/problem.h"
#include "util/machine.h"
#include "util/peak.h"

#define PERFDB_ERROR_MAX 768
#define PERFDB_NAME_MAX 64
#define PERFDB_MACHINE_MAX MACHINE_SIGNATURE_MAX
#define PERFDB_SCHEMA_VERSION 2

/* How long the library's reads wait for another process's lock: a
 * ranking must not stall a convolution (the tools wait up to 10 s). */
#define PERFDB_LIBRARY_BUSY_MS 100

/* A measured time is valid in (0, PERFDB_MAX_MS] ms: an hour. Anything
 * else (text, NaN, 1e308, 0) is a damaged or hand-edited row. */
#define PERFDB_MAX_MS 3.6e6

struct perfdb;

/* One measurement: a solver on a problem on a machine. */
struct perfdb_record {
    char machine[PERFDB_MACHINE_MAX]; /* machine_signature */
    struct conv_problem problem;      /* validated */
    char solver[PERFDB_NAME_MAX];
    double median_ms, min_ms, max_ms; /* max/min is the spread */
    int runs;
    size_t workspace_bytes;
    int64_t timestamp; /* seconds since the epoch; 0 = now */
};

/* The database path: $CONVSEL_DB, else $XDG_DATA_HOME/convsel/perf.db,
 * else $HOME/.local/share/convsel/perf.db. Returns false (with a message)
 * when none can be formed. Does not create anything. */
bool perfdb_default_path(char *buf, size_t cap, char *err, size_t err_cap);

/* Opens the database at path. read_only: never writes or creates; a WAL
 * database in a directory this process cannot write is opened immutable
 * (it cannot change under us there). Otherwise creates the file when
 * absent, and refuses (without writing a byte) a file that is not empty
 * and not a convsel database of a known schema. busy_ms is how long a
 * statement waits for another process's lock (0 = 10 s). On failure
 * returns NULL and a message in err. */
struct perfdb *perfdb_open(const char *path, bool read_only, int busy_ms, char *err,
                           size_t err_cap);
void perfdb_close(struct perfdb *db);

/* "wal" when write-ahead logging is on, else the rollback journal mode
 * the filesystem allowed ("delete"); "... (immutable)" when opened so. */
const char *perfdb_journal_mode(const struct perfdb *db);

/* The schema version of the file (1 or 2) as opened. */
int perfdb_schema_version(const struct perfdb *db);

/* Whether (median, min, max, runs) make a valid measurement: median in
 * (0, PERFDB_MAX_MS], min <= median <= max, runs >= 1. False with the
 * reason in why (may be NULL). */
bool perfdb_times_valid(double median_ms, double min_ms, double max_ms, int runs, char *why,
                        size_t cap);

/* Inserts or replaces n records in one transaction: all or none. A record
 * that fails perfdb_times_valid, or has no solver or machine, is refused;
 * min_ms = max_ms = 0 means "only the median is known" (stored as the
 * median), runs = 0 one run. */
bool perfdb_put(struct perfdb *db, const struct perfdb_record *records, int n, char *err,
                size_t err_cap);

/* The same, but first deletes every record of the records' (machine,
 * problem), in the same transaction: a problem measured again keeps no
 * record of a solver that did not run this time. All n records must share
 * one machine and problem (refused otherwise); n >= 1. */
bool perfdb_replace_problem(struct perfdb *db, const struct perfdb_record *records, int n,
                            char *err, size_t err_cap);

/* Where a tuned problem comes from: a real layer of a network (kind
 * "layer"), or a perturbation of one ("perturbed"). Recorded once per
 * problem key (the first origin stays); `convsel eval` leaves families out
 * by it. */
bool perfdb_put_origin(struct perfdb *db, const struct conv_problem *p, const char *network,
                       const char *family, const char *kind, char *err, size_t err_cap);

/* Calls fn(ctx, key, network, family, kind) for every origin row; returns
 * the rows visited or -1. A schema 1 file has none. */
typedef bool (*perfdb_origin_fn)(void *ctx, const char *problem_key, const char *network,
                                 const char *family, const char *kind);
int64_t perfdb_for_each_origin(struct perfdb *db, perfdb_origin_fn fn, void *ctx, char *err,
                               size_t err_cap);

/* One value of the meta table: put replaces; get returns 1 found (a TEXT
 * value shorter than cap), 0 not there (or not such a value), -1 error. */
bool perfdb_put_meta(struct perfdb *db, const char *key, const char *value, char *err,
                     size_t err_cap);
int perfdb_get_meta(struct perfdb *db, const char *key, char *value, size_t cap, char *err,
                    size_t err_cap);

/* Whether `machine`'s timings were taken with constant weights (tune's
 * default) or per-call ones, kept as "weights/<machine>": get returns 1
 * (*constant set), 0 not recorded (databases from before it: constant,
 * the only mode tune had by default), -1 error (a value other than those
 * two included, named in err). */
int perfdb_get_weights_mode(struct perfdb *db, const char *machine, bool *constant, char *err,
                            size_t err_cap);
bool perfdb_put_weights_mode(struct perfdb *db, const char *machine, bool constant, char *err,
                             size_t err_cap);

/* The machine's limits (util/peak.h) measured when `machine` was tuned,
 * kept in the meta table as "limits/<machine>". put replaces; get returns
 * 1 found, 0 not there, -1 error (a row that is not what put writes
 * included, named in err). */
bool perfdb_put_limits(struct perfdb *db, const char *machine, const struct machine_limits *l,
                       char *err, size_t err_cap);
int perfdb_get_limits(struct perfdb *db, const char *machine, struct machine_limits *out, char *err,
                      size_t err_cap);

/* The scale `machine`'s timings were taken at: tune's calibration
 * workload (tune/tune.c) timed when the first of them was, in ms, and
 * when (Unix seconds), kept as "calibration/<machine>" ("<ms> <seconds>").
 * A later run reading it much faster or slower is on a machine that has
 * changed (another host of the same signature, a throttled or contended
 * host), and its timings would not compare with the stored ones. put
 * replaces; get returns 1 found, 0 not there, -1 error, also for a value
 * that is not one (named in err: a hand-edited row is not guessed at). */
struct perfdb_calibration {
    double ms;
    int64_t at;
};
bool perfdb_put_calibration(struct perfdb *db, const char *machine,
                            const struct perfdb_calibration *c, char *err, size_t err_cap);
int perfdb_get_calibration(struct perfdb *db, const char *machine, struct perfdb_calibration *out,
                           char *err, size_t err_cap);

/* The fastest solver recorded for this problem key on this machine.
 * Returns 1 found, 0 not found, -1 error (message in err). */
int perfdb_best(struct perfdb *db, const char *machine, const char *problem_key,
                struct perfdb_record *out, char *err, size_t err_cap);

/* Whether any record exists for (machine, problem key). Returns 1, 0 or
 * -1 like perfdb_best: perfdb_problem_newest's answer, without the time. */
int perfdb_has_problem(struct perfdb *db, const char *machine, const char *problem_key, char *err,
                       size_t err_cap);

/* Whether the problem has records (1, 0, or -1 on error), and *newest =
 * their latest timestamp (Unix seconds) when it has: tuning skips a
 * problem it holds unless every record is older than its cut-off. */
int perfdb_problem_newest(struct perfdb *db, const char *machine, const char *problem_key,
                          int64_t *newest, char *err, size_t err_cap);

/* One valid record as perfdb_for_each gives it. */
struct perfdb_row {
    const char *machine, *problem_key, *solver;
    const struct conv_problem *problem; /* the key, parsed */
    double median_ms, min_ms, max_ms;
    int runs;
};

/* What a scan found besides the valid records. */
struct perfdb_scan {
    int64_t rows;            /* every record in the file */
    int64_t invalid;         /* refused: a key that does not parse, or invalid times */
    char first_invalid[256]; /* the first one, described */
};

/* Calls fn for every valid record, in no particular order; stops early
 * when fn returns false. scan (may be NULL) counts the rest. Returns the
 * number of records read, or -1 on error. */
typedef bool (*perfdb_visit_fn)(void *ctx, const struct perfdb_row *row);
int64_t perfdb_for_each(struct perfdb *db, perfdb_visit_fn fn, void *ctx, struct perfdb_scan *scan,
                        char *err, size_t err_cap);

/* Number of records, or -1 on error. */
int64_t perfdb_count(struct perfdb *db, char *err, size_t err_cap);

/* Copies every record (and origin) of the database at src_path into db
 * (replacing equal keys) in one transaction; returns the rows copied or
 * -1. The same file as db's own (by identity, not name) is refused. */
int64_t perfdb_merge_from(struct perfdb *db, const char *src_path, char *err, size_t err_cap);

/* The path db was opened with. */
const char *perfdb_path(const struct perfdb *db);

#endif
