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
 * library names bad fields). */
int cli_parse(const char *command, const char *summary, int argc, char **argv,
              const struct cli_flag *flags, size_t count);

/* Reads a --weights value: "constant" (*constant = true) or "per-call"
 * (false); anything else is named on stderr and gives false. */
bool cli_weights_mode(const char *command, const char *value, bool *constant);

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
