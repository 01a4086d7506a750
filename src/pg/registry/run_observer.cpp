// The training-run observer: records a run (hopper.run_records, tasks, trials, trial_metrics) and
// writes its checkpoints every checkpoint_frequency iterations and at the last; and the warm starts
// from the registry's checkpoints (warm_start_checkpoint, warm_start_run).
#include <chrono>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hopper/error.h"
#include "hopper/registry.h"
#include "hopper/state_format.h"
#include "pg/common/datum.h"
#include "pg/common/schema_version.h"
#include "pg/registry/checkpoint_store.h"
#include "pg/registry/registry.h"
#include "pg/runtime/progress.h"
#include "pg/runtime/run_lock.h"
#include "pg/training/preprocess.h"

namespace hopper::pg {

using nlohmann::json;

std::string evaluation_json(const Evaluation& e, const std::vector<Metric>& names) {
    json j = json::object();
    j["loss"] = std::isfinite(e.loss) ? json(e.loss) : json(nullptr);
    for (std::size_t k = 0; k < names.size() && k < e.metrics.size(); ++k)
        j[to_string(names[k])] = std::isfinite(e.metrics[k]) ? json(e.metrics[k]) : json(nullptr);
    return j.dump();
}

std::string packed_data_facts(const PackedInfo& info) {
    json d = json::object();
    const bool classification = info.response_type == "classification";
    d["source_table"] = info.table.display();
    d["response_type"] = info.response_type;
    d["class_values"] = classification ? json(info.class_values) : json(nullptr);
    d["dependent_varname"] = info.dependent_varname;
    d["dependent_vartype"] = info.dependent_vartype;
    d["independent_varname"] = info.independent_varname;
    d["normalizing_const"] = info.normalizing_const;
    d["scale"] = info.scale;
    // float -> double is exact, and 17 significant digits bring the float4 back unchanged.
    std::vector<double> center(info.feature_center.begin(), info.feature_center.end());
    std::vector<double> spread(info.feature_spread.begin(), info.feature_spread.end());
    d["feature_center"] = center.empty() ? json(nullptr) : json(center);
    d["feature_spread"] = spread.empty() ? json(nullptr) : json(spread);
    d["num_rows"] = info.num_rows;
    // The feature recipe travels with the run, its checkpoints and registered versions, so a model
    // from any of them encodes raw rows as its training data was.
    if (!info.feature_recipe.empty()) d["feature_recipe"] = json::parse(info.feature_recipe);
    return d.dump();
}

void record_trial_metrics(Spi& spi, int64_t trial_id, int iteration, int64_t steps, const std::string& training_json,
                          const std::optional<std::string>& validation_json, std::optional<double> searcher_value,
                          double elapsed_seconds) {
    spi.execute(
        "INSERT INTO hopper.trial_metrics (trial_id, iteration, steps_completed, training_metrics,"
        " validation_metrics, searcher_value, elapsed_seconds, report_time)"
        " VALUES ($1, $2, $3, $4::pg_catalog.jsonb, $5::pg_catalog.jsonb, $6, $7, pg_catalog.clock_timestamp())",
        {SqlParam::int8(trial_id), SqlParam::int4(iteration), SqlParam::int8(steps), SqlParam::text(training_json),
         validation_json ? SqlParam::text(*validation_json) : SqlParam::null(TEXTOID),
         searcher_value ? SqlParam::float8(*searcher_value) : SqlParam::null(FLOAT8OID),
         SqlParam::float8(elapsed_seconds)});
}

int64_t store_training_checkpoint(Spi& spi, int64_t trial_id, const std::string& state, int iteration,
                                  std::optional<double> searcher_value, bool smaller_is_better,
                                  const std::string& metadata) {
    const int64_t steps = int64_t(inspect_state(state).counters.steps);
    const std::string resources = json{{"model_state", state.size()}}.dump();
    const Stored stored = store_checkpoint(spi, trial_id, state, steps, metadata, resources);
    std::optional<double> signed_value;
    if (searcher_value) signed_value = signed_searcher_value(*searcher_value, smaller_is_better);
    spi.execute(
        "INSERT INTO hopper.checkpoint_training (checkpoint_id, trial_id, iteration, searcher_value,"
        " signed_searcher_value) VALUES ($1, $2, $3, $4, $5)",
        {SqlParam::int8(stored.id), SqlParam::int8(trial_id), SqlParam::int4(iteration),
         searcher_value ? SqlParam::float8(*searcher_value) : SqlParam::null(FLOAT8OID),
         signed_value ? SqlParam::float8(*signed_value) : SqlParam::null(FLOAT8OID)});
    return stored.id;
}

namespace {

class RegistryObserver : public RunObserver {
public:
    explicit RegistryObserver(CheckpointOptions o) : opt_(std::move(o)) {}

