// Training runs. A TrainingRun owns one run's state and its loop -- per iteration: interrupts,
// progress, the iteration counters stamped into the states, the divergence warning, evaluation,
// observers (the registry), NOTICE and commit -- and a TrainingStrategy says what one iteration
// trains and on which schedule: model hopping (fit, fit_multiple; model_hopping.cpp), data-parallel
// model averaging (fit_data_parallel; data_parallel.cpp), or an adaptive search's phased rings with
// its rung ends as hooks (fit_automl; adaptive_search.cpp). run_training sets up and finishes a run
// of num_iterations (tables, limits, warm start, initial states, output tables). A new method is a
// strategy and a procedure that builds its request, never another loop.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hopper/config.h"
#include "hopper/metrics.h"
#include "hopper/registry.h"
#include "pg/common/names.h"
#include "pg/common/spi.h"
#include "pg/runtime/progress.h"
#include "pg/runtime/scoped_settings.h"
#include "pg/training/preprocess.h"

namespace hopper {
class HopSchedule;
}

namespace hopper::pg {

class ModelHopper;
class RunAreaScope;
class ReadAhead;
struct RunOutputs;

struct ModelSpec {
    int32_t mst_key = 1;
    std::optional<int32_t> model_id;
    std::string arch_json;     // as stored (native or Keras form)
    std::string compile_text;  // as given (JSON or MADlib form)
    std::string fit_text;
    ModelConfig config;
    std::string initial_state;   // transfer learning or warm start; empty: fresh weights
    std::string initial_source;  // where initial_state came from, for the summary
};

struct Evaluation {
    double count = 0, loss = 0;
    std::vector<double> metrics;  // in the order of the model's compile metrics
};
// The value of a searcher metric ("loss" or a metric name) in an evaluation (NaN if it has none).
double searcher_metric_value(const Evaluation& e, const std::vector<Metric>& names, const std::string& metric);

// What a run is, for observers (checkpoints, registry, logs).
struct RunContext {
    bool multiple = false;
    std::string method;  // "fit", "fit_multiple", "fit_data_parallel" or "fit_automl"
    TableName packed, output;
    std::optional<TableName> validation;
    const std::vector<ModelSpec>* models = nullptr;  // sorted by mst_key
    int num_iterations = 0;
    int num_segments = 0;
    std::string name, description;
    std::string started_at;  // timestamptz text of the run's start
    int64_t run_id = 0;      // set by the registry observer's on_start (0: not recorded)
};

struct IterationReport {
    int iteration = 0;  // 1-based
    bool last = false;
    const std::vector<std::string>* states = nullptr;  // by model index (same order as models)
    bool evaluated = false;
    const std::vector<Evaluation>* training = nullptr;    // when evaluated
    const std::vector<Evaluation>* validation = nullptr;  // when evaluated and a validation table is set
    const std::vector<std::string>* statuses = nullptr;   // "completed" or "diverged", by model index
};

// Hooks into a training run. Each is called inside the run's current transaction: what an observer
// writes commits with the iteration (procedure calls commit after every iteration) or rolls back
// with it.
class RunObserver {
public:
    virtual ~RunObserver() = default;
    // May fill in what it learns about the run (the registry sets run_id).
    virtual void on_start(Spi& spi, RunContext& run) = 0;
    virtual void on_iteration(Spi& spi, const RunContext& run, const IterationReport& report) = 0;
    // The metric that ranks the run's models, once on_start resolved it (the registry's); nullptr:
    // none.
    virtual const SearcherMetric* searcher() const { return nullptr; }
    // After the output tables are written, in the last transaction.
    virtual void on_finish(Spi& spi, const RunContext& run, const std::vector<std::string>& states) = 0;
};

struct RunRequest {
    bool multiple = false;  // several configurations (fit_multiple) rather than one
    std::string packed_text, output_text, validation_text, mst_table_text, arch_table_text;
    std::vector<ModelSpec> models;
    int num_iterations = 1;
    int metrics_frequency = 1;  // evaluate every n iterations, and always at the last
    // Training metrics from a second pass over the training table (hopper.training_metrics =
    // exact) rather than from the minibatches the iteration trained (running, the default).
    bool exact_training_metrics = false;
    bool warm_start = false;
    std::string name, description;
    std::vector<RunObserver*> observers;
};

// The learning curves of one model in a run (what its _info row holds).
struct ModelHistory {
    std::vector<int> iterations;
    std::vector<double> elapsed;
    std::vector<double> training_loss, validation_loss;
    std::vector<std::vector<double>> training_metrics, validation_metrics;  // [metric][evaluation]
    std::string status = "completed";
};

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t);
std::string format_number(double v, int precision = 4);
// CPU time of this process so far (all its threads).
double process_cpu_seconds();

