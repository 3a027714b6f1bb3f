/* test_features.c -- the model's features of known problems, their
 * statistics and normalization, and the metadata: a round trip, and every
 * malformed or mismatched file refused with a message naming the key. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heur/features.h"
#include "testutil.h"

static bool near(float a, double b) {
    return fabs((double)a - b) < 1e-5;
}

static void known_problem(void) {
    struct conv_problem p = {.n = 4,
                             .c = 64,
                             .h = 56,
                             .w = 28,
                             .k = 128,
                             .r = 3,
                             .s = 5,
                             .pad_h = 1,
                             .pad_w = 2,
                             .stride_h = 2,
                             .stride_w = 2,
                             .dil_h = 1,
                             .dil_w = 1,
                             .groups = 1};
    char err[PROBLEM_ERROR_MAX];
    CHECK(problem_validate(&p, err, sizeof err) == CONVSEL_STATUS_SUCCESS);
    float f[FEATURE_COUNT];
    features_of(&p, 2, 8, f);
    CHECK(near(f[0], 2) && near(f[1], 6) && near(f[2], log2(56)) && near(f[3], log2(28)));
    CHECK(near(f[4], 7) && near(f[5], log2(28)) && near(f[6], log2(14)));
    CHECK(near(f[7], 3) && near(f[8], 5) && near(f[9], 1) && near(f[10], 2));
    CHECK(near(f[11], 2) && near(f[12], 2) && near(f[13], 1) && near(f[14], 1));
    CHECK(near(f[15], 0) && near(f[16], 0) && near(f[17], 0) && near(f[18], 1));
    /* 2 * n * k * oh * ow * c * r * s FLOP; k * c * r * s weights */
    CHECK(near(f[19], log2(2.0 * 4 * 128 * 28 * 14 * 64 * 3 * 5)));
    CHECK(near(f[20], log2(128.0 * 64 * 3 * 5)));
    CHECK(near(f[21], 1) && near(f[22], 1));   /* 64 and 128 channels: whole blocks of 8 */
    CHECK(near(f[23], 28.0 * 14 / (28 * 16))); /* 28 x 14 outputs in 7 x 4 tiles of 4 x 4 */
    CHECK(strcmp(feature_names[23], "tile_fill") == 0);
    features_of(&p, 2, 16, f);
    CHECK(near(f[21], 1) && near(f[22], 1)); /* and of 16 */
    p.c = 17, p.k = 40;                      /* 40 is whole blocks of 8, not of 16 */
    problem_set_packed_strides(&p);
    CHECK(problem_validate(&p, err, sizeof err) == CONVSEL_STATUS_SUCCESS);
    features_of(&p, 2, 8, f);
    CHECK(near(f[21], 0) && near(f[22], 1));
    features_of(&p, 2, 16, f);
    CHECK(near(f[21], 0) && near(f[22], 0));
    features_of(&p, 2, 0, f); /* no block given: 8 */
    CHECK(near(f[21], 0) && near(f[22], 1));
    /* ShuffleNet-V2's 122 channels against 120: what the feature is for */
    struct conv_problem dw = p;
    dw.c = dw.k = dw.groups = 122;
    problem_set_packed_strides(&dw);
    CHECK(problem_validate(&dw, err, sizeof err) == CONVSEL_STATUS_SUCCESS);
    features_of(&dw, 2, 8, f);
    CHECK(near(f[16], 1) && near(f[21], 0) && near(f[22], 0));
    dw.c = dw.k = dw.groups = 120;
    problem_set_packed_strides(&dw);
    CHECK(problem_validate(&dw, err, sizeof err) == CONVSEL_STATUS_SUCCESS);
    features_of(&dw, 2, 8, f);
    CHECK(near(f[21], 1) && near(f[22], 1));
    features_of(&dw, 2, 16, f);
    CHECK(near(f[21], 0) && near(f[22], 0));
    CHECK(features_channel_block("avx512") == 16 && features_channel_block("avx512-2c-2t") == 16);
    CHECK(features_channel_block("avx2") == 8 && features_channel_block("avx2-2c-2t") == 8);
    CHECK(features_channel_block("generic") == 8 && features_channel_block("avx512x") == 8 &&
          features_channel_block("") == 8 && features_channel_block(NULL) == 8);
    struct conv_problem line = p; /* a 1-D layer: one output row of a 4-row tile */
    line.h = 1, line.r = 1, line.pad_h = 0, line.stride_h = 1;
    problem_set_packed_strides(&line);
    CHECK(problem_validate(&line, err, sizeof err) == CONVSEL_STATUS_SUCCESS);
    features_of(&line, 2, 8, f);
    CHECK(near(f[23], 1.0 * 14 / (4 * 16)) && near(f[5], 0)); /* 1 of 4 rows, 14 of 16 columns */
    CHECK(strcmp(feature_names[21], "in_aligned") == 0 &&
          strcmp(feature_names[22], "out_aligned") == 0);
    p.c = 64, p.k = 128;
    p.groups = 64, p.k = 64, p.layout = CONVSEL_LAYOUT_NHWC;
    problem_set_packed_strides(&p);
    CHECK(problem_validate(&p, err, sizeof err) == CONVSEL_STATUS_SUCCESS);
    features_of(&p, 1, 8, f);
    CHECK(near(f[15], 6) && near(f[16], 1) && near(f[17], 1) && near(f[18], 0));
    CHECK(near(f[19], log2(2.0 * 4 * 64 * 28 * 14 * 1 * 3 * 5)) && near(f[20], log2(64.0 * 15)));
    CHECK(strcmp(feature_names[16], "depthwise") == 0);
}

