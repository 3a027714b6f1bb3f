/* test_onednn_applicability.c -- the oneDNN solvers decide applicability
 * from the shape (so that immediate mode never waits on oneDNN's descriptor
 * creation); this holds their rules to oneDNN's own answer on thousands of
 * random problems in four regimes: small 3x3 stride-1 problems with every
 * padding (where Winograd's conditions bite), every filter/stride/dilation/
 * group combination, large channel counts, images and batches, and many
 * groups (where oneDNN's direct algorithm may run its GEMM: onednn_direct
 * must then refuse where onednn_gemm applies, being its duplicate; a rare
 * corner the rule misses is allowed, a direct kernel refused is not). Both
 * layouts, both filter layouts. direct and Winograd must agree exactly;
 * onednn_gemm's rule (NCHW + KCRS only) may refuse what oneDNN runs in
 * other layouts, but must never accept what it would run with its
 * reference code. onednn_winograd refuses output maps under 4x4 as well,
 * which oneDNN runs (convsel's rule: never the fastest there): it must
 * agree with oneDNN exactly elsewhere and refuse every such map. Without
 * AVX-512, oneDNN has no Winograd and its direct algorithm runs its GEMM
 * on widely padded problems (the rules know both). A oneDNN that answers differently (another
 * version, another CPU) fails here, naming the problem. */
#include <stdio.h>

#include "core/problem.h"
#include "solvers/onednn_plan.h"
#include "solvers/solver.h"
#include "testutil.h"
#include "util/cpu.h"
#include "util/rng.h"

static struct conv_problem draw(struct rng *g, int regime) {
    struct conv_problem p = {
        .r = 3, .s = 3, .stride_h = 1, .stride_w = 1, .dil_h = 1, .dil_w = 1, .groups = 1};
    const bool big = regime == 2;
    p.n = rng_int(g, 1, big ? 64 : 4);
    p.c = rng_int(g, 1, big ? 2048 : 80);
    p.k = rng_int(g, 1, big ? 2048 : 80);
    p.h = rng_int(g, 1, big ? 300 : 40);
    p.w = rng_int(g, 1, big ? 300 : 40);
    p.pad_h = rng_int(g, 0, 3);
    p.pad_w = rng_int(g, 0, 3);
    if (regime == 1) {
        p.r = rng_int(g, 1, 7), p.s = rng_int(g, 1, 7);
        p.stride_h = rng_int(g, 1, 3), p.stride_w = rng_int(g, 1, 3);
        p.dil_h = rng_int(g, 1, 3), p.dil_w = rng_int(g, 1, 3);
        p.groups = (int64_t[]){1, 1, 2, 4}[rng_int(g, 0, 3)];
        p.c *= p.groups, p.k *= p.groups;
    }
    if (regime == 3) { /* many groups: grouped, depthwise, channel multipliers */
        p.groups = rng_int(g, 2, 48);
        p.c = p.groups * (rng_int(g, 0, 3) ? rng_int(g, 1, 24) : 1);
        p.k = p.groups * rng_int(g, 1, 24);
        p.r = p.s = (int64_t[]){1, 3, 5, 7}[rng_int(g, 0, 3)];
        p.stride_h = p.stride_w = rng_int(g, 1, 2);
        p.dil_h = p.dil_w = rng_int(g, 1, 2);
    }
    p.layout = rng_int(g, 0, 1) ? CONVSEL_LAYOUT_NHWC : CONVSEL_LAYOUT_NCHW;
    p.filter_layout = rng_int(g, 0, 1) ? CONVSEL_FILTER_KRSC : CONVSEL_FILTER_KCRS;
    return p;
}

int main(void) {
    const struct {
        const char *solver;
        enum onednn_alg alg;
        bool exact;    /* else the rule may refuse what oneDNN could run, never the reverse */
        bool one_tile; /* the rule also refuses output maps under 4x4 */
    } cases[] = {{"onednn_direct", ONEDNN_DIRECT, true, false},
                 {"onednn_winograd", ONEDNN_WINOGRAD, true, true},
                 {"onednn_gemm", ONEDNN_GEMM, false, false}};
    struct rng g = rng_seed(11);
    const struct solver *gemm = solver_get(solver_find("onednn_gemm"));
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const struct solver *s = solver_get(solver_find(cases[c].solver));
        int agree = 0, yes = 0, disagree = 0, conservative = 0, duplicates_left = 0, small = 0;
        for (int regime = 0; regime < 4; regime++)
            for (int i = 0; i < 1500; i++) {
                struct conv_problem p = draw(&g, regime);
                char err[PROBLEM_ERROR_MAX], key[CONVSEL_PROBLEM_KEY_MAX];
                if (problem_validate(&p, err, sizeof err) != CONVSEL_STATUS_SUCCESS)
                    continue;
                const bool rule = s->is_applicable(&p, NULL);
                bool onednn = onednn_implements(&p, cases[c].alg);
                /* onednn_direct is not onednn_gemm's duplicate */
                const bool duplicate = cases[c].alg == ONEDNN_DIRECT && onednn &&
                                       gemm->is_applicable(&p, NULL) && onednn_direct_runs_gemm(&p);
                onednn &= !duplicate;
                if (cases[c].one_tile && onednn && (p.oh < 4 || p.ow < 4)) {
                    small++;
                    onednn = false; /* oneDNN runs it; convsel refuses it */
                }
                if (rule == onednn) {
                    agree++, yes += rule;
                } else if (!cases[c].exact && onednn) {
                    conservative++; /* refused by the rule, possible in oneDNN */
                } else if (duplicate) {
                    /* the rule misses a corner where oneDNN runs its GEMM:
                     * a duplicate left in, as before the rule; rare */
                    if (duplicates_left++ < 5) {
                        problem_key_format(&p, key, sizeof key);
                        printf("%s: %s: oneDNN runs its GEMM, the rule accepts\n", s->name, key);
                    }
                } else if (disagree++ < 10) {
                    problem_key_format(&p, key, sizeof key);
                    printf("%s: %s: rule says %d, oneDNN says %d\n", s->name, key, rule, onednn);
                }
            }
        printf("%s: %d problems agree (%d applicable), %d refused by the rule only, %d disagree, "
               "%d duplicates of onednn_gemm left, %d maps under one tile refused\n",
               s->name, agree, yes, conservative, disagree, duplicates_left, small);
        CHECK(disagree == 0);
        CHECK(duplicates_left * 200 < agree); /* under 0.5 % */
        CHECK(agree > 3000 && conservative < agree / 10);
        if (cases[c].alg == ONEDNN_WINOGRAD && !cpu_supports(CPU_AVX512)) {
            /* oneDNN 2.6 has Winograd only for AVX-512: both say no everywhere */
            printf("%s: this CPU has no AVX-512, so oneDNN has no Winograd here: %d applicable\n",
                   s->name, yes);
            CHECK(yes == 0);
        } else {
            CHECK(yes > 300); /* both answers were exercised */
            CHECK(!cases[c].one_tile || small > 10);
        }
        CHECK(agree - yes > 300 || c == 0);
    }
    return test_finish("test_onednn_applicability");
}
