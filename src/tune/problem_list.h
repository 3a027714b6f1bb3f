/* problem_list.h -- lists of named problems: the CSV files that `convsel
 * bench` and `convsel tune` read (the benchmark suite, the corpus of real
 * layers in data/networks/), and the rows the tuning sampler draws.
 *
 * The file: a header line naming the columns, then one problem per record
 * (NCHW tensors, KCRS filters). The columns are those of
 * PROBLEM_LIST_HEADER in any order, each exactly once, plus optionally
 * `network` and `family` (where a real layer comes from: the corpus has
 * them, and `convsel eval` leaves one family out at a time). Blank lines
 * and lines starting with '#' are skipped (util/csv.h has the rest of the
 * syntax). Every error names the file, the line and the column. */
#ifndef CONVSEL_TUNE_PROBLEM_LIST_H
#define CONVSEL_TUNE_PROBLEM_LIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "core/problem.h"

#define PROBLEM_LIST_HEADER "name,n,c,h,w,k,r,s,pad_h,pad_w,stride_h,stride_w,dil_h,dil_w,groups"
#define PROBLEM_NAME_MAX 64
#define PROBLEM_LIST_ERROR_MAX 640

/* Where a row comes from, as the database's origin table records it. */
enum problem_origin {
    PROBLEM_ORIGIN_NONE = 0,  /* sampled, or a list without a family column */
    PROBLEM_ORIGIN_LAYER,     /* a real layer: a row with a family */
    PROBLEM_ORIGIN_PERTURBED, /* a perturbation of one (tune/sample.h) */
};

struct problem_row {
    char name[PROBLEM_NAME_MAX];
    char network[PROBLEM_NAME_MAX]; /* "" when not known (sampled, or no such column) */
    char family[PROBLEM_NAME_MAX];
    struct conv_problem p; /* validated; NCHW, KCRS, packed */
    enum problem_origin origin;
    long line; /* in its file; 0 for sampled rows */
};

struct problem_list {
    struct problem_row *rows;
    int n, cap;
};

/* Reads one CSV file, or every *.csv file of a directory in name order
 * (the corpus), appending to *list (which may hold rows already; start
 * from {0}). Returns false with "FILE line L, column C (NAME): ..." in err
 * on the first malformed row, leaving *list as it was. An empty file (no
 * problem rows) is an error. */
bool problem_list_read(const char *path, struct problem_list *list, char *err, size_t cap);

/* The same from an open stream (name is used in messages): what
 * problem_list_read does for each file, open for the fuzzer (fmemopen). */
bool problem_list_read_stream(FILE *f, const char *name, struct problem_list *list, char *err,
                              size_t cap);

/* Appends a row; false when out of memory. */
bool problem_list_add(struct problem_list *list, const struct problem_row *row);

void problem_list_free(struct problem_list *list);

/* Writes the list as a CSV file that problem_list_read reads back (the
 * origin columns only when `origin`). */
void problem_list_write(FILE *f, const struct problem_list *list, bool origin);

/* A problem from its 14 sizes (n,c,h,w,k,r,s,pad_h,pad_w,stride_h,stride_w,
 * dil_h,dil_w,groups), NCHW/KCRS, validated: SUCCESS or BAD_PARAM with the
 * library's message (naming the descriptor field) in err. */
convsel_status_t problem_from_sizes(const int64_t v[14], struct conv_problem *p, char *err,
                                    size_t cap);

#endif
