// The vocabularies of compile parameters -- optimizers, losses, metrics -- as tables: one entry per
// kind holds everything hopper knows of it (the names users write, its arguments, its checks, its
// arithmetic and its state), and the parsers, the canonical JSON, the trainer and the evaluation
// all read the tables instead of switching over the enums. The tables are in optimizer.cpp (with
// the optimizer arguments), loss.cpp and metrics.cpp. Not installed.
//
// Adding an optimizer, a loss or a metric: its enum value in hopper/config.h and one entry in its
// table (docs/DEVELOPING.md says how). Names stored in canonical JSON (`name`) must never change:
// model states keep them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hopper/config.h"
#include "hopper/network.h"

namespace hopper::vocab {

// --- optimizers -------------------------------------------------------------------------------

// An optimizer argument, as Keras names it.
struct OptimizerArg {
    enum class Range { Positive, Fraction, NonNegative, Flag };  // (0, inf), [0, 1), [0, inf), True/False
    enum class Where {
        Everywhere,     // in an optimizer string or object and as a compile parameter of its own
        OptimizerOnly,  // only in an optimizer string or object (Keras options hopper refuses when on)
        CompileOnly,    // only as a compile parameter of its own (weight_decay)
    };
    const char* name;   // canonical, as canonical JSON writes it
    const char* alias;  // another spelling ("lr"), or nullptr
    Range range;
    Where where;
    double OptimizerConfig::*field;  // where its value goes; nullptr for flags
};
// In the order messages list them.
const std::vector<OptimizerArg>& optimizer_args();
const OptimizerArg* optimizer_arg(const std::string& canonical);

// The arguments given to an optimizer, as its configure hook reads them. number() and flag()
// check the value (type and range) and refuse it naming the key as the user wrote it.
class GivenOptimizerArgs {
public:
    virtual ~GivenOptimizerArgs() = default;
    virtual bool has(const char* canonical) const = 0;
    virtual double number(const char* canonical) const = 0;
    virtual bool flag(const char* canonical) const = 0;
};

// One step of an update over n parameters: p -= f(g) with the optimizer's slots s1, s2 (null when
// it has fewer); lr_t is the decayed learning rate, t the steps done before this one.
struct UpdateStep {
    std::size_t n;
    float* p;
    const float* g;
    float* s1;
    float* s2;
    double lr_t;
    uint64_t t;
};

struct OptimizerSpec {
    OptimizerKind kind;
    const char* name;                  // canonical (canonical JSON, to_string); never change it
    std::vector<const char*> written;  // lowercase names that select it; empty: only configure reaches it
    const char* listed;                // in "Supported optimizers are: ...", or nullptr
    std::vector<const char*> args;     // the arguments it takes, in the order messages list them
    double default_learning_rate;      // Keras' default
    std::vector<const char*> params;   // its own hyperparameters: validated and serialized in order
    int slots;                         // per-parameter float slots of state (memory and model states)
    // After learning_rate, decay, epsilon and params are read: reads what is particular to it and
    // may choose another kind (SGD's momentum and nesterov); null when there is nothing.
    void (*configure)(const std::string& written_name, const GivenOptimizerArgs& given, OptimizerConfig& o);
    void (*update)(const OptimizerConfig& c, const UpdateStep& s);
    // The value every slot starts at (Adagrad's initial_accumulator_value), or null: 0.
    double OptimizerConfig::*slot_start = nullptr;
};
const std::vector<OptimizerSpec>& optimizers();
const OptimizerSpec* optimizer(OptimizerKind kind);  // null for a value outside the enum
const OptimizerSpec* optimizer_named(const std::string& lowercase_name);

// --- losses and metrics -----------------------------------------------------------------------

// A name hopper knows but refuses, with the reason.
struct RefusedName {
    const char* written;  // as compared (squashed for losses, lowercase for metrics)
    const char* detail;
    const char* hint;  // nullptr: the vocabulary's list of supported names
};

// The model's output layer, as resolve_config checks compile parameters against it.
struct OutputLayer {
    Activation activation;
    int units;
    std::string label;  // "layer 3"
};

struct LossSpec {
    Loss kind;
    const char* name;                      // canonical (canonical JSON, to_string); never change it
    std::vector<const char*> written;      // accepted names, squashed (lowercase, no underscores)
    const char* listed;                    // in "Supported losses are: ..."
    std::vector<Activation> inferred_for;  // output activations for which it is the default loss
    // Refuses an output layer it does not fit (resolve_config); null when every output fits.
    void (*check_output)(const OutputLayer& out);
    // Summed per-sample loss of outputs p against targets y (outputs x n).
    double (*sum)(const ConstMatrixMap& p, const ConstMatrixMap& y);
    // dL/dp of the batch's mean loss into g, where the output layer's activation gradient follows.
    void (*gradient)(const ConstMatrixMap& p, const ConstMatrixMap& y, float inv_n, MatrixMap& g);
    // The activation whose gradient fuses with this loss into dL/dz (overwriting p); see
    // fused_gradient. Linear: none.
    Activation fused_with;
    void (*fused_gradient)(MatrixMap& p, const ConstMatrixMap& y, float inv_n);
    // How its sums scale with a standardized target's units (metrics.h, target_units_exponent): 2 for
    // a squared error, 1 for an absolute one, 0 for a loss no regression target reaches.
    int units_power = 0;
};
// Optimizers of Keras that hopper knows but does not implement (lowercase), refused with 0A000.
const std::vector<RefusedName>& refused_optimizers();

const std::vector<LossSpec>& losses();
const std::vector<RefusedName>& refused_losses();
const LossSpec* loss(Loss kind);  // null for a value outside the enum

struct MetricSpec {
    Metric kind;
    const char* name;                  // canonical (canonical JSON, to_string); never change it
    std::vector<const char*> written;  // accepted names, lowercase
    const char* listed;                // in "Supported metrics are: ..."
    // Refuses compile parameters and an output layer it does not fit (resolve_config), or null.
    void (*check)(const CompileParams& c, const OutputLayer& out);
    // Sum over the batch's samples of the metric of outputs p against targets y; `loss` is the
    // batch's summed loss. A sample whose outputs are not all finite scores no hit.
    double (*sum)(const ConstMatrixMap& p, const ConstMatrixMap& y, double loss, const CompileParams& c);
    // As LossSpec's; in_loss_units: the compiled loss's (the loss metric).
    int units_power = 0;
    bool in_loss_units = false;
};
const std::vector<MetricSpec>& metrics();
const std::vector<RefusedName>& refused_metrics();
const MetricSpec* metric(Metric kind);  // null for a value outside the enum

// Sum over the samples (columns) of the mean over outputs of f(p, y), in double: the form of the
// binary cross-entropy, the mean squared error (loss and metric) and the mean absolute error.
template <typename F>
double sum_of_output_means(const ConstMatrixMap& p, const ConstMatrixMap& y, F f) {
    const Eigen::Index k = p.rows(), n = p.cols();
    double total = 0.0;
    for (Eigen::Index j = 0; j < n; ++j) {
        double col = 0.0;
        for (Eigen::Index i = 0; i < k; ++i) col += f(p(i, j), y(i, j));
        total += col / double(k);
    }
    return total;
}

// Per-sample mean squared error summed over the batch: the loss, and the metric of that name.
double squared_error_sum(const ConstMatrixMap& p, const ConstMatrixMap& y);

}  // namespace hopper::vocab
