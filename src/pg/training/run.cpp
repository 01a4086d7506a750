// The training run: its loop (TrainingRun), the strategies' defaults, and run_training, which sets
// up and finishes a run of num_iterations (run.h).
//
// Per iteration (one transaction when called with CALL outside a transaction block): the strategy
// trains the models of its ring; the run stamps each state with the iterations it has completed (so
// that a resumed run continues the schedule), reports models that diverged, evaluates the models
// due in one scan of the data, tells the observers (the registry writes trial metrics and
// checkpoints) and the strategy, prints the NOTICE and commits. The output tables appear only in
// the last transaction, complete (run_outputs.cpp).
#include "pg/training/run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>

#include <time.h>

#include "hopper/error.h"
#include "hopper/recipe.h"
#include "hopper/resources.h"
#include "hopper/state_format.h"
#include "pg/common/datum.h"
#include "pg/common/resource_limits.h"
#include "pg/common/settings.h"
#include "pg/engine/engine.h"
#include "pg/runtime/progress.h"
#include "pg/runtime/read_ahead.h"
#include "pg/runtime/run_area.h"
#include "pg/runtime/run_lock.h"
#include "pg/runtime/scoped_settings.h"
#include "pg/training/preprocess.h"
#include "pg/training/run_outputs.h"

extern "C" {
#include "access/relation.h"
#include "lib/stringinfo.h"
#include "nodes/nodes.h"
#include "utils/guc.h"
#include "utils/rel.h"
}

