/* test_nn_errors.c -- malformed and hostile model files: each gets its own
 * specific error, never a crash (this file also runs under ASan+UBSan). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn_test_models.h"
#include "testutil.h"

#define IN2                                                                                        \
    "{\"class_name\":\"InputLayer\",\"name\":\"in\",\"config\":{\"batch_input_shape\":[null,2]},"  \
    "\"inbound_nodes\":[]}"
#define DENSE(name, cfg, from)                                                                     \
    "{\"class_name\":\"Dense\",\"name\":\"" name "\",\"config\":{\"units\":1" cfg                  \
    "},\"inbound_nodes\":[[[\"" from "\",0,0,{}]]]}"
#define LAYER1(cls, cfg)                                                                           \
    "{\"class_name\":\"" cls "\",\"name\":\"l\",\"config\":{" cfg                                  \
    "},\"inbound_nodes\":[[[\"in\",0,0,{}]]]}"
#define W "\"d\":{\"weights\":[1,2],\"bias\":[0]}"
#define IO(n) "[[\"" n "\",0,0]]"

static void bad(const char *what, const char *json, enum nn_status want, const char *message) {
    char err[NN_ERROR_MAX] = "";
    struct nn_model *m = NULL;
    enum nn_status st = nn_model_load_memory(json, strlen(json), NULL, &m, err, sizeof err);
    if (!CHECK(st == want && m == NULL))
        fprintf(stderr, "  %s: status %d, want %d (%s)\n", what, st, want, err);
    if (!CHECK(strstr(err, message) != NULL))
        fprintf(stderr, "  %s: message '%s' lacks '%s'\n", what, err, message);
    nn_model_free(m);
}

/* A model with the usual input "in" (2 features) and one output. */
static void bad_model(const char *what, const char *layers, const char *out, const char *params,
                      const char *in_shapes, enum nn_status want, const char *message) {
    bad(what, g2_model(layers, IO("in"), out, in_shapes, "[[1]]", params), want, message);
}

static void test_json_level(void) {
    bad("empty", "", NN_ERR_FORMAT, "malformed JSON");
    bad("truncated", "{\"architecture\":{\"config\":{\"layers\":[", NN_ERR_FORMAT, "truncated");
    bad("not an object", "[1,2]", NN_ERR_FORMAT, "not an object");
    bad("metadata", "{\"num_solvers\":3}", NN_ERR_NOT_MODEL, "not a model (no architecture)");
    bad("config missing", "{\"architecture\":{}}", NN_ERR_FORMAT, "architecture.config");
    bad("layers not array", "{\"architecture\":{\"config\":{\"layers\":5}}}", NN_ERR_FORMAT,
        "config.layers must be an array");
    bad("no layers", "{\"architecture\":{\"config\":{\"layers\":[]}}}", NN_ERR_FORMAT, "0 layers");
    bad("channels_first",
        "{\"architecture\":{\"config\":{}},\"image_data_format\":\"channels_first\"}",
        NN_ERR_UNSUPPORTED, "only channels_last");
    bad("layer without class", "{\"architecture\":{\"config\":{\"layers\":[{\"name\":\"x\"}]}}}",
        NN_ERR_FORMAT, "layer #0: needs class_name and name");
    bad("params not object",
        "{\"architecture\":{\"config\":{\"layers\":[]}},\"trainable_params\":[]}", NN_ERR_FORMAT,
        "trainable_params must be an object");
    /* deep nesting of JSON is bounded by cJSON's nesting limit */
    static char deep[20000];
    memset(deep, '[', 10000);
    deep[10000] = '\0';
    bad("deep JSON", deep, NN_ERR_FORMAT, "malformed JSON");
}

