/* tunanet.c -- MIOpen's TunaNet (generation 1): per-arch applicability
 * checks, feature vectors, normalization, inference and ranking, following
 * miopen-ai-heuristics.md section 2 step by step. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat/miopen/files.h"

#define MAX_FEATURES 32

struct tn_metadata {
    int num_inputs, num_outputs, num_solvers;
    int n_features;
    char feature[MAX_FEATURES][40];
    float mean[MAX_FEATURES], std[MAX_FEATURES];           /* stats.overall */
    float test_mean[MAX_FEATURES], test_std[MAX_FEATURES]; /* stats.test */
    int dir_f, dir_b, dir_w;                               /* encodings.Direction */
    int prec[3];                                           /* by enum miopen_dtype; -1 absent */
    int layout_nchw, layout_ncdhw;                         /* -1 when absent */
    char solver[MIOPEN_MAX_SOLVERS][64];                   /* output index -> name */
};

/* What differs between the three archs (section 2.2, 2.3). */
struct arch_spec {
    const char *name;
    bool group_one, square_filter, equal_pad, unit_dilation, allow_ncdhw, test_stats;
    int n_features;
};

static const struct arch_spec archs[] = {
    {"gfx908", true, true, true, true, true, false, 24},
    {"gfx90a", false, false, false, false, false, false, 18},
    {"gfx942", false, false, false, false, false, true, 18},
};

/* ---------------------------- metadata ---------------------------- */

static int get_int(const cJSON *o, const char *key, int dflt) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? (int)v->valuedouble : dflt;
}

static bool stat_of(const cJSON *stats, const char *which, const char *moment, const char *name,
                    float *out) {
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(stats, which);
    s = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(s, "features"), moment);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, name);
    if (!cJSON_IsNumber(v))
        return false;
    *out = (float)v->valuedouble;
    return true;
}

static void *build_metadata(const cJSON *root, char *err, size_t cap) {
    struct tn_metadata *md = calloc(1, sizeof *md);
    if (md == NULL)
        return NULL;
    md->num_inputs = get_int(root, "num_inputs", -1);
    md->num_outputs = get_int(root, "num_outputs", -1);
    md->num_solvers = get_int(root, "num_solvers", -1);
    const cJSON *feats = cJSON_GetObjectItemCaseSensitive(root, "conv_params_used_as_features");
    const cJSON *enc = cJSON_GetObjectItemCaseSensitive(root, "encodings");
    const cJSON *stats = cJSON_GetObjectItemCaseSensitive(root, "stats");
    const char *bad = NULL;
    if (md->num_solvers < 1 || md->num_solvers > MIOPEN_MAX_SOLVERS ||
        md->num_outputs < md->num_solvers || md->num_inputs < 1)
        bad = "num_inputs / num_outputs / num_solvers missing or out of range";
    else if (!cJSON_IsArray(feats) || cJSON_GetArraySize(feats) > MAX_FEATURES)
        bad = "conv_params_used_as_features must be a list of at most 32 names";
    else if (!cJSON_IsObject(enc) || !cJSON_IsObject(stats))
        bad = "encodings and stats are required";
    for (const cJSON *f = bad ? NULL : feats->child; f != NULL; f = f->next) {
        const int i = md->n_features++;
        if (!cJSON_IsString(f) || strlen(f->valuestring) >= sizeof md->feature[i]) {
            bad = "a feature name is not a (short) string";
            break;
        }
        strcpy(md->feature[i], f->valuestring);
        if (!stat_of(stats, "overall", "mean", f->valuestring, &md->mean[i]) ||
            !stat_of(stats, "overall", "std", f->valuestring, &md->std[i])) {
            snprintf(err, cap, "stats.overall has no mean/std for feature %s", f->valuestring);
            free(md);
            return NULL;
        }
        if (!stat_of(stats, "test", "mean", f->valuestring, &md->test_mean[i]) ||
            !stat_of(stats, "test", "std", f->valuestring, &md->test_std[i]))
            md->test_mean[i] = NAN; /* only gfx942 needs them: checked there */
    }
    const cJSON *dir = cJSON_GetObjectItemCaseSensitive(enc, "Direction");
    const cJSON *prec = cJSON_GetObjectItemCaseSensitive(enc, "Precision");
    const cJSON *lay = cJSON_GetObjectItemCaseSensitive(enc, "Layout");
    const cJSON *sol = cJSON_GetObjectItemCaseSensitive(enc, "solver");
    if (!bad && (!cJSON_IsObject(dir) || !cJSON_IsObject(prec) || !cJSON_IsObject(lay) ||
                 !cJSON_IsObject(sol)))
        bad = "encodings.Direction, Precision, Layout and solver are required";
    if (!bad) {
        md->dir_f = get_int(dir, "F", -1);
        md->dir_b = get_int(dir, "B", -1);
        md->dir_w = get_int(dir, "W", -1);
        md->prec[MIOPEN_FP32] = get_int(prec, "FP32", -1);
        md->prec[MIOPEN_FP16] = get_int(prec, "FP16", -1);
        md->prec[MIOPEN_BF16] = get_int(prec, "BF16", -1);
        md->layout_nchw = get_int(lay, "NCHW", -1);
        md->layout_ncdhw = get_int(lay, "NCDHW", -1);
        if (md->dir_f < 0 || md->dir_b < 0 || md->dir_w < 0)
            bad = "encodings.Direction needs F, B and W";
        int n = 0;
        for (const cJSON *s = sol->child; !bad && s != NULL; s = s->next, n++) {
            const int idx = cJSON_IsNumber(s) ? (int)s->valuedouble : -1;
            if (idx < 0 || idx >= md->num_solvers || md->solver[idx][0] != '\0' ||
                strlen(s->string) >= sizeof md->solver[idx])
                bad = "encodings.solver must map distinct names to 0..num_solvers-1";
            else
                strcpy(md->solver[idx], s->string);
        }
        if (!bad && n != md->num_solvers)
            bad = "encodings.solver does not have num_solvers entries";
    }
    if (bad) {
        snprintf(err, cap, "%s", bad);
        free(md);
        return NULL;
    }
    return md;
}