// One row of the _hops table (hopper.debug_hops).
struct HopLogRow {
    int iteration, hop;
    std::string statement;
    int32_t mst_key;
    std::optional<int32_t> dist_key;
    double seconds;
};

// Parses and validates a configuration given as text (architecture JSON, compile, fit), naming
// the model in errors.
ModelConfig resolve_model_spec(const std::string& arch_json, const std::string& compile_text,
                               const std::string& fit_text, const std::string& which);

// What a run resolves first: the packed table and its facts, the validation table (packed like
// it), and the output table -- new, or with warm start the previous run's, which hopper must have
// created -- claimed for this session (run_lock.h).
struct RunTables {
    std::string started_at;  // timestamptz text
    TableName packed;
    PackedInfo info;
    std::optional<PackedInfo> validation;
    TableName output;
    std::string replaced_token;  // warm start: the token hopper gave the output tables it replaces
};

// The tables resolved, the output claimed (a second session training into it is refused at once)
// and, with warm start, checked to be replaceable. (Reads packed_text, validation_text,
// output_text and warm_start of the request.)
RunTables resolve_run_tables(Spi& spi, const RunRequest& req);
// Fills in what each architecture left to the packed table (resolve_inputs: input_dim, embeddings'
// columns); then each model fits the packed (and validation) table, and its state fits the limits:
// the setting, one PostgreSQL value, and all states together one value (hops and evaluation pass
// them as one array).
void check_model_sizes(std::vector<ModelSpec>& models, const PackedInfo& info, const std::optional<PackedInfo>& vinfo);
// Refuses (53200, hopper.max_memory_mb) a run whose models would need more memory than the budget
// to train on up to `processes` segments at once and to evaluate; `what` describes the run.
void check_run_memory(const std::vector<ModelSpec>& models, const PackedInfo& info,
                      const std::optional<PackedInfo>& validation, int processes, const std::string& what);
// Each segment's (dist_key's) number of packed buffers, for the progress of a run.
std::map<int32_t, int32_t> segment_buffers(Spi& spi, const TableName& packed);
// Initial states: warm start or transfer learning (architecture checked), else fresh weights.
std::vector<std::string> initial_states(const std::vector<ModelSpec>& models);

// Everything a strategy may look at: the resolved tables, the models (sorted by mst_key) and their
// configurations, and the call's settings.
struct RunPlan {
    const RunRequest* req = nullptr;
    const RunTables* tables = nullptr;
    const std::vector<ModelSpec>* models = nullptr;
    std::vector<int32_t> mst_keys;
    std::vector<ModelConfig> configs;
    int num_segments = 0;    // segments holding data
    bool nonatomic = false;  // the run commits after every iteration
};

// The plan of `models` (sorted by mst_key) on the resolved tables, and what observers are told of
// its run (run_id 0 until the registry records it). All three must outlive both.
RunPlan run_plan(const RunRequest& req, const RunTables& tables, const std::vector<ModelSpec>& models, bool nonatomic);
RunContext run_context(const RunPlan& plan, const char* method);

// A packed table the models due are evaluated on, and its segments (ascending dist_keys).
struct EvaluationTable {
    TableName table;
    std::vector<int32_t> dist_keys;
};

// The evaluation that follows an iteration, offered to its training: the group of processes that
// trains an iteration's hops evaluates each model due as soon as its last visit is done, while the
// others still train (hop_workers.h). What the training leaves undone, the run evaluates by
// statement after it.
struct RingEvaluation {
    std::vector<std::size_t> due;         // positions in the ring of the models evaluated after the iteration
    std::vector<EvaluationTable> tables;  // what the training may evaluate them on (none: the run does it all)
    // Filled by the training, per table: the evaluations of the models due (in `due`'s order), bit
    // for bit what evaluate_states gives; an empty vector: not done, the run evaluates on that table.
    std::vector<std::vector<Evaluation>> results;
};

// The models that train in one iteration, in ring order (a strategy's iteration trains these).
struct Ring {
    std::vector<std::size_t> models;   // indices into the run's models
    std::vector<int32_t> mst_keys;     // theirs
    std::vector<uint64_t> iterations;  // the iterations each state has been through (the schedule's clock)
    std::vector<std::string> states;   // in: their states; out: the trained states
    RingEvaluation evaluation;
};

