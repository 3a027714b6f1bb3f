/* synthetic_db.c -- see synthetic_db.h. */
#include "synthetic_db.h"

#include <stdio.h>

#include "db/perfdb.h"

int synthetic_db_write(const char *path, const char *machine) {
    char err[PERFDB_ERROR_MAX];
    struct perfdb *db = perfdb_open(path, false, 0, err, sizeof err);
    if (!db) {
        fprintf(stderr, "synthetic_db: %s\n", err);
        return -1;
    }
    int made = 0;
    for (int c = 4; c <= 96; c += 4)
        for (int hw = 6; hw <= 30; hw += 3)
            for (int f = 1; f <= 5; f += 2) {
                struct perfdb_record r = {.runs = 5};
                r.problem = (struct conv_problem){.n = 1,
                                                  .c = c,
                                                  .h = hw,
                                                  .w = hw,
                                                  .k = 2 * c,
                                                  .r = f,
                                                  .s = f,
                                                  .pad_h = f / 2,
                                                  .pad_w = f / 2,
                                                  .stride_h = 1,
                                                  .stride_w = 1,
                                                  .dil_h = 1,
                                                  .dil_w = 1,
                                                  .groups = 1};
                if (problem_validate(&r.problem, err, sizeof err) != CONVSEL_STATUS_SUCCESS)
                    continue;
                const double work = problem_flops(&r.problem) * 1e-9;
                const char *names[2] = {"gemm_1x1", "im2col_gemm"};
                const double ms[2] = {f == 1 ? work : 3 * work, f == 1 ? 3 * work : work};
                snprintf(r.machine, sizeof r.machine, "%s", machine);
                for (int s = 0; s < 2; s++) {
                    snprintf(r.solver, sizeof r.solver, "%s", names[s]);
                    r.median_ms = r.min_ms = r.max_ms = ms[s];
                    if (!perfdb_put(db, &r, 1, err, sizeof err)) {
                        fprintf(stderr, "synthetic_db: %s\n", err);
                        perfdb_close(db);
                        return -1;
                    }
                }
                made++;
            }
    perfdb_close(db);
    return made;
}
