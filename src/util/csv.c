/* csv.c -- see csv.h. A character-at-a-time state machine over stdio's
 * buffer: the files are small, and every byte's line and column are known
 * when it is read, which is what the messages need. */
#include "util/csv.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/file.h"

struct csv_reader {
    FILE *f;
    bool own; /* csv_close closes f */
    char name[256];
    char *buf; /* the record's fields, each NUL-terminated */
    size_t len, cap;
    size_t start[CSV_FIELDS_MAX];
    char *fields[CSV_FIELDS_MAX];
    long line; /* the line of the next character */
    char error[CSV_ERROR_MAX];
};

static struct csv_reader *make(FILE *f, const char *name, bool own) {
    struct csv_reader *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    r->f = f, r->own = own, r->line = 1;
    snprintf(r->name, sizeof r->name, "%s", name ? name : "(stream)");
    return r;
}

struct csv_reader *csv_open(const char *path, char *err, size_t cap) {
    FILE *f = file_open_read(path, err, cap);
    if (f == NULL)
        return NULL;
    struct csv_reader *r = make(f, path, true);
    if (r == NULL) {
        fclose(f);
        snprintf(err, cap, "%s: out of memory", path);
    }
    return r;
}

struct csv_reader *csv_open_stream(FILE *f, const char *name) {
    return f ? make(f, name, false) : NULL;
}

void csv_close(struct csv_reader *r) {
    if (r == NULL)
        return;
    if (r->own)
        fclose(r->f);
    free(r->buf);
    free(r);
}

const char *csv_error(const struct csv_reader *r) {
    return r->error;
}

const char *csv_name(const struct csv_reader *r) {
    return r->name;
}

int csv_fail(struct csv_reader *r, long line, int column, const char *fmt, ...) {
    int n = column > 0 ? snprintf(r->error, sizeof r->error, "%s line %ld, column %d: ", r->name,
                                  line, column)
                       : snprintf(r->error, sizeof r->error, "%s line %ld: ", r->name, line);
    if (n < 0 || (size_t)n >= sizeof r->error)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->error + n, sizeof r->error - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

/* Appends one byte to the record: 0, or -1 with the message. */
static int put(struct csv_reader *r, char c, long line, int column) {
    if (r->len + 1 >= CSV_RECORD_MAX)
        return csv_fail(r, line, column, "a record longer than %u bytes", CSV_RECORD_MAX);
    if (r->len + 1 >= r->cap) {
        const size_t cap = r->cap ? 2 * r->cap : 256;
        char *grown = realloc(r->buf, cap);
        if (grown == NULL)
            return csv_fail(r, line, column, "out of memory");
        r->buf = grown, r->cap = cap;
    }
    r->buf[r->len++] = c;
    return 0;
}

/* Skips a comment line up to and including its line feed. */
static int skip_comment(struct csv_reader *r) {
    for (int c; (c = getc(r->f)) != EOF;) {
        if (c == '\0')
            return csv_fail(r, r->line, 0, "a NUL byte in a comment");
        if (c == '\n') {
            r->line++;
            return 0;
        }
    }
    return 0;
}

/* Ends a line after a CR: it must be CRLF. */
static int crlf(struct csv_reader *r, int column) {
    if (getc(r->f) != '\n')
        return csv_fail(r, r->line, column, "a carriage return not followed by a line feed");
    r->line++;
    return 0;
}

int csv_next(struct csv_reader *r, char ***fields, int *count, long *line) {
    int c;
    for (;;) { /* blank lines and comments */
        c = getc(r->f);
        if (c == EOF)
            return ferror(r->f) ? csv_fail(r, r->line, 0, "read error") : 0;
        if (c == '\n') {
            r->line++;
        } else if (c == '\r') {
            if (crlf(r, 1) < 0)
                return -1;
        } else if (c == '#') {
            if (skip_comment(r) < 0)
                return -1;
        } else {
            break;
        }
    }
    const long first_line = r->line;
    int n = 0;
    r->len = 0;
    for (;;) { /* one field per pass; c is its first character */
        if (n == CSV_FIELDS_MAX)
            return csv_fail(r, r->line, n + 1, "more than %d fields", CSV_FIELDS_MAX);
        r->start[n] = r->len;
        const int column = n + 1;
        if (c == '"') {
            const long opened = r->line;
            for (;;) {
                c = getc(r->f);
                if (c == EOF)
                    return csv_fail(r, opened, column, "a quote opened here is never closed");
                if (c == '"') {
                    c = getc(r->f);
                    if (c != '"')
                        break; /* the closing quote; c is what follows it */
                } else if (c == '\0') {
                    return csv_fail(r, r->line, column, "a NUL byte");
                } else if (c == '\n') {
                    r->line++;
                }
                if (put(r, (char)c, first_line, column) < 0)
                    return -1;
            }
            if (c != ',' && c != '\n' && c != '\r' && c != EOF)
                return csv_fail(r, r->line, column, "text after a closing quote");
        } else {
            while (c != ',' && c != '\n' && c != '\r' && c != EOF) {
                if (c == '"')
                    return csv_fail(r, r->line, column,
                                    "a quote inside an unquoted field (quote the whole field)");
                if (c == '\0')
                    return csv_fail(r, r->line, column, "a NUL byte");
                if (put(r, (char)c, first_line, column) < 0)
                    return -1;
                c = getc(r->f);
            }
        }
        if (put(r, '\0', first_line, column) < 0)
            return -1;
        n++;
        if (c == ',') {
            c = getc(r->f);
            continue;
        }
        if (c == '\r' && crlf(r, column) < 0)
            return -1;
        if (c == '\n')
            r->line++;
        if (c == EOF && ferror(r->f))
            return csv_fail(r, r->line, 0, "read error");
        break;
    }
    for (int i = 0; i < n; i++)
        r->fields[i] = r->buf + r->start[i];
    *fields = r->fields;
    *count = n;
    *line = first_line;
    return 1;
}
