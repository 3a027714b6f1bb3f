/* fuzz_limits.c -- libFuzzer target for the machine limits' text
 * (peak_parse), which is read from a database's meta table: a file
 * convsel may not have written, or hand-edited. Any bytes must parse or be
 * refused; text that parses must format to text that parses to the same
 * limits (what the next tune writes back). Crashes, leaks and a failed
 * round trip are findings. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/peak.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool same(const struct machine_limits *a, const struct machine_limits *b) {
    if (a->levels != b->levels || a->method != b->method || a->weights.count != b->weights.count ||
        a->weights.at != b->weights.at)
        return false;
    for (int i = 0; i < a->weights.count; i++)
        if (strcmp(a->weights.solver[i], b->weights.solver[i]) != 0)
            return false;
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char text[8192];
    if (size >= sizeof text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    struct machine_limits l, back;
    if (!peak_parse(text, &l))
        return 0;
    char again[8192];
    peak_format(&l, again, sizeof again);
    if (!peak_parse(again, &back) || !same(&l, &back))
        abort(); /* what tune would write back must read back */
    for (int i = 0; i < l.weights.count; i++)
        if (weights_cost_ms(&l.weights, l.weights.solver[i], i % 2, 1e6) < 0)
            abort(); /* a cost is never negative */
    return 0;
}
