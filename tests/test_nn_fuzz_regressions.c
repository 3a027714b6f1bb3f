/* test_nn_fuzz_regressions.c -- replays every input in tests/fuzz/seeds and
 * tests/fuzz/regressions through the loader (and a prediction when it
 * loads), in every build, so an input that once crashed the loader keeps
 * being checked under the sanitizers without libFuzzer. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/model.h"
#include "testutil.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static int replay_dir(const char *dir) {
    DIR *d = opendir(dir);
    int count = 0;
    if (d == NULL)
        return 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        if (!CHECK(f != NULL))
            continue;
        static unsigned char buf[1 << 20];
        const size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        CHECK(LLVMFuzzerTestOneInput(buf, n) == 0); /* a crash would not return */
        count++;
    }
    closedir(d);
    return count;
}

int main(void) {
    const int seeds = replay_dir(CONVSEL_SOURCE_DIR "/tests/fuzz/seeds");
    const int regressions = replay_dir(CONVSEL_SOURCE_DIR "/tests/fuzz/regressions");
    printf("replayed %d seeds and %d regression inputs\n", seeds, regressions);
    CHECK(seeds >= 6);
    return test_finish("test_nn_fuzz_regressions");
}
