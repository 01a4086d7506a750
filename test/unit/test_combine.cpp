// Hierarchical combine: mergeable states (exact model averaging, compensated vector sums, metrics),
// the 2-level and 3-level forms, their serialized form, topologies and the insertion rule.
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "error_helpers.h"
#include "hopper/combine.h"
#include "hopper/error.h"
#include "hopper/state_format.h"
#include "hopper/trainer.h"

using namespace hopper;
using hopper::test::kind_of;
using hopper::test::message_of;

namespace {

ModelConfig small_config(const std::string& optimizer = "Adam(lr=0.01)") {
    return resolve_config(parse_architecture(R"({"input_dim": 3, "layers": [{"units": 4, "activation": "relu"},
                                                                           {"units": 2, "activation": "softmax"}]})"),
                          parse_compile_params("optimizer='" + optimizer + "', metrics=['accuracy']"),
                          parse_fit_params("batch_size=4, seed=7"));
}

// A model trained a little on its own random data, so copies differ in weights and optimizer slots.
std::string trained_state(const ModelConfig& config, uint64_t data_seed, int rows = 8) {
    Trainer t(config);
    std::mt19937_64 rng(data_seed);
    std::normal_distribution<float> n(0.0f, 1.0f);
    std::vector<float> x(std::size_t(rows) * 3), y(std::size_t(rows) * 2, 0.0f);
    for (float& v : x) v = n(rng);
    for (int r = 0; r < rows; ++r) y[std::size_t(r) * 2 + (x[std::size_t(r) * 3] > 0 ? 1 : 0)] = 1.0f;
    t.begin_visit();
    t.train_buffer(x.data(), y.data(), rows);
    t.finish_visit();
    return serialize_state(t);
}

bool close(double a, double b) {
    return std::fabs(a - b) <= kFloatStateTolerance * std::max({1.0, std::fabs(a), std::fabs(b)});
}

// 8 segments on 4 nodes in 2 groups (the benchmark's topology).
std::vector<SegmentPlacement> eight_in_two() {
    std::vector<SegmentPlacement> s;
    for (int k = 0; k < 8; ++k) s.push_back({k, "node" + std::to_string(k / 2), k < 4 ? "east" : "west"});
    return s;
}

std::map<int32_t, std::string> groups_of(const std::vector<SegmentPlacement>& s) {
    std::map<int32_t, std::string> g;
    for (const auto& p : s) g[p.dist_key] = p.group;
    return g;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Exact fixed point.

TEST(CombineFixedPoint, ExactForFloatsAndRoundsTinyValuesHalfToEven) {
    EXPECT_TRUE(to_fixed_point(1.0) == (__int128(1) << 64));
    EXPECT_TRUE(to_fixed_point(-0.5) == -(__int128(1) << 63));
    EXPECT_TRUE(to_fixed_point(0.0) == 0);
    EXPECT_TRUE(to_fixed_point(std::ldexp(1.0, -64)) == 1);
    EXPECT_TRUE(to_fixed_point(std::ldexp(1.0, -65)) == 0);  // half: to even (0)
    EXPECT_TRUE(to_fixed_point(std::ldexp(3.0, -65)) == 2);  // 1.5: to even (2)
    EXPECT_TRUE(to_fixed_point(-std::ldexp(3.0, -65)) == -2);
    EXPECT_TRUE(to_fixed_point(std::ldexp(5.0, -66)) == 1);  // 1.25
    EXPECT_TRUE(to_fixed_point(std::ldexp(1.0, -200)) == 0);
    // Every float32 of magnitude >= 2^-41 round-trips exactly, whatever the weight.
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-100.0f, 100.0f);
    for (int i = 0; i < 2000; ++i) {
        float v = u(rng) * std::pow(2.0f, float(int(rng() % 60) - 30));
        uint64_t w = 1 + rng() % 100000;
        EXPECT_EQ(float(from_fixed_point(to_fixed_point(v) * __int128(w), w)), v);
    }
    EXPECT_EQ(kind_of([] { to_fixed_point(std::ldexp(1.0, 63)); }), ErrorKind::Data);
    EXPECT_EQ(kind_of([] { to_fixed_point(std::nan("")); }), ErrorKind::Data);
    EXPECT_EQ(kind_of([] { to_fixed_point(INFINITY); }), ErrorKind::Data);
    EXPECT_NO_THROW(to_fixed_point(std::ldexp(1.0, 63) - std::ldexp(1.0, 10)));
}

// ---------------------------------------------------------------------------------------------
// Model averaging.

