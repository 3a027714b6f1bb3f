/* ranking_model.c -- see ranking_model.h. The model and its metadata are
 * one cache entry (key: ISA / "ranking"), so they are loaded
 * together, exactly once, and a failure is cached like a success. */
#include "heur/ranking_model.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heur/model_cache.h"
#include "nn/model.h"
#include "util/cpu.h"
#include "util/env.h"
#include "util/file.h"

#ifndef CONVSEL_DEFAULT_MODEL_DIR
#define CONVSEL_DEFAULT_MODEL_DIR ""
#endif

struct ranking_model {
    struct nn_model *net;
    struct model_metadata meta;
    int solver_id[SOLVER_MAX]; /* model output -> registry id, -1 when this build lacks it */
};

static struct {
    const char *dir;    /* NULL: no model directory */
    const char *target; /* the model this CPU runs: its ISA's name */
    bool disabled;      /* CONVSEL_AI_HEUR=0 (or false, off, no) */
    bool from_env;      /* dir is CONVSEL_MODEL_DIR, not the built-in default */
} env;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static void read_env(void) {
    env.disabled = !env_bool("CONVSEL_AI_HEUR", true);
    const char *dir = getenv("CONVSEL_MODEL_DIR");
    env.from_env = dir != NULL;
    if (!dir)
        dir = CONVSEL_DEFAULT_MODEL_DIR;
    env.dir = *dir ? strdup(dir) : NULL; /* kept for the process: the cache keys on it */
    env.target = cpu_isa_name(cpu_best_isa());
}

static void free_ranking(void *value) {
    struct ranking_model *m = value;
    nn_model_free(m->net);
    free(m);
}

bool ranking_model_path(const char *dir, const char *target, enum ranking_model_file which,
                        char *buf, size_t cap) {
    const int n = snprintf(buf, cap, "%s/%s%s.tn.model", dir, target,
                           which == RANKING_MODEL_METADATA ? "_metadata" : "");
    return n >= 0 && (size_t)n < cap;
}

struct ranking_model *ranking_model_open(const char *dir, const char *target, char *err,
                                         size_t cap) {
    char path[RANKING_MODEL_PATH_MAX];
    if (!ranking_model_path(dir, target, RANKING_MODEL_METADATA, path, sizeof path)) {
        snprintf(err, cap, "model directory path too long (%zu bytes)", strlen(dir));
        return NULL;
    }
    struct ranking_model *m = calloc(1, sizeof *m);
    size_t len = 0;
    char *text = NULL;
    char why[FILE_ERROR_MAX > NN_ERROR_MAX ? FILE_ERROR_MAX : NN_ERROR_MAX];
    if (m == NULL)
        snprintf(why, sizeof why, "out of memory");
    else
        file_read_all(path, (64u << 20) - 1, &text, &len, why, sizeof why);
    bool ok = text != NULL;
    if (!ok)
        snprintf(err, cap, "%s", why);
    else if (!(ok = metadata_from_json(text, len, &m->meta, why, sizeof why)))
        snprintf(err, cap, "%s: %s", path, why);
    else if (!(ok = strcmp(m->meta.target, target) == 0))
        snprintf(err, cap, "%s: trained for %s, not %s", path, m->meta.target, target);
    free(text);
    if (ok) {
        ranking_model_path(dir, target, RANKING_MODEL_NET, path, sizeof path); /* shorter */
        if (nn_model_load_file(path, NULL, &m->net, why, sizeof why) != NN_OK) {
            snprintf(err, cap, "%s: %s", path, why);
            ok = false;
        } else if (nn_model_num_inputs(m->net) != 1 || nn_model_num_outputs(m->net) != 1 ||
                   nn_shape_volume(nn_model_input_shape(m->net, 0)) != FEATURE_COUNT ||
                   nn_shape_volume(nn_model_output_shape(m->net, 0)) !=
                       (size_t)m->meta.num_solvers) {
            snprintf(err, cap, "%s: needs one input of %d and one output of %d values", path,
                     FEATURE_COUNT, m->meta.num_solvers);
            ok = false;
        }
    }
    if (!ok) {
        ranking_model_close(m);
        return NULL;
    }
    for (int i = 0; i < m->meta.num_solvers; i++)
        m->solver_id[i] = solver_find(m->meta.solver_names[i]);
    return m;
}

void ranking_model_close(struct ranking_model *m) {
    if (m)
        free_ranking(m);
}

static bool load(void *ctx, const struct cache_key *key, void **value_out,
                 void (**free_out)(void *), char *err, size_t cap) {
    struct ranking_model *m = ranking_model_open(ctx, key->target, err, cap);
    *value_out = m;
    *free_out = free_ranking;
    return m != NULL;
}

static const struct cache_entry *entry(void) {
    pthread_once(&env_once, read_env);
    if (env.disabled || !env.dir)
        return NULL;
    struct cache_key key;
    cache_key_init(&key, env.target, "ranking", "");
    return cache_get(cache_global(), &key, load, (void *)env.dir);
}

