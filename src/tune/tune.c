/* tune.c -- see tune.h. */
#include "tune/tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "convsel/convsel.h"
#include "tune/descs.h"
#include "tune/weights_probe.h"
#include "util/clock.h"
#include "util/machine.h"
#include "util/noise_guard.h"
#include "util/peak.h"
#include "util/rng.h"

#define MAX_RESULTS 32
#define MAX_ATTEMPTS 3       /* measurements of one problem before calling it noisy */
#define CALIBRATION_RUNS 10  /* per calibration solver: ~20 ms, several time slices */
#define SCALE_CALIBRATIONS 5 /* per attempt at the machine's scale */
#define SCALE_ATTEMPTS 10    /* one second apart while it reads slower than the database's */

/* The calibration workload: two solvers with different threading (convsel's
 * pool and oneDNN's OpenMP), so that contention shows in either. */
struct calibration {
    convsel_handle_t h;
    struct descs d;
    convsel_solver_id_t solvers[2];
    float *x, *w, *y;
    void *workspace;
    size_t workspace_bytes;
};

/* Runs both calibration solvers `rounds` times, alternating. */
static void run_calibration(const struct calibration *c, int rounds) {
    for (int i = 0; i < rounds; i++)
        for (int s = 0; s < 2; s++)
            convsel_convolution_forward(c->h, c->solvers[s], c->d.x, c->x, c->d.w, c->w, c->d.conv,
                                        c->d.y, c->y, c->workspace, c->workspace_bytes);
}

static double calibrate(void *ctx) {
    const struct calibration *c = ctx;
    /* One untimed round first: the measurement just before may have evicted
     * the calibration's plan or let OpenMP's workers fall asleep, which is
     * not contention. */
    run_calibration(c, 1);
    /* The total, not a median: a competing process takes whole time slices
     * (milliseconds), which single sub-millisecond runs can slip between. */
    const int64_t t0 = clock_now_ns();
    run_calibration(c, CALIBRATION_RUNS);
    return (double)(clock_now_ns() - t0) * 1e-9;
}

static void calibration_destroy(struct calibration *c) {
    free(c->x);
    free(c->w);
    free(c->y);
    free(c->workspace);
    descs_destroy(&c->d);
}

/* 1x32x56x56, 32 3x3 filters, pad 1: ~8 ms for the whole calibration. */
static bool calibration_create(convsel_handle_t h, struct calibration *c, char *err, size_t cap) {
    *c = (struct calibration){.h = h};
    const int64_t v[14] = {1, 32, 56, 56, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1};
    struct conv_problem p;
    if (problem_from_sizes(v, &p, err, cap) != CONVSEL_STATUS_SUCCESS || !descs_create(&p, &c->d) ||
        convsel_solver_find(h, "im2col_gemm", &c->solvers[0]) ||
        convsel_solver_find(h, "onednn_direct", &c->solvers[1])) {
        snprintf(err, cap, "no calibration workload: %s", convsel_get_error_message(h));
        return false;
    }
    for (int s = 0; s < 2; s++) {
        size_t ws = 0;
        if (convsel_get_forward_workspace_size(h, c->solvers[s], c->d.x, c->d.w, c->d.conv, c->d.y,
                                               &ws) == CONVSEL_STATUS_SUCCESS &&
            ws > c->workspace_bytes)
            c->workspace_bytes = ws;
    }
    struct rng r = rng_seed(2);
    c->x = random_buffer((size_t)(p.n * p.c * p.h * p.w), &r);
    c->w = random_buffer(p.w_elems, &r);
    c->y = malloc((size_t)(p.n * p.k * p.oh * p.ow) * sizeof *c->y);
    c->workspace = malloc(c->workspace_bytes ? c->workspace_bytes : 1);
    if (!c->x || !c->w || !c->y || !c->workspace) {
        snprintf(err, cap, "out of memory for the calibration");
        return false;
    }
    return true;
}

/* Runs find until the machine was quiet before and after it. */
static bool find_quietly(convsel_handle_t h, struct noise_guard *guard, const struct descs *d,
                         const float *x, const float *w, float *y, convsel_perf_result_t *found,
                         int *count, bool *failed) {
    for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const bool quiet_before = noise_guard_wait_quiet(guard);
        if (convsel_find_forward(h, d->x, x, d->w, w, d->conv, d->y, y, found, MAX_RESULTS,
                                 count)) {
            *failed = true;
            return false;
        }
        if (noise_guard_check(guard) && quiet_before)
            return true;
    }
    return false;
}

