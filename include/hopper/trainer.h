// The training state of one model: configuration, parameters, optimizer slots and counters.
// This whole object is what hops between segments, so Adam keeps its moments across segments.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "hopper/config.h"
#include "hopper/metrics.h"
#include "hopper/network.h"
#include "hopper/optimizer.h"

namespace hopper {

struct TrainCounters {
    uint64_t steps = 0;         // optimizer updates done
    uint64_t samples_seen = 0;  // rows trained on
    uint64_t visits = 0;        // segment visits (calls of finish_visit)
    // Training iterations (passes of the run over all segments) completed, set by the drivers. A
    // run that continues this state continues model hopping's schedule from here, so that a
    // resumed run trains exactly as one that never stopped.
    uint32_t iterations = 0;
    bool diverged = false;  // a non-finite loss or parameter was seen; training stopped
    // Loss of the last visit, averaged over its rows, measured before each update.
    double last_visit_loss_sum = 0.0;
    uint64_t last_visit_samples = 0;
    // Loss and compile metrics of every minibatch trained since the driver last cleared them (it
    // does at the end of each training iteration), each measured on the minibatch's forward pass
    // before its update: the running training metrics Keras reports, free of a second pass.
    EvalTotals iteration_totals;
};

class Trainer {
public:
    // Fresh model: parameters initialised with config.fit.seed.
    explicit Trainer(ModelConfig config);
    // Restored model; sizes must match the configuration (checked, Data error otherwise).
    Trainer(ModelConfig config, std::vector<float> params, std::vector<float> slots, TrainCounters counters);
    // The workspace refers to this object's network, so moves rebuild it (lazily) instead.
    Trainer(Trainer&& other) noexcept;
    Trainer& operator=(Trainer&& other) noexcept;

    const ModelConfig& config() const { return config_; }
    const Network& network() const { return net_; }
    std::vector<float>& params() { return params_; }
    const std::vector<float>& params() const { return params_; }
    Optimizer& optimizer() { return optimizer_; }
    const Optimizer& optimizer() const { return optimizer_; }
    TrainCounters& counters() { return counters_; }
    const TrainCounters& counters() const { return counters_; }

    // Trains on one packed buffer of `rows` samples: x is rows x input_dim row-major, y is
    // rows x output_dim row-major. Minibatches of fit.batch_size consecutive rows, one optimizer
    // step each. Once diverged, does nothing.
    void train_buffer(const float* x, const float* y, int rows);
    // Takes `steps` optimizer steps on one packed buffer, each on all its rows (fit.steps_per_epoch).
    // Once diverged, does nothing.
    void train_whole_buffer(const float* x, const float* y, int rows, int steps);
    // One pass over a segment's rows, given as its buffers in order (x rows x input_dim, y rows x
    // output_dim, row-major). With fit.shuffle, the minibatches are drawn from a permutation of all
    // the rows, seeded by fit.seed and the steps taken so far (so each pass draws another, the same
    // on every engine and after a resume); without, train_buffer on each buffer in turn.
    struct RowBlock {
        const float* x;
        const float* y;
        int rows;
    };
    // on_rows(n) after every n rows trained (progress); the pass checks for interrupts between
    // minibatches.
    void train_rows(const std::vector<RowBlock>& blocks, const std::function<void(int)>& on_rows = {});

    // Starts/ends one visit of a segment (resets/keeps the last-visit loss figures).
    void begin_visit();
    void finish_visit();

private:
    // One optimizer step on n rows; false when the model diverged (training stops).
    bool train_minibatch(const float* x, const float* y, int n);
    bool params_finite() const;
    void diverge();  // marks the model diverged, back to checkpoint_ if the parameters are not finite

    ModelConfig config_;
    Network net_;
    Optimizer optimizer_;
    std::vector<float> params_;
    std::vector<float> grad_;
    TrainCounters counters_;
    std::unique_ptr<GradientWorkspace> workspace_;  // created on first use
    std::vector<float> checkpoint_;                 // params at the start of train_buffer / train_rows
    std::vector<float> gathered_x_, gathered_y_;    // a shuffled minibatch's rows
    std::vector<float> weighted_y_;                 // a minibatch's targets times their class weights
};

}  // namespace hopper
