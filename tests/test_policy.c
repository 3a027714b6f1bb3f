/* test_policy.c -- heur/policy.c: the machine's floor under every estimate,
 * extrapolation outside the training bounds, the safe pick there, and the
 * unsure margin; each against a hand-computed expectation. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "heur/policy.h"
#include "heur/select.h"
#include "testutil.h"

static struct conv_problem problem(int64_t c, int64_t h, int64_t k, int64_t r, int64_t groups) {
    struct conv_problem p = {.n = 1,
                             .c = c,
                             .h = h,
                             .w = h,
                             .k = k,
                             .r = r,
                             .s = r,
                             .pad_h = r / 2,
                             .pad_w = r / 2,
                             .stride_h = 1,
                             .stride_w = 1,
                             .dil_h = 1,
                             .dil_w = 1,
                             .groups = groups};
    char err[PROBLEM_ERROR_MAX];
    CHECK(problem_validate(&p, err, sizeof err) == CONVSEL_STATUS_SUCCESS);
    return p;
}

/* Metadata naming every registered solver, model output i = registry id i. */
static struct model_metadata meta_all(void) {
    struct model_metadata m = {.num_solvers = solver_count()};
    for (int i = 0; i < solver_count(); i++)
        snprintf(m.solver_names[i], METADATA_NAME_MAX, "%s", solver_get(i)->name);
    return m;
}

static void all_nan(double l[SOLVER_MAX]) {
    for (int i = 0; i < SOLVER_MAX; i++)
        l[i] = NAN;
}

static void floor_by_limits(void) {
    const struct conv_problem p = problem(64, 56, 64, 3, 1);
    const struct solver *direct = solver_get(solver_find("onednn_direct"));
    const struct solver *wino = solver_get(solver_find("winograd_f4x3"));
    struct machine_limits l = {.present = true, .peak_gflops = 100, .levels = 2};
    l.level_bytes[0] = 1 << 14, l.level_gbs[0] = 1000;
    l.level_bytes[1] = 1 << 20, l.level_gbs[1] = 10;
    /* 2*64*56*56*64*9 = 231 MFLOP at 100 GFLOP/s: 2.31 ms; the bytes
     * (x 200704 + w 36864 + y 200704 floats: 1.75 MB) at level 1's 10 GB/s: 0.175 ms */
    const double flops = problem_flops(&p);
    CHECK(fabs(policy_floor_ms(&l, &p, direct) - flops / 1e8) < 1e-9);
    CHECK(fabs(policy_floor_ms(&l, &p, wino) - 0.25 * flops / 1e8) < 1e-9); /* work_fraction */
    l.peak_gflops = 1e6;                                                    /* now memory bound */
    const double bytes = 4.0 * (64 * 56 * 56 + 64 * 64 * 9 + 64 * 56 * 56);
    CHECK(fabs(policy_floor_ms(&l, &p, direct) - 1e3 * bytes / 10e9) < 1e-9);
    l.level_bytes[1] = 1e9; /* the tensors do not fill level 1: level 0's bandwidth */
    CHECK(fabs(policy_floor_ms(&l, &p, direct) - 1e3 * bytes / 1000e9) < 1e-9);
    l.present = false;
    CHECK(policy_floor_ms(&l, &p, direct) == 0);
    CHECK(policy_floor_ms(NULL, &p, direct) == 0);

    /* policy_rank: an estimate below the floor is raised to it, and the
     * order is that of the floored estimates */
    struct model_metadata m = meta_all();
    m.limits = (struct machine_limits){.present = true, .peak_gflops = 1000, .levels = 1};
    m.limits.level_bytes[0] = 1 << 14, m.limits.level_gbs[0] = 1e6;
    const double floor = flops / 1e9; /* ms at 1000 GFLOP/s: 0.231 */
    double l2[SOLVER_MAX];
    all_nan(l2);
    const int od = solver_find("onednn_direct"), im = solver_find("im2col_gemm"),
              wf = solver_find("winograd_f4x3");
    l2[od] = log2(0.01); /* claims 0.01 ms: 23x below what the machine can do */
    l2[im] = log2(2.0);
    struct policy_ranking r;
    policy_rank(&m, &p, 2, true, l2, &r);
    CHECK(r.n == 2 && r.order[0] == od && r.order[1] == im);
    CHECK(fabs(r.ms[od] - floor) < 1e-9 && fabs(r.ms[im] - 2.0) < 1e-9);
    l2[wf] = log2(0.1); /* slower than direct's claim, but Winograd's floor is a quarter */
    policy_rank(&m, &p, 2, true, l2, &r);
    CHECK(r.n == 3 && r.order[0] == wf && r.order[1] == od && r.order[2] == im);
    CHECK(fabs(r.ms[wf] - 0.1) < 1e-9);
    m.limits.present = false; /* no limits: the model's own numbers */
    policy_rank(&m, &p, 2, true, l2, &r);
    CHECK(r.order[0] == od && fabs(r.ms[od] - 0.01) < 1e-9);
    CHECK(!r.extrapolating && r.feature == -1); /* no bounds: not detected */
}

