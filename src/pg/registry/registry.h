// What training runs ask of the registry (tables in sql/ext/40_registry.sql): the observer that
// records a run and writes its checkpoints (run_observer.cpp), the registry arguments of the
// training procedures, and warm starts from checkpoints. The registry's own SQL functions are in
// checkpoint_fns.cpp (tasks, checkpoints) and model_fns.cpp (models, versions, aliases); the
// checkpoint storage they share is checkpoint_store.h.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hopper/run_settings.h"
#include "pg/common/spi.h"
#include "pg/training/preprocess.h"
#include "pg/training/run.h"

namespace hopper::pg {

// What fit and fit_multiple tell the registry about a run beyond the RunContext.
struct CheckpointOptions {
    int checkpoint_frequency = -1;  // < 0: as metrics_compute_frequency; 0: only at the end
    int metrics_frequency = 1;
    std::string searcher_metric;                        // empty: the loss
    std::string mst_table_text;                         // fit_multiple's model selection table
    std::map<int32_t, int64_t> warm_start_checkpoints;  // mst_key -> checkpoint_id it started from
};

// The registry's options of a run: its validated checkpoint and metrics frequencies, and the
// searcher_metric argument (NULL: the loss).
CheckpointOptions checkpoint_options(FunctionCallInfo fcinfo, const RunSettings& settings, int searcher_arg);
// Warm start from one checkpoint (fit), or from the latest checkpoint of each configuration of a
// run, matched by mst_key (fit_multiple; a configuration the run lacks starts fresh, with a notice).
// Refused together with warm_start (which continues from the model output table).
void warm_start_from_checkpoint(Spi& spi, const std::string& uuid, bool warm_start, ModelSpec& model,
                                CheckpointOptions& options);
void warm_start_from_run(Spi& spi, int64_t run_id, bool warm_start, std::vector<ModelSpec>& models,
                         CheckpointOptions& options);

// What the registry stores about training, shared by the run observer and adaptive searches:
// the facts of the packed data that predict needs (hopper.runs.data), an evaluation as a JSON object
// {"loss": ..., "<metric>": ...} (hopper.trial_metrics; non-finite values null). A searcher metric's
// value in an evaluation: searcher_metric_value (training/run.h).
std::string packed_data_facts(const PackedInfo& info);
std::string evaluation_json(const Evaluation& e, const std::vector<Metric>& names);
// One evaluation of a trial (hopper.trial_metrics). Call under SafeSearchPath.
void record_trial_metrics(Spi& spi, int64_t trial_id, int iteration, int64_t steps, const std::string& training_json,
                          const std::optional<std::string>& validation_json, std::optional<double> searcher_value,
                          double elapsed_seconds);
// A trial's state as a checkpoint with its training facts (hopper.checkpoint_training): the
// checkpoint id. Call under SafeSearchPath.
int64_t store_training_checkpoint(Spi& spi, int64_t trial_id, const std::string& state, int iteration,
                                  std::optional<double> searcher_value, bool smaller_is_better,
                                  const std::string& metadata);

// The observer that records a training run (hopper.run_records, trials, trial_metrics) and writes
// its checkpoints (every checkpoint_frequency iterations and at the last).
std::unique_ptr<RunObserver> make_registry_observer(CheckpointOptions options);

}  // namespace hopper::pg
