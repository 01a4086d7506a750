// Loss and metrics as sums over samples, so partial results from buffers, segments and parallel
// workers combine by addition.
#include "hopper/metrics.h"

#include <cmath>
#include <limits>
#include <vector>

#include "hopper/error.h"
#include "vocabulary.h"

namespace hopper {

namespace {

// Each batch's sums are rounded to a grid of 2^-20 before they are added up. Sums of grid values
// are exact in a double (while they stay below 2^33), so the total does not depend on the order in
// which parallel workers' partial sums are merged: evaluation repeats bit for bit. The rounding
// costs at most 2^-21 per batch, far below what a loss or metric is read to.
double on_sum_grid(double x, int exponent = 0) {
    if (!std::isfinite(x)) return x;
    return std::ldexp(std::nearbyint(std::ldexp(x, 20 - exponent)), exponent - 20);
}

}  // namespace

void EvalTotals::merge(const EvalTotals& other) {
    // Freshly constructed totals know nothing of the metric list yet: either side may be empty.
    const bool this_empty = metric_sums.empty() && count == 0.0;
    const bool other_empty = other.metric_sums.empty() && other.count == 0.0;
    if (this_empty && !other.metric_sums.empty()) {
        metric_sums.assign(other.metric_sums.size(), 0.0);
    } else if (metric_sums.size() != other.metric_sums.size()) {
        if (other_empty) {
            loss_sum += other.loss_sum;
            return;
        }
        fail(ErrorKind::Internal, "cannot merge evaluation totals of different metric lists",
             "One side has " + std::to_string(metric_sums.size()) + " metrics, the other " +
                 std::to_string(other.metric_sums.size()) + ".");
    }
    loss_sum += other.loss_sum;
    count += other.count;
    for (std::size_t i = 0; i < metric_sums.size(); ++i) metric_sums[i] += other.metric_sums[i];
}

double EvalTotals::loss() const {
    if (count == 0.0) return std::numeric_limits<double>::quiet_NaN();
    return loss_sum / count;
}

double EvalTotals::metric(std::size_t i) const {
    if (i >= metric_sums.size()) fail(ErrorKind::Internal, "metric index out of range");
    if (count == 0.0) return std::numeric_limits<double>::quiet_NaN();
    return metric_sums[i] / count;
}

namespace {

// First index of the largest value (ties go to the lower index, NaN never wins).
template <typename Col>
Eigen::Index argmax(const Col& c) {
    Eigen::Index best = 0;
    for (Eigen::Index i = 1; i < c.size(); ++i)
        if (c(i) > c(best) || (std::isnan(c(best)) && !std::isnan(c(i)))) best = i;
    return best;
}

// A row whose outputs are not all finite has no prediction: it never counts as a hit (an argmax
// over NaNs, or NaN >= 0.5, would otherwise make up a class).
bool scored(const ConstMatrixMap& p, Eigen::Index j) { return p.col(j).allFinite(); }

double accuracy_sum(const ConstMatrixMap& p, const ConstMatrixMap& y, double, const CompileParams&) {
    double sum = 0.0;
    for (Eigen::Index j = 0; j < p.cols(); ++j) {
        if (!scored(p, j)) continue;
        if (p.rows() == 1) sum += ((p(0, j) >= 0.5f) == (y(0, j) >= 0.5f)) ? 1.0 : 0.0;
        else sum += argmax(p.col(j)) == argmax(y.col(j)) ? 1.0 : 0.0;
    }
    return sum;
}

// The true class ranks among the k most probable. As in Keras (in_top_k) and MADlib, any k is accepted:
// with k at or above the number of output units every row counts, and the metric is 1.
double top_k_accuracy_sum(const ConstMatrixMap& p, const ConstMatrixMap& y, double, const CompileParams& c) {
    double sum = 0.0;
    for (Eigen::Index j = 0; j < p.cols(); ++j) {
        if (!scored(p, j)) continue;
        const Eigen::Index t = argmax(y.col(j));
        const float pc = p(t, j);
        // Rank of the true class; an equal value at a lower index ranks above it.
        Eigen::Index rank = 0;
        for (Eigen::Index i = 0; i < p.rows(); ++i)
            if (p(i, j) > pc || (p(i, j) == pc && i < t)) ++rank;
        if (rank < c.top_k) sum += 1.0;
    }
    return sum;
}

double squared_error_metric(const ConstMatrixMap& p, const ConstMatrixMap& y, double, const CompileParams&) {
    return vocab::squared_error_sum(p, y);
}

double absolute_error_sum(const ConstMatrixMap& p, const ConstMatrixMap& y, double, const CompileParams&) {
    return vocab::sum_of_output_means(p, y, [](float pi, float yi) { return std::abs(double(pi) - double(yi)); });
}

double loss_sum(const ConstMatrixMap&, const ConstMatrixMap&, double loss, const CompileParams&) { return loss; }

// A regression output (linear, relu, tanh) has no classes; "accuracy" would threshold or argmax
// arbitrary values.
void accuracy_check(const CompileParams& c, const vocab::OutputLayer& out) {
    if (c.loss == Loss::MeanSquaredError && out.activation != Activation::Softmax &&
        out.activation != Activation::Sigmoid)
        fail(ErrorKind::InvalidParameter,
             "metric accuracy is meaningless for an output layer without softmax or sigmoid",
             "The output layer (" + out.label + ") uses " + to_string(out.activation) +
                 " and the loss is mean_squared_error: the model predicts values, not classes.",
             "For classes, end with \"activation\": \"softmax\" (or sigmoid); for values, use the metrics mse or "
             "mae.");
}

}  // namespace

namespace vocab {

const std::vector<MetricSpec>& metrics() {
    static const std::vector<MetricSpec> specs = {
        {Metric::Accuracy,
         "accuracy",
         {"accuracy", "acc", "categorical_accuracy", "binary_accuracy"},
         "accuracy (acc, categorical_accuracy, binary_accuracy)",
         accuracy_check,
         accuracy_sum},
        {Metric::TopKAccuracy,
         "top_k_accuracy",
         {"top_k_categorical_accuracy", "top_k_accuracy"},
         "top_k_accuracy (top_k_categorical_accuracy)",
         nullptr,
         top_k_accuracy_sum},
        {Metric::MeanSquaredError,
         "mean_squared_error",
         {"mean_squared_error", "mse"},
         "mean_squared_error (mse)",
         nullptr,
         squared_error_metric,
         2},
        {Metric::MeanAbsoluteError,
         "mean_absolute_error",
         {"mean_absolute_error", "mae"},
         "mean_absolute_error (mae)",
         nullptr,
         absolute_error_sum,
         1},
        {Metric::Loss, "loss", {"loss"}, "loss", nullptr, loss_sum, 0, true},
    };
    return specs;
}

const std::vector<RefusedName>& refused_metrics() {
    static const std::vector<RefusedName> names = {
        {"sparse_categorical_accuracy",
         "hopper's preprocessing one-hot encodes class labels, so the labels are not sparse.", nullptr},
        {"sparse_top_k_categorical_accuracy",
         "hopper's preprocessing one-hot encodes class labels, so the labels are not sparse.", nullptr},
    };
    return names;
}

const MetricSpec* metric(Metric kind) {
    for (const MetricSpec& s : metrics())
        if (s.kind == kind) return &s;
    return nullptr;
}

}  // namespace vocab

int target_units_exponent(const Architecture& arch) {
    if (arch.target_scaling.identity()) return 0;
    return std::ilogb(arch.target_scaling.scale);
}

void add_batch_totals(const ConstMatrixMap& p, const ConstMatrixMap& y, double loss, const CompileParams& compile,
                      EvalTotals& totals, int units_exponent) {
    const std::size_t nm = compile.metrics.size();
    if (totals.metric_sums.empty() && totals.count == 0.0) totals.metric_sums.assign(nm, 0.0);
    if (totals.metric_sums.size() != nm) fail(ErrorKind::Internal, "evaluation totals do not match the metric list");
    const Eigen::Index n = p.cols();
    if (n == 0) return;
    if (y.cols() != n || y.rows() != p.rows()) fail(ErrorKind::Internal, "target shape does not match the outputs");
    const vocab::LossSpec* loss_spec = vocab::loss(compile.loss);
    const int loss_power = loss_spec ? loss_spec->units_power : 0;
    totals.loss_sum += on_sum_grid(loss, loss_power * units_exponent);
    totals.count += double(n);
    for (std::size_t m = 0; m < nm; ++m) {
        const vocab::MetricSpec* spec = vocab::metric(compile.metrics[m]);
        if (!spec) fail(ErrorKind::Internal, "unknown metric");
        totals.metric_sums[m] += on_sum_grid(spec->sum(p, y, loss, compile),
                                             (spec->in_loss_units ? loss_power : spec->units_power) * units_exponent);
    }
}

void evaluate_batch(const Network& net, const float* params, const ConstMatrixMap& x, const ConstMatrixMap& y,
                    const CompileParams& compile, EvalTotals& totals, MatrixF& scratch) {
    if (x.cols() == 0) {
        if (totals.metric_sums.empty() && totals.count == 0.0) totals.metric_sums.assign(compile.metrics.size(), 0.0);
        return;
    }
    if (y.cols() != x.cols() || y.rows() != net.arch().output_dim())
        fail(ErrorKind::Internal, "target shape does not match the network");
    net.predict(params, x, scratch);
    const ConstMatrixMap p(scratch.data(), scratch.rows(), scratch.cols());
    add_batch_totals(p, y, compile.loss_weight * loss_sum(compile.loss, scratch, y), compile, totals,
                     target_units_exponent(net.arch()));
}

}  // namespace hopper
