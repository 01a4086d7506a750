// hopper.fit_data_parallel: data-parallel training by model averaging.
//
// Each iteration (one transaction when called with CALL outside a transaction block):
//   1. every segment trains a copy of the current model on its own buffers -- hopper.train_segment
//      grouped by dist_key, one whole aggregate per segment under a Parallel Append, so all
//      segments train at once -- and the copy goes straight into the partial level of the model
//      averaging combine, weighted by the rows it trained on (one statement, CREATE TEMP TABLE AS
//      so that it runs in parallel);
//   2. the copies are averaged through the hierarchical combine (2 or 3 levels, as the insertion
//      rule decides for the topology and the measured state size): parameters and optimizer
//      slots alike, exactly (hopper/combine.h);
//   3. the averaged model is evaluated when metrics are due (one parallel scan, as fit does).
// The output tables are written by write_run_outputs (run.cpp), like fit's; the summary's method is
// fit_data_parallel, hops_per_iteration 1, and hop_seconds holds the time spent averaging. Observers
// in the request (RunObserver, run.h) are called as run_training calls them.
#include <cmath>

#include "hopper/combine.h"
#include "hopper/error.h"
#include "hopper/state_format.h"
#include "pg/training/buffer_cache.h"
#include "pg/combine/combine.h"
#include "pg/common/datum.h"
#include "pg/registry/registry.h"
#include "pg/common/resource_limits.h"
#include "pg/training/run.h"
#include "pg/training/run_lock.h"
#include "pg/common/settings.h"
#include "pg/common/statement_settings.h"

