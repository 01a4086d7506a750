// hopper.fit_automl: successive halving and Hyperband by model hopping (adaptive_search.h).
//
// One ring iteration per transaction: every trial of the rungs in training that has not reached
// its rung's budget trains one iteration (one pass over the data) in one phased hop ring, where a
// trial starts at segment phase(mst_key - 1, its iterations so far) and visits the segments in
// order from there -- so it trains exactly as it would alone, whichever other trials share the
// ring. Trials that reached their rung's budget are evaluated; a rung whose trials all did is
// ranked (core: rank_rung), checkpointed and recorded, and its survivors go on from their states.
// Calling the procedure again with the run's id reads the recorded decisions back, restarts the
// rungs that had not completed from the checkpoints of the rung before, and so reaches the same
// decisions as a search that was never interrupted. This file sets the search up, resumes and
// finishes it; the loop is a TrainingRun's (run.h), with the search as its strategy.
#include "pg/procedures/adaptive_search.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <set>

#include "hopper/error.h"
#include "hopper/registry.h"
#include "hopper/schedule.h"
#include "hopper/state_format.h"
#include "pg/common/datum.h"
#include "pg/common/guard.h"
#include "pg/common/names.h"
#include "pg/common/settings.h"
#include "pg/engine/engine.h"
#include "pg/registry/registry.h"
#include "pg/registry/search_records.h"
#include "pg/runtime/progress.h"
#include "pg/runtime/run_lock.h"
#include "pg/runtime/scoped_settings.h"
#include "pg/training/model_selection.h"
#include "pg/training/run_outputs.h"

