// Tests of include/hopper/config.h: architecture (native and Keras), compile and fit parameters
// (JSON and MADlib text), resolve_config and the canonical JSON round trips.
#include <cmath>
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "gemm.h"
#include "hopper/config.h"
#include "hopper/error.h"
#include "hopper/interrupt.h"

using namespace hopper;

namespace {

// Runs f, which must throw hopper::Error of `kind` whose message contains `in_message`.
// Returns the error for further checks (detail, hint).
Error expect_error(const std::function<void()>& f, ErrorKind kind, const std::string& in_message, int line) {
    try {
        f();
    } catch (const Error& e) {
        EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(kind))
            << "line " << line << ": " << e.message() << " / " << e.detail();
        EXPECT_NE(e.message().find(in_message), std::string::npos)
            << "line " << line << ": message \"" << e.message() << "\" lacks \"" << in_message << "\"";
        // PostgreSQL style: lowercase start (unless a quoted name or Keras), no trailing period.
        EXPECT_FALSE(e.message().empty());
        EXPECT_NE(e.message().back(), '.') << "line " << line << ": " << e.message();
        return e;
    } catch (const std::exception& e) {
        ADD_FAILURE() << "line " << line << ": non-hopper exception " << e.what();
        return Error(ErrorKind::Internal, "");
    }
    ADD_FAILURE() << "line " << line << ": no error thrown";
    return Error(ErrorKind::Internal, "");
}

#define EXPECT_ERR(expr, kind, text) expect_error([&] { (void)(expr); }, ErrorKind::kind, text, __LINE__)

bool same(const CompileParams& a, const CompileParams& b) {
    const OptimizerConfig& x = a.optimizer;
    const OptimizerConfig& y = b.optimizer;
    return a.loss == b.loss && a.loss_given == b.loss_given && a.metrics == b.metrics && a.top_k == b.top_k &&
           x.kind == y.kind && x.learning_rate == y.learning_rate && x.momentum == y.momentum && x.beta1 == y.beta1 &&
           x.beta2 == y.beta2 && x.epsilon == y.epsilon && x.rho == y.rho && x.decay == y.decay &&
           x.initial_accumulator_value == y.initial_accumulator_value && x.schedule_decay == y.schedule_decay &&
           x.weight_decay == y.weight_decay;
}

bool same(const FitParams& a, const FitParams& b) {
    return a.batch_size == b.batch_size && a.epochs == b.epochs && a.seed == b.seed && a.shuffle == b.shuffle &&
           a.precision == b.precision;
}

Architecture arch_of(int input, std::vector<std::pair<int, Activation>> layers) {
    Architecture a;
    a.input_dim = input;
    for (auto [u, act] : layers) {
        DenseLayer l;
        l.units = u;
        l.activation = act;
        a.layers.push_back(l);
    }
    return a;
}

// ---- Keras fixtures (shapes taken from real to_json() output of each Keras generation) ------

// tf.keras 2.x: config object with an InputLayer.
const char* kKeras2Input = R"({"class_name": "Sequential", "config": {"name": "sequential", "layers": [
 {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "dtype": "float32", "sparse": false, "ragged": false, "name": "dense_input"}},
 {"class_name": "Dense", "config": {"name": "dense", "trainable": true, "batch_input_shape": [null, 4], "dtype": "float32", "units": 10, "activation": "relu", "use_bias": true,
   "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}},
   "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}},
 {"class_name": "Dropout", "config": {"name": "dropout", "trainable": true, "dtype": "float32", "rate": 0.25, "noise_shape": null, "seed": null}},
 {"class_name": "Dense", "config": {"name": "dense_1", "trainable": true, "dtype": "float32", "units": 3, "activation": "softmax", "use_bias": true,
   "kernel_initializer": {"class_name": "HeNormal", "config": {"seed": null}}, "bias_initializer": "zeros",
   "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}
]}, "keras_version": "2.4.0", "backend": "tensorflow"})";

// Keras 2.1: config is the list of layers, batch_input_shape on the first Dense,
// initializers serialised as VarianceScaling.
const char* kKeras21List =
    R"({"class_name": "Sequential", "keras_version": "2.1.6", "backend": "tensorflow", "config": [
 {"class_name": "Dense", "config": {"kernel_initializer": {"class_name": "VarianceScaling", "config": {"distribution": "uniform", "scale": 1.0, "seed": null, "mode": "fan_avg"}},
   "name": "dense_1", "kernel_constraint": null, "bias_regularizer": null, "bias_constraint": null, "dtype": "float32", "activation": "relu", "trainable": true,
   "kernel_regularizer": null, "bias_initializer": {"class_name": "Zeros", "config": {}}, "units": 10, "batch_input_shape": [null, 4], "use_bias": true, "activity_regularizer": null}},
 {"class_name": "Dense", "config": {"kernel_initializer": {"class_name": "VarianceScaling", "config": {"distribution": "normal", "scale": 2.0, "seed": null, "mode": "fan_in"}},
   "name": "dense_2", "kernel_constraint": null, "bias_regularizer": null, "bias_constraint": null, "activation": "linear", "trainable": true,
   "kernel_regularizer": null, "bias_initializer": {"class_name": "Zeros", "config": {}}, "units": 3, "use_bias": false, "activity_regularizer": null}},
 {"class_name": "Activation", "config": {"activation": "softmax", "trainable": true, "name": "activation_1"}}
]})";

// Keras 1: output_dim, init, bias, input_dim, Dropout p.
const char* kKeras1 = R"({"class_name": "Sequential", "keras_version": "1.1.0", "config": [
 {"class_name": "Dense", "config": {"W_constraint": null, "b_constraint": null, "name": "dense_1", "activity_regularizer": null, "trainable": true, "init": "glorot_uniform",
   "bias": true, "input_dim": 8, "batch_input_shape": [null, 8], "input_dtype": "float32", "b_regularizer": null, "W_regularizer": null, "activation": "tanh", "output_dim": 12}},
 {"class_name": "Dropout", "config": {"p": 0.5, "trainable": true, "name": "dropout_1"}},
 {"class_name": "Dense", "config": {"W_constraint": null, "b_constraint": null, "name": "dense_2", "activity_regularizer": null, "trainable": true, "init": "he_uniform",
   "bias": true, "input_dim": null, "b_regularizer": null, "W_regularizer": null, "activation": "linear", "output_dim": 1}},
 {"class_name": "Activation", "config": {"activation": "sigmoid", "trainable": true, "name": "activation_1"}}
]})";

// Keras 3: module/registered_name/build_config, dtype policies, batch_shape.
const char* kKeras3 =
    R"({"module": "keras", "class_name": "Sequential", "config": {"name": "sequential", "trainable": true,
 "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": null}, "layers": [
 {"module": "keras.layers", "class_name": "InputLayer", "config": {"batch_shape": [null, 8], "dtype": "float32", "sparse": false, "ragged": false, "name": "input_layer"}, "registered_name": null},
 {"module": "keras.layers", "class_name": "Dense", "config": {"name": "dense", "trainable": true, "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": null},
   "units": 12, "activation": "relu", "use_bias": true, "kernel_initializer": {"module": "keras.initializers", "class_name": "GlorotUniform", "config": {"seed": null}, "registered_name": null},
   "bias_initializer": {"module": "keras.initializers", "class_name": "Zeros", "config": {}, "registered_name": null}, "kernel_regularizer": null, "bias_regularizer": null,
   "kernel_constraint": null, "bias_constraint": null, "lora_rank": null}, "registered_name": null, "build_config": {"input_shape": [null, 8]}},
 {"module": "keras.layers", "class_name": "Dense", "config": {"name": "dense_1", "trainable": true, "dtype": "float32", "units": 1, "activation": "sigmoid", "use_bias": true,
   "kernel_initializer": {"module": "keras.initializers", "class_name": "GlorotUniform", "config": {"seed": null}, "registered_name": null}},
   "registered_name": null, "build_config": {"input_shape": [null, 12]}}
 ], "build_input_shape": [null, 8]}, "registered_name": null, "build_config": {"input_shape": [null, 8]}})";

// A Keras model whose layer i is replaced: builds small models for the refusal tests.
std::string keras_with(const std::string& layers) {
    return R"({"class_name": "Sequential", "config": {"name": "s", "layers": [)" + layers + "]}}";
}
const std::string kInput4 = R"({"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "name": "in"}})";
std::string dense(int units, const std::string& act, const std::string& extra = "", const std::string& name = "d") {
    return R"({"class_name": "Dense", "config": {"name": ")" + name + R"(", "units": )" + std::to_string(units) +
           R"(, "activation": ")" + act + "\"" + extra + "}}";
}

}  // namespace

// ---- names -----------------------------------------------------------------------------------

TEST(ConfigNames, CanonicalLowercaseNames) {
    EXPECT_STREQ(to_string(Activation::Linear), "linear");
    EXPECT_STREQ(to_string(Activation::Relu), "relu");
    EXPECT_STREQ(to_string(Activation::Tanh), "tanh");
    EXPECT_STREQ(to_string(Activation::Sigmoid), "sigmoid");
    EXPECT_STREQ(to_string(Activation::Softmax), "softmax");
    EXPECT_STREQ(to_string(Initializer::GlorotUniform), "glorot_uniform");
    EXPECT_STREQ(to_string(Initializer::GlorotNormal), "glorot_normal");
    EXPECT_STREQ(to_string(Initializer::HeUniform), "he_uniform");
    EXPECT_STREQ(to_string(Initializer::HeNormal), "he_normal");
    EXPECT_STREQ(to_string(Initializer::Zeros), "zeros");
    EXPECT_STREQ(to_string(Loss::SoftmaxCrossEntropy), "softmax_cross_entropy");
    EXPECT_STREQ(to_string(Loss::BinaryCrossEntropy), "binary_cross_entropy");
    EXPECT_STREQ(to_string(Loss::MeanSquaredError), "mean_squared_error");
    EXPECT_STREQ(to_string(OptimizerKind::SGD), "sgd");
    EXPECT_STREQ(to_string(OptimizerKind::Momentum), "momentum");
    EXPECT_STREQ(to_string(OptimizerKind::Nesterov), "nesterov");
    EXPECT_STREQ(to_string(OptimizerKind::Adam), "adam");
    EXPECT_STREQ(to_string(OptimizerKind::RMSprop), "rmsprop");
    EXPECT_STREQ(to_string(Metric::Accuracy), "accuracy");
    EXPECT_STREQ(to_string(Metric::TopKAccuracy), "top_k_accuracy");
    EXPECT_STREQ(to_string(Metric::MeanSquaredError), "mean_squared_error");
    EXPECT_STREQ(to_string(Metric::MeanAbsoluteError), "mean_absolute_error");
    EXPECT_STREQ(to_string(Metric::Loss), "loss");
}

// ---- native architecture ---------------------------------------------------------------------

TEST(ConfigNative, ParsesFullForm) {
    Architecture a = parse_architecture(R"({"input_dim": 784, "layers": [
        {"units": 128, "activation": "relu", "use_bias": true, "initializer": "he_normal", "dropout": 0.2},
        {"units": 10, "activation": "softmax", "use_bias": false, "initializer": "glorot_normal"}]})");
    ASSERT_EQ(a.layers.size(), 2u);
    EXPECT_EQ(a.input_dim, 784);
    EXPECT_EQ(a.layers[0].units, 128);
    EXPECT_EQ(a.layers[0].activation, Activation::Relu);
    EXPECT_EQ(a.layers[0].initializer, Initializer::HeNormal);
    EXPECT_FLOAT_EQ(a.layers[0].dropout, 0.2f);
    EXPECT_TRUE(a.layers[0].use_bias);
    EXPECT_EQ(a.layers[1].activation, Activation::Softmax);
    EXPECT_FALSE(a.layers[1].use_bias);
    EXPECT_EQ(a.layers[1].initializer, Initializer::GlorotNormal);
    EXPECT_EQ(a.output_dim(), 10);
    EXPECT_EQ(a.shape_string(), "784-128-10");
    EXPECT_EQ(a.num_params(), 784u * 128 + 128 + 128u * 10);
}

TEST(ConfigNative, DefaultsPerActivation) {
    // relu layers default to he_uniform, others to glorot_uniform; activation defaults to linear.
    Architecture a = parse_architecture(
        R"({"input_dim": 3, "layers": [{"units": 4, "activation": "relu"}, {"units": 2, "activation": "tanh"}, {"units": 1}]})");
    EXPECT_EQ(a.layers[0].initializer, Initializer::HeUniform);
    EXPECT_EQ(a.layers[1].initializer, Initializer::GlorotUniform);
    EXPECT_EQ(a.layers[2].activation, Activation::Linear);
    EXPECT_TRUE(a.layers[2].use_bias);
    EXPECT_EQ(a.layers[2].dropout, 0.0f);
}

TEST(ConfigNative, TopLevelInitializerIsDefaultForAllLayers) {
    Architecture a = parse_architecture(R"({"input_dim": 3, "initializer": "zeros",
        "layers": [{"units": 4, "activation": "relu"}, {"units": 2, "initializer": "he_uniform"}]})");
    EXPECT_EQ(a.layers[0].initializer, Initializer::Zeros);
    EXPECT_EQ(a.layers[1].initializer, Initializer::HeUniform);
}

TEST(ConfigNative, NamesAreCaseInsensitiveAndKerasClassNamesWork) {
    Architecture a = parse_architecture(R"({"input_dim": 3, "layers": [
        {"units": 4, "activation": "ReLU", "initializer": "GlorotUniform"},
        {"units": 2, "activation": "SIGMOID", "initializer": "HeNormal"}]})");
    EXPECT_EQ(a.layers[0].activation, Activation::Relu);
    EXPECT_EQ(a.layers[0].initializer, Initializer::GlorotUniform);
    EXPECT_EQ(a.layers[1].activation, Activation::Sigmoid);
    EXPECT_EQ(a.layers[1].initializer, Initializer::HeNormal);
}