namespace hopper::pg {

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// CPU time of this process so far (all its threads).
double process_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

std::string format_number(double v, int precision) {
    std::ostringstream s;
    s.precision(precision);
    s << v;
    return s.str();
}

namespace {

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
// A linear (or relu, tanh) output on class labels gets the mean squared error on the one-hot
// targets when no loss is given: it trains, but predict_proba's "probabilities" are not (-0.06,
// 1.055 in a user sweep of a PyTorch habit: logits out of the last layer). Said once a call.
void warn_labels_fit_by_squared_error(const std::vector<ModelSpec>& models, const PackedInfo& info) {
    if (info.response_type != "classification") return;
    std::vector<int32_t> regressing;
    for (const ModelSpec& m : models)
        if (!m.config.compile.loss_given && m.config.compile.loss == Loss::MeanSquaredError)
            regressing.push_back(m.mst_key);
    if (regressing.empty()) return;
    warning(std::to_string(regressing.size()) + " of " + std::to_string(models.size()) +
                " model configurations fit class labels with the mean squared error",
            "Their output layer is not softmax or sigmoid (mst_key " + std::to_string(regressing.front()) +
                (regressing.size() > 1 ? ", ..." : "") +
                "), so the loss follows it: the mean squared error on "
                "one-hot targets, and predicted probabilities are not probabilities.",
            "Give the output layer activation softmax (categorical cross-entropy follows), or pass loss in "
            "compile_params to keep this one.");
}

void check_packed_matches(const ModelSpec& m, const PackedInfo& info, const char* what) {
    const Architecture& a = m.config.arch;
    if (a.input_dim != info.independent_dim) {
        const std::string message = "model configuration mst_key " + std::to_string(m.mst_key) + " expects " +
                                    std::to_string(a.input_dim) + " features but " + what + " " + info.table.display() +
                                    " has " + std::to_string(info.independent_dim);
        if (!a.image_input()) fail(ErrorKind::InvalidParameter, message, "Architecture " + a.shape_string() + ".");
        // An image's packed row holds height*width*channels values: say which product is wrong.
        fail(ErrorKind::InvalidParameter, message,
             "Architecture " + a.shape_string() + ": its input shape [" + std::to_string(a.input_height) + ", " +
                 std::to_string(a.input_width) + ", " + std::to_string(a.input_channels) +
                 "] (height, width, channels) reads " + std::to_string(a.input_height) + "*" +
                 std::to_string(a.input_width) + "*" + std::to_string(a.input_channels) + " = " +
                 std::to_string(a.input_dim) + " values from each packed row.",
             "Give the input shape of the packed images: height*width*channels must be " +
                 std::to_string(info.independent_dim) + ".");
    }
    if (a.output_dim() != info.dependent_dim)
        fail(ErrorKind::InvalidParameter,
             "model configuration mst_key " + std::to_string(m.mst_key) + " has " + std::to_string(a.output_dim()) +
                 " outputs but " + what + " " + info.table.display() + " has " + std::to_string(info.dependent_dim) +
                 (info.response_type == "classification" ? " classes" : " dependent values per row"),
             "Architecture " + a.shape_string() + ".",
             info.response_type == "classification"
                 ? "Give the output layer one unit per class: the packed targets are one-hot, with "
                   "binary_crossentropy too (a sigmoid unit per class)."
                 : "");
}

}  // namespace

void check_run_memory(const std::vector<ModelSpec>& models, const PackedInfo& info,
                      const std::optional<PackedInfo>& validation, int processes, const std::string& what) {
    // The backend holds every model's state a few times over (the run's states, the statement
    // parameter that carries them, the states read back); up to `processes` segments train a model
    // at once; evaluation loads every model in each of its workers.
    uint64_t held = 0, train_one = 0;
    std::vector<ModelConfig> configs;
    // A segment's rows kept to reshuffle them (fit_params shuffle): up to hopper.shuffle_window_mb, or
    // the whole segment with epochs > 1, when they are copied rather than found in the buffer cache.
    const uint64_t segment_bytes = uint64_t(info.num_rows) * uint64_t(info.independent_dim + info.dependent_dim) *
                                   sizeof(float) / uint64_t(std::max<std::size_t>(1, info.dist_keys.size()));
    for (const ModelSpec& m : models) {
        held += 3 * uint64_t(state_size(m.config));
        uint64_t one = training_bytes(m.config, std::max(1, info.buffer_size));
        if (m.config.fit.shuffle && m.config.fit.steps_per_epoch == 0)
            one += m.config.fit.epochs > 1
                       ? segment_bytes
                       : std::min<uint64_t>(segment_bytes, uint64_t(setting_shuffle_window_mb) * 1024 * 1024);
        train_one = std::max<uint64_t>(train_one, one);
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
        const TableName validation = resolve_input_table(req.validation_text, "packed validation table");
        const auto pack_it = [&](const std::string& source, const std::string& output) {
            return "Pack the validation rows with hopper.preprocess_validation(" + source + ", " + output +
                   ", <dependent>, <independent>, " + quote_literal(t.packed.display()) + ").";
        };
        if (!table_exists(validation.with_suffix("_summary")))
            fail(ErrorKind::UndefinedTable, "validation table " + validation.display() + " is not a packed table",
                 "It has no summary table beside it.", pack_it(quote_literal(validation.display()), "<output>"));
        t.validation = read_packed_info(spi, validation);
        const std::string difference = packing_difference(t.info, *t.validation);
        if (!difference.empty())
            fail(ErrorKind::InvalidParameter,
                 "validation table " + validation.display() + " was not packed like training table " +
                     t.packed.display(),
                 difference, pack_it("<source>", "<output>"));
    }
    // Output tables: new ones, or (warm start) the previous run's, replaced at the end.
    t.output = req.warm_start ? resolve_input_table(req.output_text, "model output table")
                              : resolve_output_table(req.output_text, "model output table");
    // Every table the run writes at its end is claimed now, so that no other hopper call creates one
    // meanwhile and makes the run fail after training.
    claim_output_table(t.output, "model output table");
    for (const CompanionTable& c : kCompanionTables) claim_output_table(t.output.with_suffix(c.suffix), c.what);
    if (!req.warm_start) {
        for (const CompanionTable& c : kCompanionTables) require_absent(t.output.with_suffix(c.suffix), c.what);
    } else {
        t.replaced_token = replaceable_outputs(spi, t.output);
    }
    return t;
}

void check_model_sizes(std::vector<ModelSpec>& models, const PackedInfo& info, const std::optional<PackedInfo>& vinfo) {
    // What an architecture left to the packed table (input_dim, embeddings' columns) is filled in
    // here, before any state exists: the states record it, so predict and evaluate need no table.
    // (Every model needs the recipe: a column packed as codes must be read by an embedding.)
    // (The target's standardization too: the model trains on it and gives its outputs back in the
    // target's own units.)
    std::optional<Recipe> recipe;
    if (!info.feature_recipe.empty()) recipe = Recipe::from_json(info.feature_recipe);
    std::optional<TargetScaling> target;
    if (info.target) target = TargetScaling{float(info.target->mean), float(info.target->stddev)};
    for (ModelSpec& m : models) {
        try {
            m.config.arch = resolve_inputs(std::move(m.config.arch), info.independent_dim, recipe ? &*recipe : nullptr,
                                           target ? &*target : nullptr);
        } catch (const Error& e) {
            const std::string in = "In model configuration mst_key " + std::to_string(m.mst_key) + ".";
            throw Error(e.kind(), e.message(), e.detail().empty() ? in : e.detail() + " " + in, e.hint());
        }
    }
    const std::size_t limit =
        std::min<std::size_t>(std::size_t(setting_max_state_mb) * 1024 * 1024, MaxAllocSize - VARHDRSZ);
    warn_labels_fit_by_squared_error(models, info);
    std::size_t all_states = 0;
    for (const ModelSpec& m : models) {
        check_packed_matches(m, info, "packed table");
        if (vinfo) check_packed_matches(m, *vinfo, "validation table");
        const std::size_t bytes = state_size(m.config);
        if (bytes > limit)
            fail(
                ErrorKind::Limit, "model state of mst_key " + std::to_string(m.mst_key) + " is too large",
                "It needs " + std::to_string(bytes / (1024 * 1024)) + " MB; hopper.max_model_state_mb is " +
                    std::to_string(setting_max_state_mb) + " MB.",
                "Use a smaller architecture, or raise hopper.max_model_state_mb (at most 1024: PostgreSQL stores at most 1 GB in one value).");
        all_states += bytes + 64;
    }
    if (all_states > MaxAllocSize - 1024)
        fail(
            ErrorKind::Limit,
            "model states of the " + std::to_string(models.size()) + " configurations are too large to train at once",
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
                 "model output table " + output.display() + " has a NULL " +
                     (spi.is_null(r, 0) ? "mst_key" : "model_state"),
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
            // An architecture row's weights may be Keras' flat weights (MADlib's load_keras_model).
            states.push_back(
                serialize_state(restore_for_config(state_from_weights(m.initial_state, m.config), m.config)));
        } catch (const Error& e) {
            throw Error(e.kind(), e.message(),
                        e.detail() + " In mst_key " + std::to_string(m.mst_key) + ", starting from " +
                            m.initial_source + ".",
                        e.hint());
        }
    }
    return states;
}

