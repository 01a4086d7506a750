// Trainer: construction and restore, minibatching, weight decay, divergence, and end-to-end
// learning on small seeded problems.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "hopper/error.h"
#include "hopper/metrics.h"
#include "hopper/rng.h"
#include "hopper/trainer.h"

using namespace hopper;

namespace {

DenseLayer layer(int units, Activation act, bool bias = true, float dropout = 0.0f) {
    DenseLayer l;
    l.units = units;
    l.activation = act;
    l.use_bias = bias;
    l.dropout = dropout;
    l.initializer = act == Activation::Relu ? Initializer::HeUniform : Initializer::GlorotUniform;
    return l;
}

ModelConfig make_config(int input_dim, std::vector<DenseLayer> layers, Loss loss, OptimizerConfig opt, int batch_size,
                        uint64_t seed = 42) {
    ModelConfig c;
    c.arch.input_dim = input_dim;
    c.arch.layers = std::move(layers);
    c.compile.loss = loss;
    c.compile.loss_given = true;
    c.compile.optimizer = opt;
    c.fit.batch_size = batch_size;
    c.fit.seed = seed;
    return c;
}

OptimizerConfig optimizer(OptimizerKind kind, double lr, double momentum = 0.0) {
    OptimizerConfig o;
    o.kind = kind;
    o.learning_rate = lr;
    o.momentum = momentum;
    return o;
}

// Points in [-1,1]^2, class 1 inside the circle of radius^2 0.5 (not linearly separable).
struct Circle {
    std::vector<float> x, y;
    int rows;
    explicit Circle(int n, uint64_t seed) : rows(n) {
        Rng rng(seed);
        for (int i = 0; i < n; ++i) {
            float a = float(2 * rng.uniform() - 1), b = float(2 * rng.uniform() - 1);
            bool inside = a * a + b * b < 0.5f;
            x.push_back(a);
            x.push_back(b);
            y.push_back(inside ? 0.0f : 1.0f);
            y.push_back(inside ? 1.0f : 0.0f);
        }
    }
};

double accuracy(const Trainer& t, const std::vector<float>& x, const std::vector<float>& y, int rows) {
    CompileParams c = t.config().compile;
    c.metrics = {Metric::Accuracy};
    EvalTotals totals;
    MatrixF scratch;
    const int in = t.config().arch.input_dim, out = t.config().arch.output_dim();
    evaluate_batch(t.network(), t.params().data(), ConstMatrixMap(x.data(), in, rows),
                   ConstMatrixMap(y.data(), out, rows), c, totals, scratch);
    return totals.metric(0);
}

ModelConfig small_classifier(OptimizerConfig opt, float dropout = 0.0f) {
    return make_config(2, {layer(16, Activation::Relu, true, dropout), layer(2, Activation::Softmax)},
                       Loss::SoftmaxCrossEntropy, opt, 4);
}

}  // namespace

TEST(Trainer, FreshModelIsInitialisedFromTheFitSeed) {
    ModelConfig c = small_classifier(optimizer(OptimizerKind::Adam, 0.01));
    c.fit.seed = 77;
    Trainer t(c);
    std::vector<float> want(t.network().num_params());
    t.network().initialize(want.data(), 77);
    EXPECT_EQ(t.params(), want);
    EXPECT_EQ(t.optimizer().slots().size(), 2 * want.size());
    EXPECT_EQ(t.counters().steps, 0u);
    EXPECT_FALSE(t.counters().diverged);
}

TEST(Trainer, RestoredStateContinuesExactlyLikeTheOriginal) {
    // Adam moments and the step counter (bias correction, dropout seeds) must carry over.
    Circle data(40, 1);
    ModelConfig c = small_classifier(optimizer(OptimizerKind::Adam, 0.01), 0.2f);
    Trainer original(c);
    original.train_buffer(data.x.data(), data.y.data(), 20);
    Trainer restored(c, original.params(), original.optimizer().slots(), original.counters());
    original.train_buffer(data.x.data() + 40, data.y.data() + 40, 20);
    restored.train_buffer(data.x.data() + 40, data.y.data() + 40, 20);
    EXPECT_EQ(restored.params(), original.params());
    EXPECT_EQ(restored.optimizer().slots(), original.optimizer().slots());
    EXPECT_EQ(restored.counters().steps, 10u);
}

