/* ktn.c -- MIOpen's Kernel Tuning Net (generation 1): the encoder turns
 * problem features into an LSTM context; the decoder then proposes one
 * perf-config parameter per step, and a solver-supplied validator accepts
 * or rejects each candidate token (miopen-ai-heuristics.md section 3).
 * Also the ConvAsm1x1U features, validator and perf-config string. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "compat/miopen/files.h"

#define MAX_TOKENS 256
#define MAX_PARAM_KEYS 8

struct ktn_metadata {
    int predict_type;
    int n_keys;
    char key[MAX_PARAM_KEYS][96]; /* num_tuning_params keys */
    int count[MAX_PARAM_KEYS];
    int vocab;
    char token[MAX_TOKENS][96]; /* decodings.tunings: index -> value */
};

static void *build_metadata(const cJSON *root, char *err, size_t cap) {
    struct ktn_metadata *md = calloc(1, sizeof *md);
    if (md == NULL)
        return NULL;
    const cJSON *pt = cJSON_GetObjectItemCaseSensitive(root, "predict_type");
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(root, "num_tuning_params");
    const cJSON *tunings = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(root, "decodings"), "tunings");
    const char *bad = NULL;
    if (!cJSON_IsNumber(pt) || (pt->valuedouble != 0 && pt->valuedouble != 1))
        bad = "predict_type must be 0 or 1";
    else if (!cJSON_IsObject(params) || !cJSON_IsObject(tunings))
        bad = "num_tuning_params and decodings.tunings are required";
    for (const cJSON *p = bad ? NULL : params->child; p != NULL; p = p->next) {
        if (md->n_keys == MAX_PARAM_KEYS || strlen(p->string) >= sizeof md->key[0] ||
            !cJSON_IsNumber(p) || p->valuedouble < 1 || p->valuedouble > 64) {
            bad = "num_tuning_params: at most 8 keys, each 1..64";
            break;
        }
        strcpy(md->key[md->n_keys], p->string);
        md->count[md->n_keys++] = (int)p->valuedouble;
    }
    for (const cJSON *t = bad ? NULL : tunings->child; t != NULL; t = t->next) {
        char *end;
        const long idx = strtol(t->string, &end, 10);
        if (*end != '\0' || idx < 0 || idx >= MAX_TOKENS || !cJSON_IsString(t) ||
            strlen(t->valuestring) >= sizeof md->token[0] || md->token[idx][0] != '\0') {
            bad = "decodings.tunings must map distinct indices 0..255 to short strings";
            break;
        }
        strcpy(md->token[idx], t->valuestring);
        if (idx + 1 > md->vocab)
            md->vocab = (int)idx + 1;
    }
    for (int i = 0; !bad && i < md->vocab; i++)
        if (md->token[i][0] == '\0')
            bad = "decodings.tunings has a gap in its indices";
    if (bad) {
        snprintf(err, cap, "%s", bad);
        free(md);
        return NULL;
    }
    md->predict_type = (int)pt->valuedouble;
    return md;
}

static void free_metadata(void *md) {
    free(md);
}

/* num_tuning_params[name], or 0 when absent. */
static int param_count(const struct ktn_metadata *md, const char *name) {
    for (int i = 0; i < md->n_keys; i++)
        if (strcmp(md->key[i], name) == 0)
            return md->count[i];
    return 0;
}

struct scored {
    float score;
    int index;
};

/* Score descending, then index descending (MIOpen's priority queue order). */
static int by_score(const void *a, const void *b) {
    const struct scored *x = a, *y = b;
    if (x->score != y->score)
        return x->score < y->score ? 1 : -1;
    return y->index - x->index;
}

static enum miopen_status predict(const struct nn_model *m, const float *const *in, float **out,
                                  void *scratch, char *msg, size_t cap, const char *what) {
    char err[NN_ERROR_MAX];
    if (nn_model_predict(m, in, out, scratch, nn_model_scratch_bytes(m), err, sizeof err) !=
        NN_OK) {
        snprintf(msg, cap, "KTN %s: %s", what, err);
        return MIOPEN_MODEL_ERROR;
    }
    return MIOPEN_OK;
}

