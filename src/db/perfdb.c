/* perfdb.c -- the SQLite performance database (see perfdb.h).
 *
 * The problem is stored twice on purpose: the canonical key is the lookup
 * (exact match, one index probe), the separate fields are for training and
 * for people querying the file with sqlite3. */
#include "db/perfdb.h"

#include <limits.h>
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "convsel/convsel.h"
#include "util/file.h"

#define DEFAULT_BUSY_MS 10000
#define STR2(x) #x
#define STR(x) STR2(x)
/* The version of this build, written with every record (the header's
 * macros: db does not call into the API layer). */
#define VERSION_TEXT                                                                               \
    STR(CONVSEL_VERSION_MAJOR) "." STR(CONVSEL_VERSION_MINOR) "." STR(CONVSEL_VERSION_PATCH)

struct perfdb {
    sqlite3 *sql;
    char path[PATH_MAX];
    char journal[32];
    int version; /* schema version of the file */
};

/* The perf columns every schema has, in table order; schema 2 appends
 * direction and dtype (room for backward passes and bf16: the key already
 * ends in the data type and direction, these make them queryable). */
#define PERF_COLUMNS_V1                                                                            \
    "machine, problem, solver, n, c, h, w, k, r, s, pad_h, pad_w, stride_h, stride_w, dil_h, "     \
    "dil_w, groups, layout, filter_layout, median_ms, min_ms, max_ms, runs, workspace, version, "  \
    "timestamp"
#define PERF_COLUMNS_V2 PERF_COLUMNS_V1 ", direction, dtype"

static const char schema_v2[] =
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "INSERT INTO meta VALUES('schema_version', '2');"
    "CREATE TABLE perf("
    " machine TEXT NOT NULL, problem TEXT NOT NULL, solver TEXT NOT NULL,"
    " n INTEGER, c INTEGER, h INTEGER, w INTEGER, k INTEGER, r INTEGER, s INTEGER,"
    " pad_h INTEGER, pad_w INTEGER, stride_h INTEGER, stride_w INTEGER,"
    " dil_h INTEGER, dil_w INTEGER, groups INTEGER, layout TEXT, filter_layout TEXT,"
    " median_ms REAL NOT NULL, min_ms REAL, max_ms REAL, runs INTEGER, workspace INTEGER,"
    " version TEXT, timestamp INTEGER,"
    " direction TEXT NOT NULL DEFAULT 'F', dtype TEXT NOT NULL DEFAULT 'FP32',"
    " PRIMARY KEY(machine, problem, solver));"
    "CREATE TABLE origin(problem TEXT PRIMARY KEY, network TEXT NOT NULL, family TEXT NOT NULL,"
    " kind TEXT NOT NULL);";

/* Schema 1 -> 2, in place: the new columns (with their defaults, which
 * are what every schema 1 row is) and the origin table. */
static const char upgrade_v1[] =
    "ALTER TABLE perf ADD COLUMN direction TEXT NOT NULL DEFAULT 'F';"
    "ALTER TABLE perf ADD COLUMN dtype TEXT NOT NULL DEFAULT 'FP32';"
    "CREATE TABLE origin(problem TEXT PRIMARY KEY, network TEXT NOT NULL, family TEXT NOT NULL,"
    " kind TEXT NOT NULL);"
    "UPDATE meta SET value = '2' WHERE key = 'schema_version';";

static void say(char *err, size_t cap, const char *fmt, ...) {
    if (!err || cap == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
}

/* "<path>: <what>: <sqlite's words>" -- names the file, the step and the cause. */
static void say_sql(const struct perfdb *db, char *err, size_t cap, const char *what) {
    say(err, cap, "performance database %s: %s: %s", db->path, what, sqlite3_errmsg(db->sql));
}

bool perfdb_default_path(char *buf, size_t cap, char *err, size_t err_cap) {
    const char *env = getenv("CONVSEL_DB");
    int n;
    if (env && *env)
        n = snprintf(buf, cap, "%s", env);
    else if (getenv("XDG_DATA_HOME") && *getenv("XDG_DATA_HOME"))
        n = snprintf(buf, cap, "%s/convsel/perf.db", getenv("XDG_DATA_HOME"));
    else if (getenv("HOME") && *getenv("HOME"))
        n = snprintf(buf, cap, "%s/.local/share/convsel/perf.db", getenv("HOME"));
    else {
        say(err, err_cap, "no performance database path: set CONVSEL_DB (or HOME)");
        return false;
    }
    if (n < 0 || (size_t)n >= cap) {
        say(err, err_cap, "performance database path too long (%d characters)", n);
        return false;
    }
    return true;
}

static bool exec(struct perfdb *db, const char *sql, const char *what, char *err, size_t cap) {
    if (sqlite3_exec(db->sql, sql, NULL, NULL, NULL) == SQLITE_OK)
        return true;
    say_sql(db, err, cap, what);
    return false;
}

/* Runs a one-value query; *text gets the value (copied, "" when NULL).
 * Returns the sqlite3_step code (SQLITE_ROW on success). */
static int query_text(struct perfdb *db, const char *sql, char *text, size_t cap) {
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        const unsigned char *v = sqlite3_column_text(st, 0);
        snprintf(text, cap, "%s", v ? (const char *)v : "");
    }
    sqlite3_finalize(st);
    return rc;
}

