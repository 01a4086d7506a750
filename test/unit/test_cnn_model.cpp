// Convolutional models through everything that handles whole models: the state format (round trips,
// exact resumption, warm start refusing another architecture), model averaging (batch
// normalization's moving statistics averaged with the rest), evaluation, memory plans, and the
// property batch normalization relies on: every optimizer leaves a parameter whose gradient is 0
// unchanged.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hopper/combine.h"
#include "hopper/error.h"
#include "hopper/metrics.h"
#include "hopper/optimizer.h"
#include "hopper/resources.h"
#include "hopper/rng.h"
#include "hopper/state_format.h"
#include "hopper/trainer.h"

using namespace hopper;

namespace {

const char* kSmallCnn = R"({"input_shape": [6, 6, 2], "layers": [
    {"type": "conv2d", "filters": 4, "kernel_size": 3, "padding": "same", "activation": "relu"},
    {"type": "batch_normalization"},
    {"type": "max_pooling2d"},
    {"type": "conv2d", "filters": 3, "kernel_size": 2, "activation": "tanh", "dropout": 0.2},
    {"type": "flatten"},
    {"units": 3, "activation": "softmax"}]})";

ModelConfig cnn_config(const std::string& optimizer = "Adam(lr=0.01)", const char* arch = kSmallCnn) {
    return resolve_config(parse_architecture(arch),
                          parse_compile_params("optimizer='" + optimizer + "', metrics=['accuracy']"),
                          parse_fit_params("batch_size=4, seed=3"));
}

struct Data {
    std::vector<float> x, y;
    int rows;
};

Data data(int rows, uint64_t seed, int in = 72, int out = 3) {
    Data d{std::vector<float>(std::size_t(rows) * in), std::vector<float>(std::size_t(rows) * out, 0.0f), rows};
    Rng rng(seed);
    for (float& v : d.x) v = float(rng.uniform() * 2 - 1);
    for (int r = 0; r < rows; ++r) d.y[std::size_t(r) * out + rng.below(uint64_t(out))] = 1.0f;
    return d;
}

std::string trained_state(const ModelConfig& c, uint64_t seed, int rows = 10) {
    Trainer t(c);
    Data d = data(rows, seed);
    t.begin_visit();
    t.train_buffer(d.x.data(), d.y.data(), d.rows);
    t.finish_visit();
    return serialize_state(t);
}

}  // namespace

TEST(CnnModel, StateRoundTripAndExactResumption) {
    const ModelConfig c = cnn_config();
    Data d1 = data(10, 1), d2 = data(7, 2);
    Trainer straight(c);
    straight.train_buffer(d1.x.data(), d1.y.data(), d1.rows);
    straight.train_buffer(d2.x.data(), d2.y.data(), d2.rows);
    Trainer first(c);
    first.train_buffer(d1.x.data(), d1.y.data(), d1.rows);
    const std::string bytes = serialize_state(first);
    EXPECT_EQ(bytes.size(), state_size(c));
    Trainer back = deserialize_state(bytes);
    EXPECT_EQ(back.config().to_json(), c.to_json());
    EXPECT_EQ(back.params(), first.params());
    EXPECT_EQ(back.optimizer().slots(), first.optimizer().slots());
    EXPECT_EQ(serialize_state(back), bytes);
    back.train_buffer(d2.x.data(), d2.y.data(), d2.rows);
    EXPECT_EQ(back.params(), straight.params());  // moving statistics included
    EXPECT_EQ(back.optimizer().slots(), straight.optimizer().slots());
    // The moving statistics did move: mean away from 0, variance away from 1.
    const LayerSlice& bn = straight.network().slices()[1];
    EXPECT_NE(straight.params()[bn.stats_offset], 0.0f);
    EXPECT_NE(straight.params()[bn.stats_offset + 4], 1.0f);
    // inspect and load_frozen_model see the same model.
    const StateSummary s = inspect_state(bytes);
    EXPECT_EQ(s.config.arch, c.arch);
    EXPECT_EQ(s.num_params, c.arch.num_params());
    const FrozenModel m = load_frozen_model(bytes);
    EXPECT_EQ(m.params, first.params());
}

