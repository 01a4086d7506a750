// Model configuration: architecture, compile parameters and fit parameters, parsed from the forms
// users already have (hopper's own JSON, a Keras Sequential model's to_json(), MADlib's parameter
// strings) into one canonical form. Every parser throws hopper::Error (Syntax for text that cannot
// be parsed, InvalidParameter for an unknown key or a bad value, naming the key or layer).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hopper {

enum class Activation { Linear, Relu, Tanh, Sigmoid, Softmax };
enum class Initializer { GlorotUniform, GlorotNormal, HeUniform, HeNormal, Zeros };
enum class Loss { SoftmaxCrossEntropy, BinaryCrossEntropy, MeanSquaredError };
enum class OptimizerKind { SGD, Momentum, Nesterov, Adam, RMSprop };
enum class Metric { Accuracy, TopKAccuracy, MeanSquaredError, MeanAbsoluteError, Loss };

// Canonical lowercase names used in canonical JSON, SQL output and messages.
const char* to_string(Activation a);
const char* to_string(Initializer i);
const char* to_string(Loss l);
const char* to_string(OptimizerKind o);
const char* to_string(Metric m);

struct DenseLayer {
    int units = 0;
    Activation activation = Activation::Linear;
    bool use_bias = true;
    Initializer initializer = Initializer::GlorotUniform;
    float dropout = 0.0f;  // inverted dropout applied to this layer's output while training
};

struct Architecture {
    int input_dim = 0;
    std::vector<DenseLayer> layers;  // at least one; softmax only on the last layer

    int output_dim() const { return layers.empty() ? 0 : layers.back().units; }
    // Number of float parameters: sum over layers of in*units (+ units if use_bias).
    std::size_t num_params() const;
    // "784-128-10" for messages.
    std::string shape_string() const;
    // Canonical JSON of hopper's native form; equal architectures give equal strings.
    std::string to_json() const;
    bool operator==(const Architecture& o) const;
    bool operator!=(const Architecture& o) const { return !(*this == o); }
};

struct OptimizerConfig {
    OptimizerKind kind = OptimizerKind::SGD;
    double learning_rate = 0.01;
    double momentum = 0.0;   // Momentum and Nesterov
    double beta1 = 0.9;      // Adam
    double beta2 = 0.999;    // Adam
    double epsilon = 1e-7;   // Adam, RMSprop (Keras default)
    double rho = 0.9;        // RMSprop
    double decay = 0.0;      // Keras time-based learning-rate decay: lr / (1 + decay * step)
    double weight_decay = 0.0;  // L2 penalty on weights (not biases): grad += weight_decay * w
};

struct CompileParams {
    Loss loss = Loss::SoftmaxCrossEntropy;
    bool loss_given = false;  // false: loss chosen from the output activation by resolve()
    OptimizerConfig optimizer;
    std::vector<Metric> metrics;  // in the order given; may be empty
    int top_k = 5;                // for Metric::TopKAccuracy

    std::string to_json() const;
};

struct FitParams {
    int batch_size = 32;  // rows per optimizer step within a packed buffer
    int epochs = 1;       // passes over a segment's buffers per visit
    uint64_t seed = 42;   // weight initialisation and dropout

    std::string to_json() const;
};

struct ModelConfig {
    Architecture arch;
    CompileParams compile;
    FitParams fit;

    std::string to_json() const;  // {"architecture":...,"compile":...,"fit":...}
};

// Parses hopper's native architecture JSON
//   {"input_dim": 784, "layers": [{"units": 128, "activation": "relu"}, ...],
//    "initializer": "he_normal" (optional default for all layers)}
// or a Keras Sequential model's to_json() (InputLayer/Dense/Activation/Dropout only).
Architecture parse_architecture(std::string_view json);

// Compile parameters as a JSON object or MADlib's text form, e.g.
//   loss='categorical_crossentropy', optimizer='SGD(lr=0.05, momentum=0.9)', metrics=['accuracy']
CompileParams parse_compile_params(std::string_view text);

// Fit parameters as a JSON object or MADlib's text form, e.g. batch_size=256, epochs=1
FitParams parse_fit_params(std::string_view text);

// Checks the three parts against each other (softmax output needs a loss that accepts it,
// binary cross-entropy needs sigmoid output, top-k <= output units, ...) and fills in defaults
// that depend on the architecture (loss from the output activation when not given).
ModelConfig resolve_config(Architecture arch, CompileParams compile, FitParams fit);

// Parses the canonical JSON written by ModelConfig::to_json() (used by the model state format).
ModelConfig parse_model_config(std::string_view json);

}  // namespace hopper