// What one iteration of a strategy did, for the run's timings, NOTICE and _hops table.
struct IterationOutcome {
    // eval_seconds: what evaluating the models due (RingEvaluation) added after the last training
    // was done; evaluation that overlapped training counts as training time.
    double train_seconds = 0, hop_seconds = 0, eval_seconds = 0;
    // CPU seconds the backend spent evaluating inside the training (overlapped evaluation).
    double eval_cpu_seconds = 0;
    std::string note;             // after the iteration's time in its NOTICE (e.g. the combine); may be empty
    std::vector<HopLogRow> hops;  // filled when hopper.debug_hops is on
};

// The models evaluated after an iteration (those the strategy said were due), in ring order.
struct IterationEvaluation {
    std::vector<std::size_t> models;
    std::vector<Evaluation> training;    // by position in `models`
    std::vector<Evaluation> validation;  // likewise, when the run has a validation table
    double elapsed = 0;                  // seconds the run has taken so far (TrainingRun::elapsed)
};

// The text of the WARNING for a model that diverged.
struct DivergenceText {
    std::string message, detail, hint;
};

class TrainingRun;

// A training method: what one iteration trains and its schedule -- which models train in an
// iteration, when they are evaluated, when the run is done. The run (TrainingRun) owns the loop and
// everything an iteration shares whatever the method. The defaults are those of a run of
// num_iterations iterations that trains every model in each (fit, fit_multiple, fit_data_parallel).
class TrainingStrategy {
public:
    virtual ~TrainingStrategy() = default;
    virtual const char* method() const = 0;  // "fit", "fit_multiple", "fit_data_parallel", "fit_automl"
    // The summary's hops_per_iteration (0: it varies).
    virtual int hops_per_iteration(const RunPlan&) const { return 0; }
    // How many segments train a model at the same time (for the memory plan): by default each
    // segment trains one model at a time, min(M, S).
    virtual int training_processes(const RunPlan& plan) const;
    // Right after run_training resolved the tables: what the strategy reads and checks for itself
    // (refusals before any state is built).
    virtual void prepare(Spi&, const RunPlan&) {}
    // What the run trains in all, in model-iterations (hopper.run_progress).
    virtual int64_t model_iterations(const RunPlan& plan) const;

    // The schedule. Whether the run is done (checked before each iteration and after the last).
    virtual bool finished(const TrainingRun& run) const;
    // Whether the run ends once every model diverged (Keras' TerminateOnNaN). A search keeps its
    // own schedule: its rungs rank diverged trials last and skip what follows.
    virtual bool ends_when_all_diverged() const { return true; }
    // At the start of an iteration, in its transaction: the models that train in it (indices, in
    // ring order). By default all of them.
    virtual std::vector<std::size_t> before_iteration(Spi& spi, TrainingRun& run);
    // Trains one iteration of `ring` (its states in, the trained states out).
    virtual IterationOutcome train_iteration(Spi& spi, const RunPlan& plan, Ring& ring) = 0;
    // Whether a model that trained in this iteration is evaluated now. By default every
    // metrics_compute_frequency iterations and at the last.
    virtual bool evaluates(const TrainingRun& run, std::size_t model) const;
    // After the evaluation, before the NOTICE and the commit: what the strategy records or decides;
    // returns what the NOTICE adds. By default the best model's loss and first metric, when evaluated.
    virtual std::string after_iteration(Spi& spi, TrainingRun& run, const IterationEvaluation& evaluation);
    // The start of the iteration's NOTICE: "iteration n/N" by default.
    virtual std::string iteration_label(const TrainingRun& run) const;
    // `iteration`: TrainingRun::iterations of the model.
    virtual DivergenceText divergence(int32_t mst_key, int iteration) const = 0;
};

// One run of a strategy: its models' states and iteration counts, its learning curves and timings,
// its progress slot, shared memory area and statement settings -- and the loop. Each iteration (one
// transaction when the Spi is non-atomic) checks for interrupts, trains the strategy's ring, stamps
// each trained state with its iterations (so that a resumed run continues the schedule), warns of
// models that diverged, evaluates those due in one scan of the data, tells the run's observers,
// lets the strategy record and decide, prints the NOTICE and commits.
class TrainingRun {
public:
    // `plan` and `context` must outlive the run; `started`: when the call started.
    TrainingRun(Spi& spi, TrainingStrategy& strategy, const RunPlan& plan, const RunContext& context,
                Clock::time_point started);
    ~TrainingRun();
    TrainingRun(const TrainingRun&) = delete;
    TrainingRun& operator=(const TrainingRun&) = delete;

    // The models' states (by model index) and the iterations each has trained; a state is stamped
    // with `base` + its iterations. Empty states are the strategy's to fill before they train.
    void set_states(std::vector<std::string> states, uint32_t base, std::vector<int> iterations);
    // Seconds spent on the run by earlier calls (a resumed search), counted in elapsed().
    void set_elapsed_before(double seconds) { elapsed_before_ = seconds; }
    // Runs iterations until the strategy's schedule is finished.
    void train();