/* Runs a journal_mode pragma and keeps the mode it reports. */
static bool journal_pragma(struct perfdb *db, const char *pragma, char *err, size_t cap) {
    char mode[32] = "";
    if (query_text(db, pragma, mode, sizeof mode) != SQLITE_ROW) {
        say_sql(db, err, cap, "reading the journal mode");
        return false;
    }
    snprintf(db->journal, sizeof db->journal, "%s", mode);
    return true;
}

/* WAL lets readers run beside a writer; some filesystems (NFS, some
 * container overlays) cannot do it, and then the rollback journal does. */
static bool set_journal(struct perfdb *db, char *err, size_t cap) {
    if (!journal_pragma(db, "PRAGMA journal_mode=WAL", err, cap))
        return false;
    return strcmp(db->journal, "wal") == 0 ||
           journal_pragma(db, "PRAGMA journal_mode=DELETE", err, cap);
}

enum contents { CONTENTS_ERROR = -1, CONTENTS_EMPTY, CONTENTS_CONVSEL };

/* What the file holds: no tables yet, or convsel's of a known schema
 * (db->version set). Anything else is an error naming what it is, found
 * by reading only. *sql_rc gets SQLite's code of a failed read. */
static enum contents inspect(struct perfdb *db, int *sql_rc, char *err, size_t cap) {
    sqlite3_stmt *st = NULL;
    *sql_rc = sqlite3_prepare_v2(
        db->sql, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", -1, &st,
        NULL);
    char tables[256] = "";
    bool meta = false, perf = false;
    int count = 0;
    while (st != NULL && (*sql_rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        name = name ? name : "";
        meta |= strcmp(name, "meta") == 0;
        perf |= strcmp(name, "perf") == 0;
        const size_t used = strlen(tables);
        if (used < sizeof tables - 1)
            snprintf(tables + used, sizeof tables - used, "%s%s", count ? ", " : "", name);
        count++;
    }
    sqlite3_finalize(st);
    if (*sql_rc != SQLITE_DONE) {
        say_sql(db, err, cap,
                (*sql_rc & 0xff) == SQLITE_NOTADB ? "not an SQLite database"
                                                  : "reading the list of tables");
        return CONTENTS_ERROR;
    }
    *sql_rc = SQLITE_OK;
    if (count == 0)
        return CONTENTS_EMPTY;
    char v[32] = "";
    const int rc =
        meta ? query_text(db, "SELECT value FROM meta WHERE key = 'schema_version'", v, sizeof v)
             : SQLITE_DONE;
    if (!meta || (!perf && rc != SQLITE_ROW)) {
        say(err, cap,
            "performance database %s: an SQLite database, but not a convsel database (its "
            "tables: %s); convsel neither reads nor writes it",
            db->path, tables);
        return CONTENTS_ERROR;
    }
    if (rc != SQLITE_ROW) {
        if (rc == SQLITE_DONE)
            say(err, cap,
                "performance database %s: its meta table has no schema_version: not a convsel "
                "database",
                db->path);
        else
            say_sql(db, err, cap, "reading the schema version");
        return CONTENTS_ERROR;
    }
    if (strcmp(v, "1") != 0 && strcmp(v, "2") != 0) {
        say(err, cap, "performance database %s: schema version %.20s, this convsel reads 1 and 2",
            db->path, v);
        return CONTENTS_ERROR;
    }
    if (!perf) {
        say(err, cap, "performance database %s: schema version %s but no perf table", db->path, v);
        return CONTENTS_ERROR;
    }
    db->version = v[0] - '0';
    return CONTENTS_CONVSEL;
}

/* PRAGMA quick_check: O(pages) but without the index cross-checks of
 * integrity_check; corruption is then reported once, the same way by
 * every command, instead of as odd rows later. */
static bool quick_check(struct perfdb *db, char *err, size_t cap) {
    char result[200] = "";
    const int rc = query_text(db, "PRAGMA quick_check(1)", result, sizeof result);
    if (rc == SQLITE_ROW && strcmp(result, "ok") == 0)
        return true;
    if (rc == SQLITE_ROW)
        say(err, cap, "performance database %s: corrupt (quick_check: %s)", db->path, result);
    else
        say_sql(db, err, cap, "corrupt (quick_check failed)");
    return false;
}

/* "file:PATH?immutable=1" with PATH's URI metacharacters escaped. */
static void immutable_uri(const char *path, char *uri, size_t cap) {
    size_t o = (size_t)snprintf(uri, cap, "file:");
    for (const char *c = path; *c && o + 4 < cap; c++)
        o += (size_t)(strchr("%?#", *c) ? snprintf(uri + o, cap - o, "%%%02X", (unsigned char)*c)
                                        : snprintf(uri + o, cap - o, "%c", *c));
    snprintf(uri + o, cap - o, "?immutable=1");
}

static bool open_sql(struct perfdb *db, const char *name, int flags, int busy_ms, char *err,
                     size_t cap) {
    if (sqlite3_open_v2(name, &db->sql, flags | SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK) {
        say_sql(db, err, cap, "cannot open");
        return false;
    }
    sqlite3_busy_timeout(db->sql, busy_ms > 0 ? busy_ms : DEFAULT_BUSY_MS);
    sqlite3_extended_result_codes(db->sql, 1);
    return true;
}

static bool open_read(struct perfdb *db, const char *path, int busy_ms, char *err, size_t cap) {
    struct stat st;
    if (stat(path, &st) == 0 && st.st_size == 0) {
        say(err, cap, "performance database %s: an empty file, not a convsel database", path);
        return false;
    }
    if (!open_sql(db, path, SQLITE_OPEN_READONLY, busy_ms, err, cap))
        return false;
    int rc;
    enum contents c = inspect(db, &rc, err, cap);
    if (c == CONTENTS_ERROR && ((rc & 0xff) == SQLITE_CANTOPEN || (rc & 0xff) == SQLITE_READONLY)) {
        /* A WAL database needs its -shm file, which a reader cannot create
         * in a directory it cannot write (a system-wide install): opened
         * immutable, SQLite reads the file as it is. */
        char uri[2 * PATH_MAX];
        immutable_uri(path, uri, sizeof uri);
        sqlite3_close_v2(db->sql);
        db->sql = NULL;
        if (!open_sql(db, uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, busy_ms, err, cap))
            return false;
        c = inspect(db, &rc, err, cap);
        if (c == CONTENTS_CONVSEL && journal_pragma(db, "PRAGMA journal_mode", err, cap)) {
            snprintf(db->journal + strlen(db->journal), sizeof db->journal - strlen(db->journal),
                     " (immutable)");
            return quick_check(db, err, cap);
        }
    }
    if (c == CONTENTS_EMPTY)
        say(err, cap,
            "performance database %s: an SQLite file without tables, not a convsel "
            "database",
            path);
    return c == CONTENTS_CONVSEL && journal_pragma(db, "PRAGMA journal_mode", err, cap) &&
           quick_check(db, err, cap);
}

/* Creates the tables of a new file, or upgrades schema 1, under the write
 * lock: the check is repeated inside the transaction, where no other
 * process can be creating them at the same time. */
static bool prepare_tables(struct perfdb *db, char *err, size_t cap) {
    if (!exec(db, "BEGIN IMMEDIATE", "creating the tables", err, cap))
        return false;
    int rc;
    const enum contents c = inspect(db, &rc, err, cap);
    bool ok = c != CONTENTS_ERROR;
    if (ok && c == CONTENTS_EMPTY)
        ok = exec(db, schema_v2, "creating the tables", err, cap), db->version = 2;
    else if (ok && db->version == 1)
        ok = exec(db, upgrade_v1, "upgrading schema 1 to 2", err, cap), db->version = 2;
    if (ok)
        ok = exec(db, "COMMIT", "creating the tables", err, cap);
    if (!ok)
        sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
    return ok;
}

static bool open_write(struct perfdb *db, const char *path, int busy_ms, char *err, size_t cap) {
    if (!open_sql(db, path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, busy_ms, err, cap))
        return false;
    /* Read first: a foreign file is refused before anything (even the
     * journal mode, which lives in the file's header) is written. */
    int rc;
    const enum contents c = inspect(db, &rc, err, cap);
    if (c == CONTENTS_ERROR || (c == CONTENTS_CONVSEL && !quick_check(db, err, cap)))
        return false;
    return set_journal(db, err, cap) && prepare_tables(db, err, cap);
}

struct perfdb *perfdb_open(const char *path, bool read_only, int busy_ms, char *err,
                           size_t err_cap) {
    if (!path || !*path) {
        say(err, err_cap, "performance database: empty path");
        return NULL;
    }
    char why[FILE_ERROR_MAX];
    const enum file_kind kind = file_kind_of(path, why, sizeof why);
    if (kind == FILE_OTHER || (kind == FILE_ABSENT && read_only)) {
        say(err, err_cap, "performance database %s", why);
        return NULL;
    }
    struct perfdb *db = calloc(1, sizeof *db);
    if (!db) {
        say(err, err_cap, "performance database: out of memory");
        return NULL;
    }
    snprintf(db->path, sizeof db->path, "%s", path);
    const bool ok = read_only ? open_read(db, path, busy_ms, err, err_cap)
                              : open_write(db, path, busy_ms, err, err_cap);
    if (!ok) {
        perfdb_close(db);
        return NULL;
    }
    return db;
}

void perfdb_close(struct perfdb *db) {
    if (!db)
        return;
    sqlite3_close_v2(db->sql);
    free(db);
}

const char *perfdb_journal_mode(const struct perfdb *db) {
    return db->journal;
}

int perfdb_schema_version(const struct perfdb *db) {
    return db->version;
}

const char *perfdb_path(const struct perfdb *db) {
    return db->path;
}

bool perfdb_times_valid(double median_ms, double min_ms, double max_ms, int runs, char *why,
                        size_t cap) {
    if (!(median_ms > 0 && median_ms <= PERFDB_MAX_MS)) {
        say(why, cap, "median_ms %g is not in (0, %g]", median_ms, PERFDB_MAX_MS);
        return false;
    }
    if (!(min_ms > 0 && min_ms <= median_ms && median_ms <= max_ms && max_ms <= PERFDB_MAX_MS)) {
        say(why, cap, "min_ms %g, median_ms %g, max_ms %g are not ordered min <= median <= max",
            min_ms, median_ms, max_ms);
        return false;
    }
    if (runs < 1) {
        say(why, cap, "runs %d is not >= 1", runs);
        return false;
    }
    return true;
}

static const char *layout_name(convsel_layout_t l) {
    return l == CONVSEL_LAYOUT_NHWC ? "NHWC" : "NCHW";
}
static const char *filter_name(convsel_filter_layout_t l) {
    return l == CONVSEL_FILTER_KRSC ? "KRSC" : "KCRS";
}

static bool bind_record(sqlite3_stmt *st, const struct perfdb_record *r, const char *key,
                        int64_t now) {
    const struct conv_problem *p = &r->problem;
    const int64_t fields[] = {p->n,        p->c,     p->h,     p->w,     p->k,
                              p->r,        p->s,     p->pad_h, p->pad_w, p->stride_h,
                              p->stride_w, p->dil_h, p->dil_w, p->groups};
    int i = 1, rc = SQLITE_OK;
    rc |= sqlite3_bind_text(st, i++, r->machine, -1, SQLITE_STATIC);
    rc |= sqlite3_bind_text(st, i++, key, -1, SQLITE_STATIC);
    rc |= sqlite3_bind_text(st, i++, r->solver, -1, SQLITE_STATIC);
    for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++)
        rc |= sqlite3_bind_int64(st, i++, fields[f]);
    rc |= sqlite3_bind_text(st, i++, layout_name(p->layout), -1, SQLITE_STATIC);
    rc |= sqlite3_bind_text(st, i++, filter_name(p->filter_layout), -1, SQLITE_STATIC);
    rc |= sqlite3_bind_double(st, i++, r->median_ms);
    rc |= sqlite3_bind_double(st, i++, r->min_ms);
    rc |= sqlite3_bind_double(st, i++, r->max_ms);
    rc |= sqlite3_bind_int(st, i++, r->runs);
    rc |= sqlite3_bind_int64(st, i++, (int64_t)r->workspace_bytes);
    rc |= sqlite3_bind_text(st, i++, VERSION_TEXT, -1, SQLITE_STATIC);
    rc |= sqlite3_bind_int64(st, i++, r->timestamp ? r->timestamp : now);
    return rc == SQLITE_OK;
}

/* A record's unknowns: min and max 0 are the median, runs 0 is one run. */
static struct perfdb_record with_defaults(const struct perfdb_record *in) {
    struct perfdb_record r = *in;
    if (r.min_ms == 0 && r.max_ms == 0)
        r.min_ms = r.max_ms = r.median_ms;
    if (r.runs == 0)
        r.runs = 1;
    return r;
}

static bool put(struct perfdb *db, const struct perfdb_record *records, int n, bool replace,
                char *err, size_t err_cap) {
    static const char insert[] = "INSERT OR REPLACE INTO perf(" PERF_COLUMNS_V1
                                 ") VALUES(?,?,?, ?,?,?,?,?,?,?, ?,?,?,?, ?,?,?, ?,?, "
                                 "?,?,?,?,?, ?,?)";
    if (n < 0 || (n > 0 && !records)) {
        say(err, err_cap, "performance database: %d records at %p", n, (const void *)records);
        return false;
    }
    for (int i = 0; i < n; i++) {
        char why[160];
        const struct perfdb_record r = with_defaults(&records[i]);
        if (!*r.solver || !*r.machine) {
            say(err, err_cap, "performance database: record %d has no solver or machine", i);
            return false;
        }
        if (!perfdb_times_valid(r.median_ms, r.min_ms, r.max_ms, r.runs, why, sizeof why)) {
            say(err, err_cap, "performance database: record %d (%s): %s", i, records[i].solver,
                why);
            return false;
        }
    }
    sqlite3_stmt *st = NULL;
    if (!exec(db, "BEGIN IMMEDIATE", "starting a write", err, err_cap))
        return false;
    if (replace) {
        char key[CONVSEL_PROBLEM_KEY_MAX];
        problem_key_format(&records[0].problem, key, sizeof key);
        if (sqlite3_prepare_v2(db->sql, "DELETE FROM perf WHERE machine=? AND problem=?", -1, &st,
                               NULL) != SQLITE_OK) {
            say_sql(db, err, err_cap, "preparing the delete");
            goto fail;
        }
        sqlite3_bind_text(st, 1, records[0].machine, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 2, key, -1, SQLITE_TRANSIENT);
        if (sqlite3_step(st) != SQLITE_DONE) {
            say_sql(db, err, err_cap, "deleting a problem's records");
            goto fail;
        }
        sqlite3_finalize(st);
        st = NULL;
    }
    if (sqlite3_prepare_v2(db->sql, insert, -1, &st, NULL) != SQLITE_OK) {
        say_sql(db, err, err_cap, "preparing the insert");
        goto fail;
    }
    const int64_t now = (int64_t)time(NULL);
    for (int i = 0; i < n; i++) {
        char key[CONVSEL_PROBLEM_KEY_MAX];
        problem_key_format(&records[i].problem, key, sizeof key);
        const struct perfdb_record r = with_defaults(&records[i]);
        if (!bind_record(st, &r, key, now) || sqlite3_step(st) != SQLITE_DONE) {
            say_sql(db, err, err_cap, "writing a record");
            goto fail;
        }
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
    }
    sqlite3_finalize(st);
    if (exec(db, "COMMIT", "committing", err, err_cap))
        return true;
    st = NULL;
fail:
    sqlite3_finalize(st);
    sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
    return false;
}

bool perfdb_put(struct perfdb *db, const struct perfdb_record *records, int n, char *err,
                size_t err_cap) {
    return put(db, records, n, false, err, err_cap);
}

bool perfdb_replace_problem(struct perfdb *db, const struct perfdb_record *records, int n,
                            char *err, size_t err_cap) {
    if (n < 1 || !records) {
        say(err, err_cap, "performance database: replacing a problem needs its records (%d)", n);
        return false;
    }
    char first[CONVSEL_PROBLEM_KEY_MAX], key[CONVSEL_PROBLEM_KEY_MAX];
    problem_key_format(&records[0].problem, first, sizeof first);
    for (int i = 1; i < n; i++) {
        problem_key_format(&records[i].problem, key, sizeof key);
        if (strcmp(key, first) != 0 || strcmp(records[i].machine, records[0].machine) != 0) {
            say(err, err_cap,
                "performance database: record %d is of another problem or machine than record 0",
                i);
            return false;
        }
    }
    return put(db, records, n, true, err, err_cap);
}

bool perfdb_put_origin(struct perfdb *db, const struct conv_problem *p, const char *network,
                       const char *family, const char *kind, char *err, size_t err_cap) {
    if (db->version < 2) {
        say(err, err_cap, "performance database %s: schema %d has no origin table", db->path,
            db->version);
        return false;
    }
    char key[CONVSEL_PROBLEM_KEY_MAX];
    problem_key_format(p, key, sizeof key);
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db->sql, "INSERT OR IGNORE INTO origin VALUES(?, ?, ?, ?)", -1, &st,
                                NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, network ? network : "", -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, family ? family : "", -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, kind ? kind : "", -1, SQLITE_STATIC);
        rc = sqlite3_step(st);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        say_sql(db, err, err_cap, "writing a problem's origin");
        return false;
    }
    return true;
}

