// Loss and metrics over data, as mergeable sums: evaluating one buffer gives totals, totals from
// any number of buffers or segments merge by addition, and the final value is sum / count. That is
// what lets PostgreSQL combine partial states from parallel workers (and the hierarchical combine
// merge them per node group). Each batch's contribution is rounded to a 2^-20 grid, so the sums are
// exact and their merge order never changes a result.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hopper/config.h"
#include "hopper/network.h"

namespace hopper {

struct EvalTotals {
    double loss_sum = 0.0;
    double count = 0.0;               // samples
    std::vector<double> metric_sums;  // one per requested metric, same order

    void merge(const EvalTotals& other);  // sizes must match (or this one empty)
    double loss() const;                  // loss_sum / count (NaN if count == 0)
    double metric(std::size_t i) const;   // metric_sums[i] / count
};

// Per-sample definitions (the mean over samples is reported):
//   Accuracy: argmax(p) == argmax(y); with one output unit: (p >= 0.5) == (y >= 0.5)
//   TopKAccuracy: argmax(y) is among the k largest p (ties broken by lower index)
//   MeanSquaredError / MeanAbsoluteError: mean over outputs of (p-y)^2 / |p-y|
//   Loss: the compiled loss, same as loss_sum()
// Adds one batch to the totals: its summed loss and the metrics of its outputs p (output_dim x n,
// post-activation) against targets y. Training adds each minibatch this way, from the forward pass
// it makes anyway, before the update (the running training metrics Keras reports).
// `units_exponent`: of a standardized target's scale (target_units_exponent), so that sums in the
// target's own units round to a grid as fine relative to them as to a target of spread 1.
void add_batch_totals(const ConstMatrixMap& p, const ConstMatrixMap& y, double loss, const CompileParams& compile,
                      EvalTotals& totals, int units_exponent = 0);

// The binary exponent of a standardized target's scale (0 for none): a regression loss and mean
// squared error are rounded to a grid of 2^(2e - 20), a mean absolute error to 2^(e - 20). A fixed
// 2^-20 reported a target of 1e-6's losses and metrics as 0 (their sums were far below the grid, a
// sweep); the grid stays a power of two, so sums stay exact and merge order free.
int target_units_exponent(const Architecture& arch);

// Adds the totals of evaluating `params` on inputs x (input_dim x n) with targets y.
void evaluate_batch(const Network& net, const float* params, const ConstMatrixMap& x, const ConstMatrixMap& y,
                    const CompileParams& compile, EvalTotals& totals, MatrixF& scratch);

}  // namespace hopper