// A regression target's scaling travels with the weights trained under it (restore_for_config): a
// model continued on a table packed with other statistics, or trained raw before targets were
// standardized, keeps its own. The run's configurations take it, so the model table, checkpoints and
// run records say the scaling the states use (they said the new pack's: a sweep), and a WARNING says
// it is not the packed table's.
namespace {
void adopt_states_target_scaling(std::vector<ModelSpec>& models, const std::vector<std::string>& states,
                                 RunPlan& plan) {
    auto describe = [](const TargetScaling& t) {
        return t.identity()
                   ? std::string("the target as it is")
                   : "mean " + format_number(t.offset, 9) + ", standard deviation " + format_number(t.scale, 9);
    };
    for (std::size_t i = 0; i < models.size(); ++i) {
        if (models[i].initial_state.empty()) continue;
        const TargetScaling own = inspect_state(states[i]).config.arch.target_scaling;
        TargetScaling& packed = models[i].config.arch.target_scaling;
        if (own == packed) continue;
        warning("mst_key " + std::to_string(models[i].mst_key) +
                    " continues with the target scaling it was trained with",
                "Its weights learnt " + describe(own) + " (from " + models[i].initial_source +
                    "); the packed table's is " + describe(packed) + ".",
                "Its predictions stay in the target's units. To train under the packed table's scaling, start "
                "from fresh weights.");
        packed = own;
        plan.configs[i].arch.target_scaling = own;
    }
}
}  // namespace

