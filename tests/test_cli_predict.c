/* test_cli_predict.c -- `convsel predict` as a user runs it: TunaNet
 * rankings, the KTN perf config, failed checks (exit 3), bad flags (exit 2).
 * The model files come from ../shared; without it only the flag checks run. */
#include <stdio.h>
#include <string.h>

#include "testutil.h"

static char out[1 << 16];

static int predict(const char *args) {
    char line[2048];
    snprintf(line, sizeof line, "predict %s", args);
    return test_convsel(NULL, line, out, sizeof out);
}

int main(void) {
    CHECK(predict("--model-dir /tmp") == 2 &&
          strstr(out, "--miopen-arch and --model-dir are required"));
    CHECK(predict("--miopen-arch gfx942 --model-dir /tmp -F 3") == 2 &&
          strstr(out, "-F 3: must be 1, 2 or 4"));
    CHECK(predict("--miopen-arch gfx942 --model-dir /tmp -t fp64") == 2 &&
          strstr(out, "-t 'fp64'"));
    CHECK(predict("--miopen-arch gfx942 --model-dir /tmp -c 0") == 2 &&
          strstr(out, "x_desc.c = 0"));
    CHECK(predict("--help") == 0 && strstr(out, "--miopen-arch") && strstr(out, "--ktn"));
    CHECK(predict("--miopen-arch gfx942 --model-dir /nonexistent") == 1 &&
          strstr(out, "/nonexistent/gfx942_metadata.tn.model: does not exist"));

    const char *shared = test_shared_dir();
    if (shared == NULL) {
        printf("model checks skipped: ../shared is absent\n");
        return test_finish("test_cli_predict");
    }
    char args[4096];
    /* upstream gfx90a FP16 case: 24x1024x14x14, 2048 1x1 filters, stride 2 */
    snprintf(args, sizeof args,
             "--miopen-arch gfx90a --model-dir %s/miopen-ai-models -t fp16 -n 24 -c 1024 -H 14 "
             "-W 14 -k 2048 -y 1 -x 1 -p 0 -q 0 -u 2 -v 2",
             shared);
    CHECK(predict(args) == 0);
    int lines = 0;
    for (const char *s = out; (s = strchr(s, '\n')) != NULL; s++)
        lines++;
    CHECK(lines == 23);                             /* every gfx90a solver, one per line */
    CHECK(strncmp(out, "GemmFwd1x1_0_2", 14) == 0); /* best first */
    snprintf(args, sizeof args,
             "--miopen-arch gfx908 --model-dir %s/miopen-ai-models -F 2 -n 512 -c 192 -H 56 -W "
             "56 -k 288 -y 1 -x 1 -p 0 -q 0 --ktn ConvAsm1x1U",
             shared);
    CHECK(predict(args) == 0 && strcmp(out, "1,16,1,64,2,2,1,4\n") == 0);
    strcat(args, " --cache-stats"); /* metadata + encoder + decoder: 3 loads */
    CHECK(predict(args) == 0 && strstr(out, "model cache: loads=3 ") && strstr(out, "failures=0"));
    snprintf(args, sizeof args, "--miopen-arch gfx908 --model-dir %s/miopen-ai-models -g 2",
             shared);
    CHECK(predict(args) == 3 && strstr(out, "not supported: gfx908 TunaNet: group count 2 != 1"));
    snprintf(args, sizeof args,
             "--miopen-arch gfx908 --model-dir %s/miopen-ai-models --ktn ConvAsm1x1U", shared);
    CHECK(predict(args) == 3 && strstr(out, "1x1 filter")); /* the default problem is 3x3 */
    snprintf(
        args, sizeof args,
        "--miopen-arch gfx942 --model-dir %s/miopen-ai-models --ktn ConvHipIgemmGroupFwdXdlops",
        shared);
    CHECK(predict(args) == 3 && strstr(out, "only ConvAsm1x1U can be predicted offline"));
    snprintf(args, sizeof args, "--miopen-arch gfx1100 --model-dir %s/miopen-ai-models", shared);
    CHECK(predict(args) == 2 && strstr(out, "unknown arch 'gfx1100'"));
    return test_finish("test_cli_predict");
}
