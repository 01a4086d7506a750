// Model configuration: architecture, compile parameters and fit parameters, parsed from the forms
// users already have (hopper's own JSON, a Keras Sequential model's to_json(), MADlib's parameter
// strings) into one canonical form. Architectures are sequential stacks of Dense, Conv2D,
// MaxPooling2D, AveragePooling2D, GlobalAveragePooling2D, Flatten and BatchNormalization layers
// over flat or image (channels-last) inputs. Every parser throws hopper::Error (Syntax for text
// that cannot be parsed, InvalidParameter for an unknown key or a bad value, Limit for absurd
// sizes, naming the key or layer).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hopper {

enum class Activation { Linear, Relu, Tanh, Sigmoid, Softmax };
enum class Initializer { GlorotUniform, GlorotNormal, HeUniform, HeNormal, Zeros };
enum class Loss { SoftmaxCrossEntropy, BinaryCrossEntropy, MeanSquaredError };
enum class OptimizerKind { SGD, Momentum, Nesterov, Adam, RMSprop, Adagrad, Adadelta, Adamax, Nadam };
enum class Metric { Accuracy, TopKAccuracy, MeanSquaredError, MeanAbsoluteError, Loss };

// Canonical lowercase names used in canonical JSON, SQL output and messages.
const char* to_string(Activation a);
const char* to_string(Initializer i);
const char* to_string(Loss l);
const char* to_string(OptimizerKind o);
const char* to_string(Metric m);

// Layer kinds. Images are channels-last tensors [height, width, channels] (Keras' default); a
// packed row holds height*width*channels values in that order (row-major HWC), exactly as a numpy
// array of shape (height, width, channels) flattens.
enum class LayerKind {
    Dense,                   // units outputs from a flat input
    Conv2D,                  // filters outputs per position from a kernel_h x kernel_w window
    MaxPooling2D,            // maximum over each kernel_h x kernel_w window, per channel
    AveragePooling2D,        // mean over each window; with padding "same", over its valid elements
    GlobalAveragePooling2D,  // mean over all positions: [h, w, c] -> c (flat)
    Flatten,                 // [h, w, c] -> h*w*c (flat) in HWC order, as Keras flattens
    BatchNormalization,      // per channel (the last axis); batch statistics while training
    // A table of `vocabulary` rows of `units` (Keras' output_dim) floats, bound to a categorical
    // column of the packed row: its block (one code, or a one-hot block of vocabulary slots) is
    // replaced by the block's row of the table (for one-hot slots: the slots times the table), the
    // vector going after the layer's other inputs. Embedding layers lead the stack, so together they
    // output the packed features no embedding reads, in packed order, then each embedding's vector
    // in layer order: Keras' Concatenate([numeric input, Flatten(Embedding(column)), ...]).
    Embedding,
};
// Keras' padding: "valid" uses only whole windows; "same" pads so that the output has
// ceil(input / stride) positions, putting the odd padding element at the bottom/right (TensorFlow).
enum class Padding { Valid, Same };

const char* to_string(LayerKind k);  // native JSON type names: "dense", "conv2d", "max_pooling2d", ...
const char* to_string(Padding p);    // "valid", "same"