static void extrapolation_and_safe_pick(void) {
    const struct conv_problem p = problem(64, 56, 64, 3, 1);
    struct model_metadata m = meta_all();
    float f[FEATURE_COUNT];
    features_of(&p, 2, m.channel_block, f);
    m.bounds.present = true;
    for (int i = 0; i < FEATURE_COUNT; i++)
        m.bounds.min[i] = f[i] - 1, m.bounds.max[i] = f[i] + 1;
    const int od = solver_find("onednn_direct"), og = solver_find("onednn_gemm"),
              dw = solver_find("depthwise"), im = solver_find("im2col_gemm");
    double l2[SOLVER_MAX];
    all_nan(l2);
    l2[od] = 0, l2[og] = 2, l2[im] = 3, l2[dw] = -5; /* depthwise: not applicable here */
    m.safe_count[0] = 2;
    m.safe[0][0] = dw; /* the first safe solver does not apply: the next one goes first */
    m.safe[0][1] = og;
    struct policy_ranking r;
    policy_rank(&m, &p, 2, true, l2, &r);
    CHECK(!r.extrapolating && r.feature == -1 && r.n == 3 && r.order[0] == od);
    CHECK(!r.unsure); /* 1 ms against 4 ms */
    for (int i = 0; i < SOLVER_MAX; i++)
        CHECK(i == od || i == og || i == im ? r.ms[i] > 0 : r.ms[i] < 0);

    m.bounds.max[2] = f[2] - 0.5f; /* log2_in_h now above the bound */
    policy_rank(&m, &p, 2, true, l2, &r);
    CHECK(r.extrapolating && r.feature == 2 && fabsf(r.value - f[2]) < 1e-6f);
    CHECK(r.unsure);
    CHECK(r.n == 3 && r.order[0] == og && r.order[1] == od && r.order[2] == im);
    m.bounds.max[2] = f[2] + 1e-6f; /* float rounding is not extrapolation */
    m.bounds.min[2] = f[2] + 1e-6f;
    policy_rank(&m, &p, 2, true, l2, &r);
    CHECK(!r.extrapolating);
    m.bounds.min[2] = f[2] + 0.5f; /* below the bound */
    m.safe_count[0] = 0;           /* no safe list: the model's order stays */
    policy_rank(&m, &p, 2, true, l2, &r);
    CHECK(r.extrapolating && r.feature == 2 && r.order[0] == od);

    /* only the scale outside the range (a larger batch of a trained shape,
     * or a layer smaller than any trained): extrapolating and unsure, but
     * the model's order stays; a shape feature outside too takes the safe
     * pick */
    m.safe_count[0] = 2;
    for (int i = 0; i < FEATURE_COUNT; i++)
        m.bounds.min[i] = f[i] - 1, m.bounds.max[i] = f[i] + 1;
    int batch = -1, flop = -1;
    for (int i = 0; i < FEATURE_COUNT; i++) {
        batch = strcmp(feature_names[i], "log2_batch") == 0 ? i : batch;
        flop = strcmp(feature_names[i], "log2_flop") == 0 ? i : flop;
    }
    CHECK(batch >= 0 && flop >= 0);
    m.bounds.max[batch] = f[batch] - 2, m.bounds.max[flop] = f[flop] - 2;
    policy_rank(&m, &p, 2, true, l2, &r);
    CHECK(r.extrapolating && r.scale_only && r.unsure && r.order[0] == od);
    m.bounds.max[2] = f[2] - 0.5f; /* and a shape feature outside */
    policy_rank(&m, &p, 2, true, l2, &r);
    CHECK(r.extrapolating && !r.scale_only && r.order[0] == og);
    m.bounds.max[2] = f[2] + 1;
    m.bounds.max[batch] = f[batch] + 1, m.bounds.max[flop] = f[flop] + 1;
    m.bounds.min[flop] = f[flop] + 0.5f; /* less work than any trained */
    policy_rank(&m, &p, 2, true, l2, &r);
    CHECK(r.extrapolating && r.scale_only && r.order[0] == od);
    m.bounds.min[2] = f[2] + 0.5f; /* and smaller in a shape feature */
    policy_rank(&m, &p, 2, true, l2, &r);
    CHECK(r.extrapolating && !r.scale_only && r.order[0] == og);
    m.bounds.min[2] = f[2] - 1, m.bounds.min[flop] = f[flop] - 1;

    /* the bounds of the problem's kind, where the metadata has them: a
     * depthwise layer of a filter no depthwise layer had extrapolates
     * though dense layers had it; a kind without them takes the global ones */
    m.kind_bounds[0] = m.bounds;
    m.kind_bounds[0].max[7] = f[7] - 0.5f; /* fil_h */
    policy_rank(&m, &p, 2, true, l2, &r);
    CHECK(r.extrapolating && r.feature == 7 && r.order[0] == og);
    m.kind_bounds[0].present = false;
    policy_rank(&m, &p, 2, true, l2, &r);
    CHECK(!r.extrapolating && r.order[0] == od);
    m.kind_bounds[2] = m.bounds; /* another kind's bounds do not count */
    m.kind_bounds[2].max[7] = f[7] - 0.5f;
    policy_rank(&m, &p, 2, true, l2, &r);
    CHECK(!r.extrapolating);
    memset(m.kind_bounds, 0, sizeof m.kind_bounds);

    /* the kind decides the list: a depthwise problem takes the depthwise one */
    const struct conv_problem d = problem(32, 28, 32, 3, 32);
    CHECK(policy_kind(&d) == 2 && policy_kind(&p) == 0);
    const struct conv_problem g = problem(32, 28, 32, 3, 4);
    CHECK(policy_kind(&g) == 1);
    struct model_metadata md = meta_all();
    md.bounds.present = true; /* every bound 0..0: everything extrapolates */
    md.safe_count[2] = 1, md.safe[2][0] = dw;
    md.safe_count[0] = 1, md.safe[0][0] = og;
    all_nan(l2);
    l2[od] = 0, l2[dw] = 4;
    policy_rank(&md, &d, 2, true, l2, &r);
    CHECK(r.extrapolating && r.order[0] == dw);
    /* one channel in and out, outside the bounds: the rules' pick (the
     * depthwise solver) goes first, whatever the class's list says: the
     * dense list put WaveRNN's 1x11 layers on oneDNN's GEMM at 13.6-27x */
    const struct conv_problem one_ch = problem(1, 28, 1, 3, 1);
    CHECK(policy_kind(&one_ch) == 0 && heur_rules_solver(&one_ch) == dw);
    all_nan(l2);
    l2[og] = 0, l2[od] = 1, l2[dw] = 4;
    policy_rank(&md, &one_ch, 2, true, l2, &r);
    CHECK(r.extrapolating && r.order[0] == dw && r.order[1] == og);
    /* two channels out is not one: the dense list */
    const struct conv_problem two_out = problem(1, 28, 2, 3, 1);
    policy_rank(&md, &two_out, 2, true, l2, &r);
    CHECK(r.extrapolating && r.order[0] == og);

    /* the first applicable solver of the list goes first, whatever the
     * model says of it (POLICY_SAFE_CHOICES 1: with the model choosing
     * between the first two, QuartzNet's 1x87 depthwise layer went to
     * oneDNN's direct solver at 14x the depthwise one's time); the rest
     * keep the model's order */
    CHECK(POLICY_SAFE_CHOICES == 1);
    md.safe_count[0] = 3, md.safe[0][0] = od, md.safe[0][1] = og, md.safe[0][2] = im;
    all_nan(l2);
    l2[od] = 3, l2[og] = 2, l2[im] = 0; /* the model: im2col, gemm, direct */
    policy_rank(&md, &p, 2, true, l2, &r);
    CHECK(r.extrapolating && r.order[0] == od && r.order[1] == im && r.order[2] == og);
    md.safe[0][0] = dw; /* not applicable: the next one, gemm */
    policy_rank(&md, &p, 2, true, l2, &r);
    CHECK(r.extrapolating && r.order[0] == og && r.order[1] == im);

    /* the class decides the list: a 1x1 layer takes its kind's 1x1 list
     * where the metadata has one, else its kind's */
    const struct conv_problem one = problem(64, 56, 64, 1, 1);
    CHECK(policy_safe_class(&one) == PROBLEM_KINDS && policy_safe_class(&p) == 0);
    CHECK(policy_safe_class(&d) == 2 && policy_safe_class(&g) == 1);
    CHECK(strcmp(safe_class_names[PROBLEM_KINDS], "dense_1x1") == 0);
    const int g1 = solver_find("gemm_1x1");
    all_nan(l2);
    l2[og] = 0, l2[g1] = 1, l2[im] = 2;
    md.safe_count[0] = 1, md.safe[0][0] = im;
    policy_rank(&md, &one, 2, true, l2, &r);
    CHECK(r.extrapolating && r.order[0] == im); /* no dense_1x1 list: the dense one */
    md.safe_count[PROBLEM_KINDS] = 1, md.safe[PROBLEM_KINDS][0] = g1;
    policy_rank(&md, &one, 2, true, l2, &r);
    CHECK(r.extrapolating && r.order[0] == g1);
    policy_rank(&md, &p, 2, true, l2, &r); /* a 3x3 layer keeps the dense list */
    CHECK(r.extrapolating && r.order[0] == im);
}

