/* fuzz_metadata.c -- libFuzzer target for the model-metadata reader, which
 * reads files from the model directory (CONVSEL_MODEL_DIR: anyone's
 * files). Any bytes must be accepted or refused with a message; accepted
 * metadata must survive a write and a second read unchanged. Crashes,
 * leaks, a silent refusal and a failed round trip are findings. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "heur/features.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct model_metadata m, again;
    char err[METADATA_ERROR_MAX] = "";
    if (!metadata_from_json((const char *)data, size, &m, err, sizeof err)) {
        if (err[0] == '\0')
            abort(); /* a refusal must say why */
        return 0;
    }
    char *json = metadata_to_json(&m);
    if (json == NULL)
        return 0; /* out of memory */
    const bool ok = metadata_from_json(json, strlen(json), &again, err, sizeof err);
    free(json);
    if (!ok || memcmp(&m.stats, &again.stats, sizeof m.stats) != 0 ||
        m.num_solvers != again.num_solvers || strcmp(m.target, again.target) != 0 ||
        memcmp(&m.envelope, &again.envelope, sizeof m.envelope) != 0)
        abort();
    for (int i = 0; i < m.num_solvers; i++)
        if (strcmp(m.solver_names[i], again.solver_names[i]) != 0)
            abort();
    return 0;
}