struct tuner {
    int64_t remeasure_before;
    int64_t scale_at; /* when this run recorded the database's calibration; 0: it did not */
    bool remeasured;  /* by the last tune_one */
    convsel_handle_t h;
    struct noise_guard guard;
    struct perfdb *db;
    char machine[PERFDB_MACHINE_MAX];
};

static const char *origin_kind(const struct problem_row *row) {
    return row->origin == PROBLEM_ORIGIN_LAYER       ? "layer"
           : row->origin == PROBLEM_ORIGIN_PERTURBED ? "perturbed"
                                                     : NULL;
}

/* Measures one problem and stores every solver's result; what gets a line. */
static enum tune_outcome tune_one(struct tuner *t, const struct problem_row *row, char *what,
                                  size_t cap) {
    const struct conv_problem *p = &row->p;
    char key[CONVSEL_PROBLEM_KEY_MAX], err[PERFDB_ERROR_MAX];
    problem_key_format(p, key, sizeof key);
    int64_t newest = 0;
    const int held = perfdb_problem_newest(t->db, t->machine, key, &newest, err, sizeof err);
    t->remeasured = held > 0 && newest < t->remeasure_before;
    if (held < 0 || (held > 0 && !t->remeasured)) {
        snprintf(what, cap, "%s", held > 0 ? "already in the database" : err);
        return held > 0 ? TUNE_SKIPPED : TUNE_FAILED;
    }
    struct descs d;
    if (!descs_create(p, &d)) {
        snprintf(what, cap, "out of memory for the descriptors");
        return TUNE_FAILED;
    }
    enum tune_outcome result = TUNE_FAILED;
    struct rng r = rng_seed(1);
    float *x = random_buffer((size_t)(p->n * p->c * p->h * p->w), &r);
    float *w = random_buffer(p->w_elems, &r);
    float *y = malloc((size_t)(p->n * p->k * p->oh * p->ow) * sizeof *y);
    convsel_perf_result_t found[MAX_RESULTS];
    int count = 0;
    if (!x || !w || !y) {
        snprintf(what, cap, "out of memory for the tensors");
        goto done;
    }
    /* Setting the mode again forgets the last problem's transformed weights:
     * w is a new buffer, perhaps at the last one's address. */
    int constant = 0;
    convsel_get_weights_constant(t->h, &constant);
    convsel_set_weights_constant(t->h, constant);
    bool failed = false;
    if (!find_quietly(t->h, &t->guard, &d, x, w, y, found, &count, &failed)) {
        if (failed) {
            snprintf(what, cap, "find: %s", convsel_get_error_message(t->h));
        } else {
            snprintf(what, cap, "noisy (load %.2f), not stored", noise_guard_load(&t->guard));
            result = TUNE_NOISY;
        }
        goto done;
    }
    struct perfdb_record recs[MAX_RESULTS];
    for (int i = 0; i < count; i++) {
        recs[i] = (struct perfdb_record){.problem = *p,
                                         .median_ms = found[i].time_ms,
                                         .min_ms = found[i].time_min_ms,
                                         .max_ms = found[i].time_max_ms,
                                         .runs = found[i].runs,
                                         .workspace_bytes = found[i].workspace_bytes};
        snprintf(recs[i].machine, sizeof recs[i].machine, "%s", t->machine);
        snprintf(recs[i].solver, sizeof recs[i].solver, "%s", found[i].name);
    }
    const char *kind = origin_kind(row);
    const bool stored = t->remeasured && count > 0
                            ? perfdb_replace_problem(t->db, recs, count, err, sizeof err)
                            : perfdb_put(t->db, recs, count, err, sizeof err);
    if (!stored ||
        (kind && !perfdb_put_origin(t->db, p, row->network, row->family, kind, err, sizeof err))) {
        snprintf(what, cap, "%s", err);
        goto done;
    }
    snprintf(what, cap, "%s %.4f ms, %d solvers%s", count ? found[0].name : "-",
             count ? found[0].time_ms : 0.0, count, t->remeasured ? " (measured again)" : "");
    result = TUNE_STORED;
done:
    free(x);
    free(w);
    free(y);
    descs_destroy(&d);
    return result;
}

/* One database holds one weights mode per machine: the ranking prices
 * per-call weights on top of constant-weights timings, and a mix could
 * not be told apart. A database from before the mode was recorded holds
 * constant-weights timings (tune's default then and now). */
static bool check_weights_mode(struct tuner *t, bool constant, char *err, size_t cap) {
    bool recorded = true;
    const int have = perfdb_get_weights_mode(t->db, t->machine, &recorded, err, cap);
    if (have < 0)
        return false;
    if (have == 0) {
        const int64_t rows = perfdb_count(t->db, err, cap);
        if (rows < 0)
            return false;
        recorded = rows > 0 ? true : constant;
    }
    if (recorded != constant) {
        snprintf(err, cap,
                 "the database holds %s-weights timings for %s; --weights %s would mix them "
                 "(tune into another database)",
                 recorded ? "constant" : "per-call", t->machine,
                 constant ? "constant" : "per-call");
        return false;
    }
    return have == 1 || perfdb_put_weights_mode(t->db, t->machine, constant, err, cap);
}

