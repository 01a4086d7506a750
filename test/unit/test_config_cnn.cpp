// Architectures with convolutional layers: the Keras "simple convnet" as Keras 2 and Keras 3
// serialise it and in hopper's native form, batch normalization and pooling variants, canonical
// JSON and round trips, and every refusal of the new layers, options and shapes.
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "hopper/config.h"
#include "hopper/error.h"

using namespace hopper;

namespace {

Error expect_error(const std::function<void()>& f, ErrorKind kind, const std::string& in_message, int line) {
    try {
        f();
    } catch (const Error& e) {
        EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(kind))
            << "line " << line << ": " << e.message() << " / " << e.detail();
        EXPECT_NE(e.message().find(in_message), std::string::npos)
            << "line " << line << ": message \"" << e.message() << "\" lacks \"" << in_message << "\"";
        EXPECT_FALSE(e.message().empty());
        EXPECT_NE(e.message().back(), '.') << "line " << line << ": " << e.message();
        EXPECT_TRUE(e.detail().empty() || e.detail().back() == '.') << "line " << line << ": " << e.detail();
        EXPECT_TRUE(e.hint().empty() || e.hint().back() == '.') << "line " << line << ": " << e.hint();
        return e;
    } catch (const std::exception& e) {
        ADD_FAILURE() << "line " << line << ": non-hopper exception " << e.what();
        return Error(ErrorKind::Internal, "");
    }
    ADD_FAILURE() << "line " << line << ": no error thrown";
    return Error(ErrorKind::Internal, "");
}

#define EXPECT_ERR(expr, kind, text) expect_error([&] { (void)(expr); }, ErrorKind::kind, text, __LINE__)

// The Keras examples' "simple MNIST convnet", as tf.keras 2.13 writes model.to_json().
const char* kKeras2Convnet = R"({"class_name": "Sequential", "config": {"name": "sequential", "layers": [
 {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 28, 28, 1], "dtype": "float32", "sparse": false, "ragged": false, "name": "input_1"}},
 {"class_name": "Conv2D", "config": {"name": "conv2d", "trainable": true, "dtype": "float32", "filters": 32, "kernel_size": [3, 3], "strides": [1, 1],
   "padding": "valid", "data_format": "channels_last", "dilation_rate": [1, 1], "groups": 1, "activation": "relu", "use_bias": true,
   "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}},
   "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}},
 {"class_name": "MaxPooling2D", "config": {"name": "max_pooling2d", "trainable": true, "dtype": "float32", "pool_size": [2, 2], "padding": "valid",
   "strides": [2, 2], "data_format": "channels_last"}},
 {"class_name": "Conv2D", "config": {"name": "conv2d_1", "trainable": true, "dtype": "float32", "filters": 64, "kernel_size": [3, 3], "strides": [1, 1],
   "padding": "valid", "data_format": "channels_last", "dilation_rate": [1, 1], "groups": 1, "activation": "relu", "use_bias": true,
   "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}},
   "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}},
 {"class_name": "MaxPooling2D", "config": {"name": "max_pooling2d_1", "trainable": true, "dtype": "float32", "pool_size": [2, 2], "padding": "valid",
   "strides": [2, 2], "data_format": "channels_last"}},
 {"class_name": "Flatten", "config": {"name": "flatten", "trainable": true, "dtype": "float32", "data_format": "channels_last"}},
 {"class_name": "Dropout", "config": {"name": "dropout", "trainable": true, "dtype": "float32", "rate": 0.5, "noise_shape": null, "seed": null}},
 {"class_name": "Dense", "config": {"name": "dense", "trainable": true, "dtype": "float32", "units": 10, "activation": "softmax", "use_bias": true,
   "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}},
   "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}
]}, "keras_version": "2.13.1", "backend": "tensorflow"})";

// The same model as Keras 3 writes it: modules, dtype policies, build_config on every layer.
#define K3_DTYPE \
    R"("dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": null})"
#define K3_INIT(cls) \
    R"({"module": "keras.initializers", "class_name": ")" cls R"(", "config": {}, "registered_name": null})"
const char* kKeras3Convnet =
    R"({"module": "keras", "class_name": "Sequential", "config": {"name": "sequential", "trainable": true, )" K3_DTYPE
    R"(, "layers": [
 {"module": "keras.layers", "class_name": "InputLayer", "config": {"batch_shape": [null, 28, 28, 1], "dtype": "float32", "sparse": false, "name": "input_layer"}, "registered_name": null},
 {"module": "keras.layers", "class_name": "Conv2D", "config": {"name": "conv2d", "trainable": true, )" K3_DTYPE
    R"(, "filters": 32, "kernel_size": [3, 3],
   "strides": [1, 1], "padding": "valid", "data_format": "channels_last", "dilation_rate": [1, 1], "groups": 1, "activation": "relu", "use_bias": true,
   "kernel_initializer": {"module": "keras.initializers", "class_name": "GlorotUniform", "config": {"seed": null}, "registered_name": null},
   "bias_initializer": )" K3_INIT(
        "Zeros") R"(, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null,
   "bias_constraint": null}, "registered_name": null, "build_config": {"input_shape": [null, 28, 28, 1]}},
 {"module": "keras.layers", "class_name": "MaxPooling2D", "config": {"name": "max_pooling2d", "trainable": true, )" K3_DTYPE
                 R"(, "pool_size": [2, 2],
   "padding": "valid", "strides": [2, 2], "data_format": "channels_last"}, "registered_name": null, "build_config": {"input_shape": [null, 26, 26, 32]}},
 {"module": "keras.layers", "class_name": "Conv2D", "config": {"name": "conv2d_1", "trainable": true, )" K3_DTYPE
                 R"(, "filters": 64, "kernel_size": [3, 3],
   "strides": [1, 1], "padding": "valid", "data_format": "channels_last", "dilation_rate": [1, 1], "groups": 1, "activation": "relu", "use_bias": true,
   "kernel_initializer": {"module": "keras.initializers", "class_name": "GlorotUniform", "config": {"seed": null}, "registered_name": null},
   "bias_initializer": )" K3_INIT(
                     "Zeros") R"(, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null,
   "bias_constraint": null}, "registered_name": null, "build_config": {"input_shape": [null, 13, 13, 32]}},
 {"module": "keras.layers", "class_name": "MaxPooling2D", "config": {"name": "max_pooling2d_1", "trainable": true, )" K3_DTYPE
                              R"(, "pool_size": [2, 2],
   "padding": "valid", "strides": [2, 2], "data_format": "channels_last"}, "registered_name": null, "build_config": {"input_shape": [null, 11, 11, 64]}},
 {"module": "keras.layers", "class_name": "Flatten", "config": {"name": "flatten", "trainable": true, )" K3_DTYPE
                              R"(, "data_format": "channels_last"},
   "registered_name": null, "build_config": {"input_shape": [null, 5, 5, 64]}},
 {"module": "keras.layers", "class_name": "Dropout", "config": {"name": "dropout", "trainable": true, )" K3_DTYPE
                              R"(, "rate": 0.5, "seed": null,
   "noise_shape": null}, "registered_name": null, "build_config": {"input_shape": [null, 1600]}},
 {"module": "keras.layers", "class_name": "Dense", "config": {"name": "dense", "trainable": true, )" K3_DTYPE
                              R"(, "units": 10, "activation": "softmax",
   "use_bias": true, "kernel_initializer": {"module": "keras.initializers", "class_name": "GlorotUniform", "config": {"seed": null}, "registered_name": null},
   "bias_initializer": )" K3_INIT("Zeros") R"(, "kernel_regularizer": null, "bias_regularizer": null, "kernel_constraint": null, "bias_constraint": null,
   "lora_rank": null}, "registered_name": null, "build_config": {"input_shape": [null, 1600]}}
 ], "build_input_shape": [null, 28, 28, 1]}, "registered_name": null, "build_config": {"input_shape": [null, 28, 28, 1]}})";

