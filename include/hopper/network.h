// A stack of dense layers over one flat float32 parameter vector.
//
// Data layout: a batch of n samples is an Eigen column-major (features x n) matrix, which is the
// same memory as row-major (n x features) -- exactly how packed buffers store samples, so packed
// data is mapped without copying. Parameters are one contiguous vector, layer by layer:
// W_l (units x inputs, column-major) then b_l (units, if use_bias). Optimizers, averaging and the
// state format all work on that flat vector.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <vector>

#include "hopper/config.h"

namespace hopper {

using MatrixF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
using VectorF = Eigen::Matrix<float, Eigen::Dynamic, 1>;
// PostgreSQL guarantees only 8-byte alignment of array data: maps are unaligned.
using ConstMatrixMap = Eigen::Map<const MatrixF, Eigen::Unaligned>;
using MatrixMap = Eigen::Map<MatrixF, Eigen::Unaligned>;

// Where one layer's parameters sit in the flat vector.
struct LayerSlice {
    std::size_t weight_offset;  // units*inputs floats, column-major
    std::size_t bias_offset;    // units floats; == weight_offset + units*inputs; unused if !use_bias
    int inputs;
    int units;
};

class Network {
public:
    explicit Network(Architecture arch);

    const Architecture& arch() const { return arch_; }
    std::size_t num_params() const { return num_params_; }
    const std::vector<LayerSlice>& slices() const { return slices_; }

    // Seeded Glorot/He initialisation of weights (per layer initializer); biases zero.
    // Same seed and architecture give the same parameters on every platform.
    void initialize(float* params, uint64_t seed) const;

    // Output activations (output_dim x n) for inputs x (input_dim x n). No dropout.
    void predict(const float* params, const ConstMatrixMap& x, MatrixF& out) const;

private:
    Architecture arch_;
    std::vector<LayerSlice> slices_;
    std::size_t num_params_ = 0;
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
    // dropout masks (only used by layers with dropout > 0); masks are deterministic in it.
    double loss_and_gradient(const float* params, const ConstMatrixMap& x, const ConstMatrixMap& y,
                             Loss loss, float* grad, uint64_t dropout_seed);

private:
    const Network& net_;
    std::vector<MatrixF> activations_;  // post-activation output of each layer
    std::vector<MatrixF> masks_;        // dropout masks (scaled), empty for layers without dropout
    MatrixF delta_, delta_prev_;
    // Gradient target when the caller's grad is not 64-byte aligned: Eigen peels loops by the
    // destination's alignment, so computing in place would make the rounding depend on it.
    VectorF aligned_grad_;
};

}  // namespace hopper
