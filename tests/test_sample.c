/* test_sample.c -- tune/sample.c: random draws are valid, bounded and
 * repeatable; perturbations of real layers keep the layer's kind (filter,
 * stride, padding, dilation, grouping), move something, stay valid and
 * bounded, keep network and family, and give up on a layer with nothing
 * to move. */
#include <stdio.h>
#include <string.h>

#include "testutil.h"
#include "tune/sample.h"

static bool valid(const struct conv_problem *p) {
    struct conv_problem q = *p;
    char err[PROBLEM_ERROR_MAX];
    return problem_validate(&q, err, sizeof err) == CONVSEL_STATUS_SUCCESS;
}

static void random_draws(void) {
    struct rng a = rng_seed(7), b = rng_seed(7);
    int depthwise = 0, grouped = 0;
    for (int i = 0; i < 2000; i++) {
        struct problem_row x, y;
        sample_random(&a, 2e9, true, &x, i);
        sample_random(&b, 2e9, true, &y, i);
        CHECK(memcmp(&x.p, &y.p, sizeof x.p) == 0); /* the seed decides everything */
        CHECK(valid(&x.p) && problem_flops(&x.p) <= 2e9);
        CHECK(x.network[0] == '\0' && x.family[0] == '\0' && x.origin == PROBLEM_ORIGIN_NONE);
        char want[PROBLEM_NAME_MAX];
        snprintf(want, sizeof want, "sample%d", i);
        CHECK(strcmp(x.name, want) == 0);
        if (x.p.groups > 1 && x.p.groups == x.p.c) {
            depthwise++;
            CHECK(x.p.r > 1 || x.p.s > 1); /* depthwise filters are never 1x1 */
        } else if (x.p.groups > 1)
            grouped++;
        if (x.p.c >= 16 && x.p.groups == 1)
            CHECK(x.p.c % 8 == 0); /* network_channels */
    }
    CHECK(depthwise > 150 && depthwise < 450); /* 15 % of 2000, loosely */
    CHECK(grouped > 80 && grouped < 350);      /* 10 % */
}

static struct problem_row layer(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t r,
                                int64_t s, int64_t stride, int64_t pad, int64_t dil,
                                int64_t groups) {
    struct problem_row row = {.origin = PROBLEM_ORIGIN_LAYER, .line = 3};
    snprintf(row.name, sizeof row.name, "net/layer");
    snprintf(row.network, sizeof row.network, "net");
    snprintf(row.family, sizeof row.family, "fam");
    row.p = (struct conv_problem){.n = n,
                                  .c = c,
                                  .h = h,
                                  .w = w,
                                  .k = k,
                                  .r = r,
                                  .s = s,
                                  .pad_h = pad,
                                  .pad_w = pad,
                                  .stride_h = stride,
                                  .stride_w = stride,
                                  .dil_h = dil,
                                  .dil_w = dil,
                                  .groups = groups};
    char err[PROBLEM_ERROR_MAX];
    CHECK(problem_validate(&row.p, err, sizeof err) == CONVSEL_STATUS_SUCCESS);
    return row;
}

static void perturbations(void) {
    const struct problem_row layers[] = {
        layer(1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1),   /* dense */
        layer(8, 128, 28, 28, 128, 3, 3, 2, 2, 2, 4), /* grouped, strided, dilated */
        layer(1, 96, 14, 14, 192, 5, 5, 1, 2, 1, 96), /* depthwise, multiplier 2 */
        layer(1, 80, 1, 4000, 80, 1, 3, 1, 0, 9, 1),  /* 1-D, dilated */
        layer(1, 3, 224, 224, 96, 4, 4, 4, 0, 1, 1),  /* patch stem */
    };
    struct rng r = rng_seed(11);
    for (size_t l = 0; l < sizeof layers / sizeof *layers; l++) {
        const struct conv_problem *o = &layers[l].p;
        const int64_t mult = o->k / o->groups;
        for (int i = 0; i < 200; i++) {
            struct problem_row x;
            CHECK(sample_perturb(&r, &layers[l], 5e9, &x, i));
            const struct conv_problem *p = &x.p;
            CHECK(valid(p) && problem_flops(p) <= 5e9);
            CHECK(p->r == o->r && p->s == o->s && p->stride_h == o->stride_h &&
                  p->stride_w == o->stride_w && p->pad_h == o->pad_h && p->pad_w == o->pad_w &&
                  p->dil_h == o->dil_h && p->dil_w == o->dil_w);
            if (o->groups == o->c && o->groups > 1) /* depthwise, same multiplier */
                CHECK(p->groups == p->c && p->k == mult * p->c);
            else
                CHECK(p->groups == o->groups);
            CHECK(memcmp(p, o, sizeof *p) != 0); /* something moved */
            if (o->h == 1)
                CHECK(p->h == 1); /* a 1-D layer stays 1-D */
            CHECK(strcmp(x.network, "net") == 0 && strcmp(x.family, "fam") == 0);
            CHECK(x.origin == PROBLEM_ORIGIN_PERTURBED);
            char want[PROBLEM_NAME_MAX];
            snprintf(want, sizeof want, "%d~net/layer", i);
            CHECK(strcmp(x.name, want) == 0);
        }
    }
    /* a layer above the bound already, with nothing smaller that stays valid: refused */
    const struct problem_row tiny = layer(1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1);
    struct problem_row x;
    CHECK(!sample_perturb(&r, &tiny, 1, &x, 0));
}

int main(void) {
    random_draws();
    perturbations();
    return test_finish("test_sample");
}