// The same model in hopper's native form (Keras' default initializer spelled out: the native
// default for relu layers is he_uniform).
const char* kNativeConvnet = R"({"input_shape": [28, 28, 1], "initializer": "glorot_uniform", "layers": [
    {"type": "conv2d", "filters": 32, "kernel_size": 3, "activation": "relu"},
    {"type": "max_pooling2d", "pool_size": 2},
    {"type": "conv2d", "filters": 64, "kernel_size": [3, 3], "activation": "relu"},
    {"type": "max_pooling2d"},
    {"type": "flatten", "dropout": 0.5},
    {"units": 10, "activation": "softmax"}]})";

const char* kConvnetCanonical =
    R"({"input_shape":[28,28,1],"layers":[)"
    R"({"type":"conv2d","filters":32,"kernel_size":[3,3],"strides":[1,1],"padding":"valid","activation":"relu","use_bias":true,"initializer":"glorot_uniform","dropout":0.0},)"
    R"({"type":"max_pooling2d","pool_size":[2,2],"strides":[2,2],"padding":"valid","activation":"linear","dropout":0.0},)"
    R"({"type":"conv2d","filters":64,"kernel_size":[3,3],"strides":[1,1],"padding":"valid","activation":"relu","use_bias":true,"initializer":"glorot_uniform","dropout":0.0},)"
    R"({"type":"max_pooling2d","pool_size":[2,2],"strides":[2,2],"padding":"valid","activation":"linear","dropout":0.0},)"
    R"({"type":"flatten","activation":"linear","dropout":0.5},)"
    R"({"units":10,"activation":"softmax","use_bias":true,"initializer":"glorot_uniform","dropout":0.0}]})";

std::string keras_with(const std::string& layers) {
    return R"({"class_name": "Sequential", "config": {"name": "s", "layers": [)" + layers + "]}}";
}
std::string input(const std::string& shape) {
    return R"({"class_name": "InputLayer", "config": {"batch_input_shape": )" + shape + R"(, "name": "in"}})";
}
const std::string kImage = input("[null, 8, 8, 3]");
std::string layer(const std::string& cls, const std::string& config, const std::string& name = "x") {
    return R"({"class_name": ")" + cls + R"(", "config": {"name": ")" + name + "\"" +
           (config.empty() ? "" : ", " + config) + "}}";
}
const std::string kConv = layer("Conv2D", R"("filters": 4, "kernel_size": [3, 3], "activation": "relu")", "c");
const std::string kFlatten = layer("Flatten", "", "f");
const std::string kOut = layer("Dense", R"("units": 2, "activation": "softmax")", "out");
// An image model with `middle` between a conv layer and the Flatten -> Dense output.
std::string image_model(const std::string& middle) {
    return keras_with(kImage + "," + kConv + (middle.empty() ? "" : "," + middle) + "," + kFlatten + "," + kOut);
}

std::string native(const std::string& layers, const std::string& input = R"("input_shape": [8, 8, 3])") {
    return "{" + input + R"(, "layers": [)" + layers +
           R"(, {"type": "flatten"}, {"units": 2, "activation": "softmax"}]})";
}

}  // namespace

// ---- the simple convnet -------------------------------------------------------------------------

TEST(ConfigCnn, Keras2SimpleConvnet) {
    Architecture a = parse_architecture(kKeras2Convnet);
    EXPECT_TRUE(a.image_input());
    EXPECT_EQ(a.input_dim, 784);
    EXPECT_EQ(a.input_height, 28);
    EXPECT_EQ(a.input_channels, 1);
    ASSERT_EQ(a.layers.size(), 6u);
    EXPECT_EQ(a.layers[0].kind, LayerKind::Conv2D);
    EXPECT_EQ(a.layers[0].filters, 32);
    EXPECT_EQ(a.layers[0].activation, Activation::Relu);
    EXPECT_EQ(a.layers[0].initializer, Initializer::GlorotUniform);
    EXPECT_EQ(a.layers[1].kind, LayerKind::MaxPooling2D);
    EXPECT_EQ(a.layers[4].kind, LayerKind::Flatten);
    EXPECT_FLOAT_EQ(a.layers[4].dropout, 0.5f);  // Dropout after Flatten: merged into the Flatten
    EXPECT_EQ(a.layers[5].units, 10);
    EXPECT_EQ(a.output_dim(), 10);
    // 3*3*1*32 + 32 + 3*3*32*64 + 64 + 1600*10 + 10, as Keras' model.summary() says.
    EXPECT_EQ(a.num_params(), 34826u);
    EXPECT_EQ(a.shape_string(), "28x28x1-conv3x3x32-maxpool2x2-conv3x3x64-maxpool2x2-flatten-10");
    const auto shapes = a.layer_shapes();
    EXPECT_EQ(shapes[0].to_string(), "26x26x32");
    EXPECT_EQ(shapes[2].to_string(), "11x11x64");
    EXPECT_EQ(shapes[3].to_string(), "5x5x64");
    EXPECT_EQ(shapes[4].to_string(), "1600");
    EXPECT_EQ(a.to_json(), kConvnetCanonical);
}