static void unsure_margin(void) {
    const struct conv_problem p = problem(64, 56, 64, 3, 1);
    struct model_metadata m = meta_all();
    const int od = solver_find("onednn_direct"), og = solver_find("onednn_gemm");
    double l2[SOLVER_MAX];
    all_nan(l2);
    l2[od] = log2(1.0), l2[og] = log2(1.24);
    struct policy_ranking r;
    policy_rank(&m, &p, 2, true, l2, &r);
    CHECK(r.order[0] == od && r.unsure); /* within 1.25x */
    l2[og] = log2(1.26);
    policy_rank(&m, &p, 2, true, l2, &r);
    CHECK(!r.unsure);
    all_nan(l2);
    l2[od] = 0; /* one solver known: nothing to be unsure between */
    policy_rank(&m, &p, 2, true, l2, &r);
    CHECK(r.n == 1 && !r.unsure);
    all_nan(l2); /* none known */
    policy_rank(&m, &p, 2, true, l2, &r);
    CHECK(r.n == 0 && !r.unsure);
}

/* Per-call weights: each solver's measured transform cost (ns per weight
 * element) is added to its estimate, and can change the pick; constant
 * weights are ranked as trained. */
static void per_call_weights(void) {
    const struct conv_problem p = problem(512, 7, 512, 3, 1); /* 2359296 weights */
    struct model_metadata m = meta_all();
    m.limits = (struct machine_limits){.present = true, .peak_gflops = 1e6, .levels = 1};
    m.limits.level_bytes[0] = 1 << 14, m.limits.level_gbs[0] = 1e6;
    m.limits.weights = (struct weights_costs){
        .count = 2, .solver = {"winograd_f4x3", "onednn_gemm"}, .ns = {{-1, 10}, {0.5, 0.1}}};
    const int ow = solver_find("winograd_f4x3"), og = solver_find("onednn_gemm"),
              od = solver_find("onednn_direct");
    double l2[SOLVER_MAX];
    all_nan(l2);
    l2[ow] = log2(0.7), l2[og] = log2(1.0), l2[od] = log2(0.8);
    struct policy_ranking r;
    policy_rank(&m, &p, 2, true, l2, &r);
    CHECK(r.n == 3 && r.order[0] == ow && fabs(r.ms[ow] - 0.7) < 1e-9);
    policy_rank(&m, &p, 2, false, l2, &r);
    /* winograd: 0.7 + 10 ns x 2359296 = 24.3 ms; gemm: 1.0 + 0.24; direct
     * unpriced (not measured: nothing added) */
    CHECK(r.n == 3 && r.order[0] == od && r.order[1] == og && r.order[2] == ow);
    CHECK(fabs(r.ms[ow] - (0.7 + 10 * 2359296e-6)) < 1e-9 &&
          fabs(r.ms[og] - (1.0 + 0.1 * 2359296e-6)) < 1e-9 && fabs(r.ms[od] - 0.8) < 1e-9);
    /* a 1x1 layer takes the pointwise figure */
    const struct conv_problem q = problem(512, 7, 512, 1, 1);
    policy_rank(&m, &q, 2, false, l2, &r);
    CHECK(fabs(r.ms[og] - (1.0 + 0.5 * 262144e-6)) < 1e-9);
    /* metadata without the costs: per-call is ranked as constant */
    m.limits.weights.count = 0;
    policy_rank(&m, &p, 2, false, l2, &r);
    CHECK(r.order[0] == ow && fabs(r.ms[ow] - 0.7) < 1e-9);
}

