/* json_util.h -- typed reads of a layer's JSON config with messages that
 * name the layer and the key. */
#ifndef CONVSEL_NN_JSON_UTIL_H
#define CONVSEL_NN_JSON_UTIL_H

#include "nn/internal.h"
#include "util/json.h"

/* Each returns NN_OK, or NN_ERR_FORMAT naming `layer` and `key`. A missing
 * key (or null) gives the default when `required` is false. */
enum nn_status json_get_bool(const cJSON *obj, const char *key, bool required, bool dflt, bool *out,
                             const char *layer, char *err, size_t cap);
enum nn_status json_get_size(const cJSON *obj, const char *key, bool required, size_t dflt,
                             size_t max, size_t *out, const char *layer, char *err, size_t cap);
enum nn_status json_get_float(const cJSON *obj, const char *key, bool required, float dflt,
                              float *out, const char *layer, char *err, size_t cap);
/* A string, or NULL when absent/null and not required. */
enum nn_status json_get_string(const cJSON *obj, const char *key, bool required, const char **out,
                               const char *layer, char *err, size_t cap);
/* An int or a list of ints (1..NN_MAX_RANK), e.g. an `axis` setting. */
enum nn_status json_get_int_list(const cJSON *obj, const char *key, bool required, int dflt,
                                 int *out, int *n_out, const char *layer, char *err, size_t cap);

#endif
