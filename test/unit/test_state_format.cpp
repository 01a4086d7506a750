// The model state format: exact round trips, exact resumption, and a clear error for every way a
// state can be malformed (each branch of the parser, with the checksum recomputed so the parser
// itself is reached).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <zlib.h>

#include <gtest/gtest.h>

#include "hopper/error.h"
#include "hopper/metrics.h"
#include "hopper/state_format.h"

using namespace hopper;

namespace {

ModelConfig small_config(OptimizerKind kind = OptimizerKind::Adam) {
    Architecture a;
    a.input_dim = 3;
    DenseLayer h;
    h.units = 4;
    h.activation = Activation::Relu;
    h.initializer = Initializer::HeUniform;
    DenseLayer o;
    o.units = 2;
    o.activation = Activation::Softmax;
    a.layers = {h, o};
    CompileParams c;
    c.optimizer.kind = kind;
    c.optimizer.learning_rate = 0.05;
    c.metrics = {Metric::Accuracy};
    FitParams f;
    f.batch_size = 2;
    return resolve_config(a, c, f);
}

struct Batch {
    std::vector<float> x, y;
    int rows = 0;
};

Batch batch(int seed) {
    Batch b;
    b.rows = 6;
    for (int i = 0; i < b.rows; ++i) {
        for (int j = 0; j < 3; ++j) b.x.push_back(float((seed * 31 + i * 7 + j * 3) % 13) / 13.0f - 0.5f);
        const int cls = (seed + i) % 2;
        b.y.push_back(cls == 0 ? 1.0f : 0.0f);
        b.y.push_back(cls == 1 ? 1.0f : 0.0f);
    }
    return b;
}

template <typename T>
void poke(std::string& s, std::size_t offset, T value) {
    std::memcpy(&s[offset], &value, sizeof(T));
}

// Recomputes the trailing checksum, so a deliberate corruption reaches the parser's later checks.
std::string reseal(std::string s) {
    const uint32_t crc = crc32_of(std::string_view(s).substr(0, s.size() - 4));
    std::memcpy(&s[s.size() - 4], &crc, 4);
    return s;
}

void expect_data_error(const std::string& bytes, const std::string& fragment) {
    try {
        (void)deserialize_state(bytes);
        FAIL() << "accepted a malformed state; expected: " << fragment;
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Data);
        EXPECT_NE(e.message().find(fragment), std::string::npos) << e.message();
    }
}

}  // namespace

// Stored states (checkpoints, models, dumps) carry zlib's CRC-32: a build that computes it with ISA-L
// must give the same number for every length and alignment, or it would refuse every earlier state.
TEST(StateFormat, ChecksumIsZlibsCrc32) {
    EXPECT_EQ(crc32_of(""), 0u);
    EXPECT_EQ(crc32_of("123456789"), 0xCBF43926u);  // the CRC-32 check value
    std::string bytes(3 * 1024 * 1024 + 77, '\0');
    uint32_t x = 2463534242u;
    for (char& c : bytes) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        c = char(x);
    }
    for (std::size_t offset : {0, 1, 3, 17, 64}) {
        for (std::size_t length : {1, 15, 16, 63, 64, 65, 255, 4096, 100001, 3 * 1024 * 1024}) {
            const std::string_view piece = std::string_view(bytes).substr(offset, length);
            const uLong expected =
                crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(piece.data()), uInt(piece.size()));
            EXPECT_EQ(crc32_of(piece), uint32_t(expected)) << "offset " << offset << ", length " << length;
        }
    }
}

TEST(StateFormat, RoundTripKeepsEveryByteOfTheTrainingState) {
    Trainer t(small_config());
    Batch b = batch(1);
    t.train_buffer(b.x.data(), b.y.data(), b.rows);
    t.finish_visit();
    const std::string bytes = serialize_state(t);
    EXPECT_EQ(bytes.size(), state_size(t.config()));
    Trainer back = deserialize_state(bytes);
    EXPECT_EQ(back.params(), t.params());
    EXPECT_EQ(back.optimizer().slots(), t.optimizer().slots());
    EXPECT_EQ(back.counters().steps, t.counters().steps);
    EXPECT_EQ(back.counters().samples_seen, t.counters().samples_seen);
    EXPECT_EQ(back.counters().visits, 1u);
    EXPECT_EQ(back.config().to_json(), t.config().to_json());
    EXPECT_EQ(serialize_state(back), bytes);
}

