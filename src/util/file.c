/* file.c -- see file.h. */
#include "util/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void say(char *err, size_t cap, const char *fmt, ...) {
    if (err == NULL || cap == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
}

static const char *kind_name(mode_t mode) {
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "not a regular file";
}

/* The message for a failed stat/open of path with errno e. */
static void say_errno(const char *path, int e, char *err, size_t cap) {
    struct stat link;
    if (e == ENOENT && lstat(path, &link) == 0 && S_ISLNK(link.st_mode))
        say(err, cap, "%s: does not exist (a dangling symbolic link)", path);
    else if (e == ENOENT)
        say(err, cap, "%s: does not exist", path);
    else if (e == ELOOP)
        say(err, cap, "%s: too many levels of symbolic links (a symlink loop?)", path);
    else
        say(err, cap, "%s: %s", path, strerror(e));
}

enum file_kind file_kind_of(const char *path, char *err, size_t cap) {
    struct stat st;
    if (path == NULL || *path == '\0') {
        say(err, cap, "empty path");
        return FILE_OTHER;
    }
    if (stat(path, &st) != 0) {
        const int e = errno;
        say_errno(path, e, err, cap);
        return e == ENOENT ? FILE_ABSENT : FILE_OTHER;
    }
    if (S_ISREG(st.st_mode))
        return FILE_REGULAR;
    say(err, cap, "%s: is %s, not a regular file", path, kind_name(st.st_mode));
    return FILE_OTHER;
}

/* A regular file's descriptor made blocking again; -1 (closed) otherwise. */
static int regular_only(int fd, const char *path, char *err, size_t cap) {
    struct stat st;
    if (fstat(fd, &st) != 0) {
        say_errno(path, errno, err, cap);
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        say(err, cap, "%s: is %s, not a regular file", path, kind_name(st.st_mode));
        close(fd);
        return -1;
    }
    const int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
        say_errno(path, errno, err, cap);
        close(fd);
        return -1;
    }
    return fd;
}

FILE *file_open_read(const char *path, char *err, size_t cap) {
    if (path == NULL || *path == '\0') {
        say(err, cap, "empty path");
        return NULL;
    }
    /* O_NONBLOCK: opening a FIFO for reading would wait for a writer. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        say_errno(path, errno, err, cap);
        return NULL;
    }
    if ((fd = regular_only(fd, path, err, cap)) < 0)
        return NULL;
    FILE *f = fdopen(fd, "rb");
    if (f == NULL) {
        say_errno(path, errno, err, cap);
        close(fd);
    }
    return f;
}

bool file_same(const char *a, const char *b) {
    struct stat sa, sb;
    return a && b && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

FILE *file_open_write(const char *path, const char *not_same_as, char *err, size_t cap) {
    const enum file_kind kind = file_kind_of(path, err, cap);
    if (kind == FILE_OTHER)
        return NULL;
    if (not_same_as && file_same(path, not_same_as)) {
        say(err, cap, "%s: is the same file as %s, which it would overwrite", path, not_same_as);
        return NULL;
    }
    /* Not O_TRUNC: the type is checked on the descriptor first (the path
     * may have changed since the check above). */
    int fd = open(path, O_WRONLY | O_CREAT | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
    if (fd < 0) {
        say_errno(path, errno, err, cap);
        return NULL;
    }
    if ((fd = regular_only(fd, path, err, cap)) < 0)
        return NULL;
    if (ftruncate(fd, 0) != 0) {
        say_errno(path, errno, err, cap);
        close(fd);
        return NULL;
    }
    FILE *f = fdopen(fd, "wb");
    if (f == NULL) {
        say_errno(path, errno, err, cap);
        close(fd);
    }
    return f;
}

enum file_read_status file_read_all(const char *path, size_t max_bytes, char **out, size_t *len_out,
                                    char *err, size_t cap) {
    *out = NULL;
    *len_out = 0;
    FILE *f = file_open_read(path, err, cap);
    if (f == NULL)
        return FILE_READ_CANNOT_OPEN;
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && (unsigned long long)st.st_size > max_bytes) {
        *len_out = (size_t)st.st_size;
        say(err, cap, "%s: %lld bytes exceeds the limit of %zu", path, (long long)st.st_size,
            max_bytes);
        fclose(f);
        return FILE_READ_TOO_LARGE;
    }
    /* Read to the end rather than trusting st_size: the file may be growing. */
    size_t size = 0, have = st.st_size > 0 ? (size_t)st.st_size + 1 : 4096;
    char *buf = malloc(have + 1);
    enum file_read_status status = FILE_READ_OK;
    while (buf != NULL) {
        if (size == have) {
            have = have * 2 > max_bytes + 1 ? max_bytes + 1 : have * 2;
            char *grown = size < have ? realloc(buf, have + 1) : NULL;
            if (grown == NULL) {
                status = size > max_bytes ? FILE_READ_TOO_LARGE : FILE_READ_NO_MEMORY;
                break;
            }
            buf = grown;
        }
        const size_t got = fread(buf + size, 1, have - size, f);
        size += got;
        if (got == 0)
            break;
    }
    if (buf == NULL)
        status = FILE_READ_NO_MEMORY;
    else if (status == FILE_READ_OK && ferror(f))
        status = FILE_READ_IO_ERROR;
    else if (status == FILE_READ_OK && size > max_bytes)
        status = FILE_READ_TOO_LARGE;
    fclose(f);
    if (status != FILE_READ_OK) {
        if (status == FILE_READ_TOO_LARGE) {
            *len_out = size;
            say(err, cap, "%s: more than %zu bytes, the limit", path, max_bytes);
        } else {
            say(err, cap, "%s: %s", path,
                status == FILE_READ_NO_MEMORY ? "out of memory" : "read error");
        }
        free(buf);
        return status;
    }
    buf[size] = '\0';
    *out = buf;
    *len_out = size;
    return FILE_READ_OK;
}