TEST(CombineModelAverage, AveragingIdenticalModelsGivesTheModelBitForBit) {
    const ModelConfig c = small_config();
    const std::string s = trained_state(c, 1);
    ModelAverageState a;
    a.add(s, 100);
    a.add(s, 37);
    a.add(s, 1);
    FrozenModel in = load_frozen_model(s), out = load_frozen_model(a.result());
    EXPECT_EQ(in.params, out.params);
    EXPECT_EQ(deserialize_state(s).optimizer().slots(), deserialize_state(a.result()).optimizer().slots());
}

TEST(CombineModelAverage, WeightedMeanOfParametersAndOptimizerSlots) {
    const ModelConfig c = small_config();
    const std::string s1 = trained_state(c, 1), s2 = trained_state(c, 2);
    ModelAverageState a;
    a.add(s1, 3);
    a.add(s2, 1);
    Trainer t1 = deserialize_state(s1), t2 = deserialize_state(s2), avg = deserialize_state(a.result());
    ASSERT_EQ(avg.params().size(), c.arch.num_params());
    for (std::size_t i = 0; i < avg.params().size(); ++i)
        EXPECT_FLOAT_EQ(avg.params()[i], float((3.0 * t1.params()[i] + t2.params()[i]) / 4.0)) << i;
    ASSERT_EQ(avg.optimizer().slots().size(), 2 * c.arch.num_params());  // Adam: m and v
    for (std::size_t i = 0; i < avg.optimizer().slots().size(); ++i)
        EXPECT_FLOAT_EQ(avg.optimizer().slots()[i],
                        float((3.0 * t1.optimizer().slots()[i] + t2.optimizer().slots()[i]) / 4.0));
    EXPECT_EQ(a.weight, 4u);
    EXPECT_EQ(a.models, 2u);
}

TEST(CombineModelAverage, CountersOfCopiesTrainedFromOneState) {
    const ModelConfig c = small_config();
    // Two copies of one model, each trained on its own data for one visit (rows 8 and 12).
    Trainer base(c);
    base.counters().samples_seen = 100;
    base.counters().visits = 5;
    base.counters().steps = 40;
    const std::string b = serialize_state(base);
    std::vector<std::string> copies;
    for (int rows : {8, 12}) {
        Trainer t = deserialize_state(b);
        std::vector<float> x(std::size_t(rows) * 3, 0.5f), y(std::size_t(rows) * 2, 0.0f);
        for (int r = 0; r < rows; ++r) y[std::size_t(r) * 2] = 1.0f;
        t.begin_visit();
        t.train_buffer(x.data(), y.data(), rows);
        t.finish_visit();
        copies.push_back(serialize_state(t));
    }
    ModelAverageState a;
    a.add(copies[0], 8);
    a.add(copies[1], 12);
    TrainCounters out = deserialize_state(a.result()).counters(), c0 = inspect_state(copies[0]).counters,
                  c1 = inspect_state(copies[1]).counters;
    EXPECT_EQ(out.samples_seen, 100u + 8 + 12);  // the common history plus both visits
    EXPECT_EQ(out.visits, 5u + 2);
    EXPECT_EQ(out.steps, std::max(c0.steps, c1.steps));
    EXPECT_EQ(out.last_visit_samples, 20u);
    EXPECT_NEAR(out.last_visit_loss_sum, c0.last_visit_loss_sum + c1.last_visit_loss_sum, 1e-12);
    EXPECT_FALSE(out.diverged);
    // The running training totals of the copies add up: each trained on its own rows. Exactly, and
    // in any order, also through the serialized partial states.
    EXPECT_EQ(out.iteration_totals.count, 20.0);
    EXPECT_EQ(out.iteration_totals.loss_sum, c0.iteration_totals.loss_sum + c1.iteration_totals.loss_sum);
    ASSERT_EQ(out.iteration_totals.metric_sums.size(), 1u);
    EXPECT_EQ(out.iteration_totals.metric_sums[0],
              c0.iteration_totals.metric_sums[0] + c1.iteration_totals.metric_sums[0]);
    ModelAverageState first, second;
    second.add(copies[1], 12);
    first.add(copies[0], 8);
    ModelAverageState merged = ModelAverageState::deserialize(second.serialize());
    merged.merge(ModelAverageState::deserialize(first.serialize()));
    EXPECT_EQ(merged.result(), a.result());
}