TEST(ConfigCnn, Keras3AndNativeFormsGiveTheSameArchitecture) {
    const Architecture k2 = parse_architecture(kKeras2Convnet);
    EXPECT_EQ(parse_architecture(kKeras3Convnet), k2);
    EXPECT_EQ(parse_architecture(kNativeConvnet), k2);
    EXPECT_EQ(parse_architecture(kConvnetCanonical), k2);
    EXPECT_EQ(parse_architecture(k2.to_json()).to_json(), k2.to_json());
    // Keras 2 without an InputLayer: the first layer carries the input shape.
    std::string no_input = kKeras2Convnet;
    const std::string in =
        R"({"class_name": "InputLayer", "config": {"batch_input_shape": [null, 28, 28, 1], "dtype": "float32", "sparse": false, "ragged": false, "name": "input_1"}},)";
    no_input.erase(no_input.find(in), in.size());
    no_input.replace(no_input.find(R"("name": "conv2d", )"), 18,
                     R"("name": "conv2d", "batch_input_shape": [null, 28, 28, 1], )");
    EXPECT_EQ(parse_architecture(no_input), k2);
}

TEST(ConfigCnn, ModelConfigRoundTripAndResolve) {
    const ModelConfig c =
        resolve_config(parse_architecture(kKeras3Convnet),
                       parse_compile_params(
                           "loss='categorical_crossentropy', optimizer='Adam(lr=0.001)', metrics=['accuracy']"),
                       parse_fit_params("batch_size=128, epochs=1"));
    EXPECT_EQ(c.compile.loss, Loss::SoftmaxCrossEntropy);
    const ModelConfig back = parse_model_config(c.to_json());
    EXPECT_EQ(back.arch, c.arch);
    EXPECT_EQ(back.to_json(), c.to_json());
    EXPECT_NE(c.to_json().find(kConvnetCanonical), std::string::npos);
}

// ---- batch normalization, pooling variants, merges ---------------------------------------------------

TEST(ConfigCnn, KerasConvBatchNormReluGlobalPooling) {
    // conv(linear, no bias) -> BatchNormalization -> Activation(relu) -> AveragePooling2D(same)
    // -> GlobalAveragePooling2D -> Dense, as Keras 3 writes it, and BN after a Dense (axis -1).
    const std::string bn3 =
        R"({"module": "keras.layers", "class_name": "BatchNormalization", "config": {"name": "bn", "trainable": true, )" K3_DTYPE
        R"(, "axis": -1, "momentum": 0.9, "epsilon": 1e-05, "center": true, "scale": false, "beta_initializer": )" K3_INIT("Zeros") R"(, "gamma_initializer": )" K3_INIT(
            "Ones") R"(, "moving_mean_initializer": )" K3_INIT("Zeros") R"(, "moving_variance_initializer": )" K3_INIT("Ones") R"(, "beta_regularizer": null, "gamma_regularizer": null,
                            "beta_constraint": null, "gamma_constraint": null, "synchronized": false}, "registered_name": null, "build_config": {"input_shape": [null, 8, 8, 16]}})";
    const std::string text = keras_with(
        R"({"class_name": "InputLayer", "config": {"batch_shape": [null, 8, 8, 3], "name": "in"}},)" +
        layer("Conv2D",
              R"("filters": 16, "kernel_size": 3, "padding": "same", "use_bias": false, "activation": "linear")", "c") +
        "," + bn3 + R"(,{"class_name": "Activation", "config": {"name": "a", "activation": "relu"}},)" +
        layer("AveragePooling2D",
              R"("pool_size": [3, 3], "strides": [2, 2], "padding": "same", "data_format": "channels_last")", "p") +
        "," + layer("GlobalAveragePooling2D", R"("data_format": "channels_last", "keepdims": false)", "g") + "," +
        layer("Dense", R"("units": 6, "activation": "linear")", "d") + "," +
        layer("BatchNormalization",
              R"("axis": [1], "momentum": 0.99, "epsilon": 0.001, "center": true, "scale": true, "fused": null)",
              "bn2") +
        R"(,{"class_name": "Activation", "config": {"name": "a2", "activation": "softmax"}})");
    Architecture a = parse_architecture(text);
    ASSERT_EQ(a.layers.size(), 6u);
    EXPECT_EQ(a.layers[0].padding, Padding::Same);
    EXPECT_FALSE(a.layers[0].use_bias);
    EXPECT_EQ(a.layers[1].kind, LayerKind::BatchNormalization);
    EXPECT_EQ(a.layers[1].activation, Activation::Relu);  // merged from the Activation layer
    EXPECT_EQ(a.layers[1].momentum, 0.9);
    EXPECT_EQ(a.layers[1].epsilon, 1e-05);
    EXPECT_FALSE(a.layers[1].scale);
    EXPECT_EQ(a.layers[2].kind, LayerKind::AveragePooling2D);
    EXPECT_EQ(a.layers[2].kernel_h, 3);
    EXPECT_EQ(a.layers[2].stride_h, 2);
    EXPECT_EQ(a.layers[3].kind, LayerKind::GlobalAveragePooling2D);
    EXPECT_EQ(a.layers[5].activation, Activation::Softmax);
    EXPECT_EQ(a.output_dim(), 6);
    // conv 3*3*3*16; BN (beta, mean, var) 16*3; dense 16*6+6; BN 6*4.
    EXPECT_EQ(a.num_params(), 432u + 48 + 102 + 24);
    EXPECT_EQ(a.shape_string(), "8x8x3-conv3x3x16_same-bn-avgpool3x3_s2_same-gap-6-bn");
    EXPECT_EQ(a.layer_shapes()[2].to_string(), "4x4x16");
    EXPECT_EQ(parse_architecture(a.to_json()), a);
    // Keras 2 spells the channels axis of an image BN [3].
    EXPECT_NO_THROW(parse_architecture(image_model(layer("BatchNormalization", R"("axis": [3])", "b"))));
    EXPECT_NO_THROW(parse_architecture(image_model(layer("BatchNormalization", R"("axis": 3)", "b"))));
}

