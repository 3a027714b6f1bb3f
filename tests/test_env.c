/* test_env.c -- util/env.c: the boolean, choice and number words, the default for
 * unset, empty and unreadable values, and one warning per variable per
 * process (captured from stderr), naming the variable, value and words. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "util/env.h"

/* stderr goes to a file while fn runs; returns what was written. */
static char captured[4096];
static const char *capture(void (*fn)(void)) {
    fflush(stderr);
    const int saved = dup(2);
    FILE *f = tmpfile();
    CHECK(f != NULL && saved >= 0);
    if (!f || saved < 0)
        return "";
    dup2(fileno(f), 2);
    fn();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(f);
    const size_t n = fread(captured, 1, sizeof captured - 1, f);
    captured[n] = '\0';
    fclose(f);
    return captured;
}

static void words(void) {
    static const char *const yes[] = {"1", "true", "TRUE", "On", "yes", "YES"};
    static const char *const no[] = {"0", "false", "Off", "no", "NO"};
    bool b;
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
        CHECK(env_parse_bool(yes[i], &b) && b);
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        CHECK(env_parse_bool(no[i], &b) && !b);
    CHECK(!env_parse_bool("2", &b) && !env_parse_bool("", &b) && !env_parse_bool("yes ", &b) &&
          !env_parse_bool("tru", &b));
}

static bool got_a, got_b;
static int got_c, got_d;
static void read_bad(void) {
    setenv("CONVSEL_TEST_ENV_A", "maybe", 1);
    got_a = env_bool("CONVSEL_TEST_ENV_A", true);
    got_b = env_bool("CONVSEL_TEST_ENV_A", false); /* same variable: no second warning */
    static const char *const modes[] = {"immediate", "hybrid", "exhaustive"};
    setenv("CONVSEL_TEST_ENV_C", "fast", 1);
    got_c = env_choice("CONVSEL_TEST_ENV_C", modes, 3, 1);
    got_d = env_choice("CONVSEL_TEST_ENV_C", modes, 3, 2);
}

static long got_l[8];
static void read_numbers(void) {
    const char *const bad[] = {"fast", "12x", "-1", "10001",
                               "",     "+5",  " 5", "99999999999999999999"};
    for (int i = 0; i < 8; i++) {
        char name[32];
        snprintf(name, sizeof name, "CONVSEL_TEST_ENV_L%d", i);
        setenv(name, bad[i], 1);
        got_l[i] = env_long(name, 0, 10000, 50);
    }
}

static bool quiet_ok;
static void read_good(void) {
    static const char *const modes[] = {"immediate", "hybrid", "exhaustive"};
    unsetenv("CONVSEL_TEST_ENV_E");
    quiet_ok = env_bool("CONVSEL_TEST_ENV_E", true) && !env_bool("CONVSEL_TEST_ENV_E", false);
    setenv("CONVSEL_TEST_ENV_E", "", 1); /* empty: the default, silently */
    quiet_ok = quiet_ok && env_bool("CONVSEL_TEST_ENV_E", true);
    setenv("CONVSEL_TEST_ENV_E", "off", 1);
    quiet_ok = quiet_ok && !env_bool("CONVSEL_TEST_ENV_E", true);
    setenv("CONVSEL_TEST_ENV_F", "HyBrId", 1);
    quiet_ok = quiet_ok && env_choice("CONVSEL_TEST_ENV_F", modes, 3, 0) == 1;
    unsetenv("CONVSEL_TEST_ENV_F");
    quiet_ok = quiet_ok && env_choice("CONVSEL_TEST_ENV_F", modes, 3, 2) == 2;
    const char *const good[] = {"0", "10000", "200", "-3"};
    const long want[] = {0, 10000, 200, -3};
    for (int i = 0; i < 4; i++) {
        setenv("CONVSEL_TEST_ENV_G", good[i], 1);
        quiet_ok = quiet_ok && env_long("CONVSEL_TEST_ENV_G", -5, 10000, 7) == want[i];
    }
    unsetenv("CONVSEL_TEST_ENV_G");
    quiet_ok = quiet_ok && env_long("CONVSEL_TEST_ENV_G", 0, 1, 1) == 1;
}

int main(void) {
    words();
    const char *err = capture(read_bad);
    CHECK(got_a == true && got_b == false); /* the default each time */
    CHECK(got_c == 1 && got_d == 2);
    CHECK(test_contains(err, "convsel: warning: CONVSEL_TEST_ENV_A=maybe: takes 0/1, false/true, "
                             "off/on or no/yes; using the default"));
    CHECK(test_contains(err, "CONVSEL_TEST_ENV_C=fast: takes immediate, hybrid or exhaustive"));
    const char *first_a = strstr(err, "ENV_A"); /* warned once per variable */
    CHECK(first_a && strstr(first_a + 1, "ENV_A") == NULL);
    const char *first_c = strstr(err, "ENV_C");
    CHECK(first_c && strstr(first_c + 1, "ENV_C") == NULL);
    err = capture(read_numbers);
    for (int i = 0; i < 8; i++) /* the default, and a warning, except for the empty value */
        CHECK(got_l[i] == 50);
    CHECK(test_contains(err, "CONVSEL_TEST_ENV_L0=fast: takes a whole number from 0 to 10000"));
    for (int i = 0; i < 8; i++) {
        char name[32];
        snprintf(name, sizeof name, "CONVSEL_TEST_ENV_L%d=", i);
        CHECK(i == 4 ? strstr(err, name) == NULL : test_contains(err, name));
    }
    err = capture(read_good);
    CHECK(quiet_ok);
    CHECK(err[0] == '\0');
    return test_finish("test_env");
}
