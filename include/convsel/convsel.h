/* convsel.h -- the public C API of convsel.
 *
 * convsel runs fp32 2-D forward convolutions on the CPU and chooses the
 * algorithm ("solver") for each problem. This header is the whole public
 * surface: everything else in the library is internal.
 *
 * Conventions (shared with the cuDNN / MIOpen / oneDNN C APIs):
 *  - Every function returns a convsel_status_t; results come back through
 *    trailing pointers named *_out.
 *  - Objects are opaque handles with _create / _destroy pairs; _destroy
 *    accepts NULL.
 *  - Dimensions are int64_t so that a negative value is reported as such
 *    instead of wrapping; byte counts and element counts are size_t.
 *  - Errors: a failing call on a handle stores a message on that handle
 *    naming the offending field and value (convsel_get_error_message).
 *    There is no global error state.
 *  - Descriptors are plain value holders. Setting one rejects only NULL
 *    pointers and unknown enum values; the meaning of the values (positive
 *    sizes, matching shapes, ...) is checked when the descriptors are used
 *    together with a handle, where the message can name the field.
 *  - Convolution is cross-correlation, as in deep-learning frameworks:
 *      y[n][k][p][q] = sum_{c,r,s} x[n][g*C'+c][p*u - pad_h + r*dil_h]
 *                                              [q*v - pad_w + s*dil_w]
 *                      * w[k][c][r][s]
 *    with C' = C / groups and g = k / (K / groups).
 *
 * Thread safety: a handle is used by one thread at a time ("one handle per
 * thread"); different handles may be used concurrently from different
 * threads. Descriptors are not modified by the calls that read them, so a
 * descriptor may be shared by threads as long as nobody sets it meanwhile.
 */
#ifndef CONVSEL_CONVSEL_H
#define CONVSEL_CONVSEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(CONVSEL_BUILDING_LIBRARY) && defined(__GNUC__)
#define CONVSEL_API __attribute__((visibility("default")))
#else
#define CONVSEL_API
#endif

#define CONVSEL_VERSION_MAJOR 0
#define CONVSEL_VERSION_MINOR 1
#define CONVSEL_VERSION_PATCH 0

/** Returns the library version as "MAJOR.MINOR.PATCH" (static text). */
CONVSEL_API const char *convsel_version(void);

/* ------------------------------------------------------------------ */
/* Status                                                               */
/* ------------------------------------------------------------------ */

/** Result of every call. Values are in bands: the caller is wrong
 *  (BAD_PARAM), the request is valid but not done here (NOT_SUPPORTED),
 *  the environment failed (ALLOC_FAILED, INTERNAL). */
typedef enum convsel_status {
    CONVSEL_STATUS_SUCCESS = 0,       /**< The call did what it says. */
    CONVSEL_STATUS_BAD_PARAM = 1,     /**< An argument is invalid; see the handle's message. */
    CONVSEL_STATUS_NOT_SUPPORTED = 2, /**< Valid, but this solver/build cannot do it. */
    CONVSEL_STATUS_ALLOC_FAILED = 3,  /**< Memory allocation failed. */
    CONVSEL_STATUS_INTERNAL = 4,      /**< A bug or an unexpected system failure. */
} convsel_status_t;

/** Returns a static, human-readable name for a status ("success",
 *  "bad parameter", ...). Unknown values give "unknown status". */
CONVSEL_API const char *convsel_status_string(convsel_status_t status);

/* ------------------------------------------------------------------ */
/* Handle                                                               */
/* ------------------------------------------------------------------ */

typedef struct convsel_handle *convsel_handle_t;
typedef const struct convsel_handle *const_convsel_handle_t;

/** Creates a handle.
 *  @param handle_out  Receives the new handle. The number of threads starts
 *                     at the number of online CPUs.
 *  @returns SUCCESS, BAD_PARAM (NULL handle_out) or ALLOC_FAILED. */
CONVSEL_API convsel_status_t convsel_handle_create(convsel_handle_t *handle_out);

/** Destroys a handle. NULL is accepted and ignored. The handle must not be
 *  in use by another call. */
CONVSEL_API void convsel_handle_destroy(convsel_handle_t handle);

/** The largest thread count a handle takes. */
#define CONVSEL_MAX_THREADS 256

