// Optimizer update rules, checked over two consecutive steps against the formulas of optimizer.h
// evaluated in double here, so slot carry-over, bias correction and decay are all exercised.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "hopper/optimizer.h"

using namespace hopper;

namespace {

const std::vector<double> kParams = {1.0, -2.0, 0.5};
const std::vector<std::vector<double>> kGrads = {{0.1, -0.2, 0.3}, {-0.05, 0.4, 0.0}};

OptimizerConfig make(OptimizerKind kind, double lr, double decay = 0.0) {
    OptimizerConfig c;
    c.kind = kind;
    c.learning_rate = lr;
    c.decay = decay;
    c.momentum = 0.9;
    c.beta1 = 0.9;
    c.beta2 = 0.999;
    c.epsilon = 1e-7;
    c.rho = 0.9;
    return c;
}

// The header's rules, one parameter at a time, in double.
std::vector<double> reference(const OptimizerConfig& c, int steps) {
    std::vector<double> p = kParams, s1(p.size(), 0.0), s2(p.size(), 0.0);
    for (int t = 0; t < steps; ++t) {
        const double lr = c.learning_rate / (1.0 + c.decay * t);
        for (std::size_t i = 0; i < p.size(); ++i) {
            const double g = kGrads[t][i];
            switch (c.kind) {
                case OptimizerKind::SGD: p[i] -= lr * g; break;
                case OptimizerKind::Momentum:
                    s1[i] = c.momentum * s1[i] - lr * g;
                    p[i] += s1[i];
                    break;
                case OptimizerKind::Nesterov:
                    s1[i] = c.momentum * s1[i] - lr * g;
                    p[i] += c.momentum * s1[i] - lr * g;
                    break;
                case OptimizerKind::Adam: {
                    s1[i] = c.beta1 * s1[i] + (1 - c.beta1) * g;
                    s2[i] = c.beta2 * s2[i] + (1 - c.beta2) * g * g;
                    const double mhat = s1[i] / (1 - std::pow(c.beta1, t + 1));
                    const double vhat = s2[i] / (1 - std::pow(c.beta2, t + 1));
                    p[i] -= lr * mhat / (std::sqrt(vhat) + c.epsilon);
                    break;
                }
                case OptimizerKind::RMSprop:
                    s1[i] = c.rho * s1[i] + (1 - c.rho) * g * g;
                    p[i] -= lr * g / (std::sqrt(s1[i]) + c.epsilon);
                    break;
            }
        }
    }
    return p;
}

std::vector<float> run(Optimizer& opt, int steps) {
    std::vector<float> p(kParams.begin(), kParams.end());
    for (int t = 0; t < steps; ++t) {
        std::vector<float> g(kGrads[t].begin(), kGrads[t].end());
        opt.apply(p.data(), g.data(), uint64_t(t));
    }
    return p;
}

void expect_matches_reference(const OptimizerConfig& c) {
    Optimizer opt(c, kParams.size());
    std::vector<float> got = run(opt, 2);
    std::vector<double> want = reference(c, 2);
    for (std::size_t i = 0; i < want.size(); ++i)
        EXPECT_NEAR(got[i], want[i], 2e-6 * std::max(1.0, std::abs(want[i])))
            << "optimizer " << int(c.kind) << " decay " << c.decay << " parameter " << i;
}

}  // namespace

TEST(Optimizer, SlotCountsPerKind) {
    EXPECT_EQ(Optimizer::slots_for(OptimizerKind::SGD), 0);
    EXPECT_EQ(Optimizer::slots_for(OptimizerKind::Momentum), 1);
    EXPECT_EQ(Optimizer::slots_for(OptimizerKind::Nesterov), 1);
    EXPECT_EQ(Optimizer::slots_for(OptimizerKind::Adam), 2);
    EXPECT_EQ(Optimizer::slots_for(OptimizerKind::RMSprop), 1);
    Optimizer adam(make(OptimizerKind::Adam, 0.1), 7);
    EXPECT_EQ(adam.slots().size(), 14u);
    for (float v : adam.slots()) EXPECT_EQ(v, 0.0f);
}

TEST(Optimizer, SgdStepsAreHandComputed) {
    // t=0: p - 0.1 g0; t=1 with decay 1: lr = 0.1 / 2.
    Optimizer opt(make(OptimizerKind::SGD, 0.1, 1.0), 3);
    std::vector<float> p = run(opt, 2);
    EXPECT_NEAR(p[0], 1.0 - 0.01 + 0.0025, 2e-7);
    EXPECT_NEAR(p[1], -2.0 + 0.02 - 0.02, 2e-7);
    EXPECT_NEAR(p[2], 0.5 - 0.03, 2e-7);
}