TEST(ConfigNative, IntegralFloatsAreAcceptedAsIntegers) {
    Architecture a = parse_architecture(R"({"input_dim": 3.0, "layers": [{"units": 2e0}]})");
    EXPECT_EQ(a.input_dim, 3);
    EXPECT_EQ(a.layers[0].units, 2);
}

TEST(ConfigNative, UnknownKeysNameKeyAndLayer) {
    Error e = EXPECT_ERR(parse_architecture(R"({"input_dim": 3, "layers": [{"units": 2}, {"unit": 2}]})"),
                         InvalidParameter, "unknown key \"unit\" in layer 2");
    EXPECT_NE(e.hint().find("Valid keys are"), std::string::npos);
    EXPECT_ERR(parse_architecture(R"({"input_dim": 3, "layers": [{"units": 2}], "name": "x"})"), InvalidParameter,
               "unknown key \"name\" in architecture");
}

TEST(ConfigNative, MissingKeys) {
    // input_dim left out: the packed table's width, known when training starts (test_embedding.cpp).
    EXPECT_EQ(parse_architecture(R"({"layers": [{"units": 2}]})").input_dim, 0);
    EXPECT_ERR(parse_architecture(R"({"input_dim": 3})"), InvalidParameter, "\"layers\"");
    EXPECT_ERR(parse_architecture(R"({"input_dim": 3, "layers": [{"activation": "relu"}]})"), InvalidParameter,
               "missing key \"units\" in layer 1");
    EXPECT_ERR(parse_architecture(R"({"input_dim": 3, "layers": []})"), InvalidParameter, "no layers");
    EXPECT_ERR(parse_architecture(R"({"input_dim": 3, "layers": [5]})"), InvalidParameter, "layer 1");
    EXPECT_ERR(parse_architecture(R"({"input_dim": 3, "layers": {"units": 2}})"), InvalidParameter, "\"layers\"");
}

TEST(ConfigNative, DimensionLimits) {
    EXPECT_ERR(parse_architecture(R"({"input_dim": 0, "layers": [{"units": 2}]})"), InvalidParameter,
               "invalid value for \"input_dim\": 0");
    EXPECT_ERR(parse_architecture(R"({"input_dim": 1000001, "layers": [{"units": 2}]})"), Limit, "\"input_dim\"");
    EXPECT_ERR(parse_architecture(R"({"input_dim": 3, "layers": [{"units": 2}, {"units": 0}]})"), InvalidParameter,
               "invalid value for \"units\" in layer 2: 0");
    EXPECT_ERR(parse_architecture(R"({"input_dim": 3, "layers": [{"units": 1000001}]})"), Limit,
               "\"units\" in layer 1");
    EXPECT_ERR(parse_architecture(R"({"input_dim": 3, "layers": [{"units": 1.5}]})"), InvalidParameter,
               "\"units\" in layer 1: 1.5");
    EXPECT_ERR(parse_architecture(R"({"input_dim": 3, "layers": [{"units": "8"}]})"), InvalidParameter,
               "\"units\" in layer 1: \"8\"");
    EXPECT_ERR(parse_architecture(R"({"input_dim": -3, "layers": [{"units": 8}]})"), InvalidParameter,
               "\"input_dim\": -3");
    // Exactly at the limits is fine.
    EXPECT_NO_THROW(parse_architecture(R"({"input_dim": 1000000, "layers": [{"units": 1}]})"));
}

TEST(ConfigNative, LayerCountLimit) {
    std::string ls;
    for (int i = 0; i < 64; ++i) ls += std::string(i ? "," : "") + R"({"units": 2})";
    EXPECT_EQ(parse_architecture(R"({"input_dim": 3, "layers": [)" + ls + "]}").layers.size(), 64u);
    ls += R"(,{"units": 2})";
    EXPECT_ERR(parse_architecture(R"({"input_dim": 3, "layers": [)" + ls + "]}"), Limit, "too many layers");
}

// Absurd sizes are limits (54000), refused before any work; small wrong values stay 22023.
TEST(ConfigNative, AbsurdSizesAreLimits) {
    EXPECT_ERR(parse_architecture(R"({"input_dim": 3, "layers": [{"units": 1000001}]})"), Limit,
               "\"units\" in layer 1 is too large");
    EXPECT_ERR(parse_architecture(R"({"input_dim": 3, "layers": [{"units": 1e300}]})"), Limit, "\"units\"");
    EXPECT_ERR(parse_architecture(R"({"input_dim": 18446744073709551615, "layers": [{"units": 2}]})"), Limit,
               "\"input_dim\" is too large");
    EXPECT_ERR(parse_architecture(R"({"input_dim": 3, "layers": [{"units": 0}]})"), InvalidParameter, "\"units\"");
    EXPECT_ERR(parse_fit_params("batch_size=99999999999"), Limit, "\"batch_size\" is too large");
    const std::string keras_big = R"({"class_name": "Sequential", "config": {"layers": [)"
                                  R"({"class_name": "InputLayer", "config": {"batch_input_shape": [null, 5000000]}},)"
                                  R"({"class_name": "Dense", "config": {"units": 2, "activation": "softmax"}}]}})";
    EXPECT_ERR(parse_architecture(keras_big), Limit, "is too large");
    // A text of more than 4 MB is refused before it is parsed (300,000 layers took 55 s, deaf to
    // cancel, when parsing was quadratic).
    std::string huge = R"({"input_dim": 3, "layers": [)";
    while (huge.size() <= (std::size_t(4) << 20)) huge += R"({"units": 2},)";
    huge += R"({"units": 2}]})";
    Error e = EXPECT_ERR(parse_architecture(huge), Limit, "architecture is too large");
    EXPECT_NE(e.detail().find("at most 4 MB"), std::string::npos) << e.detail();
    EXPECT_ERR(parse_compile_params(std::string(std::size_t(1) << 21, ' ') + "loss='mse'"), Limit,
               "compile parameters is too large");
}

// Parsing checks for cancel as it goes: an interrupt check that throws stops a parse of a large
// architecture before it finishes (here, before it could report too many layers).
TEST(ConfigNative, ParsingHonoursCancel) {
    struct Cancelled {};
    static int calls;
    calls = 0;
    set_interrupt_check([] {
        if (++calls == 3) throw Cancelled{};
    });
    std::string big = R"({"input_dim": 3, "layers": [)";
    for (int i = 0; i < 50000; ++i) big += std::string(i ? "," : "") + R"({"units": 2, "activation": "relu"})";
    big += "]}";
    EXPECT_THROW(parse_architecture(big), Cancelled);
    EXPECT_EQ(calls, 3);
    set_interrupt_check(nullptr);
    EXPECT_ERR(parse_architecture(big), Limit, "too many layers");
}

TEST(ConfigNative, DropoutRange) {
    EXPECT_ERR(parse_architecture(R"({"input_dim": 3, "layers": [{"units": 2, "dropout": 1}, {"units": 1}]})"),
               InvalidParameter, "\"dropout\" in layer 1: 1");
    EXPECT_ERR(parse_architecture(R"({"input_dim": 3, "layers": [{"units": 2, "dropout": -0.1}, {"units": 1}]})"),
               InvalidParameter, "\"dropout\" in layer 1");
    // Rounds to 1.0f as a float: must be refused although it is < 1 as a double.
    EXPECT_ERR(parse_architecture(
                   R"({"input_dim": 3, "layers": [{"units": 2, "dropout": 0.99999999999}, {"units": 1}]})"),
               InvalidParameter, "\"dropout\" in layer 1");
    EXPECT_ERR(parse_architecture(R"({"input_dim": 3, "layers": [{"units": 2, "dropout": true}, {"units": 1}]})"),
               InvalidParameter, "\"dropout\" in layer 1");
}

TEST(ConfigNative, DropoutOnOutputLayerRefused) {
    EXPECT_ERR(parse_architecture(R"({"input_dim": 3, "layers": [{"units": 2, "dropout": 0.5}]})"), InvalidParameter,
               "output layer (layer 1)");
}

TEST(ConfigNative, SoftmaxOnlyOnLastLayerWithTwoUnits) {
    Error e = EXPECT_ERR(parse_architecture(
                             R"({"input_dim": 3, "layers": [{"units": 4, "activation": "softmax"}, {"units": 2}]})"),
                         InvalidParameter, "softmax activation in layer 1");
    EXPECT_FALSE(e.hint().empty());
    EXPECT_ERR(parse_architecture(R"({"input_dim": 3, "layers": [{"units": 1, "activation": "softmax"}]})"),
               InvalidParameter, "at least 2 units");
}

TEST(ConfigNative, BadNames) {
    Error e = EXPECT_ERR(parse_architecture(R"({"input_dim": 3, "layers": [{"units": 2, "activation": "elu"}]})"),
                         InvalidParameter, "\"activation\" in layer 1: \"elu\"");
    EXPECT_NE(e.detail().find("relu"), std::string::npos);
    EXPECT_ERR(parse_architecture(R"({"input_dim": 3, "layers": [{"units": 2, "initializer": "orthogonal"}]})"),
               InvalidParameter, "\"initializer\" in layer 1");
    EXPECT_ERR(parse_architecture(R"({"input_dim": 3, "initializer": "ones", "layers": [{"units": 2}]})"),
               InvalidParameter, "\"initializer\": \"ones\"");
    EXPECT_ERR(parse_architecture(R"({"input_dim": 3, "layers": [{"units": 2, "use_bias": 1}]})"), InvalidParameter,
               "\"use_bias\" in layer 1");
}

TEST(ConfigNative, TooManyParametersIsLimit) {
    // 1e6 * 3000 > 2^31-1
    Error e = EXPECT_ERR(parse_architecture(R"({"input_dim": 1000000, "layers": [{"units": 3000}]})"), Limit,
                         "model has too many parameters");
    EXPECT_NE(e.detail().find("3000003000"), std::string::npos) << e.detail();
    // 2^31-1 exactly fits: 46341 * 46341 = 2147488281 is too many, 65535 * 32767 + 32767 = 2^31-1.
    EXPECT_NO_THROW(parse_architecture(R"({"input_dim": 65535, "layers": [{"units": 32767}]})"));
    EXPECT_ERR(parse_architecture(R"({"input_dim": 65535, "layers": [{"units": 32768}]})"), Limit,
               "too many parameters");
}

TEST(ConfigNative, SyntaxErrorsCarryPosition) {
    Error e = EXPECT_ERR(parse_architecture(R"({"input_dim": 3, "layers": [{"units": 2,}]})"), Syntax, "architecture");
    EXPECT_NE(e.detail().find("column"), std::string::npos) << e.detail();
    EXPECT_ERR(parse_architecture("{\"input_dim\": 3"), Syntax, "architecture");
    EXPECT_ERR(parse_architecture(""), Syntax, "architecture is empty");
    EXPECT_ERR(parse_architecture("  \n\t "), Syntax, "architecture is empty");
}

TEST(ConfigNative, NonObjectsRefused) {
    EXPECT_ERR(parse_architecture("null"), InvalidParameter, "must be a JSON object");
    EXPECT_ERR(parse_architecture("[1, 2]"), InvalidParameter, "must be a JSON object");
    EXPECT_ERR(parse_architecture("\"x\""), InvalidParameter, "must be a JSON object");
}

TEST(ConfigNative, DuplicateKeysRefused) {
    // nlohmann would keep the last value silently.
    EXPECT_ERR(parse_architecture(R"({"input_dim": 3, "layers": [{"units": 2, "units": 3}]})"), InvalidParameter,
               "duplicate key \"units\"");
}

TEST(ConfigNative, DeepNestingRefusedWithoutCrash) {
    std::string deep =
        R"({"input_dim": 3, "layers": [{"units": 2, "x": )" + std::string(5000, '[') + std::string(5000, ']') + "}]}";
    EXPECT_ERR(parse_architecture(deep), Syntax, "architecture");
}

// ---- Architecture methods and canonical JSON ---------------------------------------------------

TEST(ConfigArchitecture, CanonicalJsonIsExact) {
    Architecture a = arch_of(4, {{10, Activation::Relu}, {3, Activation::Softmax}});
    a.layers[0].initializer = Initializer::HeUniform;
    a.layers[0].dropout = 0.2f;
    EXPECT_EQ(
        a.to_json(),
        R"({"input_dim":4,"layers":[{"units":10,"activation":"relu","use_bias":true,"initializer":"he_uniform","dropout":0.2},)"
        R"({"units":3,"activation":"softmax","use_bias":true,"initializer":"glorot_uniform","dropout":0.0}]})");
}

TEST(ConfigArchitecture, RoundTripsAwkwardFloats) {
    for (float d :
         {0.1f, 0.3f, 1.0f / 3.0f, 0.999999f, std::nextafter(0.5f, 1.0f), 1e-8f, std::nextafter(1.0f, 0.0f)}) {
        Architecture a = arch_of(5, {{7, Activation::Tanh}, {2, Activation::Sigmoid}});
        a.layers[0].dropout = d;
        a.layers[1].use_bias = false;
        a.layers[1].initializer = Initializer::Zeros;
        Architecture b = parse_architecture(a.to_json());
        EXPECT_EQ(a, b) << a.to_json();
        EXPECT_EQ(a.to_json(), b.to_json());
    }
}

