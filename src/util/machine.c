/* machine.c -- see machine.h. */
#include "util/machine.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/cpu.h"

/* The online cores, read once per process: glibc's sysconf opens and
 * reads /sys/devices/system/cpu/online on every call, which was half of
 * a ranking's cost (bench_ranking: ~5 of 10.8 us). Threads that race on
 * the first call store the same value. */
int machine_cores(void) {
    static atomic_int cached;
    int cores = atomic_load_explicit(&cached, memory_order_relaxed);
    if (cores == 0) {
        const long online = sysconf(_SC_NPROCESSORS_ONLN);
        cores = online > 0 && online < 1000000 ? (int)online : 1;
        atomic_store_explicit(&cached, cores, memory_order_relaxed);
    }
    return cores;
}

void machine_signature(int threads, char *buf, size_t cap) {
    snprintf(buf, cap, "%s-%dc-%dt", cpu_isa_name(cpu_best_isa()), machine_cores(), threads);
}

/* A positive decimal count followed by `unit`, ending at end. */
static bool count(const char *s, const char *end, char unit, int *out) {
    if (s >= end - 1 || end[-1] != unit)
        return false;
    long v = 0;
    for (const char *c = s; c < end - 1; c++) {
        if (*c < '0' || *c > '9' || v > 1000000)
            return false;
        v = v * 10 + (*c - '0');
    }
    if (v < 1)
        return false;
    if (out)
        *out = (int)v;
    return true;
}

bool machine_signature_parse(const char *sig, char *isa, size_t isa_cap, int *cores, int *threads) {
    const char *d1 = sig ? strchr(sig, '-') : NULL;
    const char *d2 = d1 ? strchr(d1 + 1, '-') : NULL;
    if (!d1 || !d2 || d1 == sig || strchr(d2 + 1, '-') || !count(d1 + 1, d2, 'c', cores) ||
        !count(d2 + 1, d2 + 1 + strlen(d2 + 1), 't', threads))
        return false;
    if (isa && isa_cap)
        snprintf(isa, isa_cap, "%.*s", (int)(d1 - sig), sig);
    return true;
}