bool perfdb_put_meta(struct perfdb *db, const char *key, const char *value, char *err,
                     size_t err_cap) {
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db->sql, "INSERT OR REPLACE INTO meta VALUES(?, ?)", -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
        rc = sqlite3_step(st);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        say_sql(db, err, err_cap, "writing the meta table");
        return false;
    }
    return true;
}

/* A meta row that exists but is not what put writes (hand-edited, or
 * another program's): named, with the form expected, never read as
 * absent (which made train say "tuned before limits were measured" and
 * tune overwrite the row). text is NULL for a value that is not TEXT or
 * too long to hold. */
static int meta_malformed(struct perfdb *db, const char *key, const char *text,
                          const char *expected, char *err, size_t err_cap) {
    say(err, err_cap,
        "performance database %s: meta row %s%s%.60s%s is not %s (delete the row: the next tune "
        "writes it again)",
        db->path, key, text ? " = '" : " (not TEXT, or too long)", text ? text : "",
        text ? (strlen(text) > 60 ? "...'" : "'") : "", expected);
    return -1;
}

/* perfdb_get_meta. With `expected` (the form put writes), a row that is
 * there but not TEXT, or too long for cap, is meta_malformed (-1), not
 * "not found": the getters of rows tune writes refuse hand-edited ones. */
