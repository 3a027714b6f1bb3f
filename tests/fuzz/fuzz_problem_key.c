/* fuzz_problem_key.c -- libFuzzer target for the problem-key parser, which
 * reads keys from files convsel did not write (performance databases):
 * any bytes must parse or fail with a message, and a key that parses must
 * format back to the identical text (the parser accepts exactly the
 * canonical form). Crashes, leaks and a failed round trip are findings. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/problem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char key[CONVSEL_PROBLEM_KEY_MAX * 2];
    if (size >= sizeof key)
        return 0;
    memcpy(key, data, size);
    key[size] = '\0';
    struct conv_problem p;
    char err[PROBLEM_ERROR_MAX];
    if (problem_key_parse(key, &p, err, sizeof err) != CONVSEL_STATUS_SUCCESS)
        return 0;
    char again[CONVSEL_PROBLEM_KEY_MAX];
    const size_t len = problem_key_format(&p, again, sizeof again);
    if (len >= sizeof again || strcmp(again, key) != 0)
        abort(); /* a parsed key must be canonical */
    return 0;
}
