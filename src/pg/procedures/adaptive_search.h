// hopper.fit_automl: successive halving and Hyperband by model hopping. The decisions are the
// core's (hopper/adaptive_search.h); this orchestrates them over the engine: per ring iteration
// (one transaction), every trial of the rungs in training trains one iteration in one phased hop
// ring (HopSchedule::for_phases: a trial trains as it would alone), trials that reached their rung's
// budget are evaluated, ranked and checkpointed, and survivors go on from their state. Everything
// it decides is recorded (registry/search_records.h), so that calling it again with the run's id
// continues an interrupted search from its last completed rungs with the same decisions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hopper/adaptive_search.h"
#include "hopper/search.h"
#include "pg/common/spi.h"

namespace hopper::pg {

// The procedure's arguments; nullopt / empty: not given (a resumed search takes the run's).
struct SearchRequest {
    std::optional<std::string> packed_text, output_text, arch_table_text, mst_table_text, validation_text;
    std::optional<std::vector<int32_t>> model_ids;
    std::optional<std::string> compile_space, fit_space;  // JSON objects
    std::optional<std::string> method, search_type, bracket_rule;
    std::optional<int64_t> max_iterations, eta, skip_last, num_brackets, num_configs, random_state;
    std::optional<int64_t> metrics_frequency;
    std::optional<std::string> searcher_metric;
    std::optional<bool> pack_brackets;
    std::optional<std::string> name, description;
    std::optional<int64_t> run_id;  // continue this search
};

void run_adaptive_search(Spi& spi, const SearchRequest& req);

}  // namespace hopper::pg
