// Network layout, initialisation, forward pass, losses and backpropagation. Gradients are checked
// against central finite differences of an independent double-precision forward pass, so a float
// rounding error in the network cannot hide a wrong derivative.

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <gtest/gtest.h>

#include "hopper/network.h"
#include "hopper/rng.h"

using namespace hopper;

namespace {

using MatrixD = Eigen::MatrixXd;

DenseLayer layer(int units, Activation act, bool bias = true, float dropout = 0.0f,
                 Initializer init = Initializer::GlorotUniform) {
    DenseLayer l;
    l.units = units;
    l.activation = act;
    l.use_bias = bias;
    l.dropout = dropout;
    l.initializer = init;
    return l;
}

Architecture make_arch(int input_dim, std::vector<DenseLayer> layers) {
    Architecture a;
    a.input_dim = input_dim;
    a.layers = std::move(layers);
    return a;
}

// Seeded values in [lo, hi), independent of the network's own initialisation.
std::vector<float> uniform_values(std::size_t n, uint64_t seed, double lo, double hi) {
    Rng rng(seed);
    std::vector<float> v(n);
    for (auto& x : v) x = float(lo + (hi - lo) * rng.uniform());
    return v;
}

// Targets that suit a loss: one-hot rows for cross-entropy, values in (0,1) otherwise.
std::vector<float> targets(int outputs, int n, Loss loss, uint64_t seed) {
    Rng rng(seed);
    std::vector<float> y(std::size_t(outputs) * n, 0.0f);
    for (int j = 0; j < n; ++j) {
        if (loss == Loss::SoftmaxCrossEntropy) {
            y[std::size_t(j) * outputs + rng.below(outputs)] = 1.0f;
        } else {
            for (int i = 0; i < outputs; ++i) y[std::size_t(j) * outputs + i] = float(0.05 + 0.9 * rng.uniform());
        }
    }
    return y;
}

double act_d(Activation a, double z) {
    switch (a) {
        case Activation::Linear: return z;
        case Activation::Relu: return z > 0 ? z : 0;
        case Activation::Tanh: return std::tanh(z);
        case Activation::Sigmoid: return 1.0 / (1.0 + std::exp(-z));
        case Activation::Softmax: break;
    }
    return 0;
}

// Independent double-precision forward pass (no dropout). min_relu_z reports how close any ReLU
// pre-activation came to its kink, where finite differences are meaningless.
MatrixD ref_forward(const Architecture& arch, const std::vector<double>& p, const MatrixD& x,
                    double* min_relu_z = nullptr) {
    MatrixD a = x;
    std::size_t off = 0;
    int inputs = arch.input_dim;
    if (min_relu_z) *min_relu_z = 1e300;
    for (const DenseLayer& l : arch.layers) {
        MatrixD w(l.units, inputs);
        for (int c = 0; c < inputs; ++c)
            for (int r = 0; r < l.units; ++r) w(r, c) = p[off + std::size_t(c) * l.units + r];
        off += std::size_t(l.units) * inputs;
        MatrixD z = w * a;
        if (l.use_bias) {
            for (int r = 0; r < l.units; ++r) z.row(r).array() += p[off + r];
            off += l.units;
        }
        if (l.activation == Activation::Softmax) {
            for (int j = 0; j < z.cols(); ++j) {
                double m = z.col(j).maxCoeff();
                z.col(j) = (z.col(j).array() - m).exp().matrix();
                z.col(j) /= z.col(j).sum();
            }
        } else {
            if (l.activation == Activation::Relu && min_relu_z)
                *min_relu_z = std::min(*min_relu_z, z.cwiseAbs().minCoeff());
            z = z.unaryExpr([&](double v) { return act_d(l.activation, v); });
        }
        a = z;
        inputs = l.units;
    }
    return a;
}

double ref_loss_mean(Loss loss, const MatrixD& p, const MatrixD& y) {
    double total = 0;
    const double k = double(p.rows());
    for (int j = 0; j < p.cols(); ++j)
        for (int i = 0; i < p.rows(); ++i) {
            double q = std::min(std::max(p(i, j), 1e-7), 1 - 1e-7), t = y(i, j);
            switch (loss) {
                case Loss::SoftmaxCrossEntropy: total -= t * std::log(q); break;
                case Loss::BinaryCrossEntropy: total -= (t * std::log(q) + (1 - t) * std::log(1 - q)) / k; break;
                case Loss::MeanSquaredError: total += (p(i, j) - t) * (p(i, j) - t) / k; break;
            }
        }
    return total / double(p.cols());
}

// A small problem: network, seeded parameters, inputs and targets.
struct Problem {
    Network net;
    std::vector<float> params;
    std::vector<float> x, y;
    int n;
    Loss loss;
    double weight = 1.0;  // Keras' loss_weights=[weight] (CompileParams::loss_weight)