TEST(CombineModelAverage, ThreeLevelAndTwoLevelAreIdenticalInAnyOrder) {
    const ModelConfig c = small_config();
    std::vector<std::pair<int32_t, ModelAverageState>> partials;
    for (int k = 0; k < 8; ++k) {
        ModelAverageState s;
        s.add(trained_state(c, 10 + k, 4 + k), 1000 + 37 * k);
        partials.emplace_back(k, std::move(s));
    }
    const std::string two = combine_two_level(partials).result();
    EXPECT_EQ(two, combine_three_level(partials, groups_of(eight_in_two())).result());
    // Any other grouping and any merge order: the same bytes.
    std::map<int32_t, std::string> odd;
    for (int k = 0; k < 8; ++k) odd[k] = k % 3 == 0 ? "a" : (k < 5 ? "b" : "c");
    EXPECT_EQ(two, combine_three_level(partials, odd).result());
    std::mt19937 rng(5);
    for (int trial = 0; trial < 5; ++trial) {
        std::shuffle(partials.begin(), partials.end(), rng);
        ModelAverageState acc;  // merge as a left fold in a random order
        for (const auto& p : partials) acc.merge(p.second);
        EXPECT_EQ(two, acc.result());
        ModelAverageState l, r;  // or as a random binary tree
        for (std::size_t i = 0; i < partials.size(); ++i) (i % 2 ? l : r).merge(partials[i].second);
        r.merge(l);
        EXPECT_EQ(two, r.result());
    }
    // And the same as one state fed every model directly.
    ModelAverageState direct;
    for (int k = 7; k >= 0; --k) direct.add(trained_state(c, 10 + k, 4 + k), 1000 + 37 * k);
    EXPECT_EQ(two, direct.result());
}

TEST(CombineModelAverage, SerializedStatesRoundTripAndDamageIsDetected) {
    const ModelConfig c = small_config();
    ModelAverageState a;
    a.add(trained_state(c, 1), 5);
    a.add(trained_state(c, 2), 9);
    const std::string bytes = a.serialize();
    EXPECT_EQ(bytes.size(), ModelAverageState::serialized_size(c));
    ModelAverageState b = ModelAverageState::deserialize(bytes);
    EXPECT_EQ(b.serialize(), bytes);
    EXPECT_EQ(b.result(), a.result());
    // An empty state round-trips too.
    EXPECT_TRUE(ModelAverageState::deserialize(ModelAverageState().serialize()).empty());

    std::string flipped = bytes;
    flipped[bytes.size() / 2] ^= 0x10;
    EXPECT_EQ(message_of([&] { ModelAverageState::deserialize(flipped); }),
              "invalid model averaging state: checksum mismatch");
    EXPECT_EQ(kind_of([&] { ModelAverageState::deserialize(bytes.substr(0, bytes.size() - 9)); }), ErrorKind::Data);
    EXPECT_EQ(kind_of([&] { ModelAverageState::deserialize(""); }), ErrorKind::Data);
    EXPECT_EQ(kind_of([&] { ModelAverageState::deserialize(std::string(64, 'x')); }), ErrorKind::Data);
    VectorSumState v;
    const double x[2] = {1, 2};
    v.add(x, 2);
    EXPECT_EQ(message_of([&] { ModelAverageState::deserialize(v.serialize()); }),
              "invalid model averaging state: it is a vector sum state");
    // A model state is not an averaging state, and an averaging state is not a model state.
    EXPECT_EQ(kind_of([&] { ModelAverageState::deserialize(trained_state(c, 1)); }), ErrorKind::Data);
    EXPECT_EQ(kind_of([&] { inspect_state(bytes); }), ErrorKind::Data);
}

TEST(CombineModelAverage, RefusesMixedConfigurationsZeroWeightsAndOverflow) {
    ModelAverageState a;
    a.add(trained_state(small_config(), 1), 1);
    EXPECT_EQ(kind_of([&] { a.add(trained_state(small_config("SGD(lr=0.1)"), 1), 1); }), ErrorKind::InvalidParameter);
    ModelAverageState b;
    b.add(trained_state(small_config("Adam(lr=0.5)"), 1), 1);
    EXPECT_EQ(message_of([&] { a.merge(b); }), "cannot average model states with different configurations");

    ModelAverageState z;
    z.add(trained_state(small_config(), 1), 0);
    z.add(trained_state(small_config(), 2), 0);
    EXPECT_EQ(message_of([&] { z.result(); }), "cannot average model states whose weights sum to zero");

    EXPECT_EQ(kind_of([] { ModelAverageState().result(); }), ErrorKind::Internal);
    EXPECT_EQ(kind_of([] { ModelAverageState().add(trained_state(small_config(), 1), uint64_t(1) << 63); }),
              ErrorKind::InvalidParameter);
    EXPECT_EQ(kind_of([] { ModelAverageState().add("not a state", 1); }), ErrorKind::Data);
}