static void stats(void) {
    float rows[3 * FEATURE_COUNT];
    for (int i = 0; i < 3; i++)
        for (int f = 0; f < FEATURE_COUNT; f++)
            rows[i * FEATURE_COUNT + f] = f == 0 ? (float)(i + 1) : 7.0f; /* 1,2,3 then constant */
    struct feature_stats s;
    feature_stats_compute(rows, 3, &s);
    CHECK(near(s.mean[0], 2) && near(s.std[0], sqrt(2.0 / 3.0)));
    CHECK(near(s.mean[5], 7) && near(s.std[5], 1)); /* constant: std 1, no division by 0 */
    float x[FEATURE_COUNT];
    memcpy(x, &rows[2 * FEATURE_COUNT], sizeof x);
    features_normalize(x, &s);
    CHECK(near(x[0], 1 / sqrt(2.0 / 3.0)) && near(x[5], 0));
}

static struct model_metadata sample(void) {
    struct model_metadata m = {.num_solvers = 3};
    for (int f = 0; f < FEATURE_COUNT; f++)
        m.stats.mean[f] = (float)f * 0.5f, m.stats.std[f] = 1.0f + (float)f;
    snprintf(m.solver_names[0], METADATA_NAME_MAX, "im2col_gemm");
    snprintf(m.solver_names[1], METADATA_NAME_MAX, "depthwise");
    snprintf(m.solver_names[2], METADATA_NAME_MAX, "onednn_direct");
    snprintf(m.target, METADATA_NAME_MAX, "avx512-2c-2t");
    return m;
}

/* Edits the sample's JSON (replacing `from` by `to`) and expects a refusal naming `why`. */
static void refused(const char *from, const char *to, const char *why) {
    const struct model_metadata m = sample();
    char *json = metadata_to_json(&m);
    static char edited[1 << 14];
    const char *at = json ? strstr(json, from) : NULL;
    CHECK(at != NULL);
    if (!at) {
        fprintf(stderr, "  '%s' not in the metadata\n", from);
        free(json);
        return;
    }
    snprintf(edited, sizeof edited, "%.*s%s%s", (int)(at - json), json, to, at + strlen(from));
    free(json);
    struct model_metadata back;
    char err[METADATA_ERROR_MAX] = "";
    CHECK(!metadata_from_json(edited, strlen(edited), &back, err, sizeof err));
    CHECK(test_contains(err, why));
}

