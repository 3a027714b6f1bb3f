/* graph.c -- parses an architecture config into an nn_graph: the layer
 * table, each layer's inbound nodes (tf.keras 2 arrays and Keras 3
 * {args, kwargs} objects), and the model's input and output connections.
 * Layer references are resolved by name here, so a dangling name is a load
 * error, not a crash later. */
#include <stdio.h>
#include <string.h>

#include "nn/json_util.h"

enum nn_status nn_layer_configure(struct nn_model *m, struct nn_layer *l, const char *class_name,
                                  const cJSON *config, const cJSON *params, const char *prefix,
                                  int depth, char *err, size_t cap);

/* A connection before its layer name is resolved. */
struct raw_conn {
    const char *name;
    int node, tensor;
};

static bool small_index(const cJSON *v, int *out) {
    if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 65535 ||
        v->valuedouble != (int)v->valuedouble)
        return false;
    *out = (int)v->valuedouble;
    return true;
}

/* [name, node, tensor(, kwargs)] */
static bool parse_triple(const cJSON *t, struct raw_conn *c) {
    if (!cJSON_IsArray(t) || cJSON_GetArraySize(t) < 3)
        return false;
    const cJSON *name = t->child, *node = name->next, *tensor = node->next;
    if (!cJSON_IsString(name) || !small_index(node, &c->node) || !small_index(tensor, &c->tensor))
        return false;
    c->name = name->valuestring;
    return true;
}

/* A Keras 3 serialized tensor: {"class_name":"__keras_tensor__",
 * "config":{"keras_history":[name, node, tensor]}}. */
static bool parse_keras_tensor(const cJSON *t, struct raw_conn *c) {
    const cJSON *config = cJSON_GetObjectItemCaseSensitive(t, "config");
    return parse_triple(cJSON_GetObjectItemCaseSensitive(config, "keras_history"), c);
}

/* Collects the connections of one node into raw[0..*n). */
static enum nn_status parse_node(const cJSON *node, const char *layer, struct raw_conn *raw,
                                 int max, int *n, char *err, size_t cap) {
    *n = 0;
    const cJSON *list = node;
    bool keras3 = false;
    if (cJSON_IsObject(node)) {
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(node, "args");
        if (!cJSON_IsArray(args))
            return nn_fail(err, cap, NN_ERR_FORMAT, "layer %.64s: node without 'args' list", layer);
        list = args;
        if (cJSON_IsArray(args->child)) { /* merge layers: args = [[t1, t2, ...]] */
            if (cJSON_GetArraySize(args) != 1)
                return nn_fail(err, cap, NN_ERR_FORMAT, "layer %.64s: invalid args format", layer);
            list = args->child;
        }
        keras3 = true;
    } else if (!cJSON_IsArray(node)) {
        return nn_fail(err, cap, NN_ERR_FORMAT, "layer %.64s: a node must be a list or an object",
                       layer);
    }
    for (const cJSON *c = list->child; c != NULL; c = c->next) {
        if (*n == max)
            return nn_fail(err, cap, NN_ERR_FORMAT, "layer %.64s: more than %d inputs in a node",
                           layer, max);
        const bool ok = keras3 ? parse_keras_tensor(c, &raw[*n]) : parse_triple(c, &raw[*n]);
        if (!ok)
            return nn_fail(err, cap, NN_ERR_FORMAT,
                           keras3 ? "layer %.64s: node input %d has no keras_history "
                                    "(constant-value tensors are not supported)"
                                  : "layer %.64s: node input %d is not [layer, node, tensor]",
                           layer, *n);
        (*n)++;
    }
    return NN_OK;
}

static int find_layer(const struct nn_graph *g, const char *name) {
    for (int i = 0; i < g->n_layers; i++)
        if (strcmp(g->layers[i].name, name) == 0)
            return i;
    return -1;
}

static enum nn_status resolve(const struct nn_graph *g, const struct raw_conn *raw, int n,
                              struct nn_conn *out, const char *where, char *err, size_t cap) {
    for (int i = 0; i < n; i++) {
        const int idx = find_layer(g, raw[i].name);
        if (idx < 0)
            return nn_fail(err, cap, NN_ERR_FORMAT, "%s: dangling layer reference: %.64s", where,
                           raw[i].name);
        out[i] = (struct nn_conn){idx, raw[i].node, raw[i].tensor};
    }
    return NN_OK;
}

#define MAX_CONN 256

