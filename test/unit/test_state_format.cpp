// The model state format: exact round trips, exact resumption, and a clear error for every way a
// state can be malformed (each branch of the parser, with the checksum recomputed so the parser
// itself is reached).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "hopper/error.h"
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

    std::string version = good;
    poke<uint16_t>(version, 8, 2);
    try {
        (void)deserialize_state(reseal(version));
        FAIL() << "accepted version 2";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Data);
        EXPECT_EQ(e.message(), "unsupported model state format version 2");
    }
    std::string flags = good;
    poke<uint16_t>(flags, 10, 4);
    expect_data_error(reseal(flags), "unknown flags");
    std::string reserved = good;
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