    Problem(Architecture arch, Loss loss_, int n_ = 6, uint64_t seed = 7) : net(std::move(arch)), n(n_), loss(loss_) {
        params = uniform_values(net.num_params(), seed, -0.8, 0.8);
        x = uniform_values(std::size_t(net.arch().input_dim) * n, seed + 1, -1.0, 1.0);
        y = targets(net.arch().output_dim(), n, loss, seed + 2);
    }
    ConstMatrixMap xm() const { return ConstMatrixMap(x.data(), net.arch().input_dim, n); }
    ConstMatrixMap ym() const { return ConstMatrixMap(y.data(), net.arch().output_dim(), n); }

    std::vector<float> gradient(uint64_t dropout_seed = 1, double* loss_out = nullptr) const {
        GradientWorkspace ws(net);
        std::vector<float> g(net.num_params(), -99.0f);
        CompileParams c;
        c.loss = loss;
        c.loss_weight = weight;
        double l = ws.loss_and_gradient(params.data(), xm(), ym(), loss, g.data(), dropout_seed, &c);
        if (loss_out) *loss_out = l;
        return g;
    }
};

// Central differences of the double reference; fails (with the parameter index) on mismatch.
void expect_gradient_matches_reference(const Problem& pr) {
    std::vector<double> p(pr.params.begin(), pr.params.end());
    MatrixD x = pr.xm().cast<double>(), y = pr.ym().cast<double>();
    double min_relu_z;
    ref_forward(pr.net.arch(), p, x, &min_relu_z);
    ASSERT_GT(min_relu_z, 1e-3) << "test data sits on a ReLU kink; pick another seed";

    const std::vector<float> g = pr.gradient();
    const double h = 1e-5;
    double worst = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
        const double saved = p[i];
        p[i] = saved + h;
        const double up = pr.weight * ref_loss_mean(pr.loss, ref_forward(pr.net.arch(), p, x), y);
        p[i] = saved - h;
        const double down = pr.weight * ref_loss_mean(pr.loss, ref_forward(pr.net.arch(), p, x), y);
        p[i] = saved;
        const double numeric = (up - down) / (2 * h);
        const double err = std::abs(numeric - g[i]) / std::max(1e-2, std::abs(numeric));
        worst = std::max(worst, err);
        EXPECT_LT(err, 2e-3) << "parameter " << i << ": analytic " << g[i] << ", numeric " << numeric;
    }
    // Sanity: the problem actually has gradient to check.
    double norm = 0;
    for (float v : g) norm += double(v) * v;
    EXPECT_GT(norm, 1e-8);
}

}  // namespace