RunPlan run_plan(const RunRequest& req, const RunTables& tables, const std::vector<ModelSpec>& models, bool nonatomic) {
    RunPlan plan;
    plan.req = &req;
    plan.tables = &tables;
    plan.models = &models;
    for (const ModelSpec& m : models) {
        // Before anything is written: a precision this machine cannot train in (bfloat16 without AVX512_BF16).
        require_supported_precision(m.config.fit);
        plan.mst_keys.push_back(m.mst_key);
        plan.configs.push_back(m.config);
    }
    plan.num_segments = int(tables.info.dist_keys.size());
    plan.nonatomic = nonatomic;
    return plan;
}

RunContext run_context(const RunPlan& plan, const char* method) {
    RunContext run;
    run.multiple = plan.req->multiple;
    run.method = method;
    run.packed = plan.tables->packed;
    run.output = plan.tables->output;
    if (plan.tables->validation) run.validation = plan.tables->validation->table;
    run.models = plan.models;
    run.num_iterations = plan.req->num_iterations;
    run.num_segments = plan.num_segments;
    run.name = plan.req->name;
    run.description = plan.req->description;
    run.started_at = plan.tables->started_at;
    return run;
}

int TrainingStrategy::training_processes(const RunPlan& plan) const {
    return std::min<int>(int(plan.models->size()), plan.num_segments);
}

int64_t TrainingStrategy::model_iterations(const RunPlan& plan) const {
    return int64_t(plan.req->num_iterations) * int64_t(plan.models->size());
}

bool TrainingStrategy::finished(const TrainingRun& run) const {
    return run.iteration() >= run.plan().req->num_iterations;
}

std::vector<std::size_t> TrainingStrategy::before_iteration(Spi&, TrainingRun& run) {
    std::vector<std::size_t> all(run.num_models());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    return all;
}

bool TrainingStrategy::evaluates(const TrainingRun& run, std::size_t) const {
    return run.iteration() % run.plan().req->metrics_frequency == 0 || finished(run);
}

double searcher_metric_value(const Evaluation& e, const std::vector<Metric>& names, const std::string& metric) {
    if (metric == "loss") return e.loss;
    for (std::size_t k = 0; k < names.size() && k < e.metrics.size(); ++k)
        if (metric == to_string(names[k])) return e.metrics[k];
    return std::nan("");
}

std::string TrainingStrategy::after_iteration(Spi&, TrainingRun& run, const IterationEvaluation& evaluation) {
    if (evaluation.models.empty()) return "";
    // The best model by the run's searcher metric, as hopper.best_checkpoints ranks them (without a
    // registry: the validation loss, else the training loss). It was the training loss, which named
    // the model with the worst validation figures as best in a fit_multiple with dropout.
    SearcherMetric searcher;
    searcher.validation = !evaluation.validation.empty();
    searcher.metric = "loss";
    for (const RunObserver* o : run.plan().req->observers)
        if (const SearcherMetric* s = o->searcher()) searcher = *s;
    auto value = [&](std::size_t k) {
        const Evaluation& e =
            searcher.validation && !evaluation.validation.empty() ? evaluation.validation[k] : evaluation.training[k];
        return searcher_metric_value(e, run.plan().configs[evaluation.models[k]].compile.metrics, searcher.metric);
    };
    std::size_t best = 0;
    for (std::size_t k = 1; k < evaluation.models.size(); ++k) {
        const double v = value(k), b = value(best);
        if (std::isfinite(v) && (!std::isfinite(b) || (searcher.smaller_is_better ? v < b : v > b))) best = k;
    }
    const std::size_t model = evaluation.models[best];
    std::string s = progress_text(run.plan().configs[model], evaluation.training[best],
                                  evaluation.validation.empty() ? nullptr : &evaluation.validation[best]);
    if (run.num_models() > 1) s += " (best: mst_key " + std::to_string(run.plan().mst_keys[model]) + ")";
    return s;
}

std::string TrainingStrategy::iteration_label(const TrainingRun& run) const {
    return "iteration " + std::to_string(run.iteration()) + "/" + std::to_string(run.plan().req->num_iterations);
}

TrainingRun::TrainingRun(Spi& spi, TrainingStrategy& strategy, const RunPlan& plan, const RunContext& context,
                         Clock::time_point started)
    : spi_(spi),
      strategy_(strategy),
      plan_(plan),
      context_(context),
      started_(started),
      area_(std::make_unique<RunAreaScope>()),
      read_ahead_(std::make_unique<ReadAhead>()) {}

