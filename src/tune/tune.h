/* tune.h -- measuring problems into the performance database: what
 * `convsel tune` runs, as a library module the CLI (and anything else)
 * calls.
 *
 * Every problem is timed with the library's exhaustive find
 * (convsel_find_forward: every applicable solver, interleaved rounds,
 * medians and spread) and all of its results are written in one
 * transaction, with the problem's origin when it has one. Resumable: a
 * problem the database already holds for this machine signature is
 * skipped, unless every record of it is older than remeasure_before: then
 * it is measured again and its records replaced (a solver changed, and the
 * problems it runs are re-timed beside the others; a resumed run with the
 * same cut-off skips what the first one measured again); so are the
 * per-call weights costs stored with the machine's limits when they were
 * measured before remeasure_before (tune.c). Shards
 * (shard_index / shard_count) take every N-th problem of the same list. A
 * noise guard (util/noise_guard.h) times a fixed calibration before and
 * after each problem and keeps measurements from a busy machine out of
 * the database; a drift guard compares the calibration at the start with
 * the one the database's timings were taken at, and refuses to add
 * timings of a machine that has changed (tune.c, check_scale). */
#ifndef CONVSEL_TUNE_TUNE_H
#define CONVSEL_TUNE_TUNE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db/perfdb.h"
#include "tune/problem_list.h"

struct tune_options {
    const char *db_path;
    int threads;           /* 0: the handle's default (online CPUs) */
    bool weights_constant; /* convsel_set_weights_constant, as in inference */
    int noise_guard_pct;   /* busy above this % of the best calibration; 0: off */
    int shard_index, shard_count;
    int64_t remeasure_before; /* Unix seconds; 0: a problem in the database is never re-measured */
    int drift_guard_pct;      /* refuse when the calibration reads more than this % off the
                                 database's (perfdb_put_calibration); 0: off */
};

enum tune_outcome { TUNE_FAILED = -1, TUNE_SKIPPED, TUNE_STORED, TUNE_NOISY };

/* One problem done: its outcome and a line about it ("onednn_gemm 0.1234
 * ms, 6 solvers", "already in the database", "noisy (load 1.80), not
 * stored", or the failure). */
struct tune_summary;
struct tune_event {
    int done, total;
    const struct tune_summary *summary; /* so far: the machine, the journal, the counts */
    const struct problem_row *row;
    enum tune_outcome outcome;
    const char *what;
    double elapsed_s;
};
typedef void (*tune_progress_fn)(void *ctx, const struct tune_event *event);

struct tune_summary {
    int measured, skipped, failed, noisy, total;
    int remeasured;          /* of measured: problems whose older records were replaced */
    bool limits_remeasured;  /* the machine's limits were from an older peak loop */
    bool weights_remeasured; /* the per-call weights costs were older than remeasure_before */
    long calibrations, busy, waited_s;
    double best_calibration_ms, seconds;
    /* The machine's scale (drift guard on): the calibration at the start,
     * in ms, and the database's reference before this run (0: none);
     * recorded: this run's is now the reference (replacing that one, if any). */
    double scale_ms, scale_ref_ms;
    int64_t scale_ref_at;
    bool scale_recorded;
    /* recorded, and the run's fastest calibration (noise guard on) was
     * faster than the start's: the reference stored at the end, in ms */
    double scale_refined_ms;
    char machine[PERFDB_MACHINE_MAX];
    char journal[32];
};

enum tune_result {
    TUNE_RUN_OK = 0,       /* every problem measured, skipped, or left out as noisy */
    TUNE_RUN_SOME_FAILED,  /* a problem failed (its message went to the callback) */
    TUNE_RUN_SETUP_FAILED, /* nothing measured: the database, a handle or the calibration (err) */
};

/* Measures the shard's problems of list into o->db_path. The progress
 * callback (may be NULL) is called once before the first problem (done =
 * 0, row = NULL: the database and machine are known) and after each. */
enum tune_result tune_run(const struct tune_options *o, const struct problem_list *list,
                          tune_progress_fn fn, void *ctx, struct tune_summary *summary, char *err,
                          size_t cap);

#endif