TEST(NetworkLayout, WeightsColumnMajorThenBiasPerLayer) {
    Network net(
        make_arch(3, {layer(5, Activation::Relu), layer(2, Activation::Softmax, false), layer(4, Activation::Linear)}));
    ASSERT_EQ(net.slices().size(), 3u);
    EXPECT_EQ(net.slices()[0].weight_offset, 0u);
    EXPECT_EQ(net.slices()[0].bias_offset, 15u);
    EXPECT_EQ(net.slices()[1].weight_offset, 20u);
    EXPECT_EQ(net.slices()[1].inputs, 5);
    EXPECT_EQ(net.slices()[2].weight_offset, 30u);  // layer 1 has no bias
    EXPECT_EQ(net.slices()[2].bias_offset, 38u);
    EXPECT_EQ(net.num_params(), 42u);
}

TEST(NetworkPredict, MatchesDoubleReferenceForEveryActivation) {
    for (Activation act :
         {Activation::Linear, Activation::Relu, Activation::Tanh, Activation::Sigmoid, Activation::Softmax}) {
        Problem pr(make_arch(4, {layer(6, Activation::Tanh), layer(3, act)}), Loss::MeanSquaredError, 5);
        MatrixF out;
        pr.net.predict(pr.params.data(), pr.xm(), out);
        std::vector<double> p(pr.params.begin(), pr.params.end());
        MatrixD ref = ref_forward(pr.net.arch(), p, pr.xm().cast<double>());
        ASSERT_EQ(out.rows(), 3);
        ASSERT_EQ(out.cols(), 5);
        EXPECT_LT((out.cast<double>() - ref).cwiseAbs().maxCoeff(), 1e-5) << int(act);
    }
}

TEST(NetworkPredict, ThreeLayersLandInOutputBuffer) {
    // Odd and even layer counts use the ping-pong buffers differently.
    for (int depth : {1, 2, 3, 4}) {
        std::vector<DenseLayer> layers;
        for (int d = 0; d + 1 < depth; ++d) layers.push_back(layer(5, Activation::Tanh));
        layers.push_back(layer(2, Activation::Sigmoid));
        Problem pr(make_arch(3, layers), Loss::MeanSquaredError, 4);
        MatrixF out(7, 7);
        pr.net.predict(pr.params.data(), pr.xm(), out);
        std::vector<double> p(pr.params.begin(), pr.params.end());
        MatrixD ref = ref_forward(pr.net.arch(), p, pr.xm().cast<double>());
        ASSERT_EQ(out.rows(), 2);
        EXPECT_LT((out.cast<double>() - ref).cwiseAbs().maxCoeff(), 1e-5) << depth;
    }
}

TEST(NetworkPredict, SigmoidAndSoftmaxStayFiniteForHugeInputs) {
    // One input with weight 1, bias 0: outputs are activations of x itself.
    Network sig(make_arch(1, {layer(1, Activation::Sigmoid)}));
    std::vector<float> p = {1.0f, 0.0f};
    std::vector<float> x = {-1000.0f, -30.0f, 0.0f, 30.0f, 1000.0f};
    MatrixF out;
    sig.predict(p.data(), ConstMatrixMap(x.data(), 1, 5), out);
    EXPECT_EQ(out(0, 0), 0.0f);
    EXPECT_NEAR(out(0, 1) / 9.357623e-14f, 1.0f, 1e-5f);  // tiny, not flushed to zero
    EXPECT_EQ(out(0, 2), 0.5f);
    EXPECT_EQ(out(0, 4), 1.0f);

    Network soft(make_arch(1, {layer(2, Activation::Softmax)}));
    std::vector<float> q = {1.0f, -1.0f, 0.0f, 0.0f};  // logits x and -x
    soft.predict(q.data(), ConstMatrixMap(x.data(), 1, 5), out);
    for (int j = 0; j < 5; ++j) {
        EXPECT_TRUE(std::isfinite(out(0, j)) && std::isfinite(out(1, j)));
        EXPECT_NEAR(out(0, j) + out(1, j), 1.0f, 1e-6f);
    }
    EXPECT_EQ(out(0, 4), 1.0f);
}