/* input_layers / output_layers: a list of triples, or one flat triple. */
static enum nn_status parse_io(struct nn_model *m, const struct nn_graph *g, const cJSON *list,
                               const char *key, struct nn_conn **out, int *n, char *err,
                               size_t cap) {
    struct raw_conn raw[MAX_CONN];
    *n = 0;
    if (!cJSON_IsArray(list))
        return nn_fail(err, cap, NN_ERR_FORMAT, "model %.64s: %s must be an array", g->name, key);
    if (cJSON_IsString(list->child)) {
        if (!parse_triple(list, &raw[0]))
            return nn_fail(err, cap, NN_ERR_FORMAT, "model %.64s: malformed %s", g->name, key);
        *n = 1;
    } else {
        for (const cJSON *t = list->child; t != NULL; t = t->next) {
            if (*n == MAX_CONN || !parse_triple(t, &raw[*n]))
                return nn_fail(err, cap, NN_ERR_FORMAT, "model %.64s: malformed %s entry %d",
                               g->name, key, *n);
            (*n)++;
        }
    }
    if (*n == 0)
        return nn_fail(err, cap, NN_ERR_FORMAT, "model %.64s: no %s", g->name, key);
    *out = nn_alloc(m, (size_t)*n * sizeof **out);
    if (*out == NULL)
        return NN_ERR_NOMEM;
    char where[96];
    snprintf(where, sizeof where, "model %.64s: %s", g->name, key);
    return resolve(g, raw, *n, *out, where, err, cap);
}

/* Name and class of layer object `lj`: top-level "name" or config.name. */
static enum nn_status layer_identity(const cJSON *lj, int index, const char **name,
                                     const char **class_name, const cJSON **config, char *err,
                                     size_t cap) {
    const cJSON *cls = cJSON_GetObjectItemCaseSensitive(lj, "class_name");
    *config = cJSON_GetObjectItemCaseSensitive(lj, "config");
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(lj, "name");
    if (!cJSON_IsString(nm))
        nm = cJSON_GetObjectItemCaseSensitive(*config, "name");
    if (!cJSON_IsObject(lj) || !cJSON_IsString(cls) || !cJSON_IsString(nm))
        return nn_fail(err, cap, NN_ERR_FORMAT, "layer #%d: needs class_name and name strings",
                       index);
    *name = nm->valuestring;
    *class_name = cls->valuestring;
    return NN_OK;
}

