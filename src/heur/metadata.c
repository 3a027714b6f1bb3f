/* metadata.c -- a trained model's metadata, written and read as JSON in
 * MIOpen's TunaNet layout (see features.h). The reader is strict: a model
 * trained on another feature layout must be refused, not fed the wrong
 * numbers. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "heur/features.h"
#include "util/json.h"

static bool fail(char *err, size_t cap, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
    return false;
}

/* {"min": {feature: v}, "max": {feature: v}} into obj. */
static void add_bounds(cJSON *obj, const struct feature_bounds *b) {
    cJSON *lo = cJSON_AddObjectToObject(obj, "min");
    cJSON *hi = cJSON_AddObjectToObject(obj, "max");
    for (int f = 0; f < FEATURE_COUNT; f++) {
        cJSON_AddNumberToObject(lo, feature_names[f], b->min[f]);
        cJSON_AddNumberToObject(hi, feature_names[f], b->max[f]);
    }
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
    if (m->bounds.present)
        add_bounds(cJSON_AddObjectToObject(root, "bounds"), &m->bounds);
    bool any_kind = false;
    for (int k = 0; k < PROBLEM_KINDS; k++)
        any_kind |= m->kind_bounds[k].present;
    if (any_kind) {
        cJSON *by_kind = cJSON_AddObjectToObject(root, "bounds_by_kind");
        for (int k = 0; k < PROBLEM_KINDS; k++)
            if (m->kind_bounds[k].present)
                add_bounds(cJSON_AddObjectToObject(by_kind, problem_kind_names[k]),
                           &m->kind_bounds[k]);
    }
    if (m->limits.present) {
        cJSON *limits = cJSON_AddObjectToObject(root, "limits");
        cJSON_AddNumberToObject(limits, "peak_gflops", m->limits.peak_gflops);
        cJSON *levels = cJSON_AddArrayToObject(limits, "bandwidth");
        for (int i = 0; i < m->limits.levels; i++) {
            cJSON *level = cJSON_CreateObject();
            cJSON_AddNumberToObject(level, "bytes", m->limits.level_bytes[i]);
            cJSON_AddNumberToObject(level, "gbs", m->limits.level_gbs[i]);
            cJSON_AddItemToArray(levels, level);
        }
        const struct weights_costs *wc = &m->limits.weights;
        if (wc->count > 0) {
            cJSON *list = cJSON_AddArrayToObject(limits, "weights_transform");
            for (int i = 0; i < wc->count; i++) {
                cJSON *e = cJSON_CreateObject();
                cJSON_AddStringToObject(e, "solver", wc->solver[i]);
                cJSON_AddNumberToObject(e, "pointwise_ns", wc->ns[i][0]);
                cJSON_AddNumberToObject(e, "spatial_ns", wc->ns[i][1]);
                cJSON_AddItemToArray(list, e);
            }
        }
    }
    bool any_safe = false;
    for (int k = 0; k < SAFE_CLASSES; k++)
        any_safe |= m->safe_count[k] > 0;
    if (any_safe) {
        cJSON *safe = cJSON_AddObjectToObject(root, "safe");
        for (int k = 0; k < SAFE_CLASSES; k++) {
            if (k >= PROBLEM_KINDS && m->safe_count[k] == 0)
                continue; /* the kind's list serves it */
            cJSON *list = cJSON_AddArrayToObject(safe, safe_class_names[k]);
            for (int i = 0; i < m->safe_count[k]; i++)
                cJSON_AddItemToArray(list, cJSON_CreateString(m->solver_names[m->safe[k][i]]));
        }
    }
    const struct estimate_envelope *e = &m->envelope;
    if (e->present) {
        cJSON *env = cJSON_AddObjectToObject(root, "envelope");
        cJSON_AddNumberToObject(env, "log2_floor_ms_min", e->log2_min);
        cJSON_AddNumberToObject(env, "bin_width", e->width);
        cJSON_AddNumberToObject(env, "bins", e->bins);
        cJSON *by_solver = cJSON_AddObjectToObject(env, "solvers");
        for (int id = 0; id < solver_count(); id++) {
            if (!e->has[id])
                continue;
            cJSON *one = cJSON_AddObjectToObject(by_solver, solver_get(id)->name);
            cJSON *lo = cJSON_AddArrayToObject(one, "lo");
            cJSON *hi = cJSON_AddArrayToObject(one, "hi");
            for (int b = 0; b < e->bins; b++) {
                cJSON_AddItemToArray(lo, cJSON_CreateNumber(e->lo[id][b]));
                cJSON_AddItemToArray(hi, cJSON_CreateNumber(e->hi[id][b]));
            }
        }
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

static bool finite_number(const cJSON *v, double lo, double hi) {
    return cJSON_IsNumber(v) && v->valuedouble >= lo && v->valuedouble <= hi;
}

/* {"min": {feature: v}, "max": {feature: v}} at obj (named `name` in
 * messages) into *out. */
static bool read_bound_pair(const cJSON *obj, const char *name, struct feature_bounds *out,
                            char *err, size_t cap) {
    const cJSON *lo = path(obj, "min", NULL, NULL, NULL);
    const cJSON *hi = path(obj, "max", NULL, NULL, NULL);
    for (int f = 0; f < FEATURE_COUNT; f++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(lo, feature_names[f]);
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(hi, feature_names[f]);
        if (!finite_number(a, -1e30, 1e30) || !finite_number(b, -1e30, 1e30) ||
            a->valuedouble > b->valuedouble)
            return fail(err, cap, "metadata: %s.{min,max}.%s: missing, not a number, or min > max",
                        name, feature_names[f]);
        out->min[f] = (float)a->valuedouble;
        out->max[f] = (float)b->valuedouble;
    }
    out->present = true;
    return true;
}

/* "bounds": {"min": ..., "max": ...}, optional; "bounds_by_kind": {kind:
 * {"min": ..., "max": ...}} (a kind without training problems absent),
 * optional, and only beside "bounds" (the policy falls back on them for
 * a kind that has none). */
static bool read_bounds(const cJSON *root, struct model_metadata *m, char *err, size_t cap) {
    const cJSON *bounds = path(root, "bounds", NULL, NULL, NULL);
    const cJSON *by_kind = path(root, "bounds_by_kind", NULL, NULL, NULL);
    if (by_kind && (!bounds || !cJSON_IsObject(by_kind)))
        return fail(err, cap, "metadata: bounds_by_kind must be an object beside bounds");
    if (bounds && !read_bound_pair(bounds, "bounds", &m->bounds, err, cap))
        return false;
    for (int k = 0; by_kind && k < PROBLEM_KINDS; k++) {
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(by_kind, problem_kind_names[k]);
        char name[48];
        snprintf(name, sizeof name, "bounds_by_kind.%s", problem_kind_names[k]);
        if (b && !read_bound_pair(b, name, &m->kind_bounds[k], err, cap))
            return false;
    }
    return true;
}

/* "weights_transform": [{"solver": S, "pointwise_ns": A, "spatial_ns": B}],
 * optional (older models lack it: per-call weights are then not priced). */
static bool read_weights_costs(const cJSON *limits, struct weights_costs *w, char *err,
                               size_t cap) {
    const cJSON *list = path(limits, "weights_transform", NULL, NULL, NULL);
    if (list == NULL)
        return true;
    if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) > LIMITS_SOLVERS_MAX)
        return fail(err, cap, "metadata: limits.weights_transform must be an array of at most %d",
                    LIMITS_SOLVERS_MAX);
    for (const cJSON *e = list->child; e; e = e->next) {
        const cJSON *name = path(e, "solver", NULL, NULL, NULL);
        const cJSON *pw = path(e, "pointwise_ns", NULL, NULL, NULL);
        const cJSON *sp = path(e, "spatial_ns", NULL, NULL, NULL);
        const int i = w->count;
        if (!cJSON_IsString(name) || name->valuestring[0] == '\0' ||
            strlen(name->valuestring) >= LIMITS_NAME_MAX || !finite_number(pw, -1, 1e6) ||
            !finite_number(sp, -1, 1e6) || (pw->valuedouble < 0 && pw->valuedouble != -1) ||
            (sp->valuedouble < 0 && sp->valuedouble != -1))
            return fail(err, cap,
                        "metadata: limits.weights_transform[%d]: needs a solver name and "
                        "pointwise_ns, spatial_ns in [0, 1e6] or -1",
                        i);
        snprintf(w->solver[i], sizeof w->solver[i], "%s", name->valuestring);
        w->ns[i][0] = pw->valuedouble;
        w->ns[i][1] = sp->valuedouble;
        w->count++;
    }
    return true;
}