enum miopen_status miopen_ktn_decode(const char *dir, const char *arch, const char *solver,
                                     enum miopen_direction direction, const float *features,
                                     size_t n_features, bool transform,
                                     miopen_ktn_validator_fn validator, void *state, char *msg,
                                     size_t cap) {
    if (cap > 0)
        msg[0] = '\0';
    char file[256];
    snprintf(file, sizeof file, "%s_%s_metadata.ktn.model", arch, solver);
    const struct ktn_metadata *md = miopen_cached_metadata(dir, file, arch, "ktn_metadata", solver,
                                                           build_metadata, free_metadata, msg, cap);
    if (md == NULL)
        return MIOPEN_MODEL_ERROR;
    snprintf(file, sizeof file, "%s_%s_encoder.ktn.model", arch, solver);
    const struct nn_model *enc =
        miopen_cached_model(dir, file, arch, "ktn_encoder", solver, msg, cap);
    if (enc == NULL)
        return MIOPEN_MODEL_ERROR;
    snprintf(file, sizeof file, "%s_%s_decoder.ktn.model", arch, solver);
    const struct nn_model *dec =
        miopen_cached_model(dir, file, arch, "ktn_decoder", solver, msg, cap);
    if (dec == NULL)
        return MIOPEN_MODEL_ERROR;

    /* The encoder input: dim x dim (a diagonal built by the caller) or dim x 1. */
    const size_t dim = transform ? (size_t)llround(sqrt((double)n_features)) : n_features;
    const struct nn_shape *ein = nn_model_input_shape(enc, 0);
    if ((transform && dim * dim != n_features) || nn_model_num_inputs(enc) != 1 || ein->rank != 2 ||
        ein->dims[0] != dim || ein->dims[1] != (transform ? dim : 1) ||
        nn_model_num_outputs(enc) != 4 || nn_model_num_inputs(dec) != 5 ||
        nn_model_num_outputs(dec) != 5 ||
        nn_shape_volume(nn_model_output_shape(dec, 0)) != (size_t)md->vocab) {
        snprintf(msg, cap,
                 "KTN %s/%s: encoder, decoder and metadata do not fit together "
                 "(or %zu features do not fit the encoder)",
                 arch, solver, n_features);
        return MIOPEN_MODEL_ERROR;
    }
    const char *dir_key = direction == MIOPEN_FWD        ? "fwd"
                          : direction == MIOPEN_BWD_DATA ? "bwd"
                                                         : "wrw";

    /* Context: 4 state vectors, fed back from each decoder step. */
    float *buf[10] = {0};
    size_t sizes[10];
    for (int i = 0; i < 4; i++)
        sizes[i] = nn_shape_volume(nn_model_output_shape(enc, (size_t)i));
    for (int i = 0; i < 5; i++)
        sizes[4 + i] = nn_shape_volume(nn_model_output_shape(dec, (size_t)i));
    enum miopen_status st = MIOPEN_MODEL_ERROR;
    const size_t scratch_bytes = nn_model_scratch_bytes(enc) > nn_model_scratch_bytes(dec)
                                     ? nn_model_scratch_bytes(enc)
                                     : nn_model_scratch_bytes(dec);
    void *scratch = malloc(scratch_bytes);
    struct scored *order = malloc((size_t)md->vocab * sizeof *order);
    bool ok = scratch && order;
    for (int i = 0; ok && i < 9; i++)
        ok = (buf[i] = malloc(sizes[i] * sizeof(float))) != NULL;
    if (!ok) {
        snprintf(msg, cap, "KTN: out of memory");
        goto done;
    }
    float **ctx = buf, **dec_out = buf + 4;
    const float *enc_in[1] = {features};
    if ((st = predict(enc, enc_in, ctx, scratch, msg, cap, "encoder")) != MIOPEN_OK)
        goto done;

    float prev = 0.0f; /* the start token */
    int n = 1;
    for (int i = 0; i < n; i++) {
        if (i == 0 && md->predict_type == 0) {
            n = param_count(md, dir_key);
            if (n == 0) { /* MIOpen would run one step and claim success */
                snprintf(msg, cap, "KTN %s/%s: the metadata has no parameter count for '%s'", arch,
                         solver, dir_key);
                st = MIOPEN_NO_PREDICTION;
                goto done;
            }
        }
        const float *dec_in[5] = {&prev, ctx[0], ctx[1], ctx[2], ctx[3]};
        if ((st = predict(dec, dec_in, dec_out, scratch, msg, cap, "decoder")) != MIOPEN_OK)
            goto done;
        for (int t = 0; t < md->vocab; t++)
            order[t] = (struct scored){dec_out[0][t], t};
        qsort(order, (size_t)md->vocab, sizeof *order, by_score);
        int chosen = -1;
        for (int r = 0; r < md->vocab && chosen < 0; r++) {
            const char *value = md->token[order[r].index];
            if (strcmp(value, "-1") == 0) {
                snprintf(msg, cap,
                         "KTN %s/%s: end-of-sequence ranked above every valid token for "
                         "parameter %d",
                         arch, solver, i);
                st = MIOPEN_NO_PREDICTION;
                goto done;
            }
            if (validator(state, i, value)) {
                chosen = order[r].index;
                if (i == 0 && md->predict_type != 0)
                    n = param_count(md, value);
            }
        }
        if (chosen < 0) { /* MIOpen would feed token -1 to the embedding next */
            snprintf(msg, cap, "KTN %s/%s: no token is valid for parameter %d", arch, solver, i);
            st = MIOPEN_NO_PREDICTION;
            goto done;
        }
        prev = (float)chosen;
        for (int c = 0; c < 4; c++) /* the new states become the context */
            memcpy(ctx[c], dec_out[1 + c], sizes[c] * sizeof(float));
    }
    st = MIOPEN_OK;
done:
    for (int i = 0; i < 9; i++)
        free(buf[i]);
    free(order);
    free(scratch);
    return st;
}

