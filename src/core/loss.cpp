// The loss vocabulary (vocabulary.h): one entry per loss with the names users write, the output
// layers it fits, its summed value and its gradient. The network's backward pass and the
// evaluation call them; the arithmetic is the one stored models and pinned results depend on.
#include <algorithm>
#include <cmath>

#include "hopper/error.h"
#include "vocabulary.h"

namespace hopper::vocab {

namespace {

// Keras' epsilon, applied in float32 as Keras does (1 - 1e-7 rounds to 0.99999988f).
constexpr float kClipLo = 1e-7f;
constexpr float kClipHi = 1.0f - 1e-7f;

inline float clip_prob(float p) { return std::min(std::max(p, kClipLo), kClipHi); }

double softmax_cross_entropy_sum(const ConstMatrixMap& p, const ConstMatrixMap& y) {
    const Eigen::Index k = p.rows(), n = p.cols();
    double total = 0.0;
    for (Eigen::Index j = 0; j < n; ++j)
        for (Eigen::Index i = 0; i < k; ++i) {
            float t = y(i, j);
            if (t != 0.0f) total -= double(t) * std::log(double(clip_prob(p(i, j))));
        }
    return total;
}

double binary_cross_entropy_sum(const ConstMatrixMap& p, const ConstMatrixMap& y) {
    return sum_of_output_means(p, y, [](float pi, float yi) {
        double q = clip_prob(pi);
        double t = yi;
        return -(t * std::log(q) + (1.0 - t) * std::log(1.0 - q));
    });
}

// dL/dp is zero where the probability clip is active.
void softmax_cross_entropy_gradient(const ConstMatrixMap& p, const ConstMatrixMap& y, float inv_n, MatrixMap& g) {
    g = (p.array() >= kClipLo && p.array() <= kClipHi).select(-y.array() / p.array() * inv_n, 0.0f).matrix();
}

void binary_cross_entropy_gradient(const ConstMatrixMap& p, const ConstMatrixMap& y, float inv_n, MatrixMap& g) {
    const float c = inv_n / float(p.rows());
    g = (p.array() >= kClipLo && p.array() <= kClipHi)
            .select((p.array() - y.array()) / (p.array() * (1.0f - p.array())) * c, 0.0f)
            .matrix();
}

void squared_error_gradient(const ConstMatrixMap& p, const ConstMatrixMap& y, float inv_n, MatrixMap& g) {
    g = (p - y) * (2.0f * inv_n / float(p.rows()));
}

// Exact for any targets: d/dz of -sum y log softmax(z) is softmax * sum(y) - y.
void softmax_cross_entropy_fused(MatrixMap& p, const ConstMatrixMap& y, float inv_n) {
    for (Eigen::Index j = 0; j < p.cols(); ++j) {
        // A plain loop: an Eigen sum over the caller's y would round by y's alignment.
        float ysum = 0.0f;
        for (Eigen::Index i = 0; i < p.rows(); ++i) ysum += y(i, j);
        p.col(j) = (p.col(j) * ysum - y.col(j)) * inv_n;
    }
}

void binary_cross_entropy_fused(MatrixMap& p, const ConstMatrixMap& y, float inv_n) {
    p = (p - y) * (inv_n / float(p.rows()));
}

// hopper's cross-entropy takes probabilities: -sum y log p. On logits or sigmoid outputs it is not
// a proper loss, so refuse instead of training nonsense.
void softmax_cross_entropy_check(const OutputLayer& out) {
    if (out.activation != Activation::Softmax)
        fail(ErrorKind::InvalidParameter,
             "loss categorical_crossentropy (softmax_cross_entropy) needs a softmax output layer",
             "The output layer (" + out.label + ") uses " + to_string(out.activation) + ".",
             out.activation == Activation::Sigmoid
                 ? "Use binary_crossentropy with a sigmoid output, or softmax on the output layer."
                 : "Use activation softmax on the output layer.");
    if (out.units < 2)
        fail(ErrorKind::InvalidParameter,
             "loss categorical_crossentropy (softmax_cross_entropy) needs at least 2 output units",
             "The output layer (" + out.label + ") has 1 unit.",
             "Give the output layer one unit per class (2 for two classes). hopper's targets are one-hot, with "
             "binary_crossentropy too: a sigmoid unit per class.");
}

void binary_cross_entropy_check(const OutputLayer& out) {
    if (out.activation != Activation::Sigmoid)
        fail(ErrorKind::InvalidParameter, "loss binary_crossentropy needs a sigmoid output layer",
             "The output layer (" + out.label + ") uses " + to_string(out.activation) + ".",
             out.activation == Activation::Softmax ? "Use categorical_crossentropy with a softmax output."
                                                   : "Use activation sigmoid on the output layer.");
}

}  // namespace

double squared_error_sum(const ConstMatrixMap& p, const ConstMatrixMap& y) {
    return sum_of_output_means(p, y, [](float pi, float yi) {
        double d = double(pi) - double(yi);
        return d * d;
    });
}

const std::vector<LossSpec>& losses() {
    static const std::vector<LossSpec> specs = {
        {Loss::SoftmaxCrossEntropy,
         "softmax_cross_entropy",
         {"categoricalcrossentropy", "softmaxcrossentropy"},
         "categorical_crossentropy (softmax_cross_entropy)",
         {Activation::Softmax},
         softmax_cross_entropy_check,
         softmax_cross_entropy_sum,
         softmax_cross_entropy_gradient,
         Activation::Softmax,
         softmax_cross_entropy_fused},
        {Loss::BinaryCrossEntropy,
         "binary_cross_entropy",
         {"binarycrossentropy"},
         "binary_crossentropy",
         {Activation::Sigmoid},
         binary_cross_entropy_check,
         binary_cross_entropy_sum,
         binary_cross_entropy_gradient,
         Activation::Sigmoid,
         binary_cross_entropy_fused},
        {Loss::MeanSquaredError,
         "mean_squared_error",
         {"meansquarederror", "mse"},
         "mean_squared_error (mse)",
         {Activation::Linear, Activation::Relu, Activation::Tanh},
         nullptr,
         squared_error_sum,
         squared_error_gradient,
         Activation::Linear,
         nullptr,
         2},
    };
    return specs;
}

const std::vector<RefusedName>& refused_losses() {
    static const std::vector<RefusedName> names = {
        {"sparsecategoricalcrossentropy",
         "hopper's preprocessing one-hot encodes class labels, so the labels are not sparse.",
         "Use loss='categorical_crossentropy'."},
    };
    return names;
}

const LossSpec* loss(Loss kind) {
    for (const LossSpec& s : losses())
        if (s.kind == kind) return &s;
    return nullptr;
}

}  // namespace hopper::vocab
