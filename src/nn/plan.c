/* plan.c -- turns a parsed graph into a flat execution plan: every
 * (layer, call) reachable from the outputs becomes one op, in dependency
 * order, with the shapes of its tensors and their places in the scratch
 * arena. A prediction then only walks the op list. Planning is where
 * cycles, bad node/tensor indices and shape mismatches are caught. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/internal.h"

enum { UNVISITED = 0, IN_PROGRESS, DONE };

struct memo {
    int state;
    int n_vals;
    const int *vals; /* value ids of the call's outputs */
};

struct frame {
    int layer, node;
    bool expanded;
};

struct graph_run {
    const struct nn_graph *g;
    int *base; /* first memo slot of each layer */
    struct memo *memo;
    int n_slots;
};

static enum nn_status add_value(struct nn_model *m, const struct nn_shape *s, int *id, char *err,
                                size_t cap) {
    const size_t vol = nn_shape_volume(s);
    if (vol == 0 || vol > NN_LIMIT_TENSOR_ELEMS)
        return nn_fail(err, cap, NN_ERR_FORMAT, "a tensor of %zu elements is out of bounds", vol);
    if (m->scratch_elems + vol > NN_LIMIT_SCRATCH_ELEMS)
        return nn_fail(err, cap, NN_ERR_FORMAT, "intermediate tensors exceed %u floats",
                       NN_LIMIT_SCRATCH_ELEMS);
    if (m->n_values == m->cap_values) {
        const int ncap = m->cap_values ? 2 * m->cap_values : 64;
        struct nn_value *nv = realloc(m->values, (size_t)ncap * sizeof *nv);
        if (nv == NULL)
            return NN_ERR_NOMEM;
        m->values = nv;
        m->cap_values = ncap;
    }
    m->values[m->n_values] = (struct nn_value){*s, m->scratch_elems};
    m->scratch_elems += vol;
    *id = m->n_values++;
    return NN_OK;
}

/* Which node of a nested model a reference means: tf.keras 2 counts the
 * model's own construction as node 0, so references from the outer graph
 * to node k >= 1 mean inbound node k - 1. */
static int model_node(int node) {
    return node >= 1 ? node - 1 : node;
}

/* The memo entry of call `node` of a layer (already checked to exist). */
static struct memo *slot(struct graph_run *r, int layer, int node) {
    const bool model = r->g->layers[layer].kind == L_MODEL;
    return &r->memo[r->base[layer] + (model ? model_node(node) : node)];
}

static enum nn_status plan_graph(struct nn_model *m, const struct nn_graph *g, const int *bound,
                                 int depth, int *outs, char *err, size_t cap);

/* The input connections of call `node` of layer l. */
static const struct nn_node *call_inputs(const struct nn_layer *l, int node) {
    const int idx = l->kind == L_MODEL ? model_node(node) : node;
    return idx < l->n_nodes ? &l->nodes[idx] : NULL;
}