TEST(ConfigCnn, NativeFormDefaultsAndCanonicalJson) {
    Architecture a = parse_architecture(
        R"({"input_shape": [9, 7, 2], "layers": [
            {"type": "conv2d", "filters": 4, "kernel_size": [3, 2], "strides": [2, 1], "padding": "same", "activation": "relu"},
            {"type": "batch_normalization", "center": false},
            {"type": "average_pooling2d", "pool_size": 3, "strides": 1},
            {"type": "global_average_pooling2d", "activation": "tanh"},
            {"type": "Dense", "units": 3, "activation": "softmax"}]})");
    EXPECT_EQ(a.layers[0].initializer, Initializer::HeUniform);  // native default for relu
    EXPECT_EQ(a.layers[0].stride_w, 1);
    EXPECT_EQ(a.layers[2].stride_h, 1);
    EXPECT_EQ(a.layers[2].padding, Padding::Valid);
    EXPECT_EQ(a.layers[1].momentum, 0.99);
    EXPECT_EQ(
        a.to_json(),
        R"({"input_shape":[9,7,2],"layers":[)"
        R"({"type":"conv2d","filters":4,"kernel_size":[3,2],"strides":[2,1],"padding":"same","activation":"relu","use_bias":true,"initializer":"he_uniform","dropout":0.0},)"
        R"({"type":"batch_normalization","momentum":0.99,"epsilon":0.001,"center":false,"scale":true,"activation":"linear","dropout":0.0},)"
        R"({"type":"average_pooling2d","pool_size":[3,3],"strides":[1,1],"padding":"valid","activation":"linear","dropout":0.0},)"
        R"({"type":"global_average_pooling2d","activation":"tanh","dropout":0.0},)"
        R"({"units":3,"activation":"softmax","use_bias":true,"initializer":"glorot_uniform","dropout":0.0}]})");
    EXPECT_EQ(a.shape_string(), "9x7x2-conv3x2x4_s2x1_same-bn-avgpool3x3_s1-gap-3");
    // input_shape [n] is a flat input: canonical input_dim.
    Architecture f = parse_architecture(R"({"input_shape": [5], "layers": [{"units": 2}]})");
    EXPECT_FALSE(f.image_input());
    EXPECT_EQ(
        f.to_json(),
        R"({"input_dim":5,"layers":[{"units":2,"activation":"linear","use_bias":true,"initializer":"glorot_uniform","dropout":0.0}]})");
}

TEST(ConfigCnn, RoundTripsAndEqualityOverVariants) {
    const char* variants[] = {
        R"({"type": "conv2d", "filters": 3, "kernel_size": [2, 3], "strides": [1, 2], "padding": "same", "use_bias": false, "initializer": "he_normal", "dropout": 0.25})",
        R"({"type": "max_pooling2d", "pool_size": [3, 3], "strides": [1, 1], "padding": "same", "activation": "relu", "dropout": 0.1})",
        R"({"type": "average_pooling2d", "pool_size": [2, 1]})",
        R"({"type": "batch_normalization", "momentum": 0.1, "epsilon": 1e-07, "scale": false, "activation": "sigmoid"})",
        R"({"type": "batch_normalization", "momentum": 1, "epsilon": 0.3333333333333333})",
    };
    std::vector<Architecture> all;
    for (const char* v : variants) {
        const Architecture a = parse_architecture(native(v));
        const Architecture b = parse_architecture(a.to_json());
        EXPECT_EQ(a, b) << a.to_json();
        EXPECT_EQ(a.to_json(), b.to_json());
        for (const Architecture& o : all) EXPECT_NE(a, o) << a.to_json();
        all.push_back(a);
    }
    // Equality looks at every field a kind uses, and only at those.
    Architecture a = parse_architecture(kKeras2Convnet), b = a;
    b.layers[0].kernel_w = 4;
    EXPECT_NE(a, b);
    b = a;
    b.layers[0].stride_h = 2;
    EXPECT_NE(a, b);
    b = a;
    b.layers[0].padding = Padding::Same;
    EXPECT_NE(a, b);
    b = a;
    b.layers[0].filters = 31;
    EXPECT_NE(a, b);
    b = a;
    b.layers[1].kind = LayerKind::AveragePooling2D;
    EXPECT_NE(a, b);
    b = a;
    b.input_width = 27;
    EXPECT_NE(a, b);
    b = a;
    b.layers[0].units = 5;
    b.layers[0].momentum = 0.5;
    EXPECT_EQ(a, b);  // not Conv2D fields
    b = a;
    b.layers[1].use_bias = false;
    b.layers[1].filters = 3;
    EXPECT_EQ(a, b);
    EXPECT_EQ(a.to_json(), b.to_json());
}

// ---- refusals: native form -----------------------------------------------------------------------

TEST(ConfigCnnRefusals, NativeKeysTypesAndValues) {
    Error e = EXPECT_ERR(parse_architecture(native(R"({"type": "conv3d", "filters": 2})")), InvalidParameter,
                         "invalid value for \"type\" in layer 1: \"conv3d\"");
    EXPECT_NE(e.detail().find("conv2d"), std::string::npos);
    e = EXPECT_ERR(parse_architecture(native(R"({"type": "conv2d", "filters": 2, "kernel_size": 3, "units": 4})")),
                   InvalidParameter, "unknown key \"units\" in layer 1");
    EXPECT_NE(e.hint().find("Valid keys of a conv2d layer are: type, filters"), std::string::npos) << e.hint();
    EXPECT_ERR(parse_architecture(native(R"({"type": "flatten", "units": 4})")), InvalidParameter,
               "unknown key \"units\"");
    EXPECT_ERR(parse_architecture(native(R"({"type": "max_pooling2d", "filters": 4})")), InvalidParameter,
               "unknown key \"filters\"");
    EXPECT_ERR(parse_architecture(native(R"({"type": "batch_normalization", "axis": -1})")), InvalidParameter,
               "unknown key \"axis\"");
    EXPECT_ERR(parse_architecture(native(R"({"type": "conv2d", "kernel_size": 3})")), InvalidParameter,
               "missing key \"filters\" in layer 1");
    EXPECT_ERR(parse_architecture(native(R"({"type": "conv2d", "filters": 2})")), InvalidParameter,
               "missing key \"kernel_size\" in layer 1");
    for (const char* bad : {"0", "[3]", "[3, 0]", "\"3\"", "[3, 3, 1]", "-1", "1.5", "null"})
        EXPECT_ERR(parse_architecture(
                       native(std::string(R"({"type": "conv2d", "filters": 2, "kernel_size": )") + bad + "}")),
                   InvalidParameter, "invalid value for \"kernel_size\" in layer 1");
    EXPECT_ERR(parse_architecture(native(R"({"type": "conv2d", "filters": 2, "kernel_size": 1000001})")), Limit,
               "\"kernel_size\" in layer 1 is too large");
    EXPECT_ERR(parse_architecture(native(R"({"type": "conv2d", "filters": 2, "kernel_size": [3, 10000000]})")), Limit,
               "\"kernel_size\" in layer 1 is too large");
    EXPECT_ERR(parse_architecture(native(R"({"type": "conv2d", "filters": 0, "kernel_size": 3})")), InvalidParameter,
               "invalid value for \"filters\" in layer 1: 0");
    EXPECT_ERR(parse_architecture(native(R"({"type": "conv2d", "filters": 2000000, "kernel_size": 3})")), Limit,
               "\"filters\" in layer 1 is too large");
    EXPECT_ERR(parse_architecture(native(R"({"type": "conv2d", "filters": 2, "kernel_size": 3, "strides": 0})")),
               InvalidParameter, "invalid value for \"strides\" in layer 1");
    EXPECT_ERR(parse_architecture(native(R"({"type": "conv2d", "filters": 2, "kernel_size": 3, "padding": "causal"})")),
               InvalidParameter, "invalid value for \"padding\" in layer 1: \"causal\"");
    EXPECT_ERR(parse_architecture(native(R"({"type": "max_pooling2d", "pool_size": [2, -2]})")), InvalidParameter,
               "invalid value for \"pool_size\" in layer 1");
    EXPECT_ERR(parse_architecture(native(R"({"type": "average_pooling2d", "strides": [0, 1]})")), InvalidParameter,
               "invalid value for \"strides\" in layer 1");
    EXPECT_ERR(parse_architecture(native(R"({"type": "batch_normalization", "momentum": 1.5})")), InvalidParameter,
               "invalid value for \"momentum\" in layer 1: 1.5");
    EXPECT_ERR(parse_architecture(native(R"({"type": "batch_normalization", "epsilon": 0})")), InvalidParameter,
               "invalid value for \"epsilon\" in layer 1: 0");
    EXPECT_ERR(parse_architecture(native(R"({"type": "batch_normalization", "epsilon": 1e-50})")), InvalidParameter,
               "invalid value for \"epsilon\" in layer 1");
    EXPECT_ERR(parse_architecture(native(R"({"type": "batch_normalization", "center": "yes"})")), InvalidParameter,
               "invalid value for \"center\" in layer 1");
    EXPECT_ERR(parse_architecture(native(R"({"type": "batch_normalization", "scale": 1})")), InvalidParameter,
               "invalid value for \"scale\" in layer 1");
    EXPECT_ERR(parse_architecture(native(R"({"type": "flatten", "dropout": 1})")), InvalidParameter,
               "invalid value for \"dropout\" in layer 1");
    EXPECT_ERR(parse_architecture(native(R"({"type": "flatten", "activation": "elu"})")), InvalidParameter,
               "invalid value for \"activation\" in layer 1");
    EXPECT_ERR(parse_architecture(
                   native(R"({"type": "conv2d", "filters": 2, "kernel_size": 3, "initializer": "ones"})")),
               InvalidParameter, "invalid value for \"initializer\" in layer 1");
}

