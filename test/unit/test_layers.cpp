// Conv2D, pooling, Flatten and BatchNormalization: forward values on small hand-checked cases,
// gradients of every layer and of whole small CNNs against central finite differences of an
// independent double-precision forward pass (reference_network.h), batch normalization in
// training and inference, and a tiny CNN that learns.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <gtest/gtest.h>

#include "hopper/network.h"
#include "hopper/rng.h"
#include "hopper/trainer.h"
#include "reference_network.h"

using namespace hopper;
using reference::MatrixD;

namespace {

Layer dense(int units, Activation act = Activation::Linear, bool bias = true) {
    Layer l;
    l.units = units;
    l.activation = act;
    l.use_bias = bias;
    return l;
}

Layer conv(int filters, int kh, int kw, Activation act = Activation::Linear, int sh = 1, int sw = 1,
           Padding pad = Padding::Valid, bool bias = true) {
    Layer l;
    l.kind = LayerKind::Conv2D;
    l.filters = filters;
    l.kernel_h = kh;
    l.kernel_w = kw;
    l.stride_h = sh;
    l.stride_w = sw;
    l.padding = pad;
    l.activation = act;
    l.use_bias = bias;
    return l;
}

Layer pool(LayerKind kind, int kh, int kw, int sh, int sw, Padding pad = Padding::Valid) {
    Layer l;
    l.kind = kind;
    l.kernel_h = kh;
    l.kernel_w = kw;
    l.stride_h = sh;
    l.stride_w = sw;
    l.padding = pad;
    return l;
}

Layer plain(LayerKind kind, Activation act = Activation::Linear) {
    Layer l;
    l.kind = kind;
    l.activation = act;
    return l;
}

Layer bn(bool center = true, bool scale = true, Activation act = Activation::Linear) {
    Layer l = plain(LayerKind::BatchNormalization, act);
    l.center = center;
    l.scale = scale;
    return l;
}

Architecture image(int h, int w, int c, std::vector<Layer> layers) {
    Architecture a;
    a.input_height = h;
    a.input_width = w;
    a.input_channels = c;
    a.input_dim = h * w * c;
    a.layers = std::move(layers);
    return a;
}

std::vector<float> uniform_values(std::size_t n, uint64_t seed, double lo, double hi) {
    Rng rng(seed);
    std::vector<float> v(n);
    for (auto& x : v) x = float(lo + (hi - lo) * rng.uniform());
    return v;
}

std::vector<float> targets(int outputs, int n, Loss loss, uint64_t seed) {
    Rng rng(seed);
    std::vector<float> y(std::size_t(outputs) * n, 0.0f);
    for (int j = 0; j < n; ++j) {
        if (loss == Loss::SoftmaxCrossEntropy) y[std::size_t(j) * outputs + rng.below(outputs)] = 1.0f;
        else
            for (int i = 0; i < outputs; ++i) y[std::size_t(j) * outputs + i] = float(0.05 + 0.9 * rng.uniform());
    }
    return y;
}

// A network, seeded parameters (batch normalization's moving variance kept positive), data.
struct Problem {
    Network net;
    std::vector<float> params, x, y;
    int n;
    Loss loss;

    Problem(Architecture arch, Loss loss_, int n_ = 4, uint64_t seed = 7) : net(std::move(arch)), n(n_), loss(loss_) {
        params = uniform_values(net.num_params(), seed, -0.8, 0.8);
        for (std::size_t l = 0; l < net.arch().layers.size(); ++l)
            if (net.arch().layers[l].kind == LayerKind::BatchNormalization) {
                const LayerSlice& s = net.slices()[l];
                const int c = net.shapes()[l].channels;
                for (int i = 0; i < c; ++i)
                    params[s.stats_offset + c + i] = 0.5f + std::abs(params[s.stats_offset + c + i]);
            }
        x = uniform_values(std::size_t(net.arch().input_dim) * n, seed + 1, -1.0, 1.0);
        y = targets(net.arch().output_dim(), n, loss, seed + 2);
    }
    ConstMatrixMap xm() const { return ConstMatrixMap(x.data(), net.arch().input_dim, n); }
    ConstMatrixMap ym() const { return ConstMatrixMap(y.data(), net.arch().output_dim(), n); }
    std::vector<double> pd() const { return std::vector<double>(params.begin(), params.end()); }