TEST(CombineModelAverage, DivergedCopiesAreLeftOutAndMarkTheAverage) {
    const ModelConfig c = small_config();
    const std::string healthy = trained_state(c, 2);
    Trainer flagged = deserialize_state(trained_state(c, 1));
    flagged.counters().diverged = true;
    // A parameter of 2^40 times a weight of 2^30 does not fit 2^63: that copy has diverged too.
    Trainer huge = deserialize_state(trained_state(c, 3));
    huge.params()[0] = std::ldexp(1.0f, 40);
    Trainer inf = deserialize_state(trained_state(c, 4));
    inf.optimizer().slots()[3] = INFINITY;
    ModelAverageState a, b;
    a.add(serialize_state(flagged), 5);
    a.add(healthy, 7);
    b.add(serialize_state(huge), uint64_t(1) << 30);
    b.add(serialize_state(inf), 1);
    a.merge(b);
    EXPECT_EQ(a.models, 4u);
    EXPECT_EQ(a.excluded, 3u);
    EXPECT_EQ(a.weight, 7u);
    const std::string avg = a.result();
    EXPECT_TRUE(inspect_state(avg).counters.diverged);
    EXPECT_EQ(load_frozen_model(avg).params, load_frozen_model(healthy).params);  // the healthy copy alone
    EXPECT_EQ(ModelAverageState::deserialize(a.serialize()).serialize(), a.serialize());
    // Every copy diverged: no average (NaN parameters), marked diverged.
    ModelAverageState all;
    all.add(serialize_state(flagged), 1);
    const std::string none = all.result();
    EXPECT_TRUE(inspect_state(none).counters.diverged);
    EXPECT_TRUE(std::isnan(load_frozen_model(none).params[0]));
    // Healthy copies whose weighted sum exceeds 2^63 are an error.
    Trainer big = deserialize_state(trained_state(c, 5));
    big.params()[1] = std::ldexp(1.0f, 61);
    ModelAverageState o;
    o.add(serialize_state(big), 2);
    EXPECT_EQ(kind_of([&] { o.add(serialize_state(big), 2); }), ErrorKind::Data);
}

// ---------------------------------------------------------------------------------------------
// Vector sums.

TEST(CombineVectorSum, SumsMeansAndCompensation) {
    VectorSumState s;
    const double a[3] = {1e16, 1.0, -2.0}, b[3] = {1.0, 2.0, 4.0}, c[3] = {-1e16, 3.0, 0.5};
    s.add(a, 3);
    s.add(b, 3);
    s.add(c, 3);
    EXPECT_EQ(s.count, 3u);
    EXPECT_EQ(s.total(), (std::vector<double>{1.0, 6.0, 2.5}));  // plain double sums would lose the 1
    EXPECT_EQ(s.mean()[1], 2.0);
    const double bad[2] = {1.0, 2.0};
    EXPECT_EQ(message_of([&] { s.add(bad, 2); }), "vectors to sum have different lengths");
    const double nan[3] = {1.0, NAN, 2.0};
    EXPECT_EQ(message_of([&] { s.add(nan, 3); }), "vector to sum has a non-finite element");
    VectorSumState r = VectorSumState::deserialize(s.serialize());
    EXPECT_EQ(r.count, 3u);
    EXPECT_EQ(r.total(), s.total());
    VectorSumState other;
    other.add(bad, 2);
    EXPECT_EQ(kind_of([&] { r.merge(other); }), ErrorKind::Data);
    std::string damaged = s.serialize();
    damaged[20] ^= 1;
    EXPECT_EQ(kind_of([&] { VectorSumState::deserialize(damaged); }), ErrorKind::Data);
    EXPECT_EQ(message_of([&] { VectorSumState::deserialize(MetricsState().serialize()); }),
              "invalid vector sum state: it is a metrics state");
}

TEST(CombineVectorSum, ThreeLevelMatchesTwoLevelWithinToleranceAndCountsExactly) {
    std::mt19937_64 rng(11);
    std::normal_distribution<double> n(0.0, 1.0);
    std::vector<std::pair<int32_t, VectorSumState>> partials;
    for (int k = 0; k < 8; ++k) {
        VectorSumState s;
        for (int row = 0; row < 500; ++row) {
            double x[4];
            for (double& v : x) v = n(rng) * std::pow(10.0, double(rng() % 12) - 6.0);
            s.add(x, 4);
        }
        partials.emplace_back(k, std::move(s));
    }
    VectorSumState two = combine_two_level(partials), three = combine_three_level(partials, groups_of(eight_in_two()));
    EXPECT_EQ(two.count, 4000u);
    EXPECT_EQ(three.count, two.count);
    for (int i = 0; i < 4; ++i)
        EXPECT_TRUE(close(two.total()[i], three.total()[i])) << two.total()[i] << " " << three.total()[i];
    // The fixed order makes each form reproducible.
    std::vector<std::pair<int32_t, VectorSumState>> reversed(partials.rbegin(), partials.rend());
    EXPECT_EQ(combine_two_level(reversed).total(), two.total());
    EXPECT_EQ(combine_three_level(reversed, groups_of(eight_in_two())).total(), three.total());
}

// ---------------------------------------------------------------------------------------------
// Metrics.

