// What an adaptive search (hopper.fit_automl, training/adaptive_search.h) records in the registry
// (tables in sql/ext/45_automl.sql and 40_registry.sql): the run and its trials, the plan of
// brackets and rungs, learning curves, a checkpoint of every trial at the end of every rung it trains
// in, and every decision -- and, for a search called again with its run id, all of that read back.
// Every statement runs under SafeSearchPath; rows belong to the caller (row-level security).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hopper/adaptive_search.h"
#include "hopper/registry.h"
#include "hopper/search.h"
#include "pg/common/spi.h"
#include "pg/training/run.h"

namespace hopper::pg {

// A search's settings, as recorded in hopper.runs and hopper.searches.
struct SearchSettings {
    AutomlBudget budget;  // num_brackets / num_configs as requested (nullopt: the default)
    std::string packed, validation, output, mst_table, arch_table;  // qualified (validation may be empty)
    std::vector<int32_t> model_ids;
    std::string compile_space, fit_space;  // JSON text
    SearchType search_type = SearchType::Random;
    std::optional<int64_t> random_state;
    bool pack_brackets = true;
    int metrics_frequency = 0;    // 0: only at the end of every rung
    std::string searcher_metric;  // as resolved (e.g. "validation_accuracy")
    std::string name, description;
};

// Records a new search in the caller's transaction: the run (method fit_automl), the search and its
// plan (every rung; rung 0 with its trials), a task and a trial per configuration (pending, or training
// when its bracket starts at once); takes the run's lock. Returns the run id; trial ids by mst_key.
int64_t record_new_search(Spi& spi, const SearchSettings& s, const SearchPlan& plan, const SearcherMetric& searcher,
                          const std::vector<ModelSpec>& models, const std::string& data_facts,
                          const std::string& started_at, std::map<int32_t, int64_t>& trial_ids);

// One rung's recorded decision (trial_rungs), for replay.
struct RecordedRung {
    int bracket = 0;  // s
    int rung = 0;
    RungRanking ranking;
    std::vector<int32_t> diverged;
    std::map<int32_t, int64_t> checkpoints;  // mst_key -> checkpoint id of its state at the rung's end
};

struct RecordedSearch {
    int64_t run_id = 0;
    SearchSettings settings;
    SearcherMetric searcher;                     // name, direction (metric and data set filled by the caller)
    std::vector<RungPlan> rung_plans;            // as recorded, in (bracket descending, rung) order
    std::vector<std::pair<int, int>> rung_keys;  // (bracket, rung) of rung_plans
    std::map<int32_t, int64_t> trial_ids;        // by mst_key
    std::vector<RecordedRung> decisions;         // completed rungs, by bracket descending then rung
    double elapsed_seconds = 0;                  // of the calls before (latest trial_metrics)
};

// Reads a search to continue it: 42704 no such run, 22023 not a fit_automl run, 55000 completed,
// 55006 another session is running it, 42501 another role's.
RecordedSearch read_search(Spi& spi, int64_t run_id);
// Marks the run ACTIVE again for this session and takes its lock (55006 if another session took it
// meanwhile); forgets the learning-curve points of rungs that had not completed (they are trained
// again): those of each trial after `restart_iteration` (by trial id).
void reopen_search(Spi& spi, int64_t run_id, const std::map<int64_t, int>& restart_iteration);

// A rung starts: its trials are recorded (rung > 0) and marked training.
void record_rung_start(Spi& spi, int64_t run_id, int bracket, int rung, const std::vector<int32_t>& mst_keys,
                       const std::map<int32_t, int64_t>& trial_ids);

// A trial at the end of a rung: its state and searcher value.
struct RungMember {
    int32_t mst_key = 0;
    int64_t trial_id = 0;
    const std::string* state = nullptr;
    int iteration = 0;
    std::optional<double> searcher_value;
};
// Stores every member's checkpoint (with its training facts) and the rung's decision, updates the
// trials' statuses and marks the rung COMPLETED (and `skipped` rungs SKIPPED). Returns the checkpoint
// ids by mst_key.
std::map<int32_t, int64_t> record_rung_end(Spi& spi, int64_t run_id, int bracket, int rung, int budget,
                                           const std::vector<RungMember>& members, const RungRanking& ranking,
                                           const std::vector<std::pair<int32_t, TrialStatus>>& statuses,
                                           bool smaller_is_better, const std::vector<int>& skipped_rungs);

// The end: the best trial and checkpoint (best searcher value, ties to more iterations, then the
// smaller mst_key; none if no rung has a value), tasks and run COMPLETED. Returns (mst_key, uuid).
std::optional<std::pair<int32_t, std::string>> record_search_end(Spi& spi, int64_t run_id,
                                                                 const std::vector<int64_t>& trial_ids);

// Each trial's latest checkpointed state (its end in the search), by mst_key.
std::map<int32_t, std::string> final_trial_states(Spi& spi, int64_t run_id);
// The state of one checkpoint (a trial at the end of a rung), checked.
std::string checkpoint_payload(Spi& spi, int64_t checkpoint_id);
// The learning curve of every trial (from hopper.trial_metrics), by mst_key; `metrics` names each
// trial's compile metrics.
std::map<int32_t, ModelHistory> trial_histories(Spi& spi, int64_t run_id,
                                                const std::map<int32_t, std::vector<Metric>>& metrics, bool validation);

}  // namespace hopper::pg