// One layer. Every kind computes its operation, then `activation`, then (while training) inverted
// `dropout` on its output: Keras' separate Activation and Dropout layers are merged into the layer
// before them. A kind ignores the fields it does not use (they keep their defaults when parsed,
// and equality and the canonical JSON look only at the fields of the layer's kind).
struct Layer {
    LayerKind kind = LayerKind::Dense;
    int units = 0;                     // Dense
    int filters = 0;                   // Conv2D
    int kernel_h = 1, kernel_w = 1;    // Conv2D kernel; pooling window (pool_size)
    int stride_h = 1, stride_w = 1;    // Conv2D, pooling
    Padding padding = Padding::Valid;  // Conv2D, pooling
    Activation activation = Activation::Linear;
    bool use_bias = true;                                  // Dense, Conv2D
    Initializer initializer = Initializer::GlorotUniform;  // Dense and Conv2D kernels
    float dropout = 0.0f;  // inverted dropout applied to this layer's output while training
    // BatchNormalization, with Keras' defaults: moving = moving * momentum + batch * (1 - momentum).
    // Doubles, like the Python floats Keras keeps: Keras rounds momentum, 1 - momentum and epsilon
    // to float32 only where it computes, and so does hopper.
    double momentum = 0.99;
    double epsilon = 0.001;
    bool center = true;  // learn an offset (beta)
    bool scale = true;   // learn a factor (gamma)
    // Keras' `trainable`: false freezes the layer's parameters (no gradient applied, no optimizer
    // slots; a frozen BatchNormalization runs in inference mode: moving statistics, not updated).
    bool trainable = true;
    // Embedding: `column` names the categorical column it is bound to; `vocabulary` (Keras'
    // input_dim) its rows, `units` (Keras' output_dim) their width. The binding: the column's
    // first slot in the layer's input (column_offset: its place in the packed row less the slots
    // of earlier embeddings before it) and its slots (column_width: 1 for a code, vocabulary for
    // a one-hot block). vocabulary 0 and column_offset -1 until resolve_inputs binds them.
    std::string column;
    int vocabulary = 0;
    int column_offset = -1;
    int column_width = 0;
};
// The name from when hopper had only dense layers; a default Layer is a Dense layer.
using DenseLayer = Layer;

// The shape of a layer's output for one sample: an image [height, width, channels] or a flat
// vector of `channels` features (then height = width = 1).
struct TensorShape {
    int height = 1, width = 1, channels = 0;
    bool flat = true;
    uint64_t size() const { return uint64_t(height) * uint64_t(width) * uint64_t(channels); }
    std::string to_string() const;  // "28x28x1" for images, "784" for flat vectors
    bool operator==(const TensorShape& o) const {
        return height == o.height && width == o.width && channels == o.channels && flat == o.flat;
    }
    bool operator!=(const TensorShape& o) const { return !(*this == o); }
};

// A regression target standardized for training (sklearn's TransformedTargetRegressor): the
// network learns z = (y - offset) / scale, and every output it gives -- predictions, evaluation,
// the loss and metrics training reports, ONNX export -- is z * scale + offset, in the target's own
// units. hopper.preprocess records the mean and standard deviation of a one-column regression
// target it packs with scale 'auto'; resolve_inputs puts them here (the identity otherwise: then
// nothing is computed, and the canonical JSON leaves it out, as models trained before it have it).
// Applied in float32 as ONNX computes it: a Mul by scale, then an Add of offset.
struct TargetScaling {
    float offset = 0.0f;
    float scale = 1.0f;
    bool identity() const { return offset == 0.0f && scale == 1.0f; }
    bool operator==(const TargetScaling& o) const { return offset == o.offset && scale == o.scale; }
    bool operator!=(const TargetScaling& o) const { return !(*this == o); }
};

struct Architecture {
    // Features per row (the width of packed rows): height*width*channels for image inputs. 0: left
    // out, the packed table's width (resolve_inputs, when training starts).
    int input_dim = 0;
    // Image inputs: [height, width, channels], channels last; all 0 for flat inputs.
    int input_height = 0, input_width = 0, input_channels = 0;
    std::vector<Layer> layers;  // at least one; softmax only on the last, whose output is flat
    // A Keras functional model's own width of the features no embedding reads (its other input; 0
    // without one), which resolve_inputs checks against the packed table; -1 when not declared.
    // Not part of the canonical JSON or of equality: a resolved architecture holds the widths.
    int other_features = -1;
    // The target's standardization (see TargetScaling): only with a linear output layer. Written in
    // the canonical JSON ("target_scaling": {"offset": m, "scale": s}) when not the identity, and
    // part of equality; same_layers ignores it (the same parameters, e.g. a warm start on a table
    // packed again).
    TargetScaling target_scaling;

