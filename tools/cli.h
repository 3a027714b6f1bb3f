/* cli.h -- shared pieces of the convsel command-line tool: exit codes, the
 * table-driven flag parser, and the subcommand signature. */
#ifndef CONVSEL_TOOLS_CLI_H
#define CONVSEL_TOOLS_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Exit codes shared by every subcommand. */
enum {
    EXIT_OK = 0,
    EXIT_FAILED = 1,        /* verification failed, or a runtime error */
    EXIT_USAGE = 2,         /* bad flags or an invalid problem */
    EXIT_NOT_SUPPORTED = 3, /* valid, but the solver/model cannot do it */
};

enum cli_kind { CLI_INT, CLI_DOUBLE, CLI_STRING, CLI_SWITCH };

struct cli_flag {
    const char *short_name; /* "-n", or NULL */
    const char *long_name;  /* "--batchsize", or NULL */
    enum cli_kind kind;
    void *dst;           /* int64_t*, double*, const char**, or bool* */
    const char *metavar; /* "N" in the help text */
    const char *help;
};

/* Parses argv[1..argc) against flags. Returns EXIT_OK; EXIT_USAGE after
 * printing what is wrong to stderr; or -1 when --help was given (help has
 * been printed to stdout). Integers must be whole decimal numbers, doubles
 * finite decimal numbers; their meaning is judged by the caller (the
 * library names bad fields). A flag given twice is an error (no silent
 * last-wins). A value that starts with "--" is taken only in the form
 * --flag=--value: otherwise `--db --list` would make a database named
 * "--list". */
int cli_parse(const char *command, const char *summary, int argc, char **argv,
              const struct cli_flag *flags, size_t count);

/* cli_parse, also setting given[i] when flags[i] appears (for defaults
 * that depend on whether a flag was given at all). */
int cli_parse_given(const char *command, const char *summary, int argc, char **argv,
                    const struct cli_flag *flags, size_t count, bool *given);

/* Reads a --weights value: "constant" (*constant = true) or "per-call"
 * (false); anything else is named on stderr and gives false. */
bool cli_weights_mode(const char *command, const char *value, bool *constant);

/* Whether a --threads value is in the library's range (1..
 * CONVSEL_MAX_THREADS); otherwise says so, naming the flag and the value. */
bool cli_threads_in_range(const char *command, const char *flag, int64_t value);

struct train_options;
/* Checks and converts the training flags shared by train and eval
 * (--epochs, --hidden, --seed, --ensemble, --rank-weight); false after
 * naming the flag and value that is out of range. */
bool cli_train_options(const char *command, int64_t epochs, int64_t hidden, int64_t seed,
                       int64_t ensemble, double rank_weight, struct train_options *o);

/* Prints the help text generated from the flag table. */
void cli_print_help(const char *command, const char *summary, const struct cli_flag *flags,
                    size_t count);

/* A subcommand: argv[0] is its name. Returns an exit code. */
typedef int (*cli_command_fn)(int argc, char **argv);

int cmd_conv(int argc, char **argv);
int cmd_models(int argc, char **argv);
int cmd_race(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_predict(int argc, char **argv);
int cmd_bench_cache(int argc, char **argv);
int cmd_db(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_train(int argc, char **argv);

#endif /* CONVSEL_TOOLS_CLI_H */
