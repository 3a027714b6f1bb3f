/* main.c -- the convsel command: dispatches to one subcommand per file. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "convsel/convsel.h"

static const struct {
    const char *name;
    cli_command_fn fn;
    const char *summary;
} commands[] = {
    {"conv", cmd_conv, "run one convolution, time it, optionally verify it"},
    {"bench", cmd_bench, "benchmark every solver, the oracle and oneDNN on a CSV of problems"},
    {"predict", cmd_predict, "what MIOpen's AI heuristics pick, from MIOpen's model files"},
    {"race", cmd_race, "the model-cache race harness (safe vs unguarded cache)"},
    {"bench-cache", cmd_bench_cache, "warm lookup cost: convsel's cache vs a global mutex"},
    {"tune", cmd_tune, "measure every solver on many problems into the performance database"},
    {"train", cmd_train, "train the ranking model on a performance database"},
    {"eval", cmd_eval, "score a ranking (today: the rules) against measured problems"},
    {"db", cmd_db, "db info [PATH] | db merge OUT IN...: the performance database"},
    {"models", cmd_models, "models check PATH...: load model files and run their embedded tests"},
};

static void usage(FILE *out) {
    fprintf(out, "usage: convsel <command> [flags]   (convsel <command> --help for its flags)\n\n"
                 "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\nexit status: 0 success, 1 failure (e.g. verification), 2 invalid input, "
                 "3 not supported\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "help") == 0) {
        usage(stdout);
        return EXIT_OK;
    }
    if (strcmp(name, "--version") == 0) {
        printf("convsel %s\n", convsel_version());
        return EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(name, commands[i].name) == 0)
            return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "convsel: unknown command '%s'\n\n", name);
    usage(stderr);
    return EXIT_USAGE;
}