TEST(LossSum, HandComputedValuesAndClipping) {
    MatrixF p(2, 2);
    p << 0.25f, 0.0f,  // column 0: (0.25, 0.75); column 1: (0, 1)
        0.75f, 1.0f;
    std::vector<float> yv = {0, 1, 1, 0};
    ConstMatrixMap y(yv.data(), 2, 2);
    const double clip_lo = 1e-7, clip_hi = double(1.0f - 1e-7f);
    // Cross-entropy: -log 0.75 - log(clip(0)).
    EXPECT_NEAR(loss_sum(Loss::SoftmaxCrossEntropy, p, y), -std::log(0.75) - std::log(clip_lo), 1e-5);
    // Binary cross-entropy averages over the two outputs of each sample.
    double bce0 = (-std::log(0.75) - std::log(0.75)) / 2;
    double bce1 = (-std::log(clip_lo) - std::log(1 - clip_hi)) / 2;
    EXPECT_NEAR(loss_sum(Loss::BinaryCrossEntropy, p, y), bce0 + bce1, 1e-4);
    EXPECT_NEAR(loss_sum(Loss::MeanSquaredError, p, y), (0.0625 + 0.0625) / 2 + (1.0 + 1.0) / 2, 1e-12);
}

// ---- Gradients against finite differences ----

struct GradCase {
    std::string name;
    Architecture arch;
    Loss loss;
};

class GradientCheck : public ::testing::TestWithParam<GradCase> {};

TEST_P(GradientCheck, MatchesFiniteDifferences) {
    const GradCase& c = GetParam();
    expect_gradient_matches_reference(Problem(c.arch, c.loss));
}

INSTANTIATE_TEST_SUITE_P(
    Network, GradientCheck,
    ::testing::Values(
        // Every hidden activation, under the natural softmax + cross-entropy output.
        GradCase{"HiddenLinear", make_arch(4, {layer(5, Activation::Linear), layer(3, Activation::Softmax)}),
                 Loss::SoftmaxCrossEntropy},
        GradCase{"HiddenRelu", make_arch(4, {layer(5, Activation::Relu), layer(3, Activation::Softmax)}),
                 Loss::SoftmaxCrossEntropy},
        GradCase{"HiddenTanh", make_arch(4, {layer(5, Activation::Tanh), layer(3, Activation::Softmax)}),
                 Loss::SoftmaxCrossEntropy},
        GradCase{"HiddenSigmoid", make_arch(4, {layer(5, Activation::Sigmoid), layer(3, Activation::Softmax)}),
                 Loss::SoftmaxCrossEntropy},
        // Each loss with its natural output (fast paths), then the general chain rule.
        GradCase{"SigmoidBce", make_arch(4, {layer(5, Activation::Tanh), layer(3, Activation::Sigmoid)}),
                 Loss::BinaryCrossEntropy},
        GradCase{"SingleSigmoidBce", make_arch(4, {layer(1, Activation::Sigmoid)}), Loss::BinaryCrossEntropy},
        GradCase{"LinearMse", make_arch(4, {layer(5, Activation::Tanh), layer(3, Activation::Linear)}),
                 Loss::MeanSquaredError},
        GradCase{"SoftmaxMse", make_arch(4, {layer(5, Activation::Tanh), layer(3, Activation::Softmax)}),
                 Loss::MeanSquaredError},
        GradCase{"SigmoidMse", make_arch(4, {layer(5, Activation::Tanh), layer(3, Activation::Sigmoid)}),
                 Loss::MeanSquaredError},
        GradCase{"TanhMse", make_arch(4, {layer(5, Activation::Sigmoid), layer(3, Activation::Tanh)}),
                 Loss::MeanSquaredError},
        GradCase{"ReluMse", make_arch(4, {layer(5, Activation::Tanh), layer(3, Activation::Relu)}),
                 Loss::MeanSquaredError},
        GradCase{"SigmoidCrossEntropy", make_arch(4, {layer(5, Activation::Tanh), layer(3, Activation::Sigmoid)}),
                 Loss::SoftmaxCrossEntropy},
        GradCase{"SoftmaxBce", make_arch(4, {layer(5, Activation::Tanh), layer(3, Activation::Softmax)}),
                 Loss::BinaryCrossEntropy},
        // Without biases, and deeper stacks mixing activations.
        GradCase{"NoBias", make_arch(4, {layer(5, Activation::Tanh, false), layer(3, Activation::Softmax, false)}),
                 Loss::SoftmaxCrossEntropy},
        GradCase{"FourLayers",
                 make_arch(3, {layer(6, Activation::Relu), layer(5, Activation::Tanh, false),
                               layer(4, Activation::Sigmoid), layer(3, Activation::Softmax)}),
                 Loss::SoftmaxCrossEntropy},
        GradCase{"SingleLinearLayer", make_arch(4, {layer(2, Activation::Linear)}), Loss::MeanSquaredError}),
    [](const ::testing::TestParamInfo<GradCase>& info) { return info.param.name; });