TEST(StateFormat, TrainingResumesExactlyFromAState) {
    // Two buffers straight, or one, a round trip through the format, then the other: same bits.
    Batch b1 = batch(2), b2 = batch(3);
    Trainer straight(small_config());
    straight.train_buffer(b1.x.data(), b1.y.data(), b1.rows);
    straight.train_buffer(b2.x.data(), b2.y.data(), b2.rows);
    Trainer first(small_config());
    first.train_buffer(b1.x.data(), b1.y.data(), b1.rows);
    Trainer resumed = deserialize_state(serialize_state(first));
    resumed.train_buffer(b2.x.data(), b2.y.data(), b2.rows);
    EXPECT_EQ(resumed.params(), straight.params());
    EXPECT_EQ(resumed.optimizer().slots(), straight.optimizer().slots());
}

// A version 1 state, written by hopper 0.1.0 (commit 6ff188a): small_config() after training on
// batch(1) and batch(2), one visit each.
const char* const kVersion1State =
    "484f505045524d5301000000eb01000006000000000000000c000000000000000200000000000000bc38415b8566094006000000000000001a0000000000000002000000000000007b22617263686974656374757265223a7b22696e7075745f64696d223a332c226c6179657273223a5b7b22756e697473223a342c2261637469766174696f6e223a2272656c75222c227573655f62696173223a747275652c22696e697469616c697a6572223a2268655f756e69666f726d222c2264726f706f7574223a302e307d2c7b22756e697473223a322c2261637469766174696f6e223a22736f66746d6178222c227573655f62696173223a747275652c22696e697469616c697a6572223a22676c6f726f745f756e69666f726d222c2264726f706f7574223a302e307d5d7d2c22636f6d70696c65223a7b226c6f7373223a22736f66746d61785f63726f73735f656e74726f7079222c226c6f73735f676976656e223a66616c73652c226f7074696d697a6572223a7b226e616d65223a226164616d222c226c6561726e696e675f72617465223a302e30352c22626574615f31223a302e392c22626574615f32223a302e3939392c22657073696c6f6e223a31652d30372c226465636179223a302e307d2c227765696768745f6465636179223a302e302c226d657472696373223a5b226163637572616379225d2c22746f705f6b223a357d2c22666974223a7b2262617463685f73697a65223a322c2265706f636873223a312c2273656564223a34327d7dea6c94bf8f9400bf76b9293e76bd1f3fdf3427bfb762f73e72abcc3fa871f83ed7d97e3fc605a6bf540defbe27c4c03f9f9919bea1691fbe4b11453e794bdc3dbab3563febf9153f6a6826bd6131c93ea5953dbfd943943f2957e3be9c09933f8199603e819960bee126db3aac95f3bba06b9e3b7b06023dddf1b53bebcb99bb94fd7fbc738decbc008d1a3c5207f53ab9f0b9bc29f428bdd2c0893c768a423c2d91b5bd389a5bbd43d0603c42d060bce46c9ebae86c9e3ac4c3283cc4c328bce0c3053de0c305bd8d608dbc8b608d3cc2c53436a4b3ca36428802365cdf45383ae2dd352ddd193690b82237c8d92738a73a7136f68078357cd85338e519663851dcea37c5d09b37a7b6a239a4798f39ce044038ca0440383c80ea363a80ea36841eed36841eed36839a1238829a1238bb9bbc37b89bbc37b3dc2f61";

std::string from_hex(const std::string& hex) {
    std::string out;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2) out += char(std::stoi(hex.substr(i, 2), nullptr, 16));
    return out;
}