#ifdef CONVSEL_TEST_UNGUARDED_CACHE
/* THE BUG, ON PURPOSE, in a test build only (libconvsel-unguarded.so, which
 * `python3 -m convsel.race --variant unguarded` loads; nothing installs it
 * and the shipped library never compiles this): the model comes from
 * MIOpen's pre-fix map (tools/unguarded_cache.c), and each thread keeps the
 * reference it was given, as MIOpen's callers held theirs. Two threads that
 * miss at once both load, and the second insert frees the model the first
 * is still using: the harness must catch that. */
#include "unguarded_cache.h"

static struct unguarded_cache unguarded;
static _Thread_local const struct ranking_model *held;

const struct ranking_model *ranking_model_get(void) {
    if (held)
        return held;
    pthread_once(&env_once, read_env);
    if (env.disabled || !env.dir)
        return NULL;
    const char *delay = getenv("CONVSEL_TEST_LOAD_DELAY_US");
    unguarded.delay_us = delay ? (unsigned)strtoul(delay, NULL, 10) : 0;
    struct cache_key key;
    cache_key_init(&key, env.target, "ranking", "");
    held = unguarded_get(&unguarded, &key, load, (void *)env.dir);
    return held;
}
#else
static atomic_bool warned;

const struct ranking_model *ranking_model_get(void) {
    const struct cache_entry *e = entry();
    if (e && e->status != CACHE_OK && !atomic_exchange(&warned, true))
        fprintf(stderr, "convsel: warning: ranking model not used: %s\n", e->error);
    const struct ranking_model *m = e && e->status == CACHE_OK ? e->value : NULL;
    if (m && !m->meta.bounds.present && !atomic_exchange(&warned, true))
        fprintf(stderr,
                "convsel: warning: the ranking model's metadata has no feature bounds (trained "
                "before they existed): extrapolation is not detected\n");
    return m;
}
#endif

bool ranking_model_predict(const struct ranking_model *m, const struct conv_problem *p, int threads,
                           double log2_ms[SOLVER_MAX]) {
    float features[FEATURE_COUNT], out[SOLVER_MAX];
    policy_model_input(&m->meta, p, threads, features);
    const size_t scratch_bytes = nn_model_scratch_bytes(m->net);
    void *scratch = malloc(scratch_bytes + sizeof(float));
    if (!scratch)
        return false;
    const float *in[1] = {features};
    float *outs[1] = {out};
    const enum nn_status st = nn_model_predict(m->net, in, outs, scratch, scratch_bytes, NULL, 0);
    free(scratch);
    if (st != NN_OK)
        return false;
    for (int id = 0; id < SOLVER_MAX; id++)
        log2_ms[id] = NAN;
    for (int i = 0; i < m->meta.num_solvers; i++)
        if (m->solver_id[i] >= 0 && isfinite(out[i]))
            log2_ms[m->solver_id[i]] = out[i];
    return true;
}

bool ranking_model_rank(const struct ranking_model *m, const struct conv_problem *p, int threads,
                        bool weights_constant, struct policy_ranking *out) {
    double log2_ms[SOLVER_MAX];
    if (!ranking_model_predict(m, p, threads, log2_ms))
        return false;
    policy_rank(&m->meta, p, threads, weights_constant, log2_ms, out);
    return true;
}

const struct model_metadata *ranking_model_metadata(const struct ranking_model *m) {
    return &m->meta;
}

void ranking_model_status(char *buf, size_t cap) {
    pthread_once(&env_once, read_env);
    if (env.disabled) {
        snprintf(buf, cap, "off (CONVSEL_AI_HEUR=0)");
        return;
    }
    if (!env.dir) {
        snprintf(buf, cap, "none (%s)",
                 env.from_env ? "CONVSEL_MODEL_DIR is empty" : "this build has no default model");
        return;
    }
    const struct cache_entry *e = entry();
    if (e && e->status == CACHE_OK) {
        const struct ranking_model *m = e->value;
        char path[RANKING_MODEL_PATH_MAX];
        ranking_model_path(env.dir, env.target, RANKING_MODEL_NET, path, sizeof path);
        const struct model_metadata *meta = &m->meta;
        snprintf(buf, cap, "%s%s%s%s%s", path,
                 meta->bounds.present ? "" : " (no feature bounds: extrapolation not detected)",
                 meta->limits.present ? "" : " (no machine limits: estimates not floored)",
                 !meta->limits.present || meta->limits.weights.count > 0
                     ? ""
                     : " (no weights transform costs: per-call weights ranked as constant)",
                 !meta->limits.present || meta->envelope.present
                     ? ""
                     : " (no estimate envelope: estimates bounded below only)");
    } else
        snprintf(buf, cap, "not used: %s", e ? e->error : "no cache entry");
}
