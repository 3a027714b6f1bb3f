/* perfdb.c -- the SQLite performance database (see perfdb.h).
 *
 * The problem is stored twice on purpose: the canonical key is the lookup
 * (exact match, one index probe), the separate fields are for training and
 * for people querying the file with sqlite3. */
#include "db/perfdb.h"

#include <errno.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "convsel/convsel.h"
#include "util/cpu.h"

#define SCHEMA_VERSION "1"
#define DEFAULT_BUSY_MS 10000

struct perfdb {
    sqlite3 *sql;
    char path[PATH_MAX];
    char journal[16];
};

static const char schema[] =
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "INSERT OR IGNORE INTO meta VALUES('schema_version', '" SCHEMA_VERSION "');"
    "CREATE TABLE IF NOT EXISTS perf("
    " machine TEXT NOT NULL, problem TEXT NOT NULL, solver TEXT NOT NULL,"
    " n INTEGER, c INTEGER, h INTEGER, w INTEGER, k INTEGER, r INTEGER, s INTEGER,"
    " pad_h INTEGER, pad_w INTEGER, stride_h INTEGER, stride_w INTEGER,"
    " dil_h INTEGER, dil_w INTEGER, groups INTEGER, layout TEXT, filter_layout TEXT,"
    " median_ms REAL NOT NULL, min_ms REAL, max_ms REAL, runs INTEGER, workspace INTEGER,"
    " version TEXT, timestamp INTEGER,"
    " PRIMARY KEY(machine, problem, solver));";

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

void perfdb_machine_signature(int threads, char *buf, size_t cap) {
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    snprintf(buf, cap, "%s-%ldc-%dt", cpu_isa_name(cpu_best_isa()), cores > 0 ? cores : 1, threads);
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

/* Runs a journal_mode pragma and keeps the mode it reports. */
static bool journal_pragma(struct perfdb *db, const char *pragma, char *err, size_t cap) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db->sql, pragma, -1, &st, NULL) != SQLITE_OK) {
        say_sql(db, err, cap, "reading the journal mode");
        return false;
    }
    const int rc = sqlite3_step(st);
    const unsigned char *mode = rc == SQLITE_ROW ? sqlite3_column_text(st, 0) : NULL;
    snprintf(db->journal, sizeof db->journal, "%s", mode ? (const char *)mode : "");
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW)
        say_sql(db, err, cap, "reading the journal mode");
    return rc == SQLITE_ROW;
}

/* WAL lets readers run beside a writer; some filesystems (NFS, some
 * container overlays) cannot do it, and then the rollback journal does. */
static bool set_journal(struct perfdb *db, char *err, size_t cap) {
    if (!journal_pragma(db, "PRAGMA journal_mode=WAL", err, cap))
        return false;
    return strcmp(db->journal, "wal") == 0 ||
           journal_pragma(db, "PRAGMA journal_mode=DELETE", err, cap);
}

static bool check_schema(struct perfdb *db, char *err, size_t cap) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db->sql, "SELECT value FROM meta WHERE key='schema_version'", -1, &st,
                           NULL) != SQLITE_OK) {
        say_sql(db, err, cap, "reading the schema version (not a convsel database?)");
        return false;
    }
    const int rc = sqlite3_step(st);
    const unsigned char *v = rc == SQLITE_ROW ? sqlite3_column_text(st, 0) : NULL;
    const bool ok = v && strcmp((const char *)v, SCHEMA_VERSION) == 0;
    if (!ok)
        say(err, cap, "performance database %s: schema version %s, this convsel reads %s", db->path,
            v ? (const char *)v : "missing", SCHEMA_VERSION);
    sqlite3_finalize(st);
    return ok;
}

