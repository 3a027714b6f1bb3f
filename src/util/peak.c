/* peak.c -- see peak.h. */
#include "util/peak.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/clock.h"
#include "util/cpu.h"

#ifdef CPU_X86_VARIANTS
#include <immintrin.h>
#endif

#define ROUND_NS 50000000LL /* one timed round per thread */
#define FMA_STEPS 4096      /* FMAs per chain between clock reads */

/* 16 independent chains: the FMA latency (4 cycles) times the pipes (2)
 * is 8, so 16 keep both pipes busy with room to spare. Each returns the
 * FMAs it ran per lane. */
static double fma_generic(int64_t deadline, float *sink) {
    float a[16];
    for (int i = 0; i < 16; i++)
        a[i] = (float)i * 1e-3f;
    const float m = 0.999999f, c = 1e-7f;
    double fmas = 0;
    while (clock_now_ns() < deadline) {
        for (int s = 0; s < FMA_STEPS; s++)
            for (int i = 0; i < 16; i++)
                a[i] = fmaf(a[i], m, c);
        fmas += 16.0 * FMA_STEPS;
    }
    for (int i = 0; i < 16; i++)
        *sink += a[i];
    return fmas;
}

#ifdef CPU_X86_VARIANTS
/* CHAINS accumulators live in registers for the whole loop, beside the two
 * constants: AVX-512 has 32 registers and runs 16 chains; AVX2 has 16 and
 * runs 12, since 16 + 2 would spill three chains to the stack and measure
 * a load and a store per FMA (104 GFLOP/s on a Zen 3 where oneDNN's direct
 * convolution ran 132). 12 still cover latency 5 on two pipes. The last
 * four chains are dead code at CHAINS 12 and cost no register. */
#define FMA_LOOP(VEC, SET1, FMADD, ADD, LANES, CHAINS)                                             \
    VEC a0 = SET1(1e-3f), a1 = SET1(2e-3f), a2 = SET1(3e-3f), a3 = SET1(4e-3f), a4 = SET1(5e-3f),  \
        a5 = SET1(6e-3f), a6 = SET1(7e-3f), a7 = SET1(8e-3f), a8 = SET1(9e-3f), a9 = SET1(1e-2f),  \
        a10 = SET1(1.1e-2f), a11 = SET1(1.2e-2f), a12 = SET1(1.3e-2f), a13 = SET1(1.4e-2f),        \
        a14 = SET1(1.5e-2f), a15 = SET1(1.6e-2f);                                                  \
    const VEC m = SET1(0.999999f), c = SET1(1e-7f);                                                \
    double fmas = 0;                                                                               \
    while (clock_now_ns() < deadline) {                                                            \
        for (int s = 0; s < FMA_STEPS; s++) {                                                      \
            a0 = FMADD(a0, m, c), a1 = FMADD(a1, m, c), a2 = FMADD(a2, m, c);                      \
            a3 = FMADD(a3, m, c), a4 = FMADD(a4, m, c), a5 = FMADD(a5, m, c);                      \
            a6 = FMADD(a6, m, c), a7 = FMADD(a7, m, c), a8 = FMADD(a8, m, c);                      \
            a9 = FMADD(a9, m, c), a10 = FMADD(a10, m, c), a11 = FMADD(a11, m, c);                  \
            if (CHAINS == 16) {                                                                    \
                a12 = FMADD(a12, m, c), a13 = FMADD(a13, m, c), a14 = FMADD(a14, m, c);            \
                a15 = FMADD(a15, m, c);                                                            \
            }                                                                                      \
        }                                                                                          \
        fmas += (double)CHAINS * FMA_STEPS * LANES;                                                \
    }                                                                                              \
    VEC t = ADD(ADD(ADD(a0, a1), ADD(a2, a3)), ADD(ADD(a4, a5), ADD(a6, a7)));                     \
    t = ADD(t, ADD(ADD(a8, a9), ADD(a10, a11)));                                                   \
    if (CHAINS == 16)                                                                              \
        t = ADD(t, ADD(ADD(a12, a13), ADD(a14, a15)));                                             \
    float lanes[LANES];                                                                            \
    memcpy(lanes, &t, sizeof lanes);                                                               \
    for (int i = 0; i < LANES; i++)                                                                \
        *sink += lanes[i];                                                                         \
    return fmas;

__attribute__((target("avx2,fma"))) static double fma_avx2(int64_t deadline, float *sink) {
    FMA_LOOP(__m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps, 8, 12)
}

