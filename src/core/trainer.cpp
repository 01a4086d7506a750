// Minibatch training of one model over packed buffers.
#include "hopper/trainer.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "denormals.h"
#include "gemm.h"
#include "hopper/error.h"
#include "hopper/interrupt.h"
#include "hopper/packing.h"
#include "hopper/rng.h"

namespace hopper {

namespace {
// The gradient is used at a 64-byte aligned offset inside grad_ so that Eigen's loops round the
// same way wherever the vector was allocated (see GradientWorkspace).
constexpr std::size_t kGradPad = 64 / sizeof(float);
// The random stream of reshuffling, apart from dropout's (which mixes the seed with the step alone).
constexpr uint64_t kShuffleStream = 0x53485546464c45ULL;  // "SHUFFLE"
float* aligned64(float* p) {
    const auto addr = reinterpret_cast<std::uintptr_t>(p);
    return p + ((64 - addr % 64) % 64) / sizeof(float);
}
}  // namespace

Trainer::Trainer(ModelConfig config)
    : config_(std::move(config)),
      net_(config_.arch),
      optimizer_(config_.compile.optimizer, net_.num_params(), net_.trainable_ranges()),
      params_(net_.num_params()),
      grad_(net_.num_params() + kGradPad) {
    net_.initialize(params_.data(), config_.fit.seed);
}

Trainer::Trainer(ModelConfig config, std::vector<float> params, std::vector<float> slots, TrainCounters counters)
    : config_(std::move(config)),
      net_(config_.arch),
      optimizer_(config_.compile.optimizer, net_.num_params(), net_.trainable_ranges()),
      params_(std::move(params)),
      grad_(net_.num_params() + kGradPad),
      counters_(counters) {
    const std::size_t n = net_.num_params();
    const std::size_t want_slots = std::size_t(optimizer_.num_slots()) * optimizer_.slot_size();
    if (params_.size() != n || slots.size() != want_slots)
        fail(ErrorKind::Data, "model state does not match its architecture",
             "The architecture needs " + std::to_string(n) + " parameters and " + std::to_string(want_slots) +
                 " optimizer slot values; the state has " + std::to_string(params_.size()) + " and " +
                 std::to_string(slots.size()) + ".");
    optimizer_.slots() = std::move(slots);
}

Trainer::Trainer(Trainer&& other) noexcept
    : config_(std::move(other.config_)),
      net_(std::move(other.net_)),
      optimizer_(std::move(other.optimizer_)),
      params_(std::move(other.params_)),
      grad_(std::move(other.grad_)),
      counters_(other.counters_),
      checkpoint_(std::move(other.checkpoint_)) {
    other.workspace_.reset();
}

Trainer& Trainer::operator=(Trainer&& other) noexcept {
    if (this != &other) {
        config_ = std::move(other.config_);
        net_ = std::move(other.net_);
        optimizer_ = std::move(other.optimizer_);
        params_ = std::move(other.params_);
        grad_ = std::move(other.grad_);
        counters_ = other.counters_;
        checkpoint_ = std::move(other.checkpoint_);
        workspace_.reset();
        other.workspace_.reset();
    }
    return *this;
}

void Trainer::begin_visit() {
    counters_.last_visit_loss_sum = 0.0;
    counters_.last_visit_samples = 0;
}

void Trainer::finish_visit() { ++counters_.visits; }

bool Trainer::params_finite() const {
    // A vectorised check: a double sum, serial by its rounding rules, cost ~5% of an epoch of the
    // benchmark's MLP; it was finite exactly when every parameter is.
    return Eigen::Map<const VectorF>(params_.data(), Eigen::Index(params_.size())).allFinite();
}

void Trainer::diverge() {
    counters_.diverged = true;
    if (!params_finite()) params_ = checkpoint_;
}

bool Trainer::train_minibatch(const float* x, const float* y, int n) {
    const detail::BFloat16Products precision(config_.fit.precision == FitParams::Precision::BFloat16);
    const detail::FlushDenormals flush_denormals;
    const double weight_decay = config_.compile.optimizer.weight_decay;
    const auto& slices = net_.slices();
    float* params = params_.data();
    float* grad = aligned64(grad_.data());
    ConstMatrixMap xb(x, config_.arch.input_dim, n);
    const int out_dim = config_.arch.output_dim();
    if (!config_.fit.class_weight.empty()) {
        // class_weight: each row's one-hot target times its class's weight (resolve_config: with
        // categorical cross-entropy, that is the row's loss and gradient times it).
        const std::vector<float>& w = config_.fit.class_weight;
        weighted_y_.resize(std::size_t(out_dim) * std::size_t(n));
        for (int j = 0; j < n; ++j) {
            const float* row = y + std::size_t(j) * std::size_t(out_dim);
            const int c = int(std::max_element(row, row + out_dim) - row);
            float* out = weighted_y_.data() + std::size_t(j) * std::size_t(out_dim);
            for (int i = 0; i < out_dim; ++i) out[i] = row[i] * w[std::size_t(c)];
        }
        y = weighted_y_.data();
    }
    ConstMatrixMap yb(y, out_dim, n);
    const double batch_loss = workspace_->loss_and_gradient(params, xb, yb, config_.compile.loss, grad,
                                                            mix_seed(config_.fit.seed, counters_.steps),
                                                            &config_.compile, &counters_.iteration_totals);
    if (!std::isfinite(batch_loss)) {
        diverge();
        return false;
    }
    if (weight_decay != 0.0) {
        const float wd = float(weight_decay);
        // A plain loop: vectorised and scalar iterations compile to the same arithmetic. The
        // weights are the kernels of Dense and Conv2D layers (units*inputs is 0 for the others:
        // batch normalization's gamma and beta are not decayed, nor its moving statistics).
        // Frozen layers are not updated: their gradient stays 0.
        for (std::size_t l = 0; l < slices.size(); ++l) {
            if (!config_.arch.layers[l].trainable) continue;
            const LayerSlice& s = slices[l];
            float* g = grad + s.weight_offset;
            const float* w = params + s.weight_offset;
            const std::size_t count = std::size_t(s.units) * std::size_t(s.inputs);
            for (std::size_t i = 0; i < count; ++i) g[i] += wd * w[i];
        }
    }
    optimizer_.apply(params, grad, counters_.steps);
    workspace_->store_moving_statistics(params);
    ++counters_.steps;
    counters_.samples_seen += uint64_t(n);
    counters_.last_visit_loss_sum += batch_loss;
    counters_.last_visit_samples += uint64_t(n);
    return true;
}

void Trainer::train_buffer(const float* x, const float* y, int rows) {
    if (counters_.diverged || rows <= 0) return;
    if (!workspace_) workspace_ = std::make_unique<GradientWorkspace>(net_);
    const int in_dim = config_.arch.input_dim;
    const int out_dim = config_.arch.output_dim();
    const int batch = config_.fit.batch_size > 0 ? config_.fit.batch_size : rows;
    // Last known finite parameters, restored if an update makes them non-finite.
    checkpoint_.assign(params_.begin(), params_.end());
    for (int start = 0; start < rows; start += batch) {
        const int n = std::min(batch, rows - start);
        if (!train_minibatch(x + std::size_t(start) * in_dim, y + std::size_t(start) * out_dim, n)) return;
    }
    // A finite loss can still come with an overflowing update: one sum per buffer catches it.
    if (!params_finite()) diverge();
}

void Trainer::train_whole_buffer(const float* x, const float* y, int rows, int steps) {
    if (counters_.diverged || rows <= 0) return;
    if (!workspace_) workspace_ = std::make_unique<GradientWorkspace>(net_);
    checkpoint_.assign(params_.begin(), params_.end());
    for (int step = 0; step < steps; ++step) {
        check_interrupts();
        if (!train_minibatch(x, y, rows)) return;
    }
    if (!params_finite()) diverge();
}

// The rows of a reshuffled minibatch lie anywhere in the segment: the copy of row i first asks for
// the leading cache lines of row i + kGatherAhead, so that rows do not each start with a wait for
// memory. Fashion-MNIST, Adam, 5 epochs: CALL hopper.fit with its defaults and a validation table
// 1.606 -> 1.577 s (medians of 5, interleaved); the core alone 0.283 -> 0.276 CPU s an epoch.
// Each row's place is looked up once per minibatch (`from`), not again for its prefetch.
constexpr int kGatherAhead = 4;
constexpr int kGatherLines = 8;

void Trainer::train_rows(const std::vector<RowBlock>& blocks, const std::function<void(int)>& on_rows) {
    if (!config_.fit.shuffle) {
        for (const RowBlock& b : blocks) {
            check_interrupts();
            train_buffer(b.x, b.y, b.rows);
            if (on_rows) on_rows(b.rows);
        }
        return;
    }
    if (counters_.diverged) return;
    // Block b holds the rows first[b] .. first[b + 1] - 1 of the segment.
    std::vector<uint64_t> first(blocks.size() + 1, 0);
    for (std::size_t b = 0; b < blocks.size(); ++b) first[b + 1] = first[b] + uint64_t(std::max(0, blocks[b].rows));
    const uint64_t total = first.back();
    if (total == 0) return;
    if (!workspace_) workspace_ = std::make_unique<GradientWorkspace>(net_);
    const int in_dim = config_.arch.input_dim;
    const int out_dim = config_.arch.output_dim();
    const uint64_t batch = config_.fit.batch_size > 0 ? uint64_t(config_.fit.batch_size) : total;
    // The permutation depends on the seed and on the steps taken so far (the same for every engine,
    // for a resumed run and for one that never stopped), so every pass draws another one.
    const std::vector<uint64_t> order =
        shuffled_order(total, mix_seed(config_.fit.seed, counters_.steps, kShuffleStream));
    // Where row `row` of the segment lies: its features and its labels.
    const auto row_at = [&](uint64_t row) {
        const std::size_t b = std::size_t(std::upper_bound(first.begin(), first.end(), row) - first.begin()) - 1;
        const std::size_t r = std::size_t(row - first[b]);
        return std::pair<const float*, const float*>(blocks[b].x + r * std::size_t(in_dim),
                                                     blocks[b].y + r * std::size_t(out_dim));
    };
    constexpr int kFloatsPerLine = 64 / int(sizeof(float));
    const int prefetch_lines = std::min(kGatherLines, (in_dim + kFloatsPerLine - 1) / kFloatsPerLine);
    gathered_x_.resize(std::size_t(std::min(batch, total)) * std::size_t(in_dim));
    gathered_y_.resize(std::size_t(std::min(batch, total)) * std::size_t(out_dim));
    std::vector<std::pair<const float*, const float*>> from(std::size_t(std::min(batch, total)));
    checkpoint_.assign(params_.begin(), params_.end());
    for (uint64_t start = 0; start < total; start += batch) {
        const int n = int(std::min(batch, total - start));
        for (int i = 0; i < n; ++i) from[std::size_t(i)] = row_at(order[start + uint64_t(i)]);
        for (int i = 0; i < n; ++i) {
            if (i + kGatherAhead < n) {
                const float* ahead = from[std::size_t(i + kGatherAhead)].first;
                for (int line = 0; line < prefetch_lines; ++line) __builtin_prefetch(ahead + line * kFloatsPerLine);
            }
            const auto [x, y] = from[std::size_t(i)];
            std::copy_n(x, in_dim, gathered_x_.data() + std::size_t(i) * in_dim);
            std::copy_n(y, out_dim, gathered_y_.data() + std::size_t(i) * out_dim);
        }
        check_interrupts();
        if (!train_minibatch(gathered_x_.data(), gathered_y_.data(), n)) return;
        if (on_rows) on_rows(n);
    }
    if (!params_finite()) diverge();
}

}  // namespace hopper
