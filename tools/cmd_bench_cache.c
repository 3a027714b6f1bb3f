/* cmd_bench_cache.c -- `convsel bench-cache`: the cost of a warm lookup in
 * convsel's model cache against a cache behind one global mutex (MIOpen's
 * fix: the unguarded map with a lock around find + insert), at several
 * thread counts, in the same run.
 *
 * Method: for each thread count, the two variants alternate for REPEATS
 * rounds; in each, T threads start at a barrier and do LOOKUPS lookups each
 * over 4 warm keys. The figure is core-nanoseconds per lookup:
 * wall time x min(T, online CPUs) / total lookups, so a lookup that scales
 * perfectly stays flat as T grows past the core count. Medians of the
 * rounds, with min and max. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "heur/model_cache.h"
#include "unguarded_cache.h"
#include "util/clock.h"
#include "util/stats.h"

static const char summary[] =
    "Measures warm lookups in convsel's model cache and in a global-mutex cache (MIOpen's\n"
    "fix) at each thread count, alternating the two, and prints core-ns per lookup\n"
    "(wall x min(T, CPUs) / lookups): median, min and max over REPEATS rounds, and the ratio.";

static int dummy_value = 42;

static bool stub_loader(void *ctx, const struct cache_key *key, void **out,
                        void (**free_out)(void *), char *err, size_t cap) {
    (void)ctx, (void)key, (void)err, (void)cap;
    *out = &dummy_value;
    *free_out = NULL;
    return true;
}

struct bench {
    bool mutex_variant;
    struct model_cache *cache;
    struct unguarded_cache map;
    pthread_mutex_t mu;
    pthread_barrier_t start, done;
    int64_t lookups;
    long sink;
};

/* Keys as the library's callers hold them: initialized (hashed) once. */
static struct cache_key keys[4];

static void init_keys(void) {
    cache_key_init(&keys[0], "gfx942", "tunanet", "");
    cache_key_init(&keys[1], "gfx942", "metadata", "");
    cache_key_init(&keys[2], "gfx90a", "ktn_encoder", "ConvHipIgemmGroupFwdXdlops");
    cache_key_init(&keys[3], "gfx908", "ktn_decoder", "ConvAsm1x1U");
}

static const void *lookup(struct bench *b, int k) {
    if (!b->mutex_variant)
        return cache_get(b->cache, &keys[k], stub_loader, NULL)->value;
    pthread_mutex_lock(&b->mu);
    const void *v = unguarded_get(&b->map, &keys[k], stub_loader, NULL);
    pthread_mutex_unlock(&b->mu);
    return v;
}

static void *worker(void *arg) {
    struct bench *b = arg;
    long sink = 0;
    pthread_barrier_wait(&b->start);
    for (int64_t i = 0; i < b->lookups; i++)
        sink += *(const int *)lookup(b, (int)(i & 3));
    pthread_barrier_wait(&b->done);
    __atomic_add_fetch(&b->sink, sink, __ATOMIC_RELAXED);
    return NULL;
}

/* One round: core-ns per lookup. */
static double round_ns(struct bench *b, int threads, int cpus) {
    pthread_t *t = calloc((size_t)threads, sizeof *t);
    pthread_barrier_init(&b->start, NULL, (unsigned)threads + 1);
    pthread_barrier_init(&b->done, NULL, (unsigned)threads + 1);
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, worker, b);
    pthread_barrier_wait(&b->start);
    const int64_t t0 = clock_now_ns();
    pthread_barrier_wait(&b->done);
    const int64_t t1 = clock_now_ns();
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&b->start);
    pthread_barrier_destroy(&b->done);
    free(t);
    const int used = threads < cpus ? threads : cpus;
    return (double)(t1 - t0) * used / ((double)threads * (double)b->lookups);
}

int cmd_bench_cache(int argc, char **argv) {
    const char *thread_list = "1,2,4,8,16,64";
    int64_t lookups = 200000, repeats = 5;
    const struct cli_flag flags[] = {
        {NULL, "--threads", CLI_STRING, &thread_list, "LIST",
         "thread counts (default 1,2,4,8,16,64)"},
        {NULL, "--lookups", CLI_INT, &lookups, "N",
         "lookups per thread per round (default 200000)"},
        {NULL, "--repeats", CLI_INT, &repeats, "R", "rounds per variant (default 5)"},
    };
    int rc = cli_parse("bench-cache", summary, argc, argv, flags, sizeof flags / sizeof flags[0]);
    if (rc != EXIT_OK)
        return rc < 0 ? EXIT_OK : rc;
    if (lookups < 1 || lookups > 100000000 || repeats < 1 || repeats > 1000) {
        fprintf(stderr, "convsel bench-cache: --lookups must be in 1..1e8, --repeats in 1..1000\n");
        return EXIT_USAGE;
    }
    const int cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
    init_keys();
    printf("warm lookups, core-ns per lookup (median [min, max] of %lld rounds), %d CPUs\n",
           (long long)repeats, cpus);
    printf("%8s %30s %30s %8s\n", "threads", "convsel cache", "global mutex", "ratio");
    char list[256];
    snprintf(list, sizeof list, "%s", thread_list);
    for (char *tok = strtok(list, ","); tok != NULL; tok = strtok(NULL, ",")) {
        char *end;
        const long threads = strtol(tok, &end, 10);
        if (*end != '\0' || threads < 1 || threads > 1024) {
            fprintf(stderr, "convsel bench-cache: --threads: '%s' is not in 1..1024\n", tok);
            return EXIT_USAGE;
        }
        struct bench safe = {.mutex_variant = false, .cache = cache_create(), .lookups = lookups};
        struct bench mtx = {.mutex_variant = true, .lookups = lookups};
        pthread_mutex_init(&mtx.mu, NULL);
        for (int k = 0; k < 4; k++) { /* warm both */
            lookup(&safe, k);
            lookup(&mtx, k);
        }
        double s[1000], m[1000];
        for (int r = 0; r < repeats; r++) { /* interleaved */
            s[r] = round_ns(&safe, (int)threads, cpus);
            m[r] = round_ns(&mtx, (int)threads, cpus);
        }
        const double sm = stats_median(s, (size_t)repeats), mm = stats_median(m, (size_t)repeats);
        char a[64], b[64];
        snprintf(a, sizeof a, "%.1f [%.1f, %.1f]", sm, s[0], s[repeats - 1]);
        snprintf(b, sizeof b, "%.1f [%.1f, %.1f]", mm, m[0], m[repeats - 1]);
        printf("%8ld %30s %30s %7.1fx\n", threads, a, b, mm / sm);
        fflush(stdout);
        cache_destroy(safe.cache);
        pthread_mutex_destroy(&mtx.mu);
    }
    return EXIT_OK;
}
