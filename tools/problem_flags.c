/* problem_flags.c -- see problem_flags.h. */
#include "problem_flags.h"

#include <stdio.h>
#include <string.h>

void problem_flags_defaults(struct problem_flags *pf) {
    *pf = (struct problem_flags){
        .n = 1,
        .c = 64,
        .h = 56,
        .w = 56,
        .k = 64,
        .y = 3,
        .x = 3,
        .pad_h = 1,
        .pad_w = 1,
        .stride_h = 1,
        .stride_w = 1,
        .dil_h = 1,
        .dil_w = 1,
        .groups = 1,
        .layout = "NCHW",
    };
}

void problem_flags_from(const struct conv_problem *p, struct problem_flags *pf) {
    *pf = (struct problem_flags){.n = p->n,
                                 .c = p->c,
                                 .h = p->h,
                                 .w = p->w,
                                 .k = p->k,
                                 .y = p->r,
                                 .x = p->s,
                                 .pad_h = p->pad_h,
                                 .pad_w = p->pad_w,
                                 .stride_h = p->stride_h,
                                 .stride_w = p->stride_w,
                                 .dil_h = p->dil_h,
                                 .dil_w = p->dil_w,
                                 .groups = p->groups,
                                 .layout = p->layout == CONVSEL_LAYOUT_NHWC ? "NHWC" : "NCHW"};
}

void problem_flags_table(struct problem_flags *pf, struct cli_flag *out) {
    const struct cli_flag t[PROBLEM_FLAG_COUNT] = {
        {"-n", "--batchsize", CLI_INT, &pf->n, "N", "batch size (default 1)"},
        {"-c", "--in_channels", CLI_INT, &pf->c, "C", "input channels (default 64)"},
        {"-H", "--in_h", CLI_INT, &pf->h, "H", "input height (default 56)"},
        {"-W", "--in_w", CLI_INT, &pf->w, "W", "input width (default 56)"},
        {"-k", "--out_channels", CLI_INT, &pf->k, "K", "output channels (default 64)"},
        {"-y", "--fil_h", CLI_INT, &pf->y, "R", "filter height (default 3)"},
        {"-x", "--fil_w", CLI_INT, &pf->x, "S", "filter width (default 3)"},
        {"-p", "--pad_h", CLI_INT, &pf->pad_h, "P", "zero padding, height (default 1)"},
        {"-q", "--pad_w", CLI_INT, &pf->pad_w, "Q", "zero padding, width (default 1)"},
        {"-u", "--conv_stride_h", CLI_INT, &pf->stride_h, "U", "stride, height (default 1)"},
        {"-v", "--conv_stride_w", CLI_INT, &pf->stride_w, "V", "stride, width (default 1)"},
        {"-l", "--dilation_h", CLI_INT, &pf->dil_h, "L", "dilation, height (default 1)"},
        {"-j", "--dilation_w", CLI_INT, &pf->dil_w, "J", "dilation, width (default 1)"},
        {"-g", "--group_count", CLI_INT, &pf->groups, "G", "groups (default 1)"},
        {NULL, "--layout", CLI_STRING, &pf->layout, "NCHW|NHWC",
         "tensor layout; the filter is KCRS for NCHW, KRSC for NHWC (default NCHW)"},
    };
    memcpy(out, t, sizeof t);
}

/* The flag that sets each descriptor field the library may name. */
static const struct {
    const char *field;
    const char *flag;
} field_flags[] = {
    {"x_desc.n", "-n"},
    {"x_desc.c", "-c"},
    {"x_desc.h", "-H"},
    {"x_desc.w", "-W"},
    {"w_desc.k", "-k"},
    {"w_desc.r", "-y"},
    {"w_desc.s", "-x"},
    {"w_desc.c", "-c / -g"},
    {"conv_desc.pad_h", "-p"},
    {"conv_desc.pad_w", "-q"},
    {"conv_desc.stride_h", "-u"},
    {"conv_desc.stride_w", "-v"},
    {"conv_desc.dilation_h", "-l"},
    {"conv_desc.dilation_w", "-j"},
    {"conv_desc.groups", "-g"},
    {"output height", "-H / -y / -p / -u / -l"},
    {"output width", "-W / -x / -q / -v / -j"},
    {"x_desc", "-n -c -H -W"},
    {"y_desc", "-n -k -H -W"},
    {"w_desc", "-k -c -y -x"},
};

static const char *flag_for(const char *message) {
    for (size_t i = 0; i < sizeof field_flags / sizeof field_flags[0]; i++) {
        size_t len = strlen(field_flags[i].field);
        if (strncmp(message, field_flags[i].field, len) == 0 &&
            (message[len] == ' ' || message[len] == ':'))
            return field_flags[i].flag;
    }
    return NULL;
}

int problem_descs_create(const char *command, convsel_handle_t h, const struct problem_flags *pf,
                         struct problem_descs *d) {
    memset(d, 0, sizeof *d);
    convsel_layout_t layout;
    if (strcmp(pf->layout, "NCHW") == 0) {
        layout = CONVSEL_LAYOUT_NCHW;
    } else if (strcmp(pf->layout, "NHWC") == 0) {
        layout = CONVSEL_LAYOUT_NHWC;
    } else {
        fprintf(stderr, "convsel %s: --layout '%s': must be NCHW or NHWC\n", command, pf->layout);
        return EXIT_USAGE;
    }
    if (convsel_tensor_desc_create(&d->x) || convsel_tensor_desc_create(&d->y) ||
        convsel_filter_desc_create(&d->w) || convsel_conv_desc_create(&d->conv)) {
        fprintf(stderr, "convsel %s: out of memory\n", command);
        problem_descs_destroy(d);
        return EXIT_FAILED;
    }
    /* The filter holds c / groups channels; when groups does not divide c
     * the library reports groups first, so the truncation here is harmless. */
    const int64_t wc = pf->groups != 0 ? pf->c / pf->groups : pf->c;
    convsel_tensor_desc_set_4d(d->x, layout, pf->n, pf->c, pf->h, pf->w);
    convsel_filter_desc_set(
        d->w, layout == CONVSEL_LAYOUT_NCHW ? CONVSEL_FILTER_KCRS : CONVSEL_FILTER_KRSC, pf->k, wc,
        pf->y, pf->x);
    convsel_conv_desc_set(d->conv, pf->pad_h, pf->pad_w, pf->stride_h, pf->stride_w, pf->dil_h,
                          pf->dil_w, pf->groups);
    int64_t n, k, oh, ow;
    if (convsel_get_conv_output_shape(h, d->x, d->w, d->conv, &n, &k, &oh, &ow) !=
        CONVSEL_STATUS_SUCCESS) {
        const char *msg = convsel_get_error_message(h);
        const char *flag = flag_for(msg);
        fprintf(stderr, "convsel %s: invalid problem: %s%s%s%s\n", command, msg,
                flag ? " (flag " : "", flag ? flag : "", flag ? ")" : "");
        problem_descs_destroy(d);
        return EXIT_USAGE;
    }
    convsel_tensor_desc_set_4d(d->y, layout, n, k, oh, ow);
    return EXIT_OK;
}

void problem_descs_destroy(struct problem_descs *d) {
    convsel_tensor_desc_destroy(d->x);
    convsel_tensor_desc_destroy(d->y);
    convsel_filter_desc_destroy(d->w);
    convsel_conv_desc_destroy(d->conv);
    memset(d, 0, sizeof *d);
}