/** Sets how many threads the handle's convolutions may use
 *  (1..CONVSEL_MAX_THREADS). convsel's own solvers run on a pool of that
 *  many threads (the caller's among them), started at the handle's first
 *  threaded call; between jobs its threads spin for up to
 *  CONVSEL_POOL_SPIN_US microseconds (default 50), then sleep.
 *  @returns SUCCESS or BAD_PARAM. */
CONVSEL_API convsel_status_t convsel_set_num_threads(convsel_handle_t handle, int num_threads);

/** Reads the handle's thread count into *num_threads_out. */
CONVSEL_API convsel_status_t convsel_get_num_threads(const_convsel_handle_t handle,
                                                     int *num_threads_out);

/** Declares whether the weights given to this handle's convolutions are
 *  constant (0: no, the default; 1: yes), as in inference with fixed
 *  weights. When they are, solvers that compute on the weights in another
 *  form (oneDNN's blocked and Winograd layouts, convsel's Winograd filter
 *  transform) keep that form between calls, keyed by the problem and the
 *  weights' address, instead of recomputing it on every call: the data at
 *  a weights address must then not change between calls. Every call of
 *  this function (either value) drops the forms kept so far: call it again
 *  after changing weights in place or reusing their memory.
 *  @returns SUCCESS, or BAD_PARAM (NULL handle, constant not 0 or 1). */
CONVSEL_API convsel_status_t convsel_set_weights_constant(convsel_handle_t handle, int constant);

/** Reads the handle's weights-constant setting (0 or 1) into *constant_out. */
CONVSEL_API convsel_status_t convsel_get_weights_constant(const_convsel_handle_t handle,
                                                          int *constant_out);

/** Returns the message of the last failing call on the handle, naming the
 *  offending field and value. Never NULL: "success" when no call has
 *  failed yet, a static text when handle is NULL. Valid until the next
 *  call on the handle; copy it to keep it. */
CONVSEL_API const char *convsel_get_error_message(const_convsel_handle_t handle);

/* ------------------------------------------------------------------ */
/* Descriptors                                                          */
/* ------------------------------------------------------------------ */

/** Memory order of an activation tensor. */
typedef enum convsel_layout {
    CONVSEL_LAYOUT_NCHW = 0, /**< batch, channel, row, column (W fastest). */
    CONVSEL_LAYOUT_NHWC = 1, /**< batch, row, column, channel (C fastest). */
} convsel_layout_t;

/** Memory order of a filter tensor (always packed). */
typedef enum convsel_filter_layout {
    CONVSEL_FILTER_KCRS = 0, /**< out-channel, in-channel, row, column. */
    CONVSEL_FILTER_KRSC = 1, /**< out-channel, row, column, in-channel. */
} convsel_filter_layout_t;

typedef struct convsel_tensor_desc *convsel_tensor_desc_t;
typedef const struct convsel_tensor_desc *const_convsel_tensor_desc_t;
typedef struct convsel_filter_desc *convsel_filter_desc_t;
typedef const struct convsel_filter_desc *const_convsel_filter_desc_t;
typedef struct convsel_conv_desc *convsel_conv_desc_t;
typedef const struct convsel_conv_desc *const_convsel_conv_desc_t;

/** Creates a tensor descriptor, initially an unset 4-D fp32 NCHW tensor
 *  of size 0 (unusable until set). @returns SUCCESS, BAD_PARAM, ALLOC_FAILED. */
CONVSEL_API convsel_status_t convsel_tensor_desc_create(convsel_tensor_desc_t *desc_out);
/** Destroys a tensor descriptor; NULL is ignored. */
CONVSEL_API void convsel_tensor_desc_destroy(convsel_tensor_desc_t desc);

/** Describes a packed 4-D fp32 tensor of logical shape n x c x h x w stored
 *  in the given layout. @returns SUCCESS, or BAD_PARAM for a NULL desc or an
 *  unknown layout. */
CONVSEL_API convsel_status_t convsel_tensor_desc_set_4d(convsel_tensor_desc_t desc,
                                                        convsel_layout_t layout, int64_t n,
                                                        int64_t c, int64_t h, int64_t w);

/** Describes a 4-D fp32 tensor with explicit element strides (e.g. a view
 *  into a larger buffer). The strides must respect the layout's order
 *  without overlap: for NCHW, stride_w >= 1, stride_h >= w*stride_w,
 *  stride_c >= h*stride_h, stride_n >= c*stride_c; for NHWC, stride_c >= 1,
 *  stride_w >= c*stride_c, stride_h >= w*stride_w, stride_n >= h*stride_h.
 *  This is checked on use. Solvers other than the reference may require
 *  packed tensors and report NOT_SUPPORTED otherwise. */