static int meta_get(struct perfdb *db, const char *key, char *value, size_t cap,
                    const char *expected, char *err, size_t err_cap) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db->sql, "SELECT value FROM meta WHERE key = ?", -1, &st, NULL) !=
        SQLITE_OK) {
        say_sql(db, err, err_cap, "reading the meta table");
        return -1;
    }
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    const int rc = sqlite3_step(st);
    int found = 0;
    if (rc == SQLITE_ROW) {
        /* TEXT only, and whole: a value edited into a blob (a number is
         * stored as text: the column is TEXT), or longer than the caller can
         * hold, is not this key's. The type is asked first: column_text
         * converts a blob, after which column_type says TEXT. */
        const bool is_text = sqlite3_column_type(st, 0) == SQLITE_TEXT;
        const unsigned char *text = sqlite3_column_text(st, 0);
        found = is_text && text && (size_t)sqlite3_column_bytes(st, 0) < cap &&
                snprintf(value, cap, "%s", (const char *)text) >= 0;
        if (!found && expected)
            found = meta_malformed(db, key, NULL, expected, err, err_cap);
    } else if (rc != SQLITE_DONE) {
        say_sql(db, err, err_cap, "reading the meta table");
        found = -1;
    }
    sqlite3_finalize(st);
    return found;
}

