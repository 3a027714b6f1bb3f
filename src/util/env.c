/* env.c -- see env.h. */
#include "util/env.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The variables warned about so far: a handful at most. Copies, since a
 * caller's name need not outlive the call. */
static pthread_mutex_t warned_lock = PTHREAD_MUTEX_INITIALIZER;
static char warned[16][64];
static int n_warned;

static void warn_once(const char *name, const char *value, const char *takes) {
    pthread_mutex_lock(&warned_lock);
    bool seen = false;
    for (int i = 0; i < n_warned && !seen; i++)
        seen = strcmp(warned[i], name) == 0;
    if (!seen && n_warned < (int)(sizeof warned / sizeof warned[0]))
        snprintf(warned[n_warned++], sizeof warned[0], "%s", name);
    pthread_mutex_unlock(&warned_lock);
    if (!seen)
        fprintf(stderr, "convsel: warning: %s=%.40s: takes %s; using the default\n", name, value,
                takes);
}

bool env_parse_bool(const char *text, bool *out) {
    static const char *const yes[] = {"1", "true", "on", "yes"};
    static const char *const no[] = {"0", "false", "off", "no"};
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(text, yes[i]) == 0)
            return *out = true, true;
        if (strcasecmp(text, no[i]) == 0)
            return *out = false, true;
    }
    return false;
}

bool env_bool(const char *name, bool dflt) {
    const char *v = getenv(name);
    if (v == NULL || *v == '\0')
        return dflt;
    bool b;
    if (env_parse_bool(v, &b))
        return b;
    warn_once(name, v, "0/1, false/true, off/on or no/yes");
    return dflt;
}

int env_choice(const char *name, const char *const *words, int count, int dflt) {
    const char *v = getenv(name);
    if (v == NULL || *v == '\0')
        return dflt;
    for (int i = 0; i < count; i++)
        if (strcasecmp(v, words[i]) == 0)
            return i;
    char takes[256] = "";
    for (int i = 0; i < count; i++)
        snprintf(takes + strlen(takes), sizeof takes - strlen(takes), "%s%s",
                 i == 0           ? ""
                 : i == count - 1 ? " or "
                                  : ", ",
                 words[i]);
    warn_once(name, v, takes);
    return dflt;
}

long env_long(const char *name, long lo, long hi, long dflt) {
    const char *v = getenv(name);
    if (v == NULL || *v == '\0')
        return dflt;
    char *end;
    errno = 0;
    const long x = strtol(v, &end, 10);
    if (errno == 0 && *end == '\0' && end != v && x >= lo && x <= hi &&
        (*v == '-' || (*v >= '0' && *v <= '9')))
        return x;
    char takes[96];
    snprintf(takes, sizeof takes, "a whole number from %ld to %ld", lo, hi);
    warn_once(name, v, takes);
    return dflt;
}
