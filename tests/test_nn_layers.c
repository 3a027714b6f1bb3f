/* test_nn_layers.c -- every supported layer on a small inline model, with
 * expected values worked out by hand (or, for the recurrent layers, by the
 * formulas of docs/model-runtime.md evaluated in double here). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn_test_models.h"
#include "testutil.h"

#define INPUT(name, shape)                                                                         \
    "{\"class_name\":\"InputLayer\",\"name\":\"" name "\",\"config\":{\"name\":\"" name            \
    "\",\"batch_input_shape\":[null," shape "]},\"inbound_nodes\":[]}"
#define LAYER(cls, name, config, from)                                                             \
    "{\"class_name\":\"" cls "\",\"name\":\"" name "\",\"config\":{\"name\":\"" name "\"" config   \
    "},\"inbound_nodes\":[[" from "]]}"
#define FROM(name) "[\"" name "\",0,0,{}]"
#define IO(name) "[[\"" name "\",0,0]]"

static bool close_to(const float *got, const double *want, size_t n, double tol) {
    bool ok = true;
    for (size_t i = 0; i < n; i++)
        if (!(fabs(got[i] - want[i]) <= tol * (1 + fabs(want[i])))) {
            fprintf(stderr, "  element %zu: got %.7g, want %.7g\n", i, got[i], want[i]);
            ok = false;
        }
    return ok;
}

/* Loads a one-input model, predicts x, compares with want. */
static void expect(const char *what, const char *json, const float *x, const double *want,
                   size_t n) {
    enum nn_status st;
    char err[NN_ERROR_MAX] = "";
    struct nn_model *m = load_json(json, &st, err, sizeof err);
    if (!CHECK(st == NN_OK)) {
        fprintf(stderr, "  %s: load failed: %s\n", what, err);
        return;
    }
    float y[64] = {0};
    CHECK(nn_shape_volume(nn_model_output_shape(m, 0)) == n);
    if (!CHECK(predict1(m, x, y) == NN_OK && close_to(y, want, n, 1e-5)))
        fprintf(stderr, "  in %s\n", what);
    nn_model_free(m);
}

static const char *one_layer(const char *in_shape, const char *layer, const char *out_shape,
                             const char *params) {
    static char layers[4096], ins[64], outs[64];
    snprintf(layers, sizeof layers, "%s,%s", INPUT("in", "%s"), layer);
    char tmp[4096];
    snprintf(tmp, sizeof tmp, layers, in_shape);
    snprintf(ins, sizeof ins, "[[%s]]", in_shape);
    snprintf(outs, sizeof outs, "[[%s]]", out_shape);
    return g2_model(tmp, IO("in"), IO("l"), ins, outs, params);
}

static void test_dense(void) {
    const char *p = "\"l\":{\"weights\":[1,2,3,4,5,6],\"bias\":[0.5,-1]}";
    const float x[6] = {1, 0, -1, 2, 1, 0};
    expect(
        "dense",
        one_layer("3", LAYER("Dense", "l", ",\"units\":2,\"use_bias\":true", FROM("in")), "2", p),
        x, (const double[]){-3.5, -5}, 2);
    /* rank 2: Dense maps the last axis of every row */
    expect("dense rank 2",
           one_layer("2,3", LAYER("Dense", "l", ",\"units\":2,\"use_bias\":true", FROM("in")),
                     "2,2", p),
           x, (const double[]){-3.5, -5, 2 + 3 + 0.5, 4 + 4 - 1}, 4);
    expect("dense relu",
           one_layer("3", LAYER("Dense", "l", ",\"units\":2,\"activation\":\"relu\"", FROM("in")),
                     "2", p),
           (const float[]){0, 1, 1}, (const double[]){8.5, 9}, 2);
    expect("time distributed dense",
           one_layer("2,3",
                     LAYER("TimeDistributed", "l",
                           ",\"layer\":{\"class_name\":\"Dense\",\"config\":{\"units\":2}}",
                           FROM("in")),
                     "2,2", p),
           x, (const double[]){-3.5, -5, 5.5, 7}, 4);
}

