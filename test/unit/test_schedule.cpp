// The hopper schedule's guarantees, checked exhaustively for small M and S.
#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

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
        for (int m = 0; m < models; ++m) EXPECT_EQ(s.position(m, it + 1, 0), s.position(m, it, last));
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

// ---- phased rings (adaptive search) ---------------------------------------------------------------

namespace {

// Checks one iteration of a phased ring: each model visits every segment once, in order from its
// phase; no position or segment holds two models in a hop; K = sum over phases of max(count, 1).
void check_phased(const std::vector<int>& phases, int segments) {
    const HopSchedule s = HopSchedule::for_phases(phases, segments);
    const int M = int(phases.size());
    std::vector<int> count(segments, 0);
    for (int p : phases) ++count[p];
    int expected_ring = 0;
    for (int c : count) expected_ring += std::max(c, 1);
    ASSERT_EQ(s.hops_per_iteration(), expected_ring);
    ASSERT_EQ(s.num_models(), M);
    int trained = 0;
    for (int hop = 0; hop < s.hops_per_iteration(); ++hop) {
        std::set<int> positions, busy;
        for (int m = 0; m < M; ++m) {
            ASSERT_TRUE(positions.insert(s.position(m, 7, hop)).second);
            const int seg = s.segment(m, 7, hop);
            if (seg >= 0) {
                ASSERT_TRUE(busy.insert(seg).second);
                ++trained;
            }
            if (hop + 1 < s.hops_per_iteration()) {
                ASSERT_EQ(s.position(m, 7, hop + 1), s.next_position(s.position(m, 7, hop)));
            }
        }
    }
    ASSERT_EQ(trained, M * segments);
    for (int m = 0; m < M; ++m) {
        std::vector<int> expected;
        for (int k = 0; k < segments; ++k) expected.push_back((phases[m] + k) % segments);
        ASSERT_EQ(s.visiting_order(m, 3), expected) << "model " << m;
    }
}

}  // namespace

TEST(PhasedRing, EveryModelVisitsEverySegmentFromItsPhase) {
    uint64_t state = 12345;
    for (int segments = 1; segments <= 5; ++segments)
        for (int models = 1; models <= 9; ++models)
            for (int trial = 0; trial < 20; ++trial) {
                std::vector<int> phases;
                for (int m = 0; m < models; ++m) {
                    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
                    phases.push_back(int((state >> 33) % uint64_t(segments)));
                }
                check_phased(phases, segments);
            }
}

TEST(PhasedRing, EveryPhaseTakenKeepsEverySegmentBusy) {
    // Two models of each phase on 3 segments: K = 6 hops, 3 segments busy in each.
    const HopSchedule s = HopSchedule::for_phases({0, 1, 2, 2, 1, 0}, 3);
    EXPECT_EQ(s.hops_per_iteration(), 6);
    for (int hop = 0; hop < 6; ++hop) {
        int busy = 0;
        for (int m = 0; m < 6; ++m) busy += s.segment(m, 0, hop) >= 0;
        EXPECT_EQ(busy, 3) << "hop " << hop;
    }
    // One phase only: models queue for their first segment, M + S - 1 hops.
    EXPECT_EQ(HopSchedule::for_phases({1, 1, 1}, 3).hops_per_iteration(), 5);
    EXPECT_THROW(HopSchedule::for_phases({3}, 3), hopper::Error);
    EXPECT_THROW(HopSchedule::for_phases({}, 3), hopper::Error);
}

TEST(PhasedRing, PhasesAreFitMultiplesForUpToSModels) {
    // For M <= S models, fit_multiple's rotation starts model m's iteration i at phase(m, i, S), and
    // a phased ring of those phases visits the segments in the same order.
    for (int segments = 1; segments <= 5; ++segments)
        for (int models = 1; models <= segments; ++models) {
            const HopSchedule fixed(models, segments);
            for (int it = 0; it < 7; ++it) {
                std::vector<int> phases;
                for (int m = 0; m < models; ++m) phases.push_back(HopSchedule::phase(m, uint64_t(it), segments));
                const HopSchedule phased = HopSchedule::for_phases(phases, segments);
                EXPECT_EQ(phased.hops_per_iteration(), fixed.hops_per_iteration());
                for (int m = 0; m < models; ++m) EXPECT_EQ(phased.visiting_order(m, 0), fixed.visiting_order(m, it));
            }
        }
    EXPECT_EQ(HopSchedule::phase(0, 0, 4), 0);
    EXPECT_EQ(HopSchedule::phase(0, 1, 4), 3);
    EXPECT_EQ(HopSchedule::phase(5, 2, 4), 3);
    EXPECT_EQ(HopSchedule::phase(7, 1ull << 40, 3), int((7 - (1ll << 40) % 3 + 3 * 1000) % 3));
}