static void metadata(void) {
    const struct model_metadata m = sample();
    char *json = metadata_to_json(&m);
    CHECK(json != NULL);
    struct model_metadata back;
    char err[METADATA_ERROR_MAX] = "";
    CHECK(json && metadata_from_json(json, strlen(json), &back, err, sizeof err));
    CHECK(back.num_solvers == 3 && strcmp(back.solver_names[1], "depthwise") == 0);
    CHECK(strcmp(back.target, "avx512-2c-2t") == 0);
    CHECK(back.channel_block == 16); /* from the target: AVX-512's blocks of 16 channels */
    CHECK(memcmp(&back.stats, &m.stats, sizeof m.stats) == 0);
    CHECK(json && strstr(json, "\"conv_params_used_as_features\"") &&
          strstr(json, "\"num_inputs\""));
    free(json);

    refused("\"log2_in_h\"", "\"log2_in_height\"", "another feature layout");
    refused("\"log2_batch\",", "", "another feature layout"); /* one feature fewer */
    refused("\"depthwise\":\t1", "\"depthwise\":\t5", "index must be unique");
    refused("\"num_outputs\":\t3", "\"num_outputs\":\t4", "num_outputs 3");
    refused("\"num_solvers\":\t3", "\"num_solvers\":\t0", "num_solvers must be");
    refused("\"target\":\t\"avx512-2c-2t\"", "\"target\":\t7", "target must be");
    refused("\"std\":\t{\n\t\t\t\t\t\"log2_batch\":\t1",
            "\"std\":\t{\n\t\t\t\t\t\"log2_batch\":\t0", "std must be");
    refused("\"mean\":\t{\n\t\t\t\t\t\"log2_batch\":\t0",
            "\"mean\":\t{\n\t\t\t\t\t\"log2_batch\":\t\"0\"", "not a number");
    CHECK(!metadata_from_json("{", 1, &back, err, sizeof err));
    CHECK(!metadata_from_json("[1]", 3, &back, err, sizeof err) &&
          test_contains(err, "not a JSON object"));
}

/* One edit of a metadata file that must be refused: `from` replaced by
 * `to`, and the message naming `why`. */
struct edit {
    const char *from, *to, *why;
};

static void refused_edits(const char *json, const struct edit *cases, size_t n) {
    static char edited[1 << 15];
    struct model_metadata back;
    char err[METADATA_ERROR_MAX];
    for (size_t i = 0; i < n; i++) {
        const char *at = json ? strstr(json, cases[i].from) : NULL;
        CHECK(at != NULL);
        if (!at) {
            fprintf(stderr, "  '%s' not in the metadata\n", cases[i].from);
            continue;
        }
        snprintf(edited, sizeof edited, "%.*s%s%s", (int)(at - json), json, cases[i].to,
                 at + strlen(cases[i].from));
        err[0] = '\0';
        CHECK(!metadata_from_json(edited, strlen(edited), &back, err, sizeof err));
        CHECK(test_contains(err, cases[i].why));
        if (!test_contains(err, cases[i].why))
            fprintf(stderr, "  got: %s\n", err);
    }
}

/* The optional keys: bounds, limits and safe survive a round trip, are
 * absent (present = false, counts 0) when not written, and are refused,
 * by name, when incomplete or out of range. */