TrainingRun::~TrainingRun() = default;

void TrainingRun::set_states(std::vector<std::string> states, uint32_t base, std::vector<int> iterations) {
    const std::size_t M = plan_.models->size();
    if (states.size() != M || iterations.size() != M)
        fail(ErrorKind::Internal, "a run's states do not match its models");
    states_ = std::move(states);
    base_ = base;
    iterations_ = std::move(iterations);
    diverged_.assign(M, false);
    history_.assign(M, ModelHistory{});
    for (std::size_t i = 0; i < M; ++i) {
        history_[i].training_metrics.resize(plan_.configs[i].compile.metrics.size());
        history_[i].validation_metrics.resize(plan_.configs[i].compile.metrics.size());
    }
}

// The same relation can also change under the same OID: a table emptied and turned into a view
// (CREATE RULE "_RETURN"), whose functions then ran as the caller in every later iteration (a
// hostile review), or a column retyped (read as real[] anyway: XX000). Its kind and columns are
// compared with the run's start too.
namespace {
// Only PostgreSQL calls between opening and closing the relation: nothing C++ can throw while it is
// open.
std::string relation_shape(Oid relid) {
    return std::string(call([&]() -> const char* {
        Relation rel = relation_open(relid, NoLock);
        const TupleDesc desc = RelationGetDescr(rel);
        StringInfoData shape;
        initStringInfo(&shape);
        appendStringInfoChar(&shape, rel->rd_rel->relkind);
        for (int a = 0; a < desc->natts; ++a) {
            const FormData_pg_attribute* att = TupleDescAttr(desc, a);
            if (!att->attisdropped)
                appendStringInfo(&shape, ";%s:%u:%d", NameStr(att->attname), att->atttypid, att->atttypmod);
        }
        relation_close(rel, NoLock);
        return shape.data;
    }));
}
}  // namespace

void TrainingRun::train() {
    for (const TableName* t :
         {&plan_.tables->packed, plan_.tables->validation ? &plan_.tables->validation->table : nullptr}) {
        if (!t) continue;
        const Oid oid = table_oid(*t);
        read_tables_.push_back(
            {*t, oid, relation_shape(oid), t == &plan_.tables->packed ? "packed table" : "validation table"});
    }
    progress_.begin(context_.run_id, context_.method, plan_.req->num_iterations, strategy_.model_iterations(plan_),
                    segment_buffers(spi_, plan_.tables->packed));
    if (detect_engine(spi_)->reads_buffers_locally()) {
        std::vector<TableName> tables = {plan_.tables->packed};
        if (plan_.tables->validation) tables.push_back(plan_.tables->validation->table);
        int at_once = strategy_.training_processes(plan_);
        if (setting_parallel_segments > 0) at_once = std::min(at_once, setting_parallel_segments);
        read_ahead_->start(spi_, tables, at_once);
    }
    while (!ended()) iterate();
    if (!strategy_.finished(*this))
        notice("every model diverged: the run ends after iteration " + std::to_string(iteration_) + " of " +
               std::to_string(plan_.req->num_iterations));
}

// Keras' TerminateOnNaN: once every model's loss became NaN or infinite, nothing trains any more,
// and going on printed "training loss nan" for each of the remaining iterations (49 of 50 on
// modeldata's ames with fit's defaults: user sweep).
bool TrainingRun::ended() const {
    if (strategy_.finished(*this)) return true;
    return strategy_.ends_when_all_diverged() && !diverged_.empty() &&
           std::all_of(diverged_.begin(), diverged_.end(), [](bool d) { return d; });
}

