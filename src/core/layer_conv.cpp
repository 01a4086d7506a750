// Conv2D: im2col and GEMMs over chunks of the batch.
//
// The patches of a few images go into one matrix P (kh*kw*in_channels x out_positions*images; a
// column is one output position's window in (ky, kx, channel) order, the order of Keras' kernel),
// so that the layer is Z = W P with W the (filters x kh*kw*in_channels) kernel, and Z (filters x
// positions*images, column-major) is already those images' HWC output. The backward pass builds
// each chunk's P again for dW += dZ P^T, then overwrites it with W^T dZ and scatters that back
// (col2im) into dX. A chunk holds as many images as fit in kPatchChunkFloats (at least one), so P
// stays in the L2 cache while the GEMMs read it. 1x1 convolutions with stride 1 skip the copy:
// their input is P.
//
// Measured with bench/conv.cpp (hopper_conv_bench) on the Keras simple convnet, batch 128, one
// thread, forward + backward of each Conv2D layer, AVX-512, medians of 21 runs on a shared
// 2-core machine (ms; a second and third run agree within about 10%):
//                        chunks (this)  batch-wide P  per image  direct loops  GEMMs alone
//   conv1 28x28x1 -> 32        6.7           8.2          5.8         19.2       2.3 - 2.9
//   conv2 13x13x32 -> 64      22.7          29.6         22.2        175        20.3 - 27.2
// (conv2 includes dX; GEMMs alone: on ready matrices in the chunks' / the batch-wide shapes.)
// A whole training step of the network takes 32.1 ms, 57 GFLOP/s of its 1.83 GFLOP; its matrix
// products alone, in their faster arrangement, 22.9 ms (80 GFLOP/s): that is the floor of any
// im2col method, and the rest is patch copies, pooling, activations and the loss. The batch-wide
// P (17.8 MB for conv2, kept from forward to backward) was the first version (42.6 ms per step):
// its GEMMs are bound by memory (dW's inner dimension is positions*batch = 15,488), so they alone
// took longer than the whole chunked layer, copies included; it also needed kh*kw*in*positions
// floats per row, where the chunks need 256 KB per layer. Per image and chunks are the same for
// conv2 (one image per chunk); for small layers chunks make fewer, larger GEMMs. Direct loops do
// not reuse the kernel from registers the way a GEMM kernel does.
#include <algorithm>
#include <cstring>
#include <limits>

#include "gemm.h"
#include "hopper/error.h"
#include "layers.h"