namespace hopper::pg {
namespace {

// Defaults: Li et al.'s example budget (R = 81 is theirs; 9 keeps a default call short) and eta.
constexpr int64_t kDefaultMaxIterations = 9;
constexpr int64_t kDefaultEta = 3;

struct Trial {
    std::size_t model = 0;  // index into the search's models (and the run's)
    int64_t trial_id = 0;
    // Where the trial starts in this call (a resumed rung: its checkpoint); the run holds them then.
    std::string state;
    int iterations = 0;
};

// A search being run by this call: what was decided or recorded, and where its trials start.
struct Search {
    int64_t run_id = 0;
    SearchSettings settings;
    std::unique_ptr<SearchProgress> progress;
    SearcherMetric searcher;
    RunTables tables;
    std::vector<ModelSpec> models;  // by mst_key
    std::map<int32_t, Trial> trials;
    double elapsed_before = 0;  // seconds spent by earlier calls
};

std::vector<std::vector<Metric>> metrics_of(const std::vector<ModelSpec>& models) {
    std::vector<std::vector<Metric>> out;
    for (const ModelSpec& m : models) out.push_back(m.config.compile.metrics);
    return out;
}

RunRequest tables_request(const SearchSettings& s) {
    RunRequest r;
    r.multiple = true;
    r.packed_text = s.packed;
    r.output_text = s.output;
    r.validation_text = s.validation;
    r.mst_table_text = s.mst_table;
    r.arch_table_text = s.arch_table;
    r.num_iterations = int(s.budget.max_iterations);
    r.metrics_frequency = s.metrics_frequency > 0 ? s.metrics_frequency : int(s.budget.max_iterations);
    r.exact_training_metrics = setting_training_metrics == kTrainingMetricsExact;
    r.name = s.name;
    r.description = s.description;
    return r;
}

// Limits every search checks before it trains: states that fit, memory for min(M, S) segments.
void check_limits(Search& s) {
    check_model_sizes(s.models, s.tables.info, s.tables.validation);
    const int M = int(s.models.size()), S = int(s.tables.info.dist_keys.size());
    check_run_memory(s.models, s.tables.info, s.tables.validation, std::min(M, S),
                     "an adaptive search of " + std::to_string(M) + " configurations on " + std::to_string(S) +
                         " segment" + (S == 1 ? "" : "s"));
}

// ---- a new search -----------------------------------------------------------------------------

std::vector<SelectionEntry> draw_configurations(Spi& spi, SearchSettings& s, AutomlBudget& budget) {
    SearchSpec spec;
    spec.model_ids = s.model_ids;
    spec.compile_space = s.compile_space;
    spec.fit_space = s.fit_space;
    spec.type = s.search_type;
    if (s.search_type == SearchType::Grid) {
        if (budget.method == AutomlMethod::Hyperband)
            fail(ErrorKind::InvalidParameter, "hyperband draws its configurations at random",
                 "Its brackets start different numbers of configurations from one search space.",
                 "Use search_type => 'random', or automl_method => 'successive_halving' to run every configuration "
                 "of a grid.");
        std::vector<SelectionEntry> grid = generate_model_configs(spec);
        if (budget.num_configs && *budget.num_configs != int64_t(grid.size()))
            fail(ErrorKind::InvalidParameter,
                 "num_configs is " + std::to_string(*budget.num_configs) + " but the grid has " +
                     std::to_string(grid.size()) + " configurations",
                 {}, "Leave num_configs out with search_type 'grid'.");
        budget.num_configs = int64_t(grid.size());
        return grid;
    }
    if (s.random_state) {
        spec.seed = uint64_t(*s.random_state);
    } else {
        s.random_state =
            spi.scalar_int("SELECT (pg_catalog.random() OPERATOR(pg_catalog.*) 9007199254740991)::pg_catalog.int8");
        spec.seed = uint64_t(*s.random_state);
        notice("random search with random_state " + std::to_string(*s.random_state),
               "Pass random_state => " + std::to_string(*s.random_state) + " to draw the same configurations again.");
    }
    spec.num_configs = plan_search(budget).num_trials();
    return generate_model_configs(spec);
}

// A search whose session was killed leaves its model selection table behind; the same call again
// said only "already exists ... Drop it first", when what the user wants is to continue that search
// (a hostile review). Only a search the caller may continue is named.
void refuse_interrupted_search_table(Spi& spi, const TableName& mst) {
    if (!table_exists(mst)) return;
    spi.execute(
        "SELECT run_id FROM hopper.run_records WHERE method OPERATOR(pg_catalog.=) 'fit_automl'"
        " AND state OPERATOR(pg_catalog.<>) 'COMPLETED' AND model_selection_table OPERATOR(pg_catalog.=) $1"
        " AND hopper.may_modify(owner) AND NOT hopper.run_is_live(run_id) ORDER BY run_id DESC LIMIT 1",
        {SqlParam::text(mst.display())});
    if (spi.rows() == 0) return;
    const std::string run = std::to_string(spi.integer(0, 0));
    fail(ErrorKind::DuplicateTable, "model selection table " + mst.display() + " already exists",
         "It is the model selection table of the adaptive search of run " + run + ", which did not finish.",
         "Continue that search with CALL hopper.fit_automl(run_id => " + run + "), or drop " + mst.display() + " and " +
             mst.with_suffix("_summary").display() + " to start a new one.");
}

Search start_search(Spi& spi, const SearchRequest& req) {
    Search s;
    SearchSettings& st = s.settings;
    auto required = [](const std::optional<std::string>& v, const char* name) -> const std::string& {
        if (!v) fail(ErrorKind::NullValue, std::string(name) + " must not be NULL");
        return *v;
    };
    st.packed = required(req.packed_text, "packed_table");
    st.output = required(req.output_text, "model_output_table");
    st.arch_table = required(req.arch_table_text, "model_arch_table");
    if (req.model_ids) st.model_ids = *req.model_ids;  // else every architecture of the table, below
    st.search_type = parse_search_type(req.search_type.value_or("random"));
    // Without a space, the learning rate of Adam is what a search most often has to find (the
    // compile parser's own default optimizer, SGD(lr=0.01), diverged on regression targets a user
    // sweep packed); for class labels, accuracy too (below, once the packed table is known).
    st.compile_space =
        req.compile_space.value_or(st.search_type == SearchType::Grid
                                       ? R"({"optimizer": ["adam"], "learning_rate": [0.0001, 0.001, 0.01, 0.1]})"
                                       : R"({"optimizer": ["adam"], "learning_rate": {"log_uniform": [0.0001, 0.1]}})");
    st.fit_space = req.fit_space.value_or("{}");
    st.validation = req.validation_text.value_or("");
    st.random_state = req.random_state;
    st.pack_brackets = req.pack_brackets.value_or(true);
    st.name = req.name.value_or("");
    st.description = req.description.value_or("");
    if (req.metrics_frequency && *req.metrics_frequency < 0)
        fail(ErrorKind::InvalidParameter, "metrics_compute_frequency must not be negative",
             "It is " + std::to_string(*req.metrics_frequency) + ".",
             "0 (the default) evaluates the trials at the end of every rung only.");
    st.metrics_frequency = int(std::min<int64_t>(req.metrics_frequency.value_or(0), kMaxSearchIterations));

    // The budget first: a bad one is refused before any table is touched.
    AutomlBudget& budget = st.budget;
    budget.method = parse_automl_method(req.method.value_or("hyperband"));
    budget.rule = parse_bracket_rule(req.bracket_rule.value_or("li"));
    budget.max_iterations = req.max_iterations.value_or(kDefaultMaxIterations);
    budget.eta = req.eta.value_or(kDefaultEta);
    budget.skip_last = req.skip_last.value_or(0);
    budget.num_brackets = req.num_brackets;
    budget.num_configs = req.num_configs;
    if (st.search_type == SearchType::Random || budget.num_configs) plan_search(budget);

    s.tables = resolve_run_tables(spi, tables_request(st));
    if (!req.compile_space) {
        // As fit's defaults: accuracy for class labels (without it the info table's metric columns
        // stayed empty and evaluate gave {}: a user sweep).
        if (s.tables.info.response_type == "classification")
            st.compile_space.insert(st.compile_space.size() - 1, R"(, "metrics": ["accuracy"])");
        notice("compile_params_grid defaults to " + st.compile_space,
               "Each architecture's loss follows its output layer: categorical cross-entropy after softmax, binary "
               "after sigmoid, mean squared error otherwise.");
    }
    st.packed = s.tables.packed.display();
    st.output = s.tables.output.display();
    if (s.tables.validation) st.validation = s.tables.validation->table.display();
    const TableName arch = resolve_input_table(st.arch_table, "model architecture table");
    st.arch_table = arch.display();
    // Its columns before any statement reads them: a packed table passed as the architecture table
    // failed with the internal statement's 42703 (a user sweep).
    require_column(arch, "model_id", "model architecture table");
    require_column(arch, "model_arch", "model architecture table");
    if (!req.model_ids) {
        spi.execute("SELECT model_id FROM " + arch.quoted() + " WHERE model_id IS NOT NULL ORDER BY 1");
        for (uint64_t r = 0; r < spi.rows(); ++r) st.model_ids.push_back(int32_t(spi.integer(r, 0)));
        if (st.model_ids.empty())
            fail(ErrorKind::InvalidParameter, "model architecture table " + arch.display() + " is empty",
                 "Without model_id_list every architecture of the table is searched.",
                 "Load architectures with hopper.load_model_arch.");
    }
    const std::string mst_text = req.mst_table_text.value_or(s.tables.output.with_suffix("_mst").display());
    refuse_interrupted_search_table(spi, output_table_name(mst_text, "model selection table"));
    const TableName mst = resolve_output_table(mst_text, "model selection table");
    require_absent(mst.with_suffix("_summary"), "model selection summary table");

    const std::map<int32_t, Architecture> archs = read_architectures(spi, arch, st.model_ids);
    const std::vector<SelectionEntry> rows = draw_configurations(spi, st, budget);
    const SearchPlan plan = plan_search(budget);
    check_against_architectures(rows, archs);
    SummaryFacts facts;
    facts.search_type = to_string(st.search_type);
    facts.compile_grid = st.compile_space;
    facts.fit_grid = st.fit_space;
    facts.random_state = st.search_type == SearchType::Random ? st.random_state : std::nullopt;
    write_selection(spi, mst, mst.with_suffix("_summary"), arch, rows, facts);
    st.mst_table = mst.display();
    std::string arch_display;
    s.models = read_model_selection(spi, st.mst_table, arch_display);

    s.searcher = resolve_searcher_metric(req.searcher_metric.value_or(""), s.tables.validation.has_value(),
                                         metrics_of(s.models));
    st.searcher_metric = s.searcher.name;
    // Also when the searcher metric is named: accuracy on the training rows rewarded an overfit
    // configuration (two trials tied at 1.0 on 93 rows, a user sweep) as silently as the loss would.
    if (!s.tables.validation)
        notice("trials are ranked by " + s.searcher.name + ", on the training rows",
               "Without validation_table the search keeps the configurations that fit the training rows best, not "
               "those that predict new rows best: pass validation_table (packed by preprocess_validation) to rank "
               "them on held-out rows.");
    check_limits(s);

    std::map<int32_t, int64_t> trial_ids;
    s.run_id = record_new_search(spi, st, plan, s.searcher, s.models, packed_data_facts(s.tables.info),
                                 s.tables.started_at, trial_ids);
    s.progress = std::make_unique<SearchProgress>(plan);
    for (std::size_t i = 0; i < s.models.size(); ++i)
        s.trials[s.models[i].mst_key] = Trial{i, trial_ids.at(s.models[i].mst_key), {}, 0};
    notice("adaptive search: training run " + std::to_string(s.run_id) + ", " + to_string(budget.method) + " with " +
               plan.describe() + ", " + std::to_string(plan.model_iterations()) + " model-iterations at most",
           "Follow it in hopper.search_brackets; CALL hopper.fit_automl(run_id => " + std::to_string(s.run_id) +
               ") continues it if it is interrupted.");
    return s;
}

// ---- a search continued -----------------------------------------------------------------------

Search resume_search(Spi& spi, const SearchRequest& req) {
    if (req.packed_text || req.output_text || req.arch_table_text || req.mst_table_text || req.validation_text ||
        req.model_ids || req.compile_space || req.fit_space || req.method || req.search_type || req.max_iterations ||
        req.eta || req.skip_last || req.num_brackets || req.num_configs || req.random_state || req.metrics_frequency ||
        req.searcher_metric || req.pack_brackets || req.name || req.description || req.bracket_rule)
        fail(ErrorKind::InvalidParameter, "a search continued by run_id takes no other arguments",
             "It continues with the tables, search space and budget it was started with.",
             "CALL hopper.fit_automl(run_id => " + std::to_string(*req.run_id) + ").");
    RecordedSearch rec = read_search(spi, *req.run_id);
    Search s;
    s.run_id = rec.run_id;
    s.settings = rec.settings;
    s.elapsed_before = rec.elapsed_seconds;
    const SearchPlan plan = plan_search(s.settings.budget);
    // The plan is a function of the budget; recorded rungs that differ mean the rows were edited.
    {
        std::vector<std::pair<int, int>> keys;
        std::vector<RungPlan> rungs;
        for (const BracketPlan& b : plan.brackets)
            for (std::size_t i = 0; i < b.rungs.size(); ++i) {
                keys.emplace_back(b.s, int(i));
                rungs.push_back(b.rungs[i]);
            }
        bool same = keys == rec.rung_keys && rungs.size() == rec.rung_plans.size();
        for (std::size_t i = 0; same && i < rungs.size(); ++i)
            same = rungs[i].iterations == rec.rung_plans[i].iterations &&
                   rungs[i].num_configs == rec.rung_plans[i].num_configs &&
                   rungs[i].num_promoted == rec.rung_plans[i].num_promoted;
        if (!same || int(rec.trial_ids.size()) != plan.num_trials())
            fail(ErrorKind::Data, "training run " + std::to_string(s.run_id) + " does not match its recorded budget",
                 "Its rows in hopper.search_rungs or hopper.trials were changed.");
    }
    s.tables = resolve_run_tables(spi, tables_request(s.settings));

    // The configurations as recorded with the trials (the model selection table may have changed).
    {
        SafeSearchPath path;
        path.enter();
        spi.execute(
            "SELECT mst_key, model_id, model_arch::pg_catalog.text, compile_params, fit_params"
            " FROM hopper.trials WHERE run_id = $1 ORDER BY mst_key",
            {SqlParam::int8(s.run_id)});
        for (uint64_t r = 0; r < spi.rows(); ++r) {
            ModelSpec m;
            m.mst_key = int32_t(spi.integer(r, 0));
            if (!spi.is_null(r, 1)) m.model_id = int32_t(spi.integer(r, 1));
            m.arch_json = spi.text(r, 2);
            m.compile_text = spi.text(r, 3);
            m.fit_text = spi.text(r, 4);
            s.models.push_back(std::move(m));
        }
        path.leave();
        for (ModelSpec& m : s.models)
            m.config =
                resolve_model_spec(m.arch_json, m.compile_text, m.fit_text, "mst_key " + std::to_string(m.mst_key));
    }
    s.searcher = resolve_searcher_metric(rec.searcher.name, s.tables.validation.has_value(), metrics_of(s.models));
    check_limits(s);

    // Replay the decisions.
    s.progress = std::make_unique<SearchProgress>(plan);
    std::map<int, int> bracket_index;
    for (std::size_t b = 0; b < plan.brackets.size(); ++b) bracket_index[plan.brackets[b].s] = int(b);
    std::map<std::pair<int, int>, const RecordedRung*> decided;
    for (const RecordedRung& d : rec.decisions) {
        auto b = bracket_index.find(d.bracket);
        if (b == bracket_index.end())
            fail(ErrorKind::Data,
                 "training run " + std::to_string(s.run_id) + " records a rung of a bracket it does not have");
        s.progress->record(RungRef{b->second, d.rung}, d.ranking, d.diverged);
        decided[{b->second, d.rung}] = &d;
    }
    for (std::size_t i = 0; i < s.models.size(); ++i)
        s.trials[s.models[i].mst_key] = Trial{i, rec.trial_ids.at(s.models[i].mst_key), {}, 0};

    // The rungs to train again start from the states at the end of the rung before (or fresh).
    std::map<int64_t, int> restart;
    for (int b = 0; b < int(plan.brackets.size()); ++b) {
        if (s.progress->bracket_finished(b)) continue;
        const RungRef r{b, s.progress->current_rung(b)};
        for (int32_t key : s.progress->members(r)) {
            Trial& t = s.trials.at(key);
            if (r.rung == 0) {
                t.state = initial_states({s.models[t.model]}).front();
                t.iterations = 0;
            } else {
                const RecordedRung& before = *decided.at({b, r.rung - 1});
                t.state = checkpoint_payload(spi, before.checkpoints.at(key));
                t.iterations = int(inspect_state(t.state).counters.iterations);
            }
            restart[t.trial_id] = t.iterations;
        }
    }
    reopen_search(spi, s.run_id, restart);
    notice("adaptive search: continuing training run " + std::to_string(s.run_id) + " after " +
           std::to_string(rec.decisions.size()) + " completed rung" + (rec.decisions.size() == 1 ? "" : "s"));
    return s;
}

// ---- training ---------------------------------------------------------------------------------

double searcher_value_of(const Search& s, const ModelSpec& m, const Evaluation& training,
                         const Evaluation* validation) {
    return searcher_metric_value(s.searcher.validation && validation ? *validation : training, m.config.compile.metrics,
                                 s.searcher.metric);
}

// The search as the strategy of a TrainingRun (run.h), which trains, stamps, warns, evaluates and
// commits. Its schedule: per ring iteration, every trial of the rungs in training that is short of
// its rung's budget, in one phased ring; a trial is evaluated at its rung's end (and at learning-
// curve points); a rung whose trials all reached its budget is ranked, checkpointed and recorded
// after the evaluation, and the search is done when every bracket is.
class AdaptiveSearch final : public TrainingStrategy {
public:
    AdaptiveSearch(Search& s, Engine& engine) : s_(s), engine_(engine) {}