// A call that commits after every iteration holds no lock on the tables it reads in between: a DROP
// (or a replacement) of the packed or validation table went through, and the next statement failed
// with hopper's own SQL in its context (a Citus user sweep). Each iteration locks them again, as the
// first did, and says plainly which one went away.
void TrainingRun::relock_read_tables() {
    for (const ReadTable& t : read_tables_) {
        Oid now;
        bool changed;
        {
            const TransientMemory transient;  // a name list and the shape's text, every iteration
            now = lock_table_for_reading(t.name);
            changed = now == t.oid && relation_shape(now) != t.shape;
        }
        if (now != t.oid || changed)
            fail(OidIsValid(now) ? ErrorKind::ObjectNotInPrerequisiteState : ErrorKind::UndefinedTable,
                 std::string(t.what) + " " + t.name.display() + " was " +
                     (changed           ? "changed"
                      : OidIsValid(now) ? "replaced"
                                        : "dropped") +
                     " during the run",
                 std::string(changed ? "Its kind or columns are not those the run started with. " : "") +
                     "The run stops before iteration " + std::to_string(iteration_ + 1) +
                     "; the checkpoints of the iterations before are kept.",
                 "Leave the tables a run reads alone until it ends.");
    }
}

void TrainingRun::iterate() {
    const auto started = Clock::now();
    const double cpu_started = process_cpu_seconds();
    const double eval_before = eval_seconds_;
    check_for_interrupts();
    if (spi_.nonatomic()) relock_read_tables();
    progress_iteration(++iteration_);
    settings_.enter();
    Ring ring;
    ring.models = strategy_.before_iteration(spi_, *this);
    for (std::size_t i : ring.models) {
        ring.mst_keys.push_back(plan_.mst_keys[i]);
        ring.iterations.push_back(uint64_t(base_) + uint64_t(iterations_[i]));
        ring.states.push_back(std::move(states_[i]));
        iterations_[i] += 1;  // what it will have trained after this iteration, which evaluates() reads
    }
    // Which models are evaluated after the iteration is known before it trains, so that its training
    // may evaluate them as they finish.
    ring.evaluation = evaluation_due(ring);
    const double cpu_training = process_cpu_seconds();
    IterationOutcome outcome = strategy_.train_iteration(spi_, plan_, ring);
    // Without the evaluation the training overlapped (its own line below): what the core alone does.
    const double training_cpu = process_cpu_seconds() - cpu_training - outcome.eval_cpu_seconds;
    train_seconds_ += outcome.train_seconds;
    hop_seconds_ += outcome.hop_seconds;
    eval_seconds_ += outcome.eval_seconds;
    for (HopLogRow& row : outcome.hops) {
        row.iteration = iteration_;
        hop_log_.push_back(std::move(row));
    }
    // The running training metrics of this iteration are in the states; with_iterations clears
    // them for the next one.
    std::vector<Evaluation> running(ring.models.size());
    for (std::size_t k = 0; k < ring.models.size(); ++k) {
        const std::size_t i = ring.models[k];
        const TrainCounters counters = inspect_state(ring.states[k]).counters;
        running[k] = running_evaluation(counters.iteration_totals, plan_.configs[i]);
        states_[i] = with_iterations(ring.states[k], base_ + uint32_t(iterations_[i]));
        if (counters.diverged && !diverged_[i]) {
            diverged_[i] = true;
            history_[i].status = "diverged";
            const DivergenceText text = strategy_.divergence(plan_.mst_keys[i], iterations_[i]);
            // A regression target of large values packed raw diverges too, whatever the learning
            // rate (preprocess named it in a NOTICE); standardized, it does not.
            const bool raw_target = plan_.tables->info.response_type == "regression" && !plan_.tables->info.target;
            warning(text.message, text.detail,
                    text.hint + (raw_target ? " A regression target of large values trains standardized: pack it "
                                              "with hopper.preprocess's scale 'auto' (its default)."
                                            : ""));
        }
    }
    const IterationEvaluation evaluation = evaluate(ring, running);
    int64_t done = 0;
    for (int n : iterations_) done += n;
    progress_model_iterations_done(done);

    const std::string told = strategy_.after_iteration(spi_, *this, evaluation);
    // The observers hear of the whole run (the methods they serve evaluate all models together).
    std::vector<std::string> statuses;
    for (const ModelHistory& h : history_) statuses.push_back(h.status);
    IterationReport report;
    report.iteration = iteration_;
    report.last = ended();
    report.states = &states_;
    report.evaluated = !evaluation.models.empty();
    report.training = report.evaluated ? &evaluation.training : nullptr;
    report.validation = report.evaluated && plan_.tables->validation ? &evaluation.validation : nullptr;
    report.statuses = &statuses;
    for (RunObserver* o : plan_.req->observers) o->on_iteration(spi_, context_, report);
    const double wall = seconds_since(started);
    notice(strategy_.iteration_label(*this) + ": " + format_number(wall, 3) + " s" +
           (outcome.note.empty() ? "" : ", " + outcome.note) + told);
    // For benchmarks (bench/hopper_run.py reads it at client_min_messages = debug1): where the
    // iteration's time went, and this backend's CPU time (its parallel workers' not included).
    const std::string timing = strategy_.iteration_label(*this) + " timing: wall " + format_number(wall, 6) +
                               " s, training " + format_number(outcome.train_seconds, 6) + " s, hops " +
                               format_number(outcome.hop_seconds, 6) + " s, evaluation " +
                               format_number(eval_seconds_ - eval_before, 6) + " s, backend CPU " +
                               format_number(process_cpu_seconds() - cpu_started, 6) + " s, of which training " +
                               format_number(training_cpu, 6) + " s and evaluation overlapped with it " +
                               format_number(outcome.eval_cpu_seconds, 6) + " s";
    call([&] { elog(DEBUG1, "%s", timing.c_str()); });
    settings_.leave();
    // The last iteration too: its checkpoints (and a search's decisions) are kept even when the
    // outputs, written in a transaction of their own, cannot be (a table of their name created
    // meanwhile); a run killed then resumes to write them only.
    if (spi_.nonatomic()) spi_.commit();
}

