/* model.h -- the frugally-deep (Keras JSON) model runtime: load a model
 * file into an immutable model, then run predictions on it.
 *
 * Lifetime and threads: nn_model_load_* returns a model that is never
 * modified again. Any number of threads may call nn_model_predict on the
 * same model at once; all mutable state of a prediction lives in the
 * caller's scratch buffer (nn_model_scratch_bytes). nn_model_free must not
 * race with predictions.
 *
 * Untrusted input: a model file may be anything. Every failure returns an
 * error code and a message naming what is wrong (layer, key, sizes); sizes
 * are bounded (NN_LIMIT_*) so no file can make the loader allocate without
 * bound, and the graph is checked for cycles and dangling references.
 *
 * Supported layers and the exact formulas: docs/model-runtime.md.
 */
#ifndef CONVSEL_NN_MODEL_H
#define CONVSEL_NN_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#define NN_MAX_RANK 5
#define NN_ERROR_MAX 512

/* Bounds on what a model file may declare. */
#define NN_LIMIT_FILE_BYTES (256u << 20)  /* the JSON text */
#define NN_LIMIT_LAYERS 4096              /* per graph */
#define NN_LIMIT_NODES 65536              /* (layer, call) pairs evaluated */
#define NN_LIMIT_TENSOR_ELEMS (1u << 26)  /* one tensor */
#define NN_LIMIT_SCRATCH_ELEMS (1u << 28) /* all intermediate tensors */
#define NN_LIMIT_NESTING 16               /* nested models */

/* A tensor shape without the batch axis: rank 1..5, dims in Keras order
 * (row-major, last axis fastest). Rank is part of the shape: (4) != (1, 4). */
struct nn_shape {
    int rank;
    size_t dims[NN_MAX_RANK];
};

size_t nn_shape_volume(const struct nn_shape *s);
bool nn_shape_equal(const struct nn_shape *a, const struct nn_shape *b);
/* Writes "(d1, d2, ...)" into buf. */
void nn_shape_format(const struct nn_shape *s, char *buf, size_t cap);

enum nn_status {
    NN_OK = 0,
    NN_ERR_IO,          /* the file could not be read */
    NN_ERR_FORMAT,      /* malformed JSON or a malformed model */
    NN_ERR_UNSUPPORTED, /* well-formed, but a layer/activation/option is not implemented */
    NN_ERR_TEST_FAILED, /* an embedded test did not reproduce */
    NN_ERR_NOMEM,
    NN_ERR_ARGUMENT,  /* a bad argument to predict */
    NN_ERR_NOT_MODEL, /* valid JSON without "architecture" (e.g. a metadata file) */
};

struct nn_model;

struct nn_load_options {
    bool skip_tests;    /* do not run the file's embedded tests */
    float test_epsilon; /* absolute tolerance; 0 means the default 1e-4 */
};

/* Loads a model from a JSON file / memory. On success *model_out owns a new
 * model. On failure *model_out is NULL and err (if non-NULL) holds a message.
 * A JSON object without "architecture" (e.g. a metadata file) fails with
 * NN_ERR_NOT_MODEL and the message "not a model (no architecture)". */
enum nn_status nn_model_load_file(const char *path, const struct nn_load_options *options,
                                  struct nn_model **model_out, char *err, size_t err_cap);
enum nn_status nn_model_load_memory(const char *json, size_t len,
                                    const struct nn_load_options *options,
                                    struct nn_model **model_out, char *err, size_t err_cap);

/* Frees a model; NULL is ignored. */
void nn_model_free(struct nn_model *m);

size_t nn_model_num_inputs(const struct nn_model *m);
size_t nn_model_num_outputs(const struct nn_model *m);
const struct nn_shape *nn_model_input_shape(const struct nn_model *m, size_t i);
const struct nn_shape *nn_model_output_shape(const struct nn_model *m, size_t i);
/* Number of float parameters (all weight arrays). */
size_t nn_model_param_count(const struct nn_model *m);
/* Embedded tests the file carries (run at load unless skipped). */
size_t nn_model_num_tests(const struct nn_model *m);
/* Distinct layer class names, comma-separated, in first-use order. */
const char *nn_model_layer_summary(const struct nn_model *m);

/* Bytes of scratch one prediction needs. */
size_t nn_model_scratch_bytes(const struct nn_model *m);

/* Runs one prediction. inputs[i] holds nn_shape_volume(input_shape(i))
 * floats; outputs[i] receives nn_shape_volume(output_shape(i)) floats.
 * scratch must hold nn_model_scratch_bytes(m) bytes, aligned for float, and
 * must not be shared with a concurrent call. */
enum nn_status nn_model_predict(const struct nn_model *m, const float *const *inputs,
                                float *const *outputs, void *scratch, size_t scratch_bytes,
                                char *err, size_t err_cap);

#endif /* CONVSEL_NN_MODEL_H */
