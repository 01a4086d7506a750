// The hierarchical combine in PostgreSQL: reading a topology, and building and running the 2- or
// 3-level query over a source of rows (hopper.hierarchical_combine, data-parallel fit).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hopper/combine.h"
#include "pg/common/names.h"
#include "pg/common/spi.h"

namespace hopper::pg {

// Where the partial level reads its rows: `from_sql` is a FROM item aliased `t` (trusted SQL built
// by hopper: quoted names only), `dist_key_sql` the producing segment of a row, `args` the partial
// aggregate's arguments, `params` the statement parameters ($1, ...) they use.
struct CombineSource {
    CombineKind kind = CombineKind::VectorSum;
    std::string from_sql;
    std::string dist_key_sql = "t.dist_key";
    std::vector<std::string> args;
    std::vector<SqlParam> params;
    // The table whose segments produce the rows, when there is one, and its dist_key column: the
    // engine may keep the partial states beside its segments and place the segments on nodes
    // (Citus: intermediate level on the nodes; topology "group = node" when none is given).
    std::optional<TableName> table;
    std::string dist_key_column = "dist_key";
};

struct CombineSettings {
    Topology topology;
    std::string topology_name;  // for messages ("" when none)
    CombinePolicy policy;
    std::optional<int> levels;  // force 2 or 3 (check_combine_levels, when read); none: the insertion rule decides
};

struct CombineOutcome {
    CombineDecision decision;
    int levels = 2;              // what ran
    int producers = 0;           // segments that produced a state
    int64_t bytes_crossing = 0;  // measured: bytes of the states sent across group boundaries
    double partial_seconds = 0, combine_seconds = 0;
    std::string result;  // the final level's result: jsonb text, or a model state (model_average)
};

// Reads and validates a topology table (dist_key, node, node_group) and a link cost table
// (group_a, group_b, cost). Empty names: no table (an empty topology is one group; no costs).
Topology read_topology(Spi& spi, const std::string& topology_text, const std::string& link_cost_text,
                       std::string* topology_display = nullptr);

// Runs the partial level (per dist_key, into a temporary table), decides with the measured state
// size, then runs the 2- or 3-level combine. Drops its temporary table before returning.
CombineOutcome run_hierarchical_combine(Spi& spi, const CombineSource& source, const CombineSettings& settings);

// While set (by fit_data_parallel around its combine, which reports divergence itself), the
// model_average aggregates do not warn about copies they leave out.
extern bool quiet_model_average;
struct QuietModelAverage {
    QuietModelAverage() { quiet_model_average = true; }
    ~QuietModelAverage() { quiet_model_average = false; }
};

}  // namespace hopper::pg