TEST(StateFormat, Version1StatesStillLoad) {
    const std::string old = from_hex(kVersion1State);
    ASSERT_EQ(old[8], 1);  // the fixture really is version 1
    Trainer t = deserialize_state(old);
    EXPECT_EQ(t.config().to_json(), small_config().to_json());
    EXPECT_EQ(t.counters().steps, 6u);
    EXPECT_EQ(t.counters().visits, 2u);
    EXPECT_EQ(t.counters().iterations, 0u);
    // Training the same two buffers today gives what hopper 0.1.0 stored (the same bits with the
    // flags it was built with, -O3 -march=native on AVX-512; the last bit may differ elsewhere).
    Trainer now(small_config());
    for (int seed = 1; seed <= 2; ++seed) {
        Batch b = batch(seed);
        now.begin_visit();
        now.train_buffer(b.x.data(), b.y.data(), b.rows);
        now.finish_visit();
    }
    ASSERT_EQ(t.params().size(), now.params().size());
    for (std::size_t i = 0; i < t.params().size(); ++i)
        EXPECT_NEAR(t.params()[i], now.params()[i], 1e-5f * (1.0f + std::fabs(now.params()[i]))) << i;
    ASSERT_EQ(t.optimizer().slots().size(), now.optimizer().slots().size());
    for (std::size_t i = 0; i < t.optimizer().slots().size(); ++i)
        EXPECT_NEAR(t.optimizer().slots()[i], now.optimizer().slots()[i],
                    1e-5f * (1.0f + std::fabs(now.optimizer().slots()[i])))
            << i;
    // Written again it is a version 2 state: the same bytes up to the optimizer slots, then empty
    // training totals (loss sum, samples, one sum per metric), then the checksum.
    const std::string again = serialize_state(t);
    const std::size_t totals = 8 * (2 + t.config().compile.metrics.size());
    ASSERT_EQ(again.size(), old.size() + totals);
    EXPECT_EQ(again[8], 2);
    EXPECT_EQ(again.substr(10, old.size() - 14), old.substr(10, old.size() - 14));
    EXPECT_EQ(again.substr(old.size() - 4, totals), std::string(totals, '\0'));
    EXPECT_EQ(inspect_state(old).counters.steps, 6u);
    EXPECT_EQ(inspect_state(old).format_version, 1);
    EXPECT_EQ(inspect_state(again).format_version, 2);
    EXPECT_EQ(load_frozen_model(old).params, t.params());
}

TEST(StateFormat, IterationsTravelWithTheState) {
    Trainer t(small_config());
    t.counters().iterations = 7;
    const std::string bytes = serialize_state(t);
    EXPECT_EQ(deserialize_state(bytes).counters().iterations, 7u);
    EXPECT_EQ(inspect_state(bytes).counters.iterations, 7u);
    const std::string later = with_iterations(bytes, 9);
    EXPECT_EQ(inspect_state(later).counters.iterations, 9u);
    EXPECT_EQ(later.substr(0, 68), bytes.substr(0, 68));
    EXPECT_EQ(later.substr(72, later.size() - 76), bytes.substr(72, bytes.size() - 76));
    // A version 1 state comes back as version 2 with the count set.
    const std::string upgraded = with_iterations(from_hex(kVersion1State), 3);
    EXPECT_EQ(upgraded[8], 2);
    EXPECT_EQ(deserialize_state(upgraded).counters().iterations, 3u);
    // Warm start keeps the count, whether or not the optimizer is kept.
    EXPECT_EQ(restore_for_config(bytes, small_config()).counters().iterations, 7u);
    EXPECT_EQ(restore_for_config(bytes, small_config(OptimizerKind::SGD)).counters().iterations, 7u);
    std::string corrupt = later;
    corrupt[kStateHeaderSize + 3] ^= 1;
    EXPECT_THROW(with_iterations(corrupt, 1), Error);
}

TEST(StateFormat, InspectAndFrozenModelAgreeWithTheState) {
    Trainer t(small_config(OptimizerKind::Momentum));
    const std::string bytes = serialize_state(t);
    StateSummary s = inspect_state(bytes);
    EXPECT_EQ(s.num_params, t.network().num_params());
    EXPECT_EQ(s.num_slots, 1u);
    EXPECT_EQ(s.bytes, bytes.size());
    FrozenModel m = load_frozen_model(bytes);
    EXPECT_EQ(m.params, t.params());
    EXPECT_EQ(m.checksum, crc32_of(std::string_view(bytes).substr(0, bytes.size() - 4)));
}

