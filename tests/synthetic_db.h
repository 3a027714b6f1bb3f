/* synthetic_db.h -- a performance database with a known answer, for the
 * tests of training and of the model in immediate mode: 648 problems
 * (channels 4-96, sizes 6-30, filters 1, 3, 5) where gemm_1x1 takes the
 * problem's GFLOP in ms for 1x1 filters and 3x that otherwise, and
 * im2col_gemm the reverse. A model must learn "1x1 -> gemm_1x1". */
#ifndef CONVSEL_TESTS_SYNTHETIC_DB_H
#define CONVSEL_TESTS_SYNTHETIC_DB_H

#include <stdbool.h>

/* Writes the records for `machine` into the database at path (created if
 * absent). Returns the number of problems written, or -1 on error. */
int synthetic_db_write(const char *path, const char *machine);

#endif
