// One model's visit of one segment: what the train_segment aggregate does with the segment's packed
// buffers (train_agg.cpp), shared with the segment workers that train every hop of an iteration in
// one group of processes (hop_workers.cpp), so that both ways train bit for bit alike.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hopper/trainer.h"
#include "pg/common/pg_headers.h"
#include "pg/runtime/state_store.h"

namespace hopper::pg {

class SegmentVisit {
public:
    // Starts training `model_state` (a state, or a reference into the run's shared area:
    // state_store.h) on segment `dist_key`.
    SegmentVisit(std::string_view model_state, int32_t mst_key, int32_t dist_key);
    // One packed buffer (independent_var, dependent_var: float4[] values, possibly toasted), in
    // buffer_id order.
    void add(Datum x, Datum y);
    // Ends the visit: the trained state, or, when the state came by reference, the reference to the
    // trained state written back into its slot.
    std::string finish();
    // "While training mst_key m on segment dist_key d."
    std::string where() const;

private:
    [[noreturn]] void rethrow_with_location(const Error& e) const;
    void train_window(int passes);

    std::unique_ptr<Trainer> trainer_;
    int32_t mst_key_ = 0;
    int32_t dist_key_ = 0;
    // Where the state came from when it was passed by reference: the trained state goes back there.
    std::optional<ReferencedState> from_;
    bool first_buffer_ = true;
    // fit.steps_per_epoch: the largest buffer the memory backstop has allowed (a step is a buffer).
    int step_rows_checked_ = 0;
    // Buffers kept for epochs > 1 (each visit trains `epochs` passes over the segment).
    std::vector<std::vector<float>> cached_x_, cached_y_;
    std::vector<int> cached_rows_;
    std::size_t cached_bytes_ = 0;
    // fit.shuffle: the rows waiting to be reshuffled, as views of the run's buffer cache (stable
    // for the run) or of copies kept here, and their bytes.
    std::vector<Trainer::RowBlock> window_;
    std::vector<std::vector<float>> copies_;
    std::size_t window_bytes_ = 0;
    bool reported_ = false;  // the visit's first progress report was made
};

}  // namespace hopper::pg