TEST(ConfigArchitecture, EqualityComparesEveryField) {
    Architecture a = arch_of(4, {{10, Activation::Relu}, {3, Activation::Softmax}});
    Architecture b = a;
    EXPECT_TRUE(a == b);
    b.input_dim = 5;
    EXPECT_TRUE(a != b);
    b = a;
    b.layers[0].units = 11;
    EXPECT_NE(a, b);
    b = a;
    b.layers[0].activation = Activation::Tanh;
    EXPECT_NE(a, b);
    b = a;
    b.layers[0].use_bias = false;
    EXPECT_NE(a, b);
    b = a;
    b.layers[0].initializer = Initializer::HeNormal;
    EXPECT_NE(a, b);
    b = a;
    b.layers[0].dropout = 0.1f;
    EXPECT_NE(a, b);
    b = a;
    b.layers.pop_back();
    EXPECT_NE(a, b);
}

TEST(ConfigArchitecture, NumParamsAndShape) {
    Architecture a = arch_of(784, {{128, Activation::Relu}, {64, Activation::Relu}, {10, Activation::Softmax}});
    a.layers[1].use_bias = false;
    EXPECT_EQ(a.num_params(), 784u * 128 + 128 + 128u * 64 + 64u * 10 + 10);
    EXPECT_EQ(a.shape_string(), "784-128-64-10");
    EXPECT_EQ(Architecture{}.num_params(), 0u);
    EXPECT_EQ(Architecture{}.output_dim(), 0);
}

// ---- Keras import ----------------------------------------------------------------------------

TEST(ConfigKeras, Keras2WithInputLayer) {
    Architecture a = parse_architecture(kKeras2Input);
    ASSERT_EQ(a.layers.size(), 2u);
    EXPECT_EQ(a.input_dim, 4);
    EXPECT_EQ(a.layers[0].units, 10);
    EXPECT_EQ(a.layers[0].activation, Activation::Relu);
    EXPECT_EQ(a.layers[0].initializer, Initializer::GlorotUniform);  // Keras says so, not he_uniform
    EXPECT_FLOAT_EQ(a.layers[0].dropout, 0.25f);
    EXPECT_EQ(a.layers[1].activation, Activation::Softmax);
    EXPECT_EQ(a.layers[1].initializer, Initializer::HeNormal);
    EXPECT_EQ(a.layers[1].dropout, 0.0f);
}

TEST(ConfigKeras, Keras21ListWithBatchInputShapeOnFirstDense) {
    Architecture a = parse_architecture(kKeras21List);
    ASSERT_EQ(a.layers.size(), 2u);
    EXPECT_EQ(a.input_dim, 4);
    EXPECT_EQ(a.layers[0].initializer, Initializer::GlorotUniform);  // VarianceScaling(1, fan_avg, uniform)
    EXPECT_EQ(a.layers[1].initializer, Initializer::HeNormal);       // VarianceScaling(2, fan_in, normal)
    EXPECT_FALSE(a.layers[1].use_bias);
    EXPECT_EQ(a.layers[1].activation, Activation::Softmax);  // merged from the Activation layer
}

TEST(ConfigKeras, Keras1Style) {
    Architecture a = parse_architecture(kKeras1);
    ASSERT_EQ(a.layers.size(), 2u);
    EXPECT_EQ(a.input_dim, 8);
    EXPECT_EQ(a.layers[0].units, 12);
    EXPECT_EQ(a.layers[0].activation, Activation::Tanh);
    EXPECT_FLOAT_EQ(a.layers[0].dropout, 0.5f);
    EXPECT_EQ(a.layers[1].units, 1);
    EXPECT_EQ(a.layers[1].initializer, Initializer::HeUniform);
    EXPECT_EQ(a.layers[1].activation, Activation::Sigmoid);
}

TEST(ConfigKeras, Keras3Style) {
    Architecture a = parse_architecture(kKeras3);
    EXPECT_EQ(a.shape_string(), "8-12-1");
    EXPECT_EQ(a.layers[0].activation, Activation::Relu);
    EXPECT_EQ(a.layers[1].activation, Activation::Sigmoid);
}

TEST(ConfigKeras, Keras3BuildInputShapeOnly) {
    Architecture a =
        parse_architecture(R"({"class_name": "Sequential", "config": {"name": "s", "layers": [)" + dense(5, "relu") +
                           "," + dense(2, "softmax") + R"(], "build_input_shape": [null, 6]}})");
    EXPECT_EQ(a.shape_string(), "6-5-2");
}

TEST(ConfigKeras, TensorShapeObjectAndInputShapeWithoutBatch) {
    Architecture a = parse_architecture(keras_with(
        R"({"class_name": "InputLayer", "config": {"batch_input_shape": {"class_name": "TensorShape", "items": [null, 7]}}},)" +
        dense(2, "softmax")));
    EXPECT_EQ(a.input_dim, 7);
    a = parse_architecture(keras_with(dense(2, "softmax", R"(, "input_shape": [9])")));
    EXPECT_EQ(a.input_dim, 9);
}

TEST(ConfigKeras, TwoDropoutsCombine) {
    // Two inverted dropouts keep with probability 0.8 * 0.5 = 0.4: one dropout of rate 0.6.
    Architecture a = parse_architecture(
        keras_with(kInput4 + "," + dense(8, "relu") + R"(,{"class_name": "Dropout", "config": {"rate": 0.2}})" +
                   R"(,{"class_name": "Dropout", "config": {"rate": 0.5}},)" + dense(2, "softmax")));
    EXPECT_NEAR(a.layers[0].dropout, 0.6f, 1e-6);
}

TEST(ConfigKeras, ReluActivationAfterDropoutCommutes) {
    Architecture a = parse_architecture(
        keras_with(kInput4 + "," + dense(8, "linear") + R"(,{"class_name": "Dropout", "config": {"rate": 0.2}})" +
                   R"(,{"class_name": "Activation", "config": {"activation": "relu"}},)" + dense(2, "softmax")));
    EXPECT_EQ(a.layers[0].activation, Activation::Relu);
    EXPECT_FLOAT_EQ(a.layers[0].dropout, 0.2f);
}

TEST(ConfigKeras, LinearActivationLayersAreNoOps) {
    Architecture a = parse_architecture(keras_with(
        kInput4 + R"(,{"class_name": "Activation", "config": {"activation": "linear"}},)" + dense(8, "tanh") +
        R"(,{"class_name": "Activation", "config": {"activation": "linear"}},)" + dense(1, "linear")));
    EXPECT_EQ(a.shape_string(), "4-8-1");
    EXPECT_EQ(a.layers[0].activation, Activation::Tanh);
}

TEST(ConfigKeras, UnsupportedLayerNamesClassIndexAndName) {
    Error e = EXPECT_ERR(parse_architecture(keras_with(
                             kInput4 + R"(,{"class_name": "Conv1D", "config": {"name": "conv1d_1", "filters": 8}})")),
                         InvalidParameter, "unsupported Keras layer \"Conv1D\" (layer 2, \"conv1d_1\")");
    EXPECT_NE(e.hint().find("Dense"), std::string::npos);
    EXPECT_NE(e.hint().find("Conv2D"), std::string::npos);
    EXPECT_ERR(parse_architecture(keras_with(kInput4 + R"(,{"class_name": "LayerNormalization", "config": {}})")),
               InvalidParameter, "\"LayerNormalization\" (layer 2)");
    e = EXPECT_ERR(parse_architecture(keras_with(R"({"class_name": "Reshape", "config": {"name": "r"}})")),
                   InvalidParameter, "\"Reshape\" (layer 1, \"r\")");
    EXPECT_NE(e.hint().find("Flatten"), std::string::npos);
}

TEST(ConfigKeras, NonSequentialModelsRefused) {
    EXPECT_ERR(parse_architecture(R"({"class_name": "MyModel", "config": {"layers": []}})"), InvalidParameter,
               "\"MyModel\"");
    // Functional models of the tabular shape are read (test_embedding.cpp); without outputs they are not.
    EXPECT_ERR(parse_architecture(R"({"class_name": "Functional", "config": {"layers": []}})"), InvalidParameter,
               "\"output_layers\"");
    EXPECT_ERR(parse_architecture(R"({"class_name": "Sequential"})"), InvalidParameter, "\"config\"");
    EXPECT_ERR(parse_architecture(R"({"class_name": "Sequential", "config": {"name": "x"}})"), InvalidParameter,
               "no list of layers");
    EXPECT_ERR(parse_architecture(keras_with(kInput4)), InvalidParameter, "Keras model has no layers");
    EXPECT_ERR(parse_architecture(keras_with(R"({"config": {}})")), InvalidParameter, "class_name");
}

TEST(ConfigKeras, UnsupportedInputRanksAndDenseOnImages) {
    // An image input is fine, but a Dense layer needs a Flatten (or global pooling) before it.
    Error e =
        EXPECT_ERR(parse_architecture(keras_with(
                       R"({"class_name": "InputLayer", "config": {"batch_shape": [null, 28, 28, 1], "name": "img"}},)" +
                       dense(10, "softmax"))),
                   InvalidParameter, "dense layer applied to a non-flat tensor (Keras layer 2 (\"d\"))");
    EXPECT_NE(e.detail().find("28x28x1"), std::string::npos) << e.detail();
    EXPECT_NE(e.hint().find("Flatten"), std::string::npos) << e.hint();
    // Rank 2 (no channels) and rank 4 inputs are not supported; the hint says how to reshape.
    e = EXPECT_ERR(parse_architecture(keras_with(dense(10, "softmax", R"(, "batch_input_shape": [null, 28, 28])"))),
                   InvalidParameter, "input shape [null,28,28] of Keras layer 1 (\"d\") is not supported");
    EXPECT_NE(e.hint().find("(28, 28, 1)"), std::string::npos) << e.hint();
    EXPECT_NE(e.hint().find("784"), std::string::npos) << e.hint();
    e = EXPECT_ERR(parse_architecture(keras_with(dense(10, "softmax", R"(, "batch_input_shape": [null, 2, 3, 4, 5])"))),
                   InvalidParameter, "is not supported");
    EXPECT_NE(e.hint().find("120"), std::string::npos) << e.hint();
    EXPECT_ERR(parse_architecture(keras_with(
                   R"({"class_name": "InputLayer", "config": {"batch_shape": [null, null]}},)" + dense(10, "softmax"))),
               InvalidParameter, "no feature count");
    EXPECT_ERR(parse_architecture(
                   keras_with(R"({"class_name": "InputLayer", "config": {"batch_shape": [null, null, null, 3]}},)" +
                              dense(10, "softmax"))),
               InvalidParameter, "no feature count");
}

TEST(ConfigKeras, MissingOrConflictingInputShape) {
    EXPECT_ERR(parse_architecture(keras_with(dense(3, "relu") + "," + dense(2, "softmax"))), InvalidParameter,
               "does not specify its input shape");
    EXPECT_ERR(parse_architecture(
                   keras_with(kInput4 + "," + dense(2, "softmax", R"(, "batch_input_shape": [null, 5])"))),
               InvalidParameter, "conflicting input shapes");
    EXPECT_ERR(parse_architecture(keras_with(kInput4 + "," + dense(3, "relu") + "," +
                                             dense(2, "softmax", R"(, "batch_input_shape": [null, 5])", "d2"))),
               InvalidParameter, "does not match the previous layer");
    EXPECT_ERR(parse_architecture(
                   keras_with(R"({"class_name": "InputLayer", "config": {"name": "in"}},)" + dense(2, "softmax"))),
               InvalidParameter, "has no input shape");
    EXPECT_ERR(parse_architecture(keras_with(dense(2, "relu", R"(, "batch_input_shape": [null, 4])") + "," + kInput4)),
               InvalidParameter, "misplaced InputLayer");
}

TEST(ConfigKeras, MathsChangingOptionsRefusedNamingLayer) {
    EXPECT_ERR(parse_architecture(
                   keras_with(kInput4 + "," +
                              dense(2, "softmax",
                                    R"(, "kernel_regularizer": {"class_name": "L2", "config": {"l2": 0.01}})", "out"))),
               InvalidParameter, "kernel_regularizer in Keras layer 2 (\"out\")");
    EXPECT_ERR(parse_architecture(keras_with(
                   kInput4 + "," + dense(2, "softmax", R"(, "activity_regularizer": {"class_name": "L1"})", "out"))),
               InvalidParameter, "activity_regularizer in Keras layer 2");
    EXPECT_ERR(parse_architecture(keras_with(
                   kInput4 + "," + dense(2, "softmax", R"(, "kernel_constraint": {"class_name": "MaxNorm"})", "out"))),
               InvalidParameter, "kernel_constraint in Keras layer 2");
    EXPECT_ERR(parse_architecture(keras_with(
                   kInput4 + "," +
                   dense(2, "softmax", R"(, "bias_initializer": {"class_name": "Ones", "config": {}})", "out"))),
               InvalidParameter, "bias_initializer");
    EXPECT_ERR(parse_architecture(keras_with(kInput4 + "," + dense(2, "softmax", R"(, "trainable": "no")", "out"))),
               InvalidParameter, "invalid value for \"trainable\" in Keras layer 2 (\"out\")");
    EXPECT_ERR(parse_architecture(keras_with(kInput4 + "," + dense(2, "softmax", R"(, "lora_rank": 4)", "out"))),
               InvalidParameter, "unsupported option \"lora_rank\" in Keras layer 2");
    EXPECT_ERR(parse_architecture(keras_with(kInput4 + "," + dense(2, "elu", "", "out"))), InvalidParameter,
               "unsupported activation \"elu\" in Keras layer 2");
    EXPECT_ERR(parse_architecture(
                   keras_with(kInput4 + "," + dense(2, "softmax", R"(, "kernel_initializer": "orthogonal")", "out"))),
               InvalidParameter, "kernel initializer \"orthogonal\" in Keras layer 2");
    EXPECT_ERR(
        parse_architecture(keras_with(
            kInput4 + "," +
            dense(
                2, "softmax",
                R"(, "kernel_initializer": {"class_name": "VarianceScaling", "config": {"scale": 1.0, "mode": "fan_in", "distribution": "uniform"}})",
                "out"))),
        InvalidParameter, "VarianceScaling");
    // Harmless ones are accepted: a non-zero bias initializer without a bias is irrelevant.
    EXPECT_NO_THROW(parse_architecture(keras_with(
        kInput4 + "," +
        dense(2, "softmax",
              R"(, "use_bias": false, "bias_initializer": "ones", "dtype": "float64", "quantization_config": null)",
              "out"))));
}

