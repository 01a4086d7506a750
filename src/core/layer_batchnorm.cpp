// BatchNormalization over the last axis (channels of an image, features of a flat vector), as
// Keras computes it: y = (x - mean) / sqrt(var + epsilon) * gamma + beta, with the mean and the
// biased variance of the batch (over samples and positions) while training and the moving
// statistics otherwise. After each training step the moving statistics become
// moving * momentum + batch * (1 - momentum) (Keras 3, and tf.keras 2 once its fused kernel's
// Bessel correction is removed again). Batch statistics are summed in double: a channel of a
// 128-image batch of 26x26 maps has 86,528 values.
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
    return Bn{c, a.layer.scale ? params + s.weight_offset : nullptr,
              a.layer.center ? params + s.bias_offset : nullptr, params + s.stats_offset,
              params + s.stats_offset + c};
}

}  // namespace

void batchnorm_forward(const LayerArgs& a, const float* params, const float* x, float* z, Index n,
                       bool training, LayerScratch& s) {
    const Bn bn = bn_of(a, params);
    const Index c = bn.c, m = Index(a.in.height) * a.in.width * n;  // values per channel
    ConstMatrixMap in(x, c, m);
    MatrixMap out(z, c, m);
    VectorF scale(c), shift(c);  // y = x * scale + shift
    if (training) {
        if (s.stats.size() != 4 * c) s.stats.resize(4 * c);
        Eigen::VectorXd sum = Eigen::VectorXd::Zero(c), sq = Eigen::VectorXd::Zero(c);
        for (Index j = 0; j < m; ++j) sum += in.col(j).cast<double>();
        const Eigen::VectorXd mean = sum / double(m);
        for (Index j = 0; j < m; ++j) sq += (in.col(j).cast<double>() - mean).array().square().matrix();
        const Eigen::VectorXd var = sq / double(m);
        // Keras computes the update in float32 with momentum and 1 - momentum rounded to float.
        const float mom = float(a.layer.momentum), rest = float(1.0 - a.layer.momentum);
        const double eps = double(float(a.layer.epsilon));
        for (Index i = 0; i < c; ++i) {
            const float inv_std = float(1.0 / std::sqrt(var(i) + eps));
            s.stats(i) = float(mean(i));
            s.stats(c + i) = inv_std;
            s.stats(2 * c + i) = bn.moving_mean[i] * mom + float(mean(i)) * rest;
            s.stats(3 * c + i) = bn.moving_var[i] * mom + float(var(i)) * rest;
            scale(i) = inv_std * (bn.gamma ? bn.gamma[i] : 1.0f);
            shift(i) = (bn.beta ? bn.beta[i] : 0.0f) - s.stats(i) * scale(i);
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
void batchnorm_backward(const LayerArgs& a, const float* params, const float* x, const float* dz,
                        float* grad, float* dx, Index n, const LayerScratch& s) {
    const Bn bn = bn_of(a, params);
    const Index c = bn.c, m = Index(a.in.height) * a.in.width * n;
    ConstMatrixMap in(x, c, m), d(dz, c, m);
    const auto mean = s.stats.head(c).array();
    const auto inv_std = s.stats.segment(c, c).array();
    Eigen::VectorXd sum_d = Eigen::VectorXd::Zero(c), sum_dxh = Eigen::VectorXd::Zero(c);
    for (Index j = 0; j < m; ++j) {
        sum_d += d.col(j).cast<double>();
        sum_dxh += (d.col(j).array().cast<double>() *
                    ((in.col(j).array() - mean) * inv_std).cast<double>())
                       .matrix();
    }
    const LayerSlice& sl = a.slice;
    if (a.layer.scale)
        for (Index i = 0; i < c; ++i) grad[sl.weight_offset + i] = float(sum_dxh(i));
    if (a.layer.center)
        for (Index i = 0; i < c; ++i) grad[sl.bias_offset + i] = float(sum_d(i));
    std::fill(grad + sl.stats_offset, grad + sl.end_offset, 0.0f);  // not trained
    if (!dx) return;
    VectorF k(c), mean_d(c), mean_dxh(c);
    for (Index i = 0; i < c; ++i) {
        k(i) = (bn.gamma ? bn.gamma[i] : 1.0f) * inv_std(i);
        mean_d(i) = float(sum_d(i) / double(m));
        mean_dxh(i) = float(sum_dxh(i) / double(m));
    }
    MatrixMap out(dx, c, m);
    for (Index j = 0; j < m; ++j)
        out.col(j) = (k.array() * (d.col(j).array() - mean_d.array() -
                                   (in.col(j).array() - mean) * inv_std * mean_dxh.array()))
                         .matrix();
}

void batchnorm_store(const LayerArgs& a, float* params, const LayerScratch& s) {
    const Index c = a.in.channels;
    if (s.stats.size() != 4 * c) return;  // no training forward yet
    std::copy(s.stats.data() + 2 * c, s.stats.data() + 4 * c, params + a.slice.stats_offset);
}

}  // namespace hopper::layers
