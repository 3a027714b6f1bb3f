/* cpu.c -- see cpu.h. */
#include "util/cpu.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "util/env.h"

bool cpu_supports(enum cpu_isa isa) {
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    switch (isa) {
    case CPU_AVX512:
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    case CPU_AVX2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case CPU_GENERIC: return true;
    }
    return false;
#else
    return isa == CPU_GENERIC;
#endif
}

const void *cpu_variant(const void *const variants[3], enum cpu_isa isa) {
    return (unsigned)isa < 3 && cpu_supports(isa) ? variants[isa] : NULL;
}

const void *cpu_best_variant(const void *const variants[3]) {
    for (int isa = cpu_best_isa(); isa >= CPU_GENERIC; isa--)
        if (variants[isa] != NULL && cpu_supports((enum cpu_isa)isa))
            return variants[isa];
    return NULL;
}

/* CONVSEL_ISA=generic|avx2|avx512 caps the level (tests run the AVX2 and
 * generic kernels on an AVX-512 machine with it); a level this CPU lacks
 * is never chosen, whatever the variable says. */
static const char *const names[] = {"generic", "avx2", "avx512"};
static enum cpu_isa best;
static pthread_once_t best_once = PTHREAD_ONCE_INIT;

static enum cpu_isa hardware;

static void find_best(void) {
    hardware = cpu_supports(CPU_AVX512) ? CPU_AVX512
               : cpu_supports(CPU_AVX2) ? CPU_AVX2
                                        : CPU_GENERIC;
    best = hardware;
    static const char *const words[] = {"generic", "avx2", "avx512"};
    const int cap = env_choice("CONVSEL_ISA", words, 3, (int)best);
    if (cap < (int)best)
        best = (enum cpu_isa)cap;
}

void cpu_isa_describe(char *buf, size_t cap) {
    pthread_once(&best_once, find_best);
    if (best < hardware)
        snprintf(buf, cap, "%s (CONVSEL_ISA=%s; this CPU runs %s)", names[best], names[best],
                 names[hardware]);
    else if (best == CPU_AVX512)
        snprintf(buf, cap, "%s", names[best]);
    else
        snprintf(buf, cap, "%s (this CPU has no %s: the %s kernels)", names[best],
                 best == CPU_AVX2 ? "AVX-512" : "AVX2 and FMA", names[best]);
}

enum cpu_isa cpu_best_isa(void) {
    pthread_once(&best_once, find_best);
    return best;
}

const char *cpu_isa_name(enum cpu_isa isa) {
    return (unsigned)isa < 3 ? names[isa] : "?";
}

bool cpu_isa_parse(const char *name, enum cpu_isa *out) {
    for (int i = 0; name && i < 3; i++)
        if (strcmp(name, names[i]) == 0) {
            *out = (enum cpu_isa)i;
            return true;
        }
    return false;
}