TEST(Trainer, RestoreRejectsStateOfTheWrongSize) {
    ModelConfig c = small_classifier(optimizer(OptimizerKind::Momentum, 0.1, 0.9));
    const std::size_t n = Trainer(c).params().size();
    auto expect_data_error = [&](std::size_t params, std::size_t slots) {
        try {
            Trainer t(c, std::vector<float>(params), std::vector<float>(slots), TrainCounters{});
            FAIL() << "accepted " << params << " params and " << slots << " slots";
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::Data);
            EXPECT_EQ(e.message(), "model state does not match its architecture");
            EXPECT_NE(e.detail().find(std::to_string(n)), std::string::npos) << e.detail();
        }
    };
    expect_data_error(n + 1, n);
    expect_data_error(n, 2 * n);  // Adam-sized slots for a momentum model
    expect_data_error(n, 0);
    EXPECT_NO_THROW(Trainer(c, std::vector<float>(n), std::vector<float>(n), TrainCounters{}));
}

TEST(Trainer, WeightDecayShrinksWeightsButNotBiases) {
    // Plain SGD: the only difference decay makes in one step is -lr * wd * w on weights.
    Circle data(8, 2);
    ModelConfig plain = small_classifier(optimizer(OptimizerKind::SGD, 0.5));
    plain.fit.batch_size = 8;
    ModelConfig decayed = plain;
    decayed.compile.optimizer.weight_decay = 0.1;
    Trainer a(plain), b(decayed);
    // Nonzero biases, so a decay wrongly applied to them would show.
    for (const LayerSlice& s : a.network().slices())
        for (int i = 0; i < s.units; ++i) a.params()[s.bias_offset + i] = b.params()[s.bias_offset + i] = 0.3f;
    const std::vector<float> before = a.params();
    a.train_buffer(data.x.data(), data.y.data(), 8);
    b.train_buffer(data.x.data(), data.y.data(), 8);
    for (const LayerSlice& s : a.network().slices()) {
        for (std::size_t i = s.weight_offset; i < s.bias_offset; ++i)
            EXPECT_NEAR(b.params()[i] - a.params()[i], -0.5f * 0.1f * before[i], 1e-6f) << i;
        for (int i = 0; i < s.units; ++i) EXPECT_EQ(b.params()[s.bias_offset + i], a.params()[s.bias_offset + i]);
    }
}

TEST(Trainer, SplittingABufferDoesNotChangeTraining) {
    // Minibatches are consecutive rows and dropout masks are keyed by the step, so one buffer of
    // 10 rows with batch 4 equals buffers of 4, 4 and 2 rows.
    Circle data(10, 3);
    ModelConfig c = small_classifier(optimizer(OptimizerKind::Nesterov, 0.05, 0.9), 0.3f);
    Trainer whole(c), parts(c);
    whole.begin_visit();
    whole.train_buffer(data.x.data(), data.y.data(), 10);
    whole.finish_visit();
    parts.begin_visit();
    parts.train_buffer(data.x.data(), data.y.data(), 4);
    parts.train_buffer(data.x.data() + 8, data.y.data() + 8, 4);
    parts.train_buffer(data.x.data() + 16, data.y.data() + 16, 2);
    parts.finish_visit();
    EXPECT_EQ(whole.params(), parts.params());
    for (const Trainer* t : {&whole, &parts}) {
        EXPECT_EQ(t->counters().steps, 3u);
        EXPECT_EQ(t->counters().samples_seen, 10u);
        EXPECT_EQ(t->counters().last_visit_samples, 10u);
        EXPECT_EQ(t->counters().visits, 1u);
        EXPECT_GT(t->counters().last_visit_loss_sum, 0.0);
    }
    EXPECT_EQ(whole.counters().last_visit_loss_sum, parts.counters().last_visit_loss_sum);
}

TEST(Trainer, TrainRowsWithoutShuffleIsTrainBufferOnEachBuffer) {
    Circle data(10, 3);
    ModelConfig c = small_classifier(optimizer(OptimizerKind::Adam, 0.01), 0.3f);
    c.fit.shuffle = false;
    Trainer rows(c), buffers(c);
    int reported = 0;
    rows.train_rows({{data.x.data(), data.y.data(), 6}, {data.x.data() + 12, data.y.data() + 12, 4}},
                    [&](int n) { reported += n; });
    buffers.train_buffer(data.x.data(), data.y.data(), 6);
    buffers.train_buffer(data.x.data() + 12, data.y.data() + 12, 4);
    EXPECT_EQ(rows.params(), buffers.params());
    EXPECT_EQ(rows.counters().steps, 3u);  // minibatches do not cross buffers: 4 + 2, then 4
    EXPECT_EQ(reported, 10);
}

