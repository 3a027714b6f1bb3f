/* csv.h -- a strict CSV record reader for the files people edit by hand:
 * problem lists, the corpus of real layers.
 *
 * RFC 4180 records (LF or CRLF line ends; fields quoted with '"', a
 * doubled quote inside; quoted fields may hold commas and line breaks),
 * lines of any length (a record is limited to CSV_RECORD_MAX bytes), blank
 * lines and lines starting with '#' skipped. Everything else a hand-edited
 * file can hold is an error that names the file, the line and the column:
 * a NUL byte, a quote in the middle of an unquoted field, text after a
 * closing quote, a carriage return not followed by a line feed, a quote
 * left open at the end of the file.
 *
 * Why not libcsv (Debian libcsv-dev): it reports neither line nor column,
 * knows no comment lines, and would be one more run-time dependency of
 * libconvsel for ~200 lines; this reader is fuzzed instead
 * (tests/fuzz/fuzz_csv.c). */
#ifndef CONVSEL_UTIL_CSV_H
#define CONVSEL_UTIL_CSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define CSV_RECORD_MAX (1u << 20) /* bytes of one record's fields */
#define CSV_FIELDS_MAX 64
#define CSV_ERROR_MAX 512

struct csv_reader;

/* Opens path through file_open_read (regular files only, never blocks).
 * NULL with a message in err on failure. */
struct csv_reader *csv_open(const char *path, char *err, size_t cap);

/* Reads from f, which the reader does not close; name is used in messages
 * (for tests and the fuzzer, with fmemopen). */
struct csv_reader *csv_open_stream(FILE *f, const char *name);

void csv_close(struct csv_reader *r);

/* Reads the next record. Returns 1 and sets *fields (NUL-terminated
 * strings, valid until the next call) and *count; 0 at the end of the file;
 * -1 on a malformed record (csv_error says where and what). *line is the
 * line the record starts on. */
int csv_next(struct csv_reader *r, char ***fields, int *count, long *line);

/* The last error: "FILE line L, column C: what". */
const char *csv_error(const struct csv_reader *r);

/* The file's name as given. */
const char *csv_name(const struct csv_reader *r);

/* Formats a message about the current record into the reader's error
 * ("FILE line L, column C: ..."; column 0 leaves the column out) and
 * returns -1, so that callers checking fields report like the reader. */
int csv_fail(struct csv_reader *r, long line, int column, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