/* "limits": {"peak_gflops": P, "bandwidth": [{"bytes": B, "gbs": G}, ...]}, optional. */
static bool read_limits(const cJSON *root, struct model_metadata *m, char *err, size_t cap) {
    const cJSON *limits = path(root, "limits", NULL, NULL, NULL);
    if (limits == NULL)
        return true;
    const cJSON *peak = path(limits, "peak_gflops", NULL, NULL, NULL);
    const cJSON *levels = path(limits, "bandwidth", NULL, NULL, NULL);
    if (!finite_number(peak, 1e-3, 1e9))
        return fail(err, cap, "metadata: limits.peak_gflops must be a number in (0, 1e9]");
    if (!cJSON_IsArray(levels) || cJSON_GetArraySize(levels) < 1 ||
        cJSON_GetArraySize(levels) > LIMITS_LEVELS_MAX)
        return fail(err, cap, "metadata: limits.bandwidth must be an array of 1..%d levels",
                    LIMITS_LEVELS_MAX);
    m->limits.peak_gflops = peak->valuedouble;
    m->limits.levels = 0;
    for (const cJSON *l = levels->child; l; l = l->next) {
        const cJSON *bytes = path(l, "bytes", NULL, NULL, NULL);
        const cJSON *gbs = path(l, "gbs", NULL, NULL, NULL);
        const int i = m->limits.levels;
        if (!finite_number(bytes, 1, 1e15) || !finite_number(gbs, 1e-3, 1e9) ||
            (i > 0 && bytes->valuedouble <= m->limits.level_bytes[i - 1]))
            return fail(err, cap,
                        "metadata: limits.bandwidth[%d]: bytes and gbs must be positive numbers, "
                        "bytes increasing",
                        i);
        m->limits.level_bytes[i] = bytes->valuedouble;
        m->limits.level_gbs[i] = gbs->valuedouble;
        m->limits.levels++;
    }
    m->limits.present = true;
    return read_weights_costs(limits, &m->limits.weights, err, cap);
}

