// The settings of a training run, validated in one place (the procedures fit, fit_multiple and
// fit_data_parallel read them from their arguments; nothing else checks them again).
#pragma once

#include <cstdint>
#include <optional>

namespace hopper {

struct RunSettings {
    int num_iterations = 1;
    int metrics_frequency = 1;          // evaluate every n iterations, and always after the last
    int checkpoint_frequency = -1;      // a checkpoint every n iterations and after the last; 0: only after
                                        // the last; -1 (not given): as metrics_frequency
    std::optional<int> combine_levels;  // data-parallel training: 2 or 3; nullopt: the insertion rule
};

// nullopt: not given. num_iterations and metrics_compute_frequency must be positive,
// checkpoint_frequency not negative, combine_levels 2 or 3 (InvalidParameter otherwise).
RunSettings make_run_settings(int64_t num_iterations, std::optional<int64_t> metrics_frequency,
                              std::optional<int64_t> checkpoint_frequency, std::optional<int64_t> combine_levels);

// The one check of combine levels: make_run_settings (fit_data_parallel's combine_levels) and
// hopper.hierarchical_combine (its levels) call it as they read their arguments; the combine itself
// (run_hierarchical_combine) takes levels as checked.
void check_combine_levels(int64_t levels, const char* name);

}  // namespace hopper
