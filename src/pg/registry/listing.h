// Listing functions of the registry (list_checkpoints, list_model_versions): the ORDER BY of a sort
// key, and copying a statement's rows into the function's result set.
#pragma once

#include <string>

#include "hopper/registry.h"
#include "pg/common/spi.h"

namespace hopper::pg {

// ORDER BY clause for a sort key over hopper.checkpoints_expanded-like columns (alias e); a metric
// name, if any, is bound as parameter $metric_param.
std::string order_clause(const SortKey& key, bool descending, int metric_param);
// Copies the current SPI result into a materialized SRF result (InitMaterializedSRF done; column
// types must match the function's declaration).
void put_result_rows(Spi& spi, FunctionCallInfo fcinfo);

}  // namespace hopper::pg
