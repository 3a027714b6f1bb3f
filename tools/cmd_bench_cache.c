/* cmd_bench_cache.c -- `convsel bench-cache`: the cost of a warm lookup in
 * convsel's model cache against a cache behind one global mutex (MIOpen's
 * fix: the unguarded map with a lock around find + insert), at several
 * thread counts, in the same run.
 *
 * Method: for each thread count, the two variants alternate for REPEATS
 * rounds; in each, T threads start at a barrier and do LOOKUPS lookups each
 * over 4 warm keys (convsel's bound once with cache_ref_init, as its
 * callers hold them; the mutex cache finds them by name). The figure is core-nanoseconds per
 * lookup: wall time x min(T, online CPUs) / total lookups, so a lookup that scales perfectly stays
 * flat as T grows past the core count. Medians of the rounds, with min and max. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "convsel/convsel.h"
#include "heur/model_cache.h"
#include "unguarded_cache.h"
#include "util/clock.h"
#include "util/machine.h"
#include "util/stats.h"

static const char summary[] =
    "Measures warm lookups in convsel's model cache (with keys bound once, and by name) and\n"
    "in a global-mutex cache (MIOpen's fix) at each thread count, alternating the three, and\n"
    "prints core-ns per lookup (wall x min(T, CPUs) / lookups): median, min and max over\n"
    "REPEATS rounds, and the mutex's ratio to each.";

static int dummy_value = 42;

static bool stub_loader(void *ctx, const struct cache_key *key, void **out,
                        void (**free_out)(void *), char *err, size_t cap) {
    (void)ctx, (void)key, (void)err, (void)cap;
    *out = &dummy_value;
    *free_out = NULL;
    return true;
}

enum variant { BOUND, BY_NAME, MUTEX };

struct bench {
    enum variant variant;
    struct model_cache *cache;
    struct cache_ref refs[4]; /* convsel: keys bound once, as its callers hold them */
    struct cache_key keys[4]; /* the mutex cache: plain keys */
    struct unguarded_cache map;
    pthread_mutex_t mu;
    pthread_barrier_t start;
    int64_t lookups;
    long sink;
    /* Earliest start and latest end over the workers: the main thread may be
     * descheduled at the barrier, so it cannot time the round itself. */
    _Atomic int64_t first_start, last_end;
};

static const char *const key_parts[4][3] = {
    {"gfx942", "tunanet", ""},
    {"gfx942", "metadata", ""},
    {"gfx90a", "ktn_encoder", "ConvHipIgemmGroupFwdXdlops"},
    {"gfx908", "ktn_decoder", "ConvAsm1x1U"},
};

static const void *lookup(struct bench *b, int k) {
    if (b->variant == BOUND)
        return cache_get_ref(b->cache, &b->refs[k], stub_loader, NULL)->value;
    if (b->variant == BY_NAME)
        return cache_get(b->cache, &b->keys[k], stub_loader, NULL)->value;
    pthread_mutex_lock(&b->mu);
    const void *v = unguarded_get(&b->map, &b->keys[k], stub_loader, NULL);
    pthread_mutex_unlock(&b->mu);
    return v;
}

static void *worker(void *arg) {
    struct bench *b = arg;
    long sink = 0;
    pthread_barrier_wait(&b->start);
    const int64_t t0 = clock_now_ns();
    for (int64_t i = 0; i < b->lookups; i++)
        sink += *(const int *)lookup(b, (int)(i & 3));
    const int64_t t1 = clock_now_ns();
    int64_t seen = atomic_load(&b->first_start);
    while (t0 < seen && !atomic_compare_exchange_weak(&b->first_start, &seen, t0)) {
    }
    seen = atomic_load(&b->last_end);
    while (t1 > seen && !atomic_compare_exchange_weak(&b->last_end, &seen, t1)) {
    }
    __atomic_add_fetch(&b->sink, sink, __ATOMIC_RELAXED);
    return NULL;
}

/* One round: core-ns per lookup. */
static double round_ns(struct bench *b, int threads, int cpus) {
    pthread_t *t = calloc((size_t)threads, sizeof *t);
    pthread_barrier_init(&b->start, NULL, (unsigned)threads);
    atomic_store(&b->first_start, INT64_MAX);
    atomic_store(&b->last_end, 0);
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, worker, b);
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&b->start);
    free(t);
    const int64_t t0 = atomic_load(&b->first_start), t1 = atomic_load(&b->last_end);
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
    /* The whole list is checked before anything runs. */
    long counts[64];
    int n_counts = 0;
    char list[256];
    if (snprintf(list, sizeof list, "%s", thread_list) >= (int)sizeof list) {
        fprintf(stderr, "convsel bench-cache: --threads: a list longer than %zu characters\n",
                sizeof list - 1);
        return EXIT_USAGE;
    }
    for (const char *tok = list;; tok++) {
        char *end;
        const long threads = strtol(tok, &end, 10);
        if (end == tok || (*end != ',' && *end != '\0') || threads < 1 ||
            threads > CONVSEL_MAX_THREADS || n_counts == 64) {
            fprintf(stderr,
                    "convsel bench-cache: --threads '%s': a comma-separated list of at most 64 "
                    "counts in 1..%d\n",
                    thread_list, CONVSEL_MAX_THREADS);
            return EXIT_USAGE;
        }
        counts[n_counts++] = threads;
        tok = end;
        if (*end == '\0')
            break;
    }
    const int cpus = machine_cores();
    printf("warm lookups, core-ns per lookup (median [min, max] of %lld rounds), %d CPUs\n",
           (long long)repeats, cpus);
    printf("%8s %26s %26s %26s %8s %8s\n", "threads", "convsel, bound key", "convsel, by name",
           "global mutex", "mutex/bd", "mutex/nm");
    for (int c = 0; c < n_counts; c++) {
        const long threads = counts[c];
        struct bench v[3] = {{.variant = BOUND, .cache = cache_create(), .lookups = lookups},
                             {.variant = BY_NAME, .cache = cache_create(), .lookups = lookups},
                             {.variant = MUTEX, .lookups = lookups}};
        pthread_mutex_init(&v[MUTEX].mu, NULL);
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < 4; k++) {
                if (i == BOUND)
                    cache_ref_init(v[i].cache, &v[i].refs[k], key_parts[k][0], key_parts[k][1],
                                   key_parts[k][2]);
                cache_key_init(&v[i].keys[k], key_parts[k][0], key_parts[k][1], key_parts[k][2]);
                lookup(&v[i], k); /* warm */
            }
        double t[3][1000], med[3];
        for (int r = 0; r < repeats; r++) /* interleaved */
            for (int i = 0; i < 3; i++)
                t[i][r] = round_ns(&v[i], (int)threads, cpus);
        char cell[3][64];
        for (int i = 0; i < 3; i++) {
            med[i] = stats_median(t[i], (size_t)repeats);
            snprintf(cell[i], sizeof cell[i], "%.1f [%.1f, %.1f]", med[i], t[i][0],
                     t[i][repeats - 1]);
        }
        printf("%8ld %26s %26s %26s %7.1fx %7.1fx\n", threads, cell[0], cell[1], cell[2],
               med[MUTEX] / med[BOUND], med[MUTEX] / med[BY_NAME]);
        fflush(stdout);
        cache_destroy(v[BOUND].cache);
        cache_destroy(v[BY_NAME].cache);
        pthread_mutex_destroy(&v[MUTEX].mu);
    }
    return EXIT_OK;
}