static void optional_keys(void) {
    struct model_metadata m = sample();
    char *json = metadata_to_json(&m);
    struct model_metadata back;
    char err[METADATA_ERROR_MAX] = "";
    CHECK(json && metadata_from_json(json, strlen(json), &back, err, sizeof err));
    CHECK(!back.bounds.present && !back.limits.present);
    CHECK(back.safe_count[0] == 0 && back.safe_count[1] == 0 && back.safe_count[2] == 0);
    CHECK(json && !strstr(json, "\"bounds\"") && !strstr(json, "\"limits\"") &&
          !strstr(json, "\"safe\""));
    free(json);

    m.bounds.present = true;
    for (int f = 0; f < FEATURE_COUNT; f++)
        m.bounds.min[f] = -1.5f * (float)f - 0.5f, m.bounds.max[f] = 2.25f * (float)f + 1;
    m.limits = (struct machine_limits){.present = true, .peak_gflops = 417.5, .levels = 2};
    m.limits.level_bytes[0] = 16384, m.limits.level_gbs[0] = 900.25;
    m.limits.level_bytes[1] = 268435456, m.limits.level_gbs[1] = 21.5;
    m.limits.weights = (struct weights_costs){
        .count = 2, .solver = {"onednn_winograd", "gemm_1x1"}, .ns = {{-1, 9.75}, {0.5, -1}}};
    m.safe_count[0] = 2, m.safe[0][0] = 2, m.safe[0][1] = 0;
    m.safe_count[2] = 1, m.safe[2][0] = 1;
    json = metadata_to_json(&m);
    CHECK(json && metadata_from_json(json, strlen(json), &back, err, sizeof err));
    CHECK(back.bounds.present && memcmp(&back.bounds, &m.bounds, sizeof m.bounds) == 0);
    CHECK(back.limits.present && back.limits.levels == 2 && back.limits.peak_gflops == 417.5 &&
          back.limits.level_bytes[1] == 268435456 && back.limits.level_gbs[0] == 900.25);
    CHECK(back.limits.weights.count == 2 &&
          strcmp(back.limits.weights.solver[1], "gemm_1x1") == 0 &&
          back.limits.weights.ns[0][0] == -1 && back.limits.weights.ns[0][1] == 9.75 &&
          back.limits.weights.ns[1][0] == 0.5 && back.limits.weights.ns[1][1] == -1);
    CHECK(back.safe_count[0] == 2 && back.safe[0][0] == 2 && back.safe[0][1] == 0);
    CHECK(back.safe_count[1] == 0 && back.safe_count[2] == 1 && back.safe[2][0] == 1);
    CHECK(json && strstr(json, "\"dense\":\t[\"onednn_direct\", \"im2col_gemm\"]"));

    /* each refusal, from the file just written */
    const struct edit cases[] = {
        {"\"peak_gflops\":\t417.5", "\"peak_gflops\":\t-1", "limits.peak_gflops"},
        {"\"peak_gflops\":\t417.5", "\"peak_gflops\":\t\"fast\"", "limits.peak_gflops"},
        {"\"gbs\":\t21.5", "\"gbs\":\t0", "limits.bandwidth[1]"},
        {"\"bytes\":\t268435456", "\"bytes\":\t100", "bytes increasing"},
        {"\"bandwidth\":\t[", "\"bandwidth\":\t7, \"x\": [", "limits.bandwidth must be"},
        {"\"onednn_direct\", \"im2col_gemm\"]", "\"winograd\"]", "safe.dense names winograd"},
        {"\"spatial_ns\":\t9.75", "\"spatial_ns\":\t-3", "limits.weights_transform[0]"},
        {"\"pointwise_ns\":\t0.5", "\"pointwise_ns\":\t\"x\"", "limits.weights_transform[1]"},
        {"\"solver\":\t\"gemm_1x1\"", "\"solver\":\t\"\"", "limits.weights_transform[1]"},
        {"\"weights_transform\":\t[", "\"weights_transform\":\t3, \"y\": [",
         "limits.weights_transform must be"},
        {"\"depthwise\":\t[\"depthwise\"]", "\"depthwise\":\t\"depthwise\"",
         "safe.depthwise must be a list"},
        {"\"max\":\t{\n\t\t\t\"log2_batch\":\t1", "\"max\":\t{\n\t\t\t\"log2_batch\":\t-9",
         "bounds.{min,max}.log2_batch"},
        {"\"min\":\t{\n\t\t\t\"log2_batch\":\t-0.5,", "\"min\":\t{\n\t\t\t",
         "bounds.{min,max}.log2_batch"},
    };
    refused_edits(json, cases, sizeof cases / sizeof *cases);
    free(json);
}

/* Bounds per kind and safe lists per class: round trip; absent kinds and
 * classes stay absent (metadata from before them reads as it did);
 * refused by name when malformed. */
static void kinds_and_classes(void) {
    struct model_metadata m = sample();
    m.bounds.present = true;
    for (int f = 0; f < FEATURE_COUNT; f++)
        m.bounds.min[f] = -2.0f * (float)f - 1, m.bounds.max[f] = 3.0f * (float)f + 2;
    m.kind_bounds[2] = m.bounds;
    m.kind_bounds[2].max[3] = 1.25f;
    m.safe_count[0] = 1, m.safe[0][0] = 0;
    m.safe_count[2] = 1, m.safe[2][0] = 1;
    char err[METADATA_ERROR_MAX] = "";
    struct model_metadata back;
    char *json = metadata_to_json(&m);
    /* no 1x1 lists: the file is as before them */
    CHECK(json && strstr(json, "\"bounds_by_kind\"") && !strstr(json, "_1x1"));
    CHECK(json && metadata_from_json(json, strlen(json), &back, err, sizeof err));
    CHECK(!back.kind_bounds[0].present && !back.kind_bounds[1].present);
    CHECK(memcmp(&back.kind_bounds[2], &m.kind_bounds[2], sizeof m.kind_bounds[2]) == 0);
    CHECK(back.safe_count[3] == 0 && back.safe_count[4] == 0 && back.safe_count[5] == 0);
    free(json);
    m.safe_count[3] = 2, m.safe[3][0] = 2, m.safe[3][1] = 1; /* dense_1x1 */
    json = metadata_to_json(&m);
    CHECK(json && strstr(json, "\"dense_1x1\"") && !strstr(json, "\"grouped_1x1\""));
    CHECK(json && metadata_from_json(json, strlen(json), &back, err, sizeof err));
    CHECK(back.safe_count[3] == 2 && back.safe[3][0] == 2 && back.safe[3][1] == 1 &&
          back.safe_count[4] == 0);
    const struct edit cases[] = {
        {"\"dense_1x1\":\t[", "\"dense_1x1\":\t[\"fft\", ", "safe.dense_1x1 names fft"},
        {"\"dense_1x1\":\t[", "\"dense_1x1\":\t7, \"x\": [", "safe.dense_1x1 must be a list"},
        {"\"bounds_by_kind\":\t{", "\"bounds_by_kind\":\t3, \"y\": {",
         "bounds_by_kind must be an object"},
        {"\"bounds\":\t{", "\"no_bounds\":\t{", "bounds_by_kind must be an object beside bounds"},
        {"\"log2_in_w\":\t1.25", "\"log2_in_w\":\t-100",
         "bounds_by_kind.depthwise.{min,max}.log2_in_w"},
    };
    refused_edits(json, cases, sizeof cases / sizeof *cases);
    free(json);
}

