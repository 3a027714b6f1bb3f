/* model.c -- loading a model file end to end (read, parse, build the
 * graph, plan, run the embedded tests), prediction, and the accessors. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/internal.h"
#include "nn/json_util.h"
#include "util/file.h"

enum nn_status nn_fail(char *err, size_t cap, enum nn_status status, const char *fmt, ...) {
    if (err != NULL && cap > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, cap, fmt, ap);
        va_end(ap);
    }
    return status;
}

void *nn_alloc(struct nn_model *m, size_t bytes) {
    if (m->n_owned == m->cap_owned) {
        const size_t ncap = m->cap_owned ? 2 * m->cap_owned : 64;
        struct nn_owned *no = realloc(m->owned, ncap * sizeof *no);
        if (no == NULL)
            return NULL;
        m->owned = no;
        m->cap_owned = ncap;
    }
    void *p = calloc(1, bytes ? bytes : 1);
    if (p != NULL)
        m->owned[m->n_owned++] = (struct nn_owned){p, bytes};
    return p;
}

char *nn_strdup(struct nn_model *m, const char *s) {
    const size_t len = strlen(s);
    char *d = nn_alloc(m, len + 1);
    if (d != NULL)
        memcpy(d, s, len + 1);
    return d;
}

size_t nn_shape_volume(const struct nn_shape *s) {
    size_t v = 1;
    for (int d = 0; d < s->rank; d++) {
        if (s->dims[d] != 0 && v > SIZE_MAX / 2 / s->dims[d])
            return SIZE_MAX; /* larger than any limit */
        v *= s->dims[d];
    }
    return v;
}

bool nn_shape_equal(const struct nn_shape *a, const struct nn_shape *b) {
    if (a->rank != b->rank)
        return false;
    for (int d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d])
            return false;
    return true;
}