// The models due and the tables they are evaluated on: the training table for exact training
// metrics, then the validation table. The training may evaluate them unless hopper.overlap_evaluation
// is off.
RingEvaluation TrainingRun::evaluation_due(const Ring& ring) const {
    RingEvaluation due;
    for (std::size_t k = 0; k < ring.models.size(); ++k)
        if (strategy_.evaluates(*this, ring.models[k])) due.due.push_back(k);
    if (due.due.empty() || !setting_overlap_evaluation) return due;
    if (plan_.req->exact_training_metrics) due.tables.push_back({plan_.tables->packed, plan_.tables->info.dist_keys});
    if (const std::optional<PackedInfo>& vinfo = plan_.tables->validation) {
        // A local packed table trains in a group of processes on a Citus coordinator too; a
        // validation table Citus distributes (preprocess_validation distributes it there) is not
        // theirs to read: fit_multiple failed with "cannot use 2PC in transactions involving
        // multiple servers" (a Citus sweep).
        if (!validation_spread_) validation_spread_ = detect_engine(spi_)->spreads_table(spi_, vinfo->table);
        if (!*validation_spread_) due.tables.push_back({vinfo->table, vinfo->dist_keys});
    }
    return due;
}

IterationEvaluation TrainingRun::evaluate(const Ring& ring, const std::vector<Evaluation>& running) {
    IterationEvaluation out;
    const RingEvaluation& due = ring.evaluation;
    std::vector<Evaluation> due_running;
    for (std::size_t k : due.due) {
        out.models.push_back(ring.models[k]);
        due_running.push_back(running[k]);
    }
    if (out.models.empty()) return out;
    const auto t = Clock::now();
    // What the iteration's training evaluated on `table`, else the evaluation by statement: every
    // model in order from the run's own vectors, else copies of those due.
    std::optional<std::vector<std::string>> some_states;
    std::optional<std::vector<ModelConfig>> some_configs;
    std::size_t next = 0;  // due.tables: the training table (exact metrics), then the validation table
    auto evaluation_on = [&](const TableName& table, int segments) {
        const std::size_t n = next++;
        if (n < due.results.size() && !due.results[n].empty()) return due.results[n];
        bool all = out.models.size() == states_.size();
        for (std::size_t k = 0; all && k < out.models.size(); ++k) all = out.models[k] == k;
        if (!all && !some_states) {
            some_states.emplace();
            some_configs.emplace();
            for (std::size_t i : out.models) {
                some_states->push_back(states_[i]);
                some_configs->push_back(plan_.configs[i]);
            }
        }
        return evaluate_states(spi_, table, all ? states_ : *some_states, all ? plan_.configs : *some_configs,
                               segments);
    };
    const std::optional<PackedInfo>& vinfo = plan_.tables->validation;
    out.training = plan_.req->exact_training_metrics ? evaluation_on(plan_.tables->packed, plan_.num_segments)
                                                     : std::move(due_running);
    if (vinfo) out.validation = evaluation_on(vinfo->table, int(vinfo->dist_keys.size()));
    eval_seconds_ += seconds_since(t);
    out.elapsed = elapsed();
    for (std::size_t k = 0; k < out.models.size(); ++k)
        record_evaluation(history_[out.models[k]], iterations_[out.models[k]], out.elapsed, out.training[k],
                          vinfo ? &out.validation[k] : nullptr);
    return out;
}

