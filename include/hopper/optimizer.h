// Optimizers over a flat parameter vector. Update rules (t = steps done before this one, so the
// first update has t = 0; lr_t = learning_rate / (1 + decay * t)):
//   SGD:      p -= lr_t * g
//   Momentum: v = momentum * v - lr_t * g;  p += v                      (Keras SGD(momentum))
//   Nesterov: v = momentum * v - lr_t * g;  p += momentum * v - lr_t * g (Keras SGD(nesterov))
//   Adam:     m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;
//             p -= lr_t * (m / (1-b1^(t+1))) / (sqrt(v / (1-b2^(t+1))) + eps)
//   RMSprop:  v = rho v + (1-rho) g^2;  p -= lr_t * g / (sqrt(v) + eps)
// Weight decay is not applied here: the trainer adds it to the gradient of weights only.
#pragma once

#include <cstdint>
#include <vector>

#include "hopper/config.h"

namespace hopper {

// A run of parameters that train, [begin, end) in the flat vector.
struct ParamRange {
    std::size_t begin, end;
    bool operator==(const ParamRange& o) const { return begin == o.begin && end == o.end; }
};

class Optimizer {
public:
    // Every parameter trains.
    Optimizer(const OptimizerConfig& config, std::size_t num_params);
    // Only the parameters in `trainable` (ascending, disjoint; Network::trainable_ranges) train:
    // the others (frozen layers) are never updated and have no slots. Each slot holds the
    // trainable parameters in order, so with one range [0, num_params) this is the constructor above.
    Optimizer(const OptimizerConfig& config, std::size_t num_params, std::vector<ParamRange> trainable);

    // Number of per-parameter slots: SGD 0, Momentum 1, Nesterov 1, Adam 2 (m then v), RMSprop 1.
    static int slots_for(OptimizerKind kind);
    int num_slots() const { return slots_for(config_.kind); }

    const OptimizerConfig& config() const { return config_; }
    // Floats of one slot: the trainable parameters.
    std::size_t slot_size() const { return slot_size_; }
    // num_slots * slot_size floats, slot by slot; restored exactly by the state format.
    std::vector<float>& slots() { return slots_; }
    const std::vector<float>& slots() const { return slots_; }

    // One update of the trainable params with gradient grad (num_params floats; the entries of
    // frozen parameters are not read), as step number `t` (see above).
    void apply(float* params, const float* grad, uint64_t t);

private:
    OptimizerConfig config_;
    std::size_t n_;
    std::vector<ParamRange> ranges_;
    std::size_t slot_size_ = 0;
    std::vector<float> slots_;
};

}  // namespace hopper