TEST(NetworkGradient, FastPathsEqualGeneralChainRule) {
    // A dropout rate of 1e-9 keeps every unit with scale exactly 1.0f, so outputs are unchanged,
    // but any dropout on the output layer routes the gradient through the general chain rule.
    struct Case {
        Activation act;
        Loss loss;
    };
    for (Case c :
         {Case{Activation::Softmax, Loss::SoftmaxCrossEntropy}, Case{Activation::Sigmoid, Loss::BinaryCrossEntropy}}) {
        Problem fast(make_arch(4, {layer(5, Activation::Relu), layer(3, c.act)}), c.loss, 8);
        Problem general(make_arch(4, {layer(5, Activation::Relu), layer(3, c.act, true, 1e-9f)}), c.loss, 8);
        // Soft, unnormalised targets: the softmax fast path must not assume one-hot rows.
        fast.y = targets(3, 8, Loss::MeanSquaredError, 99);
        general.y = fast.y;
        double lf, lg;
        std::vector<float> gf = fast.gradient(1, &lf), gg = general.gradient(1, &lg);
        EXPECT_EQ(lf, lg);
        for (std::size_t i = 0; i < gf.size(); ++i)
            EXPECT_NEAR(gf[i], gg[i], 1e-6f + 1e-4f * std::abs(gg[i])) << int(c.act) << " " << i;
    }
}

// Keras' loss_weights=[w]: the loss w * L and its gradient, on the fused softmax path and the
// general chain rule, against finite differences of the weighted double reference.
TEST(NetworkGradient, LossWeightScalesLossAndGradient) {
    for (double w : {2.0, 0.25}) {
        for (Loss loss : {Loss::SoftmaxCrossEntropy, Loss::MeanSquaredError}) {
            Problem pr(make_arch(4, {layer(5, Activation::Tanh), layer(3, Activation::Softmax)}), loss);
            double plain = 0;
            pr.gradient(1, &plain);
            pr.weight = w;
            double weighted = 0;
            pr.gradient(1, &weighted);
            EXPECT_NEAR(weighted, w * plain, 1e-6 * std::abs(w * plain)) << w;
            expect_gradient_matches_reference(pr);
        }
    }
    Problem zero(make_arch(4, {layer(3, Activation::Softmax)}), Loss::SoftmaxCrossEntropy);
    zero.weight = 0.0;
    double l = 1;
    for (float g : zero.gradient(1, &l)) EXPECT_EQ(g, 0.0f);
    EXPECT_EQ(l, 0.0);
}

