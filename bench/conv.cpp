// hopper_conv_bench: how the Conv2D layer computes, measured on the Keras "simple convnet"
// (28x28x1 -> Conv2D 32 3x3 relu -> MaxPooling 2 -> Conv2D 64 3x3 relu -> MaxPooling 2 -> Flatten
// -> Dropout 0.5 -> Dense 10 softmax) at batch 128, one thread (the core's Eigen is built with
// EIGEN_DONT_PARALLELIZE).
//
// For each of the two Conv2D layers, forward and backward (kernel and bias gradients; the input
// gradient for the second layer only, as in training), it times:
//   chunks       hopper's layer (src/core/layer_conv.cpp): im2col and GEMMs over chunks of images
//                whose patches fit in 256 KB, patches built again for the backward pass
//   batch-wide   im2col of the whole batch into one patch matrix, one GEMM per product, the
//                matrix kept from forward to backward (hopper's first version)
//   per-image    im2col and GEMMs one image at a time
//   direct       the convolution as loops, vectorised over filters, no patch matrix
//   GEMMs        the three products alone on ready matrices, batch-wide and in chunks, through the
//                core's product seam (src/core/gemm.h: oneDNN for large products where built with it,
//                Eigen otherwise; the other alternatives multiply with Eigen): the floor
//                of any im2col method
// and then one whole training step of the network (GradientWorkspace::loss_and_gradient) next to
// the GEMM floor of all its products (the faster arrangement of each). Each figure is the median
// of --reps runs after two warm-ups.
//
//   hopper_conv_bench [--reps 15] [--batch 128]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "gemm.h"  // the core's product seam (src/core): what the layers call
#include "hopper/config.h"
#include "hopper/matrix_products.h"
#include "hopper/network.h"
#include "hopper/rng.h"
#include "layers.h"  // the core's layer functions (src/core, not installed)

using namespace hopper;

