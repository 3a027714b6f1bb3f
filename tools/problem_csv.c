/* problem_csv.c -- reads the problem-list CSV (see problem_csv.h). */
#include "problem_csv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char header[] = PROBLEM_CSV_HEADER;

int problem_csv_read(const char *command, const char *path, struct problem_row **rows_out,
                     int *count_out) {
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "convsel %s: --problems %s: cannot open\n", command, path);
        return EXIT_USAGE;
    }
    char line[1024];
    int n = 0, cap = 0, lineno = 1, rc = EXIT_OK;
    struct problem_row *rows = NULL;
    if (fgets(line, sizeof line, f) == NULL || strncmp(line, header, strlen(header)) != 0 ||
        (line[strlen(header)] != '\n' && line[strlen(header)] != '\r' &&
         line[strlen(header)] != '\0')) {
        fprintf(stderr, "convsel %s: %s: line 1 must be the header\n  %s\n", command, path, header);
        fclose(f);
        return EXIT_USAGE;
    }
    while (fgets(line, sizeof line, f) != NULL) {
        lineno++;
        if (line[0] == '\n' || line[0] == '#')
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 32;
            struct problem_row *r = realloc(rows, (size_t)cap * sizeof *rows);
            if (r == NULL) {
                rc = EXIT_FAILED;
                break;
            }
            rows = r;
        }
        struct problem_row *r = &rows[n];
        problem_flags_defaults(&r->pf);
        int64_t *fields[14] = {&r->pf.n,     &r->pf.c,        &r->pf.h,        &r->pf.w,
                               &r->pf.k,     &r->pf.y,        &r->pf.x,        &r->pf.pad_h,
                               &r->pf.pad_w, &r->pf.stride_h, &r->pf.stride_w, &r->pf.dil_h,
                               &r->pf.dil_w, &r->pf.groups};
        char *save = NULL, *tok = strtok_r(line, ",\r\n", &save);
        if (tok == NULL || strlen(tok) >= sizeof r->name) {
            fprintf(stderr, "convsel %s: %s line %d: missing or too long name\n", command, path,
                    lineno);
            rc = EXIT_USAGE;
            break;
        }
        strcpy(r->name, tok);
        for (int i = 0; i < 14 && rc == EXIT_OK; i++) {
            tok = strtok_r(NULL, ",\r\n", &save);
            char *end = NULL;
            const long long v = tok ? strtoll(tok, &end, 10) : 0;
            if (tok == NULL || *end != '\0') {
                fprintf(stderr, "convsel %s: %s line %d: column %d (%s) is not an integer\n",
                        command, path, lineno, i + 2, i == 0 ? "n" : "see header");
                rc = EXIT_USAGE;
            }
            *fields[i] = v;
        }
        if (rc == EXIT_OK && strtok_r(NULL, ",\r\n", &save) != NULL) {
            fprintf(stderr, "convsel %s: %s line %d: more than 15 columns\n", command, path,
                    lineno);
            rc = EXIT_USAGE;
        }
        if (rc != EXIT_OK)
            break;
        n++;
    }
    fclose(f);
    if (rc == EXIT_OK && n == 0) {
        fprintf(stderr, "convsel %s: %s: no problems\n", command, path);
        rc = EXIT_USAGE;
    }
    if (rc != EXIT_OK) {
        free(rows);
        return rc;
    }
    *rows_out = rows;
    *count_out = n;
    return EXIT_OK;
}
