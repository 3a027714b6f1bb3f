/* test_file.c -- the one file opener (util/file.c):
 *  - file_read_all: contents and NUL, the empty file, the size limit (with
 *    the size reported), a missing file;
 *  - hostile paths (issue #18, "a FIFO where a file is expected blocks
 *    forever in open"; "a directory as model -> 9223372036854775807 bytes";
 *    "a symlink loop as database -> does not exist"): a FIFO, a directory,
 *    a character device, a symlink loop and a dangling symlink are refused
 *    at once, each with a message naming the path and what it is;
 *  - file_open_write: refuses a FIFO or directory without blocking or
 *    truncating, and refuses to overwrite the file it is told is its
 *    input, also through a symlink or another spelling of the path. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "util/file.h"

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* Reads path, which must be refused with a message containing `what`. */
static void refused(const char *path, const char *what) {
    char *buf = (char *)1, err[FILE_ERROR_MAX] = "";
    size_t len = 7;
    const enum file_read_status st = file_read_all(path, 100, &buf, &len, err, sizeof err);
    CHECK(st == FILE_READ_CANNOT_OPEN && buf == NULL && len == 0);
    CHECK(strstr(err, path) != NULL && test_contains(err, what));
    CHECK(file_open_read(path, err, sizeof err) == NULL);
}

int main(void) {
    /* A test that blocks is a failed test: the alarm ends it. */
    alarm(20);
    test_tmpdir("file");
    char *buf = NULL, err[FILE_ERROR_MAX];
    size_t len = 0;
    write_text(test_tmp_path("a"), "hello, file");
    CHECK(file_read_all(test_tmp_path("a"), 100, &buf, &len, err, sizeof err) == FILE_READ_OK);
    CHECK(buf && len == 11 && strcmp(buf, "hello, file") == 0 && buf[len] == '\0');
    free(buf);
    write_text(test_tmp_path("empty"), "");
    CHECK(file_read_all(test_tmp_path("empty"), 100, &buf, &len, NULL, 0) == FILE_READ_OK);
    CHECK(buf && len == 0 && buf[0] == '\0');
    free(buf);
    CHECK(file_read_all(test_tmp_path("a"), 10, &buf, &len, err, sizeof err) ==
          FILE_READ_TOO_LARGE);
    CHECK(buf == NULL && len == 11 && test_contains(err, "exceeds the limit of 10"));
    CHECK(file_read_all(test_tmp_path("a"), 11, &buf, &len, NULL, 0) ==
          FILE_READ_OK); /* exactly the limit */
    free(buf);
    refused(test_tmp_path("missing"), "does not exist");
    CHECK(file_read_all(NULL, 100, &buf, &len, NULL, 0) == FILE_READ_CANNOT_OPEN);
    CHECK(buf == NULL && len == 0);

    /* hostile paths */
    CHECK(mkfifo(test_tmp_path("fifo"), 0644) == 0);
    refused(test_tmp_path("fifo"), "is a FIFO, not a regular file");
    CHECK(mkdir(test_tmp_path("dir"), 0755) == 0);
    refused(test_tmp_path("dir"), "is a directory, not a regular file");
    refused("/dev/null", "is a character device");
    CHECK(symlink(test_tmp_path("loop2"), test_tmp_path("loop1")) == 0);
    CHECK(symlink(test_tmp_path("loop1"), test_tmp_path("loop2")) == 0);
    refused(test_tmp_path("loop1"), "too many levels of symbolic links");
    CHECK(symlink(test_tmp_path("nowhere"), test_tmp_path("dangling")) == 0);
    refused(test_tmp_path("dangling"), "dangling symbolic link");
    CHECK(file_kind_of(test_tmp_path("a"), err, sizeof err) == FILE_REGULAR);
    CHECK(file_kind_of(test_tmp_path("missing"), err, sizeof err) == FILE_ABSENT);
    CHECK(file_kind_of(test_tmp_path("fifo"), err, sizeof err) == FILE_OTHER);

    /* writing */
    FILE *f = file_open_write(test_tmp_path("out"), NULL, err, sizeof err);
    CHECK(f != NULL);
    if (f) {
        fputs("new", f);
        fclose(f);
    }
    CHECK(file_open_write(test_tmp_path("fifo"), NULL, err, sizeof err) == NULL &&
          test_contains(err, "is a FIFO"));
    CHECK(file_open_write(test_tmp_path("dir"), NULL, err, sizeof err) == NULL &&
          test_contains(err, "is a directory"));
    /* its own input, by name, by another spelling and through a symlink; not truncated */
    CHECK(file_open_write(test_tmp_path("a"), test_tmp_path("a"), err, sizeof err) == NULL &&
          test_contains(err, "is the same file as"));
    char other[600];
    snprintf(other, sizeof other, "%s/./a", test_tmp_path(""));
    CHECK(file_open_write(other, test_tmp_path("a"), err, sizeof err) == NULL);
    CHECK(symlink(test_tmp_path("a"), test_tmp_path("alias")) == 0);
    CHECK(file_open_write(test_tmp_path("alias"), test_tmp_path("a"), err, sizeof err) == NULL);
    CHECK(file_same(test_tmp_path("alias"), test_tmp_path("a")));
    CHECK(!file_same(test_tmp_path("out"), test_tmp_path("a")));
    CHECK(file_read_all(test_tmp_path("a"), 100, &buf, &len, NULL, 0) == FILE_READ_OK && len == 11);
    free(buf);
    /* a different output beside the input is fine */
    f = file_open_write(test_tmp_path("out"), test_tmp_path("a"), err, sizeof err);
    CHECK(f != NULL);
    if (f)
        fclose(f);
    test_tmpdir_remove();
    return test_finish("test_file");
}