    const char* method() const override { return "fit_automl"; }
    int64_t model_iterations(const RunPlan&) const override { return s_.progress->plan().model_iterations(); }
    bool finished(const TrainingRun&) const override { return s_.progress->finished(); }
    bool ends_when_all_diverged() const override { return false; }
    std::string iteration_label(const TrainingRun& run) const override {
        return "ring iteration " + std::to_string(run.iteration());
    }

    // Rungs that start are recorded (TRAINING) and their first rung's trials get fresh weights; the
    // ring is every member short of its rung's budget.
    std::vector<std::size_t> before_iteration(Spi& spi, TrainingRun& run) override {
        const SearchProgress& progress = *s_.progress;
        rungs_ = progress.training_rungs(s_.settings.pack_brackets);
        for (const RungRef& r : rungs_) {
            if (!started_rungs_.insert({r.bracket, r.rung}).second) continue;
            const std::vector<int32_t>& members = progress.members(r);
            std::map<int32_t, int64_t> ids;
            for (int32_t key : members) {
                const Trial& t = s_.trials.at(key);
                ids[key] = t.trial_id;
                if (run.state(t.model).empty() && r.rung == 0)
                    run.state(t.model) = initial_states({s_.models[t.model]}).front();
            }
            record_rung_start(spi, s_.run_id, progress.plan().brackets[r.bracket].s, r.rung, members, ids);
        }
        std::vector<std::size_t> ring;
        for (const RungRef& r : rungs_)
            for (int32_t key : progress.members(r)) {
                const std::size_t model = s_.trials.at(key).model;
                if (run.iterations(model) < progress.target_iterations(r)) ring.push_back(model);
            }
        return ring;
    }