    std::vector<float> gradient(uint64_t dropout_seed = 1, double* loss_out = nullptr) const {
        GradientWorkspace ws(net);
        std::vector<float> g(net.num_params(), -99.0f);
        const double l = ws.loss_and_gradient(params.data(), xm(), ym(), loss, g.data(), dropout_seed);
        if (loss_out) *loss_out = l;
        return g;
    }
};

// Central differences of the double reference (training mode) against the workspace's gradient.
void expect_gradient_matches_reference(const Problem& pr) {
    std::vector<double> p = pr.pd();
    const MatrixD x = pr.xm().cast<double>(), y = pr.ym().cast<double>();
    reference::Kinks kinks;
    reference::forward(pr.net.arch(), p, x, true, &kinks);
    ASSERT_GT(kinks.min_relu, 1e-3) << "test data sits on a ReLU kink; pick another seed";
    ASSERT_GT(kinks.min_max_gap, 1e-3) << "test data has a near tie in a max pool; pick another seed";

    double loss = 0;
    const std::vector<float> g = pr.gradient(1, &loss);
    EXPECT_NEAR(loss / pr.n, reference::mean_loss(pr.loss, reference::forward(pr.net.arch(), p, x, true), y),
                1e-5 * std::max(1.0, std::abs(loss / pr.n)));
    const double h = 1e-5;
    double norm = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
        const double saved = p[i];
        p[i] = saved + h;
        const double up = reference::mean_loss(pr.loss, reference::forward(pr.net.arch(), p, x, true), y);
        p[i] = saved - h;
        const double down = reference::mean_loss(pr.loss, reference::forward(pr.net.arch(), p, x, true), y);
        p[i] = saved;
        const double numeric = (up - down) / (2 * h);
        const double err = std::abs(numeric - g[i]) / std::max(1e-2, std::abs(numeric));
        EXPECT_LT(err, 2e-3) << "parameter " << i << ": analytic " << g[i] << ", numeric " << numeric;
        norm += double(g[i]) * g[i];
    }
    EXPECT_GT(norm, 1e-8);  // the problem has gradient to check
}

MatrixF predict(const Network& net, const std::vector<float>& params, const std::vector<float>& x, int n) {
    MatrixF out;
    net.predict(params.data(), ConstMatrixMap(x.data(), net.arch().input_dim, n), out);
    return out;
}

}  // namespace

// ---- layout --------------------------------------------------------------------------------------

TEST(LayersLayout, ShapesSlicesAndKerasWeightOrder) {
    // 6x5x2 -> conv 3x2x4 valid -> 4x4x4 -> maxpool 2 -> 2x2x4 -> bn -> flatten 16 -> dense 3
    Network net(image(6, 5, 2,
                      {conv(4, 3, 2), pool(LayerKind::MaxPooling2D, 2, 2, 2, 2), bn(true, false),
                       plain(LayerKind::Flatten), dense(3, Activation::Softmax)}));
    const auto& s = net.shapes();
    ASSERT_EQ(s.size(), 6u);
    EXPECT_EQ(s[0].to_string(), "6x5x2");
    EXPECT_EQ(s[1].to_string(), "4x4x4");
    EXPECT_EQ(s[2].to_string(), "2x2x4");
    EXPECT_EQ(s[3].to_string(), "2x2x4");
    EXPECT_TRUE(s[4].flat);
    EXPECT_EQ(s[4].to_string(), "16");
    const auto& sl = net.slices();
    EXPECT_EQ(sl[0].weight_offset, 0u);
    EXPECT_EQ(sl[0].inputs, 3 * 2 * 2);  // kh*kw*in_channels
    EXPECT_EQ(sl[0].units, 4);
    EXPECT_EQ(sl[0].bias_offset, 48u);
    EXPECT_EQ(sl[0].end_offset, 52u);
    EXPECT_EQ(sl[1].weight_offset, 52u);  // pooling: no parameters
    EXPECT_EQ(sl[1].end_offset, 52u);
    EXPECT_EQ(sl[1].units * sl[1].inputs, 0);
    // Batch normalization without scale: beta, then moving mean and variance; no weights to decay.
    EXPECT_EQ(sl[2].bias_offset, 52u);
    EXPECT_EQ(sl[2].stats_offset, 56u);
    EXPECT_EQ(sl[2].end_offset, 64u);
    EXPECT_EQ(sl[2].units * sl[2].inputs, 0);
    EXPECT_EQ(sl[4].weight_offset, 64u);
    EXPECT_EQ(sl[4].inputs, 16);
    EXPECT_EQ(net.num_params(), 64u + 16 * 3 + 3);
    EXPECT_EQ(net.num_params(), net.arch().num_params());
}

// ---- forward values --------------------------------------------------------------------------------

TEST(LayersForward, ConvolutionValidHandComputed) {
    // 3x3x1 input 1..9, one 2x2 kernel [[1, 2], [3, 4]] (Keras (kh, kw, in, out) order), bias 0.5.
    Network net(image(3, 3, 1, {conv(1, 2, 2), plain(LayerKind::Flatten)}));
    std::vector<float> p = {1, 2, 3, 4, 0.5f};
    std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    MatrixF out = predict(net, p, x, 1);
    ASSERT_EQ(out.rows(), 4);
    // (0,0): 1*1 + 2*2 + 3*4 + 4*5 = 37, (0,1): 2+6+15+24 = 47, (1,0): 4+10+21+32 = 67, (1,1): 77.
    EXPECT_FLOAT_EQ(out(0, 0), 37.5f);
    EXPECT_FLOAT_EQ(out(1, 0), 47.5f);
    EXPECT_FLOAT_EQ(out(2, 0), 67.5f);
    EXPECT_FLOAT_EQ(out(3, 0), 77.5f);
}