void nn_shape_format(const struct nn_shape *s, char *buf, size_t cap) {
    size_t used = (size_t)snprintf(buf, cap, "(");
    for (int d = 0; d < s->rank && used < cap; d++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%zu", d ? ", " : "", s->dims[d]);
    if (used < cap)
        snprintf(buf + used, cap - used, ")");
}

/* Freed models are poisoned: every weight becomes NaN (0xFF bytes) and
 * every pointer in the model invalid, so a use after free shows up as a
 * crash or NaN outputs even without AddressSanitizer. */
#define POISON 0xFF

void nn_model_free(struct nn_model *m) {
    if (m == NULL)
        return;
    for (size_t i = 0; i < m->n_owned; i++) {
        memset(m->owned[i].p, POISON, m->owned[i].bytes);
        free(m->owned[i].p);
    }
    free(m->owned);
    if (m->values)
        memset(m->values, POISON, (size_t)m->cap_values * sizeof *m->values);
    if (m->ops)
        memset(m->ops, POISON, (size_t)m->cap_ops * sizeof *m->ops);
    free(m->values);
    free(m->ops);
    memset(m, POISON, sizeof *m);
    free(m);
}

/* ---------------------------- shapes ---------------------------- */

/* A shape array: 1..5 entries, each a size >= 1, or null (variable) when
 * allow_variable. Variable entries are set to 0. */
static enum nn_status parse_shape(const cJSON *a, bool allow_variable, const char *what,
                                  struct nn_shape *s, char *err, size_t cap) {
    const int n = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : -1;
    if (n < 1 || n > NN_MAX_RANK)
        return nn_fail(err, cap, NN_ERR_FORMAT, "%s: a shape needs 1 to 5 dimensions", what);
    s->rank = 0;
    for (const cJSON *d = a->child; d != NULL; d = d->next) {
        if (allow_variable && (cJSON_IsNull(d) || (cJSON_IsNumber(d) && d->valuedouble < 0))) {
            s->dims[s->rank++] = 0;
            continue;
        }
        if (!cJSON_IsNumber(d) || d->valuedouble < 1 ||
            d->valuedouble > (double)NN_LIMIT_TENSOR_ELEMS ||
            d->valuedouble != floor(d->valuedouble))
            return nn_fail(err, cap, NN_ERR_FORMAT, "%s: dimension %d must be an integer in 1..%u",
                           what, s->rank, NN_LIMIT_TENSOR_ELEMS);
        s->dims[s->rank++] = (size_t)d->valuedouble;
    }
    if (nn_shape_volume(s) > NN_LIMIT_TENSOR_ELEMS)
        return nn_fail(err, cap, NN_ERR_FORMAT, "%s: more than %u elements", what,
                       NN_LIMIT_TENSOR_ELEMS);
    return NN_OK;
}

/* A tensor object of the tests section: {"shape": [...], "values": ...}. */
static enum nn_status parse_test_tensor(struct nn_model *m, const cJSON *t, const char *what,
                                        struct nn_shape *s, float **values, char *err, size_t cap) {
    enum nn_status st =
        parse_shape(cJSON_GetObjectItemCaseSensitive(t, "shape"), false, what, s, err, cap);
    if (st != NN_OK)
        return st;
    size_t count;
    if ((st = nn_decode_floats(m, cJSON_GetObjectItemCaseSensitive(t, "values"), what, values,
                               &count, err, cap)) != NN_OK)
        return st;
    if (count != nn_shape_volume(s))
        return nn_fail(err, cap, NN_ERR_FORMAT, "%s: %zu values for a shape of %zu elements", what,
                       count, nn_shape_volume(s));
    return NN_OK;
}

/* ---------------------------- prediction ---------------------------- */

size_t nn_model_scratch_bytes(const struct nn_model *m) {
    return m->scratch_elems * sizeof(float);
}

enum nn_status nn_model_predict(const struct nn_model *m, const float *const *inputs,
                                float *const *outputs, void *scratch, size_t scratch_bytes,
                                char *err, size_t cap) {
    if (m == NULL || inputs == NULL || outputs == NULL || scratch == NULL)
        return nn_fail(err, cap, NN_ERR_ARGUMENT, "predict: NULL argument");
    if (scratch_bytes < nn_model_scratch_bytes(m))
        return nn_fail(err, cap, NN_ERR_ARGUMENT, "predict: scratch of %zu bytes, needs %zu",
                       scratch_bytes, nn_model_scratch_bytes(m));
    float *arena = scratch;
    for (int k = 0; k < m->n_inputs; k++) {
        const struct nn_value *v = &m->values[m->input_values[k]];
        memcpy(arena + v->offset, inputs[k], nn_shape_volume(&v->shape) * sizeof(float));
    }
    for (int o = 0; o < m->n_ops; o++) {
        const struct nn_op *op = &m->ops[o];
        const float *in[256];
        float *out[NN_MAX_RANK];
        struct nn_shape in_shape[256], out_shape[NN_MAX_RANK];
        for (int i = 0; i < op->n_in; i++) {
            in[i] = arena + m->values[op->in[i]].offset;
            in_shape[i] = m->values[op->in[i]].shape;
        }
        for (int i = 0; i < op->n_out; i++) {
            out[i] = arena + m->values[op->out[i]].offset;
            out_shape[i] = m->values[op->out[i]].shape;
        }
        enum nn_status st = nn_layer_run(op->layer, in, in_shape, op->n_in, out, out_shape,
                                         op->n_out, arena + op->tmp_offset, err, cap);
        if (st != NN_OK)
            return st;
        for (int i = 0; i < op->n_out; i++)
            nn_act_apply(&op->layer->post, out[i], nn_shape_volume(&out_shape[i]),
                         out_shape[i].dims[out_shape[i].rank - 1]);
    }
    for (int k = 0; k < m->n_outputs; k++) {
        const struct nn_value *v = &m->values[m->output_values[k]];
        memcpy(outputs[k], arena + v->offset, nn_shape_volume(&v->shape) * sizeof(float));
    }
    return NN_OK;
}

/* ---------------------------- embedded tests ---------------------------- */

static enum nn_status run_tests(struct nn_model *m, const cJSON *tests, float eps, char *err,
                                size_t cap) {
    enum nn_status st = NN_ERR_NOMEM;
    const int n_in = m->n_inputs, n_out = m->n_outputs;
    const float **in = calloc((size_t)n_in, sizeof *in);
    float **want = calloc((size_t)n_out, sizeof *want), **got = calloc((size_t)n_out, sizeof *got);
    void *scratch = malloc(nn_model_scratch_bytes(m) + sizeof(float));
    if (in == NULL || want == NULL || got == NULL || scratch == NULL)
        goto done;
    int t = 0;
    for (const cJSON *test = tests->child; test != NULL; test = test->next, t++) {
        const cJSON *ti = cJSON_GetObjectItemCaseSensitive(test, "inputs");
        const cJSON *to = cJSON_GetObjectItemCaseSensitive(test, "outputs");
        if (cJSON_GetArraySize(ti) != n_in || cJSON_GetArraySize(to) != n_out) {
            st = nn_fail(err, cap, NN_ERR_FORMAT,
                         "test %d: %d inputs and %d outputs, the model has %d and %d", t,
                         cJSON_GetArraySize(ti), cJSON_GetArraySize(to), n_in, n_out);
            goto done;
        }
        int k = 0;
        for (const cJSON *x = ti->child; x != NULL; x = x->next, k++) {
            char what[64];
            struct nn_shape s;
            float *v;
            snprintf(what, sizeof what, "test %d input %d", t, k);
            if ((st = parse_test_tensor(m, x, what, &s, &v, err, cap)) != NN_OK)
                goto done;
            if (!nn_shape_equal(&s, nn_model_input_shape(m, (size_t)k))) {
                st = nn_fail(err, cap, NN_ERR_FORMAT, "%s: shape differs from the model's input",
                             what);
                goto done;
            }
            in[k] = v;
        }
        k = 0;
        for (const cJSON *y = to->child; y != NULL; y = y->next, k++) {
            char what[64], a[64], b[64];
            struct nn_shape s;
            snprintf(what, sizeof what, "test %d output %d", t, k);
            if ((st = parse_test_tensor(m, y, what, &s, &want[k], err, cap)) != NN_OK)
                goto done;
            if (!nn_shape_equal(&s, nn_model_output_shape(m, (size_t)k))) {
                nn_shape_format(nn_model_output_shape(m, (size_t)k), a, sizeof a);
                nn_shape_format(&s, b, sizeof b);
                st = nn_fail(err, cap, NN_ERR_TEST_FAILED,
                             "test failed: output=%d wrong output size: is %s, should be %s", k, a,
                             b);
                goto done;
            }
            if ((got[k] = nn_alloc(m, nn_shape_volume(&s) * sizeof(float))) == NULL)
                goto done;
        }
        if ((st = nn_model_predict(m, in, got, scratch, nn_model_scratch_bytes(m), err, cap)) !=
            NN_OK)
            goto done;
        for (k = 0; k < n_out; k++) {
            const size_t n = nn_shape_volume(nn_model_output_shape(m, (size_t)k));
            for (size_t i = 0; i < n; i++) {
                const float g = got[k][i], w = want[k][i];
                const bool ok = (isnan(g) && isnan(w)) || (g >= w - eps && g <= w + eps);
                if (!ok) {
                    st =
                        nn_fail(err, cap, NN_ERR_TEST_FAILED,
                                "test failed: test %d output=%d element %zu value=%.9g target=%.9g "
                                "(tolerance %g)",
                                t, k, i, (double)g, (double)w, (double)eps);
                    goto done;
                }
            }
        }
    }
    st = NN_OK;
done:
    free(scratch);
    free(in);
    free(want);
    free(got);
    return st;
}

/* ---------------------------- loading ---------------------------- */

/* The model's input shapes: input_shapes, with variable dimensions taken
 * from the first embedded test (as frugally-deep's converter made them). */
static enum nn_status input_shapes(const cJSON *root, const struct nn_graph *g,
                                   struct nn_shape *shapes, char *err, size_t cap) {
    const cJSON *decl = cJSON_GetObjectItemCaseSensitive(root, "input_shapes");
    const cJSON *tests = cJSON_GetObjectItemCaseSensitive(root, "tests");
    const cJSON *t0 = cJSON_IsArray(tests) ? tests->child : NULL;
    const cJSON *t0_in = cJSON_GetObjectItemCaseSensitive(t0, "inputs");
    if (!cJSON_IsArray(decl) || cJSON_GetArraySize(decl) != g->n_in)
        return nn_fail(err, cap, NN_ERR_FORMAT, "input_shapes must list %d shapes", g->n_in);
    int k = 0;
    for (const cJSON *s = decl->child; s != NULL; s = s->next, k++) {
        char what[48];
        snprintf(what, sizeof what, "input_shapes[%d]", k);
        enum nn_status st = parse_shape(s, true, what, &shapes[k], err, cap);
        if (st != NN_OK)
            return st;
        if (nn_shape_volume(&shapes[k]) != 0)
            continue;
        struct nn_shape concrete;
        const cJSON *ti = cJSON_GetArrayItem(t0_in, k);
        if (ti == NULL ||
            parse_shape(cJSON_GetObjectItemCaseSensitive(ti, "shape"), false, what, &concrete, err,
                        cap) != NN_OK ||
            concrete.rank != shapes[k].rank)
            return nn_fail(err, cap, NN_ERR_UNSUPPORTED,
                           "input %d has a variable dimension and no test gives its size", k);
        for (int d = 0; d < concrete.rank; d++)
            if (shapes[k].dims[d] != 0 && shapes[k].dims[d] != concrete.dims[d])
                return nn_fail(err, cap, NN_ERR_FORMAT, "test input %d contradicts input_shapes",
                               k);
        shapes[k] = concrete;
    }
    return NN_OK;
}

static void build_summary(struct nn_model *m, const struct nn_graph *g) {
    for (int i = 0; i < g->n_layers; i++) {
        const char *cls = g->layers[i].class_name;
        if (strstr(m->summary, cls) != NULL) /* first use only (names are short) */
            continue;
        size_t used = strlen(m->summary);
        snprintf(m->summary + used, sizeof m->summary - used, "%s%s", used ? "," : "", cls);
        if (g->layers[i].sub)
            build_summary(m, g->layers[i].sub);
    }
}

static enum nn_status load_parsed(struct nn_model *m, const cJSON *root,
                                  const struct nn_load_options *opt, char *err, size_t cap) {
    enum nn_status st;
    if (!cJSON_IsObject(root))
        return nn_fail(err, cap, NN_ERR_FORMAT, "not a model (the JSON is not an object)");
    const cJSON *arch = cJSON_GetObjectItemCaseSensitive(root, "architecture");
    if (arch == NULL)
        return nn_fail(err, cap, NN_ERR_NOT_MODEL, "not a model (no architecture)");
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "image_data_format");
    if (fmt != NULL && !(cJSON_IsString(fmt) && strcmp(fmt->valuestring, "channels_last") == 0))
        return nn_fail(err, cap, NN_ERR_UNSUPPORTED, "only channels_last data format supported");
    const cJSON *kv = cJSON_GetObjectItemCaseSensitive(arch, "keras_version");
    m->keras2 = cJSON_IsString(kv) && (kv->valuestring[0] == '1' || kv->valuestring[0] == '2');
    const cJSON *config = cJSON_GetObjectItemCaseSensitive(arch, "config");
    if (!cJSON_IsObject(config))
        return nn_fail(err, cap, NN_ERR_FORMAT, "architecture.config must be an object");
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(root, "trainable_params");
    if (params != NULL && !cJSON_IsObject(params))
        return nn_fail(err, cap, NN_ERR_FORMAT, "trainable_params must be an object");
    if ((st = nn_graph_parse(m, config, params, "", 0, &m->graph, err, cap)) != NN_OK)
        return st;

    struct nn_shape *shapes = nn_alloc(m, (size_t)m->graph->n_in * sizeof *shapes);
    if (shapes == NULL)
        return NN_ERR_NOMEM;
    if ((st = input_shapes(root, m->graph, shapes, err, cap)) != NN_OK ||
        (st = nn_plan(m, shapes, err, cap)) != NN_OK)
        return st;

    /* output_shapes, when given, must agree with the planned outputs. */
    const cJSON *outs = cJSON_GetObjectItemCaseSensitive(root, "output_shapes");
    if (cJSON_IsArray(outs)) {
        if (cJSON_GetArraySize(outs) != m->n_outputs)
            return nn_fail(err, cap, NN_ERR_FORMAT,
                           "output_shapes lists %d shapes, the model has %d",
                           cJSON_GetArraySize(outs), m->n_outputs);
        int k = 0;
        for (const cJSON *s = outs->child; s != NULL; s = s->next, k++) {
            struct nn_shape decl;
            char what[48], a[64], b[64];
            snprintf(what, sizeof what, "output_shapes[%d]", k);
            if ((st = parse_shape(s, true, what, &decl, err, cap)) != NN_OK)
                return st;
            const struct nn_shape *got = nn_model_output_shape(m, (size_t)k);
            bool ok = decl.rank == got->rank;
            for (int d = 0; ok && d < decl.rank; d++)
                ok = decl.dims[d] == 0 || decl.dims[d] == got->dims[d];
            if (!ok) {
                nn_shape_format(&decl, a, sizeof a);
                nn_shape_format(got, b, sizeof b);
                return nn_fail(err, cap, NN_ERR_FORMAT, "%s is %s but the graph computes %s", what,
                               a, b);
            }
        }
    }
    build_summary(m, m->graph);
    const cJSON *tests = cJSON_GetObjectItemCaseSensitive(root, "tests");
    if (tests != NULL && !cJSON_IsArray(tests))
        return nn_fail(err, cap, NN_ERR_FORMAT, "tests must be an array");
    m->n_tests = tests ? (size_t)cJSON_GetArraySize(tests) : 0;
    const float eps = opt && opt->test_epsilon > 0 ? opt->test_epsilon : 1e-4f;
    if (m->n_tests > 0 && !(opt && opt->skip_tests))
        return run_tests(m, tests, eps, err, cap);
    return NN_OK;
}