/* ---------------------------- the checks ---------------------------- */

static const struct arch_spec *find_arch(const char *arch) {
    for (size_t i = 0; arch && i < sizeof archs / sizeof archs[0]; i++)
        if (strcmp(archs[i].name, arch) == 0)
            return &archs[i];
    return NULL;
}

/* The checks of IsProblemSupported in MIOpen's order; the first that fails
 * is reported. */
static bool supported(const struct arch_spec *a, const struct tn_metadata *md,
                      const struct miopen_problem *p, miopen_solver_applicable_fn applicable,
                      void *ctx, char *msg, size_t cap) {
    const char *layouts = a->allow_ncdhw ? "NCHW or NCDHW" : "NCHW";
    if (a->group_one && p->g != 1)
        snprintf(msg, cap, "%s TunaNet: group count %lld != 1", a->name, (long long)p->g);
    else if (strcmp(p->layout, "NCHW") != 0 && !(a->allow_ncdhw && strcmp(p->layout, "NCDHW") == 0))
        snprintf(msg, cap, "%s TunaNet: layout %s is not %s", a->name, p->layout, layouts);
    else if (a->square_filter && p->fy != p->fx)
        snprintf(msg, cap, "%s TunaNet: filter %lldx%lld is not square", a->name, (long long)p->fy,
                 (long long)p->fx);
    else if (a->equal_pad && p->ph != p->pw)
        snprintf(msg, cap, "%s TunaNet: pad %lldx%lld differs between height and width", a->name,
                 (long long)p->ph, (long long)p->pw);
    else if (p->sh != p->sw)
        snprintf(msg, cap, "%s TunaNet: stride %lldx%lld differs between height and width", a->name,
                 (long long)p->sh, (long long)p->sw);
    else if (a->unit_dilation && (p->dh != 1 || p->dw != 1))
        snprintf(msg, cap, "%s TunaNet: dilation %lldx%lld is not 1x1", a->name, (long long)p->dh,
                 (long long)p->dw);
    else if (!a->unit_dilation && p->dh != p->dw)
        snprintf(msg, cap, "%s TunaNet: dilation %lldx%lld differs between height and width",
                 a->name, (long long)p->dh, (long long)p->dw);
    else if (md->prec[p->dtype] < 0)
        snprintf(msg, cap, "%s TunaNet: the metadata has no encoding for this data type", a->name);
    else {
        if (applicable == NULL)
            return true;
        for (int i = 0; i < md->num_solvers; i++)
            if (applicable(ctx, md->solver[i], p))
                return true;
        snprintf(msg, cap, "%s TunaNet: none of the model's %d solvers is applicable", a->name,
                 md->num_solvers);
    }
    return false;
}

/* ---------------------------- features ---------------------------- */

static void raw_features(const struct arch_spec *a, const struct tn_metadata *md,
                         const struct miopen_problem *p, float *f) {
    const float P = (float)md->prec[p->dtype];
    const float D = (float)(p->direction == MIOPEN_BWD_WEIGHTS ? md->dir_w
                            : p->direction == MIOPEN_BWD_DATA  ? md->dir_b
                                                               : md->dir_f);
    /* The feature orders of section 2.3, one table row per line. */
    const float c = (float)p->c, h = (float)p->h, w = (float)p->w, k = (float)p->k;
    const float ho = (float)p->ho, wo = (float)p->wo, fy = (float)p->fy, fx = (float)p->fx;
    const float ph = (float)p->ph, pw = (float)p->pw, sh = (float)p->sh, sw = (float)p->sw;
    const float dh = (float)p->dh, dw = (float)p->dw, n = (float)p->n, g = (float)p->g;
    if (a->n_features == 24) { /* gfx908: depth entries of a 3-D layout fixed at 1 */
        const float L =
            (float)(strcmp(p->layout, "NCDHW") == 0 ? md->layout_ncdhw : md->layout_nchw);
        // clang-format off
        const float v[24] = {c, 1, h, w, 1, fy, fx, k, 1, ho, wo, n,
                             1, ph, pw, 1, sh, sw, dh, dw, L, P, D, g};
        // clang-format on
        memcpy(f, v, sizeof v);
        return;
    }
    // clang-format off
    const float v[18] = {c, h, w, k, ho, wo, fy, fx, ph, pw, sh, sw, dh, dw, n, P, D, g};
    // clang-format on
    memcpy(f, v, sizeof v);
}