struct perfdb *perfdb_open(const char *path, bool read_only, int busy_ms, char *err,
                           size_t err_cap) {
    if (!path || !*path) {
        say(err, err_cap, "performance database: empty path");
        return NULL;
    }
    struct perfdb *db = calloc(1, sizeof *db);
    if (!db) {
        say(err, err_cap, "performance database: out of memory");
        return NULL;
    }
    snprintf(db->path, sizeof db->path, "%s", path);
    const int flags = read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    if (sqlite3_open_v2(path, &db->sql, flags | SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK) {
        say_sql(db, err, err_cap, "cannot open");
        perfdb_close(db);
        return NULL;
    }
    sqlite3_busy_timeout(db->sql, busy_ms > 0 ? busy_ms : DEFAULT_BUSY_MS);
    sqlite3_extended_result_codes(db->sql, 1);
    bool ok;
    if (read_only) {
        ok = journal_pragma(db, "PRAGMA journal_mode", err, err_cap) &&
             check_schema(db, err, err_cap);
    } else {
        ok = set_journal(db, err, err_cap) &&
             exec(db, "BEGIN IMMEDIATE", "creating the tables", err, err_cap) &&
             exec(db, schema, "creating the tables", err, err_cap) &&
             exec(db, "COMMIT", "creating the tables", err, err_cap) &&
             check_schema(db, err, err_cap);
    }
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
    rc |= sqlite3_bind_text(st, i++, convsel_version(), -1, SQLITE_STATIC);
    rc |= sqlite3_bind_int64(st, i++, r->timestamp ? r->timestamp : now);
    return rc == SQLITE_OK;
}

bool perfdb_put(struct perfdb *db, const struct perfdb_record *records, int n, char *err,
                size_t err_cap) {
    static const char insert[] =
        "INSERT OR REPLACE INTO perf VALUES(?,?,?, ?,?,?,?,?,?,?, ?,?,?,?, ?,?,?, ?,?, "
        "?,?,?,?,?, ?,?)";
    if (n < 0 || (n > 0 && !records)) {
        say(err, err_cap, "performance database: %d records at %p", n, (const void *)records);
        return false;
    }
    for (int i = 0; i < n; i++)
        if (!(records[i].median_ms >= 0) || !*records[i].solver || !*records[i].machine) {
            say(err, err_cap, "performance database: record %d has no solver, machine or time", i);
            return false;
        }
    sqlite3_stmt *st = NULL;
    if (!exec(db, "BEGIN IMMEDIATE", "starting a write", err, err_cap))
        return false;
    if (sqlite3_prepare_v2(db->sql, insert, -1, &st, NULL) != SQLITE_OK) {
        say_sql(db, err, err_cap, "preparing the insert");
        goto fail;
    }
    const int64_t now = (int64_t)time(NULL);
    for (int i = 0; i < n; i++) {
        char key[256];
        problem_key_format(&records[i].problem, key, sizeof key);
        if (!bind_record(st, &records[i], key, now) || sqlite3_step(st) != SQLITE_DONE) {
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

static const char *column_text(sqlite3_stmt *st, int col) {
    const unsigned char *t = sqlite3_column_text(st, col);
    return t ? (const char *)t : "";
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
        char perr[PROBLEM_ERROR_MAX];
        /* The file is input like any other: a key that does not parse is an error, not a hit. */
        if (problem_key_parse(problem_key, &out->problem, perr, sizeof perr) !=
            CONVSEL_STATUS_SUCCESS) {
            say(err, err_cap, "performance database %s: problem key: %s", db->path, perr);
            found = -1;
        } else {
            snprintf(out->machine, sizeof out->machine, "%s", machine);
            snprintf(out->solver, sizeof out->solver, "%s", column_text(st, 0));
            out->median_ms = sqlite3_column_double(st, 1);
            out->min_ms = sqlite3_column_double(st, 2);
            out->max_ms = sqlite3_column_double(st, 3);
            out->runs = sqlite3_column_int(st, 4);
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

int perfdb_has_problem(struct perfdb *db, const char *machine, const char *problem_key, char *err,
                       size_t err_cap) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db->sql, "SELECT 1 FROM perf WHERE machine=? AND problem=? LIMIT 1", -1,
                           &st, NULL) != SQLITE_OK) {
        say_sql(db, err, err_cap, "looking up a problem");
        return -1;
    }
    sqlite3_bind_text(st, 1, machine, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, problem_key, -1, SQLITE_STATIC);
    const int rc = sqlite3_step(st);
    const int result = rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
    if (result < 0)
        say_sql(db, err, err_cap, "looking up a problem");
    sqlite3_finalize(st);
    return result;
}

int64_t perfdb_for_each(struct perfdb *db, perfdb_visit_fn fn, void *ctx, char *err,
                        size_t err_cap) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db->sql, "SELECT machine, problem, solver, median_ms FROM perf", -1, &st,
                           NULL) != SQLITE_OK) {
        say_sql(db, err, err_cap, "reading records");
        return -1;
    }
    int64_t visited = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        visited++;
        if (!fn(ctx, column_text(st, 0), column_text(st, 1), column_text(st, 2),
                sqlite3_column_double(st, 3))) {
            rc = SQLITE_DONE;
            break;
        }
    }
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
    /* Open the source on its own first: that checks it is a convsel
     * database of this schema and gives errors that name it. */
    struct perfdb *src = perfdb_open(src_path, true, 0, err, err_cap);
    if (!src)
        return -1;
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
    int64_t copied = -1;
    if (exec(db, "BEGIN IMMEDIATE", "starting the merge", err, err_cap)) {
        if (exec(db, "INSERT OR REPLACE INTO main.perf SELECT * FROM src.perf", "merging", err,
                 err_cap)) {
            copied = sqlite3_changes64(db->sql);
            if (!exec(db, "COMMIT", "committing the merge", err, err_cap))
                copied = -1;
        }
        if (copied < 0)
            sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
    }
    sqlite3_exec(db->sql, "DETACH DATABASE src", NULL, NULL, NULL);
    return copied;
}
