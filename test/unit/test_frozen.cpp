// Frozen layers (Keras' trainable=False): parsed from hopper's JSON and Keras', written in canonical
// JSON only when false; trained without updates and without optimizer slots; states of the smaller
// size round trip, average and size-plan exactly; a trained model's weights warm-start a copy whose
// lower layers are frozen (transfer learning); a frozen BatchNormalization runs in inference mode.

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hopper/combine.h"
#include "hopper/config.h"
#include "hopper/error.h"
#include "hopper/network.h"
#include "hopper/resources.h"
#include "hopper/rng.h"
#include "hopper/state_format.h"
#include "hopper/trainer.h"

using namespace hopper;

namespace {

const char* kFrozenMlp = R"({"input_dim": 4, "layers": [
    {"units": 8, "activation": "relu", "trainable": false},
    {"units": 6, "activation": "tanh"},
    {"units": 3, "activation": "softmax"}]})";

ModelConfig config_of(const std::string& arch,
                      const char* compile = R"({"optimizer": "adam", "learning_rate": 0.05})") {
    return resolve_config(parse_architecture(arch), parse_compile_params(compile),
                          parse_fit_params(R"({"batch_size": 4, "epochs": 1})"));
}

// rows x 4 inputs, one-hot targets of 3 classes.
struct Data {
    std::vector<float> x, y;
    explicit Data(int rows, int in = 4, int out = 3, uint64_t seed = 5) {
        Rng rng(seed);
        for (int r = 0; r < rows; ++r) {
            for (int i = 0; i < in; ++i) x.push_back(float(2.0 * rng.uniform() - 1.0));
            const int c = int(rng.below(out));
            for (int k = 0; k < out; ++k) y.push_back(k == c ? 1.0f : 0.0f);
        }
    }
};

std::vector<float> slice_of(const Trainer& t, std::size_t layer) {
    const LayerSlice& s = t.network().slices()[layer];
    return std::vector<float>(t.params().begin() + long(s.weight_offset), t.params().begin() + long(s.end_offset));
}

}  // namespace

TEST(Frozen, NativeJsonRoundTripWritesTheFlagOnlyWhenFalse) {
    const Architecture a = parse_architecture(kFrozenMlp);
    EXPECT_FALSE(a.layers[0].trainable);
    EXPECT_TRUE(a.layers[1].trainable);
    const std::string j = a.to_json();
    EXPECT_NE(j.find(R"("dropout":0.0,"trainable":false})"), std::string::npos) << j;
    EXPECT_EQ(j.find("trainable"), j.rfind("trainable")) << j;  // once: only the frozen layer
    EXPECT_EQ(parse_architecture(j), a);
    EXPECT_EQ(parse_architecture(j).to_json(), j);
    // "trainable": true is the default and is not written: the canonical JSON of before.
    Architecture unfrozen = parse_architecture(R"({"input_dim": 4, "layers": [{"units": 8, "activation": "relu",
        "trainable": true}, {"units": 6, "activation": "tanh"}, {"units": 3, "activation": "softmax"}]})");
    EXPECT_EQ(unfrozen.to_json().find("trainable"), std::string::npos);
    EXPECT_NE(unfrozen, a);
    EXPECT_TRUE(unfrozen.same_layers(a));
    EXPECT_EQ(a.num_params(), unfrozen.num_params());
    EXPECT_EQ(a.num_trainable_params(), a.num_params() - (4 * 8 + 8));
    EXPECT_EQ(unfrozen.num_trainable_params(), unfrozen.num_params());
    // The model configuration (what states store) carries it too.
    const ModelConfig c = config_of(kFrozenMlp);
    EXPECT_EQ(parse_model_config(c.to_json()).arch, c.arch);
    try {
        parse_architecture(R"({"input_dim": 4, "layers": [{"units": 3, "trainable": "no"}]})");
        FAIL() << "a non-boolean trainable was accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::InvalidParameter);
        EXPECT_NE(e.message().find("invalid value for \"trainable\" in layer 1"), std::string::npos) << e.message();
    }
}