static void test_layers_and_params(void) {
    bad_model("unknown layer",
              IN2 ",{\"class_name\":\"Conv2D\",\"name\":\"c\",\"config\":{},\"inbound_nodes\":[]}",
              IO("in"), "", "[[2]]", NN_ERR_UNSUPPORTED,
              "unsupported layer type Conv2D in layer c");
    bad_model("time distributed conv",
              IN2 "," LAYER1("TimeDistributed", "\"layer\":{\"class_name\":\"Conv1D\"}"), IO("l"),
              "", "[[2]]", NN_ERR_UNSUPPORTED, "TimeDistributed(Conv1D) in layer l");
    bad_model("unknown activation", IN2 "," DENSE("d", ",\"activation\":\"mish\"", "in"), IO("d"),
              W, "[[2]]", NN_ERR_UNSUPPORTED, "unknown activation type: mish");
    bad_model("activation object", IN2 "," DENSE("d", ",\"activation\":{\"x\":1}", "in"), IO("d"),
              W, "[[2]]", NN_ERR_UNSUPPORTED, "activation must be a string");
    bad_model("units wrong type", IN2 "," LAYER1("Dense", "\"units\":\"abc\""), IO("l"), W, "[[2]]",
              NN_ERR_FORMAT, "layer l: config key 'units' must be an integer");
    bad_model("units missing", IN2 "," LAYER1("Dense", ""), IO("l"), W, "[[2]]", NN_ERR_FORMAT,
              "layer l: config key 'units' is missing");
    bad_model("weights missing", IN2 "," DENSE("d", "", "in"), IO("d"), "", "[[2]]", NN_ERR_FORMAT,
              "layer d: parameter 'weights' is missing");
    bad_model("bad base64", IN2 "," DENSE("d", "", "in"), IO("d"),
              "\"d\":{\"weights\":[\"AAA*AAAA\"],\"bias\":[0]}", "[[2]]", NN_ERR_FORMAT,
              "parameter 'weights': invalid base64");
    bad_model("base64 chunk not string", IN2 "," DENSE("d", "", "in"), IO("d"),
              "\"d\":{\"weights\":[\"AAAA\",5],\"bias\":[0]}", "[[2]]", NN_ERR_FORMAT,
              "chunk 1 is not a string");
    bad_model("base64 not floats", IN2 "," DENSE("d", "", "in"), IO("d"),
              "\"d\":{\"weights\":[\"AAAAAAA=\"],\"bias\":[0]}", "[[2]]", NN_ERR_FORMAT,
              "invalid float vector data (5 bytes");
    bad_model("weights an object", IN2 "," DENSE("d", "", "in"), IO("d"),
              "\"d\":{\"weights\":{},\"bias\":[0]}", "[[2]]", NN_ERR_FORMAT,
              "invalid float array format");
    bad_model("weights mixed", IN2 "," DENSE("d", "", "in"), IO("d"),
              "\"d\":{\"weights\":[1,\"x\"],\"bias\":[0]}", "[[2]]", NN_ERR_FORMAT,
              "element 1 is not a number");
    bad_model("weight not finite", IN2 "," DENSE("d", "", "in"), IO("d"),
              "\"d\":{\"weights\":[\"AACAfwAAAAA=\"],\"bias\":[0]}", "[[2]]", NN_ERR_FORMAT,
              "element 0 is not finite");
    bad_model("bias size", IN2 "," DENSE("d", "", "in"), IO("d"),
              "\"d\":{\"weights\":[1,2],\"bias\":[0,1]}", "[[2]]", NN_ERR_FORMAT,
              "size of bias (2) does not match units (1)");
    bad_model("kernel vs input", IN2 "," DENSE("d", "", "in"), IO("d"),
              "\"d\":{\"weights\":[1,2,3],\"bias\":[0]}", "[[2]]", NN_ERR_FORMAT,
              "input depth 2 does not match the kernel (3 x 1)");
    bad_model("lstm recurrent size", IN2 "," LAYER1("LSTM", "\"units\":1"), IO("l"),
              "\"l\":{\"weights\":[1,2,3,4],\"recurrent_weights\":[1,2,3],\"bias\":[0,0,0,0]}",
              "[[1,1]]", NN_ERR_FORMAT, "recurrent kernel has 3 weights, expected");
    bad_model("gru bias vs reset_after", IN2 "," LAYER1("GRU", "\"units\":1,\"reset_after\":true"),
              IO("l"), "\"l\":{\"weights\":[1,2,3],\"recurrent_weights\":[1,2,3],\"bias\":[0,0,0]}",
              "[[1,1]]", NN_ERR_FORMAT, "GRU bias size must match reset_after");
    bad_model("lstm go_backwards", IN2 "," LAYER1("LSTM", "\"units\":1,\"go_backwards\":true"),
              IO("l"), "", "[[1,1]]", NN_ERR_UNSUPPORTED, "go_backwards = true is not supported");
    bad_model("lstm on rank 1", IN2 "," LAYER1("LSTM", "\"units\":1"), IO("l"),
              "\"l\":{\"weights\":[1,2,3,4,5,6,7,8],\"recurrent_weights\":[1,2,3,4],\"bias\":[0,"
              "0,0,0]}",
              "[[2]]", NN_ERR_FORMAT, "input must be (timesteps, features)");
    bad_model("embedding size", IN2 "," LAYER1("Embedding", "\"input_dim\":3,\"output_dim\":2"),
              IO("l"), "\"l\":{\"weights\":[1,2,3]}", "[[2]]", NN_ERR_FORMAT,
              "embedding has 3 weights, expected input_dim*output_dim = 3*2");
    bad_model(
        "batchnorm sizes", IN2 "," LAYER1("BatchNormalization", "\"axis\":-1"), IO("l"),
        "\"l\":{\"moving_mean\":[0,0],\"moving_variance\":[1],\"gamma\":[1,1],\"beta\":[0,0]}",
        "[[2]]", NN_ERR_FORMAT, "sizes differ");
    bad_model("batchnorm axis", IN2 "," LAYER1("BatchNormalization", "\"axis\":3"), IO("l"),
              "\"l\":{\"moving_mean\":[0,0],\"moving_variance\":[1,1],\"gamma\":[1,1],\"beta\":[0,"
              "0]}",
              "[[2]]", NN_ERR_FORMAT, "invalid axis for rank 1");
    bad_model("softmax axis", IN2 "," LAYER1("Softmax", "\"axis\":1"), IO("l"), "", "[[2]]",
              NN_ERR_UNSUPPORTED, "Softmax only over the last axis");
    bad_model("permute dims", IN2 "," LAYER1("Permute", "\"dims\":[1,1]"), IO("l"), "", "[[2]]",
              NN_ERR_FORMAT, "dims must be a permutation");
    bad_model("absurd repeat", IN2 "," LAYER1("RepeatVector", "\"n\":1e15"), IO("l"), "", "[[2]]",
              NN_ERR_FORMAT, "config key 'n' must be an integer");
    bad_model("repeat too large", IN2 "," LAYER1("RepeatVector", "\"n\":60000000"), IO("l"), "",
              "[[2]]", NN_ERR_FORMAT, "out of bounds");
    bad_model("reshape mismatch", IN2 "," LAYER1("Reshape", "\"target_shape\":[3]"), IO("l"), "",
              "[[2]]", NN_ERR_FORMAT, "cannot reshape 2 values");
    bad_model("reshape two unknowns", IN2 "," LAYER1("Reshape", "\"target_shape\":[-1,-1]"),
              IO("l"), "", "[[2]]", NN_ERR_FORMAT, "target_shape has 2 unknown sizes");
    bad_model("merge one input", IN2 "," LAYER1("Add", ""), IO("l"), "", "[[2]]", NN_ERR_FORMAT,
              "called with 1 inputs");
}

