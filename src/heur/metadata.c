/* metadata.c -- a trained model's metadata, written and read as JSON in
 * MIOpen's TunaNet layout (see features.h). The reader is strict: a model
 * trained on another feature layout must be refused, not fed the wrong
 * numbers. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "heur/features.h"
#include "nn/json_util.h"

static bool fail(char *err, size_t cap, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
    return false;
}

char *metadata_to_json(const struct model_metadata *m) {
    cJSON *root = cJSON_CreateObject();
    cJSON *names = cJSON_AddArrayToObject(root, "conv_params_used_as_features");
    for (int f = 0; f < FEATURE_COUNT; f++)
        cJSON_AddItemToArray(names, cJSON_CreateString(feature_names[f]));
    cJSON *enc = cJSON_AddObjectToObject(root, "encodings");
    cJSON *layout = cJSON_AddObjectToObject(enc, "Layout");
    cJSON_AddNumberToObject(layout, "NCHW", 0);
    cJSON_AddNumberToObject(layout, "NHWC", 1);
    cJSON *solver = cJSON_AddObjectToObject(enc, "solver");
    for (int i = 0; i < m->num_solvers; i++)
        cJSON_AddNumberToObject(solver, m->solver_names[i], i);
    cJSON *features = cJSON_AddObjectToObject(
        cJSON_AddObjectToObject(cJSON_AddObjectToObject(root, "stats"), "overall"), "features");
    cJSON *mean = cJSON_AddObjectToObject(features, "mean");
    cJSON *std = cJSON_AddObjectToObject(features, "std");
    for (int f = 0; f < FEATURE_COUNT; f++) {
        cJSON_AddNumberToObject(mean, feature_names[f], m->stats.mean[f]);
        cJSON_AddNumberToObject(std, feature_names[f], m->stats.std[f]);
    }
    cJSON_AddNumberToObject(root, "num_inputs", FEATURE_COUNT);
    cJSON_AddNumberToObject(root, "num_outputs", m->num_solvers);
    cJSON_AddNumberToObject(root, "num_solvers", m->num_solvers);
    cJSON_AddStringToObject(root, "target", m->target);
    cJSON_AddStringToObject(root, "outputs", "log2 of the predicted time in ms, per solver");
    char *text = cJSON_Print(root); /* NULL if any allocation above failed */
    cJSON_Delete(root);
    return text;
}

static const cJSON *path(const cJSON *root, const char *a, const char *b, const char *c,
                         const char *d) {
    const cJSON *node = cJSON_GetObjectItemCaseSensitive(root, a);
    if (node && b)
        node = cJSON_GetObjectItemCaseSensitive(node, b);
    if (node && c)
        node = cJSON_GetObjectItemCaseSensitive(node, c);
    if (node && d)
        node = cJSON_GetObjectItemCaseSensitive(node, d);
    return node;
}

static bool read_features(const cJSON *root, struct model_metadata *m, char *err, size_t cap) {
    const cJSON *names = path(root, "conv_params_used_as_features", NULL, NULL, NULL);
    if (!cJSON_IsArray(names))
        return fail(err, cap, "metadata: conv_params_used_as_features must be an array");
    if (cJSON_GetArraySize(names) != FEATURE_COUNT)
        return fail(err, cap,
                    "metadata: %d features, this convsel computes %d (another feature layout)",
                    cJSON_GetArraySize(names), FEATURE_COUNT);
    for (int f = 0; f < FEATURE_COUNT; f++) {
        const cJSON *name = cJSON_GetArrayItem(names, f);
        if (!cJSON_IsString(name) || strcmp(name->valuestring, feature_names[f]) != 0)
            return fail(err, cap,
                        "metadata: feature %d is %s, this convsel computes %s there (another "
                        "feature layout)",
                        f, cJSON_IsString(name) ? name->valuestring : "not a string",
                        feature_names[f]);
    }
    const cJSON *mean = path(root, "stats", "overall", "features", "mean");
    const cJSON *std = path(root, "stats", "overall", "features", "std");
    for (int f = 0; f < FEATURE_COUNT; f++) {
        const cJSON *mu = cJSON_GetObjectItemCaseSensitive(mean, feature_names[f]);
        const cJSON *sd = cJSON_GetObjectItemCaseSensitive(std, feature_names[f]);
        if (!cJSON_IsNumber(mu) || !cJSON_IsNumber(sd))
            return fail(err, cap,
                        "metadata: stats.overall.features.{mean,std}.%s: missing or "
                        "not a number",
                        feature_names[f]);
        if (!(sd->valuedouble > 0) || sd->valuedouble > 1e30 || mu->valuedouble > 1e30 ||
            mu->valuedouble < -1e30)
            return fail(err, cap, "metadata: stats for %s: std must be in (0, 1e30], mean finite",
                        feature_names[f]);
        m->stats.mean[f] = (float)mu->valuedouble;
        m->stats.std[f] = (float)sd->valuedouble;
    }
    return true;
}

