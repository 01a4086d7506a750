// Optimizer update rules, checked over two consecutive steps against the formulas of optimizer.h
// evaluated in double here, so slot carry-over, bias correction and decay are all exercised.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "hopper/optimizer.h"
#include "hopper/state_format.h"
#include "hopper/trainer.h"

using namespace hopper;

namespace {

const std::vector<double> kParams = {1.0, -2.0, 0.5};
const std::vector<std::vector<double>> kGrads = {{0.1, -0.2, 0.3}, {-0.05, 0.4, 0.0}, {0.2, 0.01, -0.7}};

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

// The header's rules, one parameter at a time, in double; Adagrad, Adadelta, Adamax and Nadam as
// tf.keras 2.x writes them (Keras' Nadam keeps its momentum cache, the schedule's product, as state).
std::vector<double> reference(const OptimizerConfig& c, int steps) {
    std::vector<double> p = kParams, s1(p.size(), 0.0), s2(p.size(), 0.0);
    if (c.kind == OptimizerKind::Adagrad) s1.assign(p.size(), c.initial_accumulator_value);
    double m_cache = 1.0;  // Nadam
    for (int t = 0; t < steps; ++t) {
        const double lr = c.learning_rate / (1.0 + c.decay * t);
        // Nadam's _prepare_local: local_step t+1, next_step t+2, decay_base 0.96.
        const double mu_t = c.beta1 * (1.0 - 0.5 * std::pow(0.96, c.schedule_decay * (t + 1)));
        const double mu_t1 = c.beta1 * (1.0 - 0.5 * std::pow(0.96, c.schedule_decay * (t + 2)));
        m_cache *= mu_t;
        const double m_schedule_next = m_cache * mu_t1;
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
                case OptimizerKind::Adagrad:  // ApplyAdagradV2
                    s1[i] += g * g;
                    p[i] -= lr * g / (std::sqrt(s1[i]) + c.epsilon);
                    break;
                case OptimizerKind::Adadelta: {  // ApplyAdadelta
                    s1[i] = s1[i] * c.rho + g * g * (1 - c.rho);
                    const double update = std::sqrt(s2[i] + c.epsilon) / std::sqrt(s1[i] + c.epsilon) * g;
                    p[i] -= update * lr;
                    s2[i] = s2[i] * c.rho + update * update * (1 - c.rho);
                    break;
                }
                case OptimizerKind::Adamax:  // ApplyAdaMax
                    s1[i] += (g - s1[i]) * (1 - c.beta1);
                    s2[i] = std::max(c.beta2 * s2[i], std::abs(g));
                    p[i] -= lr / (1 - std::pow(c.beta1, t + 1)) * (s1[i] / (s2[i] + c.epsilon));
                    break;
                case OptimizerKind::Nadam: {  // Nadam._resource_apply_dense; no lr decay
                    const double g_prime = g / (1 - m_cache);
                    s1[i] = c.beta1 * s1[i] + (1 - c.beta1) * g;
                    const double m_t_prime = s1[i] / (1 - m_schedule_next);
                    s2[i] = c.beta2 * s2[i] + (1 - c.beta2) * g * g;
                    const double v_t_prime = s2[i] / (1 - std::pow(c.beta2, t + 1));
                    const double m_t_bar = (1 - mu_t) * g_prime + mu_t1 * m_t_prime;
                    p[i] -= c.learning_rate * m_t_bar / (std::sqrt(v_t_prime) + c.epsilon);
                    break;
                }
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

void expect_matches_reference(const OptimizerConfig& c, int steps = 2) {
    Optimizer opt(c, kParams.size());
    std::vector<float> got = run(opt, steps);
    std::vector<double> want = reference(c, steps);
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
    EXPECT_EQ(Optimizer::slots_for(OptimizerKind::Adagrad), 1);
    EXPECT_EQ(Optimizer::slots_for(OptimizerKind::Adadelta), 2);
    EXPECT_EQ(Optimizer::slots_for(OptimizerKind::Adamax), 2);
    EXPECT_EQ(Optimizer::slots_for(OptimizerKind::Nadam), 2);
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
                               OptimizerKind::Adam, OptimizerKind::RMSprop, OptimizerKind::Adagrad,
                               OptimizerKind::Adadelta, OptimizerKind::Adamax, OptimizerKind::Nadam}) {
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

// ---- Adagrad, Adadelta, Adamax, Nadam (tf.keras 2.x) ------------------------------------------

TEST(Optimizer, AdagradAccumulatorStartsAtItsInitialValue) {
    OptimizerConfig c = make(OptimizerKind::Adagrad, 0.1);
    c.initial_accumulator_value = 0.1;
    Optimizer opt(c, 3);
    ASSERT_EQ(opt.slots().size(), 3u);
    for (float v : opt.slots()) EXPECT_EQ(v, 0.1f);
    // acc = 0.1 + 0.01 = 0.11; p = 1 - 0.1 * 0.1 / (sqrt(0.11) + 1e-7) = 0.96984886.
    std::vector<float> p = run(opt, 1);
    EXPECT_NEAR(opt.slots()[0], 0.11, 1e-8);
    EXPECT_NEAR(p[0], 0.96984886, 1e-6);
    expect_matches_reference(c, 3);
    expect_matches_reference(make(OptimizerKind::Adagrad, 0.1, 0.5), 3);
    c.initial_accumulator_value = 0.0;
    expect_matches_reference(c, 3);
    EXPECT_EQ(Optimizer::initial_slots(c, 4), std::vector<float>(4, 0.0f));
}

TEST(Optimizer, AdadeltaScalesByTheRatioOfAccumulatedUpdatesAndGradients) {
    OptimizerConfig c = make(OptimizerKind::Adadelta, 1.0);
    c.rho = 0.95;
    Optimizer opt(c, 3);
    // a = 0.05 * 0.01 = 5e-4; d = sqrt(1e-7) / sqrt(5e-4 + 1e-7) * 0.1 = 1.41407e-3; u = 0.05 d^2.
    std::vector<float> p = run(opt, 1);
    EXPECT_NEAR(opt.slots()[0], 5e-4, 1e-10);
    EXPECT_NEAR(p[0], 1.0 - 1.414072e-3, 1e-6);
    EXPECT_NEAR(opt.slots()[3], 0.05 * 1.414072e-3 * 1.414072e-3, 1e-11);  // u block after a block
    expect_matches_reference(c, 3);
    OptimizerConfig d = make(OptimizerKind::Adadelta, 0.5, 0.5);
    d.rho = 0.95;
    expect_matches_reference(d, 3);
}

TEST(Optimizer, AdamaxUsesTheInfinityNorm) {
    // Step 1: m = 0.1 g, u = |g|: p -= 0.01 / 0.1 * 0.1 g / (|g| + eps), a step of lr against sign(g).
    Optimizer opt(make(OptimizerKind::Adamax, 0.01), 3);
    std::vector<float> p = run(opt, 1);
    EXPECT_NEAR(p[0], 0.99, 1e-6);
    EXPECT_NEAR(p[1], -1.99, 1e-6);
    EXPECT_NEAR(opt.slots()[3], 0.1, 1e-8);  // u = max(0, |0.1|)
    expect_matches_reference(make(OptimizerKind::Adamax, 0.01), 3);
    expect_matches_reference(make(OptimizerKind::Adamax, 0.01, 0.5), 3);
    // After step 2, u of the third parameter is 0.999 * 0.3 (its gradient 0 is smaller).
    Optimizer two(make(OptimizerKind::Adamax, 0.01), 3);
    run(two, 2);
    EXPECT_NEAR(two.slots()[5], 0.999 * 0.3, 1e-7);
}

TEST(Optimizer, NadamFollowsKerasMomentumSchedule) {
    // Step 1: mu_1 = 0.9 (1 - 0.5 * 0.96^0.004) = 0.45007347, mu_2 = 0.45014693; the gradient term
    // is g, the momentum term mu_2 * 0.1 g / (1 - mu_1 mu_2) = 0.0564518 g, over |g|.
    OptimizerConfig c = make(OptimizerKind::Nadam, 0.01);
    Optimizer opt(c, 3);
    std::vector<float> p = run(opt, 1);
    EXPECT_NEAR(p[0], 1.0 - 0.01 * 1.0564518, 1e-6);
    expect_matches_reference(c, 3);
    c.schedule_decay = 0.5;
    c.beta1 = 0.7;
    expect_matches_reference(c, 3);
    // Over many steps the schedule's product underflows to 0 (and the cache restarts for an
    // earlier step): the same parameters whichever way the steps are reached.
    OptimizerConfig l = make(OptimizerKind::Nadam, 0.01);
    Optimizer a(l, 3), b(l, 3);
    std::vector<float> pa(kParams.begin(), kParams.end()), pb = pa;
    const std::vector<float> g = {0.1f, -0.2f, 0.3f};
    for (uint64_t t = 0; t < 2000; ++t) a.apply(pa.data(), g.data(), t);
    for (uint64_t t = 0; t < 2000; ++t) {
        Optimizer other(make(OptimizerKind::Nadam, 0.01), 3);  // interleaved: another schedule position
        std::vector<float> q = pb;
        other.apply(q.data(), g.data(), 5);
        b.apply(pb.data(), g.data(), t);
    }
    EXPECT_EQ(pa, pb);
    for (float v : pa) EXPECT_TRUE(std::isfinite(v));
}

TEST(Optimizer, NewOptimizersTrainOnlyTrainableRanges) {
    for (OptimizerKind k :
         {OptimizerKind::Adagrad, OptimizerKind::Adadelta, OptimizerKind::Adamax, OptimizerKind::Nadam}) {
        OptimizerConfig c = make(k, 0.1);
        // Parameters 0 and 2 train, 1 is frozen: the same as the whole-vector update of 0 and 2.
        Optimizer part(c, 3, {ParamRange{0, 1}, ParamRange{2, 3}});
        EXPECT_EQ(part.slots().size(), std::size_t(Optimizer::slots_for(k)) * 2);
        std::vector<float> p(kParams.begin(), kParams.end());
        std::vector<float> g(kGrads[0].begin(), kGrads[0].end());
        part.apply(p.data(), g.data(), 0);
        EXPECT_EQ(p[1], -2.0f) << int(k);
        Optimizer whole(c, 2);
        std::vector<float> q = {1.0f, 0.5f}, h = {0.1f, 0.3f};
        whole.apply(q.data(), h.data(), 0);
        EXPECT_EQ(p[0], q[0]) << int(k);
        EXPECT_EQ(p[2], q[1]) << int(k);
    }
}

// A state trained by another optimizer, restored for Adagrad (warm start with a new optimizer):
// the weights are kept and Adagrad's accumulator starts at initial_accumulator_value, as fresh.
TEST(Optimizer, AdagradRestoredFromAnotherOptimizerStartsItsAccumulator) {
    const Architecture arch = parse_architecture(
        R"({"input_dim": 3, "layers": [{"units": 4, "activation": "tanh"}, {"units": 2, "activation": "softmax"}]})");
    Trainer adam(resolve_config(arch, parse_compile_params("optimizer='Adam(lr=0.01)'"), parse_fit_params("")));
    const ModelConfig ada =
        resolve_config(arch, parse_compile_params("optimizer='Adagrad(initial_accumulator_value=0.5)'"),
                       parse_fit_params(""));
    bool kept = true;
    Trainer t = restore_for_config(serialize_state(adam), ada, &kept);
    EXPECT_FALSE(kept);
    EXPECT_EQ(t.params(), adam.params());
    ASSERT_EQ(t.optimizer().slots().size(), arch.num_params());
    for (float v : t.optimizer().slots()) EXPECT_EQ(v, 0.5f);
    // Round trip of the state format: the slots come back exactly.
    Trainer back = deserialize_state(serialize_state(t));
    EXPECT_EQ(back.optimizer().slots(), t.optimizer().slots());
}