TEST(StateFormat, EveryMalformedStateIsADataError) {
    const std::string good = serialize_state(Trainer(small_config()));
    expect_data_error("", "too short");
    expect_data_error(good.substr(0, kStateHeaderSize), "too short");
    std::string magic = good;
    magic[0] = 'X';
    expect_data_error(magic, "wrong magic number");
    std::string flipped = good;
    flipped[kStateHeaderSize + 20] ^= 0x01;
    expect_data_error(flipped, "checksum mismatch");
    expect_data_error(good.substr(0, good.size() - 1), "checksum mismatch");

    for (uint16_t v : {uint16_t(0), uint16_t(3)}) {
        std::string version = good;
        poke<uint16_t>(version, 8, v);
        try {
            (void)deserialize_state(reseal(version));
            FAIL() << "accepted version " << v;
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::Data);
            EXPECT_EQ(e.message(), "unsupported model state format version " + std::to_string(v));
        }
    }
    std::string flags = good;
    poke<uint16_t>(flags, 10, 4);
    expect_data_error(reseal(flags), "unknown flags");
    // Version 1 kept offset 68 reserved (0); version 2 counts iterations there.
    std::string reserved = good;
    poke<uint16_t>(reserved, 8, 1);
    poke<uint32_t>(reserved, 68, 1);
    expect_data_error(reseal(reserved), "reserved field");
    std::string config_len = good;
    poke<uint32_t>(config_len, 12, uint32_t(good.size()));
    expect_data_error(reseal(config_len), "configuration length exceeds");
    std::string slots = good;
    poke<uint32_t>(slots, 64, 9);
    expect_data_error(reseal(slots), "too many optimizer slots");
    std::string odd = good;
    odd.insert(odd.size() - 4, 2, '\0');
    expect_data_error(reseal(odd), "not a whole number of floats");
    std::string count = good;
    poke<uint64_t>(count, 56, 7);
    expect_data_error(reseal(count), "parameter count does not match the state size");
    std::string zero = good;
    poke<uint64_t>(zero, 56, 0);
    expect_data_error(reseal(zero), "parameter count does not match the state size");

    // A configuration that does not parse, or that disagrees with the stored parameters.
    std::string bad_config = good;
    bad_config[kStateHeaderSize] = '[';
    expect_data_error(reseal(bad_config), "its configuration cannot be read");
    const std::string other = serialize_state(Trainer(small_config(OptimizerKind::SGD)));
    // Adam's configuration over SGD's (slot-free) parameter area: sizes then fail to match.
    std::string swapped = other;
    const uint32_t adam_len = [&] {
        uint32_t v;
        std::memcpy(&v, good.data() + 12, 4);
        return v;
    }();
    const uint32_t sgd_len = [&] {
        uint32_t v;
        std::memcpy(&v, other.data() + 12, 4);
        return v;
    }();
    swapped.replace(kStateHeaderSize, sgd_len, good.substr(kStateHeaderSize, adam_len));
    poke<uint32_t>(swapped, 12, adam_len);
    expect_data_error(reseal(swapped), "optimizer slots do not match its optimizer");
}

TEST(StateFormat, ParameterCountMustMatchTheArchitecture) {
    // A state whose parameters and slots fill the area but disagree with its architecture.
    ModelConfig wide = small_config(OptimizerKind::SGD);
    wide.arch.layers[0].units = 5;
    const std::string bigger = serialize_state(Trainer(resolve_config(wide.arch, wide.compile, wide.fit)));
    const std::string normal = serialize_state(Trainer(small_config(OptimizerKind::SGD)));
    uint32_t normal_len, bigger_len;
    std::memcpy(&normal_len, normal.data() + 12, 4);
    std::memcpy(&bigger_len, bigger.data() + 12, 4);
    std::string mixed = bigger;
    mixed.replace(kStateHeaderSize, bigger_len, normal.substr(kStateHeaderSize, normal_len));
    poke<uint32_t>(mixed, 12, normal_len);
    expect_data_error(reseal(mixed), "parameter count does not match its architecture");
}

TEST(StateFormat, RestoreForConfigChecksArchitectureAndKeepsMatchingOptimizers) {
    Trainer t(small_config(OptimizerKind::Adam));
    Batch b = batch(4);
    t.train_buffer(b.x.data(), b.y.data(), b.rows);
    const std::string bytes = serialize_state(t);

    bool kept = false;
    Trainer same = restore_for_config(bytes, small_config(OptimizerKind::Adam), &kept);
    EXPECT_TRUE(kept);
    EXPECT_EQ(same.optimizer().slots(), t.optimizer().slots());
    EXPECT_EQ(same.counters().steps, t.counters().steps);

    Trainer switched = restore_for_config(bytes, small_config(OptimizerKind::RMSprop), &kept);
    EXPECT_FALSE(kept);
    EXPECT_EQ(switched.params(), t.params());
    EXPECT_EQ(switched.counters().steps, 0u);
    for (float v : switched.optimizer().slots()) EXPECT_EQ(v, 0.0f);

    ModelConfig other = small_config();
    other.arch.layers[0].units = 8;
    try {
        (void)restore_for_config(bytes, resolve_config(other.arch, other.compile, other.fit));
        FAIL() << "restored into another architecture";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::InvalidParameter);
        EXPECT_EQ(e.message(), "model state does not match the architecture");
        EXPECT_NE(e.detail().find("3-4-2"), std::string::npos);
        EXPECT_NE(e.detail().find("3-8-2"), std::string::npos);
    }
}

