// Evaluating models on packed buffers: what the hopper.evaluate_models aggregates do with each row
// (eval_agg.cpp), shared with the group of processes that trains an iteration's hops and evaluates
// its models as they finish (hop_workers.cpp), so that both ways add up the same sums.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "hopper/metrics.h"
#include "hopper/network.h"
#include "hopper/state_format.h"
#include "pg/common/pg_headers.h"

namespace hopper::pg {

struct EvaluatedModel {
    FrozenModel frozen;
    std::unique_ptr<Network> network;
};

// A model state's weights and network, for evaluation.
EvaluatedModel load_for_evaluation(std::string_view state);

// Totals ready to add a model's buffers to: no rows, one zero sum per compiled metric.
EvalTotals empty_totals(const EvaluatedModel& model);

// Adds one packed buffer (independent_var, dependent_var: float4[] values, possibly toasted) to
// each model's totals (same order); a buffer of no rows adds nothing.
void evaluate_buffer(Datum x, Datum y, const std::vector<EvaluatedModel>& models, std::vector<EvalTotals>& totals,
                     MatrixF& scratch);

}  // namespace hopper::pg
