// Scoring one row with a loaded model: what hopper.model_forward and the by-name functions
// (hopper.predict_class, predict_proba, predict_value) share, so that they score bit for bit alike.
#pragma once

#include <memory>
#include <vector>

#include "hopper/error.h"
#include "hopper/network.h"
#include "hopper/packing.h"
#include "hopper/state_format.h"
#include "pg/common/pg_headers.h"

namespace hopper::pg {

// A deserialized model with its network and the buffers of one row.
struct RowScorer {
    FrozenModel model;
    std::unique_ptr<Network> network;
    MatrixF input, output;
    std::vector<float> input_row;  // the row's features as read, before scaling

    explicit RowScorer(FrozenModel m);
    // Bytes it holds (parameters and buffers), for cache budgets.
    std::size_t memory_bytes() const;
};

// Scores the numeric array `features` (scaled by `scaling`, which must be validated for the model's
// input width) into scorer.output. Refuses a wrong width (width_error, naming both widths), NULL
// elements and features that are not finite once scaled. False when the outputs are not finite (a model whose
// weights overflow): the callers answer NULL rather than a made-up class.
bool score_row(RowScorer& scorer, Datum features, const FeatureScaling& scaling, ErrorKind width_error);

// 0-based index of the largest of n values (the first on ties); -1 when n is 0 or a value is NaN.
int argmax_index(const float* values, int n);

}  // namespace hopper::pg