TEST(LayersForward, ChannelsAndFiltersFollowKerasKernelOrder) {
    // 1x1x2 input (a, b), kernel 1x1 from 2 channels to 3 filters: W[c][f] at index c*3 + f.
    Network net(image(1, 1, 2, {conv(3, 1, 1), plain(LayerKind::Flatten)}));
    std::vector<float> p = {1, 2, 3, 10, 20, 30, 0, 0, 0};
    MatrixF out = predict(net, p, {2.0f, 1.0f}, 1);
    EXPECT_FLOAT_EQ(out(0, 0), 12.0f);
    EXPECT_FLOAT_EQ(out(1, 0), 24.0f);
    EXPECT_FLOAT_EQ(out(2, 0), 36.0f);
}

TEST(LayersForward, SamePaddingStrideTwoOnOddAndEvenSizes) {
    // A 3x3 kernel that picks its top-left element shows where each window starts. Keras pads
    // "same" by max((out - 1) * stride + kernel - in, 0), the smaller half on top/left:
    //   in 5, stride 2: out 3, pad 2 (1 before): windows start at -1, 1, 3
    //   in 6, stride 2: out 3, pad 1 (0 before): windows start at 0, 2, 4
    //   in 7, stride 3: out 3, pad 2 (1 before): windows start at -1, 2, 5
    struct Case {
        int h, w, s;
        std::vector<int> starts_h, starts_w;
    };
    for (const Case& c : {Case{5, 6, 2, {-1, 1, 3}, {0, 2, 4}}, Case{7, 5, 3, {-1, 2, 5}, {-1, 1, 3}}}) {
        Network net(
            image(c.h, c.w, 1,
                  {conv(1, 3, 3, Activation::Linear, c.s, 2, Padding::Same, false), plain(LayerKind::Flatten)}));
        ASSERT_EQ(net.shapes()[1].height, int(c.starts_h.size()));
        ASSERT_EQ(net.shapes()[1].width, int(c.starts_w.size()));
        std::vector<float> p(9, 0.0f);
        p[0] = 1.0f;  // kernel (0, 0)
        std::vector<float> x(std::size_t(c.h) * c.w);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = float(i + 1);  // value = 1 + y*w + x
        MatrixF out = predict(net, p, x, 1);
        for (std::size_t oy = 0; oy < c.starts_h.size(); ++oy)
            for (std::size_t ox = 0; ox < c.starts_w.size(); ++ox) {
                const int y0 = c.starts_h[oy], x0 = c.starts_w[ox];
                const float want = (y0 < 0 || x0 < 0) ? 0.0f : float(1 + y0 * c.w + x0);
                EXPECT_EQ(out(Eigen::Index(oy * c.starts_w.size() + ox), 0), want)
                    << c.h << "x" << c.w << " at " << oy << "," << ox;
            }
    }
}

TEST(LayersForward, MaxPoolingWithTiesAndSamePadding) {
    // 3x3x1 with ties, pool 2x2 stride 2 "same": out 2x2, the last row/column padded (never wins).
    Network net(image(3, 3, 1, {pool(LayerKind::MaxPooling2D, 2, 2, 2, 2, Padding::Same), plain(LayerKind::Flatten)}));
    std::vector<float> x = {5, 5, -1, 5, 2, -3, -7, -8, -9};
    MatrixF out = predict(net, {}, x, 1);
    ASSERT_EQ(out.rows(), 4);
    EXPECT_EQ(out(0, 0), 5.0f);   // tie of three 5s
    EXPECT_EQ(out(1, 0), -1.0f);  // window {-1, -3}: padding does not count as 0
    EXPECT_EQ(out(2, 0), -7.0f);
    EXPECT_EQ(out(3, 0), -9.0f);  // a window of one valid element
    // The gradient of a tie goes to the first maximum in row-major order (TensorFlow's choice).
    Network train(
        image(3, 3, 1,
              {pool(LayerKind::MaxPooling2D, 2, 2, 2, 2, Padding::Same), plain(LayerKind::Flatten), dense(1)}));
    std::vector<float> p = {1, 1, 1, 1, 0};  // dense: sum of the pooled values
    std::vector<float> y = {0};
    GradientWorkspace ws(train);
    std::vector<float> g(train.num_params());
    // MSE against 0 of s = 5 - 1 - 7 - 9 = -12: dL/ds = -24, so dL/dW_i = -24 * pooled_i.
    ws.loss_and_gradient(p.data(), ConstMatrixMap(x.data(), 9, 1), ConstMatrixMap(y.data(), 1, 1),
                         Loss::MeanSquaredError, g.data(), 0);
    EXPECT_FLOAT_EQ(g[0], -24.0f * 5.0f);
    // The input gradient is seen through a conv layer below the pool: put an identity 1x1 conv first.
    Network deep(image(3, 3, 1,
                       {conv(1, 1, 1), pool(LayerKind::MaxPooling2D, 2, 2, 2, 2, Padding::Same),
                        plain(LayerKind::Flatten), dense(1)}));
    std::vector<float> q = {1, 0, 1, 1, 1, 1, 0};
    std::vector<float> gd(deep.num_params());
    GradientWorkspace wd(deep);
    wd.loss_and_gradient(q.data(), ConstMatrixMap(x.data(), 9, 1), ConstMatrixMap(y.data(), 1, 1),
                         Loss::MeanSquaredError, gd.data(), 0);
    // dL/dw of the 1x1 conv = sum over routed inputs of dL/dz * x: each window routes to exactly
    // one input (the first 5, -1, -7, -9), so dw = -24 * (5 - 1 - 7 - 9) = 288 (not 3 * 5 for the ties).
    EXPECT_FLOAT_EQ(gd[0], 288.0f);
    EXPECT_FLOAT_EQ(gd[1], -24.0f * 4.0f);  // bias: four routed gradients
}