// Running training metrics: each minibatch's loss and metrics, from its forward pass before its
// update, summed in the state, exactly what evaluating the batch with the parameters of that moment
// gives; they travel with the state, average over data-parallel copies, and with_iterations clears them.
TEST(TrainingTotals, AreTheMinibatchesBeforeTheirUpdates) {
    ModelConfig config = small_config();
    config.compile.metrics = {Metric::Accuracy, Metric::Loss};
    Trainer t(config);
    Trainer replay(config);
    EvalTotals expected;
    MatrixF scratch;
    for (int seed = 1; seed <= 3; ++seed) {
        Batch b = batch(seed);
        t.train_buffer(b.x.data(), b.y.data(), b.rows);
        for (int start = 0; start < b.rows; start += config.fit.batch_size) {
            const int n = std::min(config.fit.batch_size, b.rows - start);
            // What the batch scores with the parameters it meets (dropout-free network: the same forward pass).
            evaluate_batch(replay.network(), replay.params().data(), ConstMatrixMap(b.x.data() + start * 3, 3, n),
                           ConstMatrixMap(b.y.data() + start * 2, 2, n), config.compile, expected, scratch);
            replay.train_buffer(b.x.data() + start * 3, b.y.data() + start * 2, n);
        }
    }
    const EvalTotals& got = t.counters().iteration_totals;
    EXPECT_EQ(got.count, 18.0);
    EXPECT_EQ(got.count, expected.count);
    EXPECT_NEAR(got.loss_sum, expected.loss_sum, 1e-5);
    ASSERT_EQ(got.metric_sums.size(), 2u);
    EXPECT_EQ(got.metric_sums[0], expected.metric_sums[0]);
    EXPECT_EQ(got.metric_sums[1], got.loss_sum);  // the "loss" metric is the loss

    // They travel with the state, and with_iterations clears them for the next iteration.
    const std::string bytes = serialize_state(t);
    EXPECT_EQ(bytes.size(), state_size(config));
    const TrainCounters c = inspect_state(bytes).counters;
    EXPECT_EQ(c.iteration_totals.count, got.count);
    EXPECT_EQ(c.iteration_totals.loss_sum, got.loss_sum);
    EXPECT_EQ(c.iteration_totals.metric_sums, got.metric_sums);
    const TrainCounters cleared = inspect_state(with_iterations(bytes, 1)).counters;
    EXPECT_EQ(cleared.iteration_totals.count, 0.0);
    EXPECT_EQ(cleared.iteration_totals.loss_sum, 0.0);
    EXPECT_EQ(deserialize_state(with_iterations(bytes, 1)).params(), t.params());
    // Warm start begins with none (its compile metrics may differ).
    EXPECT_EQ(restore_for_config(bytes, config).counters().iteration_totals.count, 0.0);

    // Non-finite totals are a corrupt state, like any other field.
    std::string bad = bytes;
    const double nan = std::nan("");
    std::memcpy(&bad[bad.size() - 4 - 8 * 4], &nan, 8);
    const uint32_t crc = crc32_of(std::string_view(bad).substr(0, bad.size() - 4));
    std::memcpy(&bad[bad.size() - 4], &crc, 4);
    EXPECT_THROW(inspect_state(bad), Error);
}

TEST(StateFormat, AWarmStartKeepsTheTargetScalingItsWeightsWereTrainedUnder) {
    // A linear regression output: standardized under (offset 5000, scale 300) in one state, raw in
    // another (trained before targets were standardized). Continued on a table packed with other
    // statistics, each keeps its own: its outputs keep their scale (with the requested one, the raw
    // model's outputs were read as standardized values and multiplied by 300).
    ModelConfig config = small_config();
    config.arch.layers.back().units = 1;
    config.arch.layers.back().activation = Activation::Linear;
    config.compile.loss = Loss::MeanSquaredError;
    config.compile.metrics = {};
    ModelConfig standardized = config;
    standardized.arch.target_scaling = TargetScaling{5000.0f, 300.0f};
    ModelConfig repacked = config;
    repacked.arch.target_scaling = TargetScaling{7000.0f, 250.0f};
    const std::string trained = serialize_state(Trainer(standardized));
    const std::string raw = serialize_state(Trainer(config));
    EXPECT_EQ(restore_for_config(trained, repacked).config().arch.target_scaling, standardized.arch.target_scaling);
    EXPECT_TRUE(restore_for_config(raw, repacked).config().arch.target_scaling.identity());
    // The optimizer's state is kept as for the same configuration.
    bool kept = false;
    (void)restore_for_config(trained, repacked, &kept);
    EXPECT_TRUE(kept);
}
