/* test_file.c -- file_read_all: contents and NUL, the empty file, the size
 * limit (with the size reported), and a missing file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "util/file.h"

static void write(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

int main(void) {
    test_tmpdir("file");
    char *buf = NULL;
    size_t len = 0;
    write(test_tmp_path("a"), "hello, file");
    CHECK(file_read_all(test_tmp_path("a"), 100, &buf, &len) == FILE_READ_OK);
    CHECK(buf && len == 11 && strcmp(buf, "hello, file") == 0 && buf[len] == '\0');
    free(buf);
    write(test_tmp_path("empty"), "");
    CHECK(file_read_all(test_tmp_path("empty"), 100, &buf, &len) == FILE_READ_OK);
    CHECK(buf && len == 0 && buf[0] == '\0');
    free(buf);
    CHECK(file_read_all(test_tmp_path("a"), 10, &buf, &len) == FILE_READ_TOO_LARGE);
    CHECK(buf == NULL && len == 11);
    CHECK(file_read_all(test_tmp_path("a"), 11, &buf, &len) ==
          FILE_READ_OK); /* exactly the limit */
    free(buf);
    CHECK(file_read_all(test_tmp_path("missing"), 100, &buf, &len) == FILE_READ_CANNOT_OPEN);
    CHECK(buf == NULL && len == 0);
    CHECK(file_read_all(NULL, 100, &buf, &len) == FILE_READ_CANNOT_OPEN);
    test_tmpdir_remove();
    return test_finish("test_file");
}