CONVSEL_API convsel_status_t convsel_tensor_desc_set_4d_strided(convsel_tensor_desc_t desc,
                                                                convsel_layout_t layout, int64_t n,
                                                                int64_t c, int64_t h, int64_t w,
                                                                int64_t stride_n, int64_t stride_c,
                                                                int64_t stride_h, int64_t stride_w);

/** Reads a tensor descriptor back. Any output pointer may be NULL. */
CONVSEL_API convsel_status_t convsel_tensor_desc_get_4d(
    const_convsel_tensor_desc_t desc, convsel_layout_t *layout_out, int64_t *n_out, int64_t *c_out,
    int64_t *h_out, int64_t *w_out, int64_t *stride_n_out, int64_t *stride_c_out,
    int64_t *stride_h_out, int64_t *stride_w_out);

/** Creates a filter descriptor (unset, size 0). */
CONVSEL_API convsel_status_t convsel_filter_desc_create(convsel_filter_desc_t *desc_out);
/** Destroys a filter descriptor; NULL is ignored. */
CONVSEL_API void convsel_filter_desc_destroy(convsel_filter_desc_t desc);

/** Describes a packed fp32 filter of k output channels, c input channels
 *  per group (C / groups), and r x s taps. */
CONVSEL_API convsel_status_t convsel_filter_desc_set(convsel_filter_desc_t desc,
                                                     convsel_filter_layout_t layout, int64_t k,
                                                     int64_t c, int64_t r, int64_t s);
/** Reads a filter descriptor back. Any output pointer may be NULL. */
CONVSEL_API convsel_status_t convsel_filter_desc_get(const_convsel_filter_desc_t desc,
                                                     convsel_filter_layout_t *layout_out,
                                                     int64_t *k_out, int64_t *c_out, int64_t *r_out,
                                                     int64_t *s_out);

/** Creates a convolution descriptor: pad 0, stride 1, dilation 1, groups 1. */
CONVSEL_API convsel_status_t convsel_conv_desc_create(convsel_conv_desc_t *desc_out);
/** Destroys a convolution descriptor; NULL is ignored. */
CONVSEL_API void convsel_conv_desc_destroy(convsel_conv_desc_t desc);

/** Sets zero padding, stride and dilation per spatial dimension and the
 *  group count. Checked on use: pad >= 0, stride >= 1, dilation >= 1,
 *  groups >= 1 dividing both input and output channels. */
CONVSEL_API convsel_status_t convsel_conv_desc_set(convsel_conv_desc_t desc, int64_t pad_h,
                                                   int64_t pad_w, int64_t stride_h,
                                                   int64_t stride_w, int64_t dilation_h,
                                                   int64_t dilation_w, int64_t groups);
/** Reads a convolution descriptor back. Any output pointer may be NULL. */
CONVSEL_API convsel_status_t convsel_conv_desc_get(const_convsel_conv_desc_t desc,
                                                   int64_t *pad_h_out, int64_t *pad_w_out,
                                                   int64_t *stride_h_out, int64_t *stride_w_out,
                                                   int64_t *dilation_h_out, int64_t *dilation_w_out,
                                                   int64_t *groups_out);

/** Computes the output shape of a forward convolution:
 *    oh = (h + 2*pad_h - dil_h*(r-1) - 1) / stride_h + 1   (likewise ow)
 *  after validating x_desc, w_desc and conv_desc together.
 *  @returns SUCCESS, or BAD_PARAM with a message naming the field (for
 *  example "conv_desc.groups = 3: must divide x_desc.c = 64"). */
CONVSEL_API convsel_status_t convsel_get_conv_output_shape(convsel_handle_t handle,
                                                           const_convsel_tensor_desc_t x_desc,
                                                           const_convsel_filter_desc_t w_desc,
                                                           const_convsel_conv_desc_t conv_desc,
                                                           int64_t *n_out, int64_t *k_out,
                                                           int64_t *oh_out, int64_t *ow_out);

/* ------------------------------------------------------------------ */
/* Problem key                                                          */
/* ------------------------------------------------------------------ */