const char *const problem_kind_names[PROBLEM_KINDS] = {"dense", "grouped", "depthwise"};
const char *const safe_class_names[SAFE_CLASSES] = {"dense",     "grouped",     "depthwise",
                                                    "dense_1x1", "grouped_1x1", "depthwise_1x1"};

/* "safe": {"dense": [solver names], ...}, optional; after read_solvers.
 * The kinds' lists are required, the 1x1 classes' optional (metadata
 * written before them). */
static bool read_safe(const cJSON *root, struct model_metadata *m, char *err, size_t cap) {
    const cJSON *safe = path(root, "safe", NULL, NULL, NULL);
    if (safe == NULL)
        return true;
    for (int k = 0; k < SAFE_CLASSES; k++) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(safe, safe_class_names[k]);
        if (list == NULL && k >= PROBLEM_KINDS)
            continue;
        if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) > m->num_solvers)
            return fail(err, cap, "metadata: safe.%s must be a list of at most %d solver names",
                        safe_class_names[k], m->num_solvers);
        for (const cJSON *e = list->child; e; e = e->next) {
            int i = 0;
            while (i < m->num_solvers &&
                   !(cJSON_IsString(e) && strcmp(e->valuestring, m->solver_names[i]) == 0))
                i++;
            if (i == m->num_solvers)
                return fail(err, cap, "metadata: safe.%s names %.40s, not one of the solvers",
                            safe_class_names[k], cJSON_IsString(e) ? e->valuestring : "(?)");
            m->safe[k][m->safe_count[k]++] = i;
        }
    }
    return true;
}

/* "envelope": {"log2_floor_ms_min": A, "bin_width": W, "bins": B,
 * "solvers": {name: {"lo": [B numbers], "hi": [B numbers]}}}, optional
 * and only beside "limits" (the floor it is relative to); after
 * read_solvers. A solver this build lacks is skipped, as the model's
 * output for it is. */
