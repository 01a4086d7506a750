// Conv2D: im2col and one GEMM per layer and batch.
//
// The patches of the whole batch go into one matrix P (kh*kw*in_channels x out_positions*n; a
// column is one output position's window in (ky, kx, channel) order, the order of Keras' kernel),
// so that the layer is Z = W P with W the (filters x kh*kw*in_channels) kernel: one large GEMM,
// whose result (filters x positions*n, column-major) is already the HWC output batch. The
// backward pass reuses P for dW = dZ P^T, then overwrites it with W^T dZ and scatters that back
// (col2im) into dX. 1x1 convolutions with stride 1 skip the copy: their input is P.
//
// (Measurements: bench/conv.cpp, in a later commit.)
#include <algorithm>
#include <cstring>

#include "layers.h"

namespace hopper::layers {

namespace {

using Index = Eigen::Index;
using ConstVectorMap = Eigen::Map<const VectorF, Eigen::Unaligned>;
using VectorMap = Eigen::Map<VectorF, Eigen::Unaligned>;

bool pointwise(const Layer& l) {
    return l.kernel_h == 1 && l.kernel_w == 1 && l.stride_h == 1 && l.stride_w == 1;
}

// Copies every window of the n images in x into the columns of `cols` (zeros for padding).
void im2col(const Window& w, const float* x, Index n, float* cols) {
    const Index c = w.channels;
    const Index row = Index(w.k_w) * c;  // one kernel row of a window: contiguous in the image
    const Index k = Index(w.k_h) * row;
    const Index image = Index(w.in_h) * w.in_w * c;
    float* col = cols;
    for (Index j = 0; j < n; ++j) {
        const float* img = x + j * image;
        for (int oy = 0; oy < w.out_h; ++oy) {
            const int y0 = oy * w.s_h - w.pad_top;
            for (int ox = 0; ox < w.out_w; ++ox, col += k) {
                const int x0 = ox * w.s_w - w.pad_left;
                const bool whole_rows = x0 >= 0 && x0 + w.k_w <= w.in_w;
                for (int ky = 0; ky < w.k_h; ++ky) {
                    float* dst = col + ky * row;
                    const int iy = y0 + ky;
                    if (iy < 0 || iy >= w.in_h) {
                        std::fill(dst, dst + row, 0.0f);
                        continue;
                    }
                    const float* line = img + Index(iy) * w.in_w * c;
                    if (whole_rows) {
                        std::memcpy(dst, line + Index(x0) * c, sizeof(float) * std::size_t(row));
                        continue;
                    }
                    for (int kx = 0; kx < w.k_w; ++kx) {
                        const int ix = x0 + kx;
                        if (ix < 0 || ix >= w.in_w)
                            std::fill(dst + kx * c, dst + (kx + 1) * c, 0.0f);
                        else
                            std::memcpy(dst + kx * c, line + Index(ix) * c, sizeof(float) * std::size_t(c));
                    }
                }
            }
        }
    }
}

// The adjoint of im2col: dx = 0, then every column's values are added back where they came from.
void col2im(const Window& w, const float* cols, Index n, float* dx) {
    const Index c = w.channels;
    const Index row = Index(w.k_w) * c;
    const Index k = Index(w.k_h) * row;
    const Index image = Index(w.in_h) * w.in_w * c;
    std::fill(dx, dx + image * n, 0.0f);
    const float* col = cols;
    for (Index j = 0; j < n; ++j) {
        float* img = dx + j * image;
        for (int oy = 0; oy < w.out_h; ++oy) {
            const int y0 = oy * w.s_h - w.pad_top;
            for (int ox = 0; ox < w.out_w; ++ox, col += k) {
                const int x0 = ox * w.s_w - w.pad_left;
                for (int ky = 0; ky < w.k_h; ++ky) {
                    const int iy = y0 + ky;
                    if (iy < 0 || iy >= w.in_h) continue;
                    const float* src = col + ky * row;
                    float* line = img + Index(iy) * w.in_w * c;
                    for (int kx = 0; kx < w.k_w; ++kx) {
                        const int ix = x0 + kx;
                        if (ix < 0 || ix >= w.in_w) continue;
                        float* d = line + Index(ix) * c;
                        const float* s = src + kx * c;
                        for (Index ch = 0; ch < c; ++ch) d[ch] += s[ch];
                    }
                }
            }
        }
    }
}

}  // namespace

void conv_forward(const LayerArgs& a, const float* params, const float* x, float* z, Index n,
                  LayerScratch& s) {
    const Layer& l = a.layer;
    const Window w = window_of(l, a.in);
    const Index k = a.slice.inputs, f = a.slice.units;
    const Index positions = Index(w.out_h) * w.out_w * n;
    ConstMatrixMap kernel(params + a.slice.weight_offset, f, k);
    MatrixMap out(z, f, positions);
    if (pointwise(l)) {
        out.noalias() = kernel * ConstMatrixMap(x, k, positions);
    } else {
        if (s.columns.size() < k * positions) s.columns.resize(k, positions);
        im2col(w, x, n, s.columns.data());
        out.noalias() = kernel * MatrixMap(s.columns.data(), k, positions);
    }
    if (l.use_bias) out.colwise() += ConstVectorMap(params + a.slice.bias_offset, f);
}

void conv_backward(const LayerArgs& a, const float* params, const float* x, const float* dz,
                   float* grad, float* dx, Index n, LayerScratch& s) {
    const Layer& l = a.layer;
    const Window w = window_of(l, a.in);
    const Index k = a.slice.inputs, f = a.slice.units;
    const Index positions = Index(w.out_h) * w.out_w * n;
    ConstMatrixMap d(dz, f, positions);
    MatrixMap gw(grad + a.slice.weight_offset, f, k);
    const bool direct = pointwise(l);
    if (direct)
        gw.noalias() = d * ConstMatrixMap(x, k, positions).transpose();
    else
        gw.noalias() = d * MatrixMap(s.columns.data(), k, positions).transpose();
    if (l.use_bias) VectorMap(grad + a.slice.bias_offset, f) = d.rowwise().sum();
    if (!dx) return;
    ConstMatrixMap kernel(params + a.slice.weight_offset, f, k);
    if (direct) {
        MatrixMap(dx, k, positions).noalias() = kernel.transpose() * d;
    } else {
        MatrixMap cols(s.columns.data(), k, positions);
        cols.noalias() = kernel.transpose() * d;
        col2im(w, cols.data(), n, dx);
    }
}

}  // namespace hopper::layers