TEST(ConfigKeras, DropoutAndActivationPlacement) {
    const std::string drop = R"({"class_name": "Dropout", "config": {"name": "drop", "rate": 0.2}})";
    EXPECT_ERR(parse_architecture(keras_with(kInput4 + "," + drop + "," + dense(2, "softmax"))), InvalidParameter,
               "Keras layer 2 (\"drop\") drops inputs before any layer");
    EXPECT_ERR(parse_architecture(keras_with(
                   kInput4 + R"(,{"class_name": "Activation", "config": {"name": "act", "activation": "relu"}},)" +
                   dense(2, "softmax"))),
               InvalidParameter, "Keras layer 2 (\"act\") applies relu before any layer");
    EXPECT_ERR(parse_architecture(
                   keras_with(kInput4 + "," + dense(8, "tanh", "", "h") +
                              R"(,{"class_name": "Activation", "config": {"name": "act", "activation": "relu"}},)" +
                              dense(2, "softmax"))),
               InvalidParameter, "already uses tanh");
    EXPECT_ERR(parse_architecture(
                   keras_with(kInput4 + "," + dense(8, "linear") + "," + drop +
                              R"(,{"class_name": "Activation", "config": {"name": "act", "activation": "sigmoid"}},)" +
                              dense(2, "softmax"))),
               InvalidParameter, "after a Dropout layer");
    EXPECT_ERR(parse_architecture(
                   keras_with(kInput4 + "," + dense(8, "relu") +
                              R"(,{"class_name": "Dropout", "config": {"rate": 0.2, "noise_shape": [null, 1]}},)" +
                              dense(2, "softmax"))),
               InvalidParameter, "noise_shape");
    EXPECT_ERR(parse_architecture(keras_with(kInput4 + "," + dense(8, "relu") +
                                             R"(,{"class_name": "Dropout", "config": {"name": "drop", "rate": 1.0}},)" +
                                             dense(2, "softmax"))),
               InvalidParameter, "invalid value for \"rate\" in Keras layer 3 (\"drop\"): 1");
    // Dropout after the last Dense is dropout on the output layer.
    EXPECT_ERR(parse_architecture(keras_with(kInput4 + "," + dense(2, "softmax", "", "out") + "," + drop)),
               InvalidParameter, "output layer (Keras layer 2 (\"out\"))");
}

TEST(ConfigKeras, ValidationNamesKerasLayers) {
    EXPECT_ERR(parse_architecture(
                   keras_with(kInput4 + "," + dense(3, "softmax", "", "hidden") + "," + dense(2, "softmax"))),
               InvalidParameter, "softmax activation in Keras layer 2 (\"hidden\")");
    EXPECT_ERR(parse_architecture(keras_with(kInput4 + "," + dense(0, "relu", "", "z"))), InvalidParameter,
               "invalid value for \"units\" in Keras layer 2 (\"z\"): 0");
    EXPECT_ERR(parse_architecture(keras_with(kInput4 + R"(,{"class_name": "Dense", "config": {"name": "nounits"}})")),
               InvalidParameter, "missing key \"units\" in Keras layer 2 (\"nounits\")");
    EXPECT_ERR(parse_architecture(
                   keras_with(R"({"class_name": "InputLayer", "config": {"batch_shape": [null, 1000000]}},)" +
                              dense(5000, "relu"))),
               Limit, "too many parameters");
}

TEST(ConfigKeras, KerasImportRoundTripsThroughNative) {
    for (const char* k : {kKeras2Input, kKeras21List, kKeras1, kKeras3}) {
        Architecture a = parse_architecture(k);
        EXPECT_EQ(parse_architecture(a.to_json()), a) << a.to_json();
    }
}

// ---- compile parameters ----------------------------------------------------------------------

TEST(ConfigCompile, MadlibFormSgdWithNesterov) {
    CompileParams c = parse_compile_params(
        "loss='categorical_crossentropy', optimizer='SGD(lr=0.05, momentum=0.9, nesterov=True)', metrics=['accuracy']");
    EXPECT_EQ(c.loss, Loss::SoftmaxCrossEntropy);
    EXPECT_TRUE(c.loss_given);
    EXPECT_EQ(c.optimizer.kind, OptimizerKind::Nesterov);
    EXPECT_DOUBLE_EQ(c.optimizer.learning_rate, 0.05);
    EXPECT_DOUBLE_EQ(c.optimizer.momentum, 0.9);
    ASSERT_EQ(c.metrics.size(), 1u);
    EXPECT_EQ(c.metrics[0], Metric::Accuracy);
}

TEST(ConfigCompile, MadlibSpacingQuotesAndLists) {
    CompileParams ref = parse_compile_params("loss='mse',optimizer='Adam(lr=0.001)',metrics=['mae','mse']");
    for (const char* s :
         {"  loss = 'mse' ,  optimizer = 'Adam( lr = 0.001 )' , metrics = [ 'mae' , 'mse' ]  ",
          "loss=\"mse\", optimizer=\"Adam(learning_rate=1e-3)\", metrics=[\"mae\", 'mse',]",
          "\n\tloss='mean_squared_error',\n\toptimizer='adam(lr=.001)',\n\tmetrics=['MAE','mean_squared_error']\n",
          "metrics=['mae','mse'], optimizer='keras.optimizers.Adam(lr=0.001)', loss='mse'"}) {
        CompileParams c = parse_compile_params(s);
        EXPECT_TRUE(same(c, ref)) << s << " -> " << c.to_json();
    }
    EXPECT_EQ(ref.optimizer.kind, OptimizerKind::Adam);
    EXPECT_EQ(ref.metrics, (std::vector<Metric>{Metric::MeanAbsoluteError, Metric::MeanSquaredError}));
}

TEST(ConfigCompile, EscapedQuotesInStrings) {
    // A quote inside a string is escaped Python-style; the name then is unknown.
    EXPECT_ERR(parse_compile_params(R"(loss='it\'s')"), InvalidParameter, "unsupported loss \"it's\"");
}

TEST(ConfigCompile, EmptyMeansDefaults) {
    for (const char* s : {"", "   ", "\n"}) {
        CompileParams c = parse_compile_params(s);
        EXPECT_TRUE(same(c, CompileParams{})) << c.to_json();
        EXPECT_FALSE(c.loss_given);
    }
    EXPECT_TRUE(same(parse_compile_params("{}"), CompileParams{}));
}

TEST(ConfigCompile, NonObjectJsonRefused) {
    EXPECT_ERR(parse_compile_params("null"), InvalidParameter, "must be a JSON object");
    EXPECT_ERR(parse_compile_params("[\"loss\"]"), InvalidParameter, "must be a JSON object");
    EXPECT_ERR(parse_compile_params("42"), InvalidParameter, "must be a JSON object");
    EXPECT_ERR(parse_fit_params("null"), InvalidParameter, "must be a JSON object");
    // Deeply nested valid JSON is refused by type, without building or walking it.
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    Error e = EXPECT_ERR(parse_compile_params(deep), InvalidParameter, "must be a JSON object");
    EXPECT_EQ(e.detail(), "Got JSON array.");
    EXPECT_ERR(parse_fit_params("{\"a\": " + deep + "}"), Syntax, "fit parameters");
}

TEST(ConfigCompile, MadlibSyntaxErrors) {
    Error e = EXPECT_ERR(parse_compile_params("loss='mse"), Syntax, "compile parameters");
    EXPECT_NE(e.detail().find("Unterminated"), std::string::npos) << e.detail();
    EXPECT_NE(e.detail().find("character 6"), std::string::npos) << e.detail();
    e = EXPECT_ERR(parse_compile_params("loss='mse',"), Syntax, "compile parameters");
    EXPECT_NE(e.detail().find("Trailing comma"), std::string::npos);
    e = EXPECT_ERR(parse_compile_params("loss 'mse'"), Syntax, "compile parameters");
    EXPECT_NE(e.detail().find("\"=\""), std::string::npos);
    e = EXPECT_ERR(parse_compile_params("loss=mse"), Syntax, "compile parameters");
    EXPECT_NE(e.hint().find("loss='mse'"), std::string::npos);
    EXPECT_ERR(parse_compile_params("loss='mse' optimizer='sgd'"), Syntax, "compile parameters");
    EXPECT_ERR(parse_compile_params("metrics=['accuracy'"), Syntax, "compile parameters");
    EXPECT_ERR(parse_compile_params("metrics=[['accuracy']]"), Syntax, "compile parameters");
    EXPECT_ERR(parse_compile_params("loss='mse',,optimizer='sgd'"), Syntax, "compile parameters");
    EXPECT_ERR(parse_compile_params("=1"), Syntax, "compile parameters");
    EXPECT_ERR(parse_compile_params("lr=1.2.3"), Syntax, "compile parameters");
    EXPECT_ERR(parse_compile_params("lr=1e"), Syntax, "compile parameters");
    EXPECT_ERR(parse_compile_params("loss='mse'; optimizer='sgd'"), Syntax, "compile parameters");
    EXPECT_ERR(parse_compile_params("{'loss': 'mse'}"), Syntax, "compile parameters");
}

TEST(ConfigCompile, OptimizerStringSyntaxErrors) {
    EXPECT_ERR(parse_compile_params("optimizer='SGD(lr=0.1'"), Syntax, "optimizer \"SGD(lr=0.1\"");
    Error e = EXPECT_ERR(parse_compile_params("optimizer='SGD(0.1)'"), Syntax, "optimizer");
    EXPECT_NE(e.hint().find("Name each argument"), std::string::npos);
    EXPECT_ERR(parse_compile_params("optimizer='SGD(lr=0.1) extra'"), Syntax, "optimizer");
    EXPECT_ERR(parse_compile_params("optimizer=''"), Syntax, "optimizer");
    EXPECT_ERR(parse_compile_params("optimizer='SGD(lr=[0.1])'"), Syntax, "optimizer");
}

TEST(ConfigCompile, OptimizerKinds) {
    CompileParams c = parse_compile_params("optimizer='sgd'");
    EXPECT_EQ(c.optimizer.kind, OptimizerKind::SGD);
    EXPECT_DOUBLE_EQ(c.optimizer.learning_rate, 0.01);
    c = parse_compile_params("optimizer='SGD(lr=0.1, momentum=0.5)'");
    EXPECT_EQ(c.optimizer.kind, OptimizerKind::Momentum);
    EXPECT_DOUBLE_EQ(c.optimizer.momentum, 0.5);
    c = parse_compile_params("optimizer='SGD(lr=0.1, momentum=0.0, nesterov=False, decay=1e-6)'");
    EXPECT_EQ(c.optimizer.kind, OptimizerKind::SGD);
    EXPECT_DOUBLE_EQ(c.optimizer.decay, 1e-6);
    c = parse_compile_params("optimizer='momentum'");  // the name asks for momentum: 0.9
    EXPECT_EQ(c.optimizer.kind, OptimizerKind::Momentum);
    EXPECT_DOUBLE_EQ(c.optimizer.momentum, 0.9);
    c = parse_compile_params("optimizer='Nesterov(momentum=0.8)'");
    EXPECT_EQ(c.optimizer.kind, OptimizerKind::Nesterov);
    EXPECT_DOUBLE_EQ(c.optimizer.momentum, 0.8);
    c = parse_compile_params("optimizer='Adam'");
    EXPECT_EQ(c.optimizer.kind, OptimizerKind::Adam);
    EXPECT_DOUBLE_EQ(c.optimizer.learning_rate, 0.001);  // Keras's Adam default
    c = parse_compile_params("optimizer='Adam(lr=0.01, beta_1=0.8, beta_2=0.99, epsilon=1e-8, amsgrad=False)'");
    EXPECT_DOUBLE_EQ(c.optimizer.beta1, 0.8);
    EXPECT_DOUBLE_EQ(c.optimizer.beta2, 0.99);
    EXPECT_DOUBLE_EQ(c.optimizer.epsilon, 1e-8);
    c = parse_compile_params(
        "optimizer='RMSprop(learning_rate=0.002, rho=0.95, epsilon=1e-6, centered=False, momentum=0)'");
    EXPECT_EQ(c.optimizer.kind, OptimizerKind::RMSprop);
    EXPECT_DOUBLE_EQ(c.optimizer.learning_rate, 0.002);
    EXPECT_DOUBLE_EQ(c.optimizer.rho, 0.95);
    EXPECT_DOUBLE_EQ(c.optimizer.epsilon, 1e-6);
    c = parse_compile_params("optimizer='RMSPROP'");
    EXPECT_EQ(c.optimizer.kind, OptimizerKind::RMSprop);
    // None takes the default, as in Keras (Adam(epsilon=None): K.epsilon(), 1e-7).
    c = parse_compile_params("optimizer='Adam(epsilon=None, lr=0.01)'");
    EXPECT_EQ(c.optimizer.kind, OptimizerKind::Adam);
    EXPECT_DOUBLE_EQ(c.optimizer.epsilon, parse_compile_params("optimizer='Adam'").optimizer.epsilon);
    EXPECT_DOUBLE_EQ(c.optimizer.learning_rate, 0.01);
}