    bool image_input() const { return input_channels > 0; }
    // Its input width is known and every embedding is bound (resolve_inputs): only then are its
    // shapes and parameters known. A Network refuses an architecture that is not resolved.
    bool resolved() const;
    TensorShape input_shape() const;
    // Output shape of each layer, in order (for a valid architecture; see validate_architecture in
    // config_architecture.cpp).
    std::vector<TensorShape> layer_shapes() const;
    int output_dim() const;
    // Number of float parameters: weights and biases of Dense and Conv2D layers, gamma, beta and
    // the moving mean and variance of BatchNormalization layers.
    std::size_t num_params() const;
    // Parameters of the layers that train (not frozen): each optimizer slot holds this many floats.
    std::size_t num_trainable_params() const;
    // Equal but perhaps for which layers are frozen: the same maths, so the same parameter layout
    // (warm start and transfer learning may freeze layers of a trained model).
    bool same_layers(const Architecture& o) const;
    // For messages: "784-128-10" for dense networks; with image inputs and other layers, e.g.
    // "28x28x1-conv3x3x32-maxpool2x2-conv3x3x64-maxpool2x2-flatten-10".
    std::string shape_string() const;
    // Canonical JSON of hopper's native form; equal architectures give equal strings.
    std::string to_json() const;
    bool operator==(const Architecture& o) const;
    bool operator!=(const Architecture& o) const { return !(*this == o); }
};

struct OptimizerConfig {
    OptimizerKind kind = OptimizerKind::SGD;
    double learning_rate = 0.01;
    double momentum = 0.0;                   // Momentum and Nesterov
    double beta1 = 0.9;                      // Adam, Adamax, Nadam
    double beta2 = 0.999;                    // Adam, Adamax, Nadam
    double epsilon = 1e-7;                   // Adam, RMSprop, Adagrad, Adadelta, Adamax, Nadam (Keras default)
    double rho = 0.9;                        // RMSprop; Adadelta's default is 0.95 (its configure sets it)
    double initial_accumulator_value = 0.1;  // Adagrad: where its accumulator starts
    double schedule_decay = 0.004;           // Nadam: its momentum schedule (Keras' schedule_decay)
    double decay = 0.0;                      // Keras time-based learning-rate decay: lr / (1 + decay * step)
    double weight_decay = 0.0;               // L2 penalty on weights (not biases): grad += weight_decay * w
};

struct CompileParams {
    Loss loss = Loss::SoftmaxCrossEntropy;
    bool loss_given = false;  // false: loss chosen from the output activation by resolve()
    OptimizerConfig optimizer;
    std::vector<Metric> metrics;  // in the order given; may be empty
    int top_k = 5;                // for Metric::TopKAccuracy
    // Keras' loss_weights=[w] for the one output hopper's models have: the loss (so its gradient,
    // and the loss that training and evaluation report) is multiplied by w. Finite, >= 0.
    double loss_weight = 1.0;

    std::string to_json() const;
};

struct FitParams {
    int batch_size = 32;  // rows per optimizer step within a packed buffer
    int epochs = 1;       // passes over a segment's buffers per visit
    uint64_t seed = 42;   // weight initialisation, dropout and reshuffling
    // Keras' shuffle: every pass over a segment draws its minibatches from a new seeded permutation
    // of all the segment's rows (Trainer::train_rows), as PyTorch's and Keras' loops reshuffle every
    // epoch; false trains the buffers in order, in minibatches of consecutive rows, as packed (and
    // as hopper did before 0.2.0).
    bool shuffle = true;
    // Mixed precision: with bfloat16, training multiplies the large products (those oneDNN takes,
    // src/core/gemm.h) on bfloat16 copies of their inputs, accumulating in float32; the weights, the
    // optimizer and every evaluation and prediction stay float32. Needs AVX512_BF16 and oneDNN.
    enum class Precision { Float32, BFloat16 };
    Precision precision = Precision::Float32;
    // Keras' steps_per_epoch, as the TensorFlow 1 Keras that MADlib runs takes it when fit is given
    // arrays (MADlib calls fit once per packed buffer): each buffer is trained as one minibatch,
    // epochs x steps_per_epoch optimizer steps on the whole buffer before the next buffer, so
    // batch_size and shuffle have no effect. 0: not given (minibatches of batch_size, epochs passes).
    int steps_per_epoch = 0;
    // Keras' class_weight ({0: 10, 1: 1}): a training row's loss, and so its gradient, is multiplied
    // by the weight of its class (the index of its one-hot target, in class_values order), as
    // Keras weights samples by class; evaluation stays unweighted. Empty: every weight 1. Only with
    // categorical cross-entropy (a softmax output), where weighting the loss is weighting the target.
    std::vector<float> class_weight;