    // A trial starts at segment phase(mst_key - 1, its iterations so far) and visits the segments in
    // order from there: it trains exactly as it would alone, whichever trials share the ring.
    IterationOutcome train_iteration(Spi& spi, const RunPlan& plan, Ring& ring) override {
        const int S = plan.num_segments;
        IterationOutcome out;
        double seconds = 0;
        if (!ring.models.empty()) {
            std::vector<int> phases;
            for (std::size_t k = 0; k < ring.models.size(); ++k)
                phases.push_back(HopSchedule::phase(ring.mst_keys[k] - 1, ring.iterations[k], S));
            const auto t0 = Clock::now();
            const HopSchedule sched = HopSchedule::for_phases(phases, S);
            std::unique_ptr<ModelHopper> hopper =
                engine_.model_hopper(spi, plan.tables->packed, plan.tables->info.dist_keys, int(ring.models.size()),
                                     plan.tables->output.schema);
            out = train_ring(*hopper, sched, 0, ring.mst_keys, ring.states, ring.evaluation);
            seconds = seconds_since(t0);
        }
        const std::size_t n = ring.models.size();
        out.note =
            std::to_string(n) + " trial" + (n == 1 ? "" : "s") + " trained in " + format_number(seconds, 3) + " s";
        return out;
    }