/** Writes the canonical key of a problem, the string that caches and
 *  databases use to identify it (modelled on MIOpen's ProblemDescription
 *  key). Grammar (fields separated by '-', all integers in decimal):
 *
 *    key    = C "-" H "-" W "-" R "x" S "-" K "-" OH "-" OW "-" N "-"
 *             PADH "x" PADW "-" STRH "x" STRW "-" DILH "x" DILW "-"
 *             "g" G "-" LAYOUT "-FP32-F"
 *    LAYOUT = "NCHW"       (x, y NCHW; w KCRS)
 *           | "NHWC"       (x, y NHWC; w KRSC)
 *           | "NCHW_KRSC" | "NHWC_KCRS"   (mixed filter layout)
 *
 *  e.g. "64-56-56-3x3-64-56-56-1-1x1-1x1-1x1-g1-NCHW-FP32-F". The key
 *  describes shapes and layouts, not tensor strides. OH and OW are
 *  redundant and checked when a key is parsed.
 *
 *  @param key_out       Buffer for the NUL-terminated key; may be NULL when
 *                       key_capacity is 0.
 *  @param key_capacity  Size of key_out in bytes.
 *  @param key_len_out   Receives the key's length without the NUL (may be
 *                       NULL). If it is >= key_capacity the key was
 *                       truncated: call again with a larger buffer.
 *                       CONVSEL_PROBLEM_KEY_MAX always suffices.
 *  @returns SUCCESS or BAD_PARAM (invalid descriptors, y_desc NULL, key_out
 *  NULL with key_capacity > 0). */
CONVSEL_API convsel_status_t convsel_get_problem_key(
    convsel_handle_t handle, const_convsel_tensor_desc_t x_desc, const_convsel_filter_desc_t w_desc,
    const_convsel_conv_desc_t conv_desc, const_convsel_tensor_desc_t y_desc, char *key_out,
    size_t key_capacity, size_t *key_len_out);

/** A buffer of this many bytes holds any problem key. */
#define CONVSEL_PROBLEM_KEY_MAX 384

/* ------------------------------------------------------------------ */
/* Solvers and forward convolution                                      */
/* ------------------------------------------------------------------ */

/** Identifies a solver. Ids are indices into the solver registry: stable
 *  within one build of the library; solver names are stable across
 *  releases (use them in files and databases). */
typedef int32_t convsel_solver_id_t;

/** Let convsel choose the solver. */
#define CONVSEL_SOLVER_AUTO ((convsel_solver_id_t)-1)

/** Number of registered solvers; ids are 0 .. count-1. */
CONVSEL_API int32_t convsel_solver_count(void);

/** Name of a solver ("reference", "im2col_gemm", ...), or NULL for an
 *  unknown id. Static text. */
CONVSEL_API const char *convsel_solver_name(convsel_solver_id_t id);

/** Looks a solver up by name. @returns SUCCESS or BAD_PARAM (unknown name;
 *  the handle's message lists the known ones). */
CONVSEL_API convsel_status_t convsel_solver_find(convsel_handle_t handle, const char *name,
                                                 convsel_solver_id_t *id_out);

/** Tells whether a solver can run a problem. On NOT_SUPPORTED the handle's
 *  message gives the reason. @returns SUCCESS (applicable), NOT_SUPPORTED,
 *  or BAD_PARAM (invalid descriptors, NULL y_desc, or an id that is not a
 *  solver's: CONVSEL_SOLVER_AUTO included, since it always resolves to a
 *  solver that applies). */
CONVSEL_API convsel_status_t convsel_solver_is_applicable(convsel_handle_t handle,
                                                          convsel_solver_id_t solver,
                                                          const_convsel_tensor_desc_t x_desc,
                                                          const_convsel_filter_desc_t w_desc,
                                                          const_convsel_conv_desc_t conv_desc,
                                                          const_convsel_tensor_desc_t y_desc);

/** Returns the workspace in bytes that convsel_convolution_forward needs
 *  for this solver (or for the solver CONVSEL_SOLVER_AUTO resolves to).
 *  @returns SUCCESS, BAD_PARAM or NOT_SUPPORTED. */
CONVSEL_API convsel_status_t convsel_get_forward_workspace_size(
    convsel_handle_t handle, convsel_solver_id_t solver, const_convsel_tensor_desc_t x_desc,
    const_convsel_filter_desc_t w_desc, const_convsel_conv_desc_t conv_desc,
    const_convsel_tensor_desc_t y_desc, size_t *workspace_bytes_out);

