/* problem_flags.h -- the MIOpenDriver-style flags that describe a problem
 * (-n -c -H -W -k -y -x -p -q -u -v -l -j -g --layout), shared by every
 * subcommand that takes one, and their translation into descriptors. */
#ifndef CONVSEL_TOOLS_PROBLEM_FLAGS_H
#define CONVSEL_TOOLS_PROBLEM_FLAGS_H

#include "cli.h"
#include "convsel/convsel.h"
#include "core/problem.h"

struct problem_flags {
    int64_t n, c, h, w, k, y, x, pad_h, pad_w, stride_h, stride_w, dil_h, dil_w, groups;
    const char *layout;
};

#define PROBLEM_FLAG_COUNT 15

/* Defaults: ResNet-50's first 3x3 layer (1x64x56x56, 64 3x3 filters, pad 1). */
void problem_flags_defaults(struct problem_flags *pf);

/* The flags of a validated problem (NCHW/KCRS or NHWC/KRSC). */
void problem_flags_from(const struct conv_problem *p, struct problem_flags *pf);

/* Writes the PROBLEM_FLAG_COUNT flag entries bound to pf into out. */
void problem_flags_table(struct problem_flags *pf, struct cli_flag *out);

/* The descriptors of a problem. */
struct problem_descs {
    convsel_tensor_desc_t x, y;
    convsel_filter_desc_t w;
    convsel_conv_desc_t conv;
};

/* Creates and fills the descriptors, validating them through the library.
 * Returns EXIT_OK, or EXIT_USAGE after printing the library's message plus
 * the flag that sets the offending field. */
int problem_descs_create(const char *command, convsel_handle_t h, const struct problem_flags *pf,
                         struct problem_descs *d);

void problem_descs_destroy(struct problem_descs *d);

#endif /* CONVSEL_TOOLS_PROBLEM_FLAGS_H */