TEST(CnnModel, WarmStartRefusesAnotherArchitectureNamingBothShapes) {
    const std::string bytes = trained_state(cnn_config(), 4);
    // Same architecture, another optimizer: parameters kept, slots reset.
    bool kept = true;
    Trainer t = restore_for_config(bytes, cnn_config("SGD(lr=0.1, momentum=0.9)"), &kept);
    EXPECT_FALSE(kept);
    EXPECT_EQ(t.params(), load_frozen_model(bytes).params);
    // Another architecture: the same shapes except padding; and a dense model of the same input.
    std::string other = kSmallCnn;
    other.replace(other.find(R"("padding": "same")"), 17, R"("padding": "valid")");
    for (const std::string& arch :
         {other, std::string(R"({"input_dim": 72, "layers": [{"units": 3, "activation": "softmax"}]})")}) {
        try {
            (void)restore_for_config(bytes, cnn_config("Adam(lr=0.01)", arch.c_str()));
            ADD_FAILURE() << "accepted " << arch;
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::InvalidParameter);
            EXPECT_EQ(e.message(), "model state does not match the architecture");
            EXPECT_NE(e.detail().find("6x6x2-conv3x3x4_same-bn-maxpool2x2-conv2x2x3-flatten-3"), std::string::npos)
                << e.detail();
            EXPECT_NE(e.detail().find(parse_architecture(arch).shape_string()), std::string::npos) << e.detail();
        }
    }
}

TEST(CnnModel, ModelAveragingIncludesBatchNormStatistics) {
    const ModelConfig c = cnn_config();
    const std::string a = trained_state(c, 11), b = trained_state(c, 12, 6);
    ModelAverageState avg;
    avg.add(a, 3);
    avg.add(b, 1);
    Trainer out = deserialize_state(avg.result());
    const std::vector<float> pa = load_frozen_model(a).params, pb = load_frozen_model(b).params;
    const LayerSlice& bn = out.network().slices()[1];
    ASSERT_EQ(bn.end_offset - bn.stats_offset, 8u);
    for (std::size_t i = 0; i < pa.size(); ++i)
        EXPECT_NEAR(out.params()[i], (3.0 * pa[i] + pb[i]) / 4.0, 1e-6 * (1 + std::abs(pa[i]))) << i;
    // In particular the moving statistics are the weighted mean of the copies'.
    for (std::size_t i = bn.stats_offset; i < bn.end_offset; ++i) {
        EXPECT_NE(pa[i], pb[i]);
        EXPECT_FLOAT_EQ(out.params()[i], float((3.0 * pa[i] + pb[i]) / 4.0));
    }
    // Averaging a model with itself gives it back bit for bit.
    ModelAverageState same;
    same.add(a, 2);
    same.add(a, 5);
    EXPECT_EQ(load_frozen_model(same.result()).params, pa);
}

TEST(CnnModel, EvaluationUsesTheMovingStatistics) {
    const std::string bytes = trained_state(cnn_config(), 5, 12);
    const FrozenModel m = load_frozen_model(bytes);
    Network net(m.config.arch);
    Data d = data(9, 6);
    EvalTotals totals;
    MatrixF scratch;
    evaluate_batch(net, m.params.data(), ConstMatrixMap(d.x.data(), 72, 9), ConstMatrixMap(d.y.data(), 3, 9),
                   m.config.compile, totals, scratch);
    EXPECT_EQ(totals.count, 9.0);
    MatrixF p;
    net.predict(m.params.data(), ConstMatrixMap(d.x.data(), 72, 9), p);
    EXPECT_NEAR(totals.loss() * 9, loss_sum(m.config.compile.loss, p, ConstMatrixMap(d.y.data(), 3, 9)), 1e-4);
    // Predictions are per row: the same row alone or in a batch gives the same output (inference
    // statistics, not batch statistics).
    MatrixF one;
    net.predict(m.params.data(), ConstMatrixMap(d.x.data() + 72 * 4, 72, 1), one);
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(one(i, 0), p(i, 4), 1e-6);
}