TEST(CombineMetrics, MergesTotalsOfOneCompileConfiguration) {
    const ModelConfig c = small_config();
    MetricsState a, b;
    a.start(c.compile);
    b.start(c.compile);
    a.totals.loss_sum = 3.0;
    a.totals.count = 4;
    a.totals.metric_sums = {3.0};
    b.totals.loss_sum = 1.0;
    b.totals.count = 4;
    b.totals.metric_sums = {2.0};
    MetricsState m;
    m.merge(a);
    m.merge(b);
    EXPECT_EQ(m.totals.count, 8.0);
    EXPECT_DOUBLE_EQ(m.totals.loss(), 0.5);
    EXPECT_EQ(m.metrics_json(), R"({"accuracy":0.625})");
    EXPECT_EQ(m.loss_name, "softmax_cross_entropy");
    MetricsState r = MetricsState::deserialize(m.serialize());
    EXPECT_EQ(r.serialize(), m.serialize());
    EXPECT_EQ(r.metrics_json(), m.metrics_json());
    EXPECT_EQ(MetricsState().metrics_json(), "{}");
    EXPECT_TRUE(MetricsState::deserialize(MetricsState().serialize()).empty());

    ModelConfig other = c;
    other.compile.metrics = {Metric::MeanAbsoluteError};
    MetricsState x;
    x.start(other.compile);
    x.totals.count = 1;
    EXPECT_EQ(message_of([&] { m.merge(x); }), "cannot merge metrics of different compile parameters");
    EXPECT_EQ(kind_of([&] { a.start(other.compile); }), ErrorKind::InvalidParameter);
}

TEST(CombineMetrics, ThreeLevelMatchesTwoLevelWithinTolerance) {
    const ModelConfig c = small_config();
    std::mt19937_64 rng(2);
    std::uniform_real_distribution<double> u(0.0, 3.0);
    std::vector<std::pair<int32_t, MetricsState>> partials;
    for (int k = 0; k < 8; ++k) {
        MetricsState s;
        s.start(c.compile);
        for (int i = 0; i < 1000; ++i) {
            s.totals.loss_sum += u(rng);
            s.totals.metric_sums[0] += u(rng) > 1.5 ? 1.0 : 0.0;
            s.totals.count += 1;
        }
        partials.emplace_back(k, std::move(s));
    }
    MetricsState two = combine_two_level(partials), three = combine_three_level(partials, groups_of(eight_in_two()));
    EXPECT_EQ(two.totals.count, three.totals.count);              // integer-valued: exact
    EXPECT_EQ(two.totals.metric_sums, three.totals.metric_sums);  // sums of 0/1: exact
    EXPECT_TRUE(close(two.totals.loss(), three.totals.loss()));
}

// ---------------------------------------------------------------------------------------------
// Topology validation.

TEST(CombineTopology, RejectsInconsistentPlacementsAndCosts) {
    auto segs = eight_in_two();
    EXPECT_NO_THROW(Topology::build(segs, {{"east", "west", 50.0}, {"east", "east", 1.0}}));
    auto dup = segs;
    dup.push_back(segs[3]);  // the same row twice is harmless
    EXPECT_EQ(Topology::build(dup, {}).segments().size(), 8u);

    auto two_groups = segs;
    two_groups.push_back({3, "node1", "west"});
    EXPECT_EQ(message_of([&] { Topology::build(two_groups, {}); }),
              R"(segment dist_key 3 is in two groups: "east" and "west")");
    auto two_nodes = segs;
    two_nodes.push_back({3, "node9", "east"});
    EXPECT_EQ(message_of([&] { Topology::build(two_nodes, {}); }),
              R"(segment dist_key 3 is on two nodes: "node1" and "node9")");
    auto node_split = segs;
    node_split.push_back({8, "node0", "west"});
    EXPECT_EQ(message_of([&] { Topology::build(node_split, {}); }),
              R"(node "node0" is in two groups: "east" and "west")");
    EXPECT_EQ(message_of([&] { Topology::build({{1, "", "g"}}, {}); }), "segment dist_key 1 has an empty node name");
    EXPECT_EQ(message_of([&] { Topology::build({{1, "n", ""}}, {}); }), "segment dist_key 1 has an empty group name");
    EXPECT_EQ(message_of([&] {
                  Topology::build(segs, {{"east", "north", 5.0}});
              }),
              R"(link cost names unknown group "north")");
    EXPECT_EQ(message_of([&] {
                  Topology::build(segs, {{"east", "west", 0.0}});
              }),
              R"(link cost between groups "east" and "west" must be a positive number)");
    EXPECT_EQ(kind_of([&] { Topology::build(segs, {{"east", "west", NAN}}); }), ErrorKind::InvalidParameter);
    EXPECT_EQ(message_of([&] {
                  Topology::build(segs, {{"east", "west", 5.0}, {"west", "east", 6.0}});
              }),
              R"(link cost between groups "east" and "west" is given twice: 5 and 6)");
    EXPECT_NO_THROW(Topology::build(segs, {{"east", "west", 5.0}, {"west", "east", 5.0}}));
    EXPECT_EQ(message_of([] {
                  Topology::build({}, {{"a", "b", 1.0}});
              }),
              "link costs are given but the topology is empty");

    Topology t = Topology::build(segs, {{"west", "east", 50.0}});
    EXPECT_EQ(t.cost("east", "west"), 50.0);
    EXPECT_EQ(t.cost("west", "east"), 50.0);
    EXPECT_FALSE(t.cost("east", "east").has_value());
    EXPECT_EQ(t.groups(), (std::vector<std::string>{"east", "west"}));
    EXPECT_EQ(t.find(5)->node, "node2");
    EXPECT_EQ(t.find(9), nullptr);
}