namespace hopper::layers {

namespace {

using Index = Eigen::Index;
using ConstVectorMap = Eigen::Map<const VectorF, Eigen::Unaligned>;
using VectorMap = Eigen::Map<VectorF, Eigen::Unaligned>;

// Images per chunk: as many whole images' patches as fit in kPatchChunkFloats, at least one.
Index images_per_chunk(Index patch_floats_per_image, Index n) {
    return std::max<Index>(1,
                           std::min<Index>(n, Index(kPatchChunkFloats) / std::max<Index>(1, patch_floats_per_image)));
}

bool pointwise(const Layer& l) { return l.kernel_h == 1 && l.kernel_w == 1 && l.stride_h == 1 && l.stride_w == 1; }

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
                        if (ix < 0 || ix >= w.in_w) std::fill(dst + kx * c, dst + (kx + 1) * c, 0.0f);
                        else std::memcpy(dst + kx * c, line + Index(ix) * c, sizeof(float) * std::size_t(c));
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

void conv_forward(const LayerArgs& a, const float* params, const float* x, float* z, Index n, LayerScratch& s) {
    const Layer& l = a.layer;
    const Window w = window_of(l, a.in);
    const Index k = a.slice.inputs, f = a.slice.units;
    const Index positions = Index(w.out_h) * w.out_w;
    ConstMatrixMap kernel(params + a.slice.weight_offset, f, k);
    MatrixMap out(z, f, positions * n);
    const ConstVectorMap bias(params + a.slice.bias_offset, l.use_bias ? f : 0);
    if (pointwise(l)) {
        detail::gemm(false, false, f, positions * n, k, kernel.data(), x, z);
        if (l.use_bias) out.colwise() += bias;
        return;
    }
    const Index in_size = Index(a.in.size()), chunk = images_per_chunk(k * positions, n);
    if (s.columns.size() < k * positions * chunk) s.columns.resize(k, positions * chunk);
    for (Index j = 0; j < n; j += chunk) {
        const Index m = std::min(chunk, n - j);
        im2col(w, x + j * in_size, m, s.columns.data());
        MatrixMap zj(z + j * positions * f, f, positions * m);
        detail::gemm(false, false, f, positions * m, k, kernel.data(), s.columns.data(), zj.data());
        if (l.use_bias) zj.colwise() += bias;  // while the chunk's output is in cache
    }
}

void conv_backward(const LayerArgs& a, const float* params, const float* x, const float* dz, float* grad, float* dx,
                   Index n, LayerScratch& s) {
    const Layer& l = a.layer;
    const Window w = window_of(l, a.in);
    const Index k = a.slice.inputs, f = a.slice.units;
    const Index positions = Index(w.out_h) * w.out_w;
    ConstMatrixMap d(dz, f, positions * n);  // the pointwise case's whole batch
    MatrixMap gw(grad + a.slice.weight_offset, f, k);
    ConstMatrixMap kernel(params + a.slice.weight_offset, f, k);
    VectorMap gb(grad + a.slice.bias_offset, l.use_bias ? f : 0);
    if (pointwise(l)) {
        if (l.use_bias) gb = d.rowwise().sum();
        detail::gemm(false, true, f, k, positions * n, dz, x, gw.data());
        if (dx) detail::gemm(true, false, k, positions * n, f, kernel.data(), dz, dx);
        return;
    }
    const Index in_size = Index(a.in.size()), chunk = images_per_chunk(k * positions, n);
    if (s.columns.size() < k * positions * chunk) s.columns.resize(k, positions * chunk);
    for (Index j = 0; j < n; j += chunk) {
        const Index m = std::min(chunk, n - j);
        MatrixMap cols(s.columns.data(), k, positions * m);
        ConstMatrixMap dj(dz + j * positions * f, f, positions * m);
        im2col(w, x + j * in_size, m, cols.data());
        detail::gemm(false, true, f, k, positions * m, dj.data(), cols.data(), gw.data(), /*accumulate=*/j > 0);
        if (l.use_bias) {
            if (j == 0) gb = dj.rowwise().sum();
            else gb += dj.rowwise().sum();
        }
        if (!dx) continue;
        detail::gemm(true, false, k, positions * m, f, kernel.data(), dj.data(), cols.data());
        col2im(w, cols.data(), m, dx + j * in_size);
    }
}

namespace {

class Conv2DType : public LayerType {
public:
    Conv2DType() : LayerType(LayerKind::Conv2D) {}
    TensorShape output_shape(const Layer& l, const TensorShape& in) const override {
        return window_output_shape(l, in, l.filters);
    }
    void check_input(const Layer& l, const TensorShape& in, const std::string& label) const override {
        require_image(l, in, label);
        check_window(l, in, label, "kernel_size");
    }
    // Kernel [kernel_h * kernel_w * channels, filters], then the filters' biases.
    uint64_t param_count(const Layer& l, const TensorShape& in) const override {
        const uint64_t k = mul_sat(mul_sat(uint64_t(std::max(l.kernel_h, 0)), uint64_t(std::max(l.kernel_w, 0))),
                                   uint64_t(std::max(in.channels, 0)));
        const uint64_t f = uint64_t(std::max(l.filters, 0));
        return add_sat(mul_sat(k, f), l.use_bias ? f : 0);
    }
    LayerSlice slice(const Layer& l, const TensorShape& in, std::size_t offset) const override {
        const int64_t k = int64_t(l.kernel_h) * l.kernel_w * in.channels;
        if (k > std::numeric_limits<int>::max()) fail(ErrorKind::Internal, "network layer with an invalid size");
        return kernel_slice(l, offset, int(k), l.filters);
    }
    // Keras' fans: a kernel (kh, kw, in, filters) has fan_in kh*kw*in (= s.inputs) and fan_out
    // kh*kw*filters.
    double kernel_fan_out(const Layer& l, const LayerSlice&) const override {
        return double(l.kernel_h) * double(l.kernel_w) * double(l.filters);
    }
    // 1x1 convolutions with stride 1 read their input directly.
    uint64_t columns_per_row(const Layer& l, const TensorShape& in) const override {
        if (l.kernel_h == 1 && l.kernel_w == 1 && l.stride_h == 1 && l.stride_w == 1) return 0;
        const TensorShape out = output_shape(l, in);
        const uint64_t k = mul_sat(mul_sat(uint64_t(l.kernel_h), uint64_t(l.kernel_w)), uint64_t(in.channels));
        return mul_sat(k, mul_sat(uint64_t(out.height), uint64_t(out.width)));
    }
    std::string shape_token(const Layer& l) const override {
        return window_token("conv" + std::to_string(l.kernel_h) + "x" + std::to_string(l.kernel_w) + "x" +
                                std::to_string(l.filters),
                            l, false);
    }
    void forward(const LayerArgs& a, const float* params, const float* x, float* z, Index n, bool,
                 LayerScratch& s) const override {
        conv_forward(a, params, x, z, n, s);
    }
    void backward(const LayerArgs& a, const float* params, const float* x, const float* dz, float* grad, float* dx,
                  Index n, LayerScratch& s) const override {
        conv_backward(a, params, x, dz, grad, dx, n, s);
    }
};

}  // namespace

const LayerType& conv2d_layer() {
    static const Conv2DType t;
    return t;
}

}  // namespace hopper::layers