TEST(CnnModel, MemoryPlansCountPatchBuffersAndArgmax) {
    // The Keras simple convnet, batch 128: per row the workspace holds every layer's output
    // (26x26x32, 13x13x32, 11x11x64, 5x5x64, 1600 twice for the Flatten's dropout mask, 10), both
    // argmax buffers and two scratch buffers of the widest layer; per Conv2D layer one chunk of
    // patches: 10 images of 9 x 676 for conv1, one image of 288 x 121 for conv2 (64 Ki floats each
    // at most, but at least one image).
    const ModelConfig c = resolve_config(parse_architecture(R"({"input_shape": [28, 28, 1], "layers": [
            {"type": "conv2d", "filters": 32, "kernel_size": 3, "activation": "relu"}, {"type": "max_pooling2d"},
            {"type": "conv2d", "filters": 64, "kernel_size": 3, "activation": "relu"}, {"type": "max_pooling2d"},
            {"type": "flatten", "dropout": 0.5}, {"units": 10, "activation": "softmax"}]})"),
                                         CompileParams{}, parse_fit_params("batch_size=128"));
    const std::size_t per_row = 21632 + 5408 + 7744 + 1600 + 2 * 1600 + 10 + 5408 + 1600 + 2 * 21632;
    const std::size_t patches = 10 * 9 * 676 + 288 * 121;
    // Only the workspace depends on the batch: compare two batch sizes over the same buffer.
    ModelConfig c256 = c;  // as many digits in the configuration JSON
    c256.fit.batch_size = 256;
    EXPECT_EQ(training_bytes(c256, 1000) - training_bytes(c, 1000), per_row * 128 * sizeof(float));
    // Batch 1: one image's patches per layer.
    ModelConfig c1 = c, c2 = c;
    c1.fit.batch_size = 1;
    c2.fit.batch_size = 2;
    EXPECT_EQ(training_bytes(c2, 1000) - training_bytes(c1, 1000), (per_row + 9 * 676) * sizeof(float));
    // (+4: "batch_size":128 has two more digits than 1, in both serialized states.)
    EXPECT_EQ(training_bytes(c, 1000) - training_bytes(c1, 1000),
              (per_row * 127 + patches - 9 * 676 - 288 * 121) * sizeof(float) + 4);
    // Inference: two ping-pong buffers of the widest layer, the largest argmax buffer, the rows;
    // and the largest patch buffer.
    const std::size_t forward_row = 2 * 21632 + 5408 + 784 + 10;
    EXPECT_EQ(inference_bytes(c, 200) - inference_bytes(c, 100), forward_row * 100 * sizeof(float));
    EXPECT_EQ(evaluation_bytes({c}, 200) - evaluation_bytes({c}, 100), forward_row * 100 * sizeof(float));
}

// Batch normalization keeps its moving statistics in the parameter vector with gradient 0. Every
// optimizer must leave such a parameter (slots starting at 0) exactly as it is, at any step, with
// learning-rate decay, next to parameters that do move.
TEST(CnnModel, EveryOptimizerLeavesZeroGradientParametersUnchanged) {
    for (OptimizerKind kind : {OptimizerKind::SGD, OptimizerKind::Momentum, OptimizerKind::Nesterov,
                               OptimizerKind::Adam, OptimizerKind::RMSprop}) {
        OptimizerConfig oc;
        oc.kind = kind;
        oc.learning_rate = 0.3;
        oc.momentum = 0.9;
        oc.decay = 0.01;
        const std::size_t n = 37;  // two chunks of 16 and a tail
        Optimizer opt(oc, n);
        std::vector<float> p(n), g(n);
        Rng rng(1);
        for (float& v : p) v = float(rng.uniform() * 4 - 2);
        p[5] = -0.0f;
        p[36] = 1e-30f;
        const std::vector<float> before = p;
        for (uint64_t t = 0; t < 50; ++t) {
            for (std::size_t i = 0; i < n; ++i)
                g[i] = (i % 3 == 2 || i == 5 || i == 36) ? 0.0f : float(rng.uniform() - 0.5);
            opt.apply(p.data(), g.data(), t);
        }
        for (std::size_t i = 0; i < n; ++i) {
            if (i % 3 == 2 || i == 5 || i == 36) {
                // Bit for bit, except that -0 may come back as +0 (momentum adds a +0 velocity).
                if (before[i] != 0.0f) {
                    EXPECT_EQ(std::memcmp(&p[i], &before[i], sizeof(float)), 0) << to_string(kind) << " " << i;
                }
                EXPECT_EQ(p[i], before[i]) << to_string(kind) << " " << i;
                for (int s = 0; s < opt.num_slots(); ++s) EXPECT_EQ(opt.slots()[s * n + i], 0.0f) << to_string(kind);
            } else {
                EXPECT_NE(p[i], before[i]) << to_string(kind) << " " << i;
            }
        }
    }
}
