/* file.h -- reads a whole file into memory, for the loaders of model,
 * metadata and MIOpen files, which parse text of bounded size. */
#ifndef CONVSEL_UTIL_FILE_H
#define CONVSEL_UTIL_FILE_H

#include <stddef.h>

enum file_read_status {
    FILE_READ_OK = 0,
    FILE_READ_CANNOT_OPEN,
    FILE_READ_TOO_LARGE, /* more than max_bytes */
    FILE_READ_NO_MEMORY,
    FILE_READ_IO_ERROR, /* seek, tell or a short read */
};

/* Reads path into a malloc'd buffer with a NUL after the last byte (*out,
 * *len_out bytes). On failure *out is NULL and the status says why; for
 * FILE_READ_TOO_LARGE, *len_out is the file's size. */
enum file_read_status file_read_all(const char *path, size_t max_bytes, char **out,
                                    size_t *len_out);

#endif