TEST(ConfigCompile, OptimizerArgumentsThatDoNotBelongAreRefused) {
    Error e = EXPECT_ERR(parse_compile_params("optimizer='Adam(lr=0.01, momentum=0.9)'"), InvalidParameter,
                         "optimizer argument \"momentum\" does not apply to adam");
    EXPECT_NE(e.detail().find("beta_1"), std::string::npos);
    EXPECT_ERR(parse_compile_params("optimizer='SGD(beta_1=0.9)'"), InvalidParameter,
               "\"beta_1\" does not apply to sgd");
    EXPECT_ERR(parse_compile_params(R"({"optimizer": "adam", "momentum": 0.9})"), InvalidParameter,
               "\"momentum\" does not apply to adam");
    EXPECT_ERR(parse_compile_params("optimizer='RMSprop(beta_2=0.9)'"), InvalidParameter,
               "\"beta_2\" does not apply to rmsprop");
    EXPECT_ERR(parse_compile_params("optimizer='Adam(amsgrad=True)'"), InvalidParameter, "amsgrad");
    EXPECT_ERR(parse_compile_params("optimizer='RMSprop(centered=True)'"), InvalidParameter, "centered");
    EXPECT_ERR(parse_compile_params("optimizer='RMSprop(momentum=0.5)'"), InvalidParameter, "momentum");
    EXPECT_ERR(parse_compile_params("optimizer='SGD(clipnorm=1.0)'"), InvalidParameter, "\"clipnorm\"");
    EXPECT_ERR(parse_compile_params("optimizer='Adam(weight_decay=0.01)'"), InvalidParameter, "\"weight_decay\"");
    EXPECT_ERR(parse_compile_params("optimizer='SGD(foo=1)'"), InvalidParameter, "unknown optimizer argument \"foo\"");
    EXPECT_ERR(parse_compile_params("optimizer='SGD(nesterov=1)'"), InvalidParameter, "\"nesterov\"");
    EXPECT_ERR(parse_compile_params("optimizer='nesterov(nesterov=False)'"), InvalidParameter, "contradicts");
    e = EXPECT_ERR(parse_compile_params("optimizer='Adagrad2(lr=0.1)'"), InvalidParameter,
                   "unsupported optimizer \"Adagrad2\"");
    EXPECT_EQ(e.hint(),
              "Supported optimizers are: SGD (with momentum or nesterov), Adam, RMSprop, Adagrad, "
              "Adadelta, Adamax, Nadam.");
    EXPECT_ERR(parse_compile_params("optimizer='Adagrad(rho=0.9)'"), InvalidParameter,
               "\"rho\" does not apply to adagrad");
    EXPECT_ERR(parse_compile_params("optimizer='Adadelta(beta_1=0.9)'"), InvalidParameter,
               "\"beta_1\" does not apply to adadelta");
    EXPECT_ERR(parse_compile_params("optimizer='Adamax(schedule_decay=0.004)'"), InvalidParameter,
               "\"schedule_decay\" does not apply to adamax");
    EXPECT_ERR(parse_compile_params("optimizer='Adam(initial_accumulator_value=0.1)'"), InvalidParameter,
               "\"initial_accumulator_value\" does not apply to adam");
    EXPECT_ERR(parse_compile_params("optimizer='Nadam(amsgrad=False)'"), InvalidParameter,
               "\"amsgrad\" does not apply to nadam");
    e = EXPECT_ERR(parse_compile_params("optimizer='Nadam(decay=0.01)'"), InvalidParameter,
                   "decay is not supported with nadam");
    EXPECT_NE(e.hint().find("schedule_decay"), std::string::npos);
    EXPECT_ERR(parse_compile_params("optimizer='Adagrad(initial_accumulator_value=-0.1)'"), InvalidParameter,
               "invalid value for \"initial_accumulator_value\": -0.1");
    EXPECT_ERR(parse_compile_params("optimizer='Adadelta(rho=1.0)'"), InvalidParameter, "invalid value for \"rho\"");
    EXPECT_ERR(parse_compile_params("optimizer='Adadelta(clipnorm=1.0)'"), InvalidParameter, "\"clipnorm\"");
}

// Optimizers of Keras that hopper knows but does not implement: 0A000 with the reason.
TEST(ConfigCompile, KnownUnimplementedOptimizersAreNotSupported) {
    Error e = EXPECT_ERR(parse_compile_params("optimizer='Ftrl(lr=0.1)'"), FeatureNotSupported,
                         "optimizer \"Ftrl\" is not supported by hopper");
    EXPECT_EQ(e.message(), "optimizer \"Ftrl\" is not supported by hopper");
    EXPECT_NE(e.detail().find("FTRL"), std::string::npos);
    EXPECT_NE(e.hint().find("Supported optimizers are:"), std::string::npos);
    EXPECT_ERR(parse_compile_params(R"({"optimizer": {"name": "ftrl"}})"), FeatureNotSupported,
               "optimizer \"ftrl\" is not supported by hopper");
    e = EXPECT_ERR(parse_compile_params("optimizer='keras.optimizers.AdamW'"), FeatureNotSupported,
                   "optimizer \"AdamW\" is not supported by hopper");
    EXPECT_NE(e.hint().find("weight_decay"), std::string::npos);
    EXPECT_ERR(parse_compile_params("optimizer='Adafactor'"), FeatureNotSupported, "not supported by hopper");
    EXPECT_ERR(parse_compile_params("optimizer='Lion'"), FeatureNotSupported, "not supported by hopper");
}

TEST(ConfigCompile, AdagradAdadeltaAdamaxNadamAsKerasWritesThem) {
    // tf.keras 2.x defaults.
    CompileParams c = parse_compile_params("optimizer='adagrad'");
    EXPECT_EQ(c.optimizer.kind, OptimizerKind::Adagrad);
    EXPECT_DOUBLE_EQ(c.optimizer.learning_rate, 0.001);
    EXPECT_DOUBLE_EQ(c.optimizer.initial_accumulator_value, 0.1);
    EXPECT_DOUBLE_EQ(c.optimizer.epsilon, 1e-7);
    c = parse_compile_params("optimizer='Adagrad(lr=0.01)'");
    EXPECT_EQ(c.optimizer.kind, OptimizerKind::Adagrad);
    EXPECT_DOUBLE_EQ(c.optimizer.learning_rate, 0.01);
    c = parse_compile_params(
        "optimizer='Adagrad(learning_rate=0.05, initial_accumulator_value=0.0, epsilon=1e-6, "
        "decay=0.01)'");
    EXPECT_DOUBLE_EQ(c.optimizer.initial_accumulator_value, 0.0);
    EXPECT_DOUBLE_EQ(c.optimizer.epsilon, 1e-6);
    EXPECT_DOUBLE_EQ(c.optimizer.decay, 0.01);
    c = parse_compile_params("optimizer='adadelta'");
    EXPECT_EQ(c.optimizer.kind, OptimizerKind::Adadelta);
    EXPECT_DOUBLE_EQ(c.optimizer.learning_rate, 0.001);
    EXPECT_DOUBLE_EQ(c.optimizer.rho, 0.95);
    EXPECT_DOUBLE_EQ(c.optimizer.epsilon, 1e-7);
    c = parse_compile_params("optimizer='Adadelta(lr=1.0, rho=0.9)'");
    EXPECT_DOUBLE_EQ(c.optimizer.learning_rate, 1.0);
    EXPECT_DOUBLE_EQ(c.optimizer.rho, 0.9);
    c = parse_compile_params(R"({"optimizer": "adadelta", "rho": 0.8})");  // a compile parameter of its own
    EXPECT_DOUBLE_EQ(c.optimizer.rho, 0.8);
    c = parse_compile_params("optimizer='Adamax(learning_rate=0.002, beta_1=0.8, beta_2=0.99)'");
    EXPECT_EQ(c.optimizer.kind, OptimizerKind::Adamax);
    EXPECT_DOUBLE_EQ(c.optimizer.learning_rate, 0.002);
    EXPECT_DOUBLE_EQ(c.optimizer.beta1, 0.8);
    EXPECT_DOUBLE_EQ(c.optimizer.beta2, 0.99);
    EXPECT_DOUBLE_EQ(parse_compile_params("optimizer='Adamax'").optimizer.learning_rate, 0.001);
    c = parse_compile_params("optimizer='Nadam'");
    EXPECT_EQ(c.optimizer.kind, OptimizerKind::Nadam);
    EXPECT_DOUBLE_EQ(c.optimizer.learning_rate, 0.001);
    EXPECT_DOUBLE_EQ(c.optimizer.beta1, 0.9);
    EXPECT_DOUBLE_EQ(c.optimizer.beta2, 0.999);
    EXPECT_DOUBLE_EQ(c.optimizer.epsilon, 1e-7);
    EXPECT_DOUBLE_EQ(c.optimizer.schedule_decay, 0.004);
    c = parse_compile_params(
        "optimizer='Nadam(lr=0.002, beta_1=0.95, beta_2=0.9, epsilon=None, schedule_decay=0.01, "
        "decay=0)'");
    EXPECT_DOUBLE_EQ(c.optimizer.learning_rate, 0.002);
    EXPECT_DOUBLE_EQ(c.optimizer.schedule_decay, 0.01);
    EXPECT_DOUBLE_EQ(c.optimizer.epsilon, 1e-7);
    EXPECT_EQ(parse_compile_params("optimizer='NADAM'").optimizer.kind, OptimizerKind::Nadam);
    EXPECT_EQ(parse_compile_params("optimizer='tf.keras.optimizers.Adamax'").optimizer.kind, OptimizerKind::Adamax);
    // Canonical JSON: the name and this optimizer's own hyperparameters, in the table's order.
    EXPECT_NE(
        parse_compile_params("optimizer='adadelta'")
            .to_json()
            .find(R"("optimizer":{"name":"adadelta","learning_rate":0.001,"rho":0.95,"epsilon":1e-07,"decay":0.0})"),
        std::string::npos)
        << parse_compile_params("optimizer='adadelta'").to_json();
    EXPECT_NE(
        parse_compile_params("optimizer='Adagrad'")
            .to_json()
            .find(
                R"({"name":"adagrad","learning_rate":0.001,"initial_accumulator_value":0.1,"epsilon":1e-07,"decay":0.0})"),
        std::string::npos);
    EXPECT_NE(
        parse_compile_params("optimizer='Nadam'")
            .to_json()
            .find(
                R"({"name":"nadam","learning_rate":0.001,"beta_1":0.9,"beta_2":0.999,"epsilon":1e-07,"schedule_decay":0.004,"decay":0.0})"),
        std::string::npos);
}

TEST(ConfigCompile, DuplicateParametersRefused) {
    EXPECT_ERR(parse_compile_params("optimizer='SGD(lr=0.1, learning_rate=0.2)'"), InvalidParameter,
               "duplicate value for \"learning_rate\"");
    EXPECT_ERR(parse_compile_params("lr=0.1, optimizer='SGD(lr=0.2)'"), InvalidParameter, "\"learning_rate\"");
    EXPECT_ERR(parse_compile_params("loss='mse', loss='mse'"), InvalidParameter, "duplicate key \"loss\"");
    EXPECT_ERR(parse_compile_params(R"({"loss": "mse", "loss": "mse"})"), InvalidParameter, "duplicate key \"loss\"");
    EXPECT_ERR(parse_compile_params(R"({"lr": 0.1, "learning_rate": 0.1})"), InvalidParameter, "\"learning_rate\"");
}

TEST(ConfigCompile, InvalidValuesNameKeyAndValue) {
    Error e = EXPECT_ERR(parse_compile_params(R"({"learning_rate": -1})"), InvalidParameter,
                         "invalid value for \"learning_rate\": -1");
    EXPECT_EQ(e.detail(), "learning_rate must be a positive finite number.");
    EXPECT_ERR(parse_compile_params("optimizer='SGD(lr=0)'"), InvalidParameter, "invalid value for \"lr\": 0");
    EXPECT_ERR(parse_compile_params("lr='0.1'"), InvalidParameter, "\"lr\": \"0.1\"");
    EXPECT_ERR(parse_compile_params("momentum=1"), InvalidParameter, "\"momentum\": 1");
    EXPECT_ERR(parse_compile_params("momentum=-0.1"), InvalidParameter, "\"momentum\": -0.1");
    EXPECT_ERR(parse_compile_params("optimizer='adam', beta_1=1.0"), InvalidParameter, "\"beta_1\": 1");
    EXPECT_ERR(parse_compile_params("optimizer='adam', beta_2=-0.5"), InvalidParameter, "\"beta_2\"");
    EXPECT_ERR(parse_compile_params("optimizer='adam', epsilon=0"), InvalidParameter, "\"epsilon\": 0");
    EXPECT_ERR(parse_compile_params("optimizer='rmsprop', rho=1"), InvalidParameter, "\"rho\": 1");
    EXPECT_ERR(parse_compile_params("decay=-1"), InvalidParameter, "\"decay\": -1");
    EXPECT_ERR(parse_compile_params("weight_decay=-0.5"), InvalidParameter, "\"weight_decay\": -0.5");
    EXPECT_ERR(parse_compile_params("weight_decay='x'"), InvalidParameter, "\"weight_decay\"");
    EXPECT_ERR(parse_compile_params("top_k=0"), InvalidParameter, "\"top_k\": 0");
    EXPECT_ERR(parse_compile_params("top_k=1001"), InvalidParameter, "\"top_k\": 1001");
    EXPECT_ERR(parse_compile_params("top_k=2.5"), InvalidParameter, "\"top_k\": 2.5");
    EXPECT_ERR(parse_compile_params(R"({"optimizer": 5})"), InvalidParameter, "\"optimizer\": 5");
}

