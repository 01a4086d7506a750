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
#include "pg/training/segment_visit.h"

namespace hopper::pg {

SegmentVisit::SegmentVisit(std::string_view model_state, int32_t mst_key, int32_t dist_key)
    : mst_key_(mst_key), dist_key_(dist_key) {
    if (is_state_reference(model_state)) {
        from_ = resolve_state_reference(model_state);
        model_state = from_->bytes;
    }
    try {
        // A backstop for direct calls of the aggregate (training runs plan their memory first).
        const StateSummary summary = inspect_state(model_state);
        check_memory(training_bytes(summary.config, summary.config.fit.batch_size), "training this model",
                     "Use a smaller architecture or batch_size.");
        trainer_ = std::make_unique<Trainer>(deserialize_state(model_state));
    } catch (const Error& e) { rethrow_with_location(e); }
    trainer_->begin_visit();
}

std::string SegmentVisit::where() const {
    return "While training mst_key " + std::to_string(mst_key_) + " on segment dist_key " + std::to_string(dist_key_) +
           ".";
}

// Adds the segment and model to a core error's detail, keeping its kind and message.
void SegmentVisit::rethrow_with_location(const Error& e) const {
    std::string detail = e.detail().empty() ? where() : e.detail() + " " + where();
    throw Error(e.kind(), e.message(), detail, e.hint());
}

// Trains the rows kept for reshuffling (every pass of the visit: `passes`), then lets them go.
// Progress counts buffers, as when buffers train in order: one report each time the rows trained in
// the first pass reach another buffer's worth (the view's buffers_done never passes buffers_total).
void SegmentVisit::train_window(int passes) {
    for (int pass = 0; pass < passes; ++pass) {
        check_for_interrupts();
        std::size_t next = 0;  // the window's buffer whose rows are being counted
        int64_t pending = 0;   // rows trained towards it
        try {
            trainer_->train_rows(window_, [&](int rows) {
                if (pass > 0) return;
                pending += rows;
                while (next < window_.size() && pending >= window_[next].rows) {
                    pending -= window_[next].rows;
                    progress_buffer(dist_key_, mst_key_, window_[next].rows, !reported_);
                    reported_ = true;
                    ++next;
                }
            });
        } catch (const Error& e) { rethrow_with_location(e); }
    }
    window_.clear();
    copies_.clear();
    window_bytes_ = 0;
}

void SegmentVisit::add(Datum x_datum, Datum y_datum) {
    const bool first_buffer = first_buffer_;
    first_buffer_ = false;
    const PackedBuffer xb = detoast_buffer(x_datum), yb = detoast_buffer(y_datum);
    Float4Matrix x = float4_matrix(xb.value, "independent_var");
    Float4Matrix y = float4_matrix(yb.value, "dependent_var");
    const Architecture& arch = trainer_->config().arch;
    try {
        check_training_buffers({x.rows, x.cols}, {y.rows, y.cols}, arch.input_dim, arch.output_dim());
        check_finite_once(xb, x, "independent_var");
        check_finite_once(yb, y, "dependent_var");
    } catch (const Error& e) {
        std::string shape = "Architecture " + arch.shape_string() + ".";
        rethrow_with_location(Error(e.kind(), e.message(), e.detail().empty() ? shape : e.detail(), e.hint()));
    }

    const FitParams& fit = trainer_->config().fit;
    if (fit.steps_per_epoch > 0) {
        // All of a buffer's steps before the next buffer, as MADlib's Keras fit per buffer takes them.
        // A step is the whole buffer: the constructor's backstop (batch_size rows) again, with its rows.
        try {
            if (x.rows > step_rows_checked_) {
                check_memory(training_bytes(trainer_->config(), x.rows), "training this model",
                             "Use a smaller architecture, or smaller buffers (preprocess's buffer_size) with "
                             "steps_per_epoch.");
                step_rows_checked_ = x.rows;
            }
            trainer_->train_whole_buffer(x.data, y.data, x.rows, fit.epochs * fit.steps_per_epoch);
        } catch (const Error& e) { rethrow_with_location(e); }
        progress_buffer(dist_key_, mst_key_, x.rows, first_buffer);
        return;
    }
    if (fit.shuffle) {
        // Reshuffling needs the rows of a window at once: buffers in the run's cache are kept as
        // they are, others copied. A window is bounded by its bytes (hopper.shuffle_window_mb, all
        // of them with epochs > 1, within hopper.segment_cache_mb), cached or not, so that every
        // engine cuts a segment into the same windows and trains the same model.
        const std::size_t bytes = sizeof(float) * (std::size_t(x.rows) * x.cols + std::size_t(y.rows) * y.cols);
        const bool cached = xb.finite_checked && yb.finite_checked;
        if (fit.epochs > 1 && window_bytes_ + bytes > std::size_t(setting_segment_cache_mb) * 1024 * 1024)
            fail(ErrorKind::Limit, "segment data does not fit the segment cache",
                 "fit_params has epochs = " + std::to_string(fit.epochs) +
                     " and shuffle, so each segment's buffers are kept in memory to reshuffle them for several "
                     "passes per visit; they exceed hopper.segment_cache_mb (" +
                     std::to_string(setting_segment_cache_mb) + " MB). " + where(),
                 "Use more segments, raise hopper.segment_cache_mb, or use epochs = 1 and more iterations.");
        if (fit.epochs == 1 && !window_.empty() &&
            window_bytes_ + bytes > std::size_t(setting_shuffle_window_mb) * 1024 * 1024)
            train_window(1);
        const float* kx = x.data;
        const float* ky = y.data;
        if (!cached) {
            copies_.emplace_back(x.data, x.data + std::size_t(x.rows) * x.cols);
            kx = copies_.back().data();
            copies_.emplace_back(y.data, y.data + std::size_t(y.rows) * y.cols);
            ky = copies_.back().data();
        }
        window_.push_back(Trainer::RowBlock{kx, ky, x.rows});
        window_bytes_ += bytes;
        return;
    }
    try {
        trainer_->train_buffer(x.data, y.data, x.rows);
    } catch (const Error& e) { rethrow_with_location(e); }
    progress_buffer(dist_key_, mst_key_, x.rows, first_buffer);
    if (fit.epochs > 1) {
        cached_bytes_ += sizeof(float) * (std::size_t(x.rows) * x.cols + std::size_t(y.rows) * y.cols);
        if (cached_bytes_ > std::size_t(setting_segment_cache_mb) * 1024 * 1024)
            fail(ErrorKind::Limit, "segment data does not fit the segment cache",
                 "fit_params has epochs = " + std::to_string(fit.epochs) +
                     ", so each segment's buffers are kept in memory to train several passes per visit; they exceed "
                     "hopper.segment_cache_mb (" +
                     std::to_string(setting_segment_cache_mb) + " MB). " + where(),
                 "Use more segments, raise hopper.segment_cache_mb, or use epochs = 1 and more iterations.");
        cached_x_.emplace_back(x.data, x.data + std::size_t(x.rows) * x.cols);
        cached_y_.emplace_back(y.data, y.data + std::size_t(y.rows) * y.cols);
        cached_rows_.push_back(x.rows);
    }
}

std::string SegmentVisit::finish() {
    Trainer& trainer = *trainer_;
    const FitParams& fit = trainer.config().fit;
    if (fit.shuffle && fit.steps_per_epoch == 0) train_window(fit.epochs);
    for (int epoch = 1; epoch < fit.epochs && !fit.shuffle && fit.steps_per_epoch == 0; ++epoch) {
        for (std::size_t b = 0; b < cached_rows_.size(); ++b) {
            check_for_interrupts();
            try {
                trainer.train_buffer(cached_x_[b].data(), cached_y_[b].data(), cached_rows_[b]);
            } catch (const Error& e) { rethrow_with_location(e); }
        }
    }
    cached_x_.clear();
    cached_y_.clear();
    cached_rows_.clear();
    trainer.finish_visit();
    std::string bytes = serialize_state(trainer);
    if (from_) bytes = store_trained_state(*from_, bytes);
    return bytes;
}

}  // namespace hopper::pg