static void test_graph(void) {
    bad_model("dangling", IN2 "," DENSE("d", "", "nowhere"), IO("d"), W, "[[2]]", NN_ERR_FORMAT,
              "dangling layer reference: nowhere");
    bad_model("dangling output", IN2 "," DENSE("d", "", "in"), IO("zz"), W, "[[2]]", NN_ERR_FORMAT,
              "output_layers: dangling layer reference: zz");
    bad_model("cycle", IN2 "," DENSE("d", "", "e") "," DENSE("e", "", "d"), IO("d"),
              W ",\"e\":{\"weights\":[1],\"bias\":[0]}", "[[2]]", NN_ERR_FORMAT, "cycle");
    bad_model("self loop", IN2 "," DENSE("d", "", "d"), IO("d"), W, "[[2]]", NN_ERR_FORMAT,
              "cycle through layer d");
    bad_model("node index", IN2 "," DENSE("d", "", "in"), "[[\"d\",3,0]]", W, "[[2]]",
              NN_ERR_FORMAT, "invalid node index 3 of layer d");
    bad_model("tensor index", IN2 "," DENSE("d", "", "in"), "[[\"d\",0,2]]", W, "[[2]]",
              NN_ERR_FORMAT, "invalid tensor index 2");
    bad_model("duplicate names", IN2 "," DENSE("d", "", "in") "," DENSE("d", "", "in"), IO("d"), W,
              "[[2]]", NN_ERR_FORMAT, "layer names must be unique (d repeats)");
    bad_model("node not a list",
              IN2 ",{\"class_name\":\"Dense\",\"name\":\"d\",\"config\":{"
                  "\"units\":1},\"inbound_nodes\":[5]}",
              IO("d"), W, "[[2]]", NN_ERR_FORMAT, "a node must be a list or an object");
    bad_model("keras3 constant",
              IN2 ",{\"class_name\":\"Dense\",\"name\":\"d\",\"config\":{"
                  "\"units\":1},\"inbound_nodes\":[{\"args\":[{\"x\":1}]}]}",
              IO("d"), W, "[[2]]", NN_ERR_FORMAT, "constant-value tensors are not supported");
    bad_model("unbound input layer",
              IN2 ",{\"class_name\":\"InputLayer\",\"name\":\"in2\",\"config\":{},"
                  "\"inbound_nodes\":[]}," DENSE("d", "", "in2"),
              IO("d"), W, "[[2]]", NN_ERR_FORMAT, "not a model input");
    bad_model("output not array", IN2, "5", "", "[[2]]", NN_ERR_FORMAT,
              "output_layers must be an array");
    bad_model("input count", IN2 "," DENSE("d", "", "in"), IO("d"), W, "[[2],[2]]", NN_ERR_FORMAT,
              "input_shapes must list 1 shapes");
    bad_model("absurd input shape", IN2 "," DENSE("d", "", "in"), IO("d"), W, "[[1e12]]",
              NN_ERR_FORMAT, "input_shapes[0]: dimension 0 must be an integer in 1..");
    bad_model("absurd volume", IN2 "," DENSE("d", "", "in"), IO("d"), W, "[[60000,60000,60000]]",
              NN_ERR_FORMAT, "input_shapes[0]: more than");
    bad_model("rank 6", IN2 "," DENSE("d", "", "in"), IO("d"), W, "[[1,1,1,1,1,2]]", NN_ERR_FORMAT,
              "a shape needs 1 to 5 dimensions");
    bad_model("variable dim, no test", IN2 "," DENSE("d", "", "in"), IO("d"), W, "[[null]]",
              NN_ERR_UNSUPPORTED, "variable dimension and no test");

    /* nesting deeper than the limit */
    static char json[1 << 16];
    const char *in = "{\"class_name\":\"InputLayer\",\"name\":\"in\",\"config\":{},"
                     "\"inbound_nodes\":[]}";
    char *p = json;
    p += sprintf(p, "{\"architecture\":{\"config\":{\"layers\":[");
    for (int d = 0; d < 20; d++)
        p += sprintf(p,
                     "%s,{\"class_name\":\"Functional\",\"name\":\"n%d\",\"config\":{"
                     "\"layers\":[",
                     in, d);
    p += sprintf(p, "%s", in);
    for (int d = 0; d < 20; d++)
        p += sprintf(p, "]}}");
    p += sprintf(p, "]}}}");
    bad("nesting", json, NN_ERR_FORMAT, "nested deeper than 16");
}

