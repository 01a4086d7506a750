// Network: initialisation, forward pass, loss and backpropagation over one flat parameter vector.
// The hot path is GradientWorkspace::loss_and_gradient; see the notes there. Dense layers are
// computed here, exactly as before other layers existed (stored models and pinned results depend
// on every bit); the other kinds go through the small interface of layers.h.
#include "hopper/network.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "gemm.h"
#include "hopper/error.h"
#include "hopper/metrics.h"
#include "hopper/rng.h"
#include "layers.h"
#include "vocabulary.h"

namespace hopper {

namespace {

using ArrayF = Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic>;
using ConstVectorMap = Eigen::Map<const VectorF, Eigen::Unaligned>;
using VectorMap = Eigen::Map<VectorF, Eigen::Unaligned>;

// Alignment of a gradient buffer that loss_and_gradient writes in place (Trainer aligns its
// gradient to 64 bytes, which covers every Eigen packet size).
constexpr std::uintptr_t kGradAlignment = EIGEN_MAX_ALIGN_BYTES > 0 ? EIGEN_MAX_ALIGN_BYTES : 1;

// In-place activation of a (units x n) block. Softmax works per column.
template <typename M>
void activate(Activation act, M&& z) {
    switch (act) {
        case Activation::Linear: break;
        case Activation::Relu: z = z.cwiseMax(0.0f); break;
        case Activation::Tanh: z = z.array().tanh().matrix(); break;
        case Activation::Sigmoid:
            // sigmoid(z) = (z >= 0 ? 1 : e) / (1 + e) with e = exp(-|z|), which never overflows.
            z = ((z.array() >= 0.0f).select(1.0f, (-z.array().abs()).exp()) / (1.0f + (-z.array().abs()).exp()))
                    .matrix();
            break;
        case Activation::Softmax:
            for (Eigen::Index j = 0; j < z.cols(); ++j) {
                auto c = z.col(j).array();
                float m = c.maxCoeff();
                c = (c - m).exp();
                c /= c.sum();
            }
            break;
    }
}

// z = W a (+ b), then the activation, all in place in z.
template <typename A, typename Z>
void dense_forward(const DenseLayer& layer, const LayerSlice& s, const float* params, const A& a, Z&& z) {
    detail::gemm(false, false, s.units, a.cols(), s.inputs, params + s.weight_offset, a.data(), z.data());
    if (layer.use_bias) z.colwise() += ConstVectorMap(params + s.bias_offset, s.units);
    activate(layer.activation, z);
}

// The loss's table entry; Internal for a value outside the enum (hand-built configs).
const vocab::LossSpec& loss_spec(Loss loss) {
    if (const vocab::LossSpec* s = vocab::loss(loss)) return *s;
    fail(ErrorKind::Internal, "unknown loss");
}

// Standard deviation (normal) or half-width (uniform) of an initializer.
double init_scale(Initializer init, double fan_in, double fan_out) {
    switch (init) {
        case Initializer::GlorotUniform: return std::sqrt(6.0 / (fan_in + fan_out));
        case Initializer::GlorotNormal: return std::sqrt(2.0 / (fan_in + fan_out));
        case Initializer::HeUniform: return std::sqrt(6.0 / fan_in);
        case Initializer::HeNormal: return std::sqrt(2.0 / fan_in);
        case Initializer::Zeros: return 0.0;
    }
    return 0.0;
}

}  // namespace

Network::Network(Architecture arch) : arch_(std::move(arch)) {
    if (!arch_.resolved())
        fail(ErrorKind::InvalidParameter, "the architecture's input width is not known",
             "Its input_dim (or an embedding's binding to its column) was left out: hopper takes it from the "
             "packed table when training starts, and a model state holds it.",
             "Train the model on a packed table (hopper.fit, fit_multiple, ...), or give input_dim.");
    // Computed here rather than by Architecture::num_params() so the network owns its layout.
    std::size_t offset = 0;
    slices_.reserve(arch_.layers.size());
    shapes_.reserve(arch_.layers.size() + 1);
    shapes_.push_back(arch_.input_shape());
    for (const Layer& layer : arch_.layers) {
        const TensorShape& in = shapes_.back();
        const TensorShape out = layers::output_shape(layer, in);
        if (in.size() == 0 || out.size() == 0 || in.size() > layers::kMaxRowFloats ||
            out.size() > layers::kMaxRowFloats || (layer.kind == LayerKind::Dense && !in.flat))
            fail(ErrorKind::Internal, "network layer with an invalid size");
        const LayerSlice s = layers::layer_type(layer.kind).slice(layer, in, offset);
        offset = s.end_offset;
        slices_.push_back(s);
        shapes_.push_back(out);
    }
    num_params_ = offset;
    if (num_params_ != arch_.num_params())
        fail(ErrorKind::Internal, "network layout does not match the architecture's parameter count");
    first_trained_ = slices_.size();
    for (std::size_t l = 0; l < slices_.size(); ++l) {
        const LayerSlice& s = slices_[l];
        if (!arch_.layers[l].trainable || s.end_offset == s.weight_offset) continue;
        first_trained_ = std::min(first_trained_, l);
        if (!trainable_.empty() && trainable_.back().end == s.weight_offset) trainable_.back().end = s.end_offset;
        else trainable_.push_back({s.weight_offset, s.end_offset});
        num_trainable_ += s.end_offset - s.weight_offset;
    }
}

void Network::initialize(float* params, uint64_t seed) const {
    for (std::size_t l = 0; l < slices_.size(); ++l) {
        const LayerSlice& s = slices_[l];
        const Layer& layer = arch_.layers[l];
        const double fan_out = layers::layer_type(layer.kind).kernel_fan_out(layer, s);
        if (fan_out == 0.0) {
            layers::initialize({layer, shapes_[l], shapes_[l + 1], s}, params, mix_seed(seed, l));
            continue;
        }
        const std::size_t count = std::size_t(s.units) * std::size_t(s.inputs);
        float* w = params + s.weight_offset;
        // One stream per layer: adding a layer leaves the earlier layers' weights unchanged.
        Rng rng(mix_seed(seed, l));
        const double scale = init_scale(layer.initializer, double(s.inputs), fan_out);
        switch (layer.initializer) {
            case Initializer::GlorotUniform:
            case Initializer::HeUniform:
                for (std::size_t i = 0; i < count; ++i) w[i] = float((2.0 * rng.uniform() - 1.0) * scale);
                break;
            case Initializer::GlorotNormal:
            case Initializer::HeNormal:
                for (std::size_t i = 0; i < count; ++i) w[i] = float(rng.normal() * scale);
                break;
            case Initializer::Zeros: std::fill(w, w + count, 0.0f); break;
        }
        if (layer.use_bias) std::fill(params + s.bias_offset, params + s.bias_offset + s.units, 0.0f);
    }
}

void Network::predict(const float* params, const ConstMatrixMap& x, MatrixF& out) const {
    const std::size_t nl = slices_.size();
    const Eigen::Index n = x.cols();
    if (nl == 0) fail(ErrorKind::Internal, "network without layers");
    if (x.rows() != arch_.input_dim) fail(ErrorKind::Internal, "input rows do not match the network");
    // Ping-pong between `out` and `tmp` so the last layer lands in `out`.
    MatrixF tmp;
    LayerScratch scratch;
    for (std::size_t l = 0; l < nl; ++l) {
        MatrixF& dst = ((nl - 1 - l) % 2 == 0) ? out : tmp;
        const MatrixF& src = (&dst == &out) ? tmp : out;
        const Layer& layer = arch_.layers[l];
        dst.resize(Eigen::Index(shapes_[l + 1].size()), n);
        if (layer.kind != LayerKind::Dense) {
            layers::forward({layer, shapes_[l], shapes_[l + 1], slices_[l]}, params, l == 0 ? x.data() : src.data(),
                            dst.data(), n, false, scratch);
            activate(layer.activation, dst);
        } else if (l == 0) {
            dense_forward(layer, slices_[l], params, x, dst);
        } else {
            dense_forward(layer, slices_[l], params, src, dst);
        }
    }
    // A standardized target: the output back in its own units. Two passes, as ONNX's Mul and Add
    // (no fused multiply-add), so that an exported model computes exactly this.
    const TargetScaling& t = arch_.target_scaling;
    if (!t.identity()) {
        out.array() *= t.scale;
        out.array() += t.offset;
    }
}

double loss_sum(Loss loss, const MatrixF& p, const ConstMatrixMap& y) {
    if (p.rows() != y.rows() || p.cols() != y.cols())
        fail(ErrorKind::Internal, "loss of mismatched output and target shapes");
    return loss_spec(loss).sum(ConstMatrixMap(p.data(), p.rows(), p.cols()), y);
}

// ---------------------------------------------------------------------------------------------
// Gradient workspace.
//
// Buffers are allocated for the largest batch seen and used through maps of their first n
// columns (column-major, so that prefix is contiguous): a smaller last minibatch does not
// reallocate. During the backward pass each layer's activation buffer is overwritten in place by
// that layer's dL/dZ once the layer above no longer needs it, so one scratch buffer (delta_) is
// enough for W^T * dZ. delta_prev_ holds dL/dp for the general (non fast path) output gradient.
//
// Dropout: activations_ hold the outputs after dropout. masks_[l] holds 0 or 1/(1-rate) per
// element, except for a softmax layer, where it holds the softmax before dropout (the Jacobian
// needs all of it) and the keep pattern is recovered as "output != 0" (a kept softmax value is
// > 0 unless it underflowed, and then it contributes nothing either way).

GradientWorkspace::GradientWorkspace(const Network& net)
    : net_(net), activations_(net.slices().size()), masks_(net.slices().size()), scratch_(net.slices().size()) {}

void GradientWorkspace::store_moving_statistics(float* params) const {
    const auto& layers = net_.arch().layers;
    const auto& shapes = net_.shapes();
    for (std::size_t l = 0; l < layers.size(); ++l)
        if (layers[l].kind != LayerKind::Dense && layers[l].trainable)
            layers::store_moving_statistics({layers[l], shapes[l], shapes[l + 1], net_.slices()[l]}, params,
                                            scratch_[l]);
}

namespace {

// Draws the keep pattern of one layer: element i (column-major) kept iff its uniform >= rate.
// Integer comparison of the top 53 bits is the same as Rng::uniform() >= rate, but cheaper.
struct DropoutDraw {
    Rng rng;
    uint64_t threshold;  // keep iff (u64 >> 11) >= threshold
    DropoutDraw(uint64_t seed, std::size_t layer, float rate)
        : rng(mix_seed(seed, layer)), threshold(uint64_t(std::ceil(double(rate) * 9007199254740992.0))) {}
    bool keep() { return (rng.next_u64() >> 11) >= threshold; }
};

// In place: g (dL/dA after dropout, units x n) becomes dL/dZ of a layer whose outputs after
// dropout are `a`. `mask` is the layer's mask buffer (only read if rate > 0).
template <typename G, typename A, typename Mk>
void activation_backward(Activation act, float rate, G&& g, const A& a, const Mk& mask) {
    const bool drop = rate > 0.0f;
    const float keep_scale = drop ? 1.0f / (1.0f - rate) : 1.0f;
    const float inv = drop ? (1.0f - rate) : 1.0f;  // undoes the scaling of kept outputs
    switch (act) {
        case Activation::Linear:
            if (drop) g.array() *= mask.array();
            break;
        case Activation::Relu:
            // A kept positive output implies mask == keep_scale; a dropped one is 0.
            if (drop) g = (a.array() > 0.0f).select(g.array() * keep_scale, 0.0f).matrix();
            else g = (a.array() > 0.0f).select(g.array(), 0.0f).matrix();
            break;
        case Activation::Tanh:
            if (drop) g.array() *= mask.array() * (1.0f - (a.array() * inv).square());
            else g.array() *= 1.0f - a.array().square();
            break;
        case Activation::Sigmoid:
            if (drop) g.array() *= mask.array() * (a.array() * inv) * (1.0f - a.array() * inv);
            else g.array() *= a.array() * (1.0f - a.array());
            break;
        case Activation::Softmax:
            // dZ = s * (g' - sum(s * g')) per column, g' = g through dropout.
            for (Eigen::Index j = 0; j < g.cols(); ++j) {
                auto gc = g.col(j).array();
                if (drop) {
                    auto s = mask.col(j).array();
                    gc = (a.col(j).array() != 0.0f).select(gc * keep_scale, 0.0f);
                    float dot = (s * gc).sum();
                    gc = s * (gc - dot);
                } else {
                    auto s = a.col(j).array();
                    float dot = (s * gc).sum();
                    gc = s * (gc - dot);
                }
            }
            break;
    }
}

}  // namespace

double GradientWorkspace::loss_and_gradient(const float* params, const ConstMatrixMap& x, const ConstMatrixMap& y,
                                            Loss loss, float* grad, uint64_t dropout_seed, const CompileParams* compile,
                                            EvalTotals* totals) {
    const auto& slices = net_.slices();
    const auto& layers = net_.arch().layers;
    const auto& shapes = net_.shapes();
    const std::size_t nl = slices.size();
    const Eigen::Index n = x.cols();
    // Output width of layer l (units for Dense).
    auto width = [&](std::size_t l) { return Eigen::Index(shapes[l + 1].size()); };
    auto args = [&](std::size_t l) { return layers::LayerArgs{layers[l], shapes[l], shapes[l + 1], slices[l]}; };
    if (nl == 0) fail(ErrorKind::Internal, "network without layers");
    if (x.rows() != net_.arch().input_dim || y.rows() != width(nl - 1) || y.cols() != n)
        fail(ErrorKind::Internal, "batch shape does not match the network");
    if (n == 0) {
        std::fill(grad, grad + net_.num_params(), 0.0f);
        return 0.0;
    }
    // Results must not depend on where the caller's buffer happens to sit (see network.h).
    float* const out_grad = grad;
    if (reinterpret_cast<std::uintptr_t>(grad) % kGradAlignment != 0) {
        if (aligned_grad_.size() != Eigen::Index(net_.num_params()))
            aligned_grad_.resize(Eigen::Index(net_.num_params()));
        grad = aligned_grad_.data();
    }

    // Grow buffers only when a larger batch arrives.
    Eigen::Index max_inner = 1;
    for (std::size_t l = 0; l < nl; ++l) {
        if (activations_[l].rows() != width(l) || activations_[l].cols() < n) activations_[l].resize(width(l), n);
        if (layers[l].dropout > 0.0f && (masks_[l].rows() != width(l) || masks_[l].cols() < n))
            masks_[l].resize(width(l), n);
        if (l > 0) max_inner = std::max<Eigen::Index>(max_inner, width(l - 1));
    }
    if (delta_.size() < max_inner * n) delta_.resize(max_inner, n);
    const int out_units = int(width(nl - 1));
    if (delta_prev_.size() < Eigen::Index(out_units) * n) delta_prev_.resize(out_units, n);

    auto act = [&](std::size_t l) { return MatrixMap(activations_[l].data(), width(l), n); };
    auto mask = [&](std::size_t l) { return MatrixMap(masks_[l].data(), width(l), n); };

    // Forward.
    for (std::size_t l = 0; l < nl; ++l) {
        MatrixMap a = act(l);
        if (layers[l].kind != LayerKind::Dense) {
            layers::forward(args(l), params, l == 0 ? x.data() : act(l - 1).data(), a.data(), n, true, scratch_[l]);
            activate(layers[l].activation, a);
        } else if (l == 0) {
            dense_forward(layers[l], slices[l], params, x, a);
        } else {
            dense_forward(layers[l], slices[l], params, act(l - 1), a);
        }
        const float rate = layers[l].dropout;
        if (rate >= 1.0f) fail(ErrorKind::InvalidParameter, "dropout rate must be below 1");
        if (rate > 0.0f) {
            MatrixMap m = mask(l);
            DropoutDraw draw(dropout_seed, l, rate);
            const float keep_scale = 1.0f / (1.0f - rate);
            float* ap = a.data();
            float* mp = m.data();
            const Eigen::Index count = a.size();
            if (layers[l].activation == Activation::Softmax) {
                for (Eigen::Index i = 0; i < count; ++i) {
                    mp[i] = ap[i];
                    ap[i] = draw.keep() ? ap[i] * keep_scale : 0.0f;
                }
            } else {
                for (Eigen::Index i = 0; i < count; ++i) mp[i] = draw.keep() ? keep_scale : 0.0f;
                a.array() *= m.array();
            }
        }
    }

    MatrixMap p = act(nl - 1);
    const vocab::LossSpec& spec = loss_spec(loss);
    const ConstMatrixMap cp(p.data(), p.rows(), p.cols());
    // Keras' loss_weights: the weighted loss, and so its gradient, scaled by the weight.
    const double weight = compile ? compile->loss_weight : 1.0;
    // A standardized target (Architecture::target_scaling): the outputs are fit to (y - offset) /
    // scale, so that the gradients are those of a target of mean 0 and spread 1; the loss returned
    // and the metrics are those of the outputs in the target's own units (Network::predict's
    // z * scale + offset) against y.
    const TargetScaling& t = net_.arch().target_scaling;
    const bool scaled = !t.identity();
    if (scaled) {
        if (target_.rows() != y.rows() || target_.cols() < n) target_.resize(y.rows(), n);
        MatrixMap ty(target_.data(), y.rows(), n);
        ty.array() = y.array() - t.offset;
        ty.array() /= t.scale;
        if (own_units_.rows() != y.rows() || own_units_.cols() < n) own_units_.resize(y.rows(), n);
        MatrixMap o(own_units_.data(), y.rows(), n);
        o = cp;
        o.array() *= t.scale;
        o.array() += t.offset;
    }
    const ConstMatrixMap fit_y(scaled ? target_.data() : y.data(), y.rows(), n);
    const ConstMatrixMap own(scaled ? own_units_.data() : p.data(), p.rows(), n);
    const double loss_total = weight * spec.sum(own, y);
    // The outputs become dL/dZ below: their metrics are taken now.
    if (totals && compile && std::isfinite(loss_total))
        add_batch_totals(own, y, loss_total, *compile, *totals, target_units_exponent(net_.arch()));

    // Output dL/dZ (of the mean loss over the batch), in place in the output buffer.
    const Layer& last = layers.back();
    const float inv_n = float(weight) / float(n);  // each gradient is linear in it
    if (spec.fused_gradient && last.dropout == 0.0f && last.activation == spec.fused_with) {
        spec.fused_gradient(p, fit_y, inv_n);
    } else {
        // General path: dL/dp, then the activation.
        MatrixMap g(delta_prev_.data(), out_units, n);
        spec.gradient(cp, fit_y, inv_n, g);
        if (last.dropout > 0.0f) activation_backward(last.activation, last.dropout, g, p, mask(nl - 1));
        else activation_backward(last.activation, 0.0f, g, p, p);
        p = g;
    }

    // Backward: act(l) holds dL/dZ_l from here on. Nothing below the first trained layer needs a
    // gradient (with nothing frozen, only layers without parameters lie below it).
    const std::size_t first = net_.first_trained_layer();
    for (std::size_t l = nl; l-- > 0;) {
        const LayerSlice& s = slices[l];
        MatrixMap dz = act(l);
        const bool last_needed = l == 0 || l <= first;  // the input gradient is not needed
        if (layers[l].kind != LayerKind::Dense) {
            // The input gradient only above the first layer.
            layers::backward(args(l), params, l == 0 ? x.data() : act(l - 1).data(), dz.data(), grad,
                             last_needed ? nullptr : delta_.data(), n, scratch_[l]);
            if (last_needed) break;
        } else {
            if (layers[l].trainable) {
                detail::gemm(false, true, s.units, s.inputs, n, dz.data(), l == 0 ? x.data() : act(l - 1).data(),
                             grad + s.weight_offset);
                if (layers[l].use_bias) VectorMap(grad + s.bias_offset, s.units) = dz.rowwise().sum();
            }
            if (last_needed) break;

            detail::gemm(true, false, s.inputs, n, s.units, params + s.weight_offset, dz.data(), delta_.data());
        }
        MatrixMap g(delta_.data(), width(l - 1), n);
        const Layer& below = layers[l - 1];
        MatrixMap a_below = act(l - 1);
        if (below.dropout > 0.0f) activation_backward(below.activation, below.dropout, g, a_below, mask(l - 1));
        else activation_backward(below.activation, 0.0f, g, a_below, a_below);
        a_below = g;
    }
    // Frozen layers: gradient 0 (what the optimizer skips; kinds other than Dense wrote theirs).
    for (std::size_t l = 0; l < nl; ++l)
        if (!layers[l].trainable) std::fill(grad + slices[l].weight_offset, grad + slices[l].end_offset, 0.0f);
    if (grad != out_grad) std::copy(grad, grad + net_.num_params(), out_grad);
    return loss_total;
}

}  // namespace hopper