TEST(Frozen, KerasTrainableFalseFreezesTheLayer) {
    const std::string keras = R"({"class_name": "Sequential", "config": {"name": "s", "layers": [
        {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "name": "in"}},
        {"class_name": "Dense", "config": {"name": "d1", "trainable": false, "units": 8, "activation": "relu"}},
        {"class_name": "Dropout", "config": {"name": "dr", "trainable": false, "rate": 0.25}},
        {"class_name": "Dense", "config": {"name": "d2", "trainable": true, "units": 3, "activation": "softmax"}}]}})";
    const Architecture a = parse_architecture(keras);
    ASSERT_EQ(a.layers.size(), 2u);
    EXPECT_FALSE(a.layers[0].trainable);
    EXPECT_FLOAT_EQ(a.layers[0].dropout, 0.25f);
    EXPECT_TRUE(a.layers[1].trainable);
    EXPECT_EQ(parse_architecture(a.to_json()), a);
}

TEST(Frozen, FrozenWeightsStayBitIdenticalWhileOthersTrainAndHaveNoSlots) {
    for (const char* opt : {R"({"optimizer": "adam", "learning_rate": 0.05, "weight_decay": 0.01})",
                            R"({"optimizer": "sgd", "learning_rate": 0.1, "momentum": 0.9})",
                            R"({"optimizer": "rmsprop"})", R"({"optimizer": "sgd"})"}) {
        const ModelConfig c = config_of(kFrozenMlp, opt);
        Trainer t(c);
        const std::size_t frozen_floats = 4 * 8 + 8;
        EXPECT_EQ(t.network().num_trainable_params(), t.network().num_params() - frozen_floats);
        ASSERT_EQ(t.network().trainable_ranges().size(), 1u);
        EXPECT_EQ(t.network().trainable_ranges()[0].begin, frozen_floats);
        EXPECT_EQ(t.optimizer().slot_size(), t.network().num_trainable_params());
        EXPECT_EQ(t.optimizer().slots().size(), t.optimizer().num_slots() * t.network().num_trainable_params());
        const std::vector<float> before0 = slice_of(t, 0), before1 = slice_of(t, 1), before2 = slice_of(t, 2);
        Data d(64);
        t.train_buffer(d.x.data(), d.y.data(), 64);
        EXPECT_EQ(slice_of(t, 0), before0) << opt;  // bit for bit
        EXPECT_NE(slice_of(t, 1), before1) << opt;
        EXPECT_NE(slice_of(t, 2), before2) << opt;
        // The state holds the smaller slots and says so in its size; it round trips exactly.
        const std::string s = serialize_state(t);
        EXPECT_EQ(s.size(), state_size(c));
        const Trainer back = deserialize_state(s);
        EXPECT_EQ(back.params(), t.params());
        EXPECT_EQ(back.optimizer().slots(), t.optimizer().slots());
        EXPECT_EQ(serialize_state(back), s);
        EXPECT_EQ(inspect_state(s).num_slots, uint32_t(t.optimizer().num_slots()));
        // The memory plan counts the slots it holds: less than the same model unfrozen.
        ModelConfig unfrozen = c;
        unfrozen.arch.layers[0].trainable = true;
        if (t.optimizer().num_slots() > 0) {
            EXPECT_LT(state_size(c), state_size(unfrozen));
            EXPECT_LT(training_bytes(c, 64), training_bytes(unfrozen, 64));
        }
    }
}

