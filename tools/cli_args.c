/* cli_args.c -- the flag parser behind every subcommand. One table per
 * command drives both parsing and --help, so they cannot disagree. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "convsel/convsel.h"
#include "train/train.h"

void cli_print_help(const char *command, const char *summary, const struct cli_flag *flags,
                    size_t count) {
    printf("usage: convsel %s [flags]\n\n%s\n\nflags:\n", command, summary);
    for (size_t i = 0; i < count; i++) {
        char names[64];
        snprintf(names, sizeof names, "%s%s%s %s", flags[i].short_name ? flags[i].short_name : "",
                 flags[i].short_name && flags[i].long_name ? ", " : "",
                 flags[i].long_name ? flags[i].long_name : "",
                 flags[i].kind == CLI_SWITCH ? "" : flags[i].metavar);
        printf("  %-32s %s\n", names, flags[i].help);
    }
    printf("  %-32s %s\n", "-h, --help", "show this help");
}

static bool parse_double(const char *s, double *out) {
    char *end;
    errno = 0;
    const double v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !isfinite(v))
        return false;
    *out = v;
    return true;
}

static bool parse_int(const char *s, int64_t *out) {
    if (*s == '\0')
        return false;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return false;
    *out = v;
    return true;
}

/* Finds the flag spelled `arg` (up to `len` characters). */
static const struct cli_flag *lookup(const char *arg, size_t len, const struct cli_flag *flags,
                                     size_t count) {
    for (size_t i = 0; i < count; i++) {
        const char *names[2] = {flags[i].short_name, flags[i].long_name};
        for (int j = 0; j < 2; j++)
            if (names[j] && strlen(names[j]) == len && strncmp(names[j], arg, len) == 0)
                return &flags[i];
    }
    return NULL;
}

int cli_parse(const char *command, const char *summary, int argc, char **argv,
              const struct cli_flag *flags, size_t count) {
    return cli_parse_given(command, summary, argc, argv, flags, count, NULL);
}

int cli_parse_given(const char *command, const char *summary, int argc, char **argv,
                    const struct cli_flag *flags, size_t count, bool *given) {
    bool seen[128] = {false};
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            cli_print_help(command, summary, flags, count);
            return -1;
        }
        /* --name=value is accepted for long flags. */
        const char *eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
        const size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        const struct cli_flag *f = arg[0] == '-' ? lookup(arg, len, flags, count) : NULL;
        if (f == NULL) {
            fprintf(stderr, "convsel %s: unknown %s '%s' (see 'convsel %s --help')\n", command,
                    arg[0] == '-' ? "flag" : "argument", arg, command);
            return EXIT_USAGE;
        }
        const size_t index = (size_t)(f - flags);
        if (index < sizeof seen && seen[index]) {
            fprintf(stderr, "convsel %s: flag '%.*s' given twice\n", command, (int)len, arg);
            return EXIT_USAGE;
        }
        if (index < sizeof seen)
            seen[index] = true;
        if (given)
            given[index] = true;
        if (f->kind == CLI_SWITCH) {
            if (eq) {
                fprintf(stderr, "convsel %s: flag '%.*s' takes no value\n", command, (int)len, arg);
                return EXIT_USAGE;
            }
            *(bool *)f->dst = true;
            continue;
        }
        const char *value = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (value == NULL) {
            fprintf(stderr, "convsel %s: flag '%s' needs a value (%s)\n", command, arg, f->metavar);
            return EXIT_USAGE;
        }
        if (!eq && strncmp(value, "--", 2) == 0) {
            fprintf(stderr,
                    "convsel %s: flag '%s' needs a value (%s), not the flag '%s' (write "
                    "%s=%s for a value that starts with --)\n",
                    command, arg, f->metavar, value, arg, value);
            return EXIT_USAGE;
        }
        if (f->kind == CLI_STRING) {
            *(const char **)f->dst = value;
        } else if (f->kind == CLI_DOUBLE) {
            if (!parse_double(value, (double *)f->dst)) {
                fprintf(stderr, "convsel %s: flag '%.*s' expects a finite number, got '%s'\n",
                        command, (int)len, arg, value);
                return EXIT_USAGE;
            }
        } else if (!parse_int(value, (int64_t *)f->dst)) {
            fprintf(stderr, "convsel %s: flag '%.*s' expects an integer, got '%s'\n", command,
                    (int)len, arg, value);
            return EXIT_USAGE;
        }
    }
    return EXIT_OK;
}

bool cli_threads_in_range(const char *command, const char *flag, int64_t value) {
    if (value >= 1 && value <= CONVSEL_MAX_THREADS)
        return true;
    fprintf(stderr, "convsel %s: %s %lld: must be in 1..%d\n", command, flag, (long long)value,
            CONVSEL_MAX_THREADS);
    return false;
}

bool cli_weights_mode(const char *command, const char *value, bool *constant) {
    *constant = strcmp(value, "constant") == 0;
    if (*constant || strcmp(value, "per-call") == 0)
        return true;
    fprintf(stderr, "convsel %s: --weights %s: must be constant or per-call\n", command, value);
    return false;
}

bool cli_train_options(const char *command, int64_t epochs, int64_t hidden, int64_t seed,
                       int64_t ensemble, double rank_weight, struct train_options *o) {
    const char *flag = NULL;
    long long value = 0, hi = 0;
    if (epochs < 1 || epochs > 100000)
        flag = "--epochs", value = epochs, hi = 100000;
    else if (hidden < 1 || hidden > MLP_MAX_HIDDEN)
        flag = "--hidden", value = hidden, hi = MLP_MAX_HIDDEN;
    else if (ensemble < 1 || ensemble > MLP_MAX_MEMBERS)
        flag = "--ensemble", value = ensemble, hi = MLP_MAX_MEMBERS;
    else if (seed < 0)
        flag = "--seed", value = seed, hi = INT64_MAX;
    if (flag) {
        fprintf(stderr, "convsel %s: %s %lld: must be in %d..%lld\n", command, flag, value,
                strcmp(flag, "--seed") == 0 ? 0 : 1, hi);
        return false;
    }
    if (!(rank_weight >= 0 && rank_weight <= 100)) {
        fprintf(stderr, "convsel %s: --rank-weight %g: must be in 0..100\n", command, rank_weight);
        return false;
    }
    *o = (struct train_options){.epochs = (int)epochs,
                                .hidden = (int)hidden,
                                .ensemble = (int)ensemble,
                                .seed = (unsigned long long)seed,
                                .rank_weight = (float)rank_weight};
    return true;
}
