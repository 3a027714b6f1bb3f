/* json.c -- see json.h. */
#include "util/json.h"

#include <pthread.h>
#include <stdio.h>

/* cJSON_ParseWithLengthOpts (cJSON 1.7) stores the error position in a
 * process-wide variable on every call, so two threads parsing at once race
 * on it (ThreadSanitizer reports it). Parsing happens only while a model
 * loads, never on the prediction path, so a mutex around the parse alone is
 * cheap; everything after the parse (decoding, planning, embedded tests)
 * still runs in parallel. The error position comes from return_parse_end,
 * read under the same lock. */
static pthread_mutex_t parse_lock = PTHREAD_MUTEX_INITIALIZER;

cJSON *json_parse(const char *json, size_t len, char *err, size_t cap) {
    const char *end = NULL;
    pthread_mutex_lock(&parse_lock);
    cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
    pthread_mutex_unlock(&parse_lock);
    if (root == NULL && err != NULL && cap > 0) {
        size_t pos = end != NULL && end >= json ? (size_t)(end - json) : 0;
        snprintf(err, cap, "malformed JSON near byte %zu of %zu%s", pos, len,
                 pos + 1 >= len ? " (truncated?)" : "");
    }
    return root;
}
