// BatchNormalization over the last axis (channels of an image, features of a flat vector), as
// Keras computes it: y = (x - mean) / sqrt(var + epsilon) * gamma + beta, with the mean and the
// biased variance of the batch (over samples and positions) while training and the moving
// statistics otherwise. After each training step the moving statistics become
// moving * momentum + batch * (1 - momentum) (Keras 3, and tf.keras 2 once its fused kernel's
// Bessel correction is removed again). A frozen layer (trainable false) runs in inference mode
// while training too, and its moving statistics stay as they are (Keras). Batch statistics are summed in double: a
// channel of a 128-image batch of 26x26 maps has 86,528 values.
#include <algorithm>
#include <cmath>

#include "layers.h"

namespace hopper::layers {

using Index = Eigen::Index;

namespace {

// Parameter and scratch layout of one layer with c channels.
struct Bn {
    Index c;
    const float* gamma;  // null without scale
    const float* beta;   // null without center
    const float* moving_mean;
    const float* moving_var;
};

Bn bn_of(const LayerArgs& a, const float* params) {
    const Index c = a.in.channels;
    const LayerSlice& s = a.slice;
    return Bn{c, a.layer.scale ? params + s.weight_offset : nullptr, a.layer.center ? params + s.bias_offset : nullptr,
              params + s.stats_offset, params + s.stats_offset + c};
}

}  // namespace

// The scratch of a layer with c channels: stats holds 7 segments of c floats (batch mean,
// 1/sqrt(var + eps), new moving mean, new moving variance, then scale, shift of the forward pass,
// which the backward pass reuses for its per-channel factors), sums 2 segments of c doubles. They
// are sized once, so training allocates nothing once warm.
enum Segment { kMean, kInvStd, kNewMean, kNewVar, kScale, kShift, kSegments };

void batchnorm_forward(const LayerArgs& a, const float* params, const float* x, float* z, Index n, bool training,
                       LayerScratch& s) {
    const Bn bn = bn_of(a, params);
    const Index c = bn.c, m = Index(a.in.height) * a.in.width * n;  // values per channel
    ConstMatrixMap in(x, c, m);
    MatrixMap out(z, c, m);
    if (s.stats.size() != kSegments * c + c) s.stats.resize(kSegments * c + c);
    auto seg = [&](int k) { return s.stats.segment(k * c, c); };
    auto scale = seg(kScale), shift = seg(kShift);  // y = x * scale + shift
    // Keras: a frozen BatchNormalization runs in inference mode while training too.
    if (training && a.layer.trainable) {
        if (s.sums.size() != 2 * c) s.sums.resize(2 * c);
        auto mean = s.sums.head(c), var = s.sums.tail(c);
        mean.setZero();
        for (Index j = 0; j < m; ++j) mean += in.col(j).cast<double>();
        mean /= double(m);
        var.setZero();
        for (Index j = 0; j < m; ++j) var += (in.col(j).cast<double>() - mean).array().square().matrix();
        var /= double(m);
        // Keras computes the update in float32 with momentum and 1 - momentum rounded to float.
        const float mom = float(a.layer.momentum), rest = float(1.0 - a.layer.momentum);
        const double eps = double(float(a.layer.epsilon));
        for (Index i = 0; i < c; ++i) {
            const float inv_std = float(1.0 / std::sqrt(var(i) + eps));
            seg(kMean)(i) = float(mean(i));
            seg(kInvStd)(i) = inv_std;
            seg(kNewMean)(i) = bn.moving_mean[i] * mom + float(mean(i)) * rest;
            seg(kNewVar)(i) = bn.moving_var[i] * mom + float(var(i)) * rest;
            scale(i) = inv_std * (bn.gamma ? bn.gamma[i] : 1.0f);
            shift(i) = (bn.beta ? bn.beta[i] : 0.0f) - seg(kMean)(i) * scale(i);
        }
    } else {
        for (Index i = 0; i < c; ++i) {
            scale(i) = float(1.0 / std::sqrt(double(bn.moving_var[i]) + double(float(a.layer.epsilon)))) *
                       (bn.gamma ? bn.gamma[i] : 1.0f);
            shift(i) = (bn.beta ? bn.beta[i] : 0.0f) - bn.moving_mean[i] * scale(i);
        }
    }
    out = (in.array().colwise() * scale.array()).colwise() + shift.array();
}

// With xh = (x - mean) * inv_std and y = gamma * xh + beta over the m values of a channel:
// dgamma = sum(dy * xh), dbeta = sum(dy), dx = gamma * inv_std * (dy - mean(dy) - xh * mean(dy * xh)).
void batchnorm_backward(const LayerArgs& a, const float* params, const float* x, const float* dz, float* grad,
                        float* dx, Index n, LayerScratch& s) {
    const Bn bn = bn_of(a, params);
    const Index c = bn.c, m = Index(a.in.height) * a.in.width * n;
    ConstMatrixMap in(x, c, m), d(dz, c, m);
    auto seg = [&](int k) { return s.stats.segment(k * c, c); };
    const LayerSlice& sl = a.slice;
    if (!a.layer.trainable) {
        // Inference mode (frozen): y = x * scale + shift with constants, so dx = dy * scale.
        std::fill(grad + sl.weight_offset, grad + sl.end_offset, 0.0f);
        if (dx) MatrixMap(dx, c, m) = (d.array().colwise() * seg(kScale).array()).matrix();
        return;
    }
    const auto mean = seg(kMean).array();
    const auto inv_std = seg(kInvStd).array();
    auto sum_d = s.sums.head(c), sum_dxh = s.sums.tail(c);
    sum_d.setZero();
    sum_dxh.setZero();
    for (Index j = 0; j < m; ++j) {
        sum_d += d.col(j).cast<double>();
        sum_dxh += (d.col(j).array().cast<double>() * ((in.col(j).array() - mean) * inv_std).cast<double>()).matrix();
    }
    if (a.layer.scale)
        for (Index i = 0; i < c; ++i) grad[sl.weight_offset + i] = float(sum_dxh(i));
    if (a.layer.center)
        for (Index i = 0; i < c; ++i) grad[sl.bias_offset + i] = float(sum_d(i));
    std::fill(grad + sl.stats_offset, grad + sl.end_offset, 0.0f);  // not trained
    if (!dx) return;
    // scale (gamma * inv_std) from the forward pass; shift's segment and the spare one take the means.
    auto k = seg(kScale), mean_d = seg(kShift), mean_dxh = seg(kSegments);
    for (Index i = 0; i < c; ++i) {
        mean_d(i) = float(sum_d(i) / double(m));
        mean_dxh(i) = float(sum_dxh(i) / double(m));
    }
    MatrixMap out(dx, c, m);
    for (Index j = 0; j < m; ++j)
        out.col(j) =
            (k.array() * (d.col(j).array() - mean_d.array() - (in.col(j).array() - mean) * inv_std * mean_dxh.array()))
                .matrix();
}

void batchnorm_store(const LayerArgs& a, float* params, const LayerScratch& s) {
    const Index c = a.in.channels;
    // Nothing before a training forward (the sums are sized by the first one).
    if (s.sums.size() != 2 * c || s.stats.size() != kSegments * c + c) return;
    std::copy(s.stats.data() + kNewMean * c, s.stats.data() + (kNewVar + 1) * c, params + a.slice.stats_offset);
}

namespace {

// Parameters per channel: gamma (if scale), beta (if center), moving mean and variance.
class BatchNormalizationType : public LayerType {
public:
    BatchNormalizationType() : LayerType(LayerKind::BatchNormalization) {}
    TensorShape output_shape(const Layer&, const TensorShape& in) const override { return in; }
    uint64_t param_count(const Layer& l, const TensorShape& in) const override {
        return uint64_t(std::max(in.channels, 0)) * uint64_t(2 + (l.scale ? 1 : 0) + (l.center ? 1 : 0));
    }
    LayerSlice slice(const Layer& l, const TensorShape& in, std::size_t offset) const override {
        const std::size_t c = std::size_t(in.channels);
        LayerSlice s;
        s.inputs = s.units = 0;
        s.weight_offset = offset;
        s.bias_offset = offset + (l.scale ? c : 0);
        s.stats_offset = s.bias_offset + (l.center ? c : 0);
        s.end_offset = s.stats_offset + 2 * c;
        return s;
    }
    std::string shape_token(const Layer&) const override { return "bn"; }
    void initialize(const LayerArgs& a, float* params, uint64_t) const override {
        const Layer& l = a.layer;
        const LayerSlice& s = a.slice;
        const int c = a.in.channels;
        if (l.scale) std::fill(params + s.weight_offset, params + s.weight_offset + c, 1.0f);
        if (l.center) std::fill(params + s.bias_offset, params + s.bias_offset + c, 0.0f);
        std::fill(params + s.stats_offset, params + s.stats_offset + c, 0.0f);
        std::fill(params + s.stats_offset + c, params + s.stats_offset + 2 * c, 1.0f);
    }
    void forward(const LayerArgs& a, const float* params, const float* x, float* z, Index n, bool training,
                 LayerScratch& s) const override {
        batchnorm_forward(a, params, x, z, n, training, s);
    }
    void backward(const LayerArgs& a, const float* params, const float* x, const float* dz, float* grad, float* dx,
                  Index n, LayerScratch& s) const override {
        batchnorm_backward(a, params, x, dz, grad, dx, n, s);
    }
    void store_moving_statistics(const LayerArgs& a, float* params, const LayerScratch& s) const override {
        batchnorm_store(a, params, s);
    }
};

}  // namespace

const LayerType& batch_normalization_layer() {
    static const BatchNormalizationType t;
    return t;
}

}  // namespace hopper::layers