    bool evaluates(const TrainingRun& run, std::size_t model) const override {
        const SearchProgress& progress = *s_.progress;
        const int bracket = progress.plan().bracket_of(run.plan().mst_keys[model]);
        const int n = run.iterations(model);
        const bool rung_end = n >= progress.target_iterations(RungRef{bracket, progress.current_rung(bracket)});
        const bool curve_point = s_.settings.metrics_frequency > 0 && n % s_.settings.metrics_frequency == 0;
        return rung_end || curve_point;
    }

    // Records the trials evaluated; ranks, checkpoints and decides the rungs whose trials all
    // reached the budget. Returns the decisions for the NOTICE.
    std::string after_iteration(Spi& spi, TrainingRun& run, const IterationEvaluation& evaluation) override {
        std::map<int32_t, std::optional<double>> searcher_values;
        for (std::size_t k = 0; k < evaluation.models.size(); ++k) {
            const std::size_t i = evaluation.models[k];
            const ModelSpec& m = s_.models[i];
            const Evaluation* v = evaluation.validation.empty() ? nullptr : &evaluation.validation[k];
            const double value = searcher_value_of(s_, m, evaluation.training[k], v);
            std::optional<double> finite;
            // A trial that diverged has no searcher value: its running metrics may still be finite
            // (the minibatches before the NaN), but its weights are not a model to pick.
            if (std::isfinite(value) && !run.diverged(i)) {
                finite = value;
                if (!best_ || (s_.searcher.smaller_is_better ? value < best_->first : value > best_->first))
                    best_ = std::make_pair(value, m.mst_key);
            }
            searcher_values[m.mst_key] = finite;
            SafeSearchPath path;
            path.enter();
            record_trial_metrics(spi, s_.trials.at(m.mst_key).trial_id, run.iterations(i),
                                 int64_t(inspect_state(run.state(i)).counters.steps),
                                 evaluation_json(evaluation.training[k], m.config.compile.metrics),
                                 v ? std::optional<std::string>(evaluation_json(*v, m.config.compile.metrics))
                                   : std::nullopt,
                                 finite, evaluation.elapsed);
            path.leave();
        }
        if (best_) progress_best(best_->first, best_->second);

        SearchProgress& progress = *s_.progress;
        std::string decided;
        for (const RungRef& r : rungs_) {
            const std::vector<int32_t> members = progress.members(r);
            const int budget = progress.target_iterations(r);
            bool done = true;
            for (int32_t key : members) done = done && run.iterations(s_.trials.at(key).model) >= budget;
            if (!done) continue;
            std::vector<RungScore> scores;
            std::vector<RungMember> recorded;
            std::vector<int32_t> diverged;
            for (int32_t key : members) {
                const Trial& t = s_.trials.at(key);
                auto v = searcher_values.find(key);
                scores.push_back(
                    RungScore{key, v == searcher_values.end() ? std::nullopt : v->second, run.diverged(t.model)});
                recorded.push_back(
                    RungMember{key, t.trial_id, &run.state(t.model), run.iterations(t.model), scores.back().value});
                if (run.diverged(t.model)) diverged.push_back(key);
            }
            const BracketPlan& bracket = progress.plan().brackets[r.bracket];
            const RungRanking ranking =
                rank_rung(scores, bracket.rungs[r.rung].num_promoted, s_.searcher.smaller_is_better);
            const auto statuses = progress.record(r, ranking, diverged);
            std::vector<int> skipped;
            for (const RungRef& k : progress.skipped_rungs(r.bracket)) skipped.push_back(k.rung);
            record_rung_end(spi, s_.run_id, bracket.s, r.rung, budget, recorded, ranking, statuses,
                            s_.searcher.smaller_is_better, skipped);
            // Trials that stop free their states (their checkpoints hold them).
            for (const auto& [key, status] : statuses)
                if (status != TrialStatus::Training) std::string().swap(run.state(s_.trials.at(key).model));
            decided += "; bracket " + std::to_string(bracket.s) + " rung " + std::to_string(r.rung) + " done at " +
                       std::to_string(budget) + " iteration" + (budget == 1 ? "" : "s") + ", best mst_key " +
                       std::to_string(ranking.order.front()) + ", " + std::to_string(ranking.promoted.size()) +
                       " go on";
        }
        return decided;
    }