/* ---------------------------- ConvAsm1x1U ---------------------------- */

/* The perf config and what its validity depends on. Fields in ToString()
 * order. */
struct asm1x1u {
    int f[8]; /* read_size, k_mult, chunks_per_wave, chunk_size, n_mult, c_mult,
                 waves_c_in_group, waves_k_in_group */
    int eid;  /* elements per dword: 1 for FP32, 2 for FP16/BF16 */
    long img_hw, batch, in_channels, out_channels; /* MIOpen's "in" is y for BwdData */
    bool bwd_data;
};

static bool in_range(int v, int lo, int hi) {
    return v >= lo && v <= hi;
}
static bool pow2_in(int v, int lo, int hi) {
    return v >= lo && v <= hi && (v & (v - 1)) == 0;
}

/* Validity of the first L fields (IsValidImpl with sequence length L). */
static bool asm1x1u_valid(const struct asm1x1u *s, int L) {
    const int read_size = s->f[0], k_mult = s->f[1], cpw = s->f[2], chunk = s->f[3],
              n_mult = s->f[4], c_mult = s->f[5], waves_c = s->f[6], waves_k = s->f[7];
    const int e = s->eid;
    /* value ranges */
    if (L > 0 && !in_range(read_size, 1, 4))
        return false;
    if (L > 1 && !(k_mult == 1 || (k_mult % 4 == 0 && in_range(k_mult / 4, 1, 8))))
        return false;
    if (L > 2 && !in_range(cpw, 1, 16))
        return false;
    if (L > 3 && !pow2_in(chunk, 1, 64))
        return false;
    if (L > 4 && !in_range(n_mult, 1, 8))
        return false;
    if (L > 5 && !pow2_in(c_mult, 1, 32))
        return false;
    if (L > 6 && !in_range(waves_c, 1, 8))
        return false;
    if (L > 7 && !pow2_in(waves_k, 1, 8))
        return false;
    /* constraints from the problem */
    if (L > 1 && (k_mult % e != 0 || (s->bwd_data && s->out_channels % k_mult != 0)))
        return false;
    if (L > 2 && (read_size * e > cpw || cpw % e != 0))
        return false;
    if (L > 3 && cpw > (s->img_hw + chunk - 1) / chunk)
        return false;
    if (L > 4) {
        const long n_per_gpr = 64 / chunk;
        if (n_mult > (s->batch + n_per_gpr - 1) / n_per_gpr)
            return false;
    }
    const long in_gprs = ((long)cpw * n_mult * c_mult + e - 1) / e;
    const long acc_gprs = (long)cpw * n_mult * k_mult;
    const long vgprs = 4 + 2 * in_gprs + acc_gprs + (s->img_hw % e != 0 ? 1 : 0) + 1;
    if (L > 5 && (c_mult % e != 0 || vgprs >= 256 || 25 + 2 * k_mult * c_mult >= 102))
        return false;
    if (L > 6) {
        if (waves_c > s->in_channels)
            return false;
        const long per_wave = (s->in_channels + waves_c - 1) / waves_c;
        const long last = s->in_channels - per_wave * (waves_c - 1);
        if (per_wave % c_mult != 0 || last % c_mult != 0)
            return false;
    }
    if (L > 7 && ((long)k_mult * waves_k > s->out_channels || waves_c * waves_k > 16 ||
                  (256 / vgprs) * 4 < waves_c * waves_k))
        return false;
    return true;
}

