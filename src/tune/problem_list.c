/* problem_list.c -- see problem_list.h. */
#include "tune/problem_list.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/csv.h"

/* The columns, in PROBLEM_LIST_HEADER order, then the optional ones. */
enum { COL_NAME, COL_SIZES, COL_NETWORK = COL_SIZES + 14, COL_FAMILY, COL_COUNT };
static const char *const column_names[COL_COUNT] = {
    "name",  "n",        "c",        "h",     "w",     "k",      "r",       "s",     "pad_h",
    "pad_w", "stride_h", "stride_w", "dil_h", "dil_w", "groups", "network", "family"};
/* Smallest value of each size column: pads may be 0. */
static const int64_t column_min[14] = {1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1};
/* The descriptor field problem_validate names for each size column. */
static const char *const column_fields[14] = {"x_desc.n",
                                              "x_desc.c",
                                              "x_desc.h",
                                              "x_desc.w",
                                              "w_desc.k",
                                              "w_desc.r",
                                              "w_desc.s",
                                              "conv_desc.pad_h",
                                              "conv_desc.pad_w",
                                              "conv_desc.stride_h",
                                              "conv_desc.stride_w",
                                              "conv_desc.dilation_h",
                                              "conv_desc.dilation_w",
                                              "conv_desc.groups"};

convsel_status_t problem_from_sizes(const int64_t v[14], struct conv_problem *p, char *err,
                                    size_t cap) {
    *p = (struct conv_problem){.n = v[0],
                               .c = v[1],
                               .h = v[2],
                               .w = v[3],
                               .k = v[4],
                               .r = v[5],
                               .s = v[6],
                               .pad_h = v[7],
                               .pad_w = v[8],
                               .stride_h = v[9],
                               .stride_w = v[10],
                               .dil_h = v[11],
                               .dil_w = v[12],
                               .groups = v[13],
                               .layout = CONVSEL_LAYOUT_NCHW,
                               .filter_layout = CONVSEL_FILTER_KCRS};
    return problem_validate(p, err, cap);
}

bool problem_list_add(struct problem_list *list, const struct problem_row *row) {
    if (list->n == list->cap) {
        const int cap = list->cap ? 2 * list->cap : 64;
        struct problem_row *grown = realloc(list->rows, (size_t)cap * sizeof *grown);
        if (grown == NULL)
            return false;
        list->rows = grown, list->cap = cap;
    }
    list->rows[list->n++] = *row;
    return true;
}

void problem_list_free(struct problem_list *list) {
    free(list->rows);
    *list = (struct problem_list){0};
}

/* A whole decimal integer: 0, or -1 with the reason. */
static int parse_int(struct csv_reader *r, long line, int column, const char *name,
                     const char *text, int64_t lo, int64_t *out) {
    if (*text == '\0')
        return csv_fail(r, line, column, "%s: empty (every row needs all columns)", name);
    char *end = NULL;
    errno = 0;
    const long long v = strtoll(text, &end, 10);
    if (end == text || *end != '\0')
        return csv_fail(r, line, column, "%s: '%.40s' is not an integer", name, text);
    if (errno == ERANGE)
        return csv_fail(r, line, column, "%s: %.40s is out of range", name, text);
    if (v < lo)
        return csv_fail(r, line, column, "%s = %lld: must be >= %" PRId64, name, v, lo);
    *out = v;
    return 0;
}

static int text_field(struct csv_reader *r, long line, int column, const char *name,
                      const char *text, char *dst, bool required) {
    if (required && *text == '\0')
        return csv_fail(r, line, column, "%s: empty", name);
    if (strlen(text) >= PROBLEM_NAME_MAX)
        return csv_fail(r, line, column, "%s: longer than %d characters", name,
                        PROBLEM_NAME_MAX - 1);
    strcpy(dst, text);
    return 0;
}

/* Maps the header's columns: where[col] = field index, or -1. */
static int read_header(struct csv_reader *r, int where[COL_COUNT]) {
    char **f;
    int count;
    long line;
    const int got = csv_next(r, &f, &count, &line);
    if (got < 0)
        return -1;
    if (got == 0)
        return csv_fail(r, 1, 0, "empty file (the header is %s[,network,family])",
                        PROBLEM_LIST_HEADER);
    for (int c = 0; c < COL_COUNT; c++)
        where[c] = -1;
    for (int i = 0; i < count; i++) {
        int c = 0;
        while (c < COL_COUNT && strcmp(f[i], column_names[c]) != 0)
            c++;
        if (c == COL_COUNT)
            return csv_fail(r, line, i + 1,
                            "unknown column '%.40s' (the header is %s, optionally with network "
                            "and family)",
                            f[i], PROBLEM_LIST_HEADER);
        if (where[c] >= 0)
            return csv_fail(r, line, i + 1, "column '%s' appears twice", f[i]);
        where[c] = i;
    }
    for (int c = 0; c < COL_NETWORK; c++)
        if (where[c] < 0)
            return csv_fail(r, line, 0, "the header lacks column '%s' (it must name %s)",
                            column_names[c], PROBLEM_LIST_HEADER);
    return 0;
}

