/* testutil.c -- see testutil.h. */
#include "testutil.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* Atomic: tests check from worker threads too (test_hybrid, the race
 * tests), and a lost increment of `failed` would pass a failing test. */
static atomic_int passed, failed;

bool test_check(bool ok, const char *file, int line, const char *expr) {
    if (ok) {
        atomic_fetch_add(&passed, 1);
    } else {
        atomic_fetch_add(&failed, 1);
        fprintf(stderr, "%s:%d: CHECK failed: %s\n", file, line, expr);
    }
    return ok;
}

bool test_check_status(convsel_status_t got, convsel_status_t want, convsel_handle_t h,
                       const char *file, int line, const char *expr) {
    if (got == want)
        return test_check(true, file, line, expr);
    fprintf(stderr, "%s:%d: %s returned %s, expected %s (message: %s)\n", file, line, expr,
            convsel_status_string(got), convsel_status_string(want), convsel_get_error_message(h));
    return test_check(false, file, line, expr);
}

bool test_check_message(convsel_handle_t h, const char *needle, const char *file, int line) {
    const char *msg = convsel_get_error_message(h);
    if (strstr(msg, needle) != NULL)
        return test_check(true, file, line, needle);
    fprintf(stderr, "%s:%d: message '%s' does not contain '%s'\n", file, line, msg, needle);
    return test_check(false, file, line, needle);
}

int test_finish(const char *name) {
    const int p = atomic_load(&passed), f = atomic_load(&failed);
    printf("%s: %d passed, %d failed\n", name, p, f);
    return f == 0 && p > 0 ? 0 : 1;
}

void test_skip(const char *name, const char *why) {
    printf("%s: skipped: %s\n", name, why);
    exit(77);
}

const char *test_shared_dir(void) {
    const char *dir = getenv("CONVSEL_SHARED_DIR");
    struct stat st;
    if (dir == NULL || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return NULL;
    return dir;
}

int test_run_command(const char *command, char *out, size_t cap) {
    char full[4096];
    snprintf(full, sizeof full, "%s 2>&1", command);
    FILE *f = popen(full, "r");
    if (f == NULL)
        return -1;
    size_t used = fread(out, 1, cap - 1, f);
    out[used] = '\0';
    /* Drain anything past cap so the child does not block on a full pipe. */
    char sink[4096];
    while (fread(sink, 1, sizeof sink, f) > 0) {
    }
    int status = pclose(f);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

const char *test_convsel_bin(void) {
    const char *bin = getenv("CONVSEL_BIN");
    return bin ? bin : "./convsel";
}

int test_convsel(const char *env, const char *args, char *out, size_t cap) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s %s", env ? env : "", test_convsel_bin(), args);
    return test_run_command(cmd, out, cap);
}

static char tmpdir[256];

const char *test_tmpdir(const char *name) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/convsel-%s-XXXXXX", name);
    if (mkdtemp(tmpdir) == NULL)
        test_skip(name, "cannot create a temporary directory");
    return tmpdir;
}

const char *test_tmp_path(const char *file) {
    static char bufs[8][512];
    static int next;
    char *p = bufs[next++ % 8];
    snprintf(p, sizeof bufs[0], "%s/%s", tmpdir, file);
    return p;
}

void test_tmpdir_remove(void) {
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (tmpdir[0] && system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
}

bool test_contains(const char *text, const char *needle) {
    const bool ok = strstr(text, needle) != NULL;
    if (!ok)
        fprintf(stderr, "  text lacks \"%s\":\n%s\n", needle, text);
    return ok;
}