TEST(ConfigCnnRefusals, NativeInputShapes) {
    const std::string layers = R"("layers": [{"type": "flatten"}, {"units": 2}])";
    EXPECT_ERR(parse_architecture(R"({"input_dim": 12, "input_shape": [2, 2, 3], )" + layers + "}"), InvalidParameter,
               "both \"input_dim\" and \"input_shape\"");
    for (const char* bad : {"[28, 28]", "[0, 28, 1]", "[28, 28, 1, 1]", "\"28x28\"", "[]", "[2, 2, -3]", "[2.5, 2, 1]"})
        EXPECT_ERR(parse_architecture(std::string(R"({"input_shape": )") + bad + ", " + layers + "}"), InvalidParameter,
                   "invalid value for \"input_shape\"");
    EXPECT_ERR(parse_architecture(R"({"input_shape": [1000, 1000, 3], )" + layers + "}"), Limit,
               "value for \"input_shape\" is too large: [1000,1000,3]");
    EXPECT_ERR(parse_architecture(R"({"input_shape": [10000000, 1, 1], )" + layers + "}"), Limit,
               "value for \"input_shape\" is too large: 10000000");
    EXPECT_ERR(parse_architecture(R"({"input_shape": [1000001], )" + layers + "}"), Limit,
               "\"input_shape\" is too large");
    // Without an input shape or input_dim the input is the packed table's flat row.
    EXPECT_EQ(resolve_inputs(parse_architecture(R"({)" + layers + "}"), 4, nullptr).input_dim, 4);
}

TEST(ConfigCnnRefusals, ShapesThatDoNotWork) {
    // Conv2D, pooling and global pooling need an image; Dense needs a flat input.
    Error e = EXPECT_ERR(
        parse_architecture(
            R"({"input_dim": 64, "layers": [{"type": "conv2d", "filters": 2, "kernel_size": 3}, {"type": "flatten"}, {"units": 2}]})"),
        InvalidParameter, "conv2d layer applied to a flat tensor (layer 1)");
    EXPECT_NE(e.hint().find("input_shape"), std::string::npos);
    EXPECT_ERR(
        parse_architecture(
            R"({"input_shape": [4, 4, 1], "layers": [{"type": "flatten"}, {"type": "max_pooling2d"}, {"units": 2}]})"),
        InvalidParameter, "max_pooling2d layer applied to a flat tensor (layer 2)");
    EXPECT_ERR(parse_architecture(
                   R"({"input_dim": 4, "layers": [{"type": "global_average_pooling2d"}, {"units": 2}]})"),
               InvalidParameter, "global_average_pooling2d layer applied to a flat tensor (layer 1)");
    e = EXPECT_ERR(parse_architecture(R"({"input_shape": [4, 4, 1], "layers": [{"units": 2}]})"), InvalidParameter,
                   "dense layer applied to a non-flat tensor (layer 1)");
    EXPECT_NE(e.detail().find("4x4x1"), std::string::npos);
    // Windows larger than the input with padding "valid" (with "same" they are fine).
    e = EXPECT_ERR(parse_architecture(native(R"({"type": "conv2d", "filters": 2, "kernel_size": [3, 9]})")),
                   InvalidParameter, "kernel_size 3x9 of layer 1 is larger than its input");
    EXPECT_NE(e.detail().find("8x8x3"), std::string::npos);
    EXPECT_NO_THROW(
        parse_architecture(native(R"({"type": "conv2d", "filters": 2, "kernel_size": [3, 9], "padding": "same"})")));
    EXPECT_ERR(parse_architecture(native(R"({"type": "max_pooling2d", "pool_size": 9})")), InvalidParameter,
               "pool_size 9x9 of layer 1 is larger than its input");
    // A stack that shrinks the image to nothing: 8 -> 6 -> 3 -> (pool 4: no output).
    EXPECT_ERR(parse_architecture(
                   native(R"({"type": "conv2d", "filters": 2, "kernel_size": 3}, {"type": "max_pooling2d"},
                                            {"type": "average_pooling2d", "pool_size": 4})")),
               InvalidParameter, "pool_size 4x4 of layer 3 is larger than its input");
    // The output must be flat.
    e = EXPECT_ERR(parse_architecture(
                       R"({"input_shape": [8, 8, 3], "layers": [{"type": "conv2d", "filters": 2, "kernel_size": 3}]})"),
                   InvalidParameter, "output layer (layer 1) outputs a 6x6x2 tensor");
    EXPECT_NE(e.hint().find("Flatten"), std::string::npos);
    // Softmax only last, dropout never on the output, whatever the layer kind.
    EXPECT_ERR(parse_architecture(
                   native(R"({"type": "conv2d", "filters": 2, "kernel_size": 3, "activation": "softmax"})")),
               InvalidParameter, "softmax activation in layer 1 is only allowed on the output layer");
    EXPECT_ERR(parse_architecture(R"({"input_shape": [8, 8, 3], "layers": [{"type": "flatten", "dropout": 0.5}]})"),
               InvalidParameter, "dropout is not allowed on the output layer (layer 1)");
    // A softmax over global pooling is an output of 3 classes, but with nothing before it to train
    // it is refused; over 1 channel it is not even an output.
    EXPECT_EQ(parse_architecture(R"({"input_shape": [8, 8, 3], "layers": [{"type": "conv2d", "filters": 3,
                                     "kernel_size": 1}, {"type": "global_average_pooling2d", "activation": "softmax"}]})")
                  .output_dim(),
              3);
    EXPECT_ERR(
        parse_architecture(
            R"({"input_shape": [8, 8, 3], "layers": [{"type": "global_average_pooling2d", "activation": "softmax"}]})"),
        InvalidParameter, "model has no parameters to train");
    EXPECT_ERR(
        parse_architecture(
            R"({"input_shape": [8, 8, 1], "layers": [{"type": "global_average_pooling2d", "activation": "softmax"}]})"),
        InvalidParameter, "softmax output layer (layer 1) needs at least 2 units");
}

