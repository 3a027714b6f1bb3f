/* machine.h -- the machine signature: what a measurement or a model is
 * valid for. "avx512-2c-2t" is the vector ISA, the online cores and the
 * threads the convolution runs on. Built and parsed here only, so the
 * database, the ranking and the trainer cannot disagree on its form. */
#ifndef CONVSEL_UTIL_MACHINE_H
#define CONVSEL_UTIL_MACHINE_H

#include <stdbool.h>
#include <stddef.h>

#define MACHINE_SIGNATURE_MAX 64

/* The online cores (at least 1), read once per process. */
int machine_cores(void);

/* This machine's signature for `threads` threads. */
void machine_signature(int threads, char *buf, size_t cap);

/* Splits a signature: the ISA part ("avx512", into isa, may be NULL), the
 * cores and the threads (may be NULL). False when sig is not of the form
 * <isa>-<C>c-<T>t with C, T >= 1. */
bool machine_signature_parse(const char *sig, char *isa, size_t isa_cap, int *cores, int *threads);

#endif
