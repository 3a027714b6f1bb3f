/* cmd_predict.c -- `convsel predict`: what MIOpen's AI heuristics would
 * decide for a problem on a given GPU arch, from MIOpen's own model files:
 * the TunaNet solver ranking, or (--ktn) the Kernel Tuning Net perf config. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "compat/miopen/miopen.h"
#include "heur/model_cache.h"
#include "problem_flags.h"

static const char summary[] =
    "Predicts what MIOpen's AI heuristics pick for a convolution on ARCH (gfx908, gfx90a,\n"
    "gfx942) with MIOpen's model files in DIR: the ranked solvers with their scores, best\n"
    "first, or with --ktn SOLVER the predicted perf-config string (ConvAsm1x1U; the CK\n"
    "solvers' validators need MIOpen's kernel list and are not available offline).\n"
    "The conv flags describe the problem in forward convention, as in MIOpenDriver.\n"
    "Exit status 3 when the model does not support the problem (the failed check is printed).";

int cmd_predict(int argc, char **argv) {
    struct problem_flags pf;
    problem_flags_defaults(&pf);
    const char *arch = NULL, *model_dir = NULL, *dtype = "fp32", *ktn = NULL;
    bool cache_stats = false;
    int64_t direction = 1;
    struct cli_flag flags[PROBLEM_FLAG_COUNT + 6];
    problem_flags_table(&pf, flags);
    flags[PROBLEM_FLAG_COUNT + 0] = (struct cli_flag){
        NULL, "--miopen-arch", CLI_STRING, &arch, "ARCH", "gfx908, gfx90a or gfx942 (required)"};
    flags[PROBLEM_FLAG_COUNT + 1] = (struct cli_flag){
        NULL,       "--model-dir",
        CLI_STRING, &model_dir,
        "DIR",      "directory with MIOpen's *.tn.model / *.ktn.model files (required)"};
    flags[PROBLEM_FLAG_COUNT + 2] = (struct cli_flag){
        "-F",    "--forw",
        CLI_INT, &direction,
        "1|2|4", "direction: 1 forward, 2 backward data, 4 backward weights (default 1)"};
    flags[PROBLEM_FLAG_COUNT + 3] = (struct cli_flag){
        "-t", "--type", CLI_STRING, &dtype, "fp32|fp16|bf16", "data type (default fp32)"};
    flags[PROBLEM_FLAG_COUNT + 4] = (struct cli_flag){
        NULL, "--ktn", CLI_STRING, &ktn, "SOLVER", "print the KTN perf config for SOLVER instead"};
    flags[PROBLEM_FLAG_COUNT + 5] = (struct cli_flag){
        NULL, "--cache-stats", CLI_SWITCH, &cache_stats, "", "print the model cache's counters"};
    int rc = cli_parse("predict", summary, argc, argv, flags, sizeof flags / sizeof flags[0]);
    if (rc != EXIT_OK)
        return rc < 0 ? EXIT_OK : rc;
    if (arch == NULL || model_dir == NULL) {
        fprintf(stderr, "convsel predict: --miopen-arch and --model-dir are required\n");
        return EXIT_USAGE;
    }
    if (direction != 1 && direction != 2 && direction != 4) {
        fprintf(stderr, "convsel predict: -F %lld: must be 1, 2 or 4\n", (long long)direction);
        return EXIT_USAGE;
    }
    enum miopen_dtype t;
    if (strcmp(dtype, "fp32") == 0)
        t = MIOPEN_FP32;
    else if (strcmp(dtype, "fp16") == 0)
        t = MIOPEN_FP16;
    else if (strcmp(dtype, "bf16") == 0)
        t = MIOPEN_BF16;
    else {
        fprintf(stderr, "convsel predict: -t '%s': must be fp32, fp16 or bf16\n", dtype);
        return EXIT_USAGE;
    }
    /* Validate the problem with the library, as convsel conv does. */
    convsel_handle_t h;
    if (convsel_handle_create(&h) != CONVSEL_STATUS_SUCCESS)
        return EXIT_FAILED;
    struct problem_descs d;
    rc = problem_descs_create("predict", h, &pf, &d);
    problem_descs_destroy(&d);
    convsel_handle_destroy(h);
    if (rc != EXIT_OK)
        return rc;
    struct miopen_problem p = {.direction = (enum miopen_direction)direction,
                               .dtype = t,
                               .layout = pf.layout,
                               .n = pf.n,
                               .c = pf.c,
                               .h = pf.h,
                               .w = pf.w,
                               .k = pf.k,
                               .fy = pf.y,
                               .fx = pf.x,
                               .ph = pf.pad_h,
                               .pw = pf.pad_w,
                               .sh = pf.stride_h,
                               .sw = pf.stride_w,
                               .dh = pf.dil_h,
                               .dw = pf.dil_w,
                               .g = pf.groups};
    miopen_problem_finish(&p);

    char msg[MIOPEN_MESSAGE_MAX];
    enum miopen_status st;
    if (ktn != NULL) {
        char config[256];
        if (strcmp(ktn, "ConvAsm1x1U") != 0) {
            fprintf(stderr,
                    "convsel predict: --ktn %s: only ConvAsm1x1U can be predicted offline (the CK "
                    "solvers' validators need MIOpen's kernel-instance list)\n",
                    ktn);
            return EXIT_NOT_SUPPORTED;
        }
        st = miopen_ktn_conv_asm_1x1u(model_dir, arch, &p, config, sizeof config, msg, sizeof msg);
        if (st == MIOPEN_OK)
            printf("%s\n", config);
    } else {
        struct miopen_ranked_solver r[MIOPEN_MAX_SOLVERS];
        size_t n = 0;
        st = miopen_tunanet_rank(model_dir, arch, &p, NULL, NULL, r, &n, msg, sizeof msg);
        for (size_t i = 0; st == MIOPEN_OK && i < n; i++)
            printf("%-45s %10.4f\n", r[i].name, (double)r[i].score);
    }
    if (cache_stats) {
        const struct cache_stats cs = cache_get_stats(cache_global());
        fprintf(stderr, "model cache: loads=%llu hits=%llu misses=%llu waits=%llu failures=%llu\n",
                (unsigned long long)cs.loads, (unsigned long long)cs.hits,
                (unsigned long long)cs.misses, (unsigned long long)cs.waits,
                (unsigned long long)cs.failures);
    }
    switch (st) {
    case MIOPEN_OK: return EXIT_OK;
    case MIOPEN_NOT_APPLICABLE:
    case MIOPEN_NO_PREDICTION:
        fprintf(stderr, "convsel predict: not supported: %s\n", msg);
        return EXIT_NOT_SUPPORTED;
    case MIOPEN_UNKNOWN_ARCH: fprintf(stderr, "convsel predict: %s\n", msg); return EXIT_USAGE;
    default: fprintf(stderr, "convsel predict: %s\n", msg); return EXIT_FAILED;
    }
}
