// Training runs: hopper.fit and hopper.fit_multiple share one driver. fit is fit_multiple with a
// single configuration, so both train by the same model-hopping statements and write the same
// output tables.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hopper/config.h"
#include "pg/common/names.h"
#include "pg/training/preprocess.h"
#include "pg/common/spi.h"

namespace hopper::pg {

struct ModelSpec {
    int32_t mst_key = 1;
    std::optional<int32_t> model_id;
    std::string arch_json;     // as stored (native or Keras form)
    std::string compile_text;  // as given (JSON or MADlib form)
    std::string fit_text;
    ModelConfig config;
    std::string initial_state;  // transfer learning or warm start; empty: fresh weights
    std::string initial_source;  // where initial_state came from, for the summary
};

struct Evaluation {
    double count = 0, loss = 0;
    std::vector<double> metrics;  // in the order of the model's compile metrics
};

// What a run is, for observers (checkpoints, registry, logs).
struct RunContext {
    bool multiple = false;
    std::string method;  // "fit", "fit_multiple" or "fit_data_parallel" 
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
    // After the output tables are written, in the last transaction.
    virtual void on_finish(Spi& spi, const RunContext& run, const std::vector<std::string>& states) = 0;
};

struct RunRequest {
    bool multiple = false;  // fit_multiple (else fit)
    std::string packed_text, output_text, validation_text, mst_table_text, arch_table_text;
    std::vector<ModelSpec> models;
    int num_iterations = 1;
    int metrics_frequency = 1;  // evaluate every n iterations, and always at the last
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

// Tells the request's observers that iteration `iteration` (1-based) ended; `training` and
// `validation` are nullptr when it was not evaluated (validation also without a validation table).
void report_iteration(Spi& spi, const RunRequest& req, const RunContext& run, int iteration,
                      const std::vector<std::string>& states, const std::vector<Evaluation>* training,
                      const std::vector<Evaluation>* validation, const std::vector<std::string>& statuses);

// Adds one evaluation (at iteration `iteration`, `elapsed` seconds into the run) to a model's
// curves; `validation` is nullptr without a validation table.
void record_evaluation(ModelHistory& h, int iteration, double elapsed, const Evaluation& training,
                       const Evaluation* validation);

// ", training loss 0.41, accuracy 0.85, validation loss ..." for an iteration's NOTICE: the losses
// and the first metric of the model evaluated.
std::string progress_text(const ModelConfig& config, const Evaluation& training, const Evaluation* validation);

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t);
std::string format_number(double v, int precision = 4);

// One row of the _hops table (hopper.debug_hops).
struct HopLogRow {
    int iteration, hop;
    std::string statement;
    int32_t mst_key;
    std::optional<int32_t> dist_key;
    double seconds;
};

// Everything the output tables of a run are written from. Training drivers other than model
// hopping (e.g. data-parallel fit) fill it in to leave the same tables as fit.
struct RunOutputs {
    const RunRequest* req = nullptr;  // warm_start, table texts, iterations, name, description
    const char* method = "fit";       // the summary's method column
    TableName packed, output;
    const PackedInfo* info = nullptr;
    const std::optional<PackedInfo>* validation = nullptr;
    const std::vector<ModelSpec>* models = nullptr;  // sorted by mst_key
    const std::vector<int32_t>* mst_keys = nullptr;
    const std::vector<std::string>* states = nullptr;
    const std::vector<ModelHistory>* history = nullptr;
    int hops_per_iteration = 0;
    double train_seconds = 0, hop_seconds = 0, eval_seconds = 0;
    std::string started_at;
    const std::vector<HopLogRow>* hop_log = nullptr;  // the _hops table, when hopper.debug_hops is on
    int64_t run_id = 0;                               // recorded with the output tables (0: none)
    std::string replaced_token;                       // warm start: the token of the tables replaced
};

// Writes the output table, _info and _summary (and _hops) in the caller's transaction, recorded in
// hopper.output_tables; with warm start, replaces the previous run's (only tables hopper created
// with the token the run started from: resolve_run_tables checked them, and they are checked again).
void write_run_outputs(Spi& spi, const RunOutputs& outputs);

// Parses and validates a configuration given as text (architecture JSON, compile, fit), naming
// the model in errors.
ModelConfig resolve_model_spec(const std::string& arch_json, const std::string& compile_text,
                               const std::string& fit_text, const std::string& which);

// Runs the whole training. With a non-atomic Spi (CALL outside a transaction block) it commits
// after every iteration, so a long run never holds one transaction open; output tables appear
// only in the last transaction, complete.
void run_training(Spi& spi, RunRequest req);

// Loss and metrics of several model states on a packed table, in one parallel scan.
std::vector<Evaluation> evaluate_states(Spi& spi, const TableName& packed, const std::vector<std::string>& states,
                                        const std::vector<ModelConfig>& configs, int workers);

// What every training driver resolves first: the iteration settings checked, the packed table and
// its facts, the validation table (packed like it), and the output table -- new, or with warm start
// the previous run's, which hopper must have created -- with its _info, _summary and _hops names
// free (or, with warm start, taken by tables of the same output). Claims the output table for this
// session (run_lock.h): a second session training into it is refused at once.
struct RunTables {
    std::string started_at;  // timestamptz text
    TableName packed;
    PackedInfo info;
    std::optional<PackedInfo> validation;
    TableName output;
    std::string replaced_token;  // warm start: the token hopper gave the output tables it replaces
};
RunTables resolve_run_tables(Spi& spi, const RunRequest& req);

// Before a warm start replaces `output` and its _info, _summary and _hops: the token hopper gave them,
// or 55000 (the output is not hopper's) / 42P07 (a sibling table is not hopper's).
std::string replaceable_outputs(Spi& spi, const TableName& output);

// Refuses (53200, hopper.max_memory_mb) a run whose models would need more memory than the budget
// to train on up to `processes` segments at once and to evaluate; `what` describes the run.
void check_run_memory(const std::vector<ModelSpec>& models, const PackedInfo& info,
                      const std::optional<PackedInfo>& validation, int processes, const std::string& what);

// Refuses a model whose input and output widths do not fit a packed table (`what` names it).
void check_packed_matches(const ModelSpec& m, const PackedInfo& info, const char* what);

// The arguments fit and fit_data_parallel share: packed_table, model_output_table, model_arch,
// compile_params, fit_params, num_iterations, validation_table, metrics_compute_frequency,
// warm_start, name, description (arguments 0 to 10), as a request for one model (mst_key 1).
RunRequest single_model_request(FunctionCallInfo fcinfo);

// Whether a procedure call may commit (CALL outside an explicit transaction block).
bool call_is_nonatomic(FunctionCallInfo fcinfo);

}  // namespace hopper::pg