/* ---------------------------- ranking ---------------------------- */

static int by_score(const void *a, const void *b) {
    const struct miopen_ranked_solver *x = a, *y = b;
    if (x->score != y->score)
        return x->score < y->score ? 1 : -1;
    /* MIOpen's std::sort leaves ties unspecified; convsel keeps name order. */
    return strcmp(x->name, y->name);
}

static void free_metadata(void *md) {
    free(md);
}

bool miopen_problem_finish(struct miopen_problem *p) {
    const int64_t eh = p->dh * (p->fy - 1) + 1, ew = p->dw * (p->fx - 1) + 1;
    if (p->sh < 1 || p->sw < 1 || p->h + 2 * p->ph < eh || p->w + 2 * p->pw < ew)
        return false;
    p->ho = (p->h + 2 * p->ph - eh) / p->sh + 1;
    p->wo = (p->w + 2 * p->pw - ew) / p->sw + 1;
    return true;
}

enum miopen_status miopen_tunanet_rank(const char *dir, const char *arch,
                                       const struct miopen_problem *p,
                                       miopen_solver_applicable_fn applicable, void *ctx,
                                       struct miopen_ranked_solver *out, size_t *count, char *msg,
                                       size_t cap) {
    *count = 0;
    if (cap > 0)
        msg[0] = '\0';
    const struct arch_spec *a = find_arch(arch);
    if (a == NULL) {
        snprintf(msg, cap, "unknown arch '%s': TunaNet is defined for gfx908, gfx90a, gfx942",
                 arch ? arch : "(null)");
        return MIOPEN_UNKNOWN_ARCH;
    }
    char file[64];
    snprintf(file, sizeof file, "%s_metadata.tn.model", arch);
    const struct tn_metadata *md = miopen_cached_metadata(dir, file, arch, "tn_metadata", "",
                                                          build_metadata, free_metadata, msg, cap);
    if (md == NULL)
        return MIOPEN_MODEL_ERROR;
    snprintf(file, sizeof file, "%s.tn.model", arch);
    const struct nn_model *m = miopen_cached_model(dir, file, arch, "tunanet", "", msg, cap);
    if (m == NULL)
        return MIOPEN_MODEL_ERROR;
    if (md->n_features != a->n_features || md->num_inputs != a->n_features ||
        nn_shape_volume(nn_model_input_shape(m, 0)) != (size_t)a->n_features ||
        nn_shape_volume(nn_model_output_shape(m, 0)) != (size_t)md->num_outputs) {
        snprintf(msg, cap, "%s TunaNet: model and metadata disagree on the feature or output count",
                 arch);
        return MIOPEN_MODEL_ERROR;
    }
    if (a->test_stats)
        for (int i = 0; i < md->n_features; i++)
            if (isnan(md->test_mean[i])) {
                snprintf(msg, cap, "%s TunaNet: stats.test lacks feature %s", arch, md->feature[i]);
                return MIOPEN_MODEL_ERROR;
            }
    if (!supported(a, md, p, applicable, ctx, msg, cap))
        return MIOPEN_NOT_APPLICABLE;

    float features[MAX_FEATURES], scores[MIOPEN_MAX_SOLVERS * 2 + 64];
    raw_features(a, md, p, features);
    for (int i = 0; i < md->n_features; i++) {
        const float mean = a->test_stats ? md->test_mean[i] : md->mean[i];
        const float sd = a->test_stats ? md->test_std[i] : md->std[i];
        features[i] = (features[i] - mean) / sd;
    }
    if ((size_t)md->num_outputs > sizeof scores / sizeof scores[0]) {
        snprintf(msg, cap, "%s TunaNet: too many outputs", arch);
        return MIOPEN_MODEL_ERROR;
    }
    void *scratch = malloc(nn_model_scratch_bytes(m));
    const float *in[1] = {features};
    float *outs[1] = {scores};
    char err[NN_ERROR_MAX];
    const enum nn_status st =
        scratch ? nn_model_predict(m, in, outs, scratch, nn_model_scratch_bytes(m), err, sizeof err)
                : NN_ERR_NOMEM;
    free(scratch);
    if (st != NN_OK) {
        snprintf(msg, cap, "%s TunaNet: prediction failed", arch);
        return MIOPEN_MODEL_ERROR;
    }
    const int offset = md->num_outputs - md->num_solvers; /* leading outputs are not solvers */
    for (int i = 0; i < md->num_solvers; i++)
        out[i] = (struct miopen_ranked_solver){md->solver[i], scores[offset + i],
                                               miopen_solver_id(md->solver[i])};
    qsort(out, (size_t)md->num_solvers, sizeof *out, by_score);
    *count = (size_t)md->num_solvers;
    return MIOPEN_OK;
}