// ---------------------------------------------------------------------------------------------
// The insertion rule, on fixed topologies.

namespace {
std::vector<int32_t> keys(int n) {
    std::vector<int32_t> k(n);
    for (int i = 0; i < n; ++i) k[i] = i;
    return k;
}
// 2 groups x 2 nodes x 2 segments per node.
std::vector<SegmentPlacement> two_by_two() {
    std::vector<SegmentPlacement> s;
    for (int k = 0; k < 8; ++k)
        s.push_back({k, std::string(k < 4 ? "e" : "w") + std::to_string((k / 2) % 2), k < 4 ? "e" : "w"});
    return s;
}
const CombineCheck& check(const CombineDecision& d, const std::string& name) {
    for (const auto& c : d.checks)
        if (c.name == name) return c;
    throw std::runtime_error("no check " + name);
}
}  // namespace

TEST(CombinePlan, OneGroupNeverInsertsTheLevel) {
    CombineDecision d = plan_combine(Topology(), keys(8), 50'000'000, {});
    EXPECT_FALSE(d.intermediate);
    EXPECT_EQ(d.levels, 2);
    EXPECT_TRUE(d.default_topology);
    EXPECT_EQ(d.groups, 1u);
    EXPECT_EQ(d.reason, "the topology is empty: every segment is in one group");
    EXPECT_EQ(d.group_of.at(7), "default");

    std::vector<SegmentPlacement> one;
    for (int k = 0; k < 8; ++k) one.push_back({k, "n" + std::to_string(k % 2), "rack"});
    d = plan_combine(Topology::build(one, {}), keys(8), 50'000'000, {});
    EXPECT_FALSE(d.intermediate);
    EXPECT_EQ(d.reason, "all producers are in one group");
    EXPECT_EQ(d.nodes, 2u);
}

TEST(CombinePlan, TwoGroupsOfTwoNodesWithA50xGapInsertsIt) {
    Topology t = Topology::build(two_by_two(), {{"e", "w", 50.0}, {"e", "e", 1.0}, {"w", "w", 1.0}});
    CombineDecision d = plan_combine(t, keys(8), 4'000'000, {});
    EXPECT_TRUE(d.intermediate);
    EXPECT_EQ(d.levels, 3);
    EXPECT_EQ(d.groups, 2u);
    EXPECT_EQ(d.nodes, 4u);
    EXPECT_EQ(d.bytes_two_level, 32'000'000u);
    EXPECT_EQ(d.bytes_three_level, 8'000'000u);
    EXPECT_DOUBLE_EQ(d.bytes_reduction, 4.0);
    EXPECT_EQ(d.bytes_saved, 24'000'000u);
    EXPECT_TRUE(d.costs_measured);
    EXPECT_DOUBLE_EQ(*d.cost_ratio, 50.0);
    EXPECT_DOUBLE_EQ(*d.cost_two_level, 32e6 * 50);
    EXPECT_DOUBLE_EQ(*d.cost_three_level, 8e6 * 50 + 32e6);
    for (const auto& c : d.checks) EXPECT_TRUE(c.passed) << c.name;
    EXPECT_EQ(d.reason, "the intermediate level cuts the bytes crossing group boundaries 4x, from 32000000 to 8000000");
    EXPECT_EQ(d.group_of.at(2), "e");
    EXPECT_EQ(d.group_of.at(6), "w");

    // The record, as JSON.
    auto j = nlohmann::json::parse(d.to_json());
    EXPECT_EQ(j["levels"], 3);
    EXPECT_EQ(j["bytes_crossing_groups"]["reduction"], 4.0);
    EXPECT_EQ(j["link_costs"]["ratio"], 50.0);
    EXPECT_EQ(j["producers_per_group"]["e"], 4);
    EXPECT_EQ(j["checks"].size(), 5u);
    EXPECT_EQ(j["thresholds"]["cost_factor"], 10.0);
}

