/* kernels.h -- the arithmetic the dense and recurrent layers spend their
 * time in, compiled for several ISAs with the best chosen at load time. */
#ifndef CONVSEL_NN_KERNELS_H
#define CONVSEL_NN_KERNELS_H

#include <stddef.h>

/* acc[j] += sum_i v[i] * w[i*cols + j] for j < cols: a row vector times a
 * row-major (rows x cols) matrix, accumulated. acc must not alias v or w. */
void nn_vec_mat_acc(const float *restrict v, size_t rows, const float *restrict w, size_t cols,
                    float *restrict acc);

#endif