    const SearcherMetric* searcher() const override { return &searcher_; }

    void on_start(Spi& spi, RunContext& run) override {
        started_ = std::chrono::steady_clock::now();
        const std::vector<ModelSpec>& models = *run.models;
        std::vector<std::vector<Metric>> metrics;
        for (const ModelSpec& m : models) metrics.push_back(m.config.compile.metrics);
        searcher_ = resolve_searcher_metric(opt_.searcher_metric, run.validation.has_value(), metrics);
        frequency_ = opt_.checkpoint_frequency < 0 ? opt_.metrics_frequency : opt_.checkpoint_frequency;
        const std::string data = packed_data_facts(read_packed_info(spi, run.packed));

        SafeSearchPath path;
        path.enter();
        spi.execute("SELECT hopper.mark_interrupted_runs()");
        runs_table_ = schema_features().run_records ? "hopper.run_records" : "hopper.runs";
        spi.execute(
            "INSERT INTO " + runs_table_ +
                " (method, name, description, source_table, validation_table,"
                " model_output_table, model_selection_table, num_iterations, metrics_compute_frequency,"
                " checkpoint_frequency, searcher_metric, smaller_is_better, data, start_time, backend_pid,"
                " backend_start)"
                " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::pg_catalog.jsonb, $14::pg_catalog.timestamptz,"
                " pg_catalog.pg_backend_pid(), (SELECT a.backend_start FROM pg_catalog.pg_stat_activity a"
                " WHERE a.pid OPERATOR(pg_catalog.=) pg_catalog.pg_backend_pid()))"
                " RETURNING run_id",
            {SqlParam::text(run.method), run.name.empty() ? SqlParam::null(TEXTOID) : SqlParam::text(run.name),
             run.description.empty() ? SqlParam::null(TEXTOID) : SqlParam::text(run.description),
             SqlParam::text_copy(run.packed.display()),
             run.validation ? SqlParam::text_copy(run.validation->display()) : SqlParam::null(TEXTOID),
             SqlParam::text_copy(run.output.display()),
             opt_.mst_table_text.empty() ? SqlParam::null(TEXTOID) : SqlParam::text(opt_.mst_table_text),
             SqlParam::int4(run.num_iterations), SqlParam::int4(opt_.metrics_frequency), SqlParam::int4(frequency_),
             SqlParam::text(searcher_.name), SqlParam::boolean(searcher_.smaller_is_better), SqlParam::text(data),
             SqlParam::text(run.started_at)});
        run_id_ = spi.integer(0, 0);
        run.run_id = run_id_;
        hold_run_lock(run_id_);  // the run reads as ACTIVE while this session runs it
        for (const ModelSpec& m : models) {
            json config = json::parse(m.config.to_json());
            json hparams = {{"compile", config["compile"]}, {"fit", config["fit"]}};
            auto ws = opt_.warm_start_checkpoints.find(m.mst_key);
            // Two statements: the trials row's security policy must see the task row.
            const int64_t task_id = spi.scalar_int(
                "INSERT INTO hopper.tasks (task_type, description, start_time)"
                " VALUES ('TRAINING', $1, $2::pg_catalog.timestamptz) RETURNING task_id",
                {SqlParam::text_copy(run.method + " run " + std::to_string(run_id_) + ", mst_key " +
                                     std::to_string(m.mst_key)),
                 SqlParam::text(run.started_at)});
            spi.execute(
                "INSERT INTO hopper.trials (trial_id, run_id, mst_key, model_id, model_arch, compile_params, fit_params,"
                " model_config, hparams, warm_start_checkpoint_id)"
                " VALUES ($1, $2, $3, $4, $5::pg_catalog.jsonb, $6, $7, $8::pg_catalog.jsonb, $9::pg_catalog.jsonb, $10)"
                " RETURNING trial_id",
                {SqlParam::int8(task_id), SqlParam::int8(run_id_), SqlParam::int4(m.mst_key),
                 m.model_id ? SqlParam::int4(*m.model_id) : SqlParam::null(INT4OID), SqlParam::text(m.arch_json),
                 SqlParam::text(m.compile_text), SqlParam::text(m.fit_text), SqlParam::text_copy(m.config.to_json()),
                 SqlParam::text_copy(hparams.dump()),
                 ws == opt_.warm_start_checkpoints.end() ? SqlParam::null(INT8OID) : SqlParam::int8(ws->second)});
            trial_ids_.push_back(spi.integer(0, 0));
            statuses_.push_back("training");
        }
        path.leave();
    }

