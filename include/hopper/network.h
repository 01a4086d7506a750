// A stack of layers (Dense, Conv2D, pooling, Flatten, BatchNormalization; see config.h) over one
// flat float32 parameter vector.
//
// Data layout: a batch of n samples is an Eigen column-major (features x n) matrix, which is the
// same memory as row-major (n x features) -- exactly how packed buffers store samples, so packed
// data is mapped without copying. Image samples are height*width*channels values in HWC order
// (channels last), so Flatten moves no data and a Dense layer after it sees Keras' order.
//
// Parameters are one contiguous vector, layer by layer, each in Keras' order of weights:
//   Dense:   W (units x inputs, column-major, = Keras' kernel (inputs, units) in C order), b (units)
//   Conv2D:  W (filters x kh*kw*in_channels, column-major, = Keras' kernel (kh, kw, in, filters)
//            in C order), b (filters)
//   BatchNormalization: gamma (if scale), beta (if center), moving mean, moving variance
//            (channels each). The moving statistics are not trained: their gradient is 0, weight
//            decay skips them, and every optimizer leaves a parameter with gradient 0 (and slots
//            0) unchanged; after each step the trainer writes their updated values
//            (GradientWorkspace::store_moving_statistics). So they travel in model states and
//            are averaged with the other parameters by model averaging.
// Optimizers, averaging and the state format all work on that flat vector. A frozen layer
// (trainable false) keeps its place in it; only the optimizer skips it (trainable_ranges).
#pragma once

#include <cstdint>
#include <vector>
#include <Eigen/Core>

#include "hopper/config.h"
#include "hopper/optimizer.h"

namespace hopper {

struct EvalTotals;  // metrics.h

using MatrixF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
using VectorF = Eigen::Matrix<float, Eigen::Dynamic, 1>;
// PostgreSQL guarantees only 8-byte alignment of array data: maps are unaligned.
using ConstMatrixMap = Eigen::Map<const MatrixF, Eigen::Unaligned>;
using MatrixMap = Eigen::Map<MatrixF, Eigen::Unaligned>;

// Where one layer's parameters sit in the flat vector.
struct LayerSlice {
    // Dense: units*inputs floats, column-major; Conv2D: the kernel, filters x kh*kw*in_channels;
    // BatchNormalization: gamma (if scale); other layers: where their (no) parameters would be.
    std::size_t weight_offset;
    // units floats; == weight_offset + units*inputs; unused if !use_bias. BatchNormalization: beta.
    std::size_t bias_offset;
    int inputs;                    // Dense: input width; Conv2D: kh*kw*in_channels; other layers 0
    int units;                     // Dense: units; Conv2D: filters; other layers 0 (so units*inputs are the weights)
    std::size_t stats_offset = 0;  // BatchNormalization: moving mean, then moving variance
    std::size_t end_offset = 0;    // one past the layer's last parameter
};

// Scratch of one layer other than Dense in a forward/backward pass: Conv2D's patch matrix (kept
// from forward for the kernel gradient), max pooling's argmax, batch normalization's statistics.
struct LayerScratch {
    MatrixF columns;
    std::vector<int32_t> argmax;  // per output value: the input index (within its sample) it came from
    VectorF stats;                // batch normalization: batch mean, 1/sqrt(var + eps), new moving
                                  // mean and variance, per-channel factors (layer_batchnorm.cpp)
    Eigen::VectorXd sums;         // batch normalization: per-channel sums in double
};

class Network {
public:
    explicit Network(Architecture arch);

    const Architecture& arch() const { return arch_; }
    std::size_t num_params() const { return num_params_; }
    const std::vector<LayerSlice>& slices() const { return slices_; }
    // shapes()[0] is the input shape, shapes()[l + 1] the output shape of layer l.
    const std::vector<TensorShape>& shapes() const { return shapes_; }
    // The parameters the optimizer updates: the slices of the layers that are not frozen, adjacent
    // ones merged ([0, num_params) when nothing is frozen); their total is num_trainable_params().
    const std::vector<ParamRange>& trainable_ranges() const { return trainable_; }
    std::size_t num_trainable_params() const { return num_trainable_; }
    // The first layer with parameters that train (layers().size() if none): backpropagation stops there.
    std::size_t first_trained_layer() const { return first_trained_; }