TEST(CombinePlan, WithoutA10xGapItIsNotInserted) {
    Topology t = Topology::build(two_by_two(), {{"e", "w", 5.0}, {"e", "e", 1.0}});
    CombineDecision d = plan_combine(t, keys(8), 4'000'000, {});
    EXPECT_FALSE(d.intermediate);
    EXPECT_FALSE(check(d, "link_cost_gap").passed);
    EXPECT_EQ(check(d, "link_cost_gap").value, "5");
    EXPECT_EQ(d.reason, "links between groups cost only 5x the links within a group (needs 10x)");
    // The dearest link within a group counts: 50 between, 6 within one of them -> 8.3x.
    t = Topology::build(two_by_two(), {{"e", "w", 50.0}, {"e", "e", 1.0}, {"w", "w", 6.0}});
    d = plan_combine(t, keys(8), 4'000'000, {});
    EXPECT_FALSE(d.intermediate);
    EXPECT_NEAR(*d.cost_ratio, 50.0 / 6.0, 1e-12);
    // A lower factor accepts it.
    CombinePolicy p;
    p.cost_factor = 8;
    EXPECT_TRUE(plan_combine(t, keys(8), 4'000'000, p).intermediate);
}

TEST(CombinePlan, AStateTooSmallToMatterIsNotWorthALevel) {
    Topology t = Topology::build(two_by_two(), {{"e", "w", 50.0}});
    CombineDecision d = plan_combine(t, keys(8), 40, {});  // a metrics state
    EXPECT_FALSE(d.intermediate);
    EXPECT_TRUE(check(d, "bytes_reduction").passed);  // the factor alone would pass
    EXPECT_FALSE(check(d, "bytes_saved").passed);
    EXPECT_EQ(d.reason,
              "the state is too small to matter: the intermediate level would save 240 bytes (needs 1048576)");
    CombinePolicy p;
    p.min_bytes_saved = 0;
    EXPECT_TRUE(plan_combine(t, keys(8), 40, p).intermediate);
}

TEST(CombinePlan, UnevenGroupsNeedTheBytesFactor) {
    // Groups of 2, 1 and 1 producers: 4 states cross without the level, 3 with it (1.33x < 1.5x).
    std::vector<SegmentPlacement> s = {{0, "a0", "a"}, {1, "a1", "a"}, {2, "b0", "b"}, {3, "c0", "c"}};
    CombineDecision d = plan_combine(Topology::build(s, {}), keys(4), 8'000'000, {});
    EXPECT_FALSE(d.intermediate);
    EXPECT_EQ(d.reason, "the bytes crossing group boundaries would fall only 1.333x (needs 1.5x)");
    // Groups of one producer each: nothing to merge.
    s = {{0, "a0", "a"}, {1, "b0", "b"}};
    d = plan_combine(Topology::build(s, {}), keys(2), 8'000'000, {});
    EXPECT_EQ(d.reason, "no group has 2 or more producers: an intermediate level would merge nothing");
}

TEST(CombinePlan, UnmeasuredCostsAssumeGroupsAreFarApart) {
    CombineDecision d = plan_combine(Topology::build(eight_in_two(), {}), keys(8), 4'000'000, {});
    EXPECT_TRUE(d.intermediate);
    EXPECT_FALSE(d.costs_measured);
    EXPECT_EQ(check(d, "link_cost_gap").value, "not measured");
    EXPECT_FALSE(d.cost_two_level.has_value());
    EXPECT_NE(d.reason.find("link costs not measured"), std::string::npos);
}

TEST(CombinePlan, CoordinatorInsideAGroup) {
    Topology t = Topology::build(eight_in_two(), {{"east", "west", 50.0}});
    CombinePolicy p;
    p.coordinator_group = "east";
    CombineDecision d = plan_combine(t, keys(8), 4'000'000, p);
    EXPECT_EQ(d.bytes_two_level, 16'000'000u);  // only the west group's states cross
    EXPECT_EQ(d.bytes_three_level, 4'000'000u);
    EXPECT_TRUE(d.intermediate);
    p.coordinator_group = "north";
    EXPECT_EQ(message_of([&] { plan_combine(t, keys(8), 1, p); }),
              R"(coordinator group "north" is not in the topology)");
}