    // Rows of one optimizer step on a buffer of `buffer_rows` rows (at least 1).
    int step_rows(int buffer_rows) const;

    std::string to_json() const;
};

// Refuses (0A000) a precision this machine cannot train in: bfloat16 without AVX512_BF16 or without
// oneDNN in the build. Checked when training starts, not when a stored configuration is read (a
// model trained in bfloat16 is scored in float32 anywhere).
void require_supported_precision(const FitParams& fit);

struct ModelConfig {
    Architecture arch;
    CompileParams compile;
    FitParams fit;

    std::string to_json() const;  // {"architecture":...,"compile":...,"fit":...}
};

// Parses hopper's native architecture JSON
//   {"input_dim": 784, "layers": [{"units": 128, "activation": "relu"}, ...],
//    "initializer": "he_normal" (optional default for all Dense and Conv2D layers)}
// where a layer object without "type" is a Dense layer; images give "input_shape" instead of
// "input_dim", and other layers a "type":
//   {"input_shape": [28, 28, 1], "layers": [
//     {"type": "conv2d", "filters": 32, "kernel_size": [3, 3], "activation": "relu"},
//     {"type": "max_pooling2d", "pool_size": [2, 2]},
//     {"type": "flatten", "dropout": 0.5},
//     {"units": 10, "activation": "softmax"}]}
// input_dim may be left out: the packed table's width, known when training starts (resolve_inputs).
// Layer keys: conv2d: filters, kernel_size, strides ([1, 1]), padding ("valid" or "same"),
// activation, use_bias, initializer, dropout; max_pooling2d and average_pooling2d: pool_size ([2, 2]),
// strides (the pool size), padding, activation, dropout; global_average_pooling2d, flatten:
// activation, dropout; batch_normalization: momentum (0.99), epsilon (0.001), center, scale
// (true), activation, dropout; embedding: column (a categorical column of the packed table),
// output_dim, input_dim (its vocabulary; left out: the column's), dropout (only on the last
// embedding: its output is the concatenation), and offset and width (its binding, written by
// resolve_inputs). Sizes are an integer or a [height, width] pair. Every layer also
// takes "trainable" (true; false freezes its parameters, written in canonical JSON only then).
// "target_scaling": {"offset": m, "scale": s} (top level; a linear output layer; scale a positive
// finite number) gives the target's standardization (TargetScaling), which training usually
// takes from the packed table (resolve_inputs).
// Or a Keras Sequential model's to_json() (see config_keras.cpp for the layers it accepts).
Architecture parse_architecture(std::string_view json);

class Recipe;  // recipe.h

// The architecture with what was left to the packed table filled in: input_dim (if 0) becomes
// packed_width, and each embedding is bound to its column of `recipe` (the packed table's feature
// recipe; null for a table of feature arrays): a column packed as a code or one-hot, its vocabulary
// (given ones must match). Refuses (InvalidParameter, naming the column) an embedding without a
// recipe, of a column the recipe does not have or that is not categorical. Where input_dim differs
// from packed_width the embeddings stay unbound (the caller refuses the width). `target`: the packed
// table's standardization of its regression target (null: none recorded); it becomes the
// architecture's target_scaling when the output layer is linear (a sigmoid or relu output cannot
// reach a standardized target: those keep the target raw, as before) and the architecture states
// none. Checks the result as parse_architecture does.
Architecture resolve_inputs(Architecture arch, int packed_width, const Recipe* recipe,
                            const TargetScaling* target = nullptr);

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

// What makes `requested` another configuration than the one a state was `trained` as, for a resume
// that continues only the same configuration: "" when nothing does, else what does ("architecture",
// "compile parameters", "fit parameters", joined as in "compile parameters and fit parameters"). Input dimensions and
// the target's scaling are not compared (they come from the packed table; restoring a state checks
// the dimensions).
std::string configuration_difference(const ModelConfig& trained, const ModelConfig& requested);

}  // namespace hopper