    // Seeded Glorot/He initialisation of weights (per layer initializer); biases zero; batch
    // normalization: gamma 1, beta 0, moving mean 0, moving variance 1.
    // Same seed and architecture give the same parameters on every platform.
    void initialize(float* params, uint64_t seed) const;

    // Output activations (output_dim x n) for inputs x (input_dim x n). No dropout; batch
    // normalization uses the moving statistics. With a target scaling (Architecture::
    // target_scaling), in the target's own units: the last layer's output z as z * scale + offset.
    void predict(const float* params, const ConstMatrixMap& x, MatrixF& out) const;

private:
    Architecture arch_;
    std::vector<LayerSlice> slices_;
    std::vector<TensorShape> shapes_;
    std::size_t num_params_ = 0;
    std::vector<ParamRange> trainable_;
    std::size_t num_trainable_ = 0;
    std::size_t first_trained_ = 0;
};

// Per-sample loss of outputs `p` (post-activation) against targets `y`, summed over the batch.
// Softmax cross-entropy: -sum_k y_k log p_k. Binary cross-entropy and MSE: mean over outputs.
// Probabilities are clipped to [1e-7, 1 - 1e-7] inside logs.
double loss_sum(Loss loss, const MatrixF& p, const ConstMatrixMap& y);

// Forward and backward pass over one minibatch, with reusable buffers (no allocation once warm).
class GradientWorkspace {
public:
    explicit GradientWorkspace(const Network& net);

    // Computes the mean loss gradient over the batch into `grad` (num_params floats, overwritten)
    // and returns the summed loss over the batch (before the update). `dropout_seed` keys the
    // dropout masks (only used by layers with dropout > 0); masks are deterministic in it. Batch
    // normalization runs in training mode (batch statistics); its moving statistics get gradient 0
    // and their updated values wait for store_moving_statistics. A frozen layer gets gradient 0
    // (nothing below the first trained layer is backpropagated); a frozen batch normalization runs
    // in inference mode (moving statistics, which stay as they are), as Keras runs trainable=False.
    // With `totals`, also adds the batch's loss and `compile`'s metrics of its outputs to them
    // (add_batch_totals): the running training metrics, at the cost of one pass over the outputs.
    // With `compile`, its loss_weight multiplies the loss returned and the gradient (Keras'
    // loss_weights). With a target scaling, `y` is in the target's own units: the outputs are fit
    // to (y - offset) / scale (the gradient is that of the standardized target), while the loss
    // returned and the totals are those of the outputs in own units (z * scale + offset) against y.
    double loss_and_gradient(const float* params, const ConstMatrixMap& x, const ConstMatrixMap& y, Loss loss,
                             float* grad, uint64_t dropout_seed, const CompileParams* compile = nullptr,
                             EvalTotals* totals = nullptr);

    // Writes the moving mean and variance of every batch normalization layer, updated with the
    // last loss_and_gradient's batch (moving * momentum + batch * (1 - momentum), Keras' rule with
    // the biased batch variance), into params. Call after the optimizer step; nothing happens for
    // networks without batch normalization or before any loss_and_gradient.
    void store_moving_statistics(float* params) const;

private:
    const Network& net_;
    std::vector<MatrixF> activations_;  // post-activation output of each layer
    std::vector<MatrixF> masks_;        // dropout masks (scaled), empty for layers without dropout
    MatrixF delta_, delta_prev_;
    MatrixF target_, own_units_;  // a scaled target: the standardized y, the outputs in own units
    // Gradient target when the caller's grad is not 64-byte aligned: Eigen peels loops by the
    // destination's alignment, so computing in place would make the rounding depend on it.
    VectorF aligned_grad_;
    std::vector<LayerScratch> scratch_;  // per layer; used by layers other than Dense
};

}  // namespace hopper