TEST(Optimizer, MomentumCarriesVelocityAcrossSteps) {
    // v1 = -0.1*0.1 = -0.01; v2 = 0.9*-0.01 - 0.1*-0.05 = -0.004; p = 1 - 0.01 - 0.004.
    Optimizer opt(make(OptimizerKind::Momentum, 0.1), 3);
    std::vector<float> p = run(opt, 2);
    EXPECT_NEAR(p[0], 0.986, 1e-7);
    EXPECT_NEAR(opt.slots()[0], -0.004, 1e-8);
    expect_matches_reference(make(OptimizerKind::Momentum, 0.1));
    expect_matches_reference(make(OptimizerKind::Momentum, 0.1, 0.5));
}

TEST(Optimizer, NesterovLooksAhead) {
    // Step 1: v = -0.01, p += 0.9*-0.01 - 0.01 = -0.019. Step 2: v = -0.004,
    // p += 0.9*-0.004 + 0.005 = 0.0014. Total 1 - 0.019 + 0.0014.
    Optimizer opt(make(OptimizerKind::Nesterov, 0.1), 3);
    std::vector<float> p = run(opt, 2);
    EXPECT_NEAR(p[0], 0.9824, 1e-7);
    expect_matches_reference(make(OptimizerKind::Nesterov, 0.1));
    expect_matches_reference(make(OptimizerKind::Nesterov, 0.1, 0.5));
}

TEST(Optimizer, AdamBiasCorrectedMomentsAndSlotLayout) {
    // The first bias-corrected step has magnitude lr (up to epsilon) whatever the gradient scale.
    Optimizer one(make(OptimizerKind::Adam, 0.01), 3);
    std::vector<float> p = run(one, 1);
    EXPECT_NEAR(p[0], 1.0 - 0.01, 1e-6);
    EXPECT_NEAR(p[1], -2.0 + 0.01, 1e-6);
    // m block first, then v block.
    EXPECT_NEAR(one.slots()[0], 0.1 * 0.1, 1e-8);
    EXPECT_NEAR(one.slots()[2], 0.1 * 0.3, 1e-8);
    EXPECT_NEAR(one.slots()[3], 0.001 * 0.01, 1e-10);
    EXPECT_NEAR(one.slots()[5], 0.001 * 0.09, 1e-10);
    expect_matches_reference(make(OptimizerKind::Adam, 0.01));
    expect_matches_reference(make(OptimizerKind::Adam, 0.01, 0.5));
}

TEST(Optimizer, AdamUsesTheGivenStepForBiasCorrection) {
    // A restored model continues at step t, not at 0: a late step has almost no bias correction.
    OptimizerConfig c = make(OptimizerKind::Adam, 0.01);
    Optimizer opt(c, 1);
    float p = 0.0f, g = 1.0f;
    opt.apply(&p, &g, 1000000);
    const double m = 0.1, v = 0.001;
    const double want =
        -0.01 * (m / (1 - std::pow(0.9, 1000001.0))) / (std::sqrt(v / (1 - std::pow(0.999, 1000001.0))) + 1e-7);
    EXPECT_NEAR(p, want, 1e-7);
}

TEST(Optimizer, RmspropAndSgdMatchReference) {
    expect_matches_reference(make(OptimizerKind::RMSprop, 0.01));
    expect_matches_reference(make(OptimizerKind::RMSprop, 0.01, 0.5));
    expect_matches_reference(make(OptimizerKind::SGD, 0.3, 0.25));
}

TEST(Optimizer, BitwiseIndependentOfBufferAlignment) {
    // Restored states live in freshly allocated vectors; updates must not round by address.
    const std::size_t n = 101;  // not a multiple of any vector width
    for (OptimizerKind kind : {OptimizerKind::SGD, OptimizerKind::Momentum, OptimizerKind::Nesterov,
                               OptimizerKind::Adam, OptimizerKind::RMSprop}) {
        std::vector<float> reference;
        for (std::size_t shift = 0; shift < 16; ++shift) {
            Optimizer opt(make(kind, 0.01), n);
            std::vector<float> p(n + 16), g(n + 16);
            for (std::size_t i = 0; i < n; ++i) {
                p[shift + i] = std::sin(float(i));
                g[shift + i] = std::cos(float(i) * 0.7f) * 0.3f;
            }
            opt.apply(p.data() + shift, g.data() + shift, 0);
            opt.apply(p.data() + shift, g.data() + shift, 1);
            std::vector<float> got(p.begin() + shift, p.begin() + shift + n);
            if (reference.empty()) reference = got;
            else EXPECT_EQ(got, reference) << "optimizer " << int(kind) << " shift " << shift;
        }
    }
}