/* The machine's scale against the one the database's timings were taken
 * at. Resuming a tune spread over days put two machine states in one
 * training set (every solver 1.45-1.54x slower in a third of the records:
 * models/README.md), and the noise guard could not see it, because it
 * compares a calibration with the fastest of the same run. This compares
 * the run's with the database's. The fastest of a few calibrations is the
 * quiet machine's (contention only slows them); while it reads slower than
 * the reference it is retried for some seconds, which outlasts a busy
 * moment, not a changed machine. A run that re-times every record older
 * than the reference records its own, but only when it reads outside the
 * guard: a re-time of some problems after a solver changed (a few thousand
 * of a database's problems) on a machine that still reads as the reference
 * did leaves the reference, which the untouched records were timed at. */
static bool check_scale(struct tuner *t, struct calibration *cal, const struct tune_options *o,
                        struct tune_summary *s, char *err, size_t cap) {
    struct perfdb_calibration ref = {0};
    const int have = perfdb_get_calibration(t->db, t->machine, &ref, err, cap);
    if (have < 0)
        return false;
    const double band = 1 + o->drift_guard_pct / 100.0;
    double best = 0;
    for (int attempt = 0; attempt < SCALE_ATTEMPTS; attempt++) {
        if (attempt) {
            const struct timespec second = {1, 0};
            nanosleep(&second, NULL);
        }
        for (int i = 0; i < SCALE_CALIBRATIONS; i++) {
            const double ms = calibrate(cal) * 1e3;
            best = best == 0 || ms < best ? ms : best;
        }
        if (have == 0 || best <= ref.ms * band)
            break;
    }
    s->scale_ms = best;
    s->scale_ref_ms = ref.ms, s->scale_ref_at = ref.at; /* 0 without one */
    const double r = have == 1 ? best / ref.ms : 0;
    if (have == 1 && r <= band && r >= 1 / band)
        return true;
    if (have == 1 && o->remeasure_before <= ref.at) {
        char when[40] = "?";
        const time_t at = (time_t)ref.at;
        struct tm tm;
        if (gmtime_r(&at, &tm))
            strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", &tm);
        snprintf(err, cap,
                 "the calibration reads %.2fx the one this database's timings for %s were taken "
                 "at (%.3f ms now, %.3f ms on %s), outside the drift guard's %d %%: the machine "
                 "is not as it was (another host, throttled, or busy for %d s), or im2col_gemm or "
                 "onednn_direct (which the calibration runs) changed, and new timings would not "
                 "compare with the stored ones. Tune when it reads as it did, into another "
                 "database, re-time these problems (--remeasure-before now), or give "
                 "--drift-guard 0",
                 r, t->machine, best, ref.ms, when, o->drift_guard_pct, SCALE_ATTEMPTS);
        return false;
    }
    s->scale_recorded = true;
    t->scale_at = (int64_t)time(NULL);
    const struct perfdb_calibration mine = {best, t->scale_at};
    return perfdb_put_calibration(t->db, t->machine, &mine, err, cap);
}