namespace hopper::pg {
namespace {



struct DataParallelRequest {
    RunRequest run;  // packed/output/validation texts, iterations, warm start, name, description, the model
    std::string topology_text, link_cost_text;
    std::optional<int> levels;
};

void run_data_parallel(Spi& spi, DataParallelRequest dp) {
    RunRequest& req = dp.run;
    const auto started = Clock::now();
    if (dp.levels && *dp.levels != 2 && *dp.levels != 3)
        fail(ErrorKind::InvalidParameter, "combine_levels must be 2 or 3", "It is " + std::to_string(*dp.levels) + ".",
             "Leave it NULL to let the insertion rule decide.");
    const RunTables tables = resolve_run_tables(spi, req);
    const std::string& started_at = tables.started_at;
    const TableName& packed = tables.packed;
    const PackedInfo& info = tables.info;
    const std::optional<PackedInfo>& vinfo = tables.validation;
    TableName output = tables.output;

    CombineSettings combine;
    combine.topology = read_topology(spi, dp.topology_text, dp.link_cost_text, &combine.topology_name);
    combine.levels = dp.levels;

    ModelSpec& m = req.models.at(0);
    check_packed_matches(m, info, "packed table");
    if (vinfo) check_packed_matches(m, *vinfo, "validation table");
    // The model state, and the averaging state (16 bytes per value), must fit in one PostgreSQL value.
    const std::size_t limit = std::min<std::size_t>(std::size_t(setting_max_state_mb) * 1024 * 1024, MaxAllocSize - VARHDRSZ);
    const std::size_t model_bytes = state_size(m.config), average_bytes = ModelAverageState::serialized_size(m.config);
    if (model_bytes > limit)
        fail(ErrorKind::Limit, "model state is too large",
             "It needs " + std::to_string(model_bytes / (1024 * 1024)) + " MB; hopper.max_model_state_mb is " +
                 std::to_string(setting_max_state_mb) + " MB.",
             "Use a smaller architecture, or raise hopper.max_model_state_mb.");
    if (average_bytes > MaxAllocSize - VARHDRSZ)
        fail(ErrorKind::Limit, "model is too large to average",
             "Its averaging state needs " + std::to_string(average_bytes / (1024 * 1024)) +
                 " MB (16 bytes per parameter and optimizer slot); PostgreSQL stores at most 1 GB in one value.",
             "Use a smaller architecture, or fit (model hopping) instead.");

    // Every segment trains a copy at once; the averaging states (16 bytes per value) sit beside them.
    check_run_memory(req.models, info, vinfo, int(info.dist_keys.size()),
                     "training on " + std::to_string(info.dist_keys.size()) + " segments by model averaging");
    check_memory(3 * uint64_t(average_bytes) + uint64_t(info.dist_keys.size()) * uint64_t(model_bytes),
                 "averaging the model's copies", "Use a smaller architecture, or fit (model hopping) instead.");
    std::string state;
    if (req.warm_start) {
        spi.execute("SELECT model_state FROM " + output.quoted() + " WHERE mst_key OPERATOR(pg_catalog.=) 1");
        if (spi.rows() == 1 && spi.is_null(0, 0))
            fail(ErrorKind::NullValue, "model output table " + output.display() + " has a NULL model_state for mst_key 1",
                 "A warm start continues that model.", "Delete or repair that row.");
        if (spi.rows() == 1) {
            m.initial_state = spi.bytes(0, 0);
            m.initial_source = output.display();
        } else {
            notice("the model starts from fresh weights", "The warm start table " + output.display() + " has no model with mst_key 1.");
        }
    }
    if (!m.initial_state.empty()) {
        try {
            state = serialize_state(restore_for_config(m.initial_state, m.config));
        } catch (const Error& e) {
            throw Error(e.kind(), e.message(), e.detail() + " Starting from " + m.initial_source + ".", e.hint());
        }
    } else {
        state = serialize_state(Trainer(m.config));
    }
    const uint32_t first_iteration = inspect_state(state).counters.iterations;

    const int S = int(info.dist_keys.size());
    std::vector<ModelHistory> history(1);
    history[0].training_metrics.resize(m.config.compile.metrics.size());
    history[0].validation_metrics.resize(m.config.compile.metrics.size());
    const std::vector<ModelConfig> configs = {m.config};
    const std::vector<int32_t> mst_keys = {m.mst_key};
    std::vector<std::string> states = {state};
    std::vector<std::string> statuses = {"completed"};
    RunContext run;
    run.multiple = false;
    run.method = "fit_data_parallel";
    run.packed = packed;
    run.output = output;
    if (vinfo) run.validation = vinfo->table;
    run.models = &req.models;
    run.num_iterations = req.num_iterations;
    run.num_segments = S;
    run.name = req.name;
    run.description = req.description;
    run.started_at = started_at;
    for (RunObserver* o : req.observers) o->on_start(spi, run);
    StatementSettings settings;
    BufferCacheScope buffer_cache;
    double train_seconds = 0, combine_seconds = 0, eval_seconds = 0;

    // Training and the partial level in one statement: train_segment per segment, the copy and its
    // rows into model_average_partial. The current model is the statement's parameter $1.
    CombineSource source;
    source.kind = CombineKind::ModelAverage;
    source.from_sql = "(SELECT d.dist_key, hopper.train_segment($1::pg_catalog.bytea, d.independent_var, d.dependent_var, 1,"
                      " d.dist_key) AS model_state, pg_catalog.sum(pg_catalog.array_length(d.dependent_var, 1))::pg_catalog.int8"
                      " AS weight FROM " + packed.quoted() + " AS d GROUP BY d.dist_key) AS t";
    source.dist_key_sql = "t.dist_key";
    source.args = {"t.model_state", "t.weight"};
    source.table = packed;  // its segments produce the copies (on Citus: their shards keep them)

    for (int it = 0; it < req.num_iterations; ++it) {
        const auto iteration_started = Clock::now();
        check_for_interrupts();
        settings.enter();
        set_parallel_workers(S);
        source.params = {SqlParam::bytea(state)};
        CombineOutcome outcome = [&] {
            QuietModelAverage quiet;
            return run_hierarchical_combine(spi, source, combine);
        }();
        train_seconds += outcome.partial_seconds;
        combine_seconds += outcome.combine_seconds;
        if (outcome.producers != S)
            fail(ErrorKind::Data, "a segment did not train",
                 std::to_string(S) + " segments were packed and " + std::to_string(outcome.producers) + " trained a copy.",
                 "A segment of the packed table may have lost all its rows since it was packed; pack it again.");
        if (outcome.result.empty()) {
            // Every copy diverged: keep the model the iteration started from, marked diverged (as
            // fit keeps the last good weights of a model that diverged).
            Trainer previous = deserialize_state(state);
            previous.counters().diverged = true;
            state = serialize_state(previous);
        } else {
            state = std::move(outcome.result);
        }
        state = with_iterations(state, first_iteration + uint32_t(it) + 1);

        ModelHistory& h = history[0];
        if (h.status == "completed" && inspect_state(state).counters.diverged) {
            h.status = "diverged";
            warning("the model diverged in iteration " + std::to_string(it + 1),
                    "A copy's loss or weights became NaN, infinite or too large to average; training stopped.", "Lower the learning rate.");
        }
        const bool evaluate = (it + 1) % req.metrics_frequency == 0 || it + 1 == req.num_iterations;
        std::string progress;
        std::vector<Evaluation> train_eval, valid_eval;
        if (evaluate) {
            auto t = Clock::now();
            train_eval = evaluate_states(spi, packed, {state}, configs, S);
            if (vinfo) valid_eval = evaluate_states(spi, vinfo->table, {state}, configs, int(vinfo->dist_keys.size()));
            eval_seconds += seconds_since(t);
            record_evaluation(h, it + 1, seconds_since(started), train_eval[0], vinfo ? &valid_eval[0] : nullptr);
            progress = progress_text(m.config, train_eval[0], vinfo ? &valid_eval[0] : nullptr);
        }
        states[0] = state;
        statuses[0] = h.status;
        report_iteration(spi, req, run, it + 1, states, evaluate ? &train_eval : nullptr, vinfo ? &valid_eval : nullptr,
                         statuses);
        notice("iteration " + std::to_string(it + 1) + "/" + std::to_string(req.num_iterations) + ": " +
               format_number(seconds_since(iteration_started), 3) + " s, " + std::to_string(outcome.levels) +
               "-level combine of " + std::to_string(outcome.producers) + " copies (" +
               std::to_string(outcome.bytes_crossing) + " bytes across groups)" + progress);
        if (spi.nonatomic() && it + 1 < req.num_iterations) {
            settings.leave();
            spi.commit();
        }
    }
    settings.leave();

    RunOutputs outputs;
    outputs.req = &req;
    outputs.method = "fit_data_parallel";
    outputs.packed = packed;
    outputs.output = output;
    outputs.info = &info;
    outputs.validation = &vinfo;
    outputs.models = &req.models;
    outputs.mst_keys = &mst_keys;
    outputs.states = &states;
    outputs.history = &history;
    outputs.hops_per_iteration = 1;
    outputs.train_seconds = train_seconds;
    outputs.hop_seconds = combine_seconds;
    outputs.eval_seconds = eval_seconds;
    outputs.started_at = started_at;
    outputs.run_id = run.run_id;
    outputs.replaced_token = tables.replaced_token;
    write_run_outputs(spi, outputs);
    for (RunObserver* o : req.observers) o->on_finish(spi, run, states);
    release_run_locks();
}

}  // namespace
}  // namespace hopper::pg

using namespace hopper;
using namespace hopper::pg;

// fit_data_parallel(packed_table, model_output_table, model_arch jsonb, compile_params, fit_params,
//                   num_iterations, validation_table, metrics_compute_frequency, warm_start, name,
//                   description, topology_table, link_cost_table, combine_levels,
//                   checkpoint_frequency, searcher_metric)
HOPPER_FUNCTION(fit_data_parallel) {
    DataParallelRequest dp;
    dp.run = single_model_request(fcinfo);
    RunRequest& req = dp.run;
    dp.topology_text = arg_text_or(fcinfo, 11, "");
    dp.link_cost_text = arg_text_or(fcinfo, 12, "");
    if (!PG_ARGISNULL(13)) dp.levels = PG_GETARG_INT32(13);
    CheckpointOptions checkpoints = checkpoint_options(fcinfo, 14, 15, req.metrics_frequency);
    Spi spi(call_is_nonatomic(fcinfo));
    std::unique_ptr<RunObserver> registry = make_registry_observer(std::move(checkpoints));
    req.observers.push_back(registry.get());
    run_data_parallel(spi, std::move(dp));
    PG_RETURN_VOID();
}