/** Runs y = conv(x, w) with the given solver.
 *  @param solver           A solver id, or CONVSEL_SOLVER_AUTO.
 *  @param y_desc           Must have the shape convsel_get_conv_output_shape
 *                          gives and the same layout as x_desc.
 *  @param workspace        Scratch memory of at least the size
 *                          convsel_get_forward_workspace_size reports
 *                          (NULL when that size is 0).
 *  @returns SUCCESS; BAD_PARAM (invalid or mismatched descriptors, NULL
 *  data, workspace too small: the message names the required size);
 *  NOT_SUPPORTED (the solver does not apply: the message says why);
 *  ALLOC_FAILED. x, w and y must not overlap. */
CONVSEL_API convsel_status_t convsel_convolution_forward(
    convsel_handle_t handle, convsel_solver_id_t solver, const_convsel_tensor_desc_t x_desc,
    const float *x, const_convsel_filter_desc_t w_desc, const float *w,
    const_convsel_conv_desc_t conv_desc, const_convsel_tensor_desc_t y_desc, float *y,
    void *workspace, size_t workspace_bytes);

/* ------------------------------------------------------------------ */
/* Immediate mode: ranked solutions without running anything            */
/* ------------------------------------------------------------------ */

/** Where a solution's place in the ranking came from. */
typedef enum convsel_ranking_source {
    /** Measured on this machine signature (ISA, cores, the handle's thread
     *  count) by `convsel tune`: the performance database ($CONVSEL_DB). */
    CONVSEL_RANKED_BY_DATABASE = 0,
    /** Predicted by the trained model for this machine signature
     *  ($CONVSEL_MODEL_DIR, written by `convsel train`; off with
     *  CONVSEL_AI_HEUR=0). */
    CONVSEL_RANKED_BY_MODEL = 1,
    /** The hand-written rules: no time estimate. */
    CONVSEL_RANKED_BY_RULES = 2,
    /** Timed in this process by hybrid or exhaustive find mode
     *  (convsel_set_find_mode): the time of its run. */
    CONVSEL_RANKED_BY_MEASUREMENT = 3,
} convsel_ranking_source_t;

/** Returns "database", "model", "rules", "measured", or "unknown" (static
 *  text). */
CONVSEL_API const char *convsel_ranking_source_string(convsel_ranking_source_t source);

/** convsel_solution_t.flags: the model extrapolates on this problem (a
 *  feature is outside the range it was trained on). Its estimates are then
 *  guesses, and the first solver is the one whose worst cases in training
 *  were mildest for this kind of layer, not the model's pick; hybrid find
 *  mode measures such problems. */
#define CONVSEL_SOLUTION_EXTRAPOLATED 1u

/** One entry of a ranking. */
typedef struct convsel_solution {
    convsel_solver_id_t solver;
    const char *name;       /**< static text */
    double time_ms;         /**< estimated time; negative when the source has none. A
                                 model estimate is never below what the machine can do
                                 (FLOPs / peak, bytes / bandwidth, when the model knows
                                 the machine's limits). */
    size_t workspace_bytes; /**< what convsel_convolution_forward needs for it */
    convsel_ranking_source_t source;
    uint32_t flags; /**< CONVSEL_SOLUTION_EXTRAPOLATED, or 0 */
} convsel_solution_t;

/** Ranks the solvers applicable to the problem, best first, without running
 *  any: this machine's measurements from the performance database first
 *  (fastest first, with their measured medians), then the trained model's
 *  predictions (fastest first, with predicted times), then the rules'
 *  choice, then every other applicable solver (the reference last).
 *  convsel_convolution_forward with CONVSEL_SOLVER_AUTO runs the first.
 *  The database is read once per process, at the first ranking; a missing
 *  or unreadable database is never an error here (one warning on stderr
 *  when it is unreadable or CONVSEL_DB names a missing file); likewise the model.
 *  @param max_solutions  Capacity of solutions_out (>= 1).
 *  @param count_out      Receives the number written (>= 1).
 *  @returns SUCCESS, or BAD_PARAM (invalid descriptors, NULL outputs,
 *  max_solutions < 1). */
CONVSEL_API convsel_status_t convsel_get_solutions(
    convsel_handle_t handle, const_convsel_tensor_desc_t x_desc, const_convsel_filter_desc_t w_desc,
    const_convsel_conv_desc_t conv_desc, const_convsel_tensor_desc_t y_desc, int max_solutions,
    convsel_solution_t *solutions_out, int *count_out);