TEST(NetworkGradient, IsTheMeanOverTheBatch) {
    Problem pr(make_arch(3, {layer(4, Activation::Tanh), layer(2, Activation::Softmax)}), Loss::SoftmaxCrossEntropy, 2);
    GradientWorkspace ws(pr.net);
    std::vector<float> both(pr.net.num_params()), g0(both.size()), g1(both.size());
    double l = ws.loss_and_gradient(pr.params.data(), pr.xm(), pr.ym(), pr.loss, both.data(), 0);
    double l0 = ws.loss_and_gradient(pr.params.data(), ConstMatrixMap(pr.x.data(), 3, 1),
                                     ConstMatrixMap(pr.y.data(), 2, 1), pr.loss, g0.data(), 0);
    double l1 = ws.loss_and_gradient(pr.params.data(), ConstMatrixMap(pr.x.data() + 3, 3, 1),
                                     ConstMatrixMap(pr.y.data() + 2, 2, 1), pr.loss, g1.data(), 0);
    EXPECT_NEAR(l, l0 + l1, 1e-6);  // the loss is a sum, the gradient a mean
    for (std::size_t i = 0; i < both.size(); ++i) EXPECT_NEAR(both[i], 0.5f * (g0[i] + g1[i]), 1e-6f) << i;
}

TEST(NetworkGradient, WorkspaceReuseAcrossBatchSizesGivesFreshResults) {
    // Buffers are sized for the largest batch and reused for smaller ones.
    Problem big(make_arch(4, {layer(6, Activation::Relu, true, 0.3f), layer(3, Activation::Softmax)}),
                Loss::SoftmaxCrossEntropy, 9);
    Problem small = big;
    small.n = 4;
    GradientWorkspace ws(big.net);
    std::vector<float> g(big.net.num_params());
    for (const Problem* pr : {&big, &small, &big, &small}) {
        double l = ws.loss_and_gradient(pr->params.data(), pr->xm(), pr->ym(), pr->loss, g.data(), 5);
        double lf;
        std::vector<float> fresh = pr->gradient(5, &lf);
        EXPECT_EQ(l, lf);
        for (std::size_t i = 0; i < g.size(); ++i) EXPECT_EQ(g[i], fresh[i]) << pr->n << " " << i;
    }
}

// ---- Dropout ----

namespace {
// The loss with dropout can only be evaluated by the workspace itself; with a fixed seed the
// masks are fixed, so central differences of that float loss still check the gradient.
void expect_dropout_gradient_matches_float_differences(Problem pr, uint64_t seed) {
    // Dropout does not move pre-activations of the first layer, so the reference can vouch that
    // no step straddles a ReLU kink there (the only ReLU layer these tests use).
    double min_relu_z;
    ref_forward(pr.net.arch(), std::vector<double>(pr.params.begin(), pr.params.end()), pr.xm().cast<double>(),
                &min_relu_z);
    ASSERT_GT(min_relu_z, 1e-2) << "test data sits near a ReLU kink; pick another seed";
    GradientWorkspace ws(pr.net);
    std::vector<float> g(pr.net.num_params()), scratch(g.size());
    ws.loss_and_gradient(pr.params.data(), pr.xm(), pr.ym(), pr.loss, g.data(), seed);
    // Small enough to rarely straddle a ReLU kink, large enough for float loss rounding.
    const float h = 1e-3f;
    for (std::size_t i = 0; i < g.size(); ++i) {
        const float saved = pr.params[i];
        pr.params[i] = saved + h;
        double up = ws.loss_and_gradient(pr.params.data(), pr.xm(), pr.ym(), pr.loss, scratch.data(), seed);
        pr.params[i] = saved - h;
        double down = ws.loss_and_gradient(pr.params.data(), pr.xm(), pr.ym(), pr.loss, scratch.data(), seed);
        pr.params[i] = saved;
        const double numeric = (up - down) / (2 * h) / pr.n;
        EXPECT_NEAR(g[i], numeric, 1e-3 + 1e-2 * std::abs(numeric))
            << "parameter " << i << " of " << pr.net.arch().layers.size() << " layers, "
            << "first activation " << int(pr.net.arch().layers[0].activation);
    }
}
}  // namespace