static void test_tests_section(void) {
    const char *fmt =
        "{\"architecture\":{\"config\":{\"name\":\"m\",\"layers\":[" IN2
        "," DENSE("d", "", "in") "],\"input_layers\":" IO("in") ",\"output_layers\":" IO(
            "d") "}},\"input_shapes\":[[2]],"
                 "\"output_shapes\":[[1]],\"trainable_params\":{" W "},\"tests\":%s}";
    char json[4096];
    const struct {
        const char *tests, *message;
        enum nn_status st;
    } cases[] = {
        {"5", "tests must be an array", NN_ERR_FORMAT},
        {"[{\"inputs\":[],\"outputs\":[]}]", "test 0: 0 inputs and 0 outputs", NN_ERR_FORMAT},
        {"[{\"inputs\":[{\"shape\":[2],\"values\":[1]}],\"outputs\":[{\"shape\":[1],\"values\":[3]}"
         "]}]",
         "test 0 input 0: 1 values for a shape of 2", NN_ERR_FORMAT},
        {"[{\"inputs\":[{\"shape\":[3],\"values\":[1,1,1]}],\"outputs\":[{\"shape\":[1],\"values\":"
         "[3]}]}]",
         "shape differs from the model's input", NN_ERR_FORMAT},
        {"[{\"inputs\":[{\"shape\":[2],\"values\":[1,1]}],\"outputs\":[{\"shape\":[1,1],\"values\":"
         "[3]}]}]",
         "wrong output size: is (1), should be (1, 1)", NN_ERR_TEST_FAILED},
        {"[{\"inputs\":[{\"shape\":[2],\"values\":[1,1]}],\"outputs\":[{\"shape\":[1],\"values\":["
         "4]}]}]",
         "test failed: test 0 output=0 element 0 value=3 target=4", NN_ERR_TEST_FAILED},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(json, sizeof json, fmt, cases[i].tests);
        bad(cases[i].message, json, cases[i].st, cases[i].message);
    }
    /* and the passing one, for contrast */
    snprintf(json, sizeof json, fmt,
             "[{\"inputs\":[{\"shape\":[2],\"values\":[1,1]}],\"outputs\":[{\"shape\":[1],"
             "\"values\":[3]}]}]");
    struct nn_model *m = NULL;
    CHECK(nn_model_load_memory(json, strlen(json), NULL, &m, NULL, 0) == NN_OK);
    nn_model_free(m);
}