/* The model's input: shape features outside the kind's training range are
 * clipped to it (a ReLU network is linear outside its data: ViT's 32x32
 * patch stem was estimated 330x slow on im2col_gemm), the scale features
 * are left as they are, and the result is normalized. */
static void model_input_clipped(void) {
    struct conv_problem p = problem(3, 224, 64, 32, 1); /* a 32x32 filter */
    p.stride_h = p.stride_w = 32, p.pad_h = p.pad_w = 0;
    char err[PROBLEM_ERROR_MAX];
    CHECK(problem_validate(&p, err, sizeof err) == CONVSEL_STATUS_SUCCESS);
    struct model_metadata m = meta_all();
    float f[FEATURE_COUNT], in[FEATURE_COUNT];
    features_of(&p, 2, m.channel_block, f);
    for (int i = 0; i < FEATURE_COUNT; i++)
        m.stats.mean[i] = 0.5f * (float)i, m.stats.std[i] = 2.0f;
    /* no bounds: only normalized */
    policy_model_input(&m, &p, 2, in);
    for (int i = 0; i < FEATURE_COUNT; i++)
        CHECK(fabsf(in[i] - (f[i] - 0.5f * (float)i) / 2.0f) < 1e-6f);
    int fil_h = -1, fil_w = -1, flop = -1, batch = -1;
    for (int i = 0; i < FEATURE_COUNT; i++) {
        fil_h = strcmp(feature_names[i], "fil_h") == 0 ? i : fil_h;
        fil_w = strcmp(feature_names[i], "fil_w") == 0 ? i : fil_w;
        flop = strcmp(feature_names[i], "log2_flop") == 0 ? i : flop;
        batch = strcmp(feature_names[i], "log2_batch") == 0 ? i : batch;
    }
    CHECK(fil_h >= 0 && fil_w >= 0 && flop >= 0 && batch >= 0 && f[fil_h] == 32);
    m.bounds.present = true;
    for (int i = 0; i < FEATURE_COUNT; i++)
        m.bounds.min[i] = f[i] - 1, m.bounds.max[i] = f[i] + 1;
    m.bounds.max[fil_h] = 11;         /* above: clipped down to 11 */
    m.bounds.min[fil_w] = 40;         /* below: clipped up to 40 */
    m.bounds.max[flop] = f[flop] - 3; /* the scale: not clipped */
    m.bounds.min[batch] = f[batch] + 2;
    policy_model_input(&m, &p, 2, in);
    for (int i = 0; i < FEATURE_COUNT; i++) {
        const float want = i == fil_h ? 11 : i == fil_w ? 40 : f[i];
        CHECK(fabsf(in[i] - (want - 0.5f * (float)i) / 2.0f) < 1e-6f);
    }
    /* the kind's bounds, where present, are the ones clipped to */
    m.kind_bounds[0] = m.bounds;
    m.kind_bounds[0].max[fil_h] = 16;
    policy_model_input(&m, &p, 2, in);
    CHECK(fabsf(in[fil_h] - (16 - 0.5f * (float)fil_h) / 2.0f) < 1e-6f);
}