TEST(NetworkDropout, GradientMatchesFiniteDifferencesWithFixedMasks) {
    for (Activation act : {Activation::Linear, Activation::Relu, Activation::Tanh, Activation::Sigmoid}) {
        Problem pr(make_arch(4, {layer(8, act, true, 0.4f), layer(3, Activation::Softmax)}), Loss::SoftmaxCrossEntropy,
                   6, 20);
        expect_dropout_gradient_matches_float_differences(pr, 11);
    }
}

TEST(NetworkDropout, GradientThroughDroppedSoftmaxAndSigmoidOutputs) {
    // Dropout on the output layer takes the general path, including the softmax Jacobian with
    // dropped units (their pre-dropout probabilities still enter the Jacobian).
    expect_dropout_gradient_matches_float_differences(Problem(make_arch(4, {layer(5, Activation::Tanh),
                                                                            layer(4, Activation::Softmax, true, 0.5f)}),
                                                              Loss::MeanSquaredError, 6),
                                                      3);
    expect_dropout_gradient_matches_float_differences(Problem(make_arch(4, {layer(5, Activation::Tanh),
                                                                            layer(4, Activation::Sigmoid, true, 0.3f)}),
                                                              Loss::MeanSquaredError, 6),
                                                      3);
}

TEST(NetworkDropout, MasksAreSeededScaledAndDropTheRequestedFraction) {
    // One input of 1 and unit weights make each output equal to its mask entry; with MSE against
    // zero targets, dL/dW_i = 2 * mask_i^2 / units, so the gradient reveals the mask.
    const int units = 4000;
    const float rate = 0.25f;
    Network net(make_arch(1, {layer(units, Activation::Linear, false, rate)}));
    std::vector<float> w(units, 1.0f), x = {1.0f}, y(units, 0.0f);
    GradientWorkspace ws(net);
    auto mask_grad = [&](uint64_t seed) {
        std::vector<float> g(units);
        ws.loss_and_gradient(w.data(), ConstMatrixMap(x.data(), 1, 1), ConstMatrixMap(y.data(), units, 1),
                             Loss::MeanSquaredError, g.data(), seed);
        return g;
    };
    const std::vector<float> a = mask_grad(1), b = mask_grad(1), c = mask_grad(2);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
    const float scale = 1.0f / (1.0f - rate);
    const float kept_grad = 2.0f * scale * scale / units;
    int dropped = 0;
    for (float v : a) {
        if (v == 0.0f) ++dropped;
        else EXPECT_FLOAT_EQ(v, kept_grad);
    }
    // Binomial(4000, 0.25): mean 1000, sd ~27.
    EXPECT_NEAR(dropped, 1000, 120);
}

// ---- Initialisation ----

TEST(NetworkInit, DeterministicPerSeedAndDifferentAcrossSeeds) {
    Network net(make_arch(20, {layer(30, Activation::Relu), layer(5, Activation::Softmax)}));
    std::vector<float> a(net.num_params(), 9.0f), b(a.size(), 7.0f), c(a.size());
    net.initialize(a.data(), 123);
    net.initialize(b.data(), 123);
    net.initialize(c.data(), 124);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
    // Biases start at zero whatever the buffer held.
    for (const LayerSlice& s : net.slices())
        for (int i = 0; i < s.units; ++i) EXPECT_EQ(a[s.bias_offset + i], 0.0f);
    // One stream per layer: changing a later layer leaves earlier layers' weights alone.
    Network other(make_arch(20, {layer(30, Activation::Relu), layer(9, Activation::Sigmoid, false)}));
    std::vector<float> d(other.num_params());
    other.initialize(d.data(), 123);
    EXPECT_TRUE(std::equal(a.begin(), a.begin() + 630, d.begin()));
}

