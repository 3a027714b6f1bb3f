/* weights_probe.c -- see weights_probe.h. */
#include "tune/weights_probe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune/descs.h"
#include "tune/problem_list.h"
#include "util/clock.h"
#include "util/stats.h"

#define PROBES 3

struct probe {
    struct conv_problem p;
    struct descs d;
    float *x, *w, *y;
};

/* ms of one call of solver id on the probe. */
static bool timed_call(convsel_handle_t h, convsel_solver_id_t id, const struct probe *pr, void *ws,
                       size_t ws_bytes, double *ms) {
    const int64_t t0 = clock_now_ns();
    const convsel_status_t st = convsel_convolution_forward(
        h, id, pr->d.x, pr->x, pr->d.w, pr->w, pr->d.conv, pr->d.y, pr->y, ws, ws_bytes);
    *ms = (double)(clock_now_ns() - t0) * 1e-6;
    return st == CONVSEL_STATUS_SUCCESS;
}

/* ns per weight element that per-call weights add to solver id on pr. */
static bool measure(convsel_handle_t h, convsel_solver_id_t id, const struct probe *pr,
                    double *ns) {
    size_t ws_bytes = 0;
    if (convsel_get_forward_workspace_size(h, id, pr->d.x, pr->d.w, pr->d.conv, pr->d.y,
                                           &ws_bytes) != CONVSEL_STATUS_SUCCESS)
        return false;
    void *ws = malloc(ws_bytes ? ws_bytes : 1);
    double constant[PROBE_ROUNDS], per_call[PROBE_ROUNDS], warm;
    bool ok = ws != NULL;
    for (int i = 0; ok && i < PROBE_ROUNDS; i++) {
        /* setting the mode forgets kept weights: the warm call transforms */
        ok = convsel_set_weights_constant(h, 1) == CONVSEL_STATUS_SUCCESS &&
             timed_call(h, id, pr, ws, ws_bytes, &warm) &&
             timed_call(h, id, pr, ws, ws_bytes, &constant[i]) &&
             convsel_set_weights_constant(h, 0) == CONVSEL_STATUS_SUCCESS &&
             timed_call(h, id, pr, ws, ws_bytes, &per_call[i]);
    }
    free(ws);
    if (!ok)
        return false;
    const double extra_ms =
        stats_median(per_call, PROBE_ROUNDS) - stats_median(constant, PROBE_ROUNDS);
    *ns = extra_ms > 0 ? extra_ms * 1e6 / (double)pr->p.w_elems : 0;
    return true;
}

static void probe_destroy(struct probe *pr) {
    descs_destroy(&pr->d);
    free(pr->x), free(pr->w), free(pr->y);
}

static bool probe_create(const int64_t v[14], struct probe *pr, char *err, size_t cap) {
    memset(pr, 0, sizeof *pr);
    if (problem_from_sizes(v, &pr->p, err, cap) != CONVSEL_STATUS_SUCCESS)
        return false;
    struct rng r = rng_seed(3);
    const struct conv_problem *p = &pr->p;
    if (!descs_create(p, &pr->d) ||
        !(pr->x = random_buffer((size_t)(p->n * p->c * p->h * p->w), &r)) ||
        !(pr->w = random_buffer(p->w_elems, &r)) ||
        !(pr->y = random_buffer((size_t)(p->n * p->k * p->oh * p->ow), &r))) {
        snprintf(err, cap, "out of memory for the weights probe");
        return false;
    }
    return true;
}

bool weights_probe_measure(convsel_handle_t h, struct weights_costs *out, char *err, size_t cap) {
    *out = (struct weights_costs){0};
    /* n, c, h, w, k, r, s, pad_h, pad_w, stride_h, stride_w, dil_h, dil_w, groups */
    static const int64_t sizes[PROBES][14] = {{1, 512, 7, 7, 512, 1, 1, 0, 0, 1, 1, 1, 1, 1},
                                              {1, 256, 7, 7, 256, 3, 3, 1, 1, 1, 1, 1, 1, 1},
                                              {1, 512, 7, 7, 512, 3, 3, 1, 1, 1, 1, 1, 1, 4}};
    /* the figure each probe gives: 1x1, larger (the grouped probe only
     * for solvers that do not run the dense one) */
    static const int slot[PROBES] = {0, 1, 1};
    int constant = 0;
    convsel_get_weights_constant(h, &constant);
    struct probe pr[PROBES];
    memset(pr, 0, sizeof pr);
    bool ok = true;
    for (int k = 0; ok && k < PROBES; k++)
        ok = probe_create(sizes[k], &pr[k], err, cap);
    for (convsel_solver_id_t id = 0; ok && id < convsel_solver_count(); id++) {
        const char *name = convsel_solver_name(id);
        if (strcmp(name, "reference") == 0 || out->count == LIMITS_SOLVERS_MAX ||
            strlen(name) >= LIMITS_NAME_MAX)
            continue;
        double ns[2] = {-1, -1};
        for (int k = 0; ok && k < PROBES; k++)
            if (ns[slot[k]] < 0 &&
                convsel_solver_is_applicable(h, id, pr[k].d.x, pr[k].d.w, pr[k].d.conv,
                                             pr[k].d.y) == CONVSEL_STATUS_SUCCESS &&
                !measure(h, id, &pr[k], &ns[slot[k]])) {
                snprintf(err, cap, "weights probe: %s: %s", name, convsel_get_error_message(h));
                ok = false;
            }
        if (ok && (ns[0] >= 0 || ns[1] >= 0)) {
            snprintf(out->solver[out->count], LIMITS_NAME_MAX, "%s", name);
            out->ns[out->count][0] = ns[0], out->ns[out->count][1] = ns[1];
            out->count++;
        }
    }
    for (int k = 0; k < PROBES; k++)
        probe_destroy(&pr[k]);
    convsel_set_weights_constant(h, constant);
    return ok;
}