TEST(Trainer, WholeBufferStepsAreStepsOnAllTheBuffersRows) {
    // fit.steps_per_epoch: each step on the whole buffer, whatever batch_size says (dropout masks
    // keyed by the step as in any minibatch).
    Circle data(10, 3);
    ModelConfig c = small_classifier(optimizer(OptimizerKind::Adam, 0.01), 0.3f);
    c.fit.steps_per_epoch = 2;
    ModelConfig full = c;
    full.fit.steps_per_epoch = 0;
    full.fit.batch_size = 10;
    Trainer whole(c), steps(full);
    whole.train_whole_buffer(data.x.data(), data.y.data(), 10, 3);
    for (int i = 0; i < 3; ++i) steps.train_buffer(data.x.data(), data.y.data(), 10);
    EXPECT_EQ(whole.params(), steps.params());
    EXPECT_EQ(whole.counters().steps, 3u);
    EXPECT_EQ(whole.counters().samples_seen, 30u);
    EXPECT_EQ(c.fit.step_rows(10), 10);
    EXPECT_EQ(full.fit.step_rows(4), 4);
    full.fit.batch_size = 3;
    EXPECT_EQ(full.fit.step_rows(10), 3);
}

TEST(Trainer, ShuffleDrawsNewMinibatchesFromTheWholeSegmentEveryPass) {
    Circle data(40, 5);
    ModelConfig c = small_classifier(optimizer(OptimizerKind::SGD, 0.1));
    ASSERT_TRUE(c.fit.shuffle);  // the default
    const std::vector<Trainer::RowBlock> blocks = {{data.x.data(), data.y.data(), 6},
                                                   {data.x.data() + 12, data.y.data() + 12, 34}};
    Trainer a(c), b(c), in_order(c);
    int reported = 0;
    a.train_rows(blocks, [&](int n) { reported += n; });
    b.train_rows(blocks);
    EXPECT_EQ(reported, 40);
    EXPECT_EQ(a.params(), b.params());  // seeded: reproducible
    EXPECT_EQ(a.counters().samples_seen, 40u);
    EXPECT_EQ(a.counters().steps, 10u);  // minibatches of 4 across both buffers
    ModelConfig ordered = c;
    ordered.fit.shuffle = false;
    Trainer plain(ordered);
    plain.train_rows(blocks);
    EXPECT_NE(a.params(), plain.params());  // the rows were reordered
    // A second pass draws another permutation (the seed mixes in the steps taken): it differs from
    // repeating the first pass's order, which a model restored to the first pass's end would draw
    // again only if the permutation ignored the steps.
    Trainer again = Trainer(c, a.params(), a.optimizer().slots(), TrainCounters{});
    a.train_rows(blocks);
    again.train_rows(blocks);
    EXPECT_NE(a.params(), again.params());
    // A restored state continues exactly like the original.
    Trainer resumed(c, b.params(), b.optimizer().slots(), b.counters());
    b.train_rows(blocks);
    resumed.train_rows(blocks);
    EXPECT_EQ(resumed.params(), b.params());
}

TEST(Trainer, ShuffleUsesEveryRowOncePerPass) {
    // A linear model with SGD on a mean-squared loss and batch = all rows: one step over the whole
    // segment, whatever the order, so the shuffled pass equals the ordered one up to summation order.
    Circle data(12, 6);
    ModelConfig c =
        make_config(2, {layer(2, Activation::Linear)}, Loss::MeanSquaredError, optimizer(OptimizerKind::SGD, 0.1), 12);
    Trainer shuffled(c);
    c.fit.shuffle = false;
    Trainer ordered(c);
    const std::vector<Trainer::RowBlock> blocks = {{data.x.data(), data.y.data(), 12}};
    shuffled.train_rows(blocks);
    ordered.train_rows(blocks);
    ASSERT_EQ(shuffled.params().size(), ordered.params().size());
    for (std::size_t i = 0; i < ordered.params().size(); ++i)
        EXPECT_NEAR(shuffled.params()[i], ordered.params()[i], 1e-6);
    EXPECT_EQ(shuffled.counters().steps, 1u);
}

