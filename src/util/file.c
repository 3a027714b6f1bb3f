/* file.c -- see file.h. */
#include "util/file.h"

#include <stdio.h>
#include <stdlib.h>

enum file_read_status file_read_all(const char *path, size_t max_bytes, char **out,
                                    size_t *len_out) {
    *out = NULL;
    *len_out = 0;
    FILE *f = path ? fopen(path, "rb") : NULL;
    if (f == NULL)
        return FILE_READ_CANNOT_OPEN;
    enum file_read_status st = FILE_READ_IO_ERROR;
    long size = -1;
    char *buf = NULL;
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0)
        st = FILE_READ_IO_ERROR;
    else if ((unsigned long)size > max_bytes) {
        st = FILE_READ_TOO_LARGE;
        *len_out = (size_t)size; /* for the caller's message */
    } else if ((buf = malloc((size_t)size + 1)) == NULL)
        st = FILE_READ_NO_MEMORY;
    else if (fread(buf, 1, (size_t)size, f) == (size_t)size)
        st = FILE_READ_OK;
    fclose(f);
    if (st != FILE_READ_OK) {
        free(buf);
        return st;
    }
    buf[size] = '\0';
    *out = buf;
    *len_out = (size_t)size;
    return FILE_READ_OK;
}