TEST(LayersForward, AveragePoolingSameAveragesValidElementsOnly) {
    Network net(
        image(3, 3, 2, {pool(LayerKind::AveragePooling2D, 2, 2, 2, 2, Padding::Same), plain(LayerKind::Flatten)}));
    std::vector<float> x(18);
    for (int i = 0; i < 9; ++i) {
        x[std::size_t(i) * 2] = float(i + 1);       // channel 0: 1..9
        x[std::size_t(i) * 2 + 1] = -float(i + 1);  // channel 1: -1..-9
    }
    MatrixF out = predict(net, {}, x, 1);
    ASSERT_EQ(out.rows(), 8);
    EXPECT_FLOAT_EQ(out(0, 0), (1 + 2 + 4 + 5) / 4.0f);
    EXPECT_FLOAT_EQ(out(1, 0), -(1 + 2 + 4 + 5) / 4.0f);
    EXPECT_FLOAT_EQ(out(2, 0), (3 + 6) / 2.0f);  // not / 4
    EXPECT_FLOAT_EQ(out(4, 0), (7 + 8) / 2.0f);
    EXPECT_FLOAT_EQ(out(6, 0), 9.0f);
    EXPECT_FLOAT_EQ(out(7, 0), -9.0f);
    // "valid" with stride 1: four full windows.
    Network valid(image(3, 3, 1, {pool(LayerKind::AveragePooling2D, 2, 2, 1, 1), plain(LayerKind::Flatten)}));
    std::vector<float> x1 = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    MatrixF v = predict(valid, {}, x1, 1);
    EXPECT_FLOAT_EQ(v(0, 0), 3.0f);
    EXPECT_FLOAT_EQ(v(3, 0), 7.0f);
}

TEST(LayersForward, GlobalAveragePooling) {
    Network net(image(2, 2, 3, {plain(LayerKind::GlobalAveragePooling2D)}));
    std::vector<float> x = {1, 10, 100, 2, 20, 200, 3, 30, 300, 4, 40, 400, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 8, 8};
    MatrixF out = predict(net, {}, x, 2);
    ASSERT_EQ(out.rows(), 3);
    EXPECT_FLOAT_EQ(out(0, 0), 2.5f);
    EXPECT_FLOAT_EQ(out(1, 0), 25.0f);
    EXPECT_FLOAT_EQ(out(2, 0), 250.0f);
    EXPECT_FLOAT_EQ(out(2, 1), 2.0f);
}

TEST(LayersForward, FlattenIsKerasOrderForTheDenseAfterIt) {
    // A Dense after Flatten reads feature (y * W + x) * C + c: the row of Keras' Dense kernel for
    // image position (y, x), channel c. Pick (y=1, x=0, c=2) of a 2x3x3 image.
    Network net(image(2, 3, 3, {plain(LayerKind::Flatten), dense(1, Activation::Linear, false)}));
    std::vector<float> w(18, 0.0f);
    w[(1 * 3 + 0) * 3 + 2] = 1.0f;
    std::vector<float> x(18);
    for (int y = 0; y < 2; ++y)
        for (int xx = 0; xx < 3; ++xx)
            for (int c = 0; c < 3; ++c) x[std::size_t((y * 3 + xx) * 3 + c)] = float(100 * y + 10 * xx + c);
    EXPECT_FLOAT_EQ(predict(net, w, x, 1)(0, 0), 102.0f);
}

// ---- gradients -------------------------------------------------------------------------------------

namespace {
struct CnnGradCase {
    std::string name;
    Architecture arch;
    Loss loss;
    int n;
    uint64_t seed;
};
}  // namespace

class LayersGradient : public ::testing::TestWithParam<CnnGradCase> {};

TEST_P(LayersGradient, MatchesFiniteDifferencesOfTheDoubleReference) {
    const CnnGradCase& c = GetParam();
    // The first seed from c.seed on whose data no ReLU or max pool sits near a kink (larger
    // networks have hundreds of candidates; deterministic all the same).
    for (uint64_t seed = c.seed; seed < c.seed + 100; ++seed) {
        Problem pr(c.arch, c.loss, c.n, seed);
        reference::Kinks kinks;
        reference::forward(pr.net.arch(), pr.pd(), pr.xm().cast<double>(), true, &kinks);
        if (kinks.min_relu > 1e-3 && kinks.min_max_gap > 1e-3) {
            expect_gradient_matches_reference(pr);
            return;
        }
    }
    FAIL() << "no seed without kinks";
}

