// The training driver: what every run shares, whatever its strategy (run.h).
//
// Per iteration (one transaction when called with CALL outside a transaction block): the strategy
// trains the models; the driver stamps each state with the iterations it has completed (so that a
// resumed run continues the schedule), reports models that diverged, evaluates every model in one
// scan of the data when metrics are due, tells the observers (the registry writes trial metrics and
// checkpoints), prints the NOTICE and commits. The output tables appear only in the last
// transaction, complete (run_outputs.cpp).
#include "pg/training/run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>

#include "hopper/error.h"
#include "hopper/resources.h"
#include "hopper/state_format.h"
#include "pg/common/datum.h"
#include "pg/common/resource_limits.h"
#include "pg/common/settings.h"
#include "pg/common/scoped_settings.h"
#include "pg/engine/engine.h"
#include "pg/training/progress.h"
#include "pg/training/run_area.h"
#include "pg/training/preprocess.h"
#include "pg/training/run_lock.h"
#include "pg/training/run_outputs.h"

extern "C" {
#include "nodes/nodes.h"
#include "utils/guc.h"
}

namespace hopper::pg {

double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string format_number(double v, int precision) {
    std::ostringstream s;
    s.precision(precision);
    s << v;
    return s.str();
}

namespace {

void report_iteration(Spi& spi, const RunRequest& req, const RunContext& run, int iteration,
                      const std::vector<std::string>& states, const std::vector<Evaluation>* training,
                      const std::vector<Evaluation>* validation, const std::vector<std::string>& statuses) {
    IterationReport report;
    report.iteration = iteration;
    report.last = iteration == req.num_iterations;
    report.states = &states;
    report.evaluated = training != nullptr;
    report.training = training;
    report.validation = training ? validation : nullptr;
    report.statuses = &statuses;
    for (RunObserver* o : req.observers) o->on_iteration(spi, run, report);
}

void record_evaluation(ModelHistory& h, int iteration, double elapsed, const Evaluation& training,
                       const Evaluation* validation) {
    h.iterations.push_back(iteration);
    h.elapsed.push_back(elapsed);
    h.training_loss.push_back(training.loss);
    for (std::size_t k = 0; k < training.metrics.size(); ++k) h.training_metrics[k].push_back(training.metrics[k]);
    if (validation) {
        h.validation_loss.push_back(validation->loss);
        for (std::size_t k = 0; k < validation->metrics.size(); ++k)
            h.validation_metrics[k].push_back(validation->metrics[k]);
    }
}

std::string progress_text(const ModelConfig& config, const Evaluation& training, const Evaluation* validation) {
    const std::string metric = config.compile.metrics.empty() ? "" : to_string(config.compile.metrics[0]);
    std::string s = ", training loss " + format_number(training.loss);
    if (!metric.empty()) s += ", " + metric + " " + format_number(training.metrics[0]);
    if (validation) {
        s += ", validation loss " + format_number(validation->loss);
        if (!metric.empty()) s += ", " + metric + " " + format_number(validation->metrics[0]);
    }
    return s;
}

}  // namespace

// All models on one packed table in one scan (parallel partial aggregation over the segments).
std::vector<Evaluation> evaluate_states(Spi& spi, const TableName& packed, const std::vector<std::string>& states,
                                        const std::vector<ModelConfig>& configs, int workers) {
    StatementSettings settings;
    settings.enter();
    std::vector<double> flat = detect_engine(spi)->evaluate(spi, packed, states, workers);
    std::vector<Evaluation> out(configs.size());
    std::size_t at = 0;
    for (std::size_t i = 0; i < configs.size(); ++i) {
        const std::size_t k = configs[i].compile.metrics.size();
        if (at + 2 + k > flat.size()) fail(ErrorKind::Internal, "evaluation returned too few values");
        out[i].count = flat[at];
        out[i].loss = flat[at + 1];
        out[i].metrics.assign(flat.begin() + at + 2, flat.begin() + at + 2 + k);
        at += 2 + k;
    }
    settings.leave();
    return out;
}

Evaluation running_evaluation(const EvalTotals& totals, const ModelConfig& config) {
    Evaluation e;
    e.count = totals.count;
    e.loss = totals.loss();
    e.metrics.assign(config.compile.metrics.size(), std::numeric_limits<double>::quiet_NaN());
    if (totals.metric_sums.size() == e.metrics.size())
        for (std::size_t m = 0; m < e.metrics.size(); ++m) e.metrics[m] = totals.metric(m);
    return e;
}

bool call_is_nonatomic(FunctionCallInfo fcinfo) {
    return fcinfo->context && IsA(fcinfo->context, CallContext) && !castNode(CallContext, fcinfo->context)->atomic;
}

ModelConfig resolve_model_spec(const std::string& arch_json, const std::string& compile_text,
                               const std::string& fit_text, const std::string& which) {
    try {
        return resolve_config(parse_architecture(arch_json), parse_compile_params(compile_text),
                              parse_fit_params(fit_text));
    } catch (const Error& e) {
        if (which.empty()) throw;
        std::string detail = e.detail().empty() ? "In " + which + "." : e.detail() + " In " + which + ".";
        throw Error(e.kind(), e.message(), detail, e.hint());
    }
}

namespace {

// Refuses a model whose input and output widths do not fit a packed table (`what` names it).
void check_packed_matches(const ModelSpec& m, const PackedInfo& info, const char* what) {
    const Architecture& a = m.config.arch;
    if (a.input_dim != info.independent_dim) {
        const std::string message = "model configuration mst_key " + std::to_string(m.mst_key) + " expects " +
                                    std::to_string(a.input_dim) + " features but " + what + " " +
                                    info.table.display() + " has " + std::to_string(info.independent_dim);
        if (!a.image_input()) fail(ErrorKind::InvalidParameter, message, "Architecture " + a.shape_string() + ".");
        // An image's packed row holds height*width*channels values: say which product is wrong.
        fail(ErrorKind::InvalidParameter, message,
             "Architecture " + a.shape_string() + ": its input shape [" + std::to_string(a.input_height) + ", " +
                 std::to_string(a.input_width) + ", " + std::to_string(a.input_channels) + "] (height, width, channels) reads " +
                 std::to_string(a.input_height) + "*" + std::to_string(a.input_width) + "*" + std::to_string(a.input_channels) +
                 " = " + std::to_string(a.input_dim) + " values from each packed row.",
             "Give the input shape of the packed images: height*width*channels must be " +
                 std::to_string(info.independent_dim) + ".");
    }
    if (a.output_dim() != info.dependent_dim)
        fail(ErrorKind::InvalidParameter,
             "model configuration mst_key " + std::to_string(m.mst_key) + " has " + std::to_string(a.output_dim()) +
                 " outputs but " + what + " " + info.table.display() + " has " + std::to_string(info.dependent_dim) +
                 (info.response_type == "classification" ? " classes" : " dependent values per row"),
             "Architecture " + a.shape_string() + ".");
}

}  // namespace

void check_run_memory(const std::vector<ModelSpec>& models, const PackedInfo& info,
                      const std::optional<PackedInfo>& validation, int processes, const std::string& what) {
    // The backend holds every model's state a few times over (the run's states, the statement
    // parameter that carries them, the states read back); up to `processes` segments train a model
    // at once; evaluation loads every model in each of its workers.
    uint64_t held = 0, train_one = 0;
    std::vector<ModelConfig> configs;
    for (const ModelSpec& m : models) {
        held += 3 * uint64_t(state_size(m.config));
        train_one = std::max<uint64_t>(train_one, training_bytes(m.config, std::max(1, info.buffer_size)));
        configs.push_back(m.config);
    }
    const int rows = std::max(info.buffer_size, validation ? validation->buffer_size : 0);
    const uint64_t training = held + uint64_t(std::min<int>(processes, int(models.size()))) * train_one;
    const uint64_t evaluating = held + uint64_t(processes) * evaluation_bytes(configs, std::max(1, rows));
    check_memory(std::max(training, evaluating), what,
                 "Use smaller architectures or a smaller batch_size, or train fewer configurations per call.");
}

RunTables resolve_run_tables(Spi& spi, const RunRequest& req) {
    RunTables t;
    t.started_at = spi.scalar_text("SELECT pg_catalog.now()::pg_catalog.text");
    t.packed = resolve_input_table(req.packed_text, "packed training table");
    t.info = read_packed_info(spi, t.packed);
    if (!req.validation_text.empty()) {
        t.validation = read_packed_info(spi, resolve_input_table(req.validation_text, "packed validation table"));
        if (t.validation->class_values != t.info.class_values || t.validation->response_type != t.info.response_type)
            fail(ErrorKind::InvalidParameter, "validation table was not packed like the training table",
                 "Its class values or response type differ.",
                 "Pack it with hopper.preprocess_validation, naming the training table.");
    }
    // Output tables: new ones, or (warm start) the previous run's, replaced at the end.
    t.output = req.warm_start ? resolve_input_table(req.output_text, "model output table")
                              : resolve_output_table(req.output_text, "model output table");
    claim_output_table(t.output);
    if (!req.warm_start) {
        require_absent(t.output.with_suffix("_info"), "info table");
        require_absent(t.output.with_suffix("_summary"), "summary table");
        require_absent(t.output.with_suffix("_hops"), "hops table");
    } else {
        t.replaced_token = replaceable_outputs(spi, t.output);
    }
    return t;
}

void check_model_sizes(const std::vector<ModelSpec>& models, const PackedInfo& info, const std::optional<PackedInfo>& vinfo) {
    const std::size_t limit = std::min<std::size_t>(std::size_t(setting_max_state_mb) * 1024 * 1024, MaxAllocSize - VARHDRSZ);
    std::size_t all_states = 0;
    for (const ModelSpec& m : models) {
        check_packed_matches(m, info, "packed table");
        if (vinfo) check_packed_matches(m, *vinfo, "validation table");
        const std::size_t bytes = state_size(m.config);
        if (bytes > limit)
            fail(ErrorKind::Limit, "model state of mst_key " + std::to_string(m.mst_key) + " is too large",
                 "It needs " + std::to_string(bytes / (1024 * 1024)) + " MB; hopper.max_model_state_mb is " +
                     std::to_string(setting_max_state_mb) + " MB.",
                 "Use a smaller architecture, or raise hopper.max_model_state_mb (at most 1024: PostgreSQL stores at most 1 GB in one value).");
        all_states += bytes + 64;
    }
    if (all_states > MaxAllocSize - 1024)
        fail(ErrorKind::Limit, "model states of the " + std::to_string(models.size()) + " configurations are too large to train at once",
             "They need " + std::to_string(all_states / (1024 * 1024)) +
                 " MB together; hopper passes them between statements as one value, and PostgreSQL stores at most 1 GB in one.",
             "Train fewer configurations per call: split the model selection table.");
}

namespace {

// Warm start: every model continues from its row (by mst_key) of the output table.
void read_warm_start(Spi& spi, const TableName& output, std::vector<ModelSpec>& models) {
    spi.execute("SELECT mst_key, " + model_state_column(output, "model output table") + " FROM " + output.quoted());
    std::map<int32_t, std::string> previous;
    for (uint64_t r = 0; r < spi.rows(); ++r) {
        if (spi.is_null(r, 0) || spi.is_null(r, 1))
            fail(ErrorKind::NullValue,
                 "model output table " + output.display() + " has a NULL " + (spi.is_null(r, 0) ? "mst_key" : "model_state"),
                 "A warm start continues every model of the table.", "Delete or repair that row.");
        previous[int32_t(spi.integer(r, 0))] = spi.bytes(r, 1);
    }
    for (ModelSpec& m : models) {
        auto it = previous.find(m.mst_key);
        if (it == previous.end()) {
            notice("mst_key " + std::to_string(m.mst_key) + " starts from fresh weights",
                   "The warm start table " + output.display() + " has no model for it.");
            continue;
        }
        m.initial_state = it->second;
        m.initial_source = output.display();
    }
}

}  // namespace

std::map<int32_t, int32_t> segment_buffers(Spi& spi, const TableName& packed) {
    spi.execute("SELECT dist_key, pg_catalog.count(*)::pg_catalog.int4 FROM " + packed.quoted() + " GROUP BY dist_key");
    std::map<int32_t, int32_t> out;
    for (uint64_t r = 0; r < spi.rows(); ++r)
        if (!spi.is_null(r, 0)) out[int32_t(spi.integer(r, 0))] = int32_t(spi.integer(r, 1));
    return out;
}

std::vector<std::string> initial_states(const std::vector<ModelSpec>& models) {
    std::vector<std::string> states;
    for (const ModelSpec& m : models) {
        if (m.initial_state.empty()) {
            states.push_back(serialize_state(Trainer(m.config)));
            continue;
        }
        try {
            states.push_back(serialize_state(restore_for_config(m.initial_state, m.config)));
        } catch (const Error& e) {
            throw Error(e.kind(), e.message(),
                        e.detail() + " In mst_key " + std::to_string(m.mst_key) + ", starting from " + m.initial_source + ".",
                        e.hint());
        }
    }
    return states;
}

void run_training(Spi& spi, RunRequest req, TrainingStrategy& strategy) {
    const auto started = Clock::now();
    if (req.models.empty()) fail(ErrorKind::InvalidParameter, "no model configurations to train");
    req.exact_training_metrics = setting_training_metrics == kTrainingMetricsExact;
    const RunTables tables = resolve_run_tables(spi, req);
    const TableName& packed = tables.packed;
    const PackedInfo& info = tables.info;
    const std::optional<PackedInfo>& vinfo = tables.validation;
    const TableName& output = tables.output;

    std::vector<ModelSpec>& models = req.models;
    std::sort(models.begin(), models.end(), [](const ModelSpec& a, const ModelSpec& b) { return a.mst_key < b.mst_key; });
    for (std::size_t i = 1; i < models.size(); ++i)
        if (models[i].mst_key == models[i - 1].mst_key)
            fail(ErrorKind::InvalidParameter, "duplicate mst_key " + std::to_string(models[i].mst_key));
    RunPlan plan;
    plan.req = &req;
    plan.tables = &tables;
    plan.models = &models;
    for (const ModelSpec& m : models) {
        plan.mst_keys.push_back(m.mst_key);
        plan.configs.push_back(m.config);
    }
    plan.num_segments = int(info.dist_keys.size());
    plan.nonatomic = spi.nonatomic();
    check_model_sizes(models, info, vinfo);
    strategy.prepare(spi, plan);
    // Before any state is built: a model too large for the budget is refused in milliseconds.
    {
        const int M = int(models.size()), S = plan.num_segments;
        check_run_memory(models, info, vinfo, strategy.training_processes(plan),
                         "training " + std::to_string(M) + " configuration" + (M == 1 ? "" : "s") + " on " +
                             std::to_string(S) + " segment" + (S == 1 ? "" : "s"));
    }
    if (req.warm_start) read_warm_start(spi, output, models);
    std::vector<std::string> states = initial_states(models);
    // The schedule continues where the models left off: a run resumed from the checkpoints of an
    // interrupted one (or warm-started from its output) trains exactly as if it had never stopped.
    uint32_t first_iteration = 0;
    for (const std::string& st : states) first_iteration = std::max(first_iteration, inspect_state(st).counters.iterations);

    const int M = int(models.size());
    std::vector<ModelHistory> history(M);
    for (int i = 0; i < M; ++i) {
        history[i].training_metrics.resize(models[i].config.compile.metrics.size());
        history[i].validation_metrics.resize(models[i].config.compile.metrics.size());
    }
    RunContext run;
    run.multiple = req.multiple;
    run.method = strategy.method();
    run.packed = packed;
    run.output = output;
    if (vinfo) run.validation = vinfo->table;
    run.models = &models;
    run.num_iterations = req.num_iterations;
    run.num_segments = plan.num_segments;
    run.name = req.name;
    run.description = req.description;
    run.started_at = tables.started_at;
    for (RunObserver* o : req.observers) o->on_start(spi, run);
    RunProgress progress;
    progress.begin(run.run_id, run.method, req.num_iterations, int64_t(req.num_iterations) * M, segment_buffers(spi, packed));

    std::vector<std::string> statuses(M, "completed");
    std::vector<HopLogRow> hop_log;
    StatementSettings settings;
    RunAreaScope run_area;  // buffers detoasted and states trained in this run are shared through it
    double hop_seconds = 0, train_seconds = 0, eval_seconds = 0;
    for (int it = 0; it < req.num_iterations; ++it) {
        const auto iteration_started = Clock::now();
        check_for_interrupts();
        progress_iteration(it + 1);
        settings.enter();
        IterationOutcome outcome = strategy.train_iteration(spi, plan, uint64_t(first_iteration) + uint64_t(it), states);
        train_seconds += outcome.train_seconds;
        hop_seconds += outcome.hop_seconds;
        for (HopLogRow& row : outcome.hops) {
            row.iteration = it + 1;
            hop_log.push_back(std::move(row));
        }
        // The running training metrics of this iteration are in the states; with_iterations clears
        // them for the next one.
        std::vector<Evaluation> running(M);
        for (int i = 0; i < M; ++i) {
            const TrainCounters counters = inspect_state(states[i]).counters;
            running[i] = running_evaluation(counters.iteration_totals, plan.configs[i]);
            states[i] = with_iterations(states[i], first_iteration + uint32_t(it) + 1);
            if (history[i].status == "completed" && counters.diverged) {
                history[i].status = "diverged";
                const DivergenceText text = strategy.divergence(plan.mst_keys[i], it + 1);
                warning(text.message, text.detail, text.hint);
            }
        }

        const bool evaluate = (it + 1) % req.metrics_frequency == 0 || it + 1 == req.num_iterations;
        std::string progress;
        std::vector<Evaluation> train_eval, valid_eval;
        if (evaluate) {
            auto t = Clock::now();
            train_eval = req.exact_training_metrics ? evaluate_states(spi, packed, states, plan.configs, plan.num_segments)
                                                    : running;
            if (vinfo) valid_eval = evaluate_states(spi, vinfo->table, states, plan.configs, int(vinfo->dist_keys.size()));
            eval_seconds += seconds_since(t);
            const double elapsed = seconds_since(started);
            for (int i = 0; i < M; ++i)
                record_evaluation(history[i], it + 1, elapsed, train_eval[i], vinfo ? &valid_eval[i] : nullptr);
            // Progress: the best model by training loss (the only one, for a single configuration).
            int best = 0;
            for (int i = 1; i < M; ++i)
                if (train_eval[i].loss < train_eval[best].loss) best = i;
            progress = progress_text(models[best].config, train_eval[best], vinfo ? &valid_eval[best] : nullptr);
            if (M > 1) progress += " (best: mst_key " + std::to_string(plan.mst_keys[best]) + ")";
        }
        progress_model_iterations_done(int64_t(it + 1) * M);
        for (int i = 0; i < M; ++i) statuses[i] = history[i].status;
        report_iteration(spi, req, run, it + 1, states, evaluate ? &train_eval : nullptr, vinfo ? &valid_eval : nullptr,
                         statuses);
        notice("iteration " + std::to_string(it + 1) + "/" + std::to_string(req.num_iterations) + ": " +
               format_number(seconds_since(iteration_started), 3) + " s" + (outcome.note.empty() ? "" : ", " + outcome.note) +
               progress);
        if (spi.nonatomic() && it + 1 < req.num_iterations) {
            settings.leave();
            spi.commit();
        }
    }

    // Outputs, all in the last transaction: they appear complete or not at all.
    settings.leave();
    RunOutputs outputs;
    outputs.req = &req;
    outputs.method = strategy.method();
    outputs.packed = packed;
    outputs.output = output;
    outputs.info = &info;
    outputs.validation = &vinfo;
    outputs.models = &models;
    outputs.mst_keys = &plan.mst_keys;
    outputs.states = &states;
    outputs.history = &history;
    outputs.hops_per_iteration = strategy.hops_per_iteration(plan);
    outputs.train_seconds = train_seconds;
    outputs.hop_seconds = hop_seconds;
    outputs.eval_seconds = eval_seconds;
    outputs.started_at = tables.started_at;
    outputs.hop_log = &hop_log;
    outputs.run_id = run.run_id;
    outputs.replaced_token = tables.replaced_token;
    write_run_outputs(spi, outputs);
    for (RunObserver* o : req.observers) o->on_finish(spi, run, states);
    release_run_locks();
}

}  // namespace hopper::pg
