/* test_race.c -- the race harness end to end, through the convsel binary:
 *  - the real cache: 30 fresh processes x 8 threads with injected load
 *    delays end with crashed=0 wrong=0 extra_loads=0 (in the ThreadSanitizer
 *    build any TSan report makes a child fail, so this is also "TSan reports
 *    nothing for the real cache");
 *  - the unguarded map (MIOpen's bug, on purpose): the harness catches it
 *    (crashes or wrong results over 40 runs);
 *  - in the ThreadSanitizer build: TSan itself reports the unguarded map.
 * Uses ../shared's gfx942 TunaNet model when present, otherwise the LSTM
 * seed model (too fast to predict for the unguarded race to show, so those
 * checks skip). */
#include <stdio.h>
#include <string.h>

#include "testutil.h"

static char out[1 << 16];

static int race(const char *model, const char *args) {
    char line[4096];
    snprintf(line, sizeof line, "race --model %s %s", model, args);
    const int rc = test_convsel(NULL, line, out, sizeof out);
    printf("$ convsel race %s\n%s", args, out);
    return rc;
}

int main(void) {
    const char *shared = test_shared_dir();
    char model[2048];
    if (shared)
        snprintf(model, sizeof model, "%s/miopen-ai-models/gfx942.tn.model", shared);
    else
        snprintf(model, sizeof model, "%s/tests/fuzz/seeds/dense.json", CONVSEL_SOURCE_DIR);

    CHECK(race(model, "--runs 30 --threads 8 --size 64 --iters 24 --delay-us 200") == 0);
    CHECK(strstr(out, "race: variant=safe runs=30 crashed=0 wrong=0 extra_loads=0\n") != NULL);
    CHECK(strstr(out, "model cache, summed over the runs: hits=") != NULL);

    /* bad flags */
    CHECK(race(model, "--variant maybe") == 2 &&
          strstr(out, "--variant must be safe or unguarded"));
    CHECK(race(model, "--iters 5000 --size 100") == 2 &&
          strstr(out, "--iters must be in 1..size-1"));
    CHECK(race("/nonexistent.model", "--runs 1") == 2 && strstr(out, "cannot read the model file"));
    /* a model with three inputs and outputs: refused, not run (it crashed) */
    char lstm[2048];
    snprintf(lstm, sizeof lstm, "%s/tests/fuzz/seeds/lstm.json", CONVSEL_SOURCE_DIR);
    CHECK(race(lstm, "--runs 1") == 2 &&
          strstr(out, "lstm.json: 3 inputs and 3 outputs; race needs a model with one of each"));
    CHECK(race(lstm, "--child --threads 2 --size 8 --iters 2") == 2 &&
          strstr(out, "3 inputs and 3 outputs"));

    if (shared == NULL) {
        printf("unguarded checks skipped: ../shared is absent\n");
        return test_finish("test_race");
    }
#ifdef CONVSEL_TSAN_BUILD
    /* TSan sees the unguarded map's races directly (the child keeps going). */
    char child[4096];
    snprintf(child, sizeof child,
             "race --child --variant unguarded --threads 4 --size 32 --iters 8 --model %s", model);
    test_convsel("TSAN_OPTIONS=halt_on_error=0:report_signal_unsafe=0", child, out, sizeof out);
    const bool reported = strstr(out, "WARNING: ThreadSanitizer: data race") != NULL;
    if (!CHECK(reported))
        printf("%s\n", out);
    snprintf(child, sizeof child,
             "race --child --variant safe --threads 4 --size 32 --iters 8 --model %s", model);
    test_convsel("TSAN_OPTIONS=halt_on_error=0", child, out, sizeof out);
    CHECK(strstr(out, "ThreadSanitizer") == NULL);
#endif
    CHECK(race(model, "--runs 40 --threads 8 --size 128 --iters 100 --delay-us 200 "
                      "--variant unguarded") == 0);
    long crashed = 0, wrong = 0;
    const char *line = strstr(out, "race: variant=unguarded");
    CHECK(line && sscanf(line, "race: variant=unguarded runs=40 crashed=%ld wrong=%ld", &crashed,
                         &wrong) == 2);
    CHECK(crashed + wrong > 0); /* measured here: ~35 of 40 runs */
    return test_finish("test_race");
}