int perfdb_get_meta(struct perfdb *db, const char *key, char *value, size_t cap, char *err,
                    size_t err_cap) {
    return meta_get(db, key, value, cap, NULL, err, err_cap);
}

bool perfdb_put_limits(struct perfdb *db, const char *machine, const struct machine_limits *l,
                       char *err, size_t err_cap) {
    char key[PERFDB_MACHINE_MAX + 16], value[4096];
    snprintf(key, sizeof key, "limits/%s", machine);
    peak_format(l, value, sizeof value);
    return perfdb_put_meta(db, key, value, err, err_cap);
}

int perfdb_get_limits(struct perfdb *db, const char *machine, struct machine_limits *out, char *err,
                      size_t err_cap) {
    *out = (struct machine_limits){0};
    char key[PERFDB_MACHINE_MAX + 16], value[4096];
    snprintf(key, sizeof key, "limits/%s", machine);
    const char *expected = "'peak_gflops=P bw=BYTES:GBS,... [weights=...] [method=M]'";
    const int found = meta_get(db, key, value, sizeof value, expected, err, err_cap);
    if (found == 1 && !peak_parse(value, out))
        return meta_malformed(db, key, value, expected, err, err_cap);
    return found;
}

bool perfdb_put_calibration(struct perfdb *db, const char *machine,
                            const struct perfdb_calibration *c, char *err, size_t err_cap) {
    char key[PERFDB_MACHINE_MAX + 16], value[64];
    snprintf(key, sizeof key, "calibration/%s", machine);
    snprintf(value, sizeof value, "%.6f %lld", c->ms, (long long)c->at);
    return perfdb_put_meta(db, key, value, err, err_cap);
}