/* Plans one call whose inputs are all planned. */
static enum nn_status plan_call(struct nn_model *m, struct graph_run *r, int li, int node,
                                int depth, char *err, size_t cap) {
    const struct nn_layer *l = &r->g->layers[li];
    const struct nn_node *call = call_inputs(l, node);
    struct memo *me = slot(r, li, node);
    int in[256];
    struct nn_shape in_shape[256];
    for (int i = 0; i < call->n_conn; i++) {
        const struct nn_conn *c = &call->conn[i];
        const struct memo *dep = slot(r, c->layer, c->node);
        if (c->tensor >= dep->n_vals)
            return nn_fail(err, cap, NN_ERR_FORMAT,
                           "layer %.64s: invalid tensor index %d of layer %.64s (it has %d)",
                           l->name, c->tensor, r->g->layers[c->layer].name, dep->n_vals);
        in[i] = dep->vals[c->tensor];
        in_shape[i] = m->values[in[i]].shape;
    }
    enum nn_status st;
    if (l->kind == L_MODEL) {
        if (call->n_conn != l->sub->n_in)
            return nn_fail(err, cap, NN_ERR_FORMAT,
                           "layer %.64s: nested model takes %d inputs, "
                           "called with %d",
                           l->name, l->sub->n_in, call->n_conn);
        int *vals = nn_alloc(m, (size_t)l->sub->n_out * sizeof(int));
        if (vals == NULL)
            return NN_ERR_NOMEM;
        me->n_vals = l->sub->n_out;
        me->vals = vals;
        return plan_graph(m, l->sub, in, depth + 1, vals, err, cap);
    }
    struct nn_shape out_shape[NN_MAX_RANK];
    int n_out = 0;
    size_t tmp = 0;
    if ((st = nn_layer_infer(l, in_shape, call->n_conn, out_shape, &n_out, &tmp, err, cap)) !=
        NN_OK)
        return st;
    if (m->n_ops == NN_LIMIT_NODES)
        return nn_fail(err, cap, NN_ERR_FORMAT, "more than %d layer calls", NN_LIMIT_NODES);
    if (m->n_ops == m->cap_ops) {
        const int ncap = m->cap_ops ? 2 * m->cap_ops : 64;
        struct nn_op *no = realloc(m->ops, (size_t)ncap * sizeof *no);
        if (no == NULL)
            return NN_ERR_NOMEM;
        m->ops = no;
        m->cap_ops = ncap;
    }
    struct nn_op *op = &m->ops[m->n_ops];
    op->layer = l;
    op->n_in = call->n_conn;
    op->n_out = n_out;
    op->in = nn_alloc(m, (size_t)(op->n_in + 1) * sizeof(int));
    op->out = nn_alloc(m, (size_t)n_out * sizeof(int));
    if (op->in == NULL || op->out == NULL)
        return NN_ERR_NOMEM;
    memcpy(op->in, in, (size_t)op->n_in * sizeof(int));
    for (int k = 0; k < n_out; k++)
        if ((st = add_value(m, &out_shape[k], &op->out[k], err, cap)) != NN_OK)
            return st;
    if (m->scratch_elems + tmp > NN_LIMIT_SCRATCH_ELEMS)
        return nn_fail(err, cap, NN_ERR_FORMAT, "layer %.64s: scratch too large", l->name);
    op->tmp_offset = m->scratch_elems;
    m->scratch_elems += tmp;
    m->n_ops++;
    me->vals = op->out;
    me->n_vals = n_out;
    return NN_OK;
}

/* Checks that (layer, node) can be referenced; pushes it when unplanned. */
static enum nn_status visit(struct graph_run *r, const struct nn_conn *c, const char *from,
                            struct frame *stack, int *top, int max, char *err, size_t cap) {
    const struct nn_layer *l = &r->g->layers[c->layer];
    const bool is_input = l->kind == L_INPUT;
    if ((is_input && c->node != 0) || (!is_input && call_inputs(l, c->node) == NULL))
        return nn_fail(err, cap, NN_ERR_FORMAT, "%.64s: invalid node index %d of layer %.64s", from,
                       c->node, l->name);
    const struct memo *me = slot(r, c->layer, c->node);
    if (me->state == DONE)
        return NN_OK;
    if (is_input)
        return nn_fail(err, cap, NN_ERR_FORMAT,
                       "%.64s: uses input layer %.64s, which is not a model input", from, l->name);
    if (me->state == IN_PROGRESS)
        return nn_fail(err, cap, NN_ERR_FORMAT, "the graph has a cycle through layer %.64s",
                       l->name);
    if (*top == max)
        return nn_fail(err, cap, NN_ERR_FORMAT, "graph too large");
    stack[(*top)++] = (struct frame){c->layer, c->node, false};
    return NN_OK;
}