static bool read_solvers(const cJSON *root, struct model_metadata *m, char *err, size_t cap) {
    const cJSON *n = path(root, "num_solvers", NULL, NULL, NULL);
    const cJSON *solver = path(root, "encodings", "solver", NULL, NULL);
    if (!cJSON_IsNumber(n) || n->valuedouble < 1 || n->valuedouble > SOLVER_MAX ||
        n->valuedouble != (int)n->valuedouble)
        return fail(err, cap, "metadata: num_solvers must be an integer in 1..%d", SOLVER_MAX);
    m->num_solvers = (int)n->valuedouble;
    if (!cJSON_IsObject(solver) || cJSON_GetArraySize(solver) != m->num_solvers)
        return fail(err, cap, "metadata: encodings.solver must map %d solver names to indices",
                    m->num_solvers);
    bool seen[SOLVER_MAX] = {false};
    for (const cJSON *s = solver->child; s; s = s->next) {
        const double v = s->valuedouble;
        if (!cJSON_IsNumber(s) || v < 0 || v >= m->num_solvers || v != (int)v || seen[(int)v])
            return fail(err, cap, "metadata: encodings.solver.%s: index must be unique in 0..%d",
                        s->string, m->num_solvers - 1);
        if (strlen(s->string) >= METADATA_NAME_MAX)
            return fail(err, cap, "metadata: solver name %.40s...: longer than %d", s->string,
                        METADATA_NAME_MAX - 1);
        seen[(int)v] = true;
        snprintf(m->solver_names[(int)v], METADATA_NAME_MAX, "%s", s->string);
    }
    const cJSON *outputs = path(root, "num_outputs", NULL, NULL, NULL);
    const cJSON *inputs = path(root, "num_inputs", NULL, NULL, NULL);
    if (!cJSON_IsNumber(outputs) || outputs->valuedouble != m->num_solvers ||
        !cJSON_IsNumber(inputs) || inputs->valuedouble != FEATURE_COUNT)
        return fail(err, cap, "metadata: num_inputs must be %d and num_outputs %d", FEATURE_COUNT,
                    m->num_solvers);
    return true;
}

bool metadata_from_json(const char *text, size_t len, struct model_metadata *m, char *err,
                        size_t err_cap) {
    memset(m, 0, sizeof *m);
    cJSON *root = json_parse(text, len, err, err_cap);
    if (!root)
        return false;
    bool ok = cJSON_IsObject(root) ? true : fail(err, err_cap, "metadata: not a JSON object");
    ok = ok && read_features(root, m, err, err_cap) && read_solvers(root, m, err, err_cap);
    const cJSON *target = path(root, "target", NULL, NULL, NULL);
    if (ok && (!cJSON_IsString(target) || strlen(target->valuestring) >= METADATA_NAME_MAX))
        ok = fail(err, err_cap, "metadata: target must be a machine signature string");
    if (ok)
        snprintf(m->target, sizeof m->target, "%s", target->valuestring);
    cJSON_Delete(root);
    return ok;
}
