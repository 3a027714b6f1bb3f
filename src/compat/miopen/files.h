/* files.h -- loading MIOpen's model and metadata files through the model
 * cache (internal to src/compat/miopen). */
#ifndef CONVSEL_COMPAT_MIOPEN_FILES_H
#define CONVSEL_COMPAT_MIOPEN_FILES_H

#include <cjson/cJSON.h>

#include "compat/miopen/miopen.h"
#include "nn/model.h"

/* The fdeep model in DIR/<file>, cached under (arch, kind, solver). NULL
 * with a message on failure (the failure is cached too). */
const struct nn_model *miopen_cached_model(const char *dir, const char *file, const char *arch,
                                           const char *kind, const char *solver, char *msg,
                                           size_t cap);

/* A parsed metadata object built by `build` from the JSON in DIR/<file>,
 * cached the same way. */
typedef void *(*miopen_metadata_builder)(const cJSON *root, char *err, size_t cap);
const void *miopen_cached_metadata(const char *dir, const char *file, const char *arch,
                                   const char *kind, const char *solver,
                                   miopen_metadata_builder build, void (*free_fn)(void *),
                                   char *msg, size_t cap);

#endif