RunOutputs TrainingRun::outputs(bool trained) const {
    RunOutputs out;
    out.req = plan_.req;
    out.method = strategy_.method();
    out.packed = plan_.tables->packed;
    out.output = plan_.tables->output;
    out.info = &plan_.tables->info;
    out.validation = &plan_.tables->validation;
    out.models = plan_.models;
    out.mst_keys = &plan_.mst_keys;
    out.started_at = plan_.tables->started_at;
    out.run_id = context_.run_id;
    out.replaced_token = plan_.tables->replaced_token;
    if (trained) {
        out.states = &states_;
        out.history = &history_;
        out.hops_per_iteration = strategy_.hops_per_iteration(plan_);
        out.train_seconds = train_seconds_;
        out.hop_seconds = hop_seconds_;
        out.eval_seconds = eval_seconds_;
        out.hop_log = &hop_log_;
    }
    return out;
}

void run_training(Spi& spi, RunRequest req, TrainingStrategy& strategy) {
    const auto started = Clock::now();
    if (req.models.empty()) fail(ErrorKind::InvalidParameter, "no model configurations to train");
    req.exact_training_metrics = setting_training_metrics == kTrainingMetricsExact;
    const RunTables tables = resolve_run_tables(spi, req);
    const PackedInfo& info = tables.info;
    const std::optional<PackedInfo>& vinfo = tables.validation;

    std::vector<ModelSpec>& models = req.models;
    std::sort(models.begin(), models.end(),
              [](const ModelSpec& a, const ModelSpec& b) { return a.mst_key < b.mst_key; });
    for (std::size_t i = 1; i < models.size(); ++i)
        if (models[i].mst_key == models[i - 1].mst_key)
            fail(ErrorKind::InvalidParameter, "duplicate mst_key " + std::to_string(models[i].mst_key));
    check_model_sizes(models, info, vinfo);
    RunPlan plan = run_plan(req, tables, models, spi.nonatomic());
    strategy.prepare(spi, plan);
    // Before any state is built: a model too large for the budget is refused in milliseconds.
    const int M = int(models.size()), S = plan.num_segments;
    check_run_memory(models, info, vinfo, strategy.training_processes(plan),
                     "training " + std::to_string(M) + " configuration" + (M == 1 ? "" : "s") + " on " +
                         std::to_string(S) + " segment" + (S == 1 ? "" : "s"));
    if (req.warm_start) read_warm_start(spi, tables.output, models);
    std::vector<std::string> states = initial_states(models);
    adopt_states_target_scaling(models, states, plan);
    // The schedule continues where the models left off: a run resumed from the checkpoints of an
    // interrupted one (or warm-started from its output) trains exactly as if it had never stopped.
    uint32_t first_iteration = 0;
    for (const std::string& st : states)
        first_iteration = std::max(first_iteration, inspect_state(st).counters.iterations);

    RunContext run = run_context(plan, strategy.method());
    for (RunObserver* o : req.observers) o->on_start(spi, run);

    TrainingRun training(spi, strategy, plan, run, started);
    training.set_states(std::move(states), first_iteration, std::vector<int>(M, 0));
    training.train();

    // Outputs, all in one transaction: they appear complete or not at all.
    write_run_outputs(spi, training.outputs(true));
    for (RunObserver* o : req.observers) o->on_finish(spi, run, training.states());
    release_run_locks();
}

}  // namespace hopper::pg