int perfdb_get_calibration(struct perfdb *db, const char *machine, struct perfdb_calibration *out,
                           char *err, size_t err_cap) {
    char key[PERFDB_MACHINE_MAX + 16], value[64] = "";
    snprintf(key, sizeof key, "calibration/%s", machine);
    const char *expected = "'<ms> <unix seconds>'";
    const int found = meta_get(db, key, value, sizeof value, expected, err, err_cap);
    if (found != 1)
        return found;
    double ms = 0;
    long long at = 0;
    char extra = 0;
    if (sscanf(value, "%lf %lld %c", &ms, &at, &extra) != 2 || !(ms > 0 && ms < 1e6) || at < 1 ||
        at > 99999999999LL)
        return meta_malformed(db, key, value, expected, err, err_cap);
    *out = (struct perfdb_calibration){ms, at};
    return 1;
}

int perfdb_get_weights_mode(struct perfdb *db, const char *machine, bool *constant, char *err,
                            size_t err_cap) {
    char key[PERFDB_MACHINE_MAX + 16], value[32];
    snprintf(key, sizeof key, "weights/%s", machine);
    const char *expected = "'constant' or 'per-call'";
    const int found = meta_get(db, key, value, sizeof value, expected, err, err_cap);
    if (found != 1)
        return found;
    if (strcmp(value, "constant") != 0 && strcmp(value, "per-call") != 0)
        return meta_malformed(db, key, value, expected, err, err_cap);
    *constant = strcmp(value, "constant") == 0;
    return 1;
}

bool perfdb_put_weights_mode(struct perfdb *db, const char *machine, bool constant, char *err,
                             size_t err_cap) {
    char key[PERFDB_MACHINE_MAX + 16];
    snprintf(key, sizeof key, "weights/%s", machine);
    return perfdb_put_meta(db, key, constant ? "constant" : "per-call", err, err_cap);
}

static const char *column_text(sqlite3_stmt *st, int col) {
    const unsigned char *t = sqlite3_column_text(st, col);
    return t ? (const char *)t : "";
}

