/* fuzz_csv.c -- libFuzzer target for the CSV reader and the problem lists
 * on it (util/csv.c, tune/problem_list.c), which read files people edit by
 * hand: any bytes must give records or an error that names a line, and
 * never a crash, a leak or a read past the input. Every record's fields
 * must lie within the input's size; a list that reads must write back to
 * a list that reads to the same rows. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune/problem_list.h"
#include "util/csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0 || size > (1u << 16))
        return 0;
    FILE *f = fmemopen((void *)data, size, "rb");
    if (f == NULL)
        return 0;
    struct csv_reader *r = csv_open_stream(f, "fuzz");
    char **fields;
    int count, rc;
    long line, last = 0;
    while ((rc = csv_next(r, &fields, &count, &line)) == 1) {
        size_t total = 0;
        for (int i = 0; i < count; i++)
            total += strlen(fields[i]);
        if (count < 1 || count > CSV_FIELDS_MAX || total > size || line < last)
            abort();
        last = line;
    }
    if (rc < 0 && strncmp(csv_error(r), "fuzz line ", 10) != 0)
        abort(); /* every error names the line */
    csv_close(r);
    rewind(f);
    struct problem_list list = {0};
    char err[PROBLEM_LIST_ERROR_MAX];
    if (problem_list_read_stream(f, "fuzz", &list, err, sizeof err)) {
        char *text = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&text, &len);
        problem_list_write(out, &list, true);
        fclose(out);
        FILE *back = fmemopen(text, len, "rb");
        struct problem_list again = {0};
        if (!problem_list_read_stream(back, "back", &again, err, sizeof err) || again.n != list.n)
            abort();
        for (int i = 0; i < list.n; i++)
            if (memcmp(&again.rows[i].p, &list.rows[i].p, sizeof list.rows[i].p) != 0 ||
                strcmp(again.rows[i].name, list.rows[i].name) != 0)
                abort();
        fclose(back);
        free(text);
        problem_list_free(&again);
    }
    problem_list_free(&list);
    fclose(f);
    return 0;
}