static int read_row(struct csv_reader *r, const int where[COL_COUNT], char **f, int count,
                    long line, struct problem_row *row) {
    int columns = 0;
    for (int c = 0; c < COL_COUNT; c++)
        columns += where[c] >= 0;
    if (count != columns)
        return csv_fail(r, line, 0, "%d fields, the header has %d", count, columns);
    *row = (struct problem_row){.line = line};
    if (text_field(r, line, where[COL_NAME] + 1, "name", f[where[COL_NAME]], row->name, true) < 0)
        return -1;
    if (where[COL_NETWORK] >= 0 && text_field(r, line, where[COL_NETWORK] + 1, "network",
                                              f[where[COL_NETWORK]], row->network, false) < 0)
        return -1;
    if (where[COL_FAMILY] >= 0 && text_field(r, line, where[COL_FAMILY] + 1, "family",
                                             f[where[COL_FAMILY]], row->family, false) < 0)
        return -1;
    if (row->family[0])
        row->origin = PROBLEM_ORIGIN_LAYER;
    int64_t v[14];
    for (int i = 0; i < 14; i++) {
        const int field = where[COL_SIZES + i];
        if (parse_int(r, line, field + 1, column_names[COL_SIZES + i], f[field], column_min[i],
                      &v[i]) < 0)
            return -1;
    }
    char why[PROBLEM_ERROR_MAX];
    if (problem_from_sizes(v, &row->p, why, sizeof why) == CONVSEL_STATUS_SUCCESS)
        return 0;
    /* Name the column of the field the library's message names first. */
    int column = 0;
    const char *first = NULL;
    for (int i = 0; i < 14; i++) {
        const char *at = strstr(why, column_fields[i]);
        if (at && (!first || at < first))
            first = at, column = where[COL_SIZES + i] + 1;
    }
    return csv_fail(r, line, column, "row %s: %s", row->name, why);
}

/* Reads the header and rows of r into list. */
static bool read_records(struct csv_reader *r, struct problem_list *list, char *err, size_t cap) {
    int where[COL_COUNT];
    const int before = list->n;
    int rc = read_header(r, where);
    char **f;
    int count;
    long line;
    while (rc == 0 && (rc = csv_next(r, &f, &count, &line)) == 1) {
        struct problem_row row;
        rc = read_row(r, where, f, count, line, &row);
        if (rc == 0 && !problem_list_add(list, &row))
            rc = csv_fail(r, line, 0, "out of memory");
    }
    if (rc == 0 && list->n == before)
        rc = csv_fail(r, 1, 0, "no problems (only a header, blank lines or comments)");
    if (rc < 0) {
        snprintf(err, cap, "%s", csv_error(r));
        list->n = before;
    }
    return rc == 0;
}

static bool read_file(const char *path, struct problem_list *list, char *err, size_t cap) {
    struct csv_reader *r = csv_open(path, err, cap);
    if (r == NULL)
        return false;
    const bool ok = read_records(r, list, err, cap);
    csv_close(r);
    return ok;
}

bool problem_list_read_stream(FILE *f, const char *name, struct problem_list *list, char *err,
                              size_t cap) {
    struct csv_reader *r = csv_open_stream(f, name);
    if (r == NULL) {
        snprintf(err, cap, "%s: out of memory", name);
        return false;
    }
    const bool ok = read_records(r, list, err, cap);
    csv_close(r);
    return ok;
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool read_dir(const char *dir, struct problem_list *list, char *err, size_t cap) {
    DIR *d = opendir(dir);
    if (d == NULL) {
        snprintf(err, cap, "%s: cannot open the directory: %s", dir, strerror(errno));
        return false;
    }
    char **names = NULL;
    size_t n = 0;
    bool ok = true;
    for (struct dirent *e; ok && (e = readdir(d)) != NULL;) {
        const size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' || len < 5 || strcmp(e->d_name + len - 4, ".csv") != 0)
            continue;
        char **grown = realloc(names, (n + 1) * sizeof *names);
        char *name = grown ? malloc(strlen(dir) + len + 2) : NULL;
        if (grown)
            names = grown;
        if (name == NULL) {
            ok = false;
            snprintf(err, cap, "%s: out of memory", dir);
            break;
        }
        sprintf(name, "%s/%s", dir, e->d_name);
        names[n++] = name;
    }
    closedir(d);
    if (ok && n == 0) {
        snprintf(err, cap, "%s: a directory without *.csv files", dir);
        ok = false;
    }
    if (n > 0)
        qsort(names, n, sizeof *names, by_name);
    const int before = list->n;
    for (size_t i = 0; ok && i < n; i++)
        ok = read_file(names[i], list, err, cap);
    if (!ok)
        list->n = before;
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return ok;
}

bool problem_list_read(const char *path, struct problem_list *list, char *err, size_t cap) {
    struct stat st;
    if (path && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return read_dir(path, list, err, cap);
    return read_file(path, list, err, cap);
}

/* A text field as CSV: quoted when it holds a comma, quote or line break,
 * or starts with '#' (a comment at the start of a line), its quotes doubled. */
static void put_field(FILE *f, const char *text) {
    if (strpbrk(text, ",\"\r\n") == NULL && text[0] != '#') {
        fputs(text, f);
        return;
    }
    fputc('"', f);
    for (const char *c = text; *c; c++) {
        if (*c == '"')
            fputc('"', f);
        fputc(*c, f);
    }
    fputc('"', f);
}

void problem_list_write(FILE *f, const struct problem_list *list, bool origin) {
    fprintf(f, "%s%s\n", PROBLEM_LIST_HEADER, origin ? ",network,family" : "");
    for (int i = 0; i < list->n; i++) {
        const struct problem_row *row = &list->rows[i];
        const struct conv_problem *p = &row->p;
        put_field(f, row->name);
        fprintf(f,
                ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
                ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64,
                p->n, p->c, p->h, p->w, p->k, p->r, p->s, p->pad_h, p->pad_w, p->stride_h,
                p->stride_w, p->dil_h, p->dil_w, p->groups);
        if (origin) {
            fputc(',', f);
            put_field(f, row->network);
            fputc(',', f);
            put_field(f, row->family);
        }
        fputc('\n', f);
    }
}
