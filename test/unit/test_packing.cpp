// Packing decisions: shuffles, buffer plans, scaling.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include <gtest/gtest.h>

#include "hopper/error.h"
#include "hopper/packing.h"

using namespace hopper;

TEST(Packing, ShuffleIsAPermutationAndReproducible) {
    auto a = shuffled_order(1000, 7);
    auto b = shuffled_order(1000, 7);
    auto c = shuffled_order(1000, 8);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
    auto sorted = a;
    std::sort(sorted.begin(), sorted.end());
    for (uint64_t i = 0; i < sorted.size(); ++i) ASSERT_EQ(sorted[i], i);
    // Not the identity: a shuffle that does nothing would pass the permutation check.
    int fixed = 0;
    for (uint64_t i = 0; i < a.size(); ++i) fixed += a[i] == i;
    EXPECT_LT(fixed, 20);
}

TEST(Packing, ShuffleIsPinnedAcrossPlatforms) {
    // Changing the generator silently would change every user's packed tables.
    EXPECT_EQ(shuffled_order(10, 1), (std::vector<uint64_t>{3, 1, 0, 7, 8, 6, 5, 2, 4, 9}));
}

TEST(Packing, BuffersAreEvenAndDealtRoundRobin) {
    BufferPlan p = plan_buffers(1000, 256, 3);
    ASSERT_EQ(p.rows.size(), 4u);
    EXPECT_EQ(std::accumulate(p.rows.begin(), p.rows.end(), 0), 1000);
    for (int r : p.rows) {
        EXPECT_LE(r, 256);
        EXPECT_GE(r, 250);
    }
    EXPECT_EQ(p.segment, (std::vector<int>{0, 1, 2, 0}));
    EXPECT_EQ(p.buffers_per_segment, (std::vector<int>{2, 1, 1}));
    EXPECT_EQ(p.rows_per_segment[0] + p.rows_per_segment[1] + p.rows_per_segment[2], 1000);
}

TEST(Packing, EverySegmentGetsABufferEvenWithFewRows) {
    BufferPlan p = plan_buffers(10, 256, 4);
    ASSERT_EQ(p.rows.size(), 4u);
    EXPECT_EQ(p.adjusted_buffer_size, 3);
    for (int b : p.buffers_per_segment) EXPECT_EQ(b, 1);
}

// Apache MADlib's layout (its tests assert it): ceil(rows / buffers) rows per buffer, the last short.
TEST(Packing, FullBuffersLeaveTheLastShort) {
    EXPECT_EQ(plan_buffers(17, 5, 1, BufferFill::Full).rows, (std::vector<int>{5, 5, 5, 2}));
    EXPECT_EQ(plan_buffers(17, 5, 1).rows, (std::vector<int>{5, 4, 4, 4}));
    EXPECT_EQ(plan_buffers(17, 4, 1, BufferFill::Full).rows, (std::vector<int>{4, 4, 4, 4, 1}));
    EXPECT_EQ(plan_buffers(17, 4, 1, BufferFill::Full).adjusted_buffer_size, 4);
    // Dealt round-robin to segments as evenly filled buffers are.
    BufferPlan p = plan_buffers(17, 5, 2, BufferFill::Full);
    EXPECT_EQ(p.segment, (std::vector<int>{0, 1, 0, 1}));
    EXPECT_EQ(p.rows_per_segment, (std::vector<int64_t>{10, 7}));
    // Full buffers would leave one empty (5 rows over 4 segments: 2, 2, 1, 0): filled evenly instead.
    EXPECT_EQ(plan_buffers(5, 256, 4, BufferFill::Full).rows, (std::vector<int>{2, 1, 1, 1}));
    EXPECT_EQ(plan_buffers(1000, 256, 3, BufferFill::Full).rows, (std::vector<int>{250, 250, 250, 250}));
    EXPECT_EQ(parse_buffer_fill("full"), BufferFill::Full);
    EXPECT_EQ(parse_buffer_fill("even"), BufferFill::Even);
    EXPECT_STREQ(to_string(BufferFill::Full), "full");
    EXPECT_THROW(parse_buffer_fill("madlib"), Error);
}

TEST(Packing, RefusesImpossiblePlans) {
    EXPECT_THROW(plan_buffers(0, 10, 1), Error);
    EXPECT_THROW(plan_buffers(10, 0, 1), Error);
    EXPECT_THROW(plan_buffers(10, 5, 0), Error);
    EXPECT_THROW(plan_buffers(3, 5, 4), Error);
}