static void test_activations(void) {
    const float x[5] = {-2, -0.5f, 0, 0.5f, 7};
    const struct {
        const char *name;
        double want[5];
    } cases[] = {
        {"linear", {-2, -0.5, 0, 0.5, 7}},
        {"relu", {0, 0, 0, 0.5, 7}},
        {"relu6", {0, 0, 0, 0.5, 6}},
        {"hard_sigmoid", {0.1, 0.4, 0.5, 0.6, 1}}, /* tf.keras 2: 0.2x + 0.5 */
        {"softsign", {-2.0 / 3, -0.5 / 1.5, 0, 0.5 / 1.5, 7.0 / 8}},
        {"exponential", {exp(-2), exp(-0.5), 1, exp(0.5), exp(7)}},
        {"elu", {exp(-2) - 1, exp(-0.5) - 1, 0, 0.5, 7}},
        {"selu",
         {1.0507009873554805 * 1.6732632423543772 * (exp(-2) - 1),
          1.0507009873554805 * 1.6732632423543772 * (exp(-0.5) - 1), 0, 1.0507009873554805 * 0.5,
          1.0507009873554805 * 7}},
        {"sigmoid",
         {1 / (1 + exp(2)), 1 / (1 + exp(0.5)), 0.5, 1 / (1 + exp(-0.5)), 1 / (1 + exp(-7))}},
        {"tanh", {tanh(-2), tanh(-0.5), 0, tanh(0.5), tanh(7)}},
        {"softplus", {log1p(exp(-2)), log1p(exp(-0.5)), log(2), log1p(exp(0.5)), log1p(exp(7))}},
        {"swish",
         {-2 / (1 + exp(2)), -0.5 / (1 + exp(0.5)), 0, 0.5 / (1 + exp(-0.5)), 7 / (1 + exp(-7))}},
        {"gelu",
         {-2 * 0.5 * (1 + erf(-2 / sqrt(2))), -0.5 * 0.5 * (1 + erf(-0.5 / sqrt(2))), 0,
          0.5 * 0.5 * (1 + erf(0.5 / sqrt(2))), 7 * 0.5 * (1 + erf(7 / sqrt(2)))}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char layer[256];
        snprintf(layer, sizeof layer,
                 "{\"class_name\":\"Activation\",\"name\":\"l\",\"config\":{\"activation\":\"%s\"},"
                 "\"inbound_nodes\":[[[\"in\",0,0,{}]]]}",
                 cases[i].name);
        expect(cases[i].name, one_layer("5", layer, "5", ""), x, cases[i].want, 5);
    }
    /* softmax of (1, 2, 3) */
    expect("softmax",
           one_layer("3", LAYER("Activation", "l", ",\"activation\":\"softmax\"", FROM("in")), "3",
                     ""),
           (const float[]){1, 2, 3}, (const double[]){0.09003057, 0.24472847, 0.66524096}, 3);
    expect("softmax layer", one_layer("3", LAYER("Softmax", "l", "", FROM("in")), "3", ""),
           (const float[]){1, 2, 3}, (const double[]){0.09003057, 0.24472847, 0.66524096}, 3);
}

static void test_relu_family(void) {
    const float x[4] = {-1, 0.25f, 0.75f, 2};
    expect("ReLU params",
           one_layer("4",
                     LAYER("ReLU", "l", ",\"max_value\":1,\"negative_slope\":0.1,\"threshold\":0.5",
                           FROM("in")),
                     "4", ""),
           x, (const double[]){-0.15, -0.025, 0.75, 1}, 4);
    expect("ReLU plain",
           one_layer("4", LAYER("ReLU", "l", ",\"max_value\":null", FROM("in")), "4", ""), x,
           (const double[]){0, 0.25, 0.75, 2}, 4);
    expect("LeakyReLU",
           one_layer("4", LAYER("LeakyReLU", "l", ",\"alpha\":0.3", FROM("in")), "4", ""), x,
           (const double[]){-0.3, 0.25, 0.75, 2}, 4);
    expect("ELU", one_layer("4", LAYER("ELU", "l", ",\"alpha\":2", FROM("in")), "4", ""), x,
           (const double[]){2 * (exp(-1) - 1), 0.25, 0.75, 2}, 4);
    expect("PReLU shared axis",
           one_layer("2,2", LAYER("PReLU", "l", ",\"shared_axes\":[1]", FROM("in")), "2,2",
                     "\"l\":{\"alpha\":[0.1,0.2]}"),
           (const float[]){-1, -1, -2, 2}, (const double[]){-0.1, -0.2, -0.2, 2}, 4);
}

static const char *two_inputs(const char *a, const char *b, const char *layer, const char *out) {
    static char layers[4096], shapes[64], outs[64];
    snprintf(
        layers, sizeof layers,
        "{\"class_name\":\"InputLayer\",\"name\":\"a\",\"config\":{\"batch_input_shape\":[null,"
        "%s]},\"inbound_nodes\":[]},{\"class_name\":\"InputLayer\",\"name\":\"b\",\"config\":{"
        "\"batch_input_shape\":[null,%s]},\"inbound_nodes\":[]},%s",
        a, b, layer);
    snprintf(shapes, sizeof shapes, "[[%s],[%s]]", a, b);
    snprintf(outs, sizeof outs, "[[%s]]", out);
    return g2_model(layers, "[[\"a\",0,0],[\"b\",0,0]]", IO("l"), shapes, outs, "");
}

static void expect2(const char *what, const char *json, const float *a, const float *b,
                    const double *want, size_t n) {
    enum nn_status st;
    char err[NN_ERROR_MAX] = "";
    struct nn_model *m = load_json(json, &st, err, sizeof err);
    if (!CHECK(st == NN_OK)) {
        fprintf(stderr, "  %s: %s\n", what, err);
        return;
    }
    float y[64];
    void *scratch = malloc(nn_model_scratch_bytes(m) + 4);
    const float *in[2] = {a, b};
    float *out[1] = {y};
    CHECK(nn_model_predict(m, in, out, scratch, nn_model_scratch_bytes(m), err, sizeof err) ==
          NN_OK);
    if (!CHECK(close_to(y, want, n, 1e-6)))
        fprintf(stderr, "  in %s\n", what);
    free(scratch);
    nn_model_free(m);
}

static void test_merges(void) {
    const float a[4] = {1, 2, 3, 4}, b[2] = {10, 20}, c[4] = {4, 1, 5, 0};
#define MERGE(cls) LAYER(cls, "l", "", FROM("a") "," FROM("b"))
    expect2("add broadcast", two_inputs("2,2", "2", MERGE("Add"), "2,2"), a, b,
            (const double[]){11, 22, 13, 24}, 4);
    expect2("subtract", two_inputs("2,2", "2", MERGE("Subtract"), "2,2"), a, b,
            (const double[]){-9, -18, -7, -16}, 4);
    expect2("multiply", two_inputs("2,2", "2", MERGE("Multiply"), "2,2"), a, b,
            (const double[]){10, 40, 30, 80}, 4);
    expect2("average", two_inputs("2,2", "2", MERGE("Average"), "2,2"), a, b,
            (const double[]){5.5, 11, 6.5, 12}, 4);
    expect2("maximum", two_inputs("2,2", "2,2", MERGE("Maximum"), "2,2"), a, c,
            (const double[]){4, 2, 5, 4}, 4);
    expect2("minimum", two_inputs("2,2", "2,2", MERGE("Minimum"), "2,2"), a, c,
            (const double[]){1, 1, 3, 0}, 4);
    expect2("concatenate last axis",
            two_inputs("2,2", "2,1",
                       LAYER("Concatenate", "l", ",\"axis\":-1", FROM("a") "," FROM("b")), "2,3"),
            a, b, (const double[]){1, 2, 10, 3, 4, 20}, 6);
    expect2("concatenate axis 1",
            two_inputs("2,2", "1,2",
                       LAYER("Concatenate", "l", ",\"axis\":1", FROM("a") "," FROM("b")), "3,2"),
            a, b, (const double[]){1, 2, 3, 4, 10, 20}, 6);
}

static void test_norms_and_shapes(void) {
    expect("batchnorm",
           one_layer("2,2",
                     LAYER("BatchNormalization", "l", ",\"axis\":-1,\"epsilon\":0", FROM("in")),
                     "2,2",
                     "\"l\":{\"moving_mean\":[1,2],\"moving_variance\":[4,9],\"gamma\":[2,1],"
                     "\"beta\":[0,1]}"),
           (const float[]){3, 5, 1, 2}, (const double[]){2, 2, 0, 1}, 4);
    const double s = sqrt(1.25);
    expect("layernorm",
           one_layer("4",
                     LAYER("LayerNormalization", "l",
                           ",\"axis\":[-1],\"epsilon\":0,\"center\":false,\"scale\":false",
                           FROM("in")),
                     "4", ""),
           (const float[]){1, 2, 3, 4}, (const double[]){-1.5 / s, -0.5 / s, 0.5 / s, 1.5 / s}, 4);
    expect("layernorm per row",
           one_layer("2,2",
                     LAYER("LayerNormalization", "l", ",\"axis\":-1,\"epsilon\":0", FROM("in")),
                     "2,2", "\"l\":{\"gamma\":[1,2],\"beta\":[0,10]}"),
           (const float[]){1, 3, 5, 7}, (const double[]){-1, 12, -1, 12}, 4);
    const float x6[6] = {1, 2, 3, 4, 5, 6};
    expect("reshape",
           one_layer("6", LAYER("Reshape", "l", ",\"target_shape\":[2,-1]", FROM("in")), "2,3", ""),
           x6, (const double[]){1, 2, 3, 4, 5, 6}, 6);
    expect("flatten", one_layer("2,3", LAYER("Flatten", "l", "", FROM("in")), "6", ""), x6,
           (const double[]){1, 2, 3, 4, 5, 6}, 6);
    expect("permute",
           one_layer("2,3", LAYER("Permute", "l", ",\"dims\":[2,1]", FROM("in")), "3,2", ""), x6,
           (const double[]){1, 4, 2, 5, 3, 6}, 6);
    expect("repeat vector",
           one_layer("2", LAYER("RepeatVector", "l", ",\"n\":3", FROM("in")), "3,2", ""), x6,
           (const double[]){1, 2, 1, 2, 1, 2}, 6);
    expect("dropout is identity",
           one_layer("2", LAYER("Dropout", "l", ",\"rate\":0.5", FROM("in")), "2", ""), x6,
           (const double[]){1, 2}, 2);
}

static void test_embedding(void) {
    const char *json =
        one_layer("2", LAYER("Embedding", "l", ",\"input_dim\":3,\"output_dim\":2", FROM("in")),
                  "2,2", "\"l\":{\"weights\":[0,1,2,3,4,5]}");
    expect("embedding", json, (const float[]){2, 0}, (const double[]){4, 5, 0, 1}, 4);
    enum nn_status st;
    char err[NN_ERROR_MAX];
    struct nn_model *m = load_json(json, &st, err, sizeof err);
    float y[4];
    CHECK(m != NULL && predict1(m, (const float[]){3, 0}, y) == NN_ERR_ARGUMENT);
    CHECK(m != NULL && predict1(m, (const float[]){-1, 0}, y) == NN_ERR_ARGUMENT);
    CHECK(m != NULL && predict1(m, (const float[]){NAN, 0}, y) == NN_ERR_ARGUMENT);
    nn_model_free(m);
}

static double sig(double v) {
    return 1 / (1 + exp(-v));
}

static void test_recurrent(void) {
    /* LSTM, 1 unit, 1 feature, 2 steps, return_sequences, tanh / sigmoid. */
    const double W[4] = {0.5, -0.3, 0.8, 0.1}, U[4] = {0.2, 0.4, -0.6, 0.9},
                 B[4] = {0.1, 1.0, -0.2, 0.3};
    const float x[2] = {1.0f, -2.0f};
    double h = 0, c = 0, want[2];
    for (int t = 0; t < 2; t++) {
        double z[4];
        for (int g = 0; g < 4; g++)
            z[g] = x[t] * W[g] + h * U[g] + B[g];
        c = sig(z[1]) * c + sig(z[0]) * tanh(z[2]);
        h = sig(z[3]) * tanh(c);
        want[t] = h;
    }
    expect("lstm",
           one_layer("2,1",
                     LAYER("LSTM", "l",
                           ",\"units\":1,\"return_sequences\":true,\"recurrent_activation\":"
                           "\"sigmoid\",\"activation\":\"tanh\"",
                           FROM("in")),
                     "2,1",
                     "\"l\":{\"weights\":[0.5,-0.3,0.8,0.1],\"recurrent_weights\":[0.2,0.4,-0.6,"
                     "0.9],\"bias\":[0.1,1.0,-0.2,0.3]}"),
           x, want, 2);

    /* GRU reset_after = false, 1 unit, bias 3n. */
    const double GW[3] = {0.5, -0.4, 0.9}, GU[3] = {0.3, 0.2, -0.7}, GB[3] = {0.1, 0.2, -0.1};
    double gh = 0, gwant[2];
    for (int t = 0; t < 2; t++) {
        const double z = sig(x[t] * GW[0] + gh * GU[0] + GB[0]);
        const double r = sig(x[t] * GW[1] + gh * GU[1] + GB[1]);
        const double hh = tanh(x[t] * GW[2] + GB[2] + (r * gh) * GU[2]);
        gh = (1 - z) * hh + z * gh;
        gwant[t] = gh;
    }
    expect("gru reset_after=false",
           one_layer("2,1",
                     LAYER("GRU", "l",
                           ",\"units\":1,\"return_sequences\":true,\"reset_after\":false,"
                           "\"recurrent_activation\":\"sigmoid\"",
                           FROM("in")),
                     "2,1",
                     "\"l\":{\"weights\":[0.5,-0.4,0.9],\"recurrent_weights\":[0.3,0.2,-0.7],"
                     "\"bias\":[0.1,0.2,-0.1]}"),
           x, gwant, 2);
}

static void test_nested_and_keras3(void) {
    /* outer: in -> inner model (Dense 2, weights under "inner_d") -> Dense 1 */
    const char *inner =
        "{\"class_name\":\"Functional\",\"name\":\"inner\",\"config\":{\"name\":\"inner\","
        "\"layers\":[" INPUT("x", "2") "," LAYER(
            "Dense", "d", ",\"units\":2",
            FROM("x")) "],\"input_layers\":" IO("x") ",\"output_layers\":" IO("d") "},\"inbound_"
                                                                                   "nodes\":["
                                                                                   "[" FROM(
                                                                                       "in") "]]}";
    char layers[4096];
    snprintf(layers, sizeof layers, "%s,%s,%s", INPUT("in", "2"), inner,
             LAYER("Dense", "l", ",\"units\":1", "[\"inner\",1,0,{}]"));
    expect("nested model",
           g2_model(layers, IO("in"), IO("l"), "[[2]]", "[[1]]",
                    "\"inner_d\":{\"weights\":[1,0,0,1],\"bias\":[1,1]},"
                    "\"l\":{\"weights\":[2,3],\"bias\":[0]}"),
           (const float[]){1, 2}, (const double[]){2 * 2 + 3 * 3}, 1);

    /* Keras 3: {args} nodes with __keras_tensor__, batch_shape, x/6+0.5 hard_sigmoid. */
    const char *k3 =
        "{\"architecture\":{\"class_name\":\"Functional\",\"config\":{\"name\":\"f\",\"layers\":["
        "{\"class_name\":\"InputLayer\",\"name\":\"in\",\"config\":{\"batch_shape\":[null,2]},"
        "\"inbound_nodes\":[]},"
        "{\"class_name\":\"Activation\",\"name\":\"a\",\"config\":{\"activation\":\"hard_sigmoid\"}"
        ","
        "\"inbound_nodes\":[{\"args\":[{\"class_name\":\"__keras_tensor__\",\"config\":{\"shape\":"
        "[null,2],\"keras_history\":[\"in\",0,0]}}],\"kwargs\":{}}]},"
        "{\"class_name\":\"Add\",\"name\":\"s\",\"config\":{},\"inbound_nodes\":[{\"args\":[["
        "{\"class_name\":\"__keras_tensor__\",\"config\":{\"keras_history\":[\"a\",0,0]}},"
        "{\"class_name\":\"__keras_tensor__\",\"config\":{\"keras_history\":[\"in\",0,0]}}]],"
        "\"kwargs\":{}}]}],"
        "\"input_layers\":[\"in\",0,0],\"output_layers\":[[\"s\",0,0]]}},"
        "\"image_data_format\":\"channels_last\",\"input_shapes\":[[2]],\"output_shapes\":[[2]],"
        "\"trainable_params\":{}}";
    expect("keras 3 format", k3, (const float[]){2, -4}, (const double[]){2 / 6.0 + 0.5 + 2, -4},
           2);
}

static void test_sequential(void) {
    /* A Sequential config (no inbound_nodes, no input/output lists), nested
     * inside a functional model and at the top level. */
    const char *seq = "{\"class_name\":\"Sequential\",\"name\":\"s\",\"config\":{\"name\":\"s\","
                      "\"layers\":[{\"class_name\":\"InputLayer\",\"config\":{\"name\":\"si\","
                      "\"batch_input_shape\":[null,2]}},{\"class_name\":\"Dense\",\"config\":{"
                      "\"name\":\"d\",\"units\":1}},{\"class_name\":\"ReLU\",\"config\":{"
                      "\"name\":\"r\"}}]},\"inbound_nodes\":[[[\"in\",0,0,{}]]]}";
    char layers[4096];
    snprintf(layers, sizeof layers, "%s,%s", INPUT("in", "2"), seq);
    const char *json = g2_model(layers, IO("in"), "[[\"s\",1,0]]", "[[2]]", "[[1]]",
                                "\"s_d\":{\"weights\":[1,-1],\"bias\":[0]}");
    expect("nested sequential", json, (const float[]){3, 1}, (const double[]){2}, 1);
    expect("nested sequential, relu", json, (const float[]){1, 3}, (const double[]){0}, 1);
    const char *top =
        "{\"architecture\":{\"class_name\":\"Sequential\",\"config\":{\"name\":\"t\","
        "\"layers\":[{\"class_name\":\"InputLayer\",\"config\":{\"name\":\"ti\","
        "\"batch_input_shape\":[null,2]}},{\"class_name\":\"Dense\",\"config\":{\"name\":\"d\","
        "\"units\":1}}]}},\"input_shapes\":[[2]],\"output_shapes\":[[1]],"
        "\"trainable_params\":{\"d\":{\"weights\":[2,3],\"bias\":[1]}}}";
    expect("top-level sequential", top, (const float[]){1, 1}, (const double[]){6}, 1);
}

static void test_embedded_tests_and_queries(void) {
    /* A model whose embedded test passes, then one whose test fails. */
    const char *fmt =
        "{\"architecture\":{\"keras_version\":\"2.4.0\",\"config\":{\"name\":\"m\",\"layers\":"
        "[" INPUT("in", "2") "," LAYER(
            "Dense", "l", ",\"units\":1",
            FROM("in")) "],"
                        "\"input_layers\":" IO("in") ",\"output_layers\":" IO(
                            "l") "}},"
                                 "\"input_shapes\":[[2]],\"output_shapes\":[[1]],"
                                 "\"trainable_params\":{\"l\":{\"weights\":[\"AACAPwAAAEA=\"],"
                                 "\"bias\":[0.5]}},"
                                 "\"tests\":[{\"inputs\":[{\"shape\":[2],\"values\":[1,1]}],"
                                 "\"outputs\":[{\"shape\":[1],\"values\":[%s]}]}]}";
    char json[4096];
    snprintf(json, sizeof json, fmt, "3.5"); /* base64 weights = 1.0, 2.0 */
    enum nn_status st;
    char err[NN_ERROR_MAX] = "";
    struct nn_model *m = load_json(json, &st, err, sizeof err);
    if (CHECK(st == NN_OK)) {
        CHECK(nn_model_num_inputs(m) == 1 && nn_model_num_outputs(m) == 1);
        CHECK(nn_model_param_count(m) == 3);
        CHECK(nn_model_num_tests(m) == 1);
        CHECK(nn_model_input_shape(m, 0)->rank == 1 && nn_model_input_shape(m, 0)->dims[0] == 2);
        CHECK(nn_model_input_shape(m, 1) == NULL);
        CHECK(strcmp(nn_model_layer_summary(m), "InputLayer,Dense") == 0);
    }
    nn_model_free(m);
    snprintf(json, sizeof json, fmt, "3.6");
    m = load_json(json, &st, err, sizeof err);
    CHECK(m == NULL && st == NN_ERR_TEST_FAILED);
    CHECK(strstr(err, "test failed: test 0 output=0 element 0 value=3.5 target=3.5999") != NULL);
    /* ... and loads when the caller opts out of the tests */
    struct nn_load_options skip = {.skip_tests = true};
    CHECK(nn_model_load_memory(json, strlen(json), &skip, &m, err, sizeof err) == NN_OK);
    nn_model_free(m);
    /* within the tolerance: 3.50009 passes, the default epsilon is 1e-4 */
    snprintf(json, sizeof json, fmt, "3.50009");
    m = load_json(json, &st, err, sizeof err);
    CHECK(st == NN_OK);
    nn_model_free(m);
    nn_model_free(NULL);
}

int main(void) {
    test_dense();
    test_activations();
    test_relu_family();
    test_merges();
    test_norms_and_shapes();
    test_embedding();
    test_recurrent();
    test_nested_and_keras3();
    test_sequential();
    test_embedded_tests_and_queries();
    return test_finish("test_nn_layers");
}
