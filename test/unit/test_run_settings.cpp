// A training run's settings are validated in one place (hopper/run_settings.h).
#include <climits>
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "hopper/error.h"
#include "hopper/run_settings.h"

using namespace hopper;

namespace {
void expect_invalid(const std::function<void()>& f, const std::string& message) {
    try {
        f();
        ADD_FAILURE() << "accepted; expected: " << message;
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::InvalidParameter);
        EXPECT_EQ(e.message(), message);
    }
}
}  // namespace

TEST(RunSettings, DefaultsAndGivenValues) {
    RunSettings s = make_run_settings(10, std::nullopt, std::nullopt, std::nullopt);
    EXPECT_EQ(s.num_iterations, 10);
    EXPECT_EQ(s.metrics_frequency, 1);
    EXPECT_EQ(s.checkpoint_frequency, -1);
    EXPECT_FALSE(s.combine_levels);
    s = make_run_settings(4, 2, 0, 3);
    EXPECT_EQ(s.metrics_frequency, 2);
    EXPECT_EQ(s.checkpoint_frequency, 0);
    EXPECT_EQ(*s.combine_levels, 3);
}

TEST(RunSettings, Refusals) {
    expect_invalid([] { make_run_settings(0, std::nullopt, std::nullopt, std::nullopt); },
                   "num_iterations must be positive");
    expect_invalid([] { make_run_settings(int64_t(INT_MAX) + 1, std::nullopt, std::nullopt, std::nullopt); },
                   "num_iterations must be positive");
    expect_invalid([] { make_run_settings(1, 0, std::nullopt, std::nullopt); },
                   "metrics_compute_frequency must be positive");
    expect_invalid([] { make_run_settings(1, std::nullopt, -1, std::nullopt); },
                   "checkpoint_frequency must not be negative");
    expect_invalid([] { make_run_settings(1, std::nullopt, std::nullopt, 4); }, "combine_levels must be 2 or 3");
    expect_invalid([] { check_combine_levels(1, "levels"); }, "levels must be 2 or 3");
}