    void on_iteration(Spi& spi, const RunContext& run, const IterationReport& report) override {
        const std::vector<ModelSpec>& models = *run.models;
        const std::vector<std::string>& states = *report.states;
        const bool due = report.last || (frequency_ > 0 && report.iteration % frequency_ == 0);
        if (!due && !report.evaluated) {
            SafeSearchPath path;
            path.enter();
            update_statuses(spi, *report.statuses, false);
            path.leave();
            return;
        }
        std::vector<int64_t> steps(models.size());
        for (std::size_t i = 0; i < models.size(); ++i) steps[i] = int64_t(inspect_state(states[i]).counters.steps);
        std::vector<std::optional<double>> searcher(models.size());

        SafeSearchPath path;
        path.enter();
        if (report.evaluated && report.training) {
            const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
            for (std::size_t i = 0; i < models.size(); ++i) {
                const auto& names = models[i].config.compile.metrics;
                const Evaluation& t = (*report.training)[i];
                const Evaluation* v = report.validation ? &(*report.validation)[i] : nullptr;
                double value = searcher_metric_value(searcher_.validation && v ? *v : t, names, searcher_.metric);
                if (std::isfinite(value)) {
                    searcher[i] = value;
                    if (!best_ || (searcher_.smaller_is_better ? value < best_->first : value > best_->first))
                        best_ = std::make_pair(value, models[i].mst_key);
                }
                record_trial_metrics(spi, trial_ids_[i], report.iteration, steps[i], evaluation_json(t, names),
                                     v ? std::optional<std::string>(evaluation_json(*v, names)) : std::nullopt,
                                     searcher[i], elapsed);
            }
        }
        if (best_) progress_best(best_->first, best_->second);
        if (due) {
            const std::string metadata =
                json{{"hopper_version", HOPPER_VERSION}, {"iteration", report.iteration}}.dump();
            for (std::size_t i = 0; i < models.size(); ++i) {
                store_training_checkpoint(spi, trial_ids_[i], states[i], report.iteration, searcher[i],
                                          searcher_.smaller_is_better, metadata);
            }
        }
        update_statuses(spi, *report.statuses, false);
        path.leave();
    }