enum nn_status nn_graph_parse(struct nn_model *m, const cJSON *config, const cJSON *params,
                              const char *prefix, int depth, struct nn_graph **out, char *err,
                              size_t cap) {
    enum nn_status st;
    const cJSON *layers = cJSON_GetObjectItemCaseSensitive(config, "layers");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(config, "name");
    struct nn_graph *g = nn_alloc(m, sizeof *g);
    if (g == NULL)
        return NN_ERR_NOMEM;
    g->name = nn_strdup(m, cJSON_IsString(name) ? name->valuestring : "model");
    if (g->name == NULL)
        return NN_ERR_NOMEM;
    if (!cJSON_IsArray(layers))
        return nn_fail(err, cap, NN_ERR_FORMAT, "model %.64s: config.layers must be an array",
                       g->name);
    const int n = cJSON_GetArraySize(layers);
    if (n < 1 || n > NN_LIMIT_LAYERS)
        return nn_fail(err, cap, NN_ERR_FORMAT, "model %.64s: %d layers (must be 1..%d)", g->name,
                       n, NN_LIMIT_LAYERS);
    g->layers = nn_alloc(m, (size_t)n * sizeof *g->layers);
    if (g->layers == NULL)
        return NN_ERR_NOMEM;

    /* Pass 1: names, so nodes can refer to layers defined later. */
    int i = 0;
    for (const cJSON *lj = layers->child; lj != NULL; lj = lj->next, i++) {
        const char *lname, *cls;
        const cJSON *lconfig;
        if ((st = layer_identity(lj, i, &lname, &cls, &lconfig, err, cap)) != NN_OK)
            return st;
        g->n_layers = i;
        if (find_layer(g, lname) >= 0)
            return nn_fail(err, cap, NN_ERR_FORMAT,
                           "model %.64s: layer names must be unique (%.64s repeats)", g->name,
                           lname);
        g->layers[i].name = nn_strdup(m, lname);
        g->layers[i].class_name = nn_strdup(m, cls);
        if (g->layers[i].name == NULL || g->layers[i].class_name == NULL)
            return NN_ERR_NOMEM;
    }
    g->n_layers = n;

    /* A Sequential config has no input/output lists and no inbound nodes:
     * its layers form a chain from the first (an InputLayer). */
    const bool sequential = cJSON_GetObjectItemCaseSensitive(config, "input_layers") == NULL &&
                            cJSON_GetObjectItemCaseSensitive(config, "output_layers") == NULL;

    /* Pass 2: configuration, parameters and inbound nodes. */
    i = 0;
    for (const cJSON *lj = layers->child; lj != NULL; lj = lj->next, i++) {
        struct nn_layer *l = &g->layers[i];
        const char *lname, *cls;
        const cJSON *lconfig;
        layer_identity(lj, i, &lname, &cls, &lconfig, err, cap);
        if ((st = nn_layer_configure(m, l, cls, lconfig, params, prefix, depth, err, cap)) != NN_OK)
            return st;
        const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(lj, "inbound_nodes");
        if (sequential) { /* a chain: each layer takes the previous one's output */
            if (i == 0 && l->kind != L_INPUT)
                return nn_fail(err, cap, NN_ERR_FORMAT,
                               "sequential model %.64s: the first layer must be an InputLayer",
                               g->name);
            l->n_nodes = i == 0 ? 0 : 1;
            l->nodes = nn_alloc(m, sizeof *l->nodes);
            struct nn_conn *c = nn_alloc(m, sizeof *c);
            if (l->nodes == NULL || c == NULL)
                return NN_ERR_NOMEM;
            *c = (struct nn_conn){i - 1, 0, 0};
            l->nodes[0] = (struct nn_node){i == 0 ? 0 : 1, c};
            continue;
        }
        if (nodes != NULL && !cJSON_IsArray(nodes))
            return nn_fail(err, cap, NN_ERR_FORMAT, "layer %.64s: inbound_nodes must be a list",
                           l->name);
        l->n_nodes = nodes ? cJSON_GetArraySize(nodes) : 0;
        if (l->kind == L_INPUT && l->n_nodes != 0)
            return nn_fail(err, cap, NN_ERR_FORMAT,
                           "layer %.64s: an input layer may not have inbound nodes", l->name);
        if (l->n_nodes > 1024)
            return nn_fail(err, cap, NN_ERR_FORMAT, "layer %.64s: more than 1024 calls", l->name);
        l->nodes = nn_alloc(m, (size_t)(l->n_nodes + 1) * sizeof *l->nodes);
        if (l->nodes == NULL)
            return NN_ERR_NOMEM;
        int k = 0;
        for (const cJSON *nj = nodes ? nodes->child : NULL; nj != NULL; nj = nj->next, k++) {
            struct raw_conn raw[MAX_CONN];
            int nc;
            if ((st = parse_node(nj, l->name, raw, MAX_CONN, &nc, err, cap)) != NN_OK)
                return st;
            l->nodes[k].n_conn = nc;
            l->nodes[k].conn = nn_alloc(m, (size_t)(nc + 1) * sizeof(struct nn_conn));
            if (l->nodes[k].conn == NULL)
                return NN_ERR_NOMEM;
            char where[96];
            snprintf(where, sizeof where, "layer %.64s", l->name);
            if ((st = resolve(g, raw, nc, l->nodes[k].conn, where, err, cap)) != NN_OK)
                return st;
        }
    }
    if (sequential) {
        g->n_in = g->n_out = 1;
        g->in = nn_alloc(m, sizeof *g->in);
        g->out = nn_alloc(m, sizeof *g->out);
        if (g->in == NULL || g->out == NULL)
            return NN_ERR_NOMEM;
        *g->in = (struct nn_conn){0, 0, 0};
        *g->out = (struct nn_conn){n - 1, 0, 0};
        *out = g;
        return NN_OK;
    }
    if ((st = parse_io(m, g, cJSON_GetObjectItemCaseSensitive(config, "input_layers"),
                       "input_layers", &g->in, &g->n_in, err, cap)) != NN_OK ||
        (st = parse_io(m, g, cJSON_GetObjectItemCaseSensitive(config, "output_layers"),
                       "output_layers", &g->out, &g->n_out, err, cap)) != NN_OK)
        return st;
    for (int k = 0; k < g->n_in; k++)
        if (g->layers[g->in[k].layer].kind != L_INPUT)
            return nn_fail(err, cap, NN_ERR_FORMAT,
                           "model %.64s: input %d (%.64s) is not an InputLayer", g->name, k,
                           g->layers[g->in[k].layer].name);
    *out = g;
    return NN_OK;
}
