// The training driver behind hopper.fit and hopper.fit_multiple.
//
// Per iteration (one transaction when called with CALL outside a transaction block):
//   1. model_input is created, partitioned by dist_key like the packed table, and the models are
//      put at their ring positions (a model whose position is not a segment waits in the NULL
//      partition);
//   2. K hops of exactly two statements: the *training* statement
//        CREATE UNLOGGED TABLE model_output AS SELECT ..., hopper.train_segment(...)
//        FROM packed JOIN model_input ... GROUP BY dist_key, mst_key
//      -- CREATE TABLE AS, because PostgreSQL 15 runs it in parallel (one worker per segment via
//      partitionwise join and aggregation) while INSERT ... SELECT always runs serially -- and the
//      *hop*, INSERT INTO model_input SELECT ... FROM model_output JOIN schedule, which moves every
//      model one ring position on (the first hop of an iteration is skipped: the next iteration
//      starts where the last one ended);
//   3. the models are read once, evaluated (all models in one scan of the data) when metrics are
//      due, and the working tables dropped before the commit, so an error, a cancel or a crash
//      never leaves a working table behind.
#include "pg/training/run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <sstream>

#include "hopper/error.h"
#include "hopper/resources.h"
#include "hopper/schedule.h"
#include "hopper/state_format.h"
#include "pg/training/buffer_cache.h"
#include "pg/common/datum.h"
#include "pg/engine/engine.h"
#include "pg/common/output_tables.h"
#include "pg/training/preprocess.h"
#include "pg/common/resource_limits.h"
#include "pg/training/run_lock.h"
#include "pg/common/settings.h"
#include "pg/common/statement_settings.h"

extern "C" {
#include "storage/lock.h"
}

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

namespace {

std::string json_array(const std::vector<double>& v) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) {
        s += i ? "," : "";
        s += std::isfinite(v[i]) ? format_number(v[i], 17) : "null";
    }
    return s + "]";
}

std::string metrics_json(const std::vector<Metric>& names, const std::vector<std::vector<double>>& values) {
    std::string s = "{";
    for (std::size_t k = 0; k < names.size(); ++k)
        s += (k ? ",\"" : "\"") + std::string(to_string(names[k])) + "\":" + json_array(values[k]);
    return s + "}";
}

std::vector<double> first_metric(const std::vector<std::vector<double>>& m) {
    return m.empty() ? std::vector<double>{} : m[0];
}

SqlParam final_or_null(const std::vector<double>& v) {
    return v.empty() || !std::isfinite(v.back()) ? SqlParam::null(FLOAT8OID) : SqlParam::float8(v.back());
}


}  // namespace

