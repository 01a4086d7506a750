// Data-parallel training by model averaging: the strategy of hopper.fit_data_parallel.
//
// Each iteration:
//   1. every segment trains a copy of the current model on its own buffers -- hopper.train_segment
//      grouped by dist_key, one whole aggregate per segment under a Parallel Append, so all
//      segments train at once -- and the copy goes straight into the partial level of the model
//      averaging combine, weighted by the rows it trained on (one statement, CREATE TEMP TABLE AS
//      so that it runs in parallel);
//   2. the copies are averaged through the hierarchical combine (2 or 3 levels, as the insertion
//      rule decides for the topology and the measured state size): parameters and optimizer
//      slots alike, exactly (hopper/combine.h).
// The run (TrainingRun, run.cpp) evaluates, reports and writes the same output tables as fit's; the summary's
// method is fit_data_parallel, hops_per_iteration 1, and hop_seconds holds the time spent averaging.
#include <memory>
#include <string>
#include <vector>

#include "hopper/combine.h"
#include "hopper/error.h"
#include "hopper/state_format.h"
#include "pg/combine/combine.h"
#include "pg/common/resource_limits.h"
#include "pg/common/settings.h"
#include "pg/runtime/progress.h"
#include "pg/runtime/scoped_settings.h"
#include "pg/training/run.h"

namespace hopper::pg {
namespace {

class DataParallel final : public TrainingStrategy {
public:
    explicit DataParallel(DataParallelSettings s) : settings_(std::move(s)) {}

    const char* method() const override { return "fit_data_parallel"; }
    int hops_per_iteration(const RunPlan&) const override { return 1; }
    // Every segment trains a copy at once.
    int training_processes(const RunPlan& plan) const override { return plan.num_segments; }

    void prepare(Spi& spi, const RunPlan& plan) override {
        combine_.topology =
            read_topology(spi, settings_.topology_text, settings_.link_cost_text, &combine_.topology_name);
        combine_.levels = settings_.levels;
        if (plan.models->size() != 1) fail(ErrorKind::Internal, "data-parallel training takes one model");
        // The averaging state (16 bytes per value) must fit in one PostgreSQL value, and sits beside
        // the copies in memory.
        const ModelConfig& config = plan.configs[0];
        const std::size_t average_bytes = ModelAverageState::serialized_size(config);
        if (average_bytes > MaxAllocSize - VARHDRSZ)
            fail(ErrorKind::Limit, "model is too large to average",
                 "Its averaging state needs " + std::to_string(average_bytes / (1024 * 1024)) +
                     " MB (16 bytes per parameter and optimizer slot); PostgreSQL stores at most 1 GB in one value.",
                 "Use a smaller architecture, or fit (model hopping) instead.");
        check_memory(3 * uint64_t(average_bytes) + uint64_t(plan.num_segments) * uint64_t(state_size(config)),
                     "averaging the model's copies", "Use a smaller architecture, or fit (model hopping) instead.");
        // Training and the partial level in one statement: train_segment per segment, the copy and
        // its rows into model_average_partial. The current model is the statement's parameter $1.
        const TableName& packed = plan.tables->packed;
        const PackedArrays arrays = packed_array_columns(packed);
        source_.kind = CombineKind::ModelAverage;
        source_.from_sql =
            "(SELECT d.dist_key, hopper.train_segment($1::pg_catalog.bytea, d." + arrays.x + ", d." + arrays.y +
            ", 1, d.dist_key) AS model_state,"
            " pg_catalog.sum(pg_catalog.array_length(d." +
            arrays.y + ", 1))::pg_catalog.int8 AS weight FROM " + packed.quoted() + " AS d GROUP BY d.dist_key) AS t";
        source_.dist_key_sql = "t.dist_key";
        source_.args = {"t.model_state", "t.weight"};
        source_.table = packed;  // its segments produce the copies (on Citus: their shards keep them)
    }

    IterationOutcome train_iteration(Spi& spi, const RunPlan& plan, Ring& ring) override {
        const int S = plan.num_segments;
        std::string& state = ring.states.at(0);
        progress_hop(1, 1, 1);  // one statement trains every segment's copy
        set_parallel_workers(S);
        source_.params = {SqlParam::bytea(state)};
        CombineOutcome combined = [&] {
            QuietModelAverage quiet;  // divergence is reported by the run
            return run_hierarchical_combine(spi, source_, combine_);
        }();
        if (combined.producers != S)
            fail(ErrorKind::Data, "a segment did not train",
                 std::to_string(S) + " segments were packed and " + std::to_string(combined.producers) +
                     " trained a copy.",
                 "A segment of the packed table may have lost all its rows since it was packed; pack it again.");
        if (combined.result.empty()) {
            // Every copy diverged: keep the model the iteration started from, marked diverged (as
            // model hopping keeps the last good weights of a model that diverged).
            Trainer previous = deserialize_state(state);
            previous.counters().diverged = true;
            state = serialize_state(previous);
        } else {
            state = std::move(combined.result);
        }
        IterationOutcome out;
        out.train_seconds = combined.partial_seconds;
        out.hop_seconds = combined.combine_seconds;
        out.note = std::to_string(combined.levels) + "-level combine of " + std::to_string(combined.producers) +
                   " copies (" + std::to_string(combined.bytes_crossing) + " bytes across groups)";
        return out;
    }

    DivergenceText divergence(int32_t, int iteration) const override {
        return {"the model diverged in iteration " + std::to_string(iteration),
                "A copy's loss or weights became NaN, infinite or too large to average; training stopped.",
                "Lower the learning rate."};
    }

private:
    DataParallelSettings settings_;
    CombineSettings combine_;
    CombineSource source_;
};

}  // namespace

std::unique_ptr<TrainingStrategy> data_parallel_strategy(DataParallelSettings settings) {
    return std::make_unique<DataParallel>(std::move(settings));
}

}  // namespace hopper::pg