enum nn_status nn_model_load_memory(const char *json, size_t len,
                                    const struct nn_load_options *options,
                                    struct nn_model **model_out, char *err, size_t cap) {
    if (model_out == NULL)
        return nn_fail(err, cap, NN_ERR_ARGUMENT, "model_out is NULL");
    *model_out = NULL;
    if (json == NULL)
        return nn_fail(err, cap, NN_ERR_ARGUMENT, "json is NULL");
    if (len > NN_LIMIT_FILE_BYTES)
        return nn_fail(err, cap, NN_ERR_FORMAT, "model of %zu bytes exceeds the limit of %u", len,
                       NN_LIMIT_FILE_BYTES);
    cJSON *root = json_parse(json, len, err, cap);
    if (root == NULL)
        return NN_ERR_FORMAT;
    struct nn_model *m = calloc(1, sizeof *m);
    enum nn_status st = m ? load_parsed(m, root, options, err, cap) : NN_ERR_NOMEM;
    cJSON_Delete(root);
    if (st == NN_ERR_NOMEM)
        nn_fail(err, cap, st, "out of memory");
    if (st != NN_OK) {
        nn_model_free(m);
        return st;
    }
    *model_out = m;
    return NN_OK;
}

enum nn_status nn_model_load_file(const char *path, const struct nn_load_options *options,
                                  struct nn_model **model_out, char *err, size_t cap) {
    if (model_out != NULL)
        *model_out = NULL;
    char *buf = NULL;
    size_t size = 0;
    char why[FILE_ERROR_MAX];
    switch (file_read_all(path, NN_LIMIT_FILE_BYTES, &buf, &size, why, sizeof why)) {
    case FILE_READ_OK: break;
    case FILE_READ_CANNOT_OPEN:
    case FILE_READ_IO_ERROR: return nn_fail(err, cap, NN_ERR_IO, "%s", why);
    case FILE_READ_TOO_LARGE: return nn_fail(err, cap, NN_ERR_FORMAT, "%s", why);
    case FILE_READ_NO_MEMORY: return nn_fail(err, cap, NN_ERR_NOMEM, "%s", why);
    }
    const enum nn_status st = nn_model_load_memory(buf, size, options, model_out, err, cap);
    free(buf);
    return st;
}

/* ---------------------------- accessors ---------------------------- */

size_t nn_model_num_inputs(const struct nn_model *m) {
    return (size_t)m->n_inputs;
}
size_t nn_model_num_outputs(const struct nn_model *m) {
    return (size_t)m->n_outputs;
}
size_t nn_model_param_count(const struct nn_model *m) {
    return m->param_count;
}
size_t nn_model_num_tests(const struct nn_model *m) {
    return m->n_tests;
}
const char *nn_model_layer_summary(const struct nn_model *m) {
    return m->summary;
}

const struct nn_shape *nn_model_input_shape(const struct nn_model *m, size_t i) {
    return i < (size_t)m->n_inputs ? &m->values[m->input_values[i]].shape : NULL;
}

const struct nn_shape *nn_model_output_shape(const struct nn_model *m, size_t i) {
    return i < (size_t)m->n_outputs ? &m->values[m->output_values[i]].shape : NULL;
}