TEST(ConfigCompile, LossNames) {
    EXPECT_EQ(parse_compile_params("loss='categorical_crossentropy'").loss, Loss::SoftmaxCrossEntropy);
    EXPECT_EQ(parse_compile_params("loss='softmax_cross_entropy'").loss, Loss::SoftmaxCrossEntropy);
    EXPECT_EQ(parse_compile_params("loss='CategoricalCrossentropy'").loss, Loss::SoftmaxCrossEntropy);
    EXPECT_EQ(parse_compile_params("loss='binary_crossentropy'").loss, Loss::BinaryCrossEntropy);
    EXPECT_EQ(parse_compile_params("loss='binary_cross_entropy'").loss, Loss::BinaryCrossEntropy);
    EXPECT_EQ(parse_compile_params("loss='mean_squared_error'").loss, Loss::MeanSquaredError);
    EXPECT_EQ(parse_compile_params("loss='mse'").loss, Loss::MeanSquaredError);
    EXPECT_FALSE(parse_compile_params("loss=None").loss_given);
    Error e = EXPECT_ERR(parse_compile_params("loss='sparse_categorical_crossentropy'"), InvalidParameter,
                         "unsupported loss \"sparse_categorical_crossentropy\"");
    EXPECT_NE(e.hint().find("categorical_crossentropy"), std::string::npos);
    EXPECT_NE(e.detail().find("one-hot"), std::string::npos);
    e = EXPECT_ERR(parse_compile_params("loss='hinge'"), InvalidParameter, "unsupported loss \"hinge\"");
    EXPECT_NE(e.hint().find("binary_crossentropy"), std::string::npos);
    EXPECT_ERR(parse_compile_params("loss=1"), InvalidParameter, "\"loss\": 1");
}

TEST(ConfigCompile, MetricNames) {
    CompileParams c = parse_compile_params("metrics=['acc', 'top_k_categorical_accuracy', 'mae', 'mse', 'loss']");
    EXPECT_EQ(c.metrics, (std::vector<Metric>{Metric::Accuracy, Metric::TopKAccuracy, Metric::MeanAbsoluteError,
                                              Metric::MeanSquaredError, Metric::Loss}));
    for (const char* m : {"accuracy", "categorical_accuracy", "binary_accuracy", "Accuracy"})
        EXPECT_EQ(parse_compile_params(std::string("metrics=['") + m + "']").metrics,
                  std::vector<Metric>{Metric::Accuracy})
            << m;
    EXPECT_EQ(parse_compile_params("metrics=['top_k_accuracy']").metrics, std::vector<Metric>{Metric::TopKAccuracy});
    EXPECT_EQ(parse_compile_params("metrics=['mean_absolute_error', 'mean_squared_error']").metrics,
              (std::vector<Metric>{Metric::MeanAbsoluteError, Metric::MeanSquaredError}));
    EXPECT_TRUE(parse_compile_params("metrics=[]").metrics.empty());
    EXPECT_TRUE(parse_compile_params("metrics=None").metrics.empty());
}

TEST(ConfigCompile, MetricRefusals) {
    Error e = EXPECT_ERR(parse_compile_params("metrics=['acc', 'accuracy']"), InvalidParameter,
                         "duplicate metric \"accuracy\"");
    EXPECT_NE(e.detail().find("same metric"), std::string::npos);
    EXPECT_ERR(parse_compile_params("metrics=['mse', 'mse']"), InvalidParameter, "duplicate metric \"mse\"");
    EXPECT_ERR(parse_compile_params("metrics=['precision']"), InvalidParameter, "unsupported metric \"precision\"");
    EXPECT_ERR(parse_compile_params("metrics=['sparse_categorical_accuracy']"), InvalidParameter, "sparse");
    EXPECT_ERR(parse_compile_params("metrics='accuracy'"), InvalidParameter, "\"metrics\"");
    EXPECT_ERR(parse_compile_params("metrics=[1]"), InvalidParameter, "\"metrics\": 1");
}

TEST(ConfigCompile, UnknownAndUnsupportedKeys) {
    Error e = EXPECT_ERR(parse_compile_params("learnin_rate=0.1"), InvalidParameter,
                         "unknown key \"learnin_rate\" in compile parameters");
    EXPECT_NE(e.hint().find("Valid keys are: "), std::string::npos);
    EXPECT_NE(e.hint().find("learning_rate"), std::string::npos);
    e = EXPECT_ERR(parse_compile_params("weighted_metrics=['accuracy']"), FeatureNotSupported,
                   "unsupported key \"weighted_metrics\" in compile parameters");
    EXPECT_NE(e.detail().find("does not support"), std::string::npos);
    EXPECT_ERR(parse_compile_params(R"({"Loss": "mse"})"), InvalidParameter, "unknown key \"Loss\"");
}

TEST(ConfigCompile, JsonForms) {
    CompileParams c = parse_compile_params(
        R"({"loss": "mse", "optimizer": "nesterov", "learning_rate": 0.2, "momentum": 0.7, "weight_decay": 1e-4, "metrics": ["mae"], "top_k": 3})");
    EXPECT_EQ(c.loss, Loss::MeanSquaredError);
    EXPECT_EQ(c.optimizer.kind, OptimizerKind::Nesterov);
    EXPECT_DOUBLE_EQ(c.optimizer.learning_rate, 0.2);
    EXPECT_DOUBLE_EQ(c.optimizer.momentum, 0.7);
    EXPECT_DOUBLE_EQ(c.optimizer.weight_decay, 1e-4);
    EXPECT_EQ(c.top_k, 3);
    c = parse_compile_params(R"J({"optimizer": "Adam(lr=0.005, beta_1=0.85)"})J");
    EXPECT_EQ(c.optimizer.kind, OptimizerKind::Adam);
    EXPECT_DOUBLE_EQ(c.optimizer.learning_rate, 0.005);
    EXPECT_DOUBLE_EQ(c.optimizer.beta1, 0.85);
    c = parse_compile_params(R"({"optimizer": {"name": "rmsprop", "lr": 0.003, "rho": 0.8}})");
    EXPECT_EQ(c.optimizer.kind, OptimizerKind::RMSprop);
    EXPECT_DOUBLE_EQ(c.optimizer.learning_rate, 0.003);
    EXPECT_DOUBLE_EQ(c.optimizer.rho, 0.8);
    c = parse_compile_params(R"({"optimizer": "sgd", "nesterov": true})");
    EXPECT_EQ(c.optimizer.kind, OptimizerKind::Nesterov);
    EXPECT_ERR(parse_compile_params(R"({"optimizer": {"lr": 0.1}})"), InvalidParameter, "\"name\"");
    EXPECT_ERR(parse_compile_params(R"({"loss": "mse",})"), Syntax, "compile parameters");
    EXPECT_ERR(parse_compile_params(R"({"loss_given": true})"), InvalidParameter, "loss_given");
    // MADlib form accepts weight_decay at top level (hopper extension).
    EXPECT_DOUBLE_EQ(parse_compile_params("weight_decay=0.001").optimizer.weight_decay, 0.001);
}

TEST(ConfigCompile, CanonicalJsonIsExact) {
    EXPECT_EQ(
        CompileParams{}.to_json(),
        R"({"loss":"softmax_cross_entropy","loss_given":false,"optimizer":{"name":"sgd","learning_rate":0.01,"decay":0.0},"weight_decay":0.0,"metrics":[],"top_k":5})");
    CompileParams c =
        parse_compile_params("loss='mse', optimizer='Adam(lr=0.001)', metrics=['mae', 'loss'], weight_decay=0.0001");
    EXPECT_EQ(
        c.to_json(),
        R"({"loss":"mean_squared_error","loss_given":true,"optimizer":{"name":"adam","learning_rate":0.001,"beta_1":0.9,"beta_2":0.999,"epsilon":1e-07,"decay":0.0},"weight_decay":0.0001,"metrics":["mean_absolute_error","loss"],"top_k":5})");
    c = parse_compile_params("optimizer='SGD(lr=0.05, momentum=0.9)'");
    EXPECT_EQ(
        c.to_json(),
        R"({"loss":"softmax_cross_entropy","loss_given":false,"optimizer":{"name":"momentum","learning_rate":0.05,"momentum":0.9,"decay":0.0},"weight_decay":0.0,"metrics":[],"top_k":5})");
    c = parse_compile_params("optimizer='rmsprop'");
    EXPECT_NE(c.to_json().find(
                  R"("optimizer":{"name":"rmsprop","learning_rate":0.001,"rho":0.9,"epsilon":1e-07,"decay":0.0})"),
              std::string::npos)
        << c.to_json();
}

TEST(ConfigCompile, RoundTripsForEveryOptimizerAndLoss) {
    const char* inputs[] = {
        "",
        "loss='categorical_crossentropy', optimizer='SGD(lr=0.05, momentum=0.9, nesterov=True)', metrics=['accuracy', 'top_k_accuracy'], top_k=3",
        "loss='binary_crossentropy', optimizer='SGD(lr=0.3, decay=0.001)', metrics=['binary_accuracy']",
        "loss='mse', optimizer='momentum(momentum=0.0)', weight_decay=0.01",
        "optimizer='nesterov(momentum=0.0)'",
        "loss='mse', optimizer='Adam(lr=0.0003, beta_1=0.5, beta_2=0.95, epsilon=1e-9, decay=0.1)', metrics=['mse','mae','loss']",
        "optimizer='RMSprop(lr=0.1, rho=0.0, epsilon=0.3)'",
        "optimizer='Adagrad(lr=0.25, initial_accumulator_value=0.0, epsilon=1e-9, decay=0.5)'",
        "optimizer='adadelta'",
        "optimizer='Adadelta(lr=1.0, rho=0.123456789, epsilon=1e-6, decay=0.01)'",
        "loss='mse', optimizer='Adamax(learning_rate=0.002, beta_1=0.5, beta_2=0.95, decay=0.1)'",
        "optimizer='Nadam(lr=0.002, beta_1=0.99, beta_2=0.9, epsilon=3e-8, schedule_decay=0.0)'",
        R"({"optimizer": {"name": "nadam", "schedule_decay": 0.1}, "beta_1": 0.3})",
        R"({"loss": "mse", "loss_given": false, "optimizer": "sgd"})",
    };
    for (const char* s : inputs) {
        CompileParams a = parse_compile_params(s);
        CompileParams b = parse_compile_params(a.to_json());
        EXPECT_TRUE(same(a, b)) << s << "\n" << a.to_json() << "\n" << b.to_json();
        EXPECT_EQ(a.to_json(), b.to_json());
    }
}

// ---- fit parameters --------------------------------------------------------------------------

TEST(ConfigFit, MadlibAndJsonForms) {
    FitParams f = parse_fit_params("batch_size=256, epochs=1");
    EXPECT_EQ(f.batch_size, 256);
    EXPECT_EQ(f.epochs, 1);
    EXPECT_EQ(f.seed, 42u);
    f = parse_fit_params("  batch_size = 64 ,epochs=5, seed=7, verbose=0 ");
    EXPECT_EQ(f.batch_size, 64);
    EXPECT_EQ(f.epochs, 5);
    EXPECT_EQ(f.seed, 7u);
    f = parse_fit_params(R"({"batch_size": 10, "epochs": 2, "seed": 9223372036854775807, "verbose": true})");
    EXPECT_EQ(f.batch_size, 10);
    EXPECT_EQ(f.seed, 9223372036854775807ull);
    EXPECT_TRUE(same(parse_fit_params(""), FitParams{}));
    EXPECT_TRUE(same(parse_fit_params("batch_size=256.0"), parse_fit_params("batch_size=256")));
}

TEST(ConfigFit, ShuffleIsKerasShuffleOnByDefault) {
    EXPECT_TRUE(parse_fit_params("").shuffle);
    EXPECT_TRUE(parse_fit_params("batch_size=32, shuffle=True").shuffle);
    EXPECT_FALSE(parse_fit_params("shuffle=False").shuffle);
    EXPECT_FALSE(parse_fit_params(R"({"shuffle": false})").shuffle);
    EXPECT_ERR(parse_fit_params("shuffle=1"), InvalidParameter, "\"shuffle\"");
    EXPECT_ERR(parse_fit_params("shuffle='batch'"), InvalidParameter, "\"shuffle\"");
    // Canonical JSON names it only when off: configurations without it keep their text.
    EXPECT_EQ(parse_fit_params("").to_json(), R"({"batch_size":32,"epochs":1,"seed":42})");
    const FitParams off = parse_fit_params("shuffle=False");
    EXPECT_EQ(off.to_json(), R"({"batch_size":32,"epochs":1,"seed":42,"shuffle":false})");
    EXPECT_TRUE(same(parse_fit_params(off.to_json()), off));
}

TEST(ConfigFit, PrecisionIsFloat32UnlessBFloat16IsAskedFor) {
    EXPECT_EQ(parse_fit_params("").precision, FitParams::Precision::Float32);
    EXPECT_EQ(parse_fit_params("precision='float32'").precision, FitParams::Precision::Float32);
    const FitParams bf = parse_fit_params("batch_size=256, precision='bfloat16'");
    EXPECT_EQ(bf.precision, FitParams::Precision::BFloat16);
    EXPECT_EQ(parse_fit_params(R"({"precision": "bfloat16"})").precision, FitParams::Precision::BFloat16);
    EXPECT_ERR(parse_fit_params("precision='float16'"), InvalidParameter, "\"precision\"");
    EXPECT_ERR(parse_fit_params("precision=16"), InvalidParameter, "\"precision\"");
    // Canonical JSON names it only for bfloat16, and reads back.
    EXPECT_EQ(parse_fit_params("precision='float32'").to_json(), R"({"batch_size":32,"epochs":1,"seed":42})");
    EXPECT_EQ(bf.to_json(), R"({"batch_size":256,"epochs":1,"seed":42,"precision":"bfloat16"})");
    EXPECT_TRUE(same(parse_fit_params(bf.to_json()), bf));
}

