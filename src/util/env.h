/* env.h -- convsel's environment switches, read one way: a boolean takes
 * 0/1, false/true, off/on, no/yes (any case); a choice takes one of its
 * words. Anything else gives one warning per variable and process, naming
 * the variable, the value and what it takes, and the default applies:
 * CONVSEL_AI_HEUR=off must not leave the model on without a word. */
#ifndef CONVSEL_UTIL_ENV_H
#define CONVSEL_UTIL_ENV_H

#include <stdbool.h>

/* The boolean value of $name; dflt when unset, empty or unreadable. */
bool env_bool(const char *name, bool dflt);

/* The index of $name's value in words[0..count) (case-insensitive); dflt
 * when unset or empty, or (with a warning) not one of them. */
int env_choice(const char *name, const char *const *words, int count, int dflt);

/* The integer value of $name, in [lo, hi]; dflt when unset or empty, or
 * (with a warning) not a whole decimal number in that range. */
long env_long(const char *name, long lo, long hi, long dflt);

/* Parses a boolean word; false when it is not one. */
bool env_parse_bool(const char *text, bool *out);

#endif