TEST(NetworkInit, VarianceAndRangeMatchEachInitializer) {
    const int fan_in = 200, fan_out = 100;
    struct Case {
        Initializer init;
        double var;
        double bound;
    };
    const double glorot_var = 2.0 / (fan_in + fan_out), he_var = 2.0 / fan_in;
    for (Case c :
         {Case{Initializer::GlorotUniform, glorot_var, std::sqrt(6.0 / (fan_in + fan_out))},
          Case{Initializer::GlorotNormal, glorot_var, 0}, Case{Initializer::HeUniform, he_var, std::sqrt(6.0 / fan_in)},
          Case{Initializer::HeNormal, he_var, 0}}) {
        Network net(make_arch(fan_in, {layer(fan_out, Activation::Relu, true, 0.0f, c.init)}));
        std::vector<float> p(net.num_params());
        net.initialize(p.data(), 5);
        const std::size_t nw = std::size_t(fan_in) * fan_out;
        double sum = 0, sq = 0, maxabs = 0;
        for (std::size_t i = 0; i < nw; ++i) {
            sum += p[i];
            sq += double(p[i]) * p[i];
            maxabs = std::max(maxabs, std::abs(double(p[i])));
        }
        const double mean = sum / nw, var = sq / nw - mean * mean;
        // 20000 draws: the sample variance is within a few percent of the true one.
        EXPECT_NEAR(var / c.var, 1.0, 0.05) << int(c.init);
        EXPECT_NEAR(mean, 0.0, 4 * std::sqrt(c.var / nw)) << int(c.init);
        if (c.bound > 0) {
            EXPECT_LE(maxabs, c.bound);
            EXPECT_GT(maxabs, 0.99 * c.bound);  // the whole range is used
        }
    }
    Network zeros(make_arch(3, {layer(2, Activation::Linear, true, 0.0f, Initializer::Zeros)}));
    std::vector<float> z(zeros.num_params(), 1.0f);
    zeros.initialize(z.data(), 1);
    for (float v : z) EXPECT_EQ(v, 0.0f);
}

// ---- Reproducibility ----

TEST(NetworkGradient, BitwiseIndependentOfBufferAlignment) {
    // Packed data and model state land at arbitrary addresses; a restored model must train
    // exactly like the original, so no result may depend on where a buffer starts.
    for (Architecture arch :
         {make_arch(3, {layer(5, Activation::Tanh), layer(2, Activation::Softmax)}),
          make_arch(70, {layer(40, Activation::Relu, true, 0.2f), layer(10, Activation::Softmax)})}) {
        Problem pr(arch, Loss::SoftmaxCrossEntropy, 33);
        GradientWorkspace ws(pr.net);
        const std::size_t np = pr.net.num_params();
        std::vector<float> reference;
        double reference_loss = 0;
        for (std::size_t shift = 0; shift < 16; shift += 3) {
            // Copies of every input at `shift` floats into fresh buffers.
            std::vector<float> p(np + 16), x(pr.x.size() + 16), y(pr.y.size() + 16), g(np + 16);
            std::copy(pr.params.begin(), pr.params.end(), p.begin() + shift);
            std::copy(pr.x.begin(), pr.x.end(), x.begin() + shift);
            std::copy(pr.y.begin(), pr.y.end(), y.begin() + shift);
            const int in = arch.input_dim, out = arch.output_dim();
            double l = ws.loss_and_gradient(p.data() + shift, ConstMatrixMap(x.data() + shift, in, pr.n),
                                            ConstMatrixMap(y.data() + shift, out, pr.n), pr.loss, g.data() + shift, 17);
            std::vector<float> got(g.begin() + shift, g.begin() + shift + np);
            if (reference.empty()) {
                reference = got;
                reference_loss = l;
            } else {
                EXPECT_EQ(l, reference_loss) << "shift " << shift;
                EXPECT_EQ(got, reference) << "shift " << shift;
            }
        }
    }
}