    DivergenceText divergence(int32_t mst_key, int iteration) const override {
        return {"trial mst_key " + std::to_string(mst_key) + " diverged in iteration " + std::to_string(iteration),
                "Its loss became NaN or infinite; it ranks last at the end of its rung.",
                "Narrow the learning rate range of the search space."};
    }

private:
    Search& s_;
    Engine& engine_;
    std::vector<RungRef> rungs_;                      // training in this ring iteration
    std::set<std::pair<int, int>> started_rungs_;     // (bracket index, rung) marked TRAINING by this call
    std::optional<std::pair<double, int32_t>> best_;  // best searcher value so far (this call), for run_progress
};

void finish_search(Spi& spi, Search& s, const TrainingRun& run) {
    std::vector<int64_t> trial_ids;
    std::map<int32_t, std::vector<Metric>> metrics;
    for (const ModelSpec& m : s.models) {
        trial_ids.push_back(s.trials.at(m.mst_key).trial_id);
        metrics[m.mst_key] = m.config.compile.metrics;
    }
    const auto best = record_search_end(spi, s.run_id, trial_ids);
    std::map<int32_t, std::string> finals = final_trial_states(spi, s.run_id);
    std::map<int32_t, ModelHistory> curves = trial_histories(spi, s.run_id, metrics, s.tables.validation.has_value());
    std::vector<std::string> states;
    std::vector<ModelHistory> history;
    for (const ModelSpec& m : s.models) {
        auto f = finals.find(m.mst_key);
        if (f == finals.end())
            fail(ErrorKind::Data, "trial mst_key " + std::to_string(m.mst_key) + " of training run " +
                                      std::to_string(s.run_id) + " has no checkpoint");
        states.push_back(std::move(f->second));
        history.push_back(std::move(curves[m.mst_key]));
    }
    // The states and curves of every call, as recorded (the run's own are this call's only); the
    // seconds and hops of this call (outputs(false) left them 0: a search of 3.5 s read 0 s).
    RunOutputs out = run.outputs(true);
    out.states = &states;
    out.history = &history;
    out.hop_log = nullptr;
    out.recorded_metrics_frequency = s.settings.metrics_frequency;
    write_run_outputs(spi, out);
    release_run_locks();
    if (best) {
        // The best checkpoint can be a trial's state of an earlier iteration than its last, which the
        // output table and search_trials show: said so (a user sweep registered "the best" and got
        // another model than the output table's).
        spi.execute(
            "SELECT c.iteration, (SELECT pg_catalog.max(x.iteration) FROM hopper.checkpoints_expanded x"
            " WHERE x.run_id OPERATOR(pg_catalog.=) c.run_id AND x.mst_key OPERATOR(pg_catalog.=) c.mst_key)"
            " FROM hopper.checkpoints_expanded c WHERE c.uuid OPERATOR(pg_catalog.=) $1::pg_catalog.uuid",
            {SqlParam::text(best->second)});
        const int64_t at = spi.rows() && !spi.is_null(0, 0) ? spi.integer(0, 0) : 0;
        const int64_t last = spi.rows() && !spi.is_null(0, 1) ? spi.integer(0, 1) : 0;
        notice("adaptive search done: best mst_key " + std::to_string(best->first) +
                   (at > 0 ? " at iteration " + std::to_string(at) : std::string()) + " (checkpoint " + best->second +
                   ")",
               (at > 0 && last > at ? "The output table holds mst_key " + std::to_string(best->first) +
                                          " as it was at its last iteration, " + std::to_string(last) +
                                          "; this checkpoint is its state at iteration " + std::to_string(at) +
                                          ", where it scored best. "
                                    : std::string()) +
                   "Every trial and its decisions: SELECT * FROM hopper.search_trials WHERE run_id = " +
                   std::to_string(s.run_id) + "; register the best with hopper.register_model_version(<model>, '" +
                   best->second + "').");
    } else notice("adaptive search done: no trial has a finite " + s.searcher.name);
}

}  // namespace

void run_adaptive_search(Spi& spi, const SearchRequest& req) {
    const auto started = Clock::now();
    refuse_on_worker_node(spi, "hopper.fit_automl");
    Search s = req.run_id ? resume_search(spi, req) : start_search(spi, req);
    if (spi.nonatomic()) {
        spi.commit();  // the search and its plan are recorded before anything trains
    } else {
        // Inside a transaction block or a function (MADlib's SELECT madlib.madlib_keras_automl):
        // one transaction, so nothing is recorded unless the whole search completes. Ring
        // iterations: R per bracket, fewer when the brackets share rings; a ring has at most
        // M + S - 1 hops.
        const SearchPlan& plan = s.progress->plan();
        const int S = int(s.tables.info.dist_keys.size());
        const int64_t rings =
            int64_t(plan.max_trial_iterations()) * (s.settings.pack_brackets ? 1 : int64_t(plan.brackets.size()));
        check_lock_budget(int64_t(plan.num_trials()) + S - 1, S, rings);
    }

    std::unique_ptr<Engine> engine = detect_engine(spi);
    const RunRequest request = tables_request(s.settings);
    const RunPlan plan = run_plan(request, s.tables, s.models, spi.nonatomic());
    RunContext context = run_context(plan, "fit_automl");
    context.run_id = s.run_id;
    AdaptiveSearch search(s, *engine);
    TrainingRun run(spi, search, plan, context, started);  // buffers detoasted once serve the whole search
    std::vector<std::string> states;
    std::vector<int> iterations;
    for (const ModelSpec& m : s.models) {
        Trial& t = s.trials.at(m.mst_key);
        states.push_back(std::move(t.state));
        iterations.push_back(t.iterations);
    }
    run.set_states(std::move(states), 0, std::move(iterations));
    run.set_elapsed_before(s.elapsed_before);
    run.train();
    finish_search(spi, s, run);
}

}  // namespace hopper::pg

