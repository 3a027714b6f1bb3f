/* problem_csv.h -- the problem-list CSV read by `convsel bench` and
 * `convsel tune`: a header line, then one named problem per line
 * (NCHW, KCRS); blank lines and lines starting with '#' are skipped. */
#ifndef CONVSEL_TOOLS_PROBLEM_CSV_H
#define CONVSEL_TOOLS_PROBLEM_CSV_H

#include "problem_flags.h"

#define PROBLEM_CSV_HEADER "name,n,c,h,w,k,r,s,pad_h,pad_w,stride_h,stride_w,dil_h,dil_w,groups"

struct problem_row {
    char name[64];
    struct problem_flags pf;
};

/* Reads path into a malloc'd array of rows. Returns EXIT_OK, or EXIT_USAGE
 * (EXIT_FAILED when out of memory) after printing "convsel <command>: "
 * and what is wrong, naming the line and column. The values are checked
 * by the library when the problem is built, not here. */
int problem_csv_read(const char *command, const char *path, struct problem_row **rows_out,
                     int *count_out);

#endif
