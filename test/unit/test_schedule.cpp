// The hopper schedule's guarantees, checked exhaustively for small M and S.
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "hopper/error.h"
#include "hopper/schedule.h"

using hopper::HopSchedule;

class ScheduleCoverage : public ::testing::TestWithParam<std::pair<int, int>> {};

TEST_P(ScheduleCoverage, EveryIterationVisitsEachModelSegmentPairExactlyOnce) {
    const auto [models, segments] = GetParam();
    HopSchedule s(models, segments);
    for (int it = 0; it < 4; ++it) {
        std::set<std::pair<int, int>> seen;
        for (int hop = 0; hop < s.hops_per_iteration(); ++hop) {
            std::set<int> busy_segments;
            std::set<int> positions;
            for (int m = 0; m < models; ++m) {
                const int p = s.position(m, it, hop);
                ASSERT_GE(p, 0);
                ASSERT_LT(p, s.ring_size());
                // One model per position: a model is never on two segments, a segment never has two.
                ASSERT_TRUE(positions.insert(p).second) << "two models at position " << p;
                const int seg = s.segment(m, it, hop);
                if (seg >= 0) {
                    ASSERT_LT(seg, segments);
                    ASSERT_TRUE(busy_segments.insert(seg).second);
                    ASSERT_TRUE(seen.insert({m, seg}).second)
                        << "model " << m << " visits segment " << seg << " twice in iteration " << it;
                }
            }
        }
        EXPECT_EQ(seen.size(), static_cast<size_t>(models * segments)) << "iteration " << it;
    }
}

TEST_P(ScheduleCoverage, NextIterationStartsWhereThePreviousEnded) {
    const auto [models, segments] = GetParam();
    HopSchedule s(models, segments);
    const int last = s.hops_per_iteration() - 1;
    for (int it = 0; it < 3; ++it)
        for (int m = 0; m < models; ++m)
            EXPECT_EQ(s.position(m, it + 1, 0), s.position(m, it, last));
}

TEST_P(ScheduleCoverage, EachHopIsTheFixedRotation) {
    const auto [models, segments] = GetParam();
    HopSchedule s(models, segments);
    for (int m = 0; m < models; ++m)
        for (int hop = 0; hop + 1 < s.hops_per_iteration(); ++hop)
            EXPECT_EQ(s.position(m, 2, hop + 1), s.next_position(s.position(m, 2, hop)));
}

INSTANTIATE_TEST_SUITE_P(ModelsAndSegments, ScheduleCoverage,
                         ::testing::Values(std::pair{1, 1}, std::pair{1, 4}, std::pair{4, 1}, std::pair{2, 4},
                                           std::pair{4, 4}, std::pair{5, 4}, std::pair{7, 3}, std::pair{3, 7},
                                           std::pair{8, 2}, std::pair{16, 16}));

TEST(Schedule, RingIsTheLargerOfModelsAndSegments) {
    EXPECT_EQ(HopSchedule(3, 5).hops_per_iteration(), 5);
    EXPECT_EQ(HopSchedule(6, 2).hops_per_iteration(), 6);
    EXPECT_EQ(HopSchedule(1, 1).hops_per_iteration(), 1);
}

TEST(Schedule, FirstIterationVisitsSegmentsInOrder) {
    HopSchedule s(1, 4);
    EXPECT_EQ(s.visiting_order(0, 0), (std::vector<int>{0, 1, 2, 3}));
    // The next iteration begins on the segment the previous one ended on.
    EXPECT_EQ(s.visiting_order(0, 1), (std::vector<int>{3, 0, 1, 2}));
}

TEST(Schedule, WaitingModelsSitOutsideTheSegments) {
    HopSchedule s(3, 1);
    int training = 0;
    for (int m = 0; m < 3; ++m)
        if (s.segment(m, 0, 0) >= 0) ++training;
    EXPECT_EQ(training, 1);
}

TEST(Schedule, RefusesEmptySizes) {
    EXPECT_THROW(HopSchedule(0, 2), hopper::Error);
    EXPECT_THROW(HopSchedule(2, 0), hopper::Error);
}