TEST(CombinePlan, ProducersMustBeInTheTopologyAndPolicyMustBeSane) {
    Topology t = Topology::build(eight_in_two(), {});
    EXPECT_EQ(message_of([&] { plan_combine(t, {1, 2, 42}, 1, {}); }), "segment dist_key 42 is not in the topology");
    CombinePolicy p;
    p.cost_factor = 0.5;
    EXPECT_EQ(message_of([&] { plan_combine(t, keys(8), 1, p); }), "cost_factor must be at least 1");
    p = {};
    p.bytes_factor = NAN;
    EXPECT_EQ(message_of([&] { plan_combine(t, keys(8), 1, p); }), "bytes_factor must be at least 1");
    // Producers are a set; a subset of the topology is fine.
    CombineDecision d = plan_combine(t, {5, 5, 4, 6, 7}, 4'000'000, {});
    EXPECT_EQ(d.producers, 4u);
    EXPECT_EQ(d.groups, 1u);
    EXPECT_FALSE(d.intermediate);
    EXPECT_EQ(plan_combine(Topology(), {}, 1, {}).reason, "there are no producers");
}

TEST(CombineKinds, NamesRoundTrip) {
    for (CombineKind k : {CombineKind::VectorSum, CombineKind::ModelAverage, CombineKind::Metrics})
        EXPECT_EQ(parse_combine_kind(to_string(k)), k);
    EXPECT_EQ(message_of([] { parse_combine_kind("median"); }), "unknown combine kind \"median\"");
}

TEST(Combine, CraftedStatesAreBadDataNotBugs) {
    // States any role can hand to the aggregates' final functions: 22000, never an internal error
    // or a wrong figure.
    MetricsState names_only;
    names_only.loss_name = "categorical_crossentropy";
    names_only.metric_names = {"accuracy"};
    const MetricsState read = MetricsState::deserialize(names_only.serialize());
    EXPECT_EQ(read.totals.metric_sums.size(), 1u);
    EXPECT_EQ(read.metrics_json(), R"({"accuracy":null})");

    MetricsState odd_name = names_only;
    odd_name.metric_names = {"acc\xffuracy"};
    odd_name.totals.metric_sums = {0.0};
    EXPECT_EQ(kind_of([&] { MetricsState::deserialize(odd_name.serialize()); }), ErrorKind::Data);

    MetricsState huge_count = names_only;
    huge_count.totals.count = 1e300;
    huge_count.totals.metric_sums = {1.0};
    EXPECT_EQ(kind_of([&] { MetricsState::deserialize(huge_count.serialize()); }), ErrorKind::Data);

    VectorSumState full;
    const double one = 1.0;
    full.add(&one, 1);
    full.count = std::numeric_limits<uint64_t>::max();
    VectorSumState more;
    more.add(&one, 1);
    EXPECT_EQ(kind_of([&] { full.merge(more); }), ErrorKind::Data);

    VectorSumState big, bigger;
    const double x = 1e308;
    big.add(&x, 1);
    bigger.add(&x, 1);
    EXPECT_EQ(kind_of([&] { big.merge(bigger); }), ErrorKind::Data);
    VectorSumState adding;
    adding.add(&x, 1);
    EXPECT_EQ(kind_of([&] { adding.add(&x, 1); }), ErrorKind::Data);
}

// Many groups: lookups by binary search and the links scanned once. Scanning every link for each
// pair of groups (quadratic in the groups, times the links) ran past 10 minutes of CPU on 20,001
// groups, deaf to cancel (a hostile review): here it takes milliseconds, and still picks the
// cheapest link between two involved groups and the dearest within one.
TEST(CombinePlan, ManyGroupsAndLinksArePlannedFromTheLinks) {
    const int G = 20001;
    std::vector<SegmentPlacement> segs;
    for (int k = 0; k < G; ++k) segs.push_back({k, "n" + std::to_string(k), "g" + std::to_string(k)});
    std::vector<LinkCost> links;
    for (int k = 1; k < G; ++k) links.push_back({"g0", "g" + std::to_string(k), 100.0 + k});
    for (int k = 1; k + 1 < G; k += 2) links.push_back({"g" + std::to_string(k), "g" + std::to_string(k + 1), 70.0});
    links.push_back({"g7", "g7", 3.0});
    links.push_back({"g8", "g8", 2.0});
    const Topology t = Topology::build(segs, links);
    EXPECT_EQ(t.groups().size(), std::size_t(G));
    EXPECT_TRUE(t.has_group("g20000"));
    EXPECT_FALSE(t.has_group("g20001"));
    EXPECT_EQ(t.cost("g5", "g0"), 105.0);
    EXPECT_FALSE(t.cost("g2", "g3").has_value());
    const CombineDecision all = plan_combine(t, keys(G), 1 << 20, CombinePolicy{});
    EXPECT_EQ(all.groups, std::size_t(G));
    EXPECT_EQ(all.between_cost, 70.0);
    EXPECT_EQ(all.within_cost, 3.0);
    // Only g0 and g9: the link between them alone counts (101 + 8 = 109), not g1-g2's 70.
    const CombineDecision two = plan_combine(t, {0, 9}, 1 << 20, CombinePolicy{});
    EXPECT_EQ(two.between_cost, 109.0);
    EXPECT_EQ(two.within_cost, 1.0);
}