using namespace hopper;
using namespace hopper::pg;

// train_segment_transition(state internal, model_state bytea, x real[], y real[], mst_key int,
//                          dist_key int)
HOPPER_FUNCTION(train_segment_transition) {
    MemoryContext aggcontext = aggregate_context(fcinfo, "train_segment_transition");
    SegmentVisit* state = state_arg<SegmentVisit>(fcinfo, 0);
    if (!state) {
        const int32 mst_key = PG_ARGISNULL(4) ? -1 : PG_GETARG_INT32(4);
        const int32 dist_key = PG_ARGISNULL(5) ? -1 : PG_GETARG_INT32(5);
        if (PG_ARGISNULL(1))
            fail(ErrorKind::NullValue, "model state must not be NULL",
                 "While training mst_key " + std::to_string(mst_key) + " on segment dist_key " +
                     std::to_string(dist_key) + ".");
        // The model state is the same value on every row of the segment: read it once.
        const std::string bytes = bytea_to_string(PG_GETARG_DATUM(1));
        state = own_in_context(aggcontext, std::make_unique<SegmentVisit>(bytes, mst_key, dist_key));
    }
    if (PG_ARGISNULL(2) || PG_ARGISNULL(3))
        fail(ErrorKind::NullValue, "packed buffers must not be NULL", state->where());
    state->add(PG_GETARG_DATUM(2), PG_GETARG_DATUM(3));
    PG_RETURN_POINTER(state);
}

HOPPER_FUNCTION(train_segment_final) {
    if (PG_ARGISNULL(0)) PG_RETURN_NULL();
    PG_RETURN_DATUM(bytes_to_bytea(state_arg<SegmentVisit>(fcinfo, 0)->finish()));
}