/* The envelope: an estimate above the range measured for its solver at
 * that size is lowered to the range's top, one below raised to its
 * bottom; the bin is that of the floor (first and last bins extend);
 * solvers without a range, and metadata without an envelope, keep the
 * model's estimate. */
static void envelope_clamp(void) {
    const struct conv_problem p = problem(64, 56, 64, 3, 1);
    struct model_metadata m = meta_all();
    m.limits = (struct machine_limits){.present = true, .peak_gflops = 1000, .levels = 1};
    m.limits.level_bytes[0] = 1 << 14, m.limits.level_gbs[0] = 1e6;
    const int od = solver_find("onednn_direct"), im = solver_find("im2col_gemm"),
              og = solver_find("onednn_gemm");
    const double floor = policy_floor_ms(&m.limits, &p, solver_get(od)); /* 0.231 ms */
    struct estimate_envelope *e = &m.envelope;
    e->present = true, e->log2_min = -4, e->width = 1, e->bins = 4;
    CHECK(policy_envelope_bin(e, floor) == 1); /* log2 0.231 = -2.1: [-3, -2) */
    CHECK(policy_envelope_bin(e, 1e-9) == 0 && policy_envelope_bin(e, 1e9) == 3);
    CHECK(policy_envelope_bin(e, 0.25) == 2 && policy_envelope_bin(e, 0.2499) == 1);
    e->has[od] = e->has[im] = true;
    for (int b = 0; b < 4; b++)
        e->lo[od][b] = e->lo[im][b] = 0.5f, e->hi[od][b] = e->hi[im][b] = 3;
    e->lo[od][1] = 1, e->hi[od][1] = 2; /* od's bin 1: 2x-4x the floor */
    double l2[SOLVER_MAX];
    all_nan(l2);
    l2[od] = log2(100 * floor); /* far above: to 4x */
    l2[im] = log2(1.1 * floor); /* below 2^0.5: to 1.41x */
    l2[og] = log2(50 * floor);  /* no range: as the model says */
    struct policy_ranking r;
    policy_rank(&m, &p, 2, true, l2, &r);
    CHECK(fabs(r.ms[od] - 4 * floor) < 1e-9 && fabs(r.ms[im] - sqrt(2) * floor) < 1e-9 &&
          fabs(r.ms[og] - 50 * floor) < 1e-9);
    CHECK(r.n == 3 && r.order[0] == im && r.order[1] == od && r.order[2] == og);
    l2[od] = log2(3 * floor); /* inside: kept */
    policy_rank(&m, &p, 2, true, l2, &r);
    CHECK(fabs(r.ms[od] - 3 * floor) < 1e-9);
    e->present = false; /* metadata from before envelopes */
    l2[od] = log2(100 * floor);
    policy_rank(&m, &p, 2, true, l2, &r);
    CHECK(fabs(r.ms[od] - 100 * floor) < 1e-6 && fabs(r.ms[im] - 1.1 * floor) < 1e-9);
}

int main(void) {
    floor_by_limits();
    envelope_clamp();
    model_input_clipped();
    extrapolation_and_safe_pick();
    unsure_margin();
    per_call_weights();
    return test_finish("test_policy");
}