enum tune_result tune_run(const struct tune_options *o, const struct problem_list *list,
                          tune_progress_fn fn, void *ctx, struct tune_summary *s, char *err,
                          size_t cap) {
    *s = (struct tune_summary){0};
    const int shard_n = o->shard_count > 0 ? o->shard_count : 1, shard_i = o->shard_index;
    struct tuner t = {.remeasure_before = o->remeasure_before};
    if ((t.db = perfdb_open(o->db_path, false, 0, err, cap)) == NULL)
        return TUNE_RUN_SETUP_FAILED;
    if (convsel_handle_create(&t.h) != CONVSEL_STATUS_SUCCESS ||
        (o->threads > 0 && convsel_set_num_threads(t.h, o->threads) != CONVSEL_STATUS_SUCCESS) ||
        convsel_set_weights_constant(t.h, o->weights_constant) != CONVSEL_STATUS_SUCCESS) {
        snprintf(err, cap, "cannot create a handle: %s",
                 t.h ? convsel_get_error_message(t.h) : "out of memory");
        perfdb_close(t.db);
        convsel_handle_destroy(t.h);
        return TUNE_RUN_SETUP_FAILED;
    }
    int threads = 1;
    convsel_get_num_threads(t.h, &threads);
    machine_signature(threads, t.machine, sizeof t.machine);
    snprintf(s->machine, sizeof s->machine, "%s", t.machine);
    snprintf(s->journal, sizeof s->journal, "%s", perfdb_journal_mode(t.db));
    struct calibration cal;
    t.guard = (struct noise_guard){.threshold = o->noise_guard_pct / 100.0,
                                   .max_waits = 60,
                                   .wait_ms = 1000,
                                   .calibrate = calibrate,
                                   .ctx = &cal};
    bool ok = calibration_create(t.h, &cal, err, cap);
    /* The machine's limits, once per database and machine: the floor of
     * every estimate of a model trained on these measurements. */
    struct machine_limits limits;
    const int have = ok ? perfdb_get_limits(t.db, t.machine, &limits, err, cap) : -1;
    if (have < 0)
        ok = false;
    /* measured by an older peak loop (PEAK_METHOD): again, keeping the
     * weights costs, which did not depend on it */
    const bool stale = ok && have == 1 && limits.method < PEAK_METHOD;
    if (stale) {
        const struct weights_costs kept = limits.weights;
        peak_measure(threads, &limits);
        limits.weights = kept;
        s->limits_remeasured = true;
    } else if (ok && have == 0) {
        peak_measure(threads, &limits);
    }
    /* and what per-call weights cost each solver (tune/weights_probe.h),
     * added to limits measured before it existed, and measured again by a
     * re-time after a solver changed: they are the solvers' costs, like
     * their timings (a faster packer made them stale) */
    const bool probe = ok && limits.present &&
                       (limits.weights.count == 0 || limits.weights.at < o->remeasure_before);
    if (probe) {
        s->weights_remeasured = limits.weights.count > 0;
        ok = weights_probe_measure(t.h, &limits.weights, err, cap);
        limits.weights.at = (int64_t)time(NULL);
    }
    if (ok && limits.present && (have == 0 || probe || stale))
        ok = perfdb_put_limits(t.db, t.machine, &limits, err, cap);
    if (ok)
        ok = check_weights_mode(&t, o->weights_constant, err, cap);
    if (ok && o->drift_guard_pct > 0)
        ok = check_scale(&t, &cal, o, s, err, cap);
    s->total = list->n <= shard_i ? 0 : (list->n - shard_i + shard_n - 1) / shard_n;
    const int64_t t0 = clock_now_ns();
    if (ok && fn)
        fn(ctx, &(struct tune_event){0, s->total, s, NULL, TUNE_SKIPPED, "", 0});
    int done = 0;
    for (int i = shard_i; ok && i < list->n; i += shard_n) {
        char what[PERFDB_ERROR_MAX + 64];
        const enum tune_outcome r = tune_one(&t, &list->rows[i], what, sizeof what);
        s->measured += r == TUNE_STORED;
        s->remeasured += r == TUNE_STORED && t.remeasured;
        s->skipped += r == TUNE_SKIPPED;
        s->failed += r == TUNE_FAILED;
        s->noisy += r == TUNE_NOISY;
        s->seconds = (double)(clock_now_ns() - t0) * 1e-9;
        if (fn)
            fn(ctx, &(struct tune_event){++done, s->total, s, &list->rows[i], r, what, s->seconds});
    }
    s->seconds = (double)(clock_now_ns() - t0) * 1e-9;
    if (t.guard.threshold > 0) {
        s->best_calibration_ms = t.guard.best * 1e3;
        s->calibrations = t.guard.calibrations;
        s->busy = t.guard.busy;
        s->waited_s = t.guard.waits * (long)t.guard.wait_ms / 1000;
    }
    /* The reference this run recorded is the fastest of a few calibrations
     * at its start, which a busy moment slows: on 2026-12-07 one read
     * 16.7 ms where the run's fastest of 12787 was 8.9, and the next run
     * was refused as a changed machine at 11.0. Contention only slows a
     * calibration, so the run's fastest is the quiet machine's, and the
     * records were timed at it: it replaces the start's. */
    if (ok && t.scale_at > 0 && t.guard.best > 0 && t.guard.best * 1e3 < s->scale_ms) {
        const struct perfdb_calibration quiet = {t.guard.best * 1e3, t.scale_at};
        char why[PERFDB_ERROR_MAX];
        if (perfdb_put_calibration(t.db, t.machine, &quiet, why, sizeof why))
            s->scale_refined_ms = quiet.ms;
    }
    calibration_destroy(&cal);
    convsel_handle_destroy(t.h);
    perfdb_close(t.db);
    return !ok ? TUNE_RUN_SETUP_FAILED : s->failed ? TUNE_RUN_SOME_FAILED : TUNE_RUN_OK;
}