TEST(Packing, StandardizeGivesZeroMeanUnitVariance) {
    FeatureStats st(2);
    std::vector<std::array<float, 2>> rows = {{1, 10}, {2, 10}, {3, 10}, {6, 10}};
    for (auto& r : rows) st.add(r.data());
    auto s = FeatureScaling::from_stats(ScaleKind::Standardize, 1.0, st);
    double sum = 0, sq = 0;
    for (auto r : rows) {
        s.apply(r.data(), 2);
        sum += r[0];
        sq += r[0] * r[0];
        EXPECT_FLOAT_EQ(r[1], 0.0f);  // constant feature: centred, not divided by zero
    }
    EXPECT_NEAR(sum / 4, 0.0, 1e-6);
    EXPECT_NEAR(sq / 4, 1.0, 1e-5);
}

TEST(Packing, MinMaxAndNormalizingConstCompose) {
    FeatureStats st(1);
    float a[] = {0}, b[] = {255};
    st.add(a);
    st.add(b);
    auto s = FeatureScaling::from_stats(ScaleKind::MinMax, 255.0, st);
    float x[] = {127.5f};
    s.apply(x, 1);
    EXPECT_NEAR(x[0], 0.5f, 1e-6);
    auto plain = FeatureScaling::from_stats(ScaleKind::None, 255.0, st);
    float y[] = {51.0f};
    plain.apply(y, 1);
    EXPECT_NEAR(y[0], 0.2f, 1e-6);
    EXPECT_THROW(FeatureScaling::from_stats(ScaleKind::None, 0.0, st), Error);
    EXPECT_THROW(parse_scale_kind("zscore"), Error);
}

TEST(Packing, LargestMagnitude) {
    const float r[] = {1.5f, -300.0f, 255.0f, 0.0f};
    EXPECT_EQ(largest_magnitude(r, 4), 300.0f);
    EXPECT_EQ(largest_magnitude(r, 1), 1.5f);
    EXPECT_EQ(largest_magnitude(r, 0), 0.0f);
    const float negatives[] = {-0.5f, -0.25f};
    EXPECT_EQ(largest_magnitude(negatives, 2), 0.5f);
}

TEST(Packing, FindsNonFiniteValues) {
    float r[] = {1, 2, NAN, 4};
    EXPECT_EQ(first_non_finite(r, 4), 2);
    float ok[] = {1, 2};
    EXPECT_EQ(first_non_finite(ok, 2), -1);
    float inf[] = {INFINITY};
    EXPECT_EQ(first_non_finite(inf, 1), 0);
    // The first of several, anywhere in a long row; the largest finite values and denormals are finite.
    std::vector<float> row(784, std::numeric_limits<float>::max());
    row[1] = -std::numeric_limits<float>::max();
    row[2] = std::numeric_limits<float>::denorm_min();
    EXPECT_EQ(first_non_finite(row.data(), 784), -1);
    row[783] = -INFINITY;
    EXPECT_EQ(first_non_finite(row.data(), 784), 783);
    row[500] = -NAN;
    EXPECT_EQ(first_non_finite(row.data(), 784), 500);
    EXPECT_EQ(first_non_finite(row.data(), 0), -1);
}

// The packing layout is validated in one place for preprocess and preprocess_validation (0.1.0 let
// preprocess_validation create 2000 partitions that preprocess refused).
TEST(Packing, LayoutValidatedOnce) {
    EXPECT_EQ(make_packing_layout(std::nullopt, std::nullopt).buffer_size, 0);
    EXPECT_EQ(make_packing_layout(100, 8).num_segments, 8);
    EXPECT_EQ(make_packing_layout(std::nullopt, kMaxNumSegments).num_segments, kMaxNumSegments);
    for (int64_t bad : {int64_t(0), int64_t(-1), int64_t(kMaxNumSegments) + 1, int64_t(2000)})
        EXPECT_THROW(make_packing_layout(std::nullopt, bad), Error) << bad;
    for (int64_t bad : {int64_t(0), int64_t(-5), int64_t(1) << 40})
        EXPECT_THROW(make_packing_layout(bad, std::nullopt), Error) << bad;
    EXPECT_THROW(check_layout(PackingLayout{256, 2000}), Error);  // a default read from a hand-edited summary
    EXPECT_THROW(check_layout(PackingLayout{0, 4}), Error);
    EXPECT_NO_THROW(check_layout(PackingLayout{256, 4}));
    try {
        make_packing_layout(std::nullopt, 2000);
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::InvalidParameter);
        EXPECT_EQ(e.message(), "num_segments must be between 1 and 1024");
    }
}