TEST(ConfigCnnRefusals, AbsurdSizesAreLimits) {
    // One layer's output over 64 Mi values per row: 1000x1000 x 100 filters.
    Error e = EXPECT_ERR(parse_architecture(R"({"input_shape": [1000, 1000, 1], "layers": [
        {"type": "conv2d", "filters": 100, "kernel_size": 3, "padding": "same"}, {"type": "global_average_pooling2d"}, {"units": 2}]})"),
                         Limit, "output of layer 1 is too large");
    EXPECT_NE(e.detail().find("1000x1000x100"), std::string::npos) << e.detail();
    EXPECT_NE(e.detail().find("381 MB"), std::string::npos) << e.detail();
    // Each layer fits, all of them together do not: activations and patch matrices per row.
    e = EXPECT_ERR(parse_architecture(R"({"input_shape": [1000, 1000, 1], "layers": [
        {"type": "conv2d", "filters": 40, "kernel_size": 1}, {"type": "conv2d", "filters": 40, "kernel_size": 1},
        {"type": "global_average_pooling2d"}, {"units": 2}]})"),
                   Limit, "architecture needs too much memory per row");
    EXPECT_NE(e.detail().find("MB"), std::string::npos) << e.detail();
    e = EXPECT_ERR(parse_architecture(R"({"input_shape": [1000, 1000, 1], "layers": [
        {"type": "conv2d", "filters": 8, "kernel_size": 9, "padding": "same"}, {"type": "global_average_pooling2d"}, {"units": 2}]})"),
                   Limit, "too much memory per row");  // 81 patch values per position
    // Parameters: a 1000x1000 kernel with 10000 filters.
    e = EXPECT_ERR(parse_architecture(R"({"input_shape": [1000, 1000, 1], "layers": [
        {"type": "conv2d", "filters": 10000, "kernel_size": 1000}, {"type": "flatten"}, {"units": 2}]})"),
                   Limit, "model has too many parameters");
    EXPECT_NE(e.detail().find("10000030002 parameters"), std::string::npos) << e.detail();  // + dense 10000*2+2
    // No weights at all: pooling and flattening only (CI's fuzz_architecture found it accepted).
    e = EXPECT_ERR(parse_architecture(R"({"input_shape": [28, 28, 1], "layers": [
        {"type": "max_pooling2d", "pool_size": 2}, {"type": "flatten"}]})"),
                   InvalidParameter, "model has no parameters to train");
    EXPECT_NE(e.detail().find("only layers without weights"), std::string::npos) << e.detail();
    // The layer count limit holds for every kind.
    std::string many = R"({"input_shape": [2, 2, 1], "layers": [)";
    for (int i = 0; i < 64; ++i) many += R"({"type": "conv2d", "filters": 1, "kernel_size": 1},)";
    EXPECT_ERR(parse_architecture(many + R"({"type": "flatten"}]})"), Limit, "too many layers");
}

// ---- refusals: Keras -----------------------------------------------------------------------------