int64_t perfdb_for_each_origin(struct perfdb *db, perfdb_origin_fn fn, void *ctx, char *err,
                               size_t err_cap) {
    if (db->version < 2)
        return 0;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db->sql, "SELECT problem, network, family, kind FROM origin", -1, &st,
                           NULL) != SQLITE_OK) {
        say_sql(db, err, err_cap, "reading origins");
        return -1;
    }
    int64_t visited = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        visited++;
        if (!fn(ctx, column_text(st, 0), column_text(st, 1), column_text(st, 2),
                column_text(st, 3))) {
            rc = SQLITE_DONE;
            break;
        }
    }
    if (rc != SQLITE_DONE) {
        say_sql(db, err, err_cap, "reading origins");
        visited = -1;
    }
    sqlite3_finalize(st);
    return visited;
}

/* A stored number: REAL or INTEGER only. Text such as 'abc' would read as
 * 0.0, which is the fastest time there is. */
static bool column_number(sqlite3_stmt *st, int col, double *out) {
    const int type = sqlite3_column_type(st, col);
    if (type != SQLITE_FLOAT && type != SQLITE_INTEGER)
        return false;
    *out = sqlite3_column_double(st, col);
    return true;
}

/* Reads the times of a row selected as (median, min, max, runs) from
 * column `first` on; false with the reason. */
static bool row_times(sqlite3_stmt *st, int first, double t[3], int *runs, char *why, size_t cap) {
    static const char *const names[3] = {"median_ms", "min_ms", "max_ms"};
    for (int i = 0; i < 3; i++)
        if (!column_number(st, first + i, &t[i])) {
            say(why, cap, "%s '%.40s' is not a number", names[i], column_text(st, first + i));
            return false;
        }
    if (sqlite3_column_type(st, first + 3) != SQLITE_INTEGER) {
        say(why, cap, "runs '%.40s' is not an integer", column_text(st, first + 3));
        return false;
    }
    const int64_t r = sqlite3_column_int64(st, first + 3);
    *runs = r > INT_MAX ? INT_MAX : r < 0 ? 0 : (int)r;
    return perfdb_times_valid(t[0], t[1], t[2], *runs, why, cap);
}

int perfdb_best(struct perfdb *db, const char *machine, const char *problem_key,
                struct perfdb_record *out, char *err, size_t err_cap) {
    static const char query[] = "SELECT solver, median_ms, min_ms, max_ms, runs, workspace, "
                                "timestamp FROM perf WHERE machine=? AND problem=? "
                                "ORDER BY median_ms LIMIT 1";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db->sql, query, -1, &st, NULL) != SQLITE_OK) {
        say_sql(db, err, err_cap, "looking up a problem");
        return -1;
    }
    sqlite3_bind_text(st, 1, machine, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, problem_key, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st), found = 0;
    if (rc == SQLITE_ROW) {
        memset(out, 0, sizeof *out);
        char perr[PROBLEM_ERROR_MAX], why[160];
        double t[3];
        /* The file is input like any other: a key that does not parse is an error, not a hit. */
        if (problem_key_parse(problem_key, &out->problem, perr, sizeof perr) !=
            CONVSEL_STATUS_SUCCESS) {
            say(err, err_cap, "performance database %s: problem key: %s", db->path, perr);
            found = -1;
        } else if (!row_times(st, 1, t, &out->runs, why, sizeof why)) {
            say(err, err_cap, "performance database %s: %s: %s", db->path, problem_key, why);
            found = -1;
        } else {
            snprintf(out->machine, sizeof out->machine, "%s", machine);
            snprintf(out->solver, sizeof out->solver, "%s", column_text(st, 0));
            out->median_ms = t[0], out->min_ms = t[1], out->max_ms = t[2];
            const int64_t ws = sqlite3_column_int64(st, 5);
            out->workspace_bytes = ws > 0 ? (size_t)ws : 0;
            out->timestamp = sqlite3_column_int64(st, 6);
            found = 1;
        }
    } else if (rc != SQLITE_DONE) {
        say_sql(db, err, err_cap, "looking up a problem");
        found = -1;
    }
    sqlite3_finalize(st);
    return found;
}

int perfdb_problem_newest(struct perfdb *db, const char *machine, const char *problem_key,
                          int64_t *newest, char *err, size_t err_cap) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(
            db->sql, "SELECT count(*), max(timestamp) FROM perf WHERE machine=? AND problem=?", -1,
            &st, NULL) != SQLITE_OK) {
        say_sql(db, err, err_cap, "looking up a problem");
        return -1;
    }
    sqlite3_bind_text(st, 1, machine, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, problem_key, -1, SQLITE_STATIC);
    int result = -1;
    if (sqlite3_step(st) == SQLITE_ROW) {
        result = sqlite3_column_int64(st, 0) > 0;
        /* a hand-edited timestamp that is not a number counts as oldest */
        *newest = sqlite3_column_type(st, 1) == SQLITE_INTEGER ? sqlite3_column_int64(st, 1) : 0;
    } else {
        say_sql(db, err, err_cap, "looking up a problem");
    }
    sqlite3_finalize(st);
    return result;
}

