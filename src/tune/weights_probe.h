/* weights_probe.h -- what per-call weights cost each solver on this
 * machine. The database's timings are taken with constant weights (the
 * weights transformed once, as in inference), and so is every model
 * trained on them; a caller whose weights change between calls (the
 * library's default) pays the transform on every call. That cost depends
 * on the solver and on how many weights there are, hardly on the rest of
 * the problem: it is measured here once per database and machine, and
 * stored with the machine's limits (util/peak.h), from which the policy
 * adds it to estimates for per-call handles (heur/policy.h).
 *
 * Probes, transform-bound (few pixels, many weights), all 7x7: a 1x1
 * layer of 512 -> 512 channels, a 3x3 layer of 256 -> 256, and for the
 * solvers that run neither (grouped ones) a 3x3 layer of 512 -> 512 in 4
 * groups; depthwise solvers, whose weights are few, are not priced. Each
 * solver that applies (not the reference) runs both ways, interleaved,
 * PROBE_ROUNDS times; the difference of the medians over the weights is
 * its ns per weight element (0 when per-call was not slower). */
#ifndef CONVSEL_TUNE_WEIGHTS_PROBE_H
#define CONVSEL_TUNE_WEIGHTS_PROBE_H

#include <stddef.h>

#include "convsel/convsel.h"
#include "util/peak.h"

#define PROBE_ROUNDS 7

/* Measures on h's threads; h's weights setting is restored. False (err
 * says why) when a probe could not be set up or run. */
bool weights_probe_measure(convsel_handle_t h, struct weights_costs *out, char *err, size_t cap);

#endif
