/* policy.c -- see policy.h. */
#include "heur/policy.h"

#include <math.h>
#include <string.h>

#include "heur/select.h"
#include "util/stats.h"

double policy_floor_ms(const struct machine_limits *l, const struct conv_problem *p,
                       const struct solver *s) {
    if (l == NULL || !l->present || l->levels < 1)
        return 0;
    const double fraction = s->work_fraction > 0 ? s->work_fraction : 1.0;
    const double compute_s = problem_flops(p) * fraction / (l->peak_gflops * 1e9);
    const double bytes = 4.0 * ((double)(p->n * p->c * p->h * p->w) + (double)p->w_elems +
                                (double)(p->n * p->k * p->oh * p->ow));
    /* The bandwidth of the largest level measured that these bytes fill:
     * a smaller working set only moves faster, so this bound holds. */
    int level = 0;
    while (level + 1 < l->levels && l->level_bytes[level + 1] <= bytes)
        level++;
    const double memory_s = bytes / (l->level_gbs[level] * 1e9);
    return 1e3 * (compute_s > memory_s ? compute_s : memory_s);
}

int policy_envelope_bin(const struct estimate_envelope *e, double floor_ms) {
    const double at = (log2(floor_ms) - e->log2_min) / e->width;
    return !(at >= 0) ? 0 : at >= e->bins - 1 ? e->bins - 1 : (int)at;
}

double policy_weights_ms(const struct weights_costs *costs, const struct solver *s,
                         const struct conv_problem *p) {
    return weights_cost_ms(costs, s->name, p->r == 1 && p->s == 1, (double)p->w_elems);
}

int policy_kind(const struct conv_problem *p) {
    if (p->groups > 1 && p->groups == p->c)
        return 2;
    return p->groups > 1 ? 1 : 0;
}

int policy_safe_class(const struct conv_problem *p) {
    return policy_kind(p) + (p->r == 1 && p->s == 1 ? PROBLEM_KINDS : 0);
}

const struct feature_bounds *policy_bounds(const struct model_metadata *meta,
                                           const struct conv_problem *p) {
    const struct feature_bounds *kb = &meta->kind_bounds[policy_kind(p)];
    return kb->present ? kb : &meta->bounds;
}

/* Whether feature i is a problem's scale: how much work, not its shape. */
static bool is_scale(int i) {
    return strcmp(feature_names[i], "log2_batch") == 0 ||
           strcmp(feature_names[i], "log2_flop") == 0;
}

/* The first feature of f outside the bounds, or -1; *shape_inside: every
 * feature outside is a scale feature. */
static int outside(const struct feature_bounds *b, const float f[FEATURE_COUNT],
                   bool *shape_inside) {
    *shape_inside = true;
    if (!b->present)
        return -1;
    int first = -1;
    for (int i = 0; i < FEATURE_COUNT; i++) {
        /* features are computed the same way in training and here; the
         * slack is for float rounding only */
        const float slack = 1e-4f * (1.0f + fabsf(b->max[i] - b->min[i]));
        const bool below = f[i]<b->min[i] - slack, above = f[i]> b->max[i] + slack;
        if (!below && !above)
            continue;
        if (first < 0)
            first = i;
        if (!is_scale(i))
            *shape_inside = false;
    }
    return first;
}

void policy_model_input(const struct model_metadata *meta, const struct conv_problem *p,
                        int threads, float out[FEATURE_COUNT]) {
    features_of(p, threads, meta->channel_block, out);
    const struct feature_bounds *b = policy_bounds(meta, p);
    for (int i = 0; b->present && i < FEATURE_COUNT; i++)
        if (!is_scale(i))
            out[i] = out[i] < b->min[i] ? b->min[i] : out[i] > b->max[i] ? b->max[i] : out[i];
    features_normalize(out, &meta->stats);
}

void policy_rank(const struct model_metadata *meta, const struct conv_problem *p, int threads,
                 bool weights_constant, const double log2_ms[SOLVER_MAX],
                 struct policy_ranking *out) {
    out->n = 0;
    for (int id = 0; id < SOLVER_MAX; id++) {
        out->ms[id] = -1;
        const struct solver *s = id < solver_count() ? solver_get(id) : NULL;
        if (s == NULL || !isfinite(log2_ms[id]) || !s->is_applicable(p, NULL))
            continue;
        const double floor = policy_floor_ms(&meta->limits, p, s);
        double est = exp2(log2_ms[id]);
        const struct estimate_envelope *e = &meta->envelope;
        if (e->present && e->has[id] && floor > 0) {
            const int b = policy_envelope_bin(e, floor);
            const double lo = floor * exp2(e->lo[id][b]), hi = floor * exp2(e->hi[id][b]);
            est = est < lo ? lo : est > hi ? hi : est;
        }
        out->ms[id] = est > floor ? est : floor;
        if (!weights_constant)
            out->ms[id] += policy_weights_ms(&meta->limits.weights, s, p);
        out->order[out->n++] = id;
    }
    stats_order_by_time(out->ms, out->order, out->n);
    float f[FEATURE_COUNT];
    features_of(p, threads, meta->channel_block, f);
    bool shape_inside;
    out->feature = outside(policy_bounds(meta, p), f, &shape_inside);
    out->extrapolating = out->feature >= 0;
    out->scale_only = out->extrapolating && shape_inside;
    out->value = out->extrapolating ? f[out->feature] : 0;
    /* Outside only in the scale, of a trained shape (a bigger batch of a
     * known layer, or a layer with less work than any trained): the
     * model's order carries over where the safe pick would not (the
     * suite's VGG-16 3x3 layers at batch 8 and 32: oneDNN's GEMM, the
     * safe pick, ran at 0.29-0.31 of its Winograd, the model's pick). The
     * problem still counts as extrapolating: hybrid mode measures it. */
    if (out->extrapolating && !shape_inside) {
        /* of the first POLICY_SAFE_CHOICES applicable solvers of the
         * class's safe list, the one the model ranks highest goes first */
        int cls = policy_safe_class(p);
        if (meta->safe_count[cls] == 0 && cls >= PROBLEM_KINDS)
            cls -= PROBLEM_KINDS; /* metadata with the kinds' lists only */
        int best = -1, found = 0;
        /* one channel in and out: the rules' pick, the depthwise solver.
         * No class's list is made for it: the dense one put WaveRNN's 1x11
         * layers on oneDNN's GEMM at 13.6-27x, the depthwise one (made of
         * layers with 8 channels or more) a 1-channel 2x2 on oneDNN's
         * direct at 7x */
        if (problem_is_depthwise(p) && p->groups == 1) {
            const int id = heur_rules_solver(p);
            while (++best < out->n && out->order[best] != id)
                ;
            if (best == out->n)
                best = -1;
            found = POLICY_SAFE_CHOICES;
        }
        for (int i = 0; i < meta->safe_count[cls] && found < POLICY_SAFE_CHOICES; i++) {
            const int id = solver_find(meta->solver_names[meta->safe[cls][i]]);
            int at = 0;
            while (at < out->n && out->order[at] != id)
                at++;
            if (at == out->n)
                continue;
            found++;
            if (best < 0 || at < best)
                best = at; /* the model's order among the safe ones */
        }
        if (best >= 0) {
            const int id = out->order[best];
            for (int at = best; at > 0; at--)
                out->order[at] = out->order[at - 1];
            out->order[0] = id;
        }
    }
    out->unsure =
        out->extrapolating ||
        (out->n >= 2 && out->ms[out->order[1]] < POLICY_UNSURE_MARGIN * out->ms[out->order[0]]);
}