static bool asm1x1u_apply(void *state, int index, const char *value) {
    struct asm1x1u *s = state;
    if (index < 0 || index > 7)
        return false;
    char *end;
    const long v = strtol(value, &end, 10);
    if (*end != '\0' || v < -1000000 || v > 1000000)
        return false;
    s->f[index] = (int)v;
    return asm1x1u_valid(s, index + 1);
}

enum miopen_status miopen_ktn_conv_asm_1x1u(const char *dir, const char *arch,
                                            const struct miopen_problem *p, char *config,
                                            size_t config_cap, char *msg, size_t cap) {
    const char *check = NULL;
    const bool fwd = p->direction == MIOPEN_FWD, bwd = p->direction == MIOPEN_BWD_DATA;
    const int eid = p->dtype == MIOPEN_FP32 ? 1 : 2;
    if (strcmp(arch, "gfx908") != 0)
        check = "the ConvAsm1x1U tuning model exists for gfx908 only";
    else if (!fwd && !bwd)
        check = "ConvAsm1x1U runs forward and backward-data convolutions only";
    else if (p->dtype == MIOPEN_BF16)
        check = "ConvAsm1x1U supports FP32 and FP16 only";
    else if (p->fy != 1 || p->fx != 1 || p->ph != 0 || p->pw != 0 || p->dh != 1 || p->dw != 1)
        check = "ConvAsm1x1U needs a 1x1 filter, no padding and no dilation";
    else if (p->g != 1 || strcmp(p->layout, "NCHW") != 0)
        check = "ConvAsm1x1U needs group count 1 and NCHW";
    else if (p->sh != p->sw || p->sw > 2)
        check = "ConvAsm1x1U needs equal strides of at most 2";
    else if (p->sh != 1)
        check = "the ConvAsm1x1U tuning model needs stride 1";
    else if (p->c % eid != 0 || p->k % eid != 0 || p->ho * p->wo < eid)
        check = "ConvAsm1x1U: channels must be multiples of the elements per dword";
    const char *env = getenv("MIOPEN_DEBUG_CONV_DIRECT_ASM_1X1U_AI_HEUR");
    if (!check && env &&
        (strcmp(env, "0") == 0 || strcasecmp(env, "off") == 0 || strcasecmp(env, "false") == 0 ||
         strcasecmp(env, "no") == 0 || strcasecmp(env, "disable") == 0 ||
         strcasecmp(env, "disabled") == 0))
        check = "disabled by MIOPEN_DEBUG_CONV_DIRECT_ASM_1X1U_AI_HEUR";
    if (check) {
        snprintf(msg, cap, "%s", check);
        return strcmp(arch, "gfx908") != 0 && strcmp(arch, "gfx90a") != 0 &&
                       strcmp(arch, "gfx942") != 0
                   ? MIOPEN_UNKNOWN_ARCH
                   : MIOPEN_NOT_APPLICABLE;
    }
    /* MIOpen's "in" tensor is y for backward data; features are forward convention. */
    const long in_h = fwd ? (long)p->h : (long)p->ho, in_w = fwd ? (long)p->w : (long)p->wo;
    float features[64] = {0};
    features[0] = p->dtype == MIOPEN_FP32 ? 2.0f : 1.0f;
    features[(fwd ? 1 : 2) * 9] = 1.0f;
    features[3 * 9] = (float)p->c;
    features[4 * 9] = (float)p->k;
    features[5 * 9] = (float)in_h;
    features[6 * 9] = (float)in_w;
    features[7 * 9] = (float)p->n;
    /* MIOpen's starting config (optimized search): k_mult 8, chunk_size 16. */
    struct asm1x1u s = {.f = {1, 8, 1, 16, 1, 1, 1, 1},
                        .eid = eid,
                        .img_hw = fwd ? (long)(p->ho * p->wo) : (long)(p->h * p->w),
                        .batch = (long)p->n,
                        .in_channels = fwd ? (long)p->c : (long)p->k,
                        .out_channels = fwd ? (long)p->k : (long)p->c,
                        .bwd_data = bwd};
    const enum miopen_status st = miopen_ktn_decode(
        dir, arch, "ConvAsm1x1U", p->direction, features, 64, true, asm1x1u_apply, &s, msg, cap);
    if (st == MIOPEN_OK)
        snprintf(config, config_cap, "%d,%d,%d,%d,%d,%d,%d,%d", s.f[0], s.f[1], s.f[2], s.f[3],
                 s.f[4], s.f[5], s.f[6], s.f[7]);
    return st;
}