__attribute__((target("avx512f"))) static double fma_avx512(int64_t deadline, float *sink) {
    FMA_LOOP(__m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps, 16, 16)
}
#endif

struct peak_job {
    pthread_barrier_t *start;
    int64_t duration_ns;
    double fmas, seconds;
    float sink;
    /* bandwidth */
    const float *buf;
    size_t floats;
};

static void *fma_thread(void *arg) {
    struct peak_job *j = arg;
    pthread_barrier_wait(j->start);
    const int64_t t0 = clock_now_ns();
    const int64_t deadline = t0 + j->duration_ns;
    const enum cpu_isa isa = cpu_best_isa();
#ifdef CPU_X86_VARIANTS
    j->fmas = isa == CPU_AVX512 ? fma_avx512(deadline, &j->sink)
              : isa == CPU_AVX2 ? fma_avx2(deadline, &j->sink)
                                : fma_generic(deadline, &j->sink);
#else
    (void)isa;
    j->fmas = fma_generic(deadline, &j->sink);
#endif
    j->seconds = (double)(clock_now_ns() - t0) * 1e-9;
    return NULL;
}

/* One pass over n floats (n a multiple of 16), summed into eight
 * independent accumulators so that the adds never limit a read from L1:
 * the measured bandwidth must not be below what a solver can reach, or
 * the floor built on it would be too high. */
static float sum_generic(const float *buf, size_t n) {
    float s[16] = {0};
    for (size_t i = 0; i < n; i += 16)
        for (int k = 0; k < 16; k++)
            s[k] += buf[i + k];
    float t = 0;
    for (int k = 0; k < 16; k++)
        t += s[k];
    return t;
}

#ifdef CPU_X86_VARIANTS
__attribute__((target("avx2"))) static float sum_avx2(const float *buf, size_t n) {
    __m256 s[8];
    for (int k = 0; k < 8; k++)
        s[k] = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 64 <= n; i += 64)
        for (int k = 0; k < 8; k++)
            s[k] = _mm256_add_ps(s[k], _mm256_load_ps(buf + i + 8 * k));
    for (int k = 1; k < 8; k++)
        s[0] = _mm256_add_ps(s[0], s[k]);
    float lanes[8];
    _mm256_storeu_ps(lanes, s[0]);
    float t = sum_generic(buf + i, n - i);
    for (int k = 0; k < 8; k++)
        t += lanes[k];
    return t;
}

__attribute__((target("avx512f"))) static float sum_avx512(const float *buf, size_t n) {
    __m512 s[8];
    for (int k = 0; k < 8; k++)
        s[k] = _mm512_setzero_ps();
    size_t i = 0;
    for (; i + 128 <= n; i += 128)
        for (int k = 0; k < 8; k++)
            s[k] = _mm512_add_ps(s[k], _mm512_load_ps(buf + i + 16 * k));
    for (int k = 1; k < 8; k++)
        s[0] = _mm512_add_ps(s[0], s[k]);
    return _mm512_reduce_add_ps(s[0]) + sum_generic(buf + i, n - i);
}
#endif

/* Sums the buffer repeatedly until the deadline. */
static void *read_thread(void *arg) {
    struct peak_job *j = arg;
    const enum cpu_isa isa = cpu_best_isa();
    pthread_barrier_wait(j->start);
    const int64_t t0 = clock_now_ns();
    const int64_t deadline = t0 + j->duration_ns;
    double passes = 0;
    float total = 0;
    /* passes between clock reads: a pass over 16 KiB takes ~0.1 us */
    const size_t reps = 1 + ((size_t)1 << 20) / (j->floats * sizeof(float) + 1);
    do {
        for (size_t r = 0; r < reps; r++) {
#ifdef CPU_X86_VARIANTS
            total += isa == CPU_AVX512 ? sum_avx512(j->buf, j->floats)
                     : isa == CPU_AVX2 ? sum_avx2(j->buf, j->floats)
                                       : sum_generic(j->buf, j->floats);
#else
            (void)isa;
            total += sum_generic(j->buf, j->floats);
#endif
        }
        passes += (double)reps;
    } while (clock_now_ns() < deadline);
    j->seconds = (double)(clock_now_ns() - t0) * 1e-9;
    j->fmas = passes; /* passes over the buffer */
    j->sink = total;
    return NULL;
}