TEST(ConfigFit, BFloat16IsRefusedWhereTheMachineCannotTrainInIt) {
    const FitParams bf = parse_fit_params("precision='bfloat16'");
    hopper::detail::bfloat16_support_override = 0;
    Error e = EXPECT_ERR(require_supported_precision(bf), FeatureNotSupported,
                         "precision 'bfloat16' is not supported on this machine");
    EXPECT_NE(e.hint().find("precision='float32'"), std::string::npos);
    // A stored configuration still reads (a bfloat16-trained model is scored in float32 anywhere).
    EXPECT_NO_THROW(parse_fit_params(bf.to_json()));
    require_supported_precision(FitParams{});  // float32: always
    hopper::detail::bfloat16_support_override = 1;
    require_supported_precision(bf);
    hopper::detail::bfloat16_support_override = -1;
}

// Keras' initial_epoch: fit trains epochs - initial_epoch epochs (MADlib's tests pass it).
TEST(ConfigFit, InitialEpochTrainsTheRemainingEpochs) {
    EXPECT_EQ(parse_fit_params("epochs=10, initial_epoch=1").epochs, 9);
    EXPECT_EQ(parse_fit_params("initial_epoch=0").epochs, 1);
    EXPECT_EQ(parse_fit_params("epochs=10, initial_epoch=1").to_json(), parse_fit_params("epochs=9").to_json());
    EXPECT_ERR(parse_fit_params("epochs=3, initial_epoch=3"), InvalidParameter, "\"initial_epoch\": 3");
    EXPECT_ERR(parse_fit_params("initial_epoch=-1"), InvalidParameter, "\"initial_epoch\"");
    EXPECT_ERR(parse_fit_params("epochs=5, initial_epoch=1.5"), InvalidParameter, "\"initial_epoch\"");
}

// Keras' loss_weights: one weight for the one output, finite and >= 0; kept in canonical JSON
// only when it is not 1 (models without it keep their JSON).
TEST(ConfigCompile, LossWeights) {
    CompileParams c = parse_compile_params("loss='categorical_crossentropy', loss_weights=[2]");
    EXPECT_EQ(c.loss_weight, 2.0);
    EXPECT_NE(c.to_json().find("\"loss_weights\":[2.0]"), std::string::npos) << c.to_json();
    EXPECT_EQ(parse_compile_params(c.to_json()).loss_weight, 2.0);
    EXPECT_EQ(parse_compile_params("loss_weights=[0]").loss_weight, 0.0);
    EXPECT_EQ(parse_compile_params("loss_weights=None").loss_weight, 1.0);
    EXPECT_EQ(parse_compile_params("loss_weights=[1]").to_json().find("loss_weights"), std::string::npos);
    Error e = EXPECT_ERR(parse_compile_params("loss_weights=[1, 2]"), InvalidParameter, "\"loss_weights\"");
    EXPECT_NE(e.detail().find("one weight per output"), std::string::npos) << e.detail();
    EXPECT_ERR(parse_compile_params("loss_weights=[]"), InvalidParameter, "\"loss_weights\"");
    EXPECT_ERR(parse_compile_params("loss_weights=2"), InvalidParameter, "\"loss_weights\"");
    EXPECT_ERR(parse_compile_params("loss_weights=['a']"), InvalidParameter, "\"loss_weights\"");
    EXPECT_ERR(parse_compile_params("loss_weights=[-1]"), InvalidParameter, "\"loss_weights\"");
}

// An unsupported Keras option given as None (its default) asks for nothing.
TEST(ConfigParams, UnsupportedOptionsAsNoneAreAccepted) {
    EXPECT_EQ(parse_compile_params("sample_weight_mode=None, loss='mse'").loss, Loss::MeanSquaredError);
    EXPECT_ERR(parse_compile_params("sample_weight_mode='temporal'"), FeatureNotSupported,
               "unsupported key \"sample_weight_mode\"");
    EXPECT_ERR(parse_compile_params("nonsense=None"), InvalidParameter, "unknown key \"nonsense\"");
}

// Keras' class_weight: class indices 0..K-1 to weights >= 0, as a Python dict or a JSON object;
// kept in canonical JSON only when given; only with categorical cross-entropy, one weight a class.
TEST(ConfigFit, ClassWeight) {
    FitParams f = parse_fit_params("batch_size=8, class_weight={0: 1, 1: 10.5}");
    EXPECT_EQ(f.class_weight, (std::vector<float>{1.0f, 10.5f}));
    EXPECT_NE(f.to_json().find("\"class_weight\":{\"0\":1.0,\"1\":10.5}"), std::string::npos) << f.to_json();
    EXPECT_EQ(parse_fit_params(f.to_json()).class_weight, f.class_weight);
    EXPECT_EQ(parse_fit_params(R"({"class_weight": {"1": 2, "0": 0.5}})").class_weight,
              (std::vector<float>{0.5f, 2.0f}));
    EXPECT_EQ(parse_fit_params("class_weight={'0': 1, '1': 2,}").class_weight, (std::vector<float>{1.0f, 2.0f}));
    EXPECT_TRUE(parse_fit_params("class_weight=None").class_weight.empty());
    EXPECT_EQ(parse_fit_params("batch_size=8").to_json().find("class_weight"), std::string::npos);
    EXPECT_ERR(parse_fit_params("class_weight={0: 1, 2: 1}"), InvalidParameter, "\"class_weight\"");
    EXPECT_ERR(parse_fit_params("class_weight={0: -1, 1: 1}"), InvalidParameter, "\"class_weight\"");
    EXPECT_ERR(parse_fit_params("class_weight={0: 'a'}"), InvalidParameter, "\"class_weight\"");
    EXPECT_ERR(parse_fit_params("class_weight={}"), InvalidParameter, "\"class_weight\"");
    EXPECT_ERR(parse_fit_params("class_weight=3"), InvalidParameter, "\"class_weight\"");
    EXPECT_ERR(parse_fit_params("class_weight={0: 1, 0: 2}"), InvalidParameter, "duplicate key");
    EXPECT_ERR(parse_fit_params("class_weight={0: [1]}"), Syntax, "syntax error");
    EXPECT_ERR(parse_fit_params("class_weight={0 1}"), Syntax, "syntax error");
    EXPECT_ERR(parse_fit_params("class_weight={x: 1}"), Syntax, "syntax error");
    EXPECT_ERR(parse_fit_params("class_weight={0: 1e400}"), InvalidParameter, "\"class_weight\"");
    EXPECT_ERR(parse_fit_params("class_weight={0: 1, 1: 1e39}"), InvalidParameter, "\"class_weight\"");
    EXPECT_ERR(parse_fit_params("class_weight={0: 0, 1: 0}"), InvalidParameter, "\"class_weight\"");
    EXPECT_EQ(parse_fit_params("class_weight={0: 0, 1: 1}").class_weight, (std::vector<float>{0.0f, 1.0f}));
    Error twice = EXPECT_ERR(parse_fit_params("class_weight={0: 1, 00: 2}"), InvalidParameter, "\"class_weight\"");
    EXPECT_NE(twice.detail().find("given twice"), std::string::npos) << twice.detail();

    const Architecture softmax =
        parse_architecture(R"({"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]})");
    EXPECT_EQ(resolve_config(softmax, parse_compile_params(""), parse_fit_params("class_weight={0: 1, 1: 2, 2: 3}"))
                  .fit.class_weight.size(),
              3u);
    EXPECT_ERR(resolve_config(softmax, parse_compile_params(""), parse_fit_params("class_weight={0: 1, 1: 2}")),
               InvalidParameter, "class_weight has 2 weights but layer 1 has 3 units");
    const Architecture linear = parse_architecture(R"({"input_dim": 2, "layers": [{"units": 2}]})");
    EXPECT_ERR(resolve_config(linear, parse_compile_params(""), parse_fit_params("class_weight={0: 1, 1: 2}")),
               InvalidParameter, "class_weight needs categorical cross-entropy");
}

TEST(ConfigFit, StepsPerEpoch) {
    // MADlib's test file writes it so: (10 - 1) epochs of 2 whole-buffer steps.
    FitParams f = parse_fit_params("epochs=10, verbose=0, shuffle=True, initial_epoch=1, steps_per_epoch=2");
    EXPECT_EQ(f.steps_per_epoch, 2);
    EXPECT_EQ(f.epochs, 9);
    EXPECT_NE(f.to_json().find("\"steps_per_epoch\":2"), std::string::npos);
    EXPECT_EQ(parse_fit_params(f.to_json()).steps_per_epoch, 2);
    // Not given: not written, so other configurations keep their canonical JSON.
    EXPECT_EQ(parse_fit_params("batch_size=8").to_json().find("steps_per_epoch"), std::string::npos);
    EXPECT_EQ(parse_fit_params("batch_size=8").steps_per_epoch, 0);
    EXPECT_ERR(parse_fit_params("steps_per_epoch=0"), InvalidParameter, "steps_per_epoch");
    EXPECT_ERR(parse_fit_params("steps_per_epoch=10001"), InvalidParameter, "steps_per_epoch");
    EXPECT_ERR(parse_fit_params("steps_per_epoch=1.5"), InvalidParameter, "steps_per_epoch");
    EXPECT_ERR(parse_fit_params("steps_per_epoch='2'"), InvalidParameter, "steps_per_epoch");
}

TEST(ConfigFit, Refusals) {
    Error e = EXPECT_ERR(parse_fit_params("batch_size=32, validation_steps=2"), FeatureNotSupported,
                         "unsupported key \"validation_steps\" in fit parameters");
    EXPECT_NE(e.detail().find("hopper does not support"), std::string::npos);
    EXPECT_ERR(parse_fit_params("validation_split=0.1"), FeatureNotSupported, "\"validation_split\"");
    EXPECT_ERR(parse_fit_params("callbacks=[]"), FeatureNotSupported, "\"callbacks\"");
    e = EXPECT_ERR(parse_fit_params("batchsize=32"), InvalidParameter, "unknown key \"batchsize\" in fit parameters");
    EXPECT_NE(e.hint().find("batch_size"), std::string::npos);
    EXPECT_ERR(parse_fit_params("batch_size=0"), InvalidParameter, "invalid value for \"batch_size\": 0");
    EXPECT_ERR(parse_fit_params("batch_size=1000001"), Limit, "\"batch_size\"");
    EXPECT_ERR(parse_fit_params("batch_size=1.5"), InvalidParameter, "\"batch_size\": 1.5");
    EXPECT_ERR(parse_fit_params("batch_size='32'"), InvalidParameter, "\"batch_size\"");
    EXPECT_ERR(parse_fit_params("epochs=0"), InvalidParameter, "\"epochs\": 0");
    EXPECT_ERR(parse_fit_params("epochs=1001"), InvalidParameter, "\"epochs\": 1001");
    EXPECT_ERR(parse_fit_params("seed=-1"), InvalidParameter, "\"seed\": -1");
    EXPECT_ERR(parse_fit_params("seed=9223372036854775808"), InvalidParameter, "\"seed\"");
    EXPECT_ERR(parse_fit_params("seed=1e30"), InvalidParameter, "\"seed\"");
    EXPECT_ERR(parse_fit_params("verbose='x'"), InvalidParameter, "\"verbose\"");
    EXPECT_ERR(parse_fit_params("batch_size=32,"), Syntax, "fit parameters");
    EXPECT_ERR(parse_fit_params("batch_size=32 epochs=1"), Syntax, "fit parameters");
    EXPECT_ERR(parse_fit_params(R"({"batch_size": 32)"), Syntax, "fit parameters");
    EXPECT_ERR(parse_fit_params("[1]"), InvalidParameter, "must be a JSON object");
}

TEST(ConfigFit, CanonicalJsonAndRoundTrip) {
    EXPECT_EQ(FitParams{}.to_json(), R"({"batch_size":32,"epochs":1,"seed":42})");
    FitParams f;
    f.batch_size = 1000000;
    f.epochs = 1000;
    f.seed = 9223372036854775807ull;
    FitParams g = parse_fit_params(f.to_json());
    EXPECT_TRUE(same(f, g));
    EXPECT_EQ(f.to_json(), g.to_json());
}

// ---- resolve_config --------------------------------------------------------------------------

TEST(ConfigResolve, LossFromOutputActivation) {
    CompileParams c;
    EXPECT_EQ(resolve_config(arch_of(4, {{3, Activation::Softmax}}), c, {}).compile.loss, Loss::SoftmaxCrossEntropy);
    EXPECT_EQ(resolve_config(arch_of(4, {{1, Activation::Sigmoid}}), c, {}).compile.loss, Loss::BinaryCrossEntropy);
    EXPECT_EQ(resolve_config(arch_of(4, {{1, Activation::Linear}}), c, {}).compile.loss, Loss::MeanSquaredError);
    EXPECT_EQ(resolve_config(arch_of(4, {{2, Activation::Relu}}), c, {}).compile.loss, Loss::MeanSquaredError);
    ModelConfig m = resolve_config(arch_of(4, {{1, Activation::Tanh}}), c, {});
    EXPECT_EQ(m.compile.loss, Loss::MeanSquaredError);
    EXPECT_FALSE(m.compile.loss_given);  // records that the loss was inferred
    // A given loss is kept.
    c = parse_compile_params("loss='mse'");
    EXPECT_EQ(resolve_config(arch_of(4, {{3, Activation::Softmax}}), c, {}).compile.loss, Loss::MeanSquaredError);
}

