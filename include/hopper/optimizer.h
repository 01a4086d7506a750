// Optimizers over a flat parameter vector. Update rules (t = steps done before this one, so the
// first update has t = 0; lr_t = learning_rate / (1 + decay * t)):
//   SGD:      p -= lr_t * g
//   Momentum: v = momentum * v - lr_t * g;  p += v                      (Keras SGD(momentum))
//   Nesterov: v = momentum * v - lr_t * g;  p += momentum * v - lr_t * g (Keras SGD(nesterov))
//   Adam:     m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;
//             p -= lr_t * (m / (1-b1^(t+1))) / (sqrt(v / (1-b2^(t+1))) + eps)
//   RMSprop:  v = rho v + (1-rho) g^2;  p -= lr_t * g / (sqrt(v) + eps)
//   Adagrad:  acc += g^2 (acc starts at initial_accumulator_value);  p -= lr_t * g / (sqrt(acc) + eps)
//   Adadelta: a = rho a + (1-rho) g^2;  d = sqrt(u + eps) / sqrt(a + eps) * g;  p -= lr_t * d;
//             u = rho u + (1-rho) d^2
//   Adamax:   m = b1 m + (1-b1) g;  u = max(b2 u, |g|);  p -= lr_t / (1-b1^(t+1)) * m / (u + eps)
//   Nadam:    Adam's moments with Keras' momentum schedule (optimizer.cpp); no learning-rate decay
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

    // Number of per-parameter slots: SGD 0, Momentum 1, Nesterov 1, Adam 2 (m then v), RMSprop 1,
    // Adagrad 1, Adadelta 2 (accumulated g^2 then accumulated update^2), Adamax 2 (m then u), Nadam 2.
    static int slots_for(OptimizerKind kind);
    // The slots of a fresh optimizer over `slot_size` trainable parameters: zeros, but Adagrad's
    // accumulator, which starts at initial_accumulator_value.
    static std::vector<float> initial_slots(const OptimizerConfig& config, std::size_t slot_size);
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