TEST(Frozen, GradientOfAFrozenLayerIsZeroAndTheOthersAreUnchanged) {
    // The trainable layers' gradient is exactly the unfrozen network's: freezing only stops updates.
    const ModelConfig frozen = config_of(kFrozenMlp);
    ModelConfig unfrozen = frozen;
    unfrozen.arch.layers[0].trainable = true;
    Network nf(frozen.arch), nu(unfrozen.arch);
    std::vector<float> params(nf.num_params());
    nf.initialize(params.data(), 3);
    Data d(8);
    GradientWorkspace wf(nf), wu(nu);
    std::vector<float> gf(nf.num_params(), -1.0f), gu(nu.num_params(), -1.0f);
    const ConstMatrixMap x(d.x.data(), 4, 8), y(d.y.data(), 3, 8);
    const double lf = wf.loss_and_gradient(params.data(), x, y, frozen.compile.loss, gf.data(), 1);
    const double lu = wu.loss_and_gradient(params.data(), x, y, unfrozen.compile.loss, gu.data(), 1);
    EXPECT_EQ(lf, lu);
    const std::size_t first = nf.slices()[1].weight_offset;
    for (std::size_t i = 0; i < first; ++i) EXPECT_EQ(gf[i], 0.0f);
    for (std::size_t i = first; i < gf.size(); ++i) EXPECT_EQ(gf[i], gu[i]) << i;
}

TEST(Frozen, ConvolutionalModelWithAFrozenBatchNormalizationRunsItInInferenceMode) {
    const std::string arch = R"({"input_shape": [6, 6, 2], "layers": [
        {"type": "conv2d", "filters": 3, "kernel_size": 3, "activation": "relu", "trainable": false},
        {"type": "batch_normalization", "trainable": false},
        {"type": "max_pooling2d", "pool_size": 2},
        {"type": "flatten"},
        {"units": 3, "activation": "softmax"}]})";
    const ModelConfig c = config_of(arch);
    Trainer t(c);
    // Moving statistics other than the initial 0 and 1, so that inference mode shows.
    const LayerSlice& bs = t.network().slices()[1];
    for (int i = 0; i < 3; ++i) {
        t.params()[bs.stats_offset + i] = 0.1f * float(i + 1);
        t.params()[bs.stats_offset + 3 + i] = 0.5f + 0.25f * float(i);
    }
    const std::vector<float> conv0 = slice_of(t, 0), bn0 = slice_of(t, 1), dense0 = slice_of(t, 4);
    Data d(32, 72, 3, 9);
    // Training's forward pass equals prediction's (no dropout; BN on moving statistics).
    {
        GradientWorkspace ws(t.network());
        std::vector<float> g(t.network().num_params());
        const ConstMatrixMap x(d.x.data(), 72, 32), y(d.y.data(), 3, 32);
        const double loss = ws.loss_and_gradient(t.params().data(), x, y, c.compile.loss, g.data(), 1);
        MatrixF out;
        t.network().predict(t.params().data(), x, out);
        EXPECT_NEAR(loss, loss_sum(c.compile.loss, out, y), 1e-4 * std::abs(loss));
    }
    t.train_buffer(d.x.data(), d.y.data(), 32);
    EXPECT_EQ(slice_of(t, 0), conv0);
    EXPECT_EQ(slice_of(t, 1), bn0);  // gamma, beta and the moving statistics
    EXPECT_NE(slice_of(t, 4), dense0);
    EXPECT_EQ(t.optimizer().slot_size(), t.network().slices()[4].end_offset - t.network().slices()[4].weight_offset);
}