TEST(ConfigCnnRefusals, KerasOptionsHopperDoesNotImplement) {
    struct Case {
        std::string text;
        const char* message;
    };
    const std::string conv = R"("filters": 4, "kernel_size": 3, )";
    const Case cases[] = {
        {image_model(layer("Conv2D", conv + R"("data_format": "channels_first")", "cf")),
         "unsupported data_format \"channels_first\" in Keras layer 3 (\"cf\")"},
        {image_model(layer("MaxPooling2D", R"("data_format": "channels_first")", "mp")),
         "unsupported data_format \"channels_first\" in Keras layer 3 (\"mp\")"},
        {keras_with(kImage + "," + kConv + "," + layer("Flatten", R"("data_format": "channels_first")", "fl") + "," +
                    kOut),
         "unsupported data_format \"channels_first\" in Keras layer 3 (\"fl\")"},
        {keras_with(kImage + "," + kConv + "," +
                    layer("GlobalAveragePooling2D", R"("data_format": "channels_first")", "g") + "," + kOut),
         "unsupported data_format \"channels_first\" in Keras layer 3 (\"g\")"},
        {image_model(layer("Conv2D", conv + R"("dilation_rate": [2, 2])", "dil")),
         "unsupported dilation_rate [2,2] in Keras layer 3 (\"dil\")"},
        {image_model(layer("Conv2D", conv + R"("dilation_rate": 2)", "dil")),
         "unsupported dilation_rate 2 in Keras layer 3"},
        {image_model(layer("Conv2D", conv + R"("groups": 2)", "grp")),
         "unsupported groups 2 in Keras layer 3 (\"grp\")"},
        {image_model(layer("Conv2D", conv + R"("kernel_regularizer": {"class_name": "L2"})", "r")),
         "unsupported kernel_regularizer in Keras layer 3"},
        {image_model(layer("Conv2D", conv + R"("activity_regularizer": {"class_name": "L1"})", "r")),
         "unsupported activity_regularizer in Keras layer 3"},
        {image_model(layer("Conv2D", conv + R"("bias_constraint": {"class_name": "MaxNorm"})", "r")),
         "unsupported bias_constraint in Keras layer 3"},
        {image_model(layer("Conv2D", conv + R"("bias_initializer": "ones")", "r")),
         "unsupported bias_initializer \"ones\" in Keras layer 3"},
        {image_model(layer("Conv2D", conv + R"("kernel_initializer": "orthogonal")", "r")),
         "unsupported kernel initializer \"orthogonal\" in Keras layer 3"},
        {image_model(layer("Conv2D", conv + R"("padding": "causal")", "r")),
         "invalid value for \"padding\" in Keras layer 3 (\"r\"): \"causal\""},
        {image_model(layer("Conv2D", conv + R"("trainable": 0)", "r")),
         "invalid value for \"trainable\" in Keras layer 3 (\"r\")"},
        {image_model(layer("Conv2D", conv + R"("lora_rank": 4)", "r")),
         "unsupported option \"lora_rank\" in Keras layer 3"},
        {image_model(layer("Conv2D", R"("kernel_size": 3)", "r")), "missing key \"filters\" in Keras layer 3"},
        {image_model(layer("Conv2D", R"("filters": 3)", "r")), "missing key \"kernel_size\" in Keras layer 3"},
        {image_model(layer("Conv2D", R"("filters": 3, "kernel_size": [0, 3])", "r")),
         "invalid value for \"kernel_size\" in Keras layer 3"},
        {image_model(layer("Conv2D", R"("filters": -3, "kernel_size": 3)", "r")),
         "invalid value for \"filters\" in Keras layer 3"},
        {image_model(layer("MaxPooling2D", R"("pool_size": [2, 2], "strides": [0, 2])", "r")),
         "invalid value for \"strides\" in Keras layer 3"},
        {image_model(layer("AveragePooling2D", R"("pool_size": "2")", "r")),
         "invalid value for \"pool_size\" in Keras layer 3"},
        {image_model(layer("AveragePooling2D", R"("padding": "full")", "r")),
         "invalid value for \"padding\" in Keras layer 3"},
        {image_model(layer("MaxPooling2D", R"("ceil_mode": true)", "r")),
         "unsupported option \"ceil_mode\" in Keras layer 3"},
        {keras_with(kImage + "," + kConv + "," + layer("GlobalAveragePooling2D", R"("keepdims": true)", "g") + "," +
                    kFlatten + "," + kOut),
         "unsupported keepdims in Keras layer 3 (\"g\")"},
        {image_model(layer("BatchNormalization", R"("beta_regularizer": {"class_name": "L2"})", "b")),
         "unsupported beta_regularizer in Keras layer 3 (\"b\")"},
        {image_model(layer("BatchNormalization", R"("gamma_constraint": {"class_name": "NonNeg"})", "b")),
         "unsupported gamma_constraint in Keras layer 3"},
        {image_model(layer("BatchNormalization",
                           R"("moving_variance_initializer": {"class_name": "Constant", "config": {"value": 2.0}})",
                           "b")),
         "unsupported moving_variance_initializer"},
        {image_model(layer("BatchNormalization", R"("moving_mean_initializer": "ones")", "b")),
         "unsupported moving_mean_initializer \"ones\""},
        {image_model(layer("BatchNormalization", R"("gamma_initializer": "zeros")", "b")),
         "unsupported gamma_initializer \"zeros\""},
        {image_model(layer("BatchNormalization", R"("beta_initializer": "ones")", "b")),
         "unsupported beta_initializer \"ones\""},
        {image_model(
             layer("BatchNormalization", R"("renorm": true, "renorm_clipping": null, "renorm_momentum": 0.99)", "b")),
         "unsupported option \"renorm\" in Keras layer 3 (\"b\")"},
        {image_model(layer("BatchNormalization", R"("virtual_batch_size": 8)", "b")),
         "unsupported option \"virtual_batch_size\""},
        {image_model(layer("BatchNormalization", R"("synchronized": true)", "b")),
         "unsupported option \"synchronized\""},
        {image_model(layer("BatchNormalization", R"("axis": 1)", "b")), "unsupported axis 1 in Keras layer 3 (\"b\")"},
        {image_model(layer("BatchNormalization", R"("axis": [1, 2])", "b")), "unsupported axis [1,2] in Keras layer 3"},
        {image_model(layer("BatchNormalization", R"("axis": 0)", "b")), "unsupported axis 0"},
        {image_model(layer("BatchNormalization", R"("axis": "x")", "b")), "unsupported axis \"x\""},
        {image_model(layer("BatchNormalization", R"("momentum": 2)", "b")),
         "invalid value for \"momentum\" in Keras layer 3 (\"b\"): 2"},
        {image_model(layer("BatchNormalization", R"("epsilon": -1)", "b")),
         "invalid value for \"epsilon\" in Keras layer 3"},
        {image_model(layer("BatchNormalization", R"("center": 1)", "b")),
         "invalid value for \"center\" in Keras layer 3"},
    };
    for (const Case& c : cases) EXPECT_ERR(parse_architecture(c.text), InvalidParameter, c.message);
    // Harmless settings pass: defaults spelled out, an unused bias initializer, fused.
    EXPECT_NO_THROW(parse_architecture(image_model(layer(
        "Conv2D",
        conv +
            R"("dilation_rate": [1, 1], "groups": 1, "data_format": null, "use_bias": false, "bias_initializer": "ones")",
        "ok"))));
    EXPECT_NO_THROW(parse_architecture(image_model(layer(
        "BatchNormalization",
        R"("axis": [-1], "fused": true, "renorm": false, "synchronized": false, "center": false, "beta_initializer": "ones")",
        "ok"))));
}