static enum nn_status plan_graph(struct nn_model *m, const struct nn_graph *g, const int *bound,
                                 int depth, int *outs, char *err, size_t cap) {
    struct graph_run r = {.g = g};
    enum nn_status st = NN_ERR_NOMEM;
    struct frame *stack = NULL;
    int max_frames = 1;
    r.base = calloc((size_t)g->n_layers, sizeof *r.base);
    if (r.base == NULL)
        goto done;
    for (int i = 0; i < g->n_layers; i++) {
        r.base[i] = r.n_slots;
        r.n_slots += g->layers[i].n_nodes > 0 ? g->layers[i].n_nodes : 1;
        for (int k = 0; k < g->layers[i].n_nodes; k++)
            max_frames += g->layers[i].nodes[k].n_conn;
    }
    max_frames += g->n_out;
    r.memo = calloc((size_t)r.n_slots, sizeof *r.memo);
    stack = malloc((size_t)max_frames * sizeof *stack);
    if (r.memo == NULL || stack == NULL)
        goto done;
    for (int k = 0; k < g->n_in; k++) {
        struct memo *me = slot(&r, g->in[k].layer, 0);
        if (g->in[k].node != 0 || g->in[k].tensor != 0 || me->state == DONE) {
            st = nn_fail(err, cap, NN_ERR_FORMAT, "model %.64s: input %d is malformed or repeated",
                         g->name, k);
            goto done;
        }
        me->state = DONE;
        me->n_vals = 1;
        me->vals = &bound[k];
    }
    for (int o = 0; o < g->n_out; o++) {
        int top = 0;
        char from[96];
        snprintf(from, sizeof from, "model %.64s output %d", g->name, o);
        if ((st = visit(&r, &g->out[o], from, stack, &top, max_frames, err, cap)) != NN_OK)
            goto done;
        while (top > 0) {
            struct frame *f = &stack[top - 1];
            struct memo *me = slot(&r, f->layer, f->node);
            if (me->state == DONE) {
                top--;
                continue;
            }
            const struct nn_layer *l = &g->layers[f->layer];
            if (f->expanded) { /* every input is planned now */
                if ((st = plan_call(m, &r, f->layer, f->node, depth, err, cap)) != NN_OK)
                    goto done;
                me->state = DONE;
                top--;
                continue;
            }
            f->expanded = true;
            me->state = IN_PROGRESS;
            const struct nn_node *call = call_inputs(l, f->node);
            for (int i = 0; i < call->n_conn; i++)
                if ((st = visit(&r, &call->conn[i], l->name, stack, &top, max_frames, err, cap)) !=
                    NN_OK)
                    goto done;
        }
        const struct memo *me = slot(&r, g->out[o].layer, g->out[o].node);
        if (g->out[o].tensor >= me->n_vals) {
            st = nn_fail(err, cap, NN_ERR_FORMAT, "model %.64s: output %d: invalid tensor index %d",
                         g->name, o, g->out[o].tensor);
            goto done;
        }
        outs[o] = me->vals[g->out[o].tensor];
    }
    st = NN_OK;
done:
    free(stack);
    free(r.memo);
    free(r.base);
    return st;
}

enum nn_status nn_plan(struct nn_model *m, const struct nn_shape *input_shapes, char *err,
                       size_t cap) {
    const struct nn_graph *g = m->graph;
    enum nn_status st;
    m->n_inputs = g->n_in;
    m->n_outputs = g->n_out;
    m->input_values = nn_alloc(m, (size_t)g->n_in * sizeof(int));
    m->output_values = nn_alloc(m, (size_t)g->n_out * sizeof(int));
    if (m->input_values == NULL || m->output_values == NULL)
        return NN_ERR_NOMEM;
    for (int k = 0; k < g->n_in; k++)
        if ((st = add_value(m, &input_shapes[k], &m->input_values[k], err, cap)) != NN_OK)
            return st;
    return plan_graph(m, g, m->input_values, 0, m->output_values, err, cap);
}