TEST(Frozen, FrozenBatchNormalizationBackpropagatesThroughItsInferenceTransform) {
    // Dense (trained) -> BN (frozen) -> Dense: the lower Dense gradient against central differences.
    const std::string arch = R"({"input_dim": 3, "layers": [
        {"units": 4, "activation": "tanh"},
        {"type": "batch_normalization", "trainable": false},
        {"units": 2, "activation": "softmax"}]})";
    const ModelConfig c = config_of(arch);
    Network net(c.arch);
    std::vector<float> p(net.num_params());
    net.initialize(p.data(), 11);
    const LayerSlice& bs = net.slices()[1];
    for (int i = 0; i < 4; ++i) {
        p[bs.weight_offset + i] = 0.7f + 0.2f * float(i);     // gamma
        p[bs.bias_offset + i] = -0.1f * float(i);             // beta
        p[bs.stats_offset + i] = 0.05f * float(i);            // moving mean
        p[bs.stats_offset + 4 + i] = 0.3f + 0.4f * float(i);  // moving variance
    }
    Data d(5, 3, 2, 13);
    const ConstMatrixMap x(d.x.data(), 3, 5), y(d.y.data(), 2, 5);
    GradientWorkspace ws(net);
    std::vector<float> g(net.num_params());
    ws.loss_and_gradient(p.data(), x, y, c.compile.loss, g.data(), 1);
    auto loss_at = [&](const std::vector<float>& q) {
        MatrixF out;
        net.predict(q.data(), x, out);
        return loss_sum(c.compile.loss, out, y) / 5.0;
    };
    const std::size_t lower = net.slices()[0].end_offset;
    for (std::size_t i = 0; i < lower; ++i) {
        std::vector<float> a = p, b = p;
        a[i] += 1e-2f;
        b[i] -= 1e-2f;
        const double num = (loss_at(a) - loss_at(b)) / (double(a[i]) - double(b[i]));
        EXPECT_NEAR(g[i], num, 2e-3 + 2e-2 * std::abs(num)) << i;
    }
    for (std::size_t i = bs.weight_offset; i < bs.end_offset; ++i) EXPECT_EQ(g[i], 0.0f);
}

TEST(Frozen, TransferLearningWarmStartsAFrozenCopyOfATrainedModel) {
    // Train every layer, then freeze the lower ones and go on (MADlib's transfer learning).
    ModelConfig base = config_of(kFrozenMlp);
    base.arch.layers[0].trainable = true;
    Trainer first(base);
    Data d(64);
    first.train_buffer(d.x.data(), d.y.data(), 64);
    const std::string trained = serialize_state(first);

    const ModelConfig frozen = config_of(kFrozenMlp);
    bool kept = true;
    Trainer t = restore_for_config(trained, frozen, &kept);
    EXPECT_FALSE(kept);  // the slots cover other parameters: the optimizer starts afresh
    EXPECT_EQ(t.params(), first.params());
    EXPECT_EQ(t.optimizer().slots().size(), 2 * frozen.arch.num_trainable_params());
    const std::vector<float> lower = slice_of(t, 0), upper = slice_of(t, 2);
    Data more(64, 4, 3, 6);
    t.train_buffer(more.x.data(), more.y.data(), 64);
    EXPECT_EQ(slice_of(t, 0), lower);
    EXPECT_NE(slice_of(t, 2), upper);
    // The same frozen configuration again keeps the optimizer.
    Trainer again = restore_for_config(serialize_state(t), frozen, &kept);
    EXPECT_TRUE(kept);
    EXPECT_EQ(again.optimizer().slots(), t.optimizer().slots());
    // Another architecture is still refused.
    ModelConfig other = frozen;
    other.arch.layers[1].units = 7;
    EXPECT_THROW(restore_for_config(trained, resolve_config(other.arch, other.compile, other.fit)), Error);
}

TEST(Frozen, ModelAveragingOfFrozenStatesKeepsTheFrozenWeights) {
    const ModelConfig c = config_of(kFrozenMlp);
    Trainer a(c), b(c);
    Data d1(32, 4, 3, 1), d2(32, 4, 3, 2);
    a.train_buffer(d1.x.data(), d1.y.data(), 32);
    b.train_buffer(d2.x.data(), d2.y.data(), 32);
    ModelAverageState avg;
    avg.add(serialize_state(a), 1);
    avg.add(serialize_state(b), 1);
    const ModelAverageState back = ModelAverageState::deserialize(avg.serialize());
    EXPECT_EQ(avg.serialize().size(), ModelAverageState::serialized_size(c));
    const Trainer m = deserialize_state(back.result());
    EXPECT_EQ(slice_of(m, 0), slice_of(a, 0));
    EXPECT_EQ(m.optimizer().slots().size(), 2 * c.arch.num_trainable_params());
}