int perfdb_has_problem(struct perfdb *db, const char *machine, const char *problem_key, char *err,
                       size_t err_cap) {
    int64_t newest;
    return perfdb_problem_newest(db, machine, problem_key, &newest, err, err_cap);
}

int64_t perfdb_for_each(struct perfdb *db, perfdb_visit_fn fn, void *ctx, struct perfdb_scan *scan,
                        char *err, size_t err_cap) {
    struct perfdb_scan local;
    if (scan == NULL)
        scan = &local;
    *scan = (struct perfdb_scan){0};
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db->sql,
                           "SELECT machine, problem, solver, median_ms, min_ms, max_ms, runs "
                           "FROM perf",
                           -1, &st, NULL) != SQLITE_OK) {
        say_sql(db, err, err_cap, "reading records");
        return -1;
    }
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        scan->rows++;
        struct conv_problem p;
        char why[PROBLEM_ERROR_MAX];
        double t[3];
        struct perfdb_row row = {.machine = column_text(st, 0),
                                 .problem_key = column_text(st, 1),
                                 .solver = column_text(st, 2),
                                 .problem = &p};
        bool valid =
            problem_key_parse(row.problem_key, &p, why, sizeof why) == CONVSEL_STATUS_SUCCESS;
        valid = valid && row_times(st, 3, t, &row.runs, why, sizeof why);
        if (!valid) {
            if (scan->invalid++ == 0)
                snprintf(scan->first_invalid, sizeof scan->first_invalid, "%.60s %.40s: %.140s",
                         row.problem_key, row.solver, why);
            continue;
        }
        row.median_ms = t[0], row.min_ms = t[1], row.max_ms = t[2];
        if (!fn(ctx, &row)) {
            rc = SQLITE_DONE;
            break;
        }
    }
    int64_t visited = scan->rows;
    if (rc != SQLITE_DONE) {
        say_sql(db, err, err_cap, "reading records");
        visited = -1;
    }
    sqlite3_finalize(st);
    return visited;
}

int64_t perfdb_count(struct perfdb *db, char *err, size_t err_cap) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db->sql, "SELECT count(*) FROM perf", -1, &st, NULL) != SQLITE_OK) {
        say_sql(db, err, err_cap, "counting records");
        return -1;
    }
    const int64_t n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    if (n < 0)
        say_sql(db, err, err_cap, "counting records");
    sqlite3_finalize(st);
    return n;
}

int64_t perfdb_merge_from(struct perfdb *db, const char *src_path, char *err, size_t err_cap) {
    if (file_same(db->path, src_path)) {
        say(err, err_cap,
            "performance database %s: is the same file as %s (merging a database "
            "into itself)",
            src_path, db->path);
        return -1;
    }
    /* Open the source on its own first: that checks it is a convsel
     * database of a known schema, not corrupt, and gives errors that name it. */
    struct perfdb *src = perfdb_open(src_path, true, 0, err, err_cap);
    if (!src)
        return -1;
    const int src_version = src->version;
    perfdb_close(src);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db->sql, "ATTACH DATABASE ? AS src", -1, &st, NULL) != SQLITE_OK) {
        say_sql(db, err, err_cap, "attaching a shard");
        return -1;
    }
    sqlite3_bind_text(st, 1, src_path, -1, SQLITE_STATIC);
    const int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        say(err, err_cap, "performance database %s: attaching %s: %s", db->path, src_path,
            sqlite3_errmsg(db->sql));
        return -1;
    }
    const char *copy = src_version >= 2 ? "INSERT OR REPLACE INTO main.perf(" PERF_COLUMNS_V2
                                          ") SELECT " PERF_COLUMNS_V2 " FROM src.perf"
                                        : "INSERT OR REPLACE INTO main.perf(" PERF_COLUMNS_V1
                                          ") SELECT " PERF_COLUMNS_V1 " FROM src.perf";
    int64_t copied = -1;
    if (exec(db, "BEGIN IMMEDIATE", "starting the merge", err, err_cap)) {
        if (exec(db, copy, "merging", err, err_cap)) {
            copied = sqlite3_changes64(db->sql);
            if (src_version >= 2 &&
                !exec(db, "INSERT OR IGNORE INTO main.origin SELECT * FROM src.origin",
                      "merging origins", err, err_cap))
                copied = -1;
            if (copied >= 0 && !exec(db, "COMMIT", "committing the merge", err, err_cap))
                copied = -1;
        }
        if (copied < 0)
            sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
    }
    sqlite3_exec(db->sql, "DETACH DATABASE src", NULL, NULL, NULL);
    return copied;
}