namespace {
std::vector<CnnGradCase> gradient_cases() {
    const Activation kActs[] = {Activation::Linear, Activation::Relu, Activation::Tanh, Activation::Sigmoid};
    const char* kNames[] = {"Linear", "Relu", "Tanh", "Sigmoid"};
    std::vector<CnnGradCase> cases;
    // Conv2D with each activation, with and without bias, valid and same, strides.
    for (int i = 0; i < 4; ++i) {
        cases.push_back(
            {std::string("Conv") + kNames[i],
             image(4, 5, 2, {conv(3, 3, 2, kActs[i]), plain(LayerKind::Flatten), dense(3, Activation::Softmax)}),
             Loss::SoftmaxCrossEntropy, 3, 7});
        cases.push_back({std::string("ConvNoBiasSameStride2") + kNames[i],
                         image(5, 4, 2,
                               {conv(2, 3, 3, kActs[i], 2, 2, Padding::Same, false), plain(LayerKind::Flatten),
                                dense(2, Activation::Sigmoid)}),
                         Loss::BinaryCrossEntropy, 3, 11});
    }
    cases.push_back({"ConvPointwise",
                     image(3, 3, 3, {conv(2, 1, 1, Activation::Tanh), plain(LayerKind::Flatten), dense(2)}),
                     Loss::MeanSquaredError, 3, 5});
    cases.push_back({"ConvAsymmetricStrides",
                     image(6, 7, 1,
                           {conv(2, 2, 3, Activation::Tanh, 1, 2, Padding::Same), plain(LayerKind::Flatten),
                            dense(3, Activation::Softmax)}),
                     Loss::SoftmaxCrossEntropy, 2, 3});
    cases.push_back({"ConvStackedSecondLayerInputGradient",
                     image(5, 5, 1,
                           {conv(2, 2, 2, Activation::Tanh), conv(3, 2, 2, Activation::Sigmoid, 2, 1),
                            plain(LayerKind::Flatten), dense(2)}),
                     Loss::MeanSquaredError, 2, 9});
    cases.push_back({"MaxPoolValid",
                     image(4, 4, 2,
                           {conv(2, 1, 1, Activation::Tanh), pool(LayerKind::MaxPooling2D, 2, 2, 2, 2),
                            plain(LayerKind::Flatten), dense(2, Activation::Softmax)}),
                     Loss::SoftmaxCrossEntropy, 3, 21});
    cases.push_back({"MaxPoolSameOverlapping",
                     image(5, 5, 1,
                           {conv(2, 2, 2, Activation::Linear), pool(LayerKind::MaxPooling2D, 3, 3, 2, 2, Padding::Same),
                            plain(LayerKind::Flatten), dense(2)}),
                     Loss::MeanSquaredError, 2, 31});
    cases.push_back(
        {"AvgPoolSame",
         image(5, 5, 2,
               {conv(2, 2, 2, Activation::Sigmoid), pool(LayerKind::AveragePooling2D, 2, 2, 2, 2, Padding::Same),
                plain(LayerKind::Flatten), dense(2, Activation::Softmax)}),
         Loss::SoftmaxCrossEntropy, 3, 4});
    cases.push_back({"AvgPoolValidStride1",
                     image(4, 4, 1,
                           {conv(2, 2, 2, Activation::Tanh), pool(LayerKind::AveragePooling2D, 2, 2, 1, 1),
                            plain(LayerKind::Flatten), dense(1, Activation::Sigmoid)}),
                     Loss::BinaryCrossEntropy, 3, 6});
    cases.push_back({"GlobalAveragePooling",
                     image(3, 4, 2,
                           {conv(3, 2, 2, Activation::Tanh), plain(LayerKind::GlobalAveragePooling2D),
                            dense(2, Activation::Softmax)}),
                     Loss::SoftmaxCrossEntropy, 3, 8});
    cases.push_back({"GlobalAveragePoolingSoftmaxOutput",
                     image(3, 3, 2, {conv(3, 2, 2), plain(LayerKind::GlobalAveragePooling2D, Activation::Softmax)}),
                     Loss::SoftmaxCrossEntropy, 3, 8});
    // Batch normalization in training mode: on images, on flat vectors, without center/scale.
    cases.push_back({"BatchNormImage",
                     image(3, 3, 2,
                           {conv(3, 2, 2), bn(true, true, Activation::Tanh), plain(LayerKind::Flatten),
                            dense(2, Activation::Softmax)}),
                     Loss::SoftmaxCrossEntropy, 4, 12});
    cases.push_back(
        {"BatchNormNoCenter",
         image(3, 3, 2, {conv(2, 2, 2), bn(false, true, Activation::Sigmoid), plain(LayerKind::Flatten), dense(2)}),
         Loss::MeanSquaredError, 3, 13});
    cases.push_back(
        {"BatchNormNoScale",
         image(3, 3, 1, {conv(2, 2, 2), bn(true, false, Activation::Tanh), plain(LayerKind::Flatten), dense(2)}),
         Loss::MeanSquaredError, 3, 14});
    {
        Architecture flat;
        flat.input_dim = 4;
        flat.layers = {dense(5), bn(true, true, Activation::Tanh), dense(3, Activation::Softmax)};
        cases.push_back({"BatchNormAfterDense", flat, Loss::SoftmaxCrossEntropy, 5, 15});
    }
    cases.push_back({"BatchNormFirstLayer",
                     image(2, 3, 2, {bn(), conv(2, 2, 2, Activation::Tanh), plain(LayerKind::Flatten), dense(2)}),
                     Loss::MeanSquaredError, 3, 16});
    // A whole small CNN.
    cases.push_back(
        {"SmallCnn",
         image(7, 6, 2,
               {conv(3, 3, 3, Activation::Tanh, 1, 1, Padding::Same), bn(), pool(LayerKind::MaxPooling2D, 2, 2, 2, 2),
                conv(4, 2, 2, Activation::Relu, 1, 1, Padding::Same), pool(LayerKind::AveragePooling2D, 2, 2, 1, 1),
                plain(LayerKind::Flatten), dense(5, Activation::Tanh), dense(3, Activation::Softmax)}),
         Loss::SoftmaxCrossEntropy, 3, 18});
    return cases;
}
}  // namespace

