#include "hopper/schedule.h"

#include <algorithm>
#include <string>

#include "hopper/error.h"

namespace hopper {

HopSchedule::HopSchedule(int num_models, int num_segments)
    : models_(num_models), segments_(num_segments), ring_(std::max(num_models, num_segments)) {
    if (num_models < 1) fail(ErrorKind::InvalidParameter, "at least one model configuration is needed");
    if (num_segments < 1) fail(ErrorKind::InvalidParameter, "at least one segment is needed");
}

HopSchedule HopSchedule::for_phases(const std::vector<int>& phases, int num_segments) {
    HopSchedule sched(int(phases.size()), num_segments);
    std::vector<std::vector<int>> by_phase(num_segments);
    for (std::size_t m = 0; m < phases.size(); ++m) {
        if (phases[m] < 0 || phases[m] >= num_segments)
            fail(ErrorKind::Internal, "phase " + std::to_string(phases[m]) + " of model " + std::to_string(m) +
                                          " is not a segment of " + std::to_string(num_segments));
        by_phase[phases[m]].push_back(int(m));
    }
    sched.starts_.assign(phases.size(), 0);
    for (int s = 0; s < num_segments; ++s) {
        // Models of phase s take the group's positions in order: the first waits longest, the last
        // starts on segment s itself.
        const std::vector<int>& group = by_phase[s];
        for (std::size_t k = 0; k + 1 < group.size(); ++k) {
            sched.starts_[group[k]] = int(sched.ring_segments_.size());
            sched.ring_segments_.push_back(-1);
        }
        if (!group.empty()) sched.starts_[group.back()] = int(sched.ring_segments_.size());
        sched.ring_segments_.push_back(s);
    }
    sched.ring_ = int(sched.ring_segments_.size());
    return sched;
}

int HopSchedule::phase(int64_t slot, uint64_t iteration, int num_segments) {
    const int64_t S = num_segments;
    const int64_t p = (slot % S - int64_t(iteration % uint64_t(S))) % S;
    return int(p < 0 ? p + S : p);
}

int HopSchedule::position(int model, int iteration, int hop) const {
    if (!starts_.empty()) return (starts_[model] + hop) % ring_;
    // Iteration i starts where i-1 ended: start offset i*(K-1), taken mod K to avoid overflow.
    const long long k = ring_;
    const long long start = (static_cast<long long>(iteration % ring_) * (k - 1)) % k;
    return static_cast<int>((model + start + hop) % k);
}

int HopSchedule::segment(int model, int iteration, int hop) const {
    return segment_of_position(position(model, iteration, hop));
}

std::vector<int> HopSchedule::visiting_order(int model, int iteration) const {
    std::vector<int> order;
    order.reserve(segments_);
    for (int h = 0; h < ring_; ++h) {
        int s = segment(model, iteration, h);
        if (s >= 0) order.push_back(s);
    }
    return order;
}

}  // namespace hopper
