// An independent double-precision forward pass of every layer kind, written from the definitions
// (direct convolution loops, windows clipped to the image) rather than from hopper's algorithms,
// for the CNN tests: central finite differences of its loss check hopper's float gradients, and
// its outputs check hopper's forward pass.
#pragma once

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>
#include <Eigen/Core>

#include "hopper/config.h"

namespace hopper::reference {

using MatrixD = Eigen::MatrixXd;

inline double activation(Activation a, double z) {
    switch (a) {
        case Activation::Linear: return z;
        case Activation::Relu: return z > 0 ? z : 0;
        case Activation::Tanh: return std::tanh(z);
        case Activation::Sigmoid: return 1.0 / (1.0 + std::exp(-z));
        case Activation::Softmax: break;
    }
    return 0;
}

// Keras' "same" padding before the first row/column: half of what is needed, rounded down.
inline int pad_before(int in, int k, int s, Padding p, int out) {
    if (p == Padding::Valid) return 0;
    return std::max((out - 1) * s + k - in, 0) / 2;
}

inline int out_len(int in, int k, int s, Padding p) {
    return p == Padding::Same ? (in + s - 1) / s : (in >= k ? (in - k) / s + 1 : 0);
}

// How close the forward pass came to a point where the loss is not differentiable (a ReLU at 0,
// two candidates for a maximum): finite differences are meaningless there.
struct Kinks {
    double min_relu = 1e300;     // smallest |z| of a ReLU
    double min_max_gap = 1e300;  // smallest gap between the two largest values of a pool window
};

// Forward pass over x (input_dim x n) with parameters p in hopper's layout. Batch normalization
// uses batch statistics when `training`, else the moving statistics in p.
inline MatrixD forward(const Architecture& arch, const std::vector<double>& p, const MatrixD& x, bool training,
                       Kinks* kinks = nullptr) {
    const Eigen::Index n = x.cols();
    MatrixD a = x;
    TensorShape in = arch.input_shape();
    std::size_t off = 0;
    for (const Layer& l : arch.layers) {
        const int H = in.height, W = in.width, C = in.channels;
        auto at = [&](const MatrixD& m, int y, int xx, int c, Eigen::Index j) {
            return m((Eigen::Index(y) * W + xx) * C + c, j);
        };
        MatrixD z;
        TensorShape out;
        switch (l.kind) {
            case LayerKind::Dense: {
                const int I = int(in.size());
                z = MatrixD::Zero(l.units, n);
                for (Eigen::Index j = 0; j < n; ++j)
                    for (int u = 0; u < l.units; ++u) {
                        double s = 0;
                        for (int i = 0; i < I; ++i) s += p[off + std::size_t(i) * l.units + u] * a(i, j);
                        z(u, j) = s;
                    }
                off += std::size_t(I) * l.units;
                if (l.use_bias) {
                    for (int u = 0; u < l.units; ++u) z.row(u).array() += p[off + u];
                    off += l.units;
                }
                out.channels = l.units;
                break;
            }
            case LayerKind::Conv2D: {
                const int OH = out_len(H, l.kernel_h, l.stride_h, l.padding);
                const int OW = out_len(W, l.kernel_w, l.stride_w, l.padding);
                const int pt = pad_before(H, l.kernel_h, l.stride_h, l.padding, OH);
                const int pl = pad_before(W, l.kernel_w, l.stride_w, l.padding, OW);
                const int F = l.filters;
                z = MatrixD::Zero(Eigen::Index(OH) * OW * F, n);
                // Kernel (kh, kw, C, F) in C order: index ((ky * kw + kx) * C + c) * F + f.
                auto w = [&](int ky, int kx, int c, int f) {
                    return p[off + ((std::size_t(ky) * l.kernel_w + kx) * C + c) * F + f];
                };
                const std::size_t bias = off + std::size_t(l.kernel_h) * l.kernel_w * C * F;
                for (Eigen::Index j = 0; j < n; ++j)
                    for (int oy = 0; oy < OH; ++oy)
                        for (int ox = 0; ox < OW; ++ox)
                            for (int f = 0; f < F; ++f) {
                                double s = l.use_bias ? p[bias + f] : 0.0;
                                for (int ky = 0; ky < l.kernel_h; ++ky)
                                    for (int kx = 0; kx < l.kernel_w; ++kx) {
                                        const int iy = oy * l.stride_h - pt + ky, ix = ox * l.stride_w - pl + kx;
                                        if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                                        for (int c = 0; c < C; ++c) s += w(ky, kx, c, f) * at(a, iy, ix, c, j);
                                    }
                                z((Eigen::Index(oy) * OW + ox) * F + f, j) = s;
                            }
                off = bias + (l.use_bias ? F : 0);
                out = TensorShape{OH, OW, F, false};
                break;
            }
            case LayerKind::MaxPooling2D:
            case LayerKind::AveragePooling2D: {
                const int OH = out_len(H, l.kernel_h, l.stride_h, l.padding);
                const int OW = out_len(W, l.kernel_w, l.stride_w, l.padding);
                const int pt = pad_before(H, l.kernel_h, l.stride_h, l.padding, OH);
                const int pl = pad_before(W, l.kernel_w, l.stride_w, l.padding, OW);
                z = MatrixD::Zero(Eigen::Index(OH) * OW * C, n);
                for (Eigen::Index j = 0; j < n; ++j)
                    for (int oy = 0; oy < OH; ++oy)
                        for (int ox = 0; ox < OW; ++ox)
                            for (int c = 0; c < C; ++c) {
                                std::vector<double> vals;
                                for (int ky = 0; ky < l.kernel_h; ++ky)
                                    for (int kx = 0; kx < l.kernel_w; ++kx) {
                                        const int iy = oy * l.stride_h - pt + ky, ix = ox * l.stride_w - pl + kx;
                                        if (iy >= 0 && iy < H && ix >= 0 && ix < W) vals.push_back(at(a, iy, ix, c, j));
                                    }
                                double v = 0;
                                if (l.kind == LayerKind::MaxPooling2D) {
                                    std::sort(vals.begin(), vals.end());
                                    v = vals.back();
                                    if (kinks && vals.size() > 1)
                                        kinks->min_max_gap =
                                            std::min(kinks->min_max_gap, vals.back() - vals[vals.size() - 2]);
                                } else {
                                    for (double e : vals) v += e;
                                    v /= double(vals.size());
                                }
                                z((Eigen::Index(oy) * OW + ox) * C + c, j) = v;
                            }
                out = TensorShape{OH, OW, C, false};
                break;
            }
            case LayerKind::GlobalAveragePooling2D:
                z = MatrixD::Zero(C, n);
                for (Eigen::Index j = 0; j < n; ++j)
                    for (int c = 0; c < C; ++c) {
                        double s = 0;
                        for (int y = 0; y < H; ++y)
                            for (int xx = 0; xx < W; ++xx) s += at(a, y, xx, c, j);
                        z(c, j) = s / double(H * W);
                    }
                out.channels = C;
                break;
            case LayerKind::Flatten:
                z = a;  // HWC order is Keras' flatten order
                out.channels = int(in.size());
                break;
            case LayerKind::Embedding:
                // Embeddings have their own checks (test_embedding.cpp); this reference does not model them.
                throw std::invalid_argument("reference_network: embedding layers are not modelled");
            case LayerKind::BatchNormalization: {
                const std::size_t gamma = off, beta = off + (l.scale ? C : 0);
                const std::size_t stats = beta + (l.center ? C : 0);
                z = a;
                const Eigen::Index m = Eigen::Index(H) * W * n;
                for (int c = 0; c < C; ++c) {
                    double mean = p[stats + c], var = p[stats + C + c];
                    if (training) {
                        mean = var = 0;
                        for (Eigen::Index j = 0; j < n; ++j)
                            for (int q = 0; q < H * W; ++q) mean += a(Eigen::Index(q) * C + c, j);
                        mean /= double(m);
                        for (Eigen::Index j = 0; j < n; ++j)
                            for (int q = 0; q < H * W; ++q) {
                                const double d = a(Eigen::Index(q) * C + c, j) - mean;
                                var += d * d;
                            }
                        var /= double(m);
                    }
                    const double g = l.scale ? p[gamma + c] : 1.0, b = l.center ? p[beta + c] : 0.0;
                    for (Eigen::Index j = 0; j < n; ++j)
                        for (int q = 0; q < H * W; ++q) {
                            double& v = z(Eigen::Index(q) * C + c, j);
                            v = (v - mean) / std::sqrt(var + double(l.epsilon)) * g + b;
                        }
                }
                off = stats + 2 * C;
                out = in;
                break;
            }
        }
        if (l.activation == Activation::Softmax) {
            for (Eigen::Index j = 0; j < z.cols(); ++j) {
                const double m = z.col(j).maxCoeff();
                z.col(j) = (z.col(j).array() - m).exp().matrix();
                z.col(j) /= z.col(j).sum();
            }
        } else {
            if (l.activation == Activation::Relu && kinks)
                kinks->min_relu = std::min(kinks->min_relu, z.cwiseAbs().minCoeff());
            z = z.unaryExpr([&](double v) { return activation(l.activation, v); });
        }
        a = z;
        in = out;
    }
    return a;
}

// Mean loss over the batch, hopper's definitions (probabilities clipped inside logs).
inline double mean_loss(Loss loss, const MatrixD& p, const MatrixD& y) {
    double total = 0;
    const double k = double(p.rows());
    for (Eigen::Index j = 0; j < p.cols(); ++j)
        for (Eigen::Index i = 0; i < p.rows(); ++i) {
            const double q = std::min(std::max(p(i, j), 1e-7), 1 - 1e-7), t = y(i, j);
            switch (loss) {
                case Loss::SoftmaxCrossEntropy: total -= t * std::log(q); break;
                case Loss::BinaryCrossEntropy: total -= (t * std::log(q) + (1 - t) * std::log(1 - q)) / k; break;
                case Loss::MeanSquaredError: total += (p(i, j) - t) * (p(i, j) - t) / k; break;
            }
        }
    return total / double(p.cols());
}

}  // namespace hopper::reference