INSTANTIATE_TEST_SUITE_P(Layers, LayersGradient, ::testing::ValuesIn(gradient_cases()),
                         [](const ::testing::TestParamInfo<CnnGradCase>& info) { return info.param.name; });

// With dropout the loss can only be evaluated by the workspace itself; the seed fixes the masks,
// so central differences of that float loss check the gradient through dropped conv outputs.
TEST(LayersGradient, DropoutOnConvAndFlattenWithFixedMasks) {
    Layer c1 = conv(3, 2, 2, Activation::Tanh);
    c1.dropout = 0.3f;
    Layer f = plain(LayerKind::Flatten);
    f.dropout = 0.5f;
    Problem pr(image(4, 4, 1, {c1, pool(LayerKind::MaxPooling2D, 2, 2, 1, 1), f, dense(2, Activation::Softmax)}),
               Loss::SoftmaxCrossEntropy, 3, 40);
    GradientWorkspace ws(pr.net);
    std::vector<float> g(pr.net.num_params()), scratch(g.size());
    const uint64_t seed = 9;
    ws.loss_and_gradient(pr.params.data(), pr.xm(), pr.ym(), pr.loss, g.data(), seed);
    const float h = 1e-3f;
    for (std::size_t i = 0; i < g.size(); ++i) {
        const float saved = pr.params[i];
        pr.params[i] = saved + h;
        const double up = ws.loss_and_gradient(pr.params.data(), pr.xm(), pr.ym(), pr.loss, scratch.data(), seed);
        pr.params[i] = saved - h;
        const double down = ws.loss_and_gradient(pr.params.data(), pr.xm(), pr.ym(), pr.loss, scratch.data(), seed);
        pr.params[i] = saved;
        const double numeric = (up - down) / (2 * h) / pr.n;
        EXPECT_NEAR(g[i], numeric, 1e-3 + 1e-2 * std::abs(numeric)) << "parameter " << i;
    }
}

TEST(LayersGradient, WorkspaceReuseAcrossBatchSizesAndBufferAlignment) {
    // Buffers grow for the largest batch and are reused for smaller ones; inputs and parameters at
    // any address give the same bits.
    Problem big(image(5, 5, 2,
                      {conv(3, 3, 3, Activation::Relu, 1, 1, Padding::Same), bn(),
                       pool(LayerKind::MaxPooling2D, 2, 2, 2, 2), plain(LayerKind::Flatten),
                       dense(3, Activation::Softmax)}),
                Loss::SoftmaxCrossEntropy, 7, 3);
    Problem small = big;
    small.n = 3;
    GradientWorkspace ws(big.net);
    for (const Problem* pr : {&big, &small, &big, &small}) {
        const std::size_t np = pr->net.num_params();
        double lf = 0;
        const std::vector<float> fresh = pr->gradient(5, &lf);
        for (std::size_t shift = 0; shift < 16; shift += 5) {
            std::vector<float> p(np + 16), x(pr->x.size() + 16), g(np + 16);
            std::copy(pr->params.begin(), pr->params.end(), p.begin() + shift);
            std::copy(pr->x.begin(), pr->x.end(), x.begin() + shift);
            const double l = ws.loss_and_gradient(p.data() + shift,
                                                  ConstMatrixMap(x.data() + shift, pr->net.arch().input_dim, pr->n),
                                                  pr->ym(), pr->loss, g.data() + shift, 5);
            EXPECT_EQ(l, lf);
            EXPECT_TRUE(std::equal(fresh.begin(), fresh.end(), g.begin() + shift)) << pr->n << " " << shift;
        }
    }
}

// ---- batch normalization: training and inference ---------------------------------------------------

