/* problem_key.c -- the canonical string form of a problem (grammar in
 * include/convsel/convsel.h). Caches and databases key on it, so formatting
 * and parsing must round-trip exactly; parsing is strict because keys also
 * come from files we did not write.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/problem.h"

static const struct {
    convsel_layout_t layout;
    convsel_filter_layout_t filter_layout;
    const char *token;
} layout_tokens[] = {
    {CONVSEL_LAYOUT_NCHW, CONVSEL_FILTER_KCRS, "NCHW"},
    {CONVSEL_LAYOUT_NHWC, CONVSEL_FILTER_KRSC, "NHWC"},
    {CONVSEL_LAYOUT_NCHW, CONVSEL_FILTER_KRSC, "NCHW_KRSC"},
    {CONVSEL_LAYOUT_NHWC, CONVSEL_FILTER_KCRS, "NHWC_KCRS"},
};

size_t problem_key_format(const struct conv_problem *p, char *buf, size_t cap) {
    const char *layout = "?";
    for (size_t i = 0; i < sizeof layout_tokens / sizeof layout_tokens[0]; i++)
        if (layout_tokens[i].layout == p->layout &&
            layout_tokens[i].filter_layout == p->filter_layout)
            layout = layout_tokens[i].token;
    int len = snprintf(buf, cap,
                       "%" PRId64 "-%" PRId64 "-%" PRId64 "-%" PRId64 "x%" PRId64 "-%" PRId64
                       "-%" PRId64 "-%" PRId64 "-%" PRId64 "-%" PRId64 "x%" PRId64 "-%" PRId64
                       "x%" PRId64 "-%" PRId64 "x%" PRId64 "-g%" PRId64 "-%s-FP32-F",
                       p->c, p->h, p->w, p->r, p->s, p->k, p->oh, p->ow, p->n, p->pad_h, p->pad_w,
                       p->stride_h, p->stride_w, p->dil_h, p->dil_w, p->groups, layout);
    return len < 0 ? 0 : (size_t)len;
}

/* Reads a decimal integer without sign, '+' or leading zeros at *cur (the
 * canonical spelling only: "01" and "1" must not be two keys for one
 * problem); at most 18 digits so it cannot overflow. False otherwise. */
static bool read_uint(const char **cur, int64_t *out) {
    const char *s = *cur;
    if (s[0] == '0' && s[1] >= '0' && s[1] <= '9')
        return false;
    int64_t v = 0;
    int digits = 0;
    while (*s >= '0' && *s <= '9') {
        if (++digits > 18)
            return false;
        v = v * 10 + (*s - '0');
        s++;
    }
    if (digits == 0)
        return false;
    *cur = s;
    *out = v;
    return true;
}

static bool expect(const char **cur, char c) {
    if (**cur != c)
        return false;
    (*cur)++;
    return true;
}

convsel_status_t problem_key_parse(const char *key, struct conv_problem *p, char *err, size_t cap) {
    /* Each step: the field it reads, where it stores it, and the separator
     * that must follow ('\0' for none). */
    int64_t oh = 0, ow = 0;
    struct conv_problem q;
    memset(&q, 0, sizeof q);
    const struct {
        const char *name;
        int64_t *dst;
        char prefix;
        char sep;
    } steps[] = {
        {"C", &q.c, 0, '-'},           {"H", &q.h, 0, '-'},        {"W", &q.w, 0, '-'},
        {"R", &q.r, 0, 'x'},           {"S", &q.s, 0, '-'},        {"K", &q.k, 0, '-'},
        {"OH", &oh, 0, '-'},           {"OW", &ow, 0, '-'},        {"N", &q.n, 0, '-'},
        {"PADH", &q.pad_h, 0, 'x'},    {"PADW", &q.pad_w, 0, '-'}, {"STRH", &q.stride_h, 0, 'x'},
        {"STRW", &q.stride_w, 0, '-'}, {"DILH", &q.dil_h, 0, 'x'}, {"DILW", &q.dil_w, 0, '-'},
        {"G", &q.groups, 'g', '-'},
    };
    if (key == NULL) {
        snprintf(err, cap, "problem key: NULL");
        return CONVSEL_STATUS_BAD_PARAM;
    }
    const char *cur = key;
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        if (steps[i].prefix && !expect(&cur, steps[i].prefix)) {
            snprintf(err, cap, "problem key '%.64s': field %s must start with '%c'", key,
                     steps[i].name, steps[i].prefix);
            return CONVSEL_STATUS_BAD_PARAM;
        }
        if (!read_uint(&cur, steps[i].dst)) {
            snprintf(err, cap, "problem key '%.64s': field %s is not a decimal integer", key,
                     steps[i].name);
            return CONVSEL_STATUS_BAD_PARAM;
        }
        if (!expect(&cur, steps[i].sep)) {
            snprintf(err, cap, "problem key '%.64s': expected '%c' after field %s", key,
                     steps[i].sep, steps[i].name);
            return CONVSEL_STATUS_BAD_PARAM;
        }
    }
    bool layout_ok = false;
    for (size_t i = 0; i < sizeof layout_tokens / sizeof layout_tokens[0]; i++) {
        size_t len = strlen(layout_tokens[i].token);
        if (strncmp(cur, layout_tokens[i].token, len) == 0 && cur[len] == '-') {
            q.layout = layout_tokens[i].layout;
            q.filter_layout = layout_tokens[i].filter_layout;
            cur += len + 1;
            layout_ok = true;
            break;
        }
    }
    if (!layout_ok) {
        snprintf(err, cap, "problem key '%.64s': unknown LAYOUT (NCHW, NHWC, NCHW_KRSC, NHWC_KCRS)",
                 key);
        return CONVSEL_STATUS_BAD_PARAM;
    }
    if (strcmp(cur, "FP32-F") != 0) {
        snprintf(err, cap, "problem key '%.64s': must end in FP32-F (fp32 forward)", key);
        return CONVSEL_STATUS_BAD_PARAM;
    }
    char why[PROBLEM_ERROR_MAX];
    if (problem_validate(&q, why, sizeof why) != CONVSEL_STATUS_SUCCESS) {
        snprintf(err, cap, "problem key '%.64s': %s", key, why);
        return CONVSEL_STATUS_BAD_PARAM;
    }
    if (q.oh != oh || q.ow != ow) {
        snprintf(err, cap,
                 "problem key '%.64s': OH x OW = %" PRId64 "x%" PRId64
                 " but the other fields give %" PRId64 "x%" PRId64,
                 key, oh, ow, q.oh, q.ow);
        return CONVSEL_STATUS_BAD_PARAM;
    }
    *p = q;
    return CONVSEL_STATUS_SUCCESS;
}