namespace {

using Clock = std::chrono::steady_clock;
using Index = Eigen::Index;

int g_reps = 15;

double median_ms(const std::function<void()>& f) {
    f();
    f();
    std::vector<double> t;
    for (int r = 0; r < g_reps; ++r) {
        const auto a = Clock::now();
        f();
        t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - a).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

std::vector<float> random_values(std::size_t n, uint64_t seed) {
    Rng rng(seed);
    std::vector<float> v(n);
    for (float& x : v) x = float(rng.uniform() - 0.5);
    return v;
}

// One valid, stride-1 convolution of the benchmark.
struct Conv {
    const char* name;
    int h, w, c, f, k;
    bool need_dx;
    int oh() const { return h - k + 1; }
    int ow() const { return w - k + 1; }
    Index kk() const { return Index(k) * k * c; }
    Index positions() const { return Index(oh()) * ow(); }
    double gflop(Index n) const {  // multiply-adds * 2 of forward, dW and (if needed) dX
        return 2.0 * double(f) * double(kk()) * double(positions()) * double(n) * (need_dx ? 3 : 2) * 1e-9;
    }
};

// Patches of one image, (kh, kw, c) per column.
void im2col_one(const Conv& cv, const float* img, float* cols) {
    const Index row = Index(cv.k) * cv.c;
    for (int oy = 0; oy < cv.oh(); ++oy)
        for (int ox = 0; ox < cv.ow(); ++ox, cols += cv.kk())
            for (int ky = 0; ky < cv.k; ++ky)
                std::memcpy(cols + ky * row, img + (Index(oy + ky) * cv.w + ox) * cv.c,
                            sizeof(float) * std::size_t(row));
}

void col2im_one(const Conv& cv, const float* cols, float* img) {
    const Index row = Index(cv.k) * cv.c;
    std::fill(img, img + Index(cv.h) * cv.w * cv.c, 0.0f);
    for (int oy = 0; oy < cv.oh(); ++oy)
        for (int ox = 0; ox < cv.ow(); ++ox, cols += cv.kk())
            for (int ky = 0; ky < cv.k; ++ky) {
                float* d = img + (Index(oy + ky) * cv.w + ox) * cv.c;
                const float* s = cols + ky * row;
                for (Index i = 0; i < row; ++i) d[i] += s[i];
            }
}

struct Timings {
    double core, batch_wide, per_image, direct, gemm_batch, gemm_chunks;
};

Timings time_conv(const Conv& cv, Index n) {
    const Index in = Index(cv.h) * cv.w * cv.c, out = cv.positions() * cv.f, kk = cv.kk();
    const std::vector<float> x = random_values(std::size_t(in * n), 1),
                             params = random_values(std::size_t(kk * cv.f + cv.f), 2),
                             dz = random_values(std::size_t(out * n), 3);
    std::vector<float> z(std::size_t(out * n)), grad(params.size()), dx(std::size_t(in * n));
    Timings t{};

    // core
    Layer l;
    l.kind = LayerKind::Conv2D;
    l.filters = cv.f;
    l.kernel_h = l.kernel_w = cv.k;
    const TensorShape ins{cv.h, cv.w, cv.c, false}, outs{cv.oh(), cv.ow(), cv.f, false};
    LayerSlice s{0, std::size_t(kk * cv.f), int(kk), cv.f, 0, params.size()};
    LayerScratch scratch;
    const layers::LayerArgs args{l, ins, outs, s};
    t.core = median_ms([&] {
        layers::conv_forward(args, params.data(), x.data(), z.data(), n, scratch);
        layers::conv_backward(args, params.data(), x.data(), dz.data(), grad.data(), cv.need_dx ? dx.data() : nullptr,
                              n, scratch);
    });

    // im2col of one image at a time (chunk 1), or of the whole batch into one patch matrix kept
    // from forward to backward (hopper's first version): the same code with other chunks.
    ConstMatrixMap w(params.data(), cv.f, kk);
    Eigen::Map<const VectorF> b(params.data() + kk * cv.f, cv.f);
    MatrixF cols(kk, cv.positions() * n);
    auto chunked = [&](Index chunk, bool keep) {
        MatrixMap gw(grad.data(), cv.f, kk);
        gw.setZero();
        Eigen::Map<VectorF> gb(grad.data() + kk * cv.f, cv.f);
        gb.setZero();
        for (Index j0 = 0; j0 < n; j0 += chunk) {
            const Index m = std::min(chunk, n - j0);
            for (Index j = 0; j < m; ++j)
                im2col_one(cv, x.data() + (j0 + j) * in, cols.data() + j * kk * cv.positions());
            MatrixMap zj(z.data() + j0 * out, cv.f, cv.positions() * m);
            zj.noalias() = w * MatrixMap(cols.data(), kk, cv.positions() * m);
            zj.colwise() += b;
        }
        for (Index j0 = 0; j0 < n; j0 += chunk) {
            const Index m = std::min(chunk, n - j0);
            ConstMatrixMap dzj(dz.data() + j0 * out, cv.f, cv.positions() * m);
            MatrixMap c(cols.data(), kk, cv.positions() * m);
            if (!keep)
                for (Index j = 0; j < m; ++j)
                    im2col_one(cv, x.data() + (j0 + j) * in, cols.data() + j * kk * cv.positions());
            gw.noalias() += dzj * c.transpose();
            gb += dzj.rowwise().sum();
            if (cv.need_dx) {
                c.noalias() = w.transpose() * dzj;
                for (Index j = 0; j < m; ++j)
                    col2im_one(cv, cols.data() + j * kk * cv.positions(), dx.data() + (j0 + j) * in);
            }
        }
    };
    t.per_image = median_ms([&] { chunked(1, false); });
    t.batch_wide = median_ms([&] { chunked(n, true); });

    // direct loops, innermost over filters (contiguous in the kernel, the output and dW)
    t.direct = median_ms([&] {
        const float* wp = params.data();
        for (Index j = 0; j < n; ++j)
            for (int oy = 0; oy < cv.oh(); ++oy)
                for (int ox = 0; ox < cv.ow(); ++ox) {
                    float* o = z.data() + j * out + (Index(oy) * cv.ow() + ox) * cv.f;
                    std::copy(wp + kk * cv.f, wp + kk * cv.f + cv.f, o);
                    for (int ky = 0; ky < cv.k; ++ky)
                        for (int kx = 0; kx < cv.k; ++kx)
                            for (int c = 0; c < cv.c; ++c) {
                                const float v = x[std::size_t(j * in + (Index(oy + ky) * cv.w + ox + kx) * cv.c + c)];
                                const float* wk = wp + ((Index(ky) * cv.k + kx) * cv.c + c) * cv.f;
                                for (int f = 0; f < cv.f; ++f) o[f] += v * wk[f];
                            }
                }
        std::fill(grad.begin(), grad.end(), 0.0f);
        if (cv.need_dx) std::fill(dx.begin(), dx.end(), 0.0f);
        for (Index j = 0; j < n; ++j)
            for (int oy = 0; oy < cv.oh(); ++oy)
                for (int ox = 0; ox < cv.ow(); ++ox) {
                    const float* g = dz.data() + j * out + (Index(oy) * cv.ow() + ox) * cv.f;
                    for (int f = 0; f < cv.f; ++f) grad[std::size_t(kk * cv.f + f)] += g[f];
                    for (int ky = 0; ky < cv.k; ++ky)
                        for (int kx = 0; kx < cv.k; ++kx)
                            for (int c = 0; c < cv.c; ++c) {
                                const Index xi = j * in + (Index(oy + ky) * cv.w + ox + kx) * cv.c + c;
                                const Index wi = ((Index(ky) * cv.k + kx) * cv.c + c) * cv.f;
                                const float v = x[std::size_t(xi)];
                                float* gw = grad.data() + wi;
                                float acc = 0.0f;
                                for (int f = 0; f < cv.f; ++f) {
                                    gw[f] += v * g[f];
                                    acc += wp[wi + f] * g[f];
                                }
                                if (cv.need_dx) dx[std::size_t(xi)] += acc;
                            }
                }
    });

    // the three products alone on ready matrices: batch-wide, and in the core's chunks
    auto gemms = [&](Index images) {
        MatrixF p = MatrixF::Random(kk, cv.positions() * images), zz(cv.f, cv.positions() * images), gw2(cv.f, kk);
        gw2.setZero();
        return median_ms([&] {
            for (Index j0 = 0; j0 < n; j0 += images) {
                const Index m = std::min(images, n - j0);
                ConstMatrixMap dzz(dz.data() + j0 * out, cv.f, cv.positions() * m);
                MatrixMap pm(p.data(), kk, cv.positions() * m);
                detail::gemm(false, false, cv.f, cv.positions() * m, kk, w.data(), pm.data(), zz.data());
                detail::gemm(false, true, cv.f, kk, cv.positions() * m, dzz.data(), pm.data(), gw2.data(), true);
                if (cv.need_dx)
                    detail::gemm(true, false, kk, cv.positions() * m, cv.f, w.data(), dzz.data(), pm.data());
            }
        });
    };
    t.gemm_batch = gemms(n);
    t.gemm_chunks =
        gemms(std::max<Index>(1, std::min<Index>(n, Index(layers::kPatchChunkFloats) / (kk * cv.positions()))));
    return t;
}

}  // namespace

int main(int argc, char** argv) {
    Index n = 128;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--reps") g_reps = std::max(1, std::atoi(argv[i + 1]));
        else if (a == "--batch") n = std::max(1, std::atoi(argv[i + 1]));
    }
    std::printf("Conv2D forward + backward, batch %ld, one thread, median of %d runs (ms)\n", long(n), g_reps);
    std::printf("%-34s %7s %11s %10s %7s %14s %14s %6s\n", "layer", "chunks", "batch-wide", "per-image", "direct",
                "GEMMs (batch)", "GEMMs (chunks)", "GFLOP");
    const Conv convs[] = {{"conv1 28x28x1 -> 26x26x32", 28, 28, 1, 32, 3, false},
                          {"conv2 13x13x32 -> 11x11x64 (+dX)", 13, 13, 32, 64, 3, true}};
    double gemm_floor = 0;
    for (const Conv& cv : convs) {
        const Timings t = time_conv(cv, n);
        gemm_floor += std::min(t.gemm_batch, t.gemm_chunks);
        std::printf("%-34s %7.2f %11.2f %10.2f %7.2f %14.2f %14.2f %6.3f\n", cv.name, t.core, t.batch_wide, t.per_image,
                    t.direct, t.gemm_batch, t.gemm_chunks, cv.gflop(n));
    }

