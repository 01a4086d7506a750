// Optimizer updates over the flat parameter vector. Step-dependent scalars (decayed learning
// rate, Adam's bias corrections) are computed in double; the per-parameter work is float32.
#include "hopper/optimizer.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>

#include "hopper/error.h"

namespace hopper {

namespace {

// Updates run over fixed chunks of 16 floats counted from the start of the vector, the tail
// padded into a local chunk. Eigen would otherwise peel unaligned vectors by their address, and
// its vectorised sqrt (an approximation under AVX-512) differs from the scalar one, so the same
// state could round differently depending on where its buffers were allocated.
constexpr int kChunk = 16;
using Chunk = Eigen::Array<float, kChunk, 1>;
using ChunkMap = Eigen::Map<Chunk, Eigen::Unaligned>;
using ConstChunkMap = Eigen::Map<const Chunk, Eigen::Unaligned>;

// Calls update(p, g, s1, s2) on chunk maps; s1/s2 may be null (then they map a dummy chunk).
template <typename Update>
void for_each_chunk(std::size_t n, float* p, const float* g, float* s1, float* s2,
                    Update&& update) {
    Chunk dummy1 = Chunk::Zero(), dummy2 = Chunk::Zero();
    std::size_t i = 0;
    for (; i + kChunk <= n; i += kChunk) {
        update(ChunkMap(p + i), ConstChunkMap(g + i), ChunkMap(s1 ? s1 + i : dummy1.data()),
               ChunkMap(s2 ? s2 + i : dummy2.data()));
    }
    if (i == n) return;
    const std::size_t rest = n - i;
    Chunk tp = Chunk::Zero(), tg = Chunk::Zero(), t1 = Chunk::Zero(), t2 = Chunk::Zero();
    std::copy(p + i, p + n, tp.data());
    std::copy(g + i, g + n, tg.data());
    if (s1) std::copy(s1 + i, s1 + n, t1.data());
    if (s2) std::copy(s2 + i, s2 + n, t2.data());
    update(ChunkMap(tp.data()), ConstChunkMap(tg.data()), ChunkMap(t1.data()), ChunkMap(t2.data()));
    std::copy(tp.data(), tp.data() + rest, p + i);
    if (s1) std::copy(t1.data(), t1.data() + rest, s1 + i);
    if (s2) std::copy(t2.data(), t2.data() + rest, s2 + i);
}

}  // namespace

int Optimizer::slots_for(OptimizerKind kind) {
    switch (kind) {
        case OptimizerKind::SGD:
            return 0;
        case OptimizerKind::Momentum:
        case OptimizerKind::Nesterov:
        case OptimizerKind::RMSprop:
            return 1;
        case OptimizerKind::Adam:
            return 2;
    }
    fail(ErrorKind::Internal, "unknown optimizer kind");
}

Optimizer::Optimizer(const OptimizerConfig& config, std::size_t num_params)
    : config_(config),
      n_(num_params),
      slots_(std::size_t(slots_for(config.kind)) * num_params, 0.0f) {}

void Optimizer::apply(float* params, const float* grad, uint64_t t) {
    if (slots_.size() != std::size_t(num_slots()) * n_)
        fail(ErrorKind::Internal, "optimizer slots do not match the parameter count");
    const double lr_t = config_.learning_rate / (1.0 + config_.decay * double(t));
    const float lr = float(lr_t);
    float* s1 = slots_.empty() ? nullptr : slots_.data();
    float* s2 = num_slots() > 1 ? slots_.data() + n_ : nullptr;

    switch (config_.kind) {
        case OptimizerKind::SGD:
            for_each_chunk(n_, params, grad, s1, s2,
                           [&](ChunkMap p, ConstChunkMap g, ChunkMap, ChunkMap) { p -= lr * g; });
            break;
        case OptimizerKind::Momentum: {
            const float mu = float(config_.momentum);
            for_each_chunk(n_, params, grad, s1, s2,
                           [&](ChunkMap p, ConstChunkMap g, ChunkMap v, ChunkMap) {
                               v = mu * v - lr * g;
                               p += v;
                           });
            break;
        }
        case OptimizerKind::Nesterov: {
            const float mu = float(config_.momentum);
            for_each_chunk(n_, params, grad, s1, s2,
                           [&](ChunkMap p, ConstChunkMap g, ChunkMap v, ChunkMap) {
                               v = mu * v - lr * g;
                               p += mu * v - lr * g;
                           });
            break;
        }
        case OptimizerKind::Adam: {
            const double b1 = config_.beta1, b2 = config_.beta2;
            const double bc1 = 1.0 - std::pow(b1, double(t) + 1.0);
            const double bc2 = 1.0 - std::pow(b2, double(t) + 1.0);
            const float fb1 = float(b1), fb2 = float(b2);
            const float cb1 = float(1.0 - b1), cb2 = float(1.0 - b2);
            const float step = float(lr_t / bc1);    // lr_t * m / (1 - b1^(t+1))
            const float inv_bc2 = float(1.0 / bc2);  // v / (1 - b2^(t+1))
            const float eps = float(config_.epsilon);
            for_each_chunk(n_, params, grad, s1, s2,
                           [&](ChunkMap p, ConstChunkMap g, ChunkMap m, ChunkMap v) {
                               m = fb1 * m + cb1 * g;
                               v = fb2 * v + cb2 * g.square();
                               p -= step * m / ((v * inv_bc2).sqrt() + eps);
                           });
            break;
        }
        case OptimizerKind::RMSprop: {
            const float rho = float(config_.rho);
            const float one_minus_rho = float(1.0 - config_.rho);
            const float eps = float(config_.epsilon);
            for_each_chunk(n_, params, grad, s1, s2,
                           [&](ChunkMap p, ConstChunkMap g, ChunkMap v, ChunkMap) {
                               v = rho * v + one_minus_rho * g.square();
                               p -= lr * g / (v.sqrt() + eps);
                           });
            break;
        }
    }
}

}  // namespace hopper
