/* file.h -- the one way convsel opens a file by name: models, metadata,
 * MIOpen files, problem lists, databases (checked before SQLite opens them)
 * and the files the tools write.
 *
 * Why one opener: a path names what the user typed, not necessarily a file.
 * A FIFO blocks open() forever, a directory "opens" and then reads as an
 * error or as a size of 2^63, a symlink loop looks like a missing file.
 * Here every open is non-blocking, and anything but a regular file is
 * refused with a message that names the path and what it is. */
#ifndef CONVSEL_UTIL_FILE_H
#define CONVSEL_UTIL_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#define FILE_ERROR_MAX 512

enum file_read_status {
    FILE_READ_OK = 0,
    FILE_READ_CANNOT_OPEN, /* missing, not a regular file, no permission: see the message */
    FILE_READ_TOO_LARGE,   /* more than max_bytes */
    FILE_READ_NO_MEMORY,
    FILE_READ_IO_ERROR, /* a read failed */
};

/* What a path is, without opening it (lstat's view after following links). */
enum file_kind {
    FILE_ABSENT,  /* nothing there (ENOENT) */
    FILE_REGULAR, /* a regular file, or a link to one */
    FILE_OTHER,   /* a directory, FIFO, device, socket, a symlink loop, or unreadable */
};

/* Says what path is; for FILE_OTHER (and FILE_ABSENT) err gets
 * "PATH: is a directory" / "is a FIFO" / "does not exist" / "too many
 * levels of symbolic links" / strerror. */
enum file_kind file_kind_of(const char *path, char *err, size_t cap);

/* Opens path for reading: refuses anything but a regular file, never
 * blocks (opened O_NONBLOCK, the flag cleared once the file is known to be
 * regular). NULL with the message in err on failure. */
FILE *file_open_read(const char *path, char *err, size_t cap);

/* Opens path for writing, created (0644) when absent, truncated when a
 * regular file; refuses anything else without truncating or blocking.
 * When not_same_as is non-NULL and names an existing file, the same file
 * (by device and inode: a symlink or ./path is caught) is refused too: an
 * output must not overwrite its own input. */
FILE *file_open_write(const char *path, const char *not_same_as, char *err, size_t cap);

/* Whether a and b name the same existing file (device and inode). */
bool file_same(const char *a, const char *b);

/* Reads path into a malloc'd buffer with a NUL after the last byte (*out,
 * *len_out bytes), through file_open_read. On failure *out is NULL, the
 * status says why and err (may be NULL) has the message, naming the path;
 * for FILE_READ_TOO_LARGE *len_out is the file's size. */
enum file_read_status file_read_all(const char *path, size_t max_bytes, char **out, size_t *len_out,
                                    char *err, size_t cap);

#endif
