/* cmd_db.c -- `convsel db info [PATH]` and `convsel db merge OUT IN...`:
 * look into a performance database, and gather tuning shards into one. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "db/perfdb.h"
#include "util/file.h"

static const char usage[] = "usage: convsel db info [PATH]\n"
                            "       convsel db merge OUT IN...\n";
static const char summary[] =
    "info   prints the database's path, journal mode (wal, or the rollback journal where the\n"
    "       filesystem cannot do WAL) and record count. PATH defaults to $CONVSEL_DB, else\n"
    "       $XDG_DATA_HOME/convsel/perf.db, else ~/.local/share/convsel/perf.db.\n"
    "merge  copies every record of each IN (shard databases from `convsel tune --shard`)\n"
    "       into OUT, creating it if needed. Each shard is one transaction: all of it or\n"
    "       none. A record for the same machine, problem and solver is replaced by the\n"
    "       later shard's. Exits 1 if any shard could not be merged.";

static bool wants_help(const char *arg) {
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

static bool count_valid(void *ctx, const struct perfdb_row *row) {
    (void)ctx, (void)row;
    return true;
}

static int info(int argc, char **argv) {
    char path[4096], err[PERFDB_ERROR_MAX];
    if (argc > 3) {
        fprintf(stderr, "convsel db info: one PATH at most\n");
        return EXIT_USAGE;
    }
    if (argc == 3 && argv[2][0] == '-') {
        fprintf(stderr, "convsel db info: '%s' looks like a flag (a file of that name: ./%s)\n",
                argv[2], argv[2]);
        return EXIT_USAGE;
    }
    if (argc == 3)
        snprintf(path, sizeof path, "%s", argv[2]);
    else if (!perfdb_default_path(path, sizeof path, err, sizeof err)) {
        fprintf(stderr, "convsel db info: %s\n", err);
        return EXIT_FAILED;
    }
    struct perfdb *db = perfdb_open(path, true, 0, err, sizeof err);
    if (!db) {
        fprintf(stderr, "convsel db info: %s\n", err);
        return EXIT_FAILED;
    }
    struct perfdb_scan scan;
    const int64_t rows = perfdb_for_each(db, count_valid, NULL, &scan, err, sizeof err);
    if (rows < 0) {
        fprintf(stderr, "convsel db info: %s\n", err);
    } else {
        printf("path      %s\nschema    %d\njournal   %s\nrecords   %lld\n", path,
               perfdb_schema_version(db), perfdb_journal_mode(db), (long long)rows);
        if (scan.invalid)
            printf("invalid   %lld (first: %s): convsel ignores them\n", (long long)scan.invalid,
                   scan.first_invalid);
    }
    perfdb_close(db);
    return rows < 0 ? EXIT_FAILED : EXIT_OK;
}

static int merge(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "convsel db merge: need OUT and at least one IN\n%s", usage);
        return EXIT_USAGE;
    }
    const char *out_path = argv[2];
    for (int i = 2; i < argc; i++)
        if (argv[i][0] == '-') { /* not a path: merge takes no flags */
            fprintf(stderr,
                    "convsel db merge: '%s' looks like a flag; merge takes no flags (a file of "
                    "that name: ./%s)\n",
                    argv[i], argv[i]);
            return EXIT_USAGE;
        }
    for (int i = 3; i < argc; i++)
        if (strcmp(argv[i], out_path) == 0 || file_same(argv[i], out_path)) {
            fprintf(stderr, "convsel db merge: %s is both OUT and IN (%s)\n", argv[i],
                    strcmp(argv[i], out_path) == 0 ? "the same name" : "the same file");
            return EXIT_USAGE;
        }
    char err[PERFDB_ERROR_MAX];
    struct perfdb *out = perfdb_open(out_path, false, 0, err, sizeof err);
    if (!out) {
        fprintf(stderr, "convsel db merge: %s\n", err);
        return EXIT_FAILED;
    }
    int failed = 0;
    for (int i = 3; i < argc; i++) {
        const int64_t rows = perfdb_merge_from(out, argv[i], err, sizeof err);
        if (rows < 0) {
            fprintf(stderr, "convsel db merge: %s: not merged: %s\n", argv[i], err);
            failed++;
        } else {
            printf("%s: %lld records\n", argv[i], (long long)rows);
        }
    }
    const int64_t total = perfdb_count(out, err, sizeof err);
    printf("%s: %lld records (%s journal)%s\n", out_path, (long long)total,
           perfdb_journal_mode(out), failed ? "; some shards were not merged" : "");
    perfdb_close(out);
    return failed || total < 0 ? EXIT_FAILED : EXIT_OK;
}

int cmd_db(int argc, char **argv) {
    if (argc >= 2 && wants_help(argv[1])) {
        printf("%s\n%s\n", usage, summary);
        return EXIT_OK;
    }
    if (argc >= 3 && wants_help(argv[2])) {
        printf("%s\n%s\n", usage, summary);
        return EXIT_OK;
    }
    if (argc >= 2 && strcmp(argv[1], "info") == 0)
        return info(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "merge") == 0)
        return merge(argc, argv);
    fprintf(stderr, "convsel db: %s%s%s", argc >= 2 ? "unknown action " : "no action given",
            argc >= 2 ? argv[1] : "", "\n");
    fputs(usage, stderr);
    return EXIT_USAGE;
}