static void test_files_and_arguments(void) {
    char err[NN_ERROR_MAX];
    struct nn_model *m = (struct nn_model *)&err; /* must be reset to NULL on failure */
    CHECK(nn_model_load_file("/nonexistent/model.json", NULL, &m, err, sizeof err) == NN_ERR_IO);
    CHECK(m == NULL && strstr(err, "/nonexistent/model.json: does not exist") != NULL);
    CHECK(nn_model_load_file("/", NULL, &m, err, sizeof err) != NN_OK && m == NULL);
    CHECK(nn_model_load_memory(NULL, 0, NULL, &m, err, sizeof err) == NN_ERR_ARGUMENT);
    CHECK(nn_model_load_memory("{}", 2, NULL, NULL, err, sizeof err) == NN_ERR_ARGUMENT);
    /* predict argument checks */
    const char *json =
        g2_model(IN2 "," DENSE("d", "", "in"), IO("in"), IO("d"), "[[2]]", "[[1]]", W);
    CHECK(nn_model_load_memory(json, strlen(json), NULL, &m, err, sizeof err) == NN_OK);
    float x[2] = {1, 2}, y[1], scratch[64];
    const float *in[1] = {x};
    float *out[1] = {y};
    CHECK(nn_model_predict(m, in, out, NULL, 0, err, sizeof err) == NN_ERR_ARGUMENT);
    CHECK(nn_model_predict(m, in, out, scratch, 1, err, sizeof err) == NN_ERR_ARGUMENT);
    CHECK(strstr(err, "scratch of 1 bytes") != NULL);
    CHECK(nn_model_predict(m, in, out, scratch, sizeof scratch, err, sizeof err) == NN_OK &&
          y[0] == 5);
    nn_model_free(m);
}

int main(void) {
    test_json_level();
    test_layers_and_params();
    test_graph();
    test_tests_section();
    test_files_and_arguments();
    return test_finish("test_nn_errors");
}