TEST(ConfigResolve, LossMustMatchOutput) {
    Error e = EXPECT_ERR(resolve_config(arch_of(4, {{3, Activation::Linear}}),
                                        parse_compile_params("loss='categorical_crossentropy'"), {}),
                         InvalidParameter,
                         "loss categorical_crossentropy (softmax_cross_entropy) needs a softmax output layer");
    EXPECT_NE(e.hint().find("softmax"), std::string::npos);
    e = EXPECT_ERR(resolve_config(arch_of(4, {{3, Activation::Sigmoid}}),
                                  parse_compile_params("loss='categorical_crossentropy'"), {}),
                   InvalidParameter, "softmax output layer");
    EXPECT_NE(e.hint().find("binary_crossentropy"), std::string::npos);
    e = EXPECT_ERR(resolve_config(arch_of(4, {{3, Activation::Softmax}}),
                                  parse_compile_params("loss='binary_crossentropy'"), {}),
                   InvalidParameter, "loss binary_crossentropy needs a sigmoid output layer");
    EXPECT_NE(e.hint().find("categorical_crossentropy"), std::string::npos);
    EXPECT_ERR(resolve_config(arch_of(4, {{1, Activation::Relu}}), parse_compile_params("loss='binary_crossentropy'"),
                              {}),
               InvalidParameter, "sigmoid output layer");
    EXPECT_NO_THROW(
        resolve_config(arch_of(4, {{3, Activation::Sigmoid}}), parse_compile_params("loss='binary_crossentropy'"), {}));
    // One softmax unit: the hint does not send the user to one sigmoid unit, which the packed
    // one-hot targets of two classes refuse in turn (2 outputs needed).
    e = EXPECT_ERR(resolve_config(arch_of(4, {{1, Activation::Softmax}}),
                                  parse_compile_params("loss='categorical_crossentropy'"), {}),
                   InvalidParameter, "needs at least 2 units");
    EXPECT_NE(e.hint().find("one unit per class"), std::string::npos) << e.hint();
}

// As Keras and MADlib: top_k at or above the number of classes is accepted (the metric is then 1).
TEST(ConfigResolve, TopKAnyWidthAccepted) {
    CompileParams c = parse_compile_params("metrics=['top_k_accuracy'], top_k=5");
    EXPECT_NO_THROW(resolve_config(arch_of(4, {{5, Activation::Softmax}}), c, {}));
    EXPECT_NO_THROW(resolve_config(arch_of(4, {{3, Activation::Softmax}}), c, {}));
    EXPECT_NO_THROW(resolve_config(arch_of(4, {{6, Activation::Softmax}}), c, {}));
    EXPECT_NO_THROW(resolve_config(arch_of(4, {{1, Activation::Sigmoid}}), c, {}));
}

TEST(ConfigResolve, AccuracyNeedsClassificationOutput) {
    Error e =
        EXPECT_ERR(resolve_config(arch_of(4, {{1, Activation::Linear}}), parse_compile_params("metrics=['accuracy']"),
                                  {}),
                   InvalidParameter, "metric accuracy is meaningless for an output layer without softmax or sigmoid");
    EXPECT_NE(e.hint().find("mse"), std::string::npos);
    EXPECT_ERR(resolve_config(arch_of(4, {{2, Activation::Relu}}), parse_compile_params("loss='mse', metrics=['acc']"),
                              {}),
               InvalidParameter, "accuracy");
    EXPECT_NO_THROW(resolve_config(arch_of(4, {{3, Activation::Softmax}}),
                                   parse_compile_params("loss='mse', metrics=['acc']"), {}));
    EXPECT_NO_THROW(
        resolve_config(arch_of(4, {{1, Activation::Sigmoid}}), parse_compile_params("metrics=['acc']"), {}));
    EXPECT_NO_THROW(resolve_config(arch_of(4, {{1, Activation::Linear}}),
                                   parse_compile_params("metrics=['mse','mae','loss']"), {}));
}

TEST(ConfigResolve, ValidatesHandBuiltParts) {
    // resolve_config may get structs that never went through a parser.
    EXPECT_ERR(resolve_config(arch_of(4, {{0, Activation::Linear}}), {}, {}), InvalidParameter, "\"units\" in layer 1");
    // input_dim 0 is left to the packed table (resolve_inputs); a negative one is refused.
    EXPECT_ERR(resolve_config(Architecture{}, {}, {}), InvalidParameter, "no layers");
    Architecture negative = arch_of(4, {{2, Activation::Softmax}});
    negative.input_dim = -1;
    EXPECT_ERR(resolve_config(negative, {}, {}), InvalidParameter, "input dimension");
    EXPECT_ERR(resolve_config(arch_of(4, {}), {}, {}), InvalidParameter, "no layers");
    EXPECT_ERR(resolve_config(arch_of(4, {{3, Activation::Softmax}, {2, Activation::Softmax}}), {}, {}),
               InvalidParameter, "softmax activation in layer 1");
    CompileParams c;
    c.optimizer.learning_rate = 0;
    EXPECT_ERR(resolve_config(arch_of(4, {{2, Activation::Softmax}}), c, {}), InvalidParameter, "\"learning_rate\"");
    c = CompileParams{};
    c.optimizer.kind = OptimizerKind::Adam;
    c.optimizer.beta2 = 1.0;
    EXPECT_ERR(resolve_config(arch_of(4, {{2, Activation::Softmax}}), c, {}), InvalidParameter, "\"beta_2\"");
    c = CompileParams{};
    c.metrics = {Metric::Loss, Metric::Loss};
    EXPECT_ERR(resolve_config(arch_of(4, {{2, Activation::Softmax}}), c, {}), InvalidParameter, "duplicate metric");
    FitParams f;
    f.batch_size = 0;
    EXPECT_ERR(resolve_config(arch_of(4, {{2, Activation::Softmax}}), {}, f), InvalidParameter, "\"batch_size\"");
    f = FitParams{};
    f.seed = 1ull << 63;
    EXPECT_ERR(resolve_config(arch_of(4, {{2, Activation::Softmax}}), {}, f), InvalidParameter, "\"seed\"");
}

// ---- ModelConfig -----------------------------------------------------------------------------

TEST(ConfigModel, CanonicalJsonShape) {
    ModelConfig m = resolve_config(arch_of(2, {{2, Activation::Softmax}}), {}, {});
    EXPECT_EQ(
        m.to_json(),
        R"({"architecture":{"input_dim":2,"layers":[{"units":2,"activation":"softmax","use_bias":true,"initializer":"glorot_uniform","dropout":0.0}]},)"
        R"("compile":{"loss":"softmax_cross_entropy","loss_given":false,"optimizer":{"name":"sgd","learning_rate":0.01,"decay":0.0},"weight_decay":0.0,"metrics":[],"top_k":5},)"
        R"("fit":{"batch_size":32,"epochs":1,"seed":42}})");
}

TEST(ConfigModel, RoundTripsExactly) {
    struct Case {
        const char* arch;
        const char* compile;
        const char* fit;
    };
    const Case cases[] = {
        {kKeras2Input,
         "loss='categorical_crossentropy', optimizer='Adam(lr=0.001)', metrics=['accuracy','top_k_accuracy'], top_k=2",
         "batch_size=64, epochs=3, seed=1"},
        {kKeras1, "optimizer='SGD(lr=0.1, momentum=0.9)', metrics=['accuracy'], weight_decay=1e-5", ""},
        {kKeras3, "", "seed=123456789012345"},
        {R"({"input_dim": 3, "layers": [{"units": 5, "activation": "tanh", "dropout": 0.3}, {"units": 1}]})",
         "optimizer='rmsprop', metrics=['mae']", R"({"batch_size": 1})"},
    };
    for (const Case& k : cases) {
        ModelConfig m =
            resolve_config(parse_architecture(k.arch), parse_compile_params(k.compile), parse_fit_params(k.fit));
        ModelConfig n = parse_model_config(m.to_json());
        EXPECT_EQ(m.arch, n.arch);
        EXPECT_TRUE(same(m.compile, n.compile)) << m.to_json();
        EXPECT_TRUE(same(m.fit, n.fit));
        EXPECT_EQ(m.to_json(), n.to_json());
    }
}

TEST(ConfigModel, ParseIsStrict) {
    const std::string good = resolve_config(arch_of(2, {{2, Activation::Softmax}}), {}, {}).to_json();
    EXPECT_NO_THROW(parse_model_config(good));
    std::string extra = good.substr(0, good.size() - 1) + R"(,"extra":1})";
    EXPECT_ERR(parse_model_config(extra), InvalidParameter, "unknown key \"extra\" in model configuration");
    EXPECT_ERR(parse_model_config(R"({"architecture": {"input_dim": 2, "layers": [{"units": 2}]}, "compile": {}})"),
               InvalidParameter, "missing key \"fit\"");
    EXPECT_ERR(parse_model_config(R"({"architecture": [], "compile": {}, "fit": {}})"), InvalidParameter,
               "\"architecture\" of the model configuration must be a JSON object");
    EXPECT_ERR(parse_model_config(std::string(R"({"architecture": )") + kKeras3 + R"(, "compile": {}, "fit": {}})"),
               InvalidParameter, "unknown key");  // canonical form is native only
    EXPECT_ERR(parse_model_config("null"), InvalidParameter, "must be a JSON object");
    EXPECT_ERR(parse_model_config("{"), Syntax, "model configuration");
    // Cross checks run again: an inconsistent stored config is refused.
    EXPECT_ERR(parse_model_config(
                   R"({"architecture": {"input_dim": 2, "layers": [{"units": 2, "activation": "linear"}]},
        "compile": {"loss": "softmax_cross_entropy", "loss_given": true}, "fit": {}})"),
               InvalidParameter, "softmax output layer");
}

TEST(ConfigModel, SweepOfCombinationsRoundTrips) {
    // Small deterministic sweep over kinds and awkward numbers; each must survive a round trip.
    const Activation acts[] = {Activation::Linear, Activation::Relu, Activation::Tanh, Activation::Sigmoid,
                               Activation::Softmax};
    const char* opts[] = {"sgd",
                          "SGD(lr=0.0123456789, momentum=0.1)",
                          "nesterov(momentum=0.999)",
                          "Adam(lr=1e-5, beta_1=0.0, beta_2=0.123456789012345, epsilon=3e-12)",
                          "RMSprop(lr=7, rho=0.5, decay=2.5)",
                          "Adagrad(initial_accumulator_value=0.7)",
                          "Adadelta(rho=0.3)",
                          "Adamax(lr=0.3, beta_2=0.5)",
                          "Nadam(schedule_decay=0.123456789)"};
    int n = 0;
    for (Activation out : acts)
        for (const char* opt : opts) {
            Architecture a =
                arch_of(3 + n, {{4 + n, Activation::Relu}, {out == Activation::Softmax ? 3 : 1 + n % 3, out}});
            a.layers[0].dropout = static_cast<float>(n) / 61.0f;  // below 1 for all 45
            a.layers[0].initializer = static_cast<Initializer>(n % 5);
            CompileParams c =
                parse_compile_params(std::string("optimizer='") + opt + "', weight_decay=" + std::to_string(n * 0.001));
            FitParams f;
            f.seed = 0x9E3779B97F4A7C15ull >> (n % 8 + 1);
            ModelConfig m = resolve_config(a, c, f);
            ModelConfig r = parse_model_config(m.to_json());
            EXPECT_EQ(m.arch, r.arch) << m.to_json();
            EXPECT_TRUE(same(m.compile, r.compile)) << m.to_json();
            EXPECT_TRUE(same(m.fit, r.fit));
            ++n;
        }
}

// A resume from a run's checkpoints continues only the configuration a state was trained as
// (warm_start_run): the same mst_key in a model selection table made again may be another one.
TEST(ConfigDifference, NamesWhatMakesAnotherConfiguration) {
    const auto config = [](const char* arch, const char* compile, const char* fit) {
        return resolve_config(parse_architecture(arch), parse_compile_params(compile), parse_fit_params(fit));
    };
    const char* arch =
        R"({"input_dim": 4, "layers": [{"units": 8, "activation": "relu"}, {"units": 3, "activation": "softmax"}]})";
    const ModelConfig trained = config(arch, "optimizer='Adam(lr=0.01)'", "batch_size=16");
    // The same configuration written another way, or without the input width the packed table gives.
    EXPECT_EQ(configuration_difference(trained, config(arch, "optimizer = 'Adam(lr=0.01)' ", "batch_size = 16")), "");
    EXPECT_EQ(configuration_difference(
                  trained,
                  config(R"({"layers": [{"units": 8, "activation": "relu"}, {"units": 3, "activation": "softmax"}]})",
                         "optimizer='Adam(lr=0.01)'", "batch_size=16")),
              "");
    EXPECT_EQ(configuration_difference(trained, config(arch, "optimizer='SGD(lr=0.5)'", "batch_size=16")),
              "compile parameters");
    EXPECT_EQ(configuration_difference(trained, config(arch, "optimizer='SGD(lr=0.5)'", "batch_size=128")),
              "compile parameters and fit parameters");
    EXPECT_EQ(
        configuration_difference(
            trained,
            config(
                R"({"input_dim": 4, "layers": [{"units": 9, "activation": "relu"}, {"units": 3, "activation": "softmax"}]})",
                "optimizer='SGD(lr=0.5)'", "batch_size=128")),
        "architecture, compile parameters and fit parameters");
}
