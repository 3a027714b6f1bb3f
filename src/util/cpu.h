/* cpu.h -- which vector ISA this CPU runs, detected once. Kernel files
 * build variants for each level and pick one with cpu_supports. */
#ifndef CONVSEL_UTIL_CPU_H
#define CONVSEL_UTIL_CPU_H

#include <stdbool.h>
#include <stddef.h>

enum cpu_isa {
    CPU_GENERIC = 0, /* whatever the compiler's baseline is */
    CPU_AVX2 = 1,    /* x86-64-v3: AVX2 + FMA */
    CPU_AVX512 = 2,  /* x86-64-v4: AVX-512 F/BW/DQ/VL */
};

bool cpu_supports(enum cpu_isa isa);

/* For kernel files: whether the x86 variants are built, and the function
 * attributes that compile a function for each level. */
#if defined(__x86_64__) && defined(__GNUC__)
#define CPU_X86_VARIANTS 1
#define CPU_TARGET_AVX2 __attribute__((target("arch=x86-64-v3")))
#define CPU_TARGET_AVX512 __attribute__((target("arch=x86-64-v4")))
#endif

/* The best level this CPU supports, capped by CONVSEL_ISA=generic|avx2
 * (for tests of the lower levels; never above what the CPU runs). */
enum cpu_isa cpu_best_isa(void);

/* The level the kernels run at and why, e.g. "avx512", "avx2 (CONVSEL_ISA=avx2;
 * this CPU runs avx512)", "avx2 (this CPU has no AVX-512: the avx2 kernels)". */
void cpu_isa_describe(char *buf, size_t cap);

/* "generic", "avx2", "avx512" */
const char *cpu_isa_name(enum cpu_isa isa);

/* Kernel tables: variants[isa] is the table compiled for that level (NULL
 * when not built). cpu_variant gives the one for isa, or NULL when this CPU
 * cannot run it; cpu_best_variant the best one this CPU runs. */
const void *cpu_variant(const void *const variants[3], enum cpu_isa isa);
const void *cpu_best_variant(const void *const variants[3]);

/* The initializer of such a table from a kernel file's three tables (the
 * x86 ones are left out where they are not built). */
#ifdef CPU_X86_VARIANTS
#define CPU_VARIANT_TABLE(generic, avx2, avx512)                                                   \
    { &(generic), &(avx2), &(avx512) }
#else
#define CPU_VARIANT_TABLE(generic, avx2, avx512)                                                   \
    { &(generic), NULL, NULL }
#endif

/* Parses a name from cpu_isa_name; false if unknown. */
bool cpu_isa_parse(const char *name, enum cpu_isa *out);

#endif