/* The envelope: absent unless written, a round trip keeps every bin of
 * every solver (read by registry id), and it is refused by name when
 * without limits, of the wrong length, out of order or naming a solver
 * the model does not have. */
static void envelope(void) {
    struct model_metadata m = sample();
    m.limits = (struct machine_limits){.present = true, .peak_gflops = 400, .levels = 1};
    m.limits.level_bytes[0] = 16384, m.limits.level_gbs[0] = 900;
    char err[METADATA_ERROR_MAX] = "";
    struct model_metadata back;
    char *json = metadata_to_json(&m);
    CHECK(json && !strstr(json, "\"envelope\""));
    CHECK(json && metadata_from_json(json, strlen(json), &back, err, sizeof err));
    CHECK(!back.envelope.present);
    free(json);
    struct estimate_envelope *e = &m.envelope;
    e->present = true, e->log2_min = -20, e->width = 1.5f, e->bins = 3;
    const int im = solver_find("im2col_gemm"), od = solver_find("onednn_direct");
    e->has[im] = e->has[od] = true;
    for (int b = 0; b < 3; b++) {
        e->lo[im][b] = 0.25f * (float)b, e->hi[im][b] = 2.5f + (float)b;
        e->lo[od][b] = -0.5f, e->hi[od][b] = 7.75f - (float)b;
    }
    json = metadata_to_json(&m);
    CHECK(json && metadata_from_json(json, strlen(json), &back, err, sizeof err));
    CHECK(back.envelope.present && back.envelope.bins == 3 && back.envelope.log2_min == -20 &&
          back.envelope.width == 1.5f);
    for (int id = 0; id < SOLVER_MAX; id++)
        CHECK(back.envelope.has[id] == (id == im || id == od));
    for (int b = 0; b < 3; b++)
        CHECK(back.envelope.lo[im][b] == e->lo[im][b] && back.envelope.hi[im][b] == e->hi[im][b] &&
              back.envelope.lo[od][b] == e->lo[od][b] && back.envelope.hi[od][b] == e->hi[od][b]);
    const struct edit cases[] = {
        {"\"limits\":\t{", "\"no_limits\":\t{", "envelope needs limits"},
        {"\"bins\":\t3", "\"bins\":\t2.5", "bins in 1..48"},
        {"\"bins\":\t3", "\"bins\":\t49", "bins in 1..48"},
        {"\"bin_width\":\t1.5", "\"bin_width\":\t0", "bin_width > 0"},
        {"\"hi\":\t[2.5, ", "\"hi\":\t[",
         "envelope.solvers.im2col_gemm: lo and hi must be arrays of 3"},
        {"\"hi\":\t[2.5, ", "\"hi\":\t[-1, ", "envelope.solvers.im2col_gemm bin 0"},
        {"\"lo\":\t[0, ", "\"lo\":\t[\"x\", ", "envelope.solvers.im2col_gemm bin 0"},
        {"\"im2col_gemm\":\t{\n\t\t\t\t\"lo\"", "\"fft\":\t{\n\t\t\t\t\"lo\"",
         "envelope.solvers.fft: not one of the solvers"},
    };
    refused_edits(json, cases, sizeof cases / sizeof *cases);
    free(json);
}

int main(void) {
    known_problem();
    envelope();
    stats();
    metadata();
    optional_keys();
    kinds_and_classes();
    return test_finish("test_features");
}
