/* test_noise_guard.c -- the quiet-machine check of `convsel tune`, driven by
 * a scripted calibration: the best is a running minimum, busy means two
 * calibrations in a row slower than threshold x best (one slow one is
 * re-checked at once), waiting pauses until quiet or gives up after
 * max_waits pauses, and a disabled guard never calibrates. */
#include "testutil.h"
#include "util/noise_guard.h"

struct script {
    const double *times;
    int n, next;
};

static double scripted(void *ctx) {
    struct script *s = ctx;
    return s->times[s->next < s->n ? s->next++ : s->n - 1];
}

static unsigned paused_ms;
static void fake_pause(unsigned ms) {
    paused_ms += ms;
}

static struct noise_guard guard(struct script *s, double threshold) {
    return (struct noise_guard){.threshold = threshold,
                                .max_waits = 3,
                                .wait_ms = 10,
                                .calibrate = scripted,
                                .ctx = s,
                                .pause = fake_pause};
}

int main(void) {
    /* the first calibration is the best so far, hence quiet */
    const double a[] = {2.0, 2.5, 2.7, 2.1, 1.0, 1.2, 1.4, 1.5};
    struct script s = {a, 8, 0};
    struct noise_guard g = guard(&s, 1.3);
    CHECK(noise_guard_check(&g) && g.best == 2.0);
    CHECK(noise_guard_check(&g)); /* 2.5 <= 2.6 */
    CHECK(noise_guard_check(&g)); /* 2.7 > 2.6, confirmed quiet by 2.1 */
    CHECK(g.calibrations == 4 && g.busy == 0);
    CHECK(noise_guard_check(&g) && g.best == 1.0); /* a quiet moment lowers the bar */
    CHECK(noise_guard_check(&g));                  /* 1.2 <= 1.3 */
    CHECK(!noise_guard_check(&g));                 /* 1.4 and 1.5 > 1.3: busy */
    CHECK(noise_guard_load(&g) > 1.49 && noise_guard_load(&g) < 1.51);
    CHECK(g.calibrations == 8 && g.busy == 1 && g.waits == 0);

    /* waiting: busy (5, 5), busy (5, 5), quiet (1.1) -> two pauses */
    const double b[] = {1.0, 5.0, 5.0, 5.0, 5.0, 1.1};
    s = (struct script){b, 6, 0};
    g = guard(&s, 1.3);
    paused_ms = 0;
    CHECK(noise_guard_wait_quiet(&g)); /* 1.0 */
    CHECK(noise_guard_wait_quiet(&g));
    CHECK(g.waits == 2 && paused_ms == 20 && g.busy == 2 && g.calibrations == 6);

    /* a machine that stays busy: max_waits pauses, then give up */
    const double c[] = {1.0, 9.0};
    s = (struct script){c, 2, 0};
    g = guard(&s, 1.3);
    paused_ms = 0;
    CHECK(noise_guard_wait_quiet(&g));
    CHECK(!noise_guard_wait_quiet(&g));
    CHECK(g.waits == 3 && paused_ms == 30 && g.calibrations == 1 + 4 * 2 && g.busy == 4);

    /* disabled: quiet without calibrating */
    s = (struct script){c, 2, 0};
    g = guard(&s, 0);
    CHECK(noise_guard_check(&g) && noise_guard_wait_quiet(&g) && g.calibrations == 0);
    CHECK(s.next == 0 && noise_guard_load(&g) == 1.0);
    return test_finish("test_noise_guard");
}
