// hopper.train_segment: the aggregate that trains one model on one segment's packed buffers.
// Its state is the model's whole training state (weights, optimizer slots, counters): the query
// `SELECT ..., hopper.train_segment(mi.model_state, d.independent_var, d.dependent_var, ...)
//  FROM packed d JOIN model_input mi USING (dist_key) GROUP BY dist_key, mst_key` trains every
// model sitting on a segment, each segment in its own process when the plan is parallel.
// Training is sequential SGD: there is no combine function, because two halves of a segment
// cannot be trained apart and merged.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hopper/buffer_check.h"
#include "hopper/resources.h"
#include "hopper/state_format.h"
#include "hopper/trainer.h"
#include "pg/common/aggregate.h"
#include "pg/common/datum.h"
#include "pg/common/resource_limits.h"
#include "pg/common/settings.h"
#include "pg/runtime/buffer_cache.h"
#include "pg/runtime/progress.h"
#include "pg/runtime/state_store.h"

namespace {

struct TrainAggState;
[[noreturn]] void rethrow_with_location(const hopper::Error& e, const TrainAggState& s);

struct TrainAggState {
    std::unique_ptr<hopper::Trainer> trainer;
    int32 mst_key = 0;
    int32 dist_key = 0;
    // Where the state came from when it was passed by reference: the trained state goes back there.
    std::optional<hopper::pg::ReferencedState> from;
    // Buffers kept for epochs > 1 (each visit trains `epochs` passes over the segment).
    std::vector<std::vector<float>> cached_x, cached_y;
    std::vector<int> cached_rows;
    std::size_t cached_bytes = 0;
    // fit.shuffle: the rows waiting to be reshuffled, as views of the run's buffer cache (stable
    // for the run) or of copies kept here, and their bytes.
    std::vector<hopper::Trainer::RowBlock> window;
    std::vector<std::vector<float>> copies;
    std::size_t window_bytes = 0;
    bool reported = false;  // the visit's first progress report was made
};

// Trains the rows kept for reshuffling (every pass of the visit: `passes`), then lets them go.
// Progress counts buffers, as when buffers train in order: one report each time the rows trained in
// the first pass reach another buffer's worth (the view's buffers_done never passes buffers_total).
void train_window(TrainAggState& s, int passes) {
    for (int pass = 0; pass < passes; ++pass) {
        hopper::pg::check_for_interrupts();
        std::size_t next = 0;  // the window's buffer whose rows are being counted
        int64_t pending = 0;   // rows trained towards it
        try {
            s.trainer->train_rows(s.window, [&](int rows) {
                if (pass > 0) return;
                pending += rows;
                while (next < s.window.size() && pending >= s.window[next].rows) {
                    pending -= s.window[next].rows;
                    hopper::pg::progress_buffer(s.dist_key, s.mst_key, s.window[next].rows, !s.reported);
                    s.reported = true;
                    ++next;
                }
            });
        } catch (const hopper::Error& e) { rethrow_with_location(e, s); }
    }
    s.window.clear();
    s.copies.clear();
    s.window_bytes = 0;
}

std::string where(const TrainAggState& s) {
    return "While training mst_key " + std::to_string(s.mst_key) + " on segment dist_key " +
           std::to_string(s.dist_key) + ".";
}

// Adds the segment and model to a core error's detail, keeping its kind and message.
[[noreturn]] void rethrow_with_location(const hopper::Error& e, const TrainAggState& s) {
    std::string detail = e.detail().empty() ? where(s) : e.detail() + " " + where(s);
    throw hopper::Error(e.kind(), e.message(), detail, e.hint());
}

}  // namespace

using namespace hopper;
using namespace hopper::pg;