/** Writes one line on the ranking model into buf (NUL-terminated,
 *  truncated to cap): the file in use and what its metadata lacks, "off
 *  (CONVSEL_AI_HEUR=0)", or why there is none. *len_out (may be NULL) gets
 *  the full length. Loads the model if it was not loaded yet.
 *  @returns SUCCESS, or BAD_PARAM (buf NULL with cap > 0). */
CONVSEL_API convsel_status_t convsel_get_model_status(char *buf, size_t cap, size_t *len_out);

/** The same for the performance database: "PATH: N records: U used, ...",
 *  "PATH: absent", or why it is not used. Reads it if it was not read yet. */
CONVSEL_API convsel_status_t convsel_get_database_status(char *buf, size_t cap, size_t *len_out);

/* ------------------------------------------------------------------ */
/* Find modes                                                           */
/* ------------------------------------------------------------------ */

/** How CONVSEL_SOLVER_AUTO chooses in convsel_convolution_forward. */
typedef enum convsel_find_mode {
    /** The ranking (convsel_get_solutions) alone, nothing timed. The default. */
    CONVSEL_FIND_MODE_IMMEDIATE = 0,
    /** Where the ranking is unsure -- the model extrapolates, or its first
     *  two predictions are within 25 % of each other -- the first forward
     *  call of a problem in the process runs the top three candidates once
     *  each on the caller's data, timed, and that call and every later one
     *  (from any thread: the measurement is made exactly once per process,
     *  problem and thread count) use the fastest. Measured or sure problems
     *  cost nothing extra. */
    CONVSEL_FIND_MODE_HYBRID = 1,
    /** As hybrid, for every problem and with every applicable solver. */
    CONVSEL_FIND_MODE_EXHAUSTIVE = 2,
} convsel_find_mode_t;

/** Sets the handle's find mode. A new handle takes CONVSEL_FIND_MODE from
 *  the environment (immediate, hybrid or exhaustive; anything else gives
 *  one warning and immediate), else immediate.
 *  @returns SUCCESS, or BAD_PARAM (NULL handle, unknown mode). */
CONVSEL_API convsel_status_t convsel_set_find_mode(convsel_handle_t handle,
                                                   convsel_find_mode_t mode);

/** Reads the handle's find mode. */
CONVSEL_API convsel_status_t convsel_get_find_mode(const_convsel_handle_t handle,
                                                   convsel_find_mode_t *mode_out);

/** Returns "immediate", "hybrid", "exhaustive", or "unknown" (static text). */
CONVSEL_API const char *convsel_find_mode_string(convsel_find_mode_t mode);

/* ------------------------------------------------------------------ */
/* Exhaustive find                                                      */
/* ------------------------------------------------------------------ */

/** One solver's measurement from convsel_find_forward. */
typedef struct convsel_perf_result {
    convsel_solver_id_t solver;
    const char *name;       /**< static text */
    double time_ms;         /**< median of the timed runs */
    double time_min_ms;     /**< fastest timed run */
    double time_max_ms;     /**< slowest timed run: max/min shows the noise */
    int runs;               /**< timed runs behind the median */
    size_t workspace_bytes; /**< what convsel_convolution_forward needs for it */
} convsel_perf_result_t;

/** Times every solver applicable to the problem and returns them fastest
 *  first. The reference solver (an oracle, not a contender) is timed only
 *  when no other solver applies. Each solver runs once to warm up, then the solvers take turns
 *  (interleaved, so a burst of noise on a shared machine hits all of them)
 *  until each has at least 5 timed runs and the measurement has taken
 *  about 0.2 s or 50 rounds, whichever comes first; the median is reported.
 *  A solver more than 4x slower than the fastest after two rounds is timed
 *  no more (its result has runs = 2): its place is settled.
 *  The workspace is allocated internally; y receives the output of the
 *  last run.
 *  @param max_results  Capacity of results_out.
 *  @param count_out    Receives the number of results written (<= max).
 *  @returns SUCCESS, BAD_PARAM (invalid descriptors or NULL data),
 *  ALLOC_FAILED. */
CONVSEL_API convsel_status_t
convsel_find_forward(convsel_handle_t handle, const_convsel_tensor_desc_t x_desc, const float *x,
                     const_convsel_filter_desc_t w_desc, const float *w,
                     const_convsel_conv_desc_t conv_desc, const_convsel_tensor_desc_t y_desc,
                     float *y, convsel_perf_result_t *results_out, int max_results, int *count_out);

#ifdef __cplusplus
}
#endif

#endif /* CONVSEL_CONVSEL_H */