TEST(LayersBatchNorm, TrainingUsesBatchStatisticsInferenceTheMovingOnes) {
    Architecture a;
    a.input_dim = 2;
    Layer b = bn();
    b.momentum = 0.9;
    b.epsilon = 0.01;
    a.layers = {b};
    Network net(a);
    ASSERT_EQ(net.num_params(), 8u);  // gamma, beta, mean, var (2 each)
    std::vector<float> p(8);
    net.initialize(p.data(), 1);
    EXPECT_EQ(p, (std::vector<float>{1, 1, 0, 0, 0, 0, 1, 1}));
    p = {2.0f, 0.5f, 0.25f, -1.0f, 0.1f, 3.0f, 4.0f, 0.5f};  // gamma, beta, moving mean, moving var
    // Feature 0: 1, 3, 5, 7 (mean 4, var 5); feature 1: 10, 10, 10, 14 (mean 11, var 3).
    std::vector<float> x = {1, 10, 3, 10, 5, 10, 7, 14};
    std::vector<float> y(8, 0.0f);
    // Inference: (x - moving mean) / sqrt(moving var + eps) * gamma + beta.
    MatrixF out = predict(net, p, x, 4);
    for (int j = 0; j < 4; ++j) {
        EXPECT_NEAR(out(0, j), (x[std::size_t(j) * 2] - 0.1) / std::sqrt(4.01) * 2.0 + 0.25, 1e-5);
        EXPECT_NEAR(out(1, j), (x[std::size_t(j) * 2 + 1] - 3.0) / std::sqrt(0.51) * 0.5 - 1.0, 1e-5);
    }
    // Training: the batch's mean and biased variance; MSE against 0 reveals the outputs through the loss.
    GradientWorkspace ws(net);
    std::vector<float> g(8);
    const double loss = ws.loss_and_gradient(p.data(), ConstMatrixMap(x.data(), 2, 4), ConstMatrixMap(y.data(), 2, 4),
                                             Loss::MeanSquaredError, g.data(), 0);
    double want = 0;
    for (int j = 0; j < 4; ++j) {
        const double o0 = (x[std::size_t(j) * 2] - 4.0) / std::sqrt(5.01) * 2.0 + 0.25;
        const double o1 = (x[std::size_t(j) * 2 + 1] - 11.0) / std::sqrt(3.01) * 0.5 - 1.0;
        want += (o0 * o0 + o1 * o1) / 2;
    }
    EXPECT_NEAR(loss, want, 1e-5);
    EXPECT_EQ(g[4], 0.0f);  // moving statistics are not trained
    EXPECT_EQ(g[7], 0.0f);
    // The moving statistics move only when stored, by Keras' rule with the biased variance.
    std::vector<float> q = p;
    ws.store_moving_statistics(q.data());
    EXPECT_TRUE(std::equal(p.begin(), p.begin() + 4, q.begin()));
    // Keras' arithmetic: float32, with momentum and 1 - momentum rounded to float.
    EXPECT_FLOAT_EQ(q[4], 0.1f * 0.9f + 4.0f * 0.1f);
    EXPECT_FLOAT_EQ(q[5], 3.0f * 0.9f + 11.0f * 0.1f);
    EXPECT_FLOAT_EQ(q[6], 4.0f * 0.9f + 5.0f * 0.1f);
    EXPECT_FLOAT_EQ(q[7], 0.5f * 0.9f + 3.0f * 0.1f);
}

TEST(LayersBatchNorm, ImagesNormalizePerChannelOverSamplesAndPositions) {
    Network net(image(2, 2, 2, {bn(false, false), plain(LayerKind::Flatten)}));
    // Channel 0 holds 0..7 over two samples, channel 1 is constant 5 (variance 0: outputs 0).
    std::vector<float> x(16);
    for (int i = 0; i < 8; ++i) {
        x[std::size_t(i) * 2] = float(i);
        x[std::size_t(i) * 2 + 1] = 5.0f;
    }
    std::vector<float> p(4);
    net.initialize(p.data(), 0);
    GradientWorkspace ws(net);
    std::vector<float> y(16, 0.0f), g(4);
    ws.loss_and_gradient(p.data(), ConstMatrixMap(x.data(), 8, 2), ConstMatrixMap(y.data(), 8, 2),
                         Loss::MeanSquaredError, g.data(), 0);
    ws.store_moving_statistics(p.data());
    EXPECT_FLOAT_EQ(p[0], 0.0f * 0.99f + 3.5f * 0.01f);  // mean of 0..7
    EXPECT_FLOAT_EQ(p[1], 0.0f * 0.99f + 5.0f * 0.01f);
    EXPECT_FLOAT_EQ(p[2], 1.0f * 0.99f + 5.25f * 0.01f);  // biased variance of 0..7
    EXPECT_FLOAT_EQ(p[3], 1.0f * 0.99f + 0.0f * 0.01f);
}