/* Runs fn on `threads` threads started together; the rate of the slowest. */
static double run_threads(int threads, void *(*fn)(void *), struct peak_job *jobs) {
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)threads);
    pthread_t *t = calloc((size_t)threads, sizeof *t);
    int started = 0;
    for (int i = 0; t && i < threads; i++) {
        jobs[i].start = &start;
        if (i > 0 && pthread_create(&t[i], NULL, fn, &jobs[i]) != 0)
            break;
        started++;
    }
    double seconds = 0;
    if (started == threads) {
        fn(&jobs[0]);
        for (int i = 1; i < threads; i++)
            pthread_join(t[i], NULL);
        for (int i = 0; i < threads; i++)
            seconds = jobs[i].seconds > seconds ? jobs[i].seconds : seconds;
    } else { /* could not start them all: nothing measured */
        for (int i = 0; i < threads - started; i++)
            pthread_barrier_wait(&start);
        for (int i = 1; i < started; i++)
            pthread_join(t[i], NULL);
    }
    free(t);
    pthread_barrier_destroy(&start);
    return seconds;
}

double peak_gflops(int threads) {
    if (threads < 1)
        threads = 1;
    struct peak_job *jobs = calloc((size_t)threads, sizeof *jobs);
    double best = 0;
    for (int round = 0; jobs && round < 3; round++) {
        for (int i = 0; i < threads; i++)
            jobs[i] = (struct peak_job){.duration_ns = ROUND_NS};
        const double seconds = run_threads(threads, fma_thread, jobs);
        double fmas = 0;
        for (int i = 0; i < threads; i++)
            fmas += jobs[i].fmas;
        if (seconds > 0 && 2 * fmas / seconds * 1e-9 > best)
            best = 2 * fmas / seconds * 1e-9;
    }
    free(jobs);
    return best;
}

double peak_bandwidth_gbs(size_t bytes, int threads) {
    if (threads < 1)
        threads = 1;
    /* per thread, a multiple of 16 floats on a 64-byte boundary */
    const size_t per = (bytes / sizeof(float) / (size_t)threads + 15) / 16 * 16;
    float *buf = aligned_alloc(64, per * (size_t)threads * sizeof(float) + 64);
    struct peak_job *jobs = calloc((size_t)threads, sizeof *jobs);
    double best = 0;
    if (buf && jobs) {
        for (size_t i = 0; i < per * (size_t)threads; i++)
            buf[i] = (float)(i & 1023) * 1e-3f;
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < threads; i++)
                jobs[i] = (struct peak_job){
                    .duration_ns = ROUND_NS, .buf = buf + (size_t)i * per, .floats = per};
            const double seconds = run_threads(threads, read_thread, jobs);
            double moved = 0;
            for (int i = 0; i < threads; i++)
                moved += jobs[i].fmas * (double)per * sizeof(float);
            if (seconds > 0 && moved / seconds * 1e-9 > best)
                best = moved / seconds * 1e-9;
        }
    }
    free(buf);
    free(jobs);
    return best;
}

void peak_measure(int threads, struct machine_limits *out) {
    static const double sizes[] = {16 << 10, 256 << 10, 2 << 20, 16 << 20, 256 << 20};
    *out = (struct machine_limits){.method = PEAK_METHOD, .peak_gflops = peak_gflops(threads)};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        out->level_bytes[i] = sizes[i];
        out->level_gbs[i] = peak_bandwidth_gbs((size_t)sizes[i], threads);
        out->levels++;
    }
    out->present = out->peak_gflops > 0;
}

void peak_format(const struct machine_limits *l, char *buf, size_t cap) {
    /* %.9g: what parse accepts, it must read back (a bandwidth of 0.0039
     * written as "0.0" would not parse: fuzz_limits' first finding) */
    size_t n = (size_t)snprintf(buf, cap, "peak_gflops=%.9g bw=", l->peak_gflops);
    for (int i = 0; i < l->levels && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%.0f:%.9g", i ? "," : "", l->level_bytes[i],
                              l->level_gbs[i]);
    for (int i = 0; i < l->weights.count && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s:%.4g:%.4g",
                              i ? "," : " weights=", l->weights.solver[i], l->weights.ns[i][0],
                              l->weights.ns[i][1]);
    if (l->weights.count > 0 && l->weights.at > 0 && n < cap)
        n += (size_t)snprintf(buf + n, cap - n, " weights_at=%lld", (long long)l->weights.at);
    if (l->method > 1 && n < cap)
        snprintf(buf + n, cap - n, " method=%d", l->method);
}

/* The latest weights_at read: the year 2286, past any timestamp a database
 * written now holds, far inside long long. */
