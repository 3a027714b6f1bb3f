/* hybrid.c -- find modes (convsel_set_find_mode): where immediate mode's
 * ranking is unsure, the first forward call of a problem times the top
 * candidates on the caller's data, once per process (heur/measured.h), and
 * later calls use the fastest.
 *
 * Unsure: the model extrapolates (a feature outside its training range)
 * or its first two predictions are within POLICY_UNSURE_MARGIN; a problem
 * the performance database holds is never unsure. Exhaustive mode measures
 * every problem, with every applicable solver.
 *
 * The measurement: each candidate's set-up (oneDNN's primitive) is made
 * first, untimed -- a later call does not pay it, so a set-up must not
 * decide -- then each runs on the caller's x and w into y, timed, in
 * MEASURED_ROUNDS rounds over all of them, and the fastest run of each
 * counts (a solver's first run pays what later calls do not).
 * The workspace is the largest candidate's, allocated and touched before
 * the runs (a first touch costs page faults, which no later call pays).
 * y holds the last run's output, which is correct whichever ran last: the
 * call is done. The first call costs the runs, the set-ups and this
 * bookkeeping; `convsel bench` reports it against the runs it timed, the
 * runs and set-ups, and MEASURED_ROUNDS times each candidate's fastest
 * run (hybrid's first call). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/handle.h"
#include "api/hybrid.h"
#include "api/pick_memo.h"
#include "heur/measured.h"
#include "heur/select.h"
#include "util/clock.h"
#include "util/machine.h"

#define HYBRID_CANDIDATES 3

/* The measurement's keys. Handles with per-call weights time each
 * candidate transforming them and constant ones do not, so their winners
 * differ (Winograd's transform is most of a per-call run): the weights
 * mode goes with the machine ("avx512-2c-2t/per-call"). */
static void keys_of(const convsel_handle_t h, const struct conv_problem *p, char *machine,
                    size_t machine_cap, char *key, size_t key_cap) {
    char sig[MACHINE_SIGNATURE_MAX - 16]; /* "avx512-2c-2t": room for the mode */
    machine_signature(h->num_threads, sig, sizeof sig);
    snprintf(machine, machine_cap, "%s/%s", sig, h->weights_constant ? "constant" : "per-call");
    problem_key_format(p, key, key_cap);
}

const struct measured *hybrid_lookup(convsel_handle_t h, const struct conv_problem *p) {
    if (h->find_mode == CONVSEL_FIND_MODE_IMMEDIATE)
        return NULL;
    char machine[MACHINE_SIGNATURE_MAX], key[CONVSEL_PROBLEM_KEY_MAX];
    keys_of(h, p, machine, sizeof machine, key, sizeof key);
    const struct measured *m = measured_get(machine, key, NULL);
    return m && m->n > 0 ? m : NULL;
}

int hybrid_pick(convsel_handle_t h, const struct conv_problem *p, size_t workspace_bytes) {
    const struct measured *m = hybrid_lookup(h, p);
    for (int i = 0; m && i < m->n; i++)
        if (solver_get(m->solver[i])->workspace_size(p) <= workspace_bytes)
            return m->solver[i];
    struct pick_memo *memo = handle_picks(h);
    int id = memo ? pick_memo_find(memo, p, h->num_threads, h->weights_constant) : -1;
    if (id < 0) {
        id = heur_select_solver(p, h->num_threads, h->weights_constant);
        if (memo)
            pick_memo_put(memo, p, h->num_threads, h->weights_constant, id);
    }
    return id;
}

/* The solvers to time: the ranking's first HYBRID_CANDIDATES (hybrid) or
 * every applicable one (exhaustive), the reference only when alone. */
static int candidates(convsel_handle_t h, const struct conv_problem *p, bool *measure,
                      int out[MEASURED_MAX]) {
    struct heur_choice ranked[SOLVER_MAX];
    struct heur_info info;
    const int n = heur_rank(p, h->num_threads, h->weights_constant, ranked, SOLVER_MAX, &info);
    const bool exhaustive = h->find_mode == CONVSEL_FIND_MODE_EXHAUSTIVE;
    *measure = exhaustive || (!info.measured && info.unsure);
    const int ref = solver_reference_id(), limit = exhaustive ? MEASURED_MAX : HYBRID_CANDIDATES;
    int k = 0;
    for (int i = 0; i < n && k < limit; i++)
        if (ranked[i].solver != ref)
            out[k++] = ranked[i].solver;
    if (k == 0)
        out[k++] = ref;
    return k;
}

