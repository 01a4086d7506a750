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
void add_batch_totals(const ConstMatrixMap& p, const ConstMatrixMap& y, double loss, const CompileParams& compile,
                      EvalTotals& totals);

// Adds the totals of evaluating `params` on inputs x (input_dim x n) with targets y.
void evaluate_batch(const Network& net, const float* params, const ConstMatrixMap& x, const ConstMatrixMap& y,
                    const CompileParams& compile, EvalTotals& totals, MatrixF& scratch);

}  // namespace hopper
