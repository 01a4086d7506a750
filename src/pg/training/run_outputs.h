// The output tables of a training run: the model table, _info (learning curves), _summary (the
// call, the data, timings) and _hops (hopper.debug_hops), written in the run's last transaction and
// recorded in hopper.output_tables. With warm start they replace the previous run's tables -- only
// those hopper created for that output (common/output_tables.h), checked when the run starts and
// again before they are dropped.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pg/common/names.h"
#include "pg/common/spi.h"
#include "pg/training/preprocess.h"
#include "pg/training/run.h"

namespace hopper::pg {

// Everything the output tables of a run are written from.
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
    // The summary's metrics_compute_frequency where it is not the request's: fit_automl's 0 (trials
    // evaluated at their rungs' ends only), which its request spells as every max_iterations.
    std::optional<int> recorded_metrics_frequency;
    std::string started_at;
    const std::vector<HopLogRow>* hop_log = nullptr;  // the _hops table, when hopper.debug_hops is on
    int64_t run_id = 0;                               // recorded with the output tables (0: none)
    std::string replaced_token;                       // warm start: the token of the tables replaced
};

// The tables a run writes beside its model output table: the name's suffix, their kind in
// hopper.output_tables, and what messages call them. One list for claiming them when the run starts,
// checking and replacing them at its end.
struct CompanionTable {
    const char* suffix;
    const char* kind;
    const char* what;
};
constexpr CompanionTable kCompanionTables[] = {{"_info", "model_info", "info table"},
                                               {"_summary", "model_summary", "summary table"},
                                               {"_hops", "model_hops", "hops table"}};

// Writes the output tables in the caller's transaction; with warm start, first drops the tables it
// replaces.
void write_run_outputs(Spi& spi, const RunOutputs& outputs);

// Before a warm start replaces `output` and its _info, _summary and _hops: the token hopper gave them,
// or 55000 (the output is not hopper's) / 42P07 (a sibling table is not hopper's).
std::string replaceable_outputs(Spi& spi, const TableName& output);

}  // namespace hopper::pg
