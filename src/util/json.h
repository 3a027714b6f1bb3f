/* json.h -- the one place convsel calls cJSON's parser (model files,
 * model metadata, MIOpen's files all come through here). */
#ifndef CONVSEL_UTIL_JSON_H
#define CONVSEL_UTIL_JSON_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* Parses `json` (len bytes) with cJSON; see json.c for why this is
 * serialized. Returns NULL with "malformed JSON near byte N of M" in err. */
cJSON *json_parse(const char *json, size_t len, char *err, size_t cap);

#endif