    void on_finish(Spi& spi, const RunContext& run, const std::vector<std::string>& states) override {
        SafeSearchPath path;
        path.enter();
        std::vector<std::string> final_statuses;
        for (const std::string& s : statuses_) final_statuses.push_back(s == "training" ? "completed" : s);
        update_statuses(spi, final_statuses, true);
        spi.execute(
            "UPDATE hopper.tasks SET state = 'COMPLETED', end_time = pg_catalog.clock_timestamp()"
            " WHERE task_id = ANY ($1)",
            {SqlParam::int8_array(trial_ids_)});
        spi.execute("UPDATE " + runs_table_ +
                        " SET state = 'COMPLETED', end_time = pg_catalog.clock_timestamp() WHERE run_id = $1",
                    {SqlParam::int8(run_id_)});
        path.leave();
        notice("training run " + std::to_string(run_id_) + " recorded in hopper.runs",
               "Its checkpoints are in hopper.checkpoints_expanded WHERE run_id = " + std::to_string(run_id_) + ".");
    }

private:
    void update_statuses(Spi& spi, const std::vector<std::string>& now, bool final) {
        for (std::size_t i = 0; i < now.size() && i < statuses_.size(); ++i) {
            std::string s = now[i];
            if (!final && s == "completed") s = "training";  // still running
            if (s == statuses_[i]) continue;
            spi.execute("UPDATE hopper.trials SET status = $2 WHERE trial_id = $1",
                        {SqlParam::int8(trial_ids_[i]), SqlParam::text(s)});
            statuses_[i] = s;
        }
    }

    CheckpointOptions opt_;
    std::string runs_table_;  // where the run's row is stored (older databases: the table hopper.runs)
    SearcherMetric searcher_;
    std::optional<std::pair<double, int32_t>> best_;  // best searcher value so far, for hopper.run_progress
    int frequency_ = 1;
    int64_t run_id_ = 0;
    std::vector<int64_t> trial_ids_;
    std::vector<std::string> statuses_;
    std::chrono::steady_clock::time_point started_;
};

}  // namespace

std::unique_ptr<RunObserver> make_registry_observer(CheckpointOptions options) {
    return std::make_unique<RegistryObserver>(std::move(options));
}

CheckpointOptions checkpoint_options(FunctionCallInfo fcinfo, const RunSettings& settings, int searcher_arg) {
    CheckpointOptions o;
    o.metrics_frequency = settings.metrics_frequency;
    o.checkpoint_frequency = settings.checkpoint_frequency;
    o.searcher_metric = arg_text_or(fcinfo, searcher_arg, "");
    return o;
}

namespace {
void refuse_both_warm_starts(bool warm_start, const char* what) {
    if (warm_start)
        fail(ErrorKind::InvalidParameter, std::string("warm_start and ") + what + " cannot be used together",
             std::string("warm_start continues from the model output table, ") + what +
                 " from the registry's checkpoints.");
}
}  // namespace

void warm_start_from_checkpoint(Spi& spi, const std::string& uuid, bool warm_start, ModelSpec& model,
                                CheckpointOptions& options) {
    refuse_both_warm_starts(warm_start, "warm_start_checkpoint");
    LoadedCheckpoint c = load_checkpoint(spi, uuid);
    model.initial_state = std::move(c.state);
    model.initial_source = "checkpoint " + c.uuid;
    options.warm_start_checkpoints[model.mst_key] = c.id;
}

void warm_start_from_run(Spi& spi, int64_t run_id, bool warm_start, std::vector<ModelSpec>& models,
                         CheckpointOptions& options) {
    refuse_both_warm_starts(warm_start, "warm_start_run");
    std::map<int32_t, LoadedCheckpoint> found = load_run_checkpoints(spi, run_id);
    for (ModelSpec& m : models) {
        auto it = found.find(m.mst_key);
        if (it == found.end()) {
            notice("mst_key " + std::to_string(m.mst_key) + " starts from fresh weights",
                   "Training run " + std::to_string(run_id) + " has no completed checkpoint for it.");
            continue;
        }
        // The same mst_key in a model selection table made again may name another configuration.
        const std::string differs = configuration_difference(inspect_state(it->second.state).config, m.config);
        if (!differs.empty()) {
            notice("mst_key " + std::to_string(m.mst_key) + " starts from fresh weights",
                   "Training run " + std::to_string(run_id) + " trained mst_key " + std::to_string(m.mst_key) +
                       " with another configuration (different " + differs + ").");
            continue;
        }
        m.initial_state = std::move(it->second.state);
        m.initial_source = "checkpoint " + it->second.uuid;
        options.warm_start_checkpoints[m.mst_key] = it->second.id;
    }
}

}  // namespace hopper::pg
