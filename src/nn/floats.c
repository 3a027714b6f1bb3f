/* floats.c -- decoding of float arrays in model files: base64 of
 * little-endian float32 (possibly split into chunk strings), or plain JSON
 * number arrays. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nn/internal.h"

/* 0..63 for the standard and URL-safe alphabets, -1 otherwise. */
static int b64_value(unsigned char c) {
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+' || c == '-')
        return 62;
    if (c == '/' || c == '_')
        return 63;
    return -1;
}

bool nn_base64_decode(const char *const *parts, const size_t *lens, size_t n, unsigned char *out,
                      size_t out_cap, size_t *out_len) {
    uint32_t acc = 0;
    int bits = 0;
    size_t used = 0;
    bool padding = false;
    for (size_t p = 0; p < n; p++)
        for (size_t i = 0; i < lens[p]; i++) {
            const unsigned char c = (unsigned char)parts[p][i];
            if (c == '=') {
                padding = true;
                continue;
            }
            const int v = b64_value(c);
            if (v < 0 || padding) /* no data after padding */
                return false;
            acc = (acc << 6) | (uint32_t)v;
            bits += 6;
            if (bits >= 8) {
                bits -= 8;
                if (used == out_cap)
                    return false;
                out[used++] = (unsigned char)(acc >> bits);
                acc &= (1u << bits) - 1;
            }
        }
    *out_len = used;
    return true;
}

static float le_float(const unsigned char *b) {
    const uint32_t u =
        (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static enum nn_status decode_base64(struct nn_model *m, const cJSON *value, const char *what,
                                    float **out, size_t *count, char *err, size_t cap) {
    const bool single = cJSON_IsString(value);
    const size_t n = single ? 1 : (size_t)cJSON_GetArraySize(value);
    const char **parts = calloc(n ? n : 1, sizeof *parts);
    size_t *lens = calloc(n ? n : 1, sizeof *lens);
    enum nn_status st = NN_ERR_NOMEM;
    unsigned char *bytes = NULL;
    if (parts == NULL || lens == NULL)
        goto done;
    size_t total = 0;
    size_t i = 0;
    const cJSON *item = single ? value : value->child;
    for (; item != NULL && i < n; item = single ? NULL : item->next, i++) {
        if (!cJSON_IsString(item)) {
            st = nn_fail(err, cap, NN_ERR_FORMAT, "%s: chunk %zu is not a string", what, i);
            goto done;
        }
        parts[i] = item->valuestring;
        lens[i] = strlen(item->valuestring);
        total += lens[i];
    }
    /* Decoded size is at most 3/4 of the text: bounded by the file size. */
    const size_t max_bytes = total / 4 * 3 + 3;
    float *floats = nn_alloc(m, max_bytes / 4 * sizeof(float) + sizeof(float));
    bytes = malloc(max_bytes);
    if (floats == NULL || bytes == NULL)
        goto done;
    size_t len = 0;
    if (!nn_base64_decode(parts, lens, n, bytes, max_bytes, &len)) {
        st = nn_fail(err, cap, NN_ERR_FORMAT, "%s: invalid base64 data", what);
        goto done;
    }
    if (len % 4 != 0) {
        st = nn_fail(err, cap, NN_ERR_FORMAT,
                     "%s: invalid float vector data (%zu bytes, not a multiple of 4)", what, len);
        goto done;
    }
    for (size_t k = 0; k < len / 4; k++)
        floats[k] = le_float(bytes + 4 * k);
    *out = floats;
    *count = len / 4;
    st = NN_OK;
done:
    free(bytes);
    free(parts);
    free(lens);
    return st;
}

enum nn_status nn_decode_floats(struct nn_model *m, const cJSON *value, const char *what,
                                float **out, size_t *count, char *err, size_t cap) {
    if (cJSON_IsString(value))
        return decode_base64(m, value, what, out, count, err, cap);
    if (!cJSON_IsArray(value))
        return nn_fail(err, cap, NN_ERR_FORMAT, "%s: invalid float array format (%s)", what,
                       value == NULL ? "missing" : "not an array or string");
    const cJSON *first = value->child;
    if (first == NULL) { /* [] : zero floats */
        *out = nn_alloc(m, sizeof(float));
        *count = 0;
        return *out ? NN_OK : NN_ERR_NOMEM;
    }
    if (cJSON_IsString(first))
        return decode_base64(m, value, what, out, count, err, cap);
    const size_t n = (size_t)cJSON_GetArraySize(value);
    float *floats = nn_alloc(m, n * sizeof *floats);
    if (floats == NULL)
        return NN_ERR_NOMEM;
    size_t i = 0;
    for (const cJSON *item = first; item != NULL; item = item->next, i++) {
        if (!cJSON_IsNumber(item))
            return nn_fail(err, cap, NN_ERR_FORMAT, "%s: element %zu is not a number", what, i);
        floats[i] = (float)item->valuedouble;
    }
    *out = floats;
    *count = n;
    return NN_OK;
}