TEST(ConfigCnnRefusals, KerasShapesAndPlacement) {
    // Dense directly on an image.
    EXPECT_ERR(parse_architecture(keras_with(kImage + "," + kConv + "," + kOut)), InvalidParameter,
               "dense layer applied to a non-flat tensor (Keras layer 3 (\"out\"))");
    // Declared input shapes (Keras 3's build_config) must match the computed ones.
    const std::string dense_1000 =
        R"({"class_name": "Dense", "config": {"name": "out", "units": 2, "activation": "softmax"}, "build_config": {"input_shape": [null, 1000]}})";
    Error e = EXPECT_ERR(parse_architecture(keras_with(kImage + "," + kConv + "," + kFlatten + "," + dense_1000)),
                         InvalidParameter, "input shape of Keras layer 4 (\"out\") does not match the previous layer");
    EXPECT_NE(e.detail().find("[null, 1000] but the previous layer outputs [null, 144]"), std::string::npos)
        << e.detail();
    const std::string flat_decl =
        R"({"class_name": "Flatten", "config": {"name": "f"}, "build_config": {"input_shape": [null, 6, 6, 5]}})";
    EXPECT_ERR(parse_architecture(keras_with(kImage + "," + kConv + "," + flat_decl + "," + kOut)), InvalidParameter,
               "input shape of Keras layer 3 (\"f\") does not match the previous layer");
    // Input shape conflicts between the InputLayer and the first layer.
    EXPECT_ERR(parse_architecture(keras_with(
                   kImage + "," +
                   layer("Conv2D", R"("filters": 2, "kernel_size": 3, "batch_input_shape": [null, 8, 8, 1])", "c") +
                   "," + kFlatten + "," + kOut)),
               InvalidParameter, "conflicting input shapes");
    // Dropout and activations before any layer; an activation on top of another.
    EXPECT_ERR(parse_architecture(keras_with(kImage +
                                             R"(,{"class_name": "Dropout", "config": {"name": "d", "rate": 0.2}},)" +
                                             kConv + "," + kFlatten + "," + kOut)),
               InvalidParameter, "Keras layer 2 (\"d\") drops inputs before any layer");
    EXPECT_ERR(parse_architecture(
                   image_model(R"({"class_name": "Activation", "config": {"name": "a", "activation": "tanh"}})")),
               InvalidParameter,
               "Keras layer 3 (\"a\") applies tanh after Keras layer 2 (\"c\") which already uses relu");
    // An activation after pooling merges into the pooling layer.
    Architecture a = parse_architecture(keras_with(
        kImage + "," + layer("Conv2D", R"("filters": 4, "kernel_size": 3)", "c") + "," +
        layer("MaxPooling2D", "", "p") +
        R"(,{"class_name": "Activation", "config": {"name": "a", "activation": "relu"}},)" + kFlatten + "," + kOut));
    EXPECT_EQ(a.layers[1].activation, Activation::Relu);
    EXPECT_EQ(a.layers[0].activation, Activation::Linear);
    // Rank-4 images with batch are fine; rank-5 inputs are not.
    EXPECT_ERR(parse_architecture(keras_with(input("[null, 2, 8, 8, 3]") + "," + kConv + "," + kFlatten + "," + kOut)),
               InvalidParameter, "is not supported");
    // Too large images are limits.
    EXPECT_ERR(parse_architecture(
                   keras_with(input("[null, 1000, 1000, 3]") + "," + kConv + "," + kFlatten + "," + kOut)),
               Limit, "input shape [null,1000,1000,3] of Keras layer 1 (\"in\") is too large");
    EXPECT_ERR(parse_architecture(
                   keras_with(input("[null, 2000000, 1, 1]") + "," + kConv + "," + kFlatten + "," + kOut)),
               Limit, "is too large");
    // The layer limit counts hopper layers of every kind.
    std::string many = input("[null, 2, 2, 1]");
    for (int i = 0; i < 65; ++i)
        many += "," + layer("Conv2D", R"("filters": 1, "kernel_size": 1)", "c" + std::to_string(i));
    Error lim =
        EXPECT_ERR(parse_architecture(keras_with(many + "," + kFlatten)), Limit, "architecture has too many layers");
    EXPECT_NE(lim.detail().find("more than 64 layers"), std::string::npos);
}

// Hand-built architectures (the port builds none, but resolve_config checks them like parsed ones).
TEST(ConfigCnnRefusals, HandBuiltArchitecturesAreValidatedToo) {
    const Architecture good = parse_architecture(kNativeConvnet);
    EXPECT_NO_THROW(resolve_config(good, CompileParams{}, FitParams{}));
    Architecture a = good;
    a.input_dim = 783;
    EXPECT_ERR(resolve_config(a, CompileParams{}, FitParams{}), InvalidParameter,
               "input dimension 783 does not match the input shape [28,28,1]");
    a = good;
    a.input_width = 0;
    EXPECT_ERR(resolve_config(a, CompileParams{}, FitParams{}), InvalidParameter, "invalid input shape [28,0,1]");
    a = good;
    a.input_height = a.input_width = 2000;
    a.input_dim = 4000000;
    EXPECT_ERR(resolve_config(a, CompileParams{}, FitParams{}), Limit, "input shape [2000,2000,1] is too large");
    a = good;
    a.layers[0].kernel_w = 0;
    EXPECT_ERR(resolve_config(a, CompileParams{}, FitParams{}), InvalidParameter,
               "invalid value for \"kernel_size\" in layer 1: [3,0]");
    a = good;
    a.layers[0].stride_h = -1;
    EXPECT_ERR(resolve_config(a, CompileParams{}, FitParams{}), InvalidParameter,
               "invalid value for \"strides\" in layer 1");
    a = good;
    a.layers[0].filters = 0;
    EXPECT_ERR(resolve_config(a, CompileParams{}, FitParams{}), InvalidParameter,
               "invalid value for \"filters\" in layer 1: 0");
    a = good;
    a.layers[1].kernel_h = 2000000;
    EXPECT_ERR(resolve_config(a, CompileParams{}, FitParams{}), InvalidParameter,
               "invalid value for \"pool_size\" in layer 2");
    Layer bn;
    bn.kind = LayerKind::BatchNormalization;
    bn.momentum = -0.5;
    a = good;
    a.layers.insert(a.layers.begin() + 1, bn);
    EXPECT_ERR(resolve_config(a, CompileParams{}, FitParams{}), InvalidParameter,
               "invalid value for \"momentum\" in layer 2: -0.5");
    a.layers[1].momentum = 0.5;
    a.layers[1].epsilon = 1e-60;  // 0 as a float
    EXPECT_ERR(resolve_config(a, CompileParams{}, FitParams{}), InvalidParameter,
               "invalid value for \"epsilon\" in layer 2");
    a.layers[1].epsilon = 1e-3;
    EXPECT_NO_THROW(resolve_config(a, CompileParams{}, FitParams{}));
    // The loss looks at the output width, whatever the last layer is; top_k at that width is accepted.
    Architecture g = parse_architecture(
        R"({"input_shape": [4, 4, 3], "layers": [{"type": "conv2d", "filters": 3, "kernel_size": 1},
                                                  {"type": "global_average_pooling2d", "activation": "softmax"}]})");
    EXPECT_EQ(resolve_config(g, parse_compile_params("metrics=['top_k_categorical_accuracy'], top_k=3"), FitParams{})
                  .compile.top_k,
              3);
    EXPECT_EQ(resolve_config(g, CompileParams{}, FitParams{}).compile.loss, Loss::SoftmaxCrossEntropy);
}
