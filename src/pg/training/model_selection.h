// Model selection tables (model_selection.cpp): what fit_multiple and fit_automl read and write
// beside the SQL functions that build them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hopper/config.h"
#include "hopper/search.h"
#include "pg/common/names.h"
#include "pg/common/spi.h"
#include "pg/training/run.h"

namespace hopper::pg {

// Architectures of `ids` from the architecture table, parsed; unknown, repeated or NULL ones refused.
std::map<int32_t, Architecture> read_architectures(Spi& spi, const TableName& arch, const std::vector<int32_t>& ids);

// What the summary of a model selection table says about how it was made.
struct SummaryFacts {
    std::string search_type;
    std::optional<std::string> compile_grid, fit_grid;
    std::optional<int64_t> random_state;
};
// Creates the model selection table (mst_key 1.. in the order of `rows`) and its summary, both
// recorded as hopper's.
void write_selection(Spi& spi, const TableName& mst, const TableName& summary, const TableName& arch,
                     const std::vector<SelectionEntry>& rows, const SummaryFacts& facts);

// Reads a model selection table and the architectures it refers to (transfer-learning weights
// included), every configuration parsed and checked. mst_text becomes the table's qualified name
// (what the summary records).
std::vector<ModelSpec> read_model_selection(Spi& spi, std::string& mst_text, std::string& arch_table_display);

}  // namespace hopper::pg