#define WEIGHTS_AT_MAX 9999999999LL

/* ns per weight element: -1 (not measured) or in [0, 1e6]. */
static bool weights_ns(const char *s, char **end, double *out) {
    *out = strtod(s, end);
    return *end != s && (*out == -1 || (*out >= 0 && *out <= 1e6));
}

/* "SOLVER:NS1:NS2,..." after "weights=". */
static bool parse_weights(const char *s, struct weights_costs *w) {
    while (*s) {
        if (w->count == LIMITS_SOLVERS_MAX)
            return false;
        const char *colon = strchr(s, ':');
        const size_t len = colon ? (size_t)(colon - s) : 0;
        if (len == 0 || len >= LIMITS_NAME_MAX)
            return false;
        for (size_t i = 0; i < len; i++)
            if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
                return false;
        const int i = w->count;
        memcpy(w->solver[i], s, len);
        w->solver[i][len] = '\0';
        char *end = NULL;
        if (!weights_ns(colon + 1, &end, &w->ns[i][0]) || *end != ':' ||
            !weights_ns(end + 1, &end, &w->ns[i][1]))
            return false;
        w->count++;
        s = end;
        if (*s == ',' && s[1] != '\0')
            s++;
        else if (*s != '\0')
            return false;
    }
    return w->count > 0;
}

bool peak_parse(const char *text, struct machine_limits *out) {
    *out = (struct machine_limits){0};
    char *end = NULL;
    if (text == NULL || strncmp(text, "peak_gflops=", 12) != 0)
        return false;
    out->peak_gflops = strtod(text + 12, &end);
    if (!(out->peak_gflops > 0 && out->peak_gflops < 1e9) || strncmp(end, " bw=", 4) != 0)
        return false;
    const char *s = end + 4;
    while (*s && *s != ' ' && out->levels < LIMITS_LEVELS_MAX) {
        const double bytes = strtod(s, &end);
        if (end == s || *end != ':')
            return false;
        s = end + 1;
        const double gbs = strtod(s, &end);
        if (end == s || !(bytes >= 1 && bytes < 1e15 && bytes == floor(bytes)) ||
            !(gbs > 0 && gbs < 1e9) || (out->levels && bytes <= out->level_bytes[out->levels - 1]))
            return false;
        out->level_bytes[out->levels] = bytes;
        out->level_gbs[out->levels++] = gbs;
        s = end;
        if (*s == ',')
            s++;
        else if (*s != '\0' && *s != ' ')
            return false;
    }
    if (out->levels == 0)
        return false;
    /* weights= runs to the end or to " method=" */
    const char *method = strstr(s, " method=");
    char weights[LIMITS_SOLVERS_MAX * (LIMITS_NAME_MAX + 40)];
    const size_t wlen = method ? (size_t)(method - s) : strlen(s);
    if (wlen >= sizeof weights)
        return false;
    memcpy(weights, s, wlen);
    weights[wlen] = '\0';
    /* " weights_at=T" ends the weights, and only follows them */
    char *at = strstr(weights, " weights_at=");
    if (at) {
        const char *t = at + 12;
        if (!(*t >= '1' && *t <= '9') || strncmp(weights, " weights=", 9) != 0)
            return false;
        const long long v = strtoll(t, &end, 10);
        if (*end != '\0' || v < 1 || v > WEIGHTS_AT_MAX)
            return false;
        out->weights.at = v;
        *at = '\0';
    }
    if (strncmp(weights, " weights=", 9) == 0) {
        if (!parse_weights(weights + 9, &out->weights))
            return false;
    } else if (weights[0] != '\0') {
        return false;
    }
    out->method = 1;
    if (method) {
        const char *m = method + 8;
        if (!(*m >= '1' && *m <= '9'))
            return false;
        const long v = strtol(m, &end, 10);
        if (*end != '\0' || v < 2 || v > 1000)
            return false;
        out->method = (int)v;
    }
    return out->present = true;
}

double weights_cost_ms(const struct weights_costs *w, const char *name, bool pointwise,
                       double w_elems) {
    for (int i = 0; i < w->count; i++) {
        if (strcmp(w->solver[i], name) != 0)
            continue;
        /* the other filter class's figure when this one was not measured */
        double ns = w->ns[i][pointwise ? 0 : 1];
        if (ns < 0)
            ns = w->ns[i][pointwise ? 1 : 0];
        return ns > 0 ? ns * w_elems * 1e-6 : 0;
    }
    return 0;
}
