#include "hopper/run_settings.h"

#include <climits>
#include <string>

#include "hopper/error.h"

namespace hopper {

namespace {
int positive(int64_t v, const char* name) {
    if (v <= 0 || v > INT_MAX)
        fail(ErrorKind::InvalidParameter, std::string(name) + " must be positive", "It is " + std::to_string(v) + ".");
    return int(v);
}
}  // namespace

void check_combine_levels(int64_t levels, const char* name) {
    if (levels != 2 && levels != 3)
        fail(ErrorKind::InvalidParameter, std::string(name) + " must be 2 or 3",
             "It is " + std::to_string(levels) + ".", "Leave it NULL to let the insertion rule decide.");
}

RunSettings make_run_settings(int64_t num_iterations, std::optional<int64_t> metrics_frequency,
                              std::optional<int64_t> checkpoint_frequency, std::optional<int64_t> combine_levels) {
    RunSettings s;
    s.num_iterations = positive(num_iterations, "num_iterations");
    if (metrics_frequency) s.metrics_frequency = positive(*metrics_frequency, "metrics_compute_frequency");
    if (checkpoint_frequency) {
        if (*checkpoint_frequency < 0 || *checkpoint_frequency > INT_MAX)
            fail(ErrorKind::InvalidParameter, "checkpoint_frequency must not be negative",
                 "It is " + std::to_string(*checkpoint_frequency) + ".",
                 "0 writes a checkpoint only after the last iteration.");
        s.checkpoint_frequency = int(*checkpoint_frequency);
    }
    if (combine_levels) {
        check_combine_levels(*combine_levels, "combine_levels");
        s.combine_levels = int(*combine_levels);
    }
    return s;
}

}  // namespace hopper