TEST(LayersBatchNorm, TrainerStoresMovingStatisticsEveryStepWithEveryOptimizer) {
    for (OptimizerKind kind : {OptimizerKind::SGD, OptimizerKind::Momentum, OptimizerKind::Nesterov,
                               OptimizerKind::Adam, OptimizerKind::RMSprop}) {
        ModelConfig c;
        c.arch =
            image(3, 3, 1,
                  {conv(2, 2, 2, Activation::Relu), bn(), plain(LayerKind::Flatten), dense(2, Activation::Softmax)});
        c.compile.optimizer.kind = kind;
        c.compile.optimizer.momentum = 0.9;
        c.compile.optimizer.learning_rate = 0.05;
        c.compile.optimizer.weight_decay = 0.01;  // must skip the statistics
        c.fit.batch_size = 4;
        c = resolve_config(c.arch, c.compile, c.fit);
        Trainer t(c);
        const LayerSlice bs = t.network().slices()[1];
        const std::vector<float> x = uniform_values(9 * 8, 3, 0.0, 2.0);
        std::vector<float> y(16, 0.0f);
        for (int j = 0; j < 8; ++j) y[std::size_t(j) * 2 + (x[std::size_t(j) * 9] > 1.0f)] = 1.0f;
        // Expected: after each step the moving statistics are m*0.99 + batch*0.01, whatever the optimizer.
        std::vector<float> expect(t.params().begin() + long(bs.stats_offset), t.params().begin() + long(bs.end_offset));
        for (int step = 0; step < 2; ++step) {
            // The batch statistics of step `step`, computed on the parameters before the step.
            GradientWorkspace ws(t.network());
            std::vector<float> g(t.network().num_params()), p = t.params();
            ws.loss_and_gradient(p.data(), ConstMatrixMap(x.data() + std::size_t(step) * 36, 9, 4),
                                 ConstMatrixMap(y.data() + std::size_t(step) * 8, 2, 4), c.compile.loss, g.data(),
                                 mix_seed(c.fit.seed, step));
            for (std::size_t i = bs.stats_offset; i < bs.end_offset; ++i) EXPECT_EQ(g[i], 0.0f);
            ws.store_moving_statistics(p.data());
            expect.assign(p.begin() + long(bs.stats_offset), p.begin() + long(bs.end_offset));
            t.train_buffer(x.data() + std::size_t(step) * 36, y.data() + std::size_t(step) * 8, 4);
            std::vector<float> got(t.params().begin() + long(bs.stats_offset),
                                   t.params().begin() + long(bs.end_offset));
            EXPECT_EQ(got, expect) << to_string(kind) << " step " << step;
        }
        // The optimizer slots of the statistics stay 0.
        const auto& slots = t.optimizer().slots();
        const std::size_t np = t.network().num_params();
        for (int k = 0; k < t.optimizer().num_slots(); ++k)
            for (std::size_t i = bs.stats_offset; i < bs.end_offset; ++i) EXPECT_EQ(slots[k * np + i], 0.0f);
    }
}

// ---- learning ----------------------------------------------------------------------------------------

TEST(LayersLearning, TinyCnnLearnsBarsOrientation) {
    // 6x6 images with one bright vertical or horizontal bar on noise: a 3x3 convolution sees it.
    const int n = 96;
    std::vector<float> x(std::size_t(n) * 36), y(std::size_t(n) * 2, 0.0f);
    Rng rng(5);
    for (int j = 0; j < n; ++j) {
        const bool vertical = j % 2 == 0;
        const int at = int(rng.below(6));
        for (int i = 0; i < 36; ++i) x[std::size_t(j) * 36 + i] = float(0.3 * rng.uniform());
        for (int k = 0; k < 6; ++k) x[std::size_t(j) * 36 + (vertical ? k * 6 + at : at * 6 + k)] = 1.0f;
        y[std::size_t(j) * 2 + (vertical ? 1 : 0)] = 1.0f;
    }
    ModelConfig c =
        resolve_config(image(6, 6, 1,
                             {conv(4, 3, 3, Activation::Relu), bn(), pool(LayerKind::MaxPooling2D, 2, 2, 2, 2),
                              plain(LayerKind::Flatten), dense(2, Activation::Softmax)}),
                       CompileParams{}, FitParams{});
    c.compile.optimizer.kind = OptimizerKind::Adam;
    c.compile.optimizer.learning_rate = 0.01;
    c.fit.batch_size = 16;
    Trainer t(c);
    std::vector<double> losses;
    for (int epoch = 0; epoch < 30; ++epoch) {
        t.begin_visit();
        t.train_buffer(x.data(), y.data(), n);
        t.finish_visit();
        losses.push_back(t.counters().last_visit_loss_sum / n);
    }
    EXPECT_FALSE(t.counters().diverged);
    EXPECT_LT(losses.back(), 0.2 * losses.front()) << losses.front() << " -> " << losses.back();
    // Inference (moving statistics) classifies the training images.
    MatrixF p = predict(t.network(), t.params(), x, n);
    int right = 0;
    for (int j = 0; j < n; ++j) right += (p(1, j) > p(0, j)) == (j % 2 == 0);
    EXPECT_GE(right, n * 9 / 10);
}