    const RunPlan& plan() const { return plan_; }
    int iteration() const { return iteration_; }  // this call's iteration in progress (1-based; 0 before the first)
    std::size_t num_models() const { return states_.size(); }
    std::string& state(std::size_t model) { return states_[model]; }
    const std::vector<std::string>& states() const { return states_; }
    int iterations(std::size_t model) const { return iterations_[model]; }
    bool diverged(std::size_t model) const { return diverged_[model]; }
    double elapsed() const { return elapsed_before_ + seconds_since(started_); }
    // The output tables of the run as far as the run knows them (req, method, tables, models, run id;
    // with the states, curves, timings and hops of this call when `trained`).
    RunOutputs outputs(bool trained) const;

private:
    void iterate();
    void relock_read_tables();
    // The strategy finished, or every model diverged.
    bool ended() const;
    RingEvaluation evaluation_due(const Ring& ring) const;
    IterationEvaluation evaluate(const Ring& ring, const std::vector<Evaluation>& running);

    Spi& spi_;
    TrainingStrategy& strategy_;
    const RunPlan& plan_;
    const RunContext& context_;
    Clock::time_point started_;
    double elapsed_before_ = 0;
    std::vector<std::string> states_;
    uint32_t base_ = 0;
    std::vector<int> iterations_;
    std::vector<bool> diverged_;
    std::vector<ModelHistory> history_;
    std::vector<HopLogRow> hop_log_;
    double train_seconds_ = 0, hop_seconds_ = 0, eval_seconds_ = 0;
    int iteration_ = 0;
    RunProgress progress_;
    std::unique_ptr<RunAreaScope> area_;     // buffers detoasted and states trained in this run are shared through it
    std::unique_ptr<ReadAhead> read_ahead_;  // filling area_'s buffer cache ahead (stopped before area_ goes)
    // Whether the engine spreads the validation table over other nodes (evaluation_due), once.
    mutable std::optional<bool> validation_spread_;
    struct ReadTable {
        TableName name;
        Oid oid;
        std::string shape;  // relation_shape: kind, column names and types
        const char* what;
    };
    std::vector<ReadTable> read_tables_;  // the packed and validation tables, locked again every iteration
    StatementSettings settings_;
};

// Runs a whole training of num_iterations: resolves and checks the tables, models and limits,
// builds the initial states, tells the observers, trains (TrainingRun) and writes the output
// tables. With a non-atomic Spi (CALL outside a transaction block) it commits after every iteration,
// so a long run never holds one transaction open; output tables appear only in the last
// transaction, complete.
void run_training(Spi& spi, RunRequest req, TrainingStrategy& strategy);

// The strategies (model_hopping.cpp, data_parallel.cpp; fit_automl's is in procedures/adaptive_search.cpp).
std::unique_ptr<TrainingStrategy> model_hopping_strategy();
// Refuses (54000) a run that, inside one transaction, would hold more locks on working tables than
// half of PostgreSQL's lock table: iterations of hops_per_iteration training statements each.
void check_lock_budget(int64_t hops_per_iteration, int num_segments, int64_t num_iterations);
// One iteration of model hopping on a ring (model_hopping.cpp): places the models (states by
// mst_keys' order) as `sched` says for `iteration`, runs its hops and returns the trained states in
// `states`; evaluates the models `evaluation` names when it trains in one group of processes. The
// strategy's iteration, and an adaptive search's ring iteration (phased rings).
IterationOutcome train_ring(ModelHopper& hopper, const HopSchedule& sched, int iteration,
                            const std::vector<int32_t>& mst_keys, std::vector<std::string>& states,
                            RingEvaluation& evaluation);
struct DataParallelSettings {
    std::string topology_text, link_cost_text;
    std::optional<int> levels;
};
std::unique_ptr<TrainingStrategy> data_parallel_strategy(DataParallelSettings settings);

// The running training metrics of an iteration (TrainCounters::iteration_totals) as an Evaluation.
Evaluation running_evaluation(const EvalTotals& totals, const ModelConfig& config);
// Loss and metrics of several model states on a packed table, in one parallel scan.
std::vector<Evaluation> evaluate_states(Spi& spi, const TableName& packed, const std::vector<std::string>& states,
                                        const std::vector<ModelConfig>& configs, int workers);

// Whether a procedure call may commit (CALL outside an explicit transaction block).
bool call_is_nonatomic(FunctionCallInfo fcinfo);

}  // namespace hopper::pg