convsel_status_t hybrid_forward(convsel_handle_t h, const struct conv_problem *p, const float *x,
                                const float *w, float *y, size_t workspace_bytes,
                                const struct solver **pick, bool *done) {
    *done = false;
    *pick = NULL;
    if (hybrid_lookup(h, p) != NULL) {
        *pick = solver_get(hybrid_pick(h, p, workspace_bytes));
        return CONVSEL_STATUS_SUCCESS;
    }
    int cand[MEASURED_MAX];
    bool measure;
    const int k = candidates(h, p, &measure, cand);
    if (!measure) /* sure, or measured by the database: immediate mode's pick */
        return CONVSEL_STATUS_SUCCESS;
    char machine[MACHINE_SIGNATURE_MAX], key[CONVSEL_PROBLEM_KEY_MAX];
    keys_of(h, p, machine, sizeof machine, key, sizeof key);
    struct measured_claim claim = {0};
    const int64_t t0 = clock_now_ns();
    if (measured_get(machine, key, &claim) != NULL) { /* another thread measured it meanwhile */
        *pick = solver_get(hybrid_pick(h, p, workspace_bytes));
        return CONVSEL_STATUS_SUCCESS;
    }
    size_t ws = 0;
    for (int i = 0; i < k; i++) {
        const size_t need = solver_get(cand[i])->workspace_size(p);
        ws = need > ws ? need : ws;
    }
    void *buf = ws ? malloc(ws) : NULL;
    struct measured m = {0};
    convsel_status_t st = CONVSEL_STATUS_SUCCESS;
    if (ws && buf == NULL) {
        st = CONVSEL_STATUS_ALLOC_FAILED;
    } else {
        if (buf)
            memset(buf, 0, ws); /* the page faults, outside the timing */
        const struct conv_run_args args = handle_run_args(h, p, x, w, y, buf, ws);
        const int64_t s0 = clock_now_ns();
        for (int i = 0; i < k; i++) {
            const struct solver *s = solver_get(cand[i]);
            if (s->prepare)
                s->prepare(&args);
        }
        m.setup_ms = (double)(clock_now_ns() - s0) * 1e-6;
        /* rounds over all candidates, so each one's runs are apart in time */
        double best[MEASURED_MAX];
        bool ran[MEASURED_MAX] = {false};
        for (int round = 0; round < MEASURED_ROUNDS && st == CONVSEL_STATUS_SUCCESS; round++)
            for (int i = 0; i < k && st == CONVSEL_STATUS_SUCCESS; i++) {
                if (round > 0 && !ran[i])
                    continue; /* it found no kernel in the first round */
                const int64_t r0 = clock_now_ns();
                st = solver_run(solver_get(cand[i]), &args);
                const double ms = (double)(clock_now_ns() - r0) * 1e-6;
                m.runs_ms += ms;
                if (st == CONVSEL_STATUS_NOT_SUPPORTED) { /* a backend that found no kernel */
                    st = CONVSEL_STATUS_SUCCESS;
                    continue;
                }
                best[i] = ran[i] && best[i] < ms ? best[i] : ms;
                ran[i] = true;
            }
        for (int i = 0; i < k; i++) {
            if (!ran[i])
                continue;
            int at = m.n++; /* insert in time order */
            while (at > 0 && m.ms[at - 1] > best[i]) {
                m.ms[at] = m.ms[at - 1], m.solver[at] = m.solver[at - 1];
                at--;
            }
            m.ms[at] = best[i], m.solver[at] = cand[i];
        }
    }
    free(buf);
    m.total_ms = (double)(clock_now_ns() - t0) * 1e-6;
    if (st != CONVSEL_STATUS_SUCCESS)
        m.n = 0; /* the ranking stands; y is not trusted */
    measured_publish(&claim, &m);
    if (st != CONVSEL_STATUS_SUCCESS)
        return handle_fail(h, st, "hybrid find: measuring the candidates failed: %s",
                           convsel_status_string(st));
    *done = m.n > 0;
    if (!*done) /* nothing ran to the end: immediate mode's pick runs the call */
        return CONVSEL_STATUS_SUCCESS;
    *pick = solver_get(m.solver[0]);
    return CONVSEL_STATUS_SUCCESS;
}
