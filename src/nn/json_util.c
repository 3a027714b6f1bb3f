/* json_util.c -- typed config reads (the parse itself is util/json.c). */
#include "nn/json_util.h"

#include <math.h>
#include <string.h>

static const cJSON *get(const cJSON *obj, const char *key) {
    const cJSON *v = cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
    return cJSON_IsNull(v) ? NULL : v;
}

static enum nn_status missing(const char *key, const char *layer, char *err, size_t cap) {
    return nn_fail(err, cap, NN_ERR_FORMAT, "layer %.64s: config key '%s' is missing", layer, key);
}

static enum nn_status wrong(const char *key, const char *want, const char *layer, char *err,
                            size_t cap) {
    return nn_fail(err, cap, NN_ERR_FORMAT, "layer %.64s: config key '%s' must be %s", layer, key,
                   want);
}

enum nn_status json_get_bool(const cJSON *obj, const char *key, bool required, bool dflt, bool *out,
                             const char *layer, char *err, size_t cap) {
    const cJSON *v = get(obj, key);
    if (v == NULL) {
        *out = dflt;
        return required ? missing(key, layer, err, cap) : NN_OK;
    }
    if (!cJSON_IsBool(v))
        return wrong(key, "a boolean", layer, err, cap);
    *out = cJSON_IsTrue(v);
    return NN_OK;
}

enum nn_status json_get_size(const cJSON *obj, const char *key, bool required, size_t dflt,
                             size_t max, size_t *out, const char *layer, char *err, size_t cap) {
    const cJSON *v = get(obj, key);
    if (v == NULL) {
        *out = dflt;
        return required ? missing(key, layer, err, cap) : NN_OK;
    }
    if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > (double)max ||
        v->valuedouble != floor(v->valuedouble))
        return nn_fail(err, cap, NN_ERR_FORMAT,
                       "layer %.64s: config key '%s' must be an integer in 0..%zu", layer, key,
                       max);
    *out = (size_t)v->valuedouble;
    return NN_OK;
}

enum nn_status json_get_float(const cJSON *obj, const char *key, bool required, float dflt,
                              float *out, const char *layer, char *err, size_t cap) {
    const cJSON *v = get(obj, key);
    if (v == NULL) {
        *out = dflt;
        return required ? missing(key, layer, err, cap) : NN_OK;
    }
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return wrong(key, "a finite number", layer, err, cap);
    *out = (float)v->valuedouble;
    return NN_OK;
}

enum nn_status json_get_string(const cJSON *obj, const char *key, bool required, const char **out,
                               const char *layer, char *err, size_t cap) {
    const cJSON *v = get(obj, key);
    *out = NULL;
    if (v == NULL)
        return required ? missing(key, layer, err, cap) : NN_OK;
    if (!cJSON_IsString(v))
        return wrong(key, "a string", layer, err, cap);
    *out = v->valuestring;
    return NN_OK;
}

enum nn_status json_get_int_list(const cJSON *obj, const char *key, bool required, int dflt,
                                 int *out, int *n_out, const char *layer, char *err, size_t cap) {
    const cJSON *v = get(obj, key);
    *n_out = 0;
    if (v == NULL) {
        out[(*n_out)++] = dflt;
        return required ? missing(key, layer, err, cap) : NN_OK;
    }
    const cJSON *item = cJSON_IsArray(v) ? v->child : v;
    for (; item != NULL; item = cJSON_IsArray(v) ? item->next : NULL) {
        if (!cJSON_IsNumber(item) || fabs(item->valuedouble) > 16 ||
            item->valuedouble != floor(item->valuedouble))
            return wrong(key, "an integer or a list of integers in -16..16", layer, err, cap);
        if (*n_out == NN_MAX_RANK)
            return wrong(key, "a list of at most 5 integers", layer, err, cap);
        out[(*n_out)++] = (int)item->valuedouble;
    }
    if (*n_out == 0)
        return wrong(key, "a non-empty list", layer, err, cap);
    return NN_OK;
}