// In one transaction (a CALL inside BEGIN ... COMMIT), every working table hopper creates and drops
// keeps its lock until the end: a table, its TOAST table and TOAST index per training statement,
// and the partitions of model_input and the schedule per iteration. Refuse a run that would fill
// PostgreSQL's shared lock table (max_locks_per_transaction x max_connections, shared with every
// other session) before it starts, rather than failing with "out of shared memory" hours in.
static void check_lock_budget(const HopSchedule& sched, int num_iterations) {
    const int64_t per_iteration = int64_t(sched.hops_per_iteration()) * 3 + int64_t(sched.num_segments() + 2) * 3 + 3;
    const int64_t needed = per_iteration * num_iterations;
    const int64_t budget = int64_t(max_locks_per_xact) * MaxBackends / 2;
    if (needed > budget)
        fail(ErrorKind::Limit, "training run too long for one transaction",
             "In a transaction block it would hold about " + std::to_string(needed) +
                 " locks until it ends; half of PostgreSQL's lock table (max_locks_per_transaction x connections) is " +
                 std::to_string(budget) + ".",
             "CALL it outside a transaction block (it then commits after every iteration), run fewer iterations per "
             "call and continue with warm_start, or raise max_locks_per_transaction.");
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

void check_packed_matches(const ModelSpec& m, const PackedInfo& info, const char* what) {
    const Architecture& a = m.config.arch;
    if (a.input_dim != info.independent_dim)
        fail(ErrorKind::InvalidParameter,
             "model configuration mst_key " + std::to_string(m.mst_key) + " expects " + std::to_string(a.input_dim) +
                 " features but " + what + " " + info.table.display() + " has " + std::to_string(info.independent_dim),
             "Architecture " + a.shape_string() + ".");
    if (a.output_dim() != info.dependent_dim)
        fail(ErrorKind::InvalidParameter,
             "model configuration mst_key " + std::to_string(m.mst_key) + " has " + std::to_string(a.output_dim()) +
                 " outputs but " + what + " " + info.table.display() + " has " + std::to_string(info.dependent_dim) +
                 (info.response_type == "classification" ? " classes" : " dependent values per row"),
             "Architecture " + a.shape_string() + ".");
}

std::string replaceable_outputs(Spi& spi, const TableName& output) {
    const std::optional<std::string> token = output_token(spi, output, "model");
    if (!token)
        fail(ErrorKind::ObjectNotInPrerequisiteState,
             "model output table " + output.display() + " was not created by hopper",
             "A warm start replaces the model output table and its _info, _summary and _hops tables, and hopper "
             "replaces only tables it created (they carry its mark in their comment and a row in hopper.output_tables).",
             "Warm start from a table written by fit, fit_multiple, fit_data_parallel or materialize_checkpoint, or "
             "start from a checkpoint with warm_start_checkpoint or warm_start_run.");
    require_replaceable(spi, output.with_suffix("_info"), "model_info", *token, "info table");
    require_replaceable(spi, output.with_suffix("_summary"), "model_summary", *token, "summary table");
    require_replaceable(spi, output.with_suffix("_hops"), "model_hops", *token, "hops table");
    return *token;
}

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
    if (req.num_iterations <= 0)
        fail(ErrorKind::InvalidParameter, "num_iterations must be positive", "It is " + std::to_string(req.num_iterations) + ".");
    if (req.metrics_frequency <= 0)
        fail(ErrorKind::InvalidParameter, "metrics_compute_frequency must be positive",
             "It is " + std::to_string(req.metrics_frequency) + ".");
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

void run_training(Spi& spi, RunRequest req) {
    const auto started = Clock::now();
    if (req.models.empty()) fail(ErrorKind::InvalidParameter, "no model configurations to train");
    const RunTables tables = resolve_run_tables(spi, req);
    const std::string& started_at = tables.started_at;
    const TableName& packed = tables.packed;
    const PackedInfo& info = tables.info;
    const std::optional<PackedInfo>& vinfo = tables.validation;
    TableName output = tables.output;

    std::vector<ModelSpec>& models = req.models;
    std::sort(models.begin(), models.end(), [](const ModelSpec& a, const ModelSpec& b) { return a.mst_key < b.mst_key; });
    for (std::size_t i = 1; i < models.size(); ++i)
        if (models[i].mst_key == models[i - 1].mst_key)
            fail(ErrorKind::InvalidParameter, "duplicate mst_key " + std::to_string(models[i].mst_key));
    // At most the setting, and what fits in one PostgreSQL value (1 GB less the varlena header).
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
    // Every hop and evaluation passes all states as one bytea[] value, which PostgreSQL caps at 1 GB.
    if (all_states > MaxAllocSize - 1024)
        fail(ErrorKind::Limit, "model states of the " + std::to_string(models.size()) + " configurations are too large to train at once",
             "They need " + std::to_string(all_states / (1024 * 1024)) +
                 " MB together; hopper passes them between statements as one value, and PostgreSQL stores at most 1 GB in one.",
             "Train fewer configurations per call: split the model selection table.");

    // Before any state is built: a model too large for the budget is refused in milliseconds.
    {
        const int M = int(models.size()), S = int(info.dist_keys.size());
        check_run_memory(models, info, vinfo, S, "training " + std::to_string(M) + " configuration" + (M == 1 ? "" : "s") +
                                                     " on " + std::to_string(S) + " segment" + (S == 1 ? "" : "s"));
    }

    if (req.warm_start) {
        spi.execute("SELECT mst_key, model_state FROM " + output.quoted());
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

    // Initial states: warm start or transfer learning (architecture checked), else fresh weights.
    std::vector<std::string> states;
    std::vector<int32_t> mst_keys;
    for (const ModelSpec& m : models) {
        mst_keys.push_back(m.mst_key);
        if (!m.initial_state.empty()) {
            try {
                states.push_back(serialize_state(restore_for_config(m.initial_state, m.config)));
            } catch (const Error& e) {
                throw Error(e.kind(), e.message(),
                            e.detail() + " In mst_key " + std::to_string(m.mst_key) + ", starting from " + m.initial_source + ".",
                            e.hint());
            }
        } else {
            states.push_back(serialize_state(Trainer(m.config)));
        }
    }
    // The schedule continues where the models left off: a run resumed from the checkpoints of an
    // interrupted one (or warm-started from its output) trains exactly as if it had never stopped.
    uint32_t first_iteration = 0;
    for (const std::string& st : states) first_iteration = std::max(first_iteration, inspect_state(st).counters.iterations);

    const int M = int(models.size());
    const int S = int(info.dist_keys.size());
    HopSchedule sched(M, S);
    if (!spi.nonatomic()) check_lock_budget(sched, req.num_iterations);
    std::vector<ModelHistory> history(M);
    for (int i = 0; i < M; ++i) {
        history[i].training_metrics.resize(models[i].config.compile.metrics.size());
        history[i].validation_metrics.resize(models[i].config.compile.metrics.size());
    }
    std::vector<HopLogRow> hop_log;
    RunContext run;
    run.multiple = req.multiple;
    run.method = req.multiple ? "fit_multiple" : "fit";
    run.packed = packed;
    run.output = output;
    if (vinfo) run.validation = vinfo->table;
    run.models = &models;
    run.num_iterations = req.num_iterations;
    run.num_segments = S;
    run.name = req.name;
    run.description = req.description;
    run.started_at = started_at;
    for (RunObserver* o : req.observers) o->on_start(spi, run);
    std::vector<std::string> statuses(M, "completed");
    std::unique_ptr<ModelHopper> hopper = detect_engine(spi)->model_hopper(spi, packed, info.dist_keys, M, output.schema);
    StatementSettings settings;
    BufferCacheScope buffer_cache;  // buffers this backend detoasts are kept for the run
    std::vector<ModelConfig> configs;
    for (const ModelSpec& m : models) configs.push_back(m.config);
    double hop_seconds = 0, train_seconds = 0, eval_seconds = 0;

    for (int it = 0; it < req.num_iterations; ++it) {
        const auto iteration_started = Clock::now();
        settings.enter();
        const int schedule_iteration = int((first_iteration + uint32_t(it)) % uint32_t(sched.ring_size()));
        hopper->begin_iteration(sched, schedule_iteration, mst_keys, states);
        for (int hop = 0; hop < sched.hops_per_iteration(); ++hop) {
            check_for_interrupts();
            if (hop > 0) {
                auto t = Clock::now();
                hopper->hop();
                double dt = seconds_since(t);
                hop_seconds += dt;
                if (setting_debug_hops) hop_log.push_back({it + 1, hop + 1, "hop", -1, std::nullopt, dt});
            }
            auto t = Clock::now();
            hopper->train();
            double dt = seconds_since(t);
            train_seconds += dt;
            if (setting_debug_hops)
                for (auto& [key, dist] : hopper->placements())
                    hop_log.push_back({it + 1, hop + 1, dist ? "train" : "wait", key, dist, dt});
        }
        std::map<int32_t, std::string> trained = hopper->read_states();
        for (int i = 0; i < M; ++i) {
            auto found = trained.find(mst_keys[i]);
            if (found == trained.end())
                fail(ErrorKind::Internal, "model mst_key " + std::to_string(mst_keys[i]) + " is missing after training");
            states[i] = with_iterations(found->second, first_iteration + uint32_t(it) + 1);
        }
        hopper->end_iteration();

        for (int i = 0; i < M; ++i) {
            if (history[i].status == "completed" && inspect_state(states[i]).counters.diverged) {
                history[i].status = "diverged";
                warning("model mst_key " + std::to_string(mst_keys[i]) + " diverged in iteration " + std::to_string(it + 1),
                        "Its loss became NaN or infinite; training of this model stopped.",
                        "Lower the learning rate of this configuration.");
            }
        }

        const bool evaluate = (it + 1) % req.metrics_frequency == 0 || it + 1 == req.num_iterations;
        std::string progress;
        std::vector<Evaluation> train_eval, valid_eval;
        if (evaluate) {
            auto t = Clock::now();
            train_eval = evaluate_states(spi, packed, states, configs, S);
            if (vinfo) valid_eval = evaluate_states(spi, vinfo->table, states, configs, int(vinfo->dist_keys.size()));
            eval_seconds += seconds_since(t);
            const double elapsed = seconds_since(started);
            for (int i = 0; i < M; ++i)
                record_evaluation(history[i], it + 1, elapsed, train_eval[i], vinfo ? &valid_eval[i] : nullptr);
            // Progress: the best model by training loss (the only one, for fit).
            int best = 0;
            for (int i = 1; i < M; ++i)
                if (train_eval[i].loss < train_eval[best].loss) best = i;
            progress = progress_text(models[best].config, train_eval[best], vinfo ? &valid_eval[best] : nullptr);
            if (M > 1) progress += " (best: mst_key " + std::to_string(mst_keys[best]) + ")";
        }
        for (int i = 0; i < M; ++i) statuses[i] = history[i].status;
        report_iteration(spi, req, run, it + 1, states, evaluate ? &train_eval : nullptr, vinfo ? &valid_eval : nullptr,
                         statuses);
        notice("iteration " + std::to_string(it + 1) + "/" + std::to_string(req.num_iterations) + ": " +
               format_number(seconds_since(iteration_started), 3) + " s" + progress);
        if (spi.nonatomic() && it + 1 < req.num_iterations) {
            settings.leave();
            spi.commit();
        }
    }

    // Outputs, all in the last transaction: they appear complete or not at all.
    settings.leave();
    RunOutputs outputs;
    outputs.req = &req;
    outputs.method = req.multiple ? "fit_multiple" : "fit";
    outputs.packed = packed;
    outputs.output = output;
    outputs.info = &info;
    outputs.validation = &vinfo;
    outputs.models = &models;
    outputs.mst_keys = &mst_keys;
    outputs.states = &states;
    outputs.history = &history;
    outputs.hops_per_iteration = sched.hops_per_iteration();
    outputs.train_seconds = train_seconds;
    outputs.hop_seconds = hop_seconds;
    outputs.eval_seconds = eval_seconds;
    outputs.started_at = started_at;
    outputs.hop_log = &hop_log;
    outputs.run_id = run.run_id;
    outputs.replaced_token = tables.replaced_token;
    write_run_outputs(spi, outputs);
    for (RunObserver* o : req.observers) o->on_finish(spi, run, states);
    release_run_locks();
}

void write_run_outputs(Spi& spi, const RunOutputs& outputs) {
    const RunRequest& req = *outputs.req;
    const TableName& packed = outputs.packed;
    const TableName& output = outputs.output;
    const TableName info_table = output.with_suffix("_info");
    const TableName summary_table = output.with_suffix("_summary");
    const TableName hops_table = output.with_suffix("_hops");
    const PackedInfo& info = *outputs.info;
    const std::optional<PackedInfo>& vinfo = *outputs.validation;
    const std::vector<ModelSpec>& models = *outputs.models;
    const std::vector<int32_t>& mst_keys = *outputs.mst_keys;
    const std::vector<std::string>& states = *outputs.states;
    const std::vector<ModelHistory>& history = *outputs.history;
    const int M = int(models.size());
    const int S = int(info.dist_keys.size());
    const double train_seconds = outputs.train_seconds, hop_seconds = outputs.hop_seconds,
                 eval_seconds = outputs.eval_seconds;
    const std::string& started_at = outputs.started_at;
    if (req.warm_start) {
        // Checked again: the tables may have changed while the run trained.
        if (replaceable_outputs(spi, output) != outputs.replaced_token)
            fail(ErrorKind::ObjectNotInPrerequisiteState,
                 "model output table " + output.display() + " was replaced while the warm start trained",
                 "It is not the table the run started from.", "Run the warm start again.");
        spi.execute("DROP TABLE " + output.quoted());
        for (const TableName& t : {info_table, summary_table, hops_table})
            if (table_exists(t)) spi.execute("DROP TABLE " + t.quoted());
    }
    const std::string token = new_output_token(spi);
    const std::string run_text = outputs.run_id ? " of training run " + std::to_string(outputs.run_id) : "";
    spi.execute("CREATE TABLE " + output.quoted() +
                " (mst_key pg_catalog.int4 PRIMARY KEY, model_id pg_catalog.int4, model_state pg_catalog.bytea NOT NULL,"
                " model_arch pg_catalog.jsonb NOT NULL, compile_params pg_catalog.text NOT NULL,"
                " fit_params pg_catalog.text NOT NULL, model_config pg_catalog.jsonb NOT NULL)");
    spi.execute("ALTER TABLE " + output.quoted() + " ALTER COLUMN model_state SET STORAGE EXTERNAL");
    const std::optional<int64_t> run_id = outputs.run_id ? std::optional<int64_t>(outputs.run_id) : std::nullopt;
    record_output_table(spi, output, "model", token, "hopper model output" + run_text, run_id);
    {
        std::vector<int32_t> model_ids;
        std::vector<std::string> archs, compiles, fits, configs;
        std::vector<int32_t> has_id;
        for (const ModelSpec& m : models) {
            model_ids.push_back(m.model_id.value_or(INT32_MIN));
            archs.push_back(m.arch_json);
            compiles.push_back(m.compile_text);
            fits.push_back(m.fit_text);
            configs.push_back(m.config.to_json());
        }
        spi.execute("INSERT INTO " + output.quoted() +
                        " SELECT k, " + null_if("i", "-2147483648") + ", s, a::pg_catalog.jsonb, c, f, g::pg_catalog.jsonb"
                        " FROM " + rows_from({"int4", "int4", "bytea", "text", "text", "text", "text"}) +
                        " AS t(k, i, s, a, c, f, g)",
                    {SqlParam::int4_array(mst_keys), SqlParam::int4_array(model_ids), SqlParam::bytea_array(states),
                     SqlParam::text_array(archs), SqlParam::text_array(compiles), SqlParam::text_array(fits),
                     SqlParam::text_array(configs)});
    }

    spi.execute("CREATE TABLE " + info_table.quoted() +
                " (mst_key pg_catalog.int4 PRIMARY KEY, model_id pg_catalog.int4, compile_params pg_catalog.text,"
                " fit_params pg_catalog.text, model_type pg_catalog.text, model_size pg_catalog.float8,"
                " num_params pg_catalog.int8, metrics_elapsed_time pg_catalog.float8[], metrics_type pg_catalog.text[],"
                " loss_type pg_catalog.text, training_metrics_final pg_catalog.float8,"
                " training_loss_final pg_catalog.float8, training_metrics pg_catalog.float8[],"
                " training_loss pg_catalog.float8[], validation_metrics_final pg_catalog.float8,"
                " validation_loss_final pg_catalog.float8, validation_metrics pg_catalog.float8[],"
                " validation_loss pg_catalog.float8[], metrics_iters pg_catalog.int4[],"
                " training_metrics_all pg_catalog.jsonb, validation_metrics_all pg_catalog.jsonb,"
                " status pg_catalog.text NOT NULL, steps pg_catalog.int8, samples_seen pg_catalog.int8)");
    record_output_table(spi, info_table, "model_info", token, "hopper learning curves" + run_text, run_id);
    Prepared insert_info = spi.prepare(
        "INSERT INTO " + info_table.quoted() +
            " VALUES ($1, $2, $3, $4, 'hopper_mlp', $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,"
            " $19::pg_catalog.jsonb, $20::pg_catalog.jsonb, $21, $22, $23)",
        {INT4OID, INT4OID, TEXTOID, TEXTOID, FLOAT8OID, INT8OID, FLOAT8ARRAYOID, TEXTARRAYOID, TEXTOID, FLOAT8OID,
         FLOAT8OID, FLOAT8ARRAYOID, FLOAT8ARRAYOID, FLOAT8OID, FLOAT8OID, FLOAT8ARRAYOID, FLOAT8ARRAYOID,
         INT4ARRAYOID, TEXTOID, TEXTOID, TEXTOID, INT8OID, INT8OID});
    for (int i = 0; i < M; ++i) {
        const ModelSpec& m = models[i];
        const ModelHistory& h = history[i];
        const StateSummary st = inspect_state(states[i]);
        std::vector<std::string> metric_names;
        for (Metric x : m.config.compile.metrics) metric_names.push_back(to_string(x));
        const std::vector<double> tm = first_metric(h.training_metrics), vm = first_metric(h.validation_metrics);
        spi.execute(insert_info,
                    {SqlParam::int4(m.mst_key), m.model_id ? SqlParam::int4(*m.model_id) : SqlParam::null(INT4OID),
                     SqlParam::text(m.compile_text), SqlParam::text(m.fit_text), SqlParam::float8(double(st.bytes) / 1024.0),
                     SqlParam::int8(int64_t(st.num_params)), SqlParam::float8_array(h.elapsed), SqlParam::text_array(metric_names),
                     SqlParam::text(to_string(m.config.compile.loss)), final_or_null(tm), final_or_null(h.training_loss),
                     SqlParam::float8_array(tm), SqlParam::float8_array(h.training_loss),
                     vinfo ? final_or_null(vm) : SqlParam::null(FLOAT8OID),
                     vinfo ? final_or_null(h.validation_loss) : SqlParam::null(FLOAT8OID),
                     vinfo ? SqlParam::float8_array(vm) : SqlParam::null(FLOAT8ARRAYOID),
                     vinfo ? SqlParam::float8_array(h.validation_loss) : SqlParam::null(FLOAT8ARRAYOID),
                     SqlParam::int4_array(h.iterations), SqlParam::text_copy(metrics_json(m.config.compile.metrics, h.training_metrics)),
                     vinfo ? SqlParam::text_copy(metrics_json(m.config.compile.metrics, h.validation_metrics))
                           : SqlParam::null(TEXTOID),
                     SqlParam::text(h.status), SqlParam::int8(int64_t(st.counters.steps)),
                     SqlParam::int8(int64_t(st.counters.samples_seen))});
    }

    spi.execute("CREATE TABLE " + summary_table.quoted() +
                " (source_table pg_catalog.text, validation_table pg_catalog.text, model_output_table pg_catalog.text,"
                " model_selection_table pg_catalog.text, model_arch_table pg_catalog.text, method pg_catalog.text,"
                " num_iterations pg_catalog.int4, metrics_compute_frequency pg_catalog.int4, warm_start pg_catalog.bool,"
                " name pg_catalog.text, description pg_catalog.text, num_models pg_catalog.int4,"
                " num_segments pg_catalog.int4, dist_keys pg_catalog.int4[], hops_per_iteration pg_catalog.int4,"
                " dependent_varname pg_catalog.text, independent_varname pg_catalog.text,"
                " dependent_vartype pg_catalog.text, response_type pg_catalog.text, class_values pg_catalog.text[],"
                " normalizing_const pg_catalog.float8, scale pg_catalog.text, feature_center pg_catalog.float4[],"
                " feature_spread pg_catalog.float4[], num_rows pg_catalog.int8, metrics_iters pg_catalog.int4[],"
                " training_seconds pg_catalog.float8, hop_seconds pg_catalog.float8, evaluation_seconds pg_catalog.float8,"
                " start_training_time pg_catalog.timestamptz, end_training_time pg_catalog.timestamptz,"
                " hopper_version pg_catalog.text)");
    record_output_table(spi, summary_table, "model_summary", token, "hopper training summary" + run_text, run_id);
    {
        std::vector<double> center(info.feature_center.begin(), info.feature_center.end());
        std::vector<double> spread(info.feature_spread.begin(), info.feature_spread.end());
        std::vector<int32_t> dist_keys(info.dist_keys.begin(), info.dist_keys.end());
        const bool classification = info.response_type == "classification";
        spi.execute(
            "INSERT INTO " + summary_table.quoted() +
                " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,"
                " $21, $22, $23::pg_catalog.float4[], $24::pg_catalog.float4[], $25, $26, $27, $28, $29,"
                " $30::pg_catalog.timestamptz, pg_catalog.clock_timestamp(), $31)",
            {SqlParam::text(packed.display()), vinfo ? SqlParam::text_copy(vinfo->table.display()) : SqlParam::null(TEXTOID),
             SqlParam::text_copy(output.display()),
             req.mst_table_text.empty() ? SqlParam::null(TEXTOID) : SqlParam::text(req.mst_table_text),
             req.arch_table_text.empty() ? SqlParam::null(TEXTOID) : SqlParam::text(req.arch_table_text),
             SqlParam::text(outputs.method), SqlParam::int4(req.num_iterations),
             SqlParam::int4(req.metrics_frequency), SqlParam::boolean(req.warm_start),
             req.name.empty() ? SqlParam::null(TEXTOID) : SqlParam::text(req.name),
             req.description.empty() ? SqlParam::null(TEXTOID) : SqlParam::text(req.description), SqlParam::int4(M),
             SqlParam::int4(S), SqlParam::int4_array(dist_keys), SqlParam::int4(outputs.hops_per_iteration),
             SqlParam::text(info.dependent_varname), SqlParam::text(info.independent_varname),
             SqlParam::text(info.dependent_vartype), SqlParam::text(info.response_type),
             classification ? SqlParam::text_array(info.class_values) : SqlParam::null(TEXTARRAYOID),
             SqlParam::float8(info.normalizing_const), SqlParam::text(info.scale),
             center.empty() ? SqlParam::null(FLOAT8ARRAYOID) : SqlParam::float8_array(center),
             spread.empty() ? SqlParam::null(FLOAT8ARRAYOID) : SqlParam::float8_array(spread), SqlParam::int8(info.num_rows),
             SqlParam::int4_array(history[0].iterations), SqlParam::float8(train_seconds), SqlParam::float8(hop_seconds),
             SqlParam::float8(eval_seconds), SqlParam::text(started_at), SqlParam::text(HOPPER_VERSION)});
    }

    if (setting_debug_hops && outputs.hop_log) {
        spi.execute("CREATE TABLE " + hops_table.quoted() +
                    " (iteration pg_catalog.int4, hop pg_catalog.int4, statement pg_catalog.text,"
                    " mst_key pg_catalog.int4, dist_key pg_catalog.int4, seconds pg_catalog.float8)");
        record_output_table(spi, hops_table, "model_hops", token, "hopper record of hops" + run_text, run_id);
        std::vector<int32_t> its, hops, keys, dists;
        std::vector<std::string> stmts;
        std::vector<double> secs;
        for (const HopLogRow& r : *outputs.hop_log) {
            its.push_back(r.iteration);
            hops.push_back(r.hop);
            stmts.push_back(r.statement);
            keys.push_back(r.mst_key);
            dists.push_back(r.dist_key.value_or(INT32_MIN));
            secs.push_back(r.seconds);
        }
        spi.execute("INSERT INTO " + hops_table.quoted() +
                        " SELECT i, h, s, " + null_if("k", "-1") + ", " + null_if("d", "-2147483648") + ", t FROM " +
                        rows_from({"int4", "int4", "text", "int4", "int4", "float8"}) + " AS r(i, h, s, k, d, t)",
                    {SqlParam::int4_array(its), SqlParam::int4_array(hops), SqlParam::text_array(stmts), SqlParam::int4_array(keys),
                     SqlParam::int4_array(dists), SqlParam::float8_array(secs)});
    }
}

}  // namespace hopper::pg