// fit_automl(packed_table, model_output_table, model_arch_table, model_selection_table, model_id_list,
//            compile_params_grid, fit_params_grid, automl_method, max_iterations, eta, skip_last,
//            num_brackets, num_configs, search_type, random_state, validation_table,
//            metrics_compute_frequency, searcher_metric, pack_brackets, name, description, run_id,
//            bracket_rule)
HOPPER_FUNCTION(fit_automl) {
    using namespace hopper::pg;
    SearchRequest req;
    auto text = [&](int i) -> std::optional<std::string> {
        if (PG_NARGS() <= i || PG_ARGISNULL(i)) return std::nullopt;
        return text_to_string(PG_GETARG_DATUM(i));
    };
    auto json = [&](int i) -> std::optional<std::string> {
        if (PG_NARGS() <= i || PG_ARGISNULL(i)) return std::nullopt;
        return jsonb_to_string(PG_GETARG_DATUM(i));
    };
    req.packed_text = text(0);
    req.output_text = text(1);
    req.arch_table_text = text(2);
    req.mst_table_text = text(3);
    if (PG_NARGS() > 4 && !PG_ARGISNULL(4)) {
        std::vector<int32_t> ids;
        for (int64_t v : int_array_to_vector(PG_GETARG_DATUM(4), "model_id_list")) ids.push_back(int32_t(v));
        req.model_ids = ids;
    }
    req.compile_space = json(5);
    req.fit_space = json(6);
    req.method = text(7);
    req.max_iterations = arg_int_opt(fcinfo, 8);
    req.eta = arg_int_opt(fcinfo, 9);
    req.skip_last = arg_int_opt(fcinfo, 10);
    req.num_brackets = arg_int_opt(fcinfo, 11);
    req.num_configs = arg_int_opt(fcinfo, 12);
    req.search_type = text(13);
    req.random_state = arg_int_opt(fcinfo, 14);
    req.validation_text = text(15);
    req.metrics_frequency = arg_int_opt(fcinfo, 16);
    req.searcher_metric = text(17);
    if (PG_NARGS() > 18 && !PG_ARGISNULL(18)) req.pack_brackets = PG_GETARG_BOOL(18);
    req.name = text(19);
    req.description = text(20);
    req.run_id = arg_int_opt(fcinfo, 21);
    req.bracket_rule = text(22);
    Spi spi(call_is_nonatomic(fcinfo));
    run_adaptive_search(spi, req);
    PG_RETURN_VOID();
}
