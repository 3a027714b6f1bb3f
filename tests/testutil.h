/* testutil.h -- the one-page harness every test_<name>.c uses.
 *
 * CHECK records a failure (file, line, expression) and carries on, so one
 * run shows every broken case; test_finish prints "N passed, N failed" and
 * returns the exit code. A test that cannot run (no ../shared) calls
 * test_skip, which exits with 77: ctest reports it as skipped. */
#ifndef CONVSEL_TESTS_TESTUTIL_H
#define CONVSEL_TESTS_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "convsel/convsel.h"

bool test_check(bool ok, const char *file, int line, const char *expr);
#define CHECK(cond) test_check((cond), __FILE__, __LINE__, #cond)

/* Checks that expr returns `want`; on mismatch prints both and the handle's message. */
bool test_check_status(convsel_status_t got, convsel_status_t want, convsel_handle_t h,
                       const char *file, int line, const char *expr);
#define CHECK_STATUS(h, expr, want)                                                                \
    test_check_status((expr), (want), (h), __FILE__, __LINE__, #expr)

/* Checks that the handle's message contains `needle`. */
bool test_check_message(convsel_handle_t h, const char *needle, const char *file, int line);
#define CHECK_MESSAGE(h, needle) test_check_message((h), (needle), __FILE__, __LINE__)

/* Prints the totals and returns the process exit code (0 when all passed). */
int test_finish(const char *name);

/* Exits with 77 (skipped) after printing why. */
void test_skip(const char *name, const char *why) __attribute__((noreturn));

/* The ../shared directory beside the checkout, or NULL when absent. */
const char *test_shared_dir(void);

/* Runs `command` with /bin/sh, capturing stdout+stderr into out (NUL
 * terminated, truncated to cap). Returns the exit status, or -1. */
int test_run_command(const char *command, char *out, size_t cap);

/* The path of the convsel binary under test (from CONVSEL_BIN). */
const char *test_convsel_bin(void);

/* Runs `[env] <convsel> <args>` (env: NULL or assignments such as
 * "CONVSEL_DB=x") like test_run_command, and returns its exit status. */
int test_convsel(const char *env, const char *args, char *out, size_t cap);

/* A fresh directory /tmp/convsel-<name>-XXXXXX for this test's files
 * (the test is skipped when it cannot be made); test_tmp_path gives
 * dir/file in one of 8 rotating buffers; test_tmpdir_remove deletes it all. */
const char *test_tmpdir(const char *name);
const char *test_tmp_path(const char *file);
void test_tmpdir_remove(void);

/* Whether text contains needle; when not, prints both (for CHECK). */
bool test_contains(const char *text, const char *needle);

#endif /* CONVSEL_TESTS_TESTUTIL_H */