// train_segment_transition(state internal, model_state bytea, x real[], y real[], mst_key int,
//                          dist_key int)
HOPPER_FUNCTION(train_segment_transition) {
    MemoryContext aggcontext = aggregate_context(fcinfo, "train_segment_transition");
    TrainAggState* state = state_arg<TrainAggState>(fcinfo, 0);
    const bool first_buffer = !state;
    if (!state) {
        auto fresh = std::make_unique<TrainAggState>();
        fresh->mst_key = PG_ARGISNULL(4) ? -1 : PG_GETARG_INT32(4);
        fresh->dist_key = PG_ARGISNULL(5) ? -1 : PG_GETARG_INT32(5);
        if (PG_ARGISNULL(1)) fail(ErrorKind::NullValue, "model state must not be NULL", where(*fresh));
        // The model state is the same value on every row of the segment: read it once.
        const std::string bytes = bytea_to_string(PG_GETARG_DATUM(1));
        std::string_view model_state = bytes;
        if (is_state_reference(bytes)) {
            fresh->from = resolve_state_reference(bytes);
            model_state = fresh->from->bytes;
        }
        try {
            // A backstop for direct calls of the aggregate (training runs plan their memory first).
            const StateSummary summary = inspect_state(model_state);
            check_memory(training_bytes(summary.config, summary.config.fit.batch_size), "training this model",
                         "Use a smaller architecture or batch_size.");
            fresh->trainer = std::make_unique<Trainer>(deserialize_state(model_state));
        } catch (const Error& e) { rethrow_with_location(e, *fresh); }
        fresh->trainer->begin_visit();
        state = own_in_context(aggcontext, std::move(fresh));
    }
    if (PG_ARGISNULL(2) || PG_ARGISNULL(3))
        fail(ErrorKind::NullValue, "packed buffers must not be NULL", where(*state));

    const PackedBuffer xb = detoast_buffer(PG_GETARG_DATUM(2)), yb = detoast_buffer(PG_GETARG_DATUM(3));
    Float4Matrix x = float4_matrix(xb.value, "independent_var");
    Float4Matrix y = float4_matrix(yb.value, "dependent_var");
    const Architecture& arch = state->trainer->config().arch;
    try {
        check_training_buffers({x.rows, x.cols}, {y.rows, y.cols}, arch.input_dim, arch.output_dim());
        check_finite_once(xb, x, "independent_var");
        check_finite_once(yb, y, "dependent_var");
    } catch (const Error& e) {
        std::string shape = "Architecture " + arch.shape_string() + ".";
        rethrow_with_location(Error(e.kind(), e.message(), e.detail().empty() ? shape : e.detail(), e.hint()), *state);
    }

    const FitParams& fit = state->trainer->config().fit;
    if (fit.shuffle) {
        // Reshuffling needs the rows of a window at once: buffers in the run's cache are kept as
        // they are, others copied. A window is bounded by its bytes (hopper.shuffle_window_mb, all
        // of them with epochs > 1, within hopper.segment_cache_mb), cached or not, so that every
        // engine cuts a segment into the same windows and trains the same model.
        const std::size_t bytes = sizeof(float) * (std::size_t(x.rows) * x.cols + std::size_t(y.rows) * y.cols);
        const bool cached = xb.finite_checked && yb.finite_checked;
        if (fit.epochs > 1 && state->window_bytes + bytes > std::size_t(setting_segment_cache_mb) * 1024 * 1024)
            fail(ErrorKind::Limit, "segment data does not fit the segment cache",
                 "fit_params has epochs = " + std::to_string(fit.epochs) +
                     " and shuffle, so each segment's buffers are kept in memory to reshuffle them for several "
                     "passes per visit; they exceed hopper.segment_cache_mb (" +
                     std::to_string(setting_segment_cache_mb) + " MB). " + where(*state),
                 "Use more segments, raise hopper.segment_cache_mb, or use epochs = 1 and more iterations.");
        if (fit.epochs == 1 && !state->window.empty() &&
            state->window_bytes + bytes > std::size_t(setting_shuffle_window_mb) * 1024 * 1024)
            train_window(*state, 1);
        const float* kx = x.data;
        const float* ky = y.data;
        if (!cached) {
            state->copies.emplace_back(x.data, x.data + std::size_t(x.rows) * x.cols);
            kx = state->copies.back().data();
            state->copies.emplace_back(y.data, y.data + std::size_t(y.rows) * y.cols);
            ky = state->copies.back().data();
        }
        state->window.push_back(Trainer::RowBlock{kx, ky, x.rows});
        state->window_bytes += bytes;
        PG_RETURN_POINTER(state);
    }
    try {
        state->trainer->train_buffer(x.data, y.data, x.rows);
    } catch (const Error& e) { rethrow_with_location(e, *state); }
    progress_buffer(state->dist_key, state->mst_key, x.rows, first_buffer);
    if (state->trainer->config().fit.epochs > 1) {
        state->cached_bytes += sizeof(float) * (std::size_t(x.rows) * x.cols + std::size_t(y.rows) * y.cols);
        if (state->cached_bytes > std::size_t(setting_segment_cache_mb) * 1024 * 1024)
            fail(ErrorKind::Limit, "segment data does not fit the segment cache",
                 "fit_params has epochs = " + std::to_string(state->trainer->config().fit.epochs) +
                     ", so each segment's buffers are kept in memory to train several passes per visit; they exceed "
                     "hopper.segment_cache_mb (" +
                     std::to_string(setting_segment_cache_mb) + " MB). " + where(*state),
                 "Use more segments, raise hopper.segment_cache_mb, or use epochs = 1 and more iterations.");
        state->cached_x.emplace_back(x.data, x.data + std::size_t(x.rows) * x.cols);
        state->cached_y.emplace_back(y.data, y.data + std::size_t(y.rows) * y.cols);
        state->cached_rows.push_back(x.rows);
    }
    PG_RETURN_POINTER(state);
}

HOPPER_FUNCTION(train_segment_final) {
    if (PG_ARGISNULL(0)) PG_RETURN_NULL();
    auto* state = state_arg<TrainAggState>(fcinfo, 0);
    Trainer& trainer = *state->trainer;
    if (trainer.config().fit.shuffle) train_window(*state, trainer.config().fit.epochs);
    for (int epoch = 1; epoch < trainer.config().fit.epochs && !trainer.config().fit.shuffle; ++epoch) {
        for (std::size_t b = 0; b < state->cached_rows.size(); ++b) {
            check_for_interrupts();
            try {
                trainer.train_buffer(state->cached_x[b].data(), state->cached_y[b].data(), state->cached_rows[b]);
            } catch (const Error& e) { rethrow_with_location(e, *state); }
        }
    }
    state->cached_x.clear();
    state->cached_y.clear();
    state->cached_rows.clear();
    trainer.finish_visit();
    std::string bytes = serialize_state(trainer);
    if (state->from) bytes = store_trained_state(*state->from, bytes);
    PG_RETURN_DATUM(bytes_to_bytea(bytes));
}