static bool read_envelope(const cJSON *root, struct model_metadata *m, char *err, size_t cap) {
    const cJSON *env = path(root, "envelope", NULL, NULL, NULL);
    if (env == NULL)
        return true;
    struct estimate_envelope *e = &m->envelope;
    const cJSON *lo0 = path(env, "log2_floor_ms_min", NULL, NULL, NULL);
    const cJSON *width = path(env, "bin_width", NULL, NULL, NULL);
    const cJSON *bins = path(env, "bins", NULL, NULL, NULL);
    const cJSON *by_solver = path(env, "solvers", NULL, NULL, NULL);
    if (!m->limits.present)
        return fail(err, cap, "metadata: envelope needs limits beside it");
    if (!finite_number(lo0, -1e3, 1e3) || !finite_number(width, 1e-3, 1e3) ||
        !finite_number(bins, 1, ENVELOPE_BINS_MAX) || bins->valuedouble != (int)bins->valuedouble ||
        !cJSON_IsObject(by_solver))
        return fail(err, cap,
                    "metadata: envelope needs log2_floor_ms_min, bin_width > 0, bins in 1..%d and "
                    "an object of solvers",
                    ENVELOPE_BINS_MAX);
    e->log2_min = (float)lo0->valuedouble, e->width = (float)width->valuedouble;
    e->bins = (int)bins->valuedouble;
    for (const cJSON *one = by_solver->child; one; one = one->next) {
        int o = 0;
        while (o < m->num_solvers && strcmp(one->string, m->solver_names[o]) != 0)
            o++;
        if (o == m->num_solvers)
            return fail(err, cap, "metadata: envelope.solvers.%.40s: not one of the solvers",
                        one->string);
        const cJSON *lo = path(one, "lo", NULL, NULL, NULL),
                    *hi = path(one, "hi", NULL, NULL, NULL);
        if (!cJSON_IsArray(lo) || !cJSON_IsArray(hi) || cJSON_GetArraySize(lo) != e->bins ||
            cJSON_GetArraySize(hi) != e->bins)
            return fail(err, cap, "metadata: envelope.solvers.%s: lo and hi must be arrays of %d",
                        one->string, e->bins);
        const int id = solver_find(one->string);
        for (int b = 0; b < e->bins; b++) {
            const cJSON *a = cJSON_GetArrayItem(lo, b), *z = cJSON_GetArrayItem(hi, b);
            if (!finite_number(a, -64, 64) || !finite_number(z, -64, 64) ||
                a->valuedouble > z->valuedouble)
                return fail(err, cap,
                            "metadata: envelope.solvers.%s bin %d: lo and hi must be numbers in "
                            "[-64, 64], lo <= hi",
                            one->string, b);
            if (id >= 0)
                e->lo[id][b] = (float)a->valuedouble, e->hi[id][b] = (float)z->valuedouble;
        }
        if (id >= 0)
            e->has[id] = true;
    }
    e->present = true;
    return true;
}

bool metadata_from_json(const char *text, size_t len, struct model_metadata *m, char *err,
                        size_t err_cap) {
    memset(m, 0, sizeof *m);
    cJSON *root = json_parse(text, len, err, err_cap);
    if (!root)
        return false;
    bool ok = cJSON_IsObject(root) ? true : fail(err, err_cap, "metadata: not a JSON object");
    ok = ok && read_features(root, m, err, err_cap) && read_solvers(root, m, err, err_cap) &&
         read_bounds(root, m, err, err_cap) && read_limits(root, m, err, err_cap) &&
         read_safe(root, m, err, err_cap) && read_envelope(root, m, err, err_cap);
    const cJSON *target = path(root, "target", NULL, NULL, NULL);
    if (ok && (!cJSON_IsString(target) || strlen(target->valuestring) >= METADATA_NAME_MAX))
        ok = fail(err, err_cap, "metadata: target must be a machine signature string");
    if (ok)
        snprintf(m->target, sizeof m->target, "%s", target->valuestring);
    m->channel_block = features_channel_block(m->target);
    cJSON_Delete(root);
    return ok;
}
