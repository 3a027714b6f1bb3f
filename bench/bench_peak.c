/* bench_peak.c -- the limit: fused multiply-add peak GFLOP/s on 1 thread and
 * on every online CPU, and read bandwidth over working sets from 16 KiB to
 * 256 MiB (src/util/peak.c, the figures `convsel tune` stores and the
 * model's estimates are floored by). Each figure is the best of three
 * rounds; run it on a quiet machine, and divide a solver's GFLOP/s by a
 * peak measured in the same run.
 *   build/bench_peak [THREADS...]   (default: 1 and all online CPUs) */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/cpu.h"
#include "util/peak.h"

int main(int argc, char **argv) {
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int threads[16], n = 0;
    for (int i = 1; i < argc && n < 16; i++)
        if ((threads[n] = atoi(argv[i])) >= 1)
            n++;
    if (n == 0) {
        threads[n++] = 1;
        if (cpus > 1)
            threads[n++] = (int)cpus;
    }
    printf("ISA %s, %ld online CPUs\n", cpu_isa_name(cpu_best_isa()), cpus);
    for (int i = 0; i < n; i++) {
        struct machine_limits l;
        peak_measure(threads[i], &l);
        printf("threads %d: FMA peak %.1f GFLOP/s\n", threads[i], l.peak_gflops);
        for (int k = 0; k < l.levels; k++)
            printf("threads %d: read bandwidth %9.0f KiB: %7.1f GB/s\n", threads[i],
                   l.level_bytes[k] / 1024, l.level_gbs[k]);
    }
    return 0;
}