TEST(Trainer, VisitsResetTheLastVisitLossOnly) {
    Circle data(12, 4);
    Trainer t(small_classifier(optimizer(OptimizerKind::SGD, 0.1)));
    t.begin_visit();
    t.train_buffer(data.x.data(), data.y.data(), 12);
    t.finish_visit();
    const double first = t.counters().last_visit_loss_sum;
    t.begin_visit();
    EXPECT_EQ(t.counters().last_visit_loss_sum, 0.0);
    EXPECT_EQ(t.counters().last_visit_samples, 0u);
    t.train_buffer(data.x.data(), data.y.data(), 12);
    t.finish_visit();
    EXPECT_EQ(t.counters().visits, 2u);
    EXPECT_EQ(t.counters().samples_seen, 24u);
    EXPECT_LT(t.counters().last_visit_loss_sum, first);  // it learned something in between
}

TEST(Trainer, MovedTrainerKeepsTrainingCorrectly) {
    // The workspace points at the network; a moved trainer must not use the old one.
    Circle data(16, 5);
    ModelConfig c = small_classifier(optimizer(OptimizerKind::Adam, 0.01));
    Trainer stay(c), source(c);
    stay.train_buffer(data.x.data(), data.y.data(), 8);
    source.train_buffer(data.x.data(), data.y.data(), 8);
    Trainer moved(std::move(source));
    stay.train_buffer(data.x.data() + 16, data.y.data() + 16, 8);
    moved.train_buffer(data.x.data() + 16, data.y.data() + 16, 8);
    EXPECT_EQ(moved.params(), stay.params());
    Trainer assigned(c);
    assigned = std::move(moved);
    assigned.train_buffer(data.x.data(), data.y.data(), 8);
    stay.train_buffer(data.x.data(), data.y.data(), 8);
    EXPECT_EQ(assigned.params(), stay.params());
}

TEST(Trainer, MlpLearnsANonlinearBoundaryWithAdamAndMomentum) {
    Circle data(1000, 6);
    for (OptimizerConfig opt : {optimizer(OptimizerKind::Adam, 0.01), optimizer(OptimizerKind::Momentum, 0.05, 0.9)}) {
        ModelConfig c = make_config(2, {layer(32, Activation::Relu), layer(2, Activation::Softmax)},
                                    Loss::SoftmaxCrossEntropy, opt, 16, 9);
        Trainer t(c);
        double acc = 0;
        int passes = 0;
        for (; passes < 150 && acc < 0.97; ++passes) {
            t.train_buffer(data.x.data(), data.y.data(), data.rows);
            acc = accuracy(t, data.x, data.y, data.rows);
        }
        EXPECT_GE(acc, 0.97) << "optimizer " << int(opt.kind) << " after " << passes << " passes";
        EXPECT_FALSE(t.counters().diverged);
    }
}

TEST(Trainer, LinearRegressionRecoversTheCoefficients) {
    // y = 2 x0 - 3 x1 + 0.5 x2 + 1, no noise: MSE has its minimum exactly there.
    const int rows = 256;
    Rng rng(10);
    std::vector<float> x, y;
    for (int i = 0; i < rows; ++i) {
        float a = float(rng.uniform() * 2 - 1), b = float(rng.uniform() * 2 - 1), d = float(rng.uniform() * 2 - 1);
        x.insert(x.end(), {a, b, d});
        y.push_back(2 * a - 3 * b + 0.5f * d + 1);
    }
    Trainer t(make_config(3, {layer(1, Activation::Linear)}, Loss::MeanSquaredError,
                          optimizer(OptimizerKind::Momentum, 0.1, 0.9), 32));
    for (int pass = 0; pass < 100; ++pass) t.train_buffer(x.data(), y.data(), rows);
    const std::vector<float>& p = t.params();
    EXPECT_NEAR(p[0], 2.0f, 1e-3f);
    EXPECT_NEAR(p[1], -3.0f, 1e-3f);
    EXPECT_NEAR(p[2], 0.5f, 1e-3f);
    EXPECT_NEAR(p[3], 1.0f, 1e-3f);
}

