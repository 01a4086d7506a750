#include "hopper/schedule.h"

#include <algorithm>
#include <string>

#include "hopper/error.h"

namespace hopper {

HopSchedule::HopSchedule(int num_models, int num_segments)
    : models_(num_models), segments_(num_segments), ring_(std::max(num_models, num_segments)) {
    if (num_models < 1)
        fail(ErrorKind::InvalidParameter, "at least one model configuration is needed");
    if (num_segments < 1)
        fail(ErrorKind::InvalidParameter, "at least one segment is needed");
}

int HopSchedule::position(int model, int iteration, int hop) const {
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