    // The whole network, one training step, as the trainer computes it.
    const Architecture arch = parse_architecture(R"({"input_shape": [28, 28, 1], "layers": [
        {"type": "conv2d", "filters": 32, "kernel_size": 3, "activation": "relu"}, {"type": "max_pooling2d"},
        {"type": "conv2d", "filters": 64, "kernel_size": 3, "activation": "relu"}, {"type": "max_pooling2d"},
        {"type": "flatten", "dropout": 0.5}, {"units": 10, "activation": "softmax"}]})");
    Network net(arch);
    std::vector<float> params(net.num_params()), grad(net.num_params());
    net.initialize(params.data(), 1);
    const std::vector<float> x = random_values(std::size_t(784 * n), 4);
    std::vector<float> y(std::size_t(10 * n), 0.0f);
    for (Index j = 0; j < n; ++j) y[std::size_t(j * 10 + j % 10)] = 1.0f;
    GradientWorkspace ws(net);
    uint64_t step = 0;
    const double full = median_ms([&] {
        ws.loss_and_gradient(params.data(), ConstMatrixMap(x.data(), 784, n), ConstMatrixMap(y.data(), 10, n),
                             Loss::SoftmaxCrossEntropy, grad.data(), ++step);
    });
    MatrixF dw(10, 1600), a = MatrixF::Random(1600, n), d = MatrixF::Random(10, n), o(10, n), da(1600, n);
    const double dense = median_ms([&] {
        detail::gemm(false, false, 10, n, 1600, dw.data(), a.data(), o.data());
        detail::gemm(false, true, 10, 1600, n, d.data(), a.data(), dw.data());
        detail::gemm(true, false, 1600, n, 10, dw.data(), d.data(), da.data());
    });
    gemm_floor += dense;
    double gflop = 2.0 * 10 * 1600 * double(n) * 3 * 1e-9;
    for (const Conv& cv : convs) gflop += cv.gflop(n);
    std::printf("simple convnet, one training step: %.2f ms (%.1f GFLOP/s); its GEMMs alone: %.2f ms (%.1f GFLOP/s)\n",
                full, gflop / full * 1e3, gemm_floor, gflop / gemm_floor * 1e3);
    std::printf("large products by: %s\n", matrix_product_backend());
    return 0;
}