TEST(Trainer, DivergenceStopsTrainingAndKeepsFiniteParameters) {
    const int rows = 64;
    Rng rng(11);
    std::vector<float> x, y;
    for (int i = 0; i < rows; ++i) {
        float a = float(rng.uniform() * 10);
        x.push_back(a);
        y.push_back(3 * a);
    }
    Trainer t(
        make_config(1, {layer(1, Activation::Linear)}, Loss::MeanSquaredError, optimizer(OptimizerKind::SGD, 1e6), 8));
    t.train_buffer(x.data(), y.data(), rows);
    t.train_buffer(x.data(), y.data(), rows);
    ASSERT_TRUE(t.counters().diverged);
    for (float v : t.params()) EXPECT_TRUE(std::isfinite(v));
    const std::vector<float> frozen = t.params();
    const TrainCounters before = t.counters();
    t.train_buffer(x.data(), y.data(), rows);
    EXPECT_EQ(t.params(), frozen);
    EXPECT_EQ(t.counters().steps, before.steps);
    EXPECT_EQ(t.counters().samples_seen, before.samples_seen);
}

// Keras' class_weight: a row's categorical cross-entropy, and its gradient, times its class's
// weight. Every weight 2 is loss_weights=[2], bit for bit; weights that differ move the model as
// that class's rows repeated would (here: one step on rows of one class each).
TEST(Trainer, ClassWeightScalesEachRowsLossByItsClass) {
    Circle data(8, 5);
    ModelConfig plain = small_classifier(optimizer(OptimizerKind::SGD, 0.5));
    plain.fit.batch_size = 8;
    ModelConfig doubled = plain, weighted = plain;
    doubled.compile.loss_weight = 2.0;
    weighted.fit.class_weight = {2.0f, 2.0f};
    Trainer a(doubled), b(weighted);
    a.train_buffer(data.x.data(), data.y.data(), 8);
    b.train_buffer(data.x.data(), data.y.data(), 8);
    EXPECT_EQ(a.params(), b.params());
    EXPECT_EQ(a.counters().last_visit_loss_sum, b.counters().last_visit_loss_sum);

    // One row of class 1, weight 4: the step of that row with loss_weights=[4] (a power of two: the
    // same floats either way); a row of class 0 (weight 1) the plain step.
    std::vector<float> x1, y1, x0, y0;
    for (int i = 0; i < data.rows; ++i) {
        const bool class1 = data.y[std::size_t(2 * i + 1)] == 1.0f;
        std::vector<float>& x = class1 ? x1 : x0;
        std::vector<float>& y = class1 ? y1 : y0;
        if (!x.empty()) continue;
        x.assign(data.x.begin() + 2 * i, data.x.begin() + 2 * i + 2);
        y.assign(data.y.begin() + 2 * i, data.y.begin() + 2 * i + 2);
    }
    ASSERT_FALSE(x1.empty());
    ASSERT_FALSE(x0.empty());
    ModelConfig quadrupled = plain;
    quadrupled.compile.loss_weight = 4.0;
    ModelConfig by_class = plain;
    by_class.fit.class_weight = {1.0f, 4.0f};
    Trainer c(quadrupled), d(by_class), e(plain), f(by_class);
    c.train_buffer(x1.data(), y1.data(), 1);
    d.train_buffer(x1.data(), y1.data(), 1);
    EXPECT_EQ(c.params(), d.params());
    e.train_buffer(x0.data(), y0.data(), 1);
    f.train_buffer(x0.data(), y0.data(), 1);
    EXPECT_EQ(e.params(), f.params());
    // The data's own targets are left as they were.
    EXPECT_EQ(y1[1], 1.0f);
}

TEST(Trainer, TrainingFlushesSubnormalsAndLeavesTheThreadsModeAsItWas) {
    // Inputs of 1e-20 give first-layer gradients near 1e-20, whose squares (Adam's v) are
    // subnormal: a step flushes them to zero (they cost a microcode assist each on x86), and the
    // thread's own arithmetic keeps gradual underflow after the step.
    Circle data(64, 5);
    for (float& v : data.x) v *= 1e-20f;
    Trainer t(small_classifier(optimizer(OptimizerKind::Adam, 0.001)));
    for (int pass = 0; pass < 4; ++pass) t.train_buffer(data.x.data(), data.y.data(), data.rows);
    int subnormal = 0, zero = 0;
    for (float v : t.optimizer().slots()) {
        subnormal += std::fpclassify(v) == FP_SUBNORMAL;
        zero += v == 0.0f;
    }
    for (float v : t.params()) subnormal += std::fpclassify(v) == FP_SUBNORMAL;
    EXPECT_EQ(subnormal, 0);
    EXPECT_GT(zero, 0);  // the flushed second moments (the test would hold vacuously without them)
    volatile float tiny = 1e-38f;
    EXPECT_EQ(std::fpclassify(tiny * 1e-3f), FP_SUBNORMAL);
}
