// Optimizer updates over the flat parameter vector. Step-dependent scalars (decayed learning
// rate, Adam's bias corrections) are computed in double; the per-parameter work is float32.
#include "hopper/optimizer.h"

#include <Eigen/Core>
#include <cmath>

#include "hopper/error.h"

namespace hopper {

namespace {
using ArrayMap = Eigen::Map<Eigen::ArrayXf, Eigen::Unaligned>;
using ConstArrayMap = Eigen::Map<const Eigen::ArrayXf, Eigen::Unaligned>;
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
    : config_(config), n_(num_params), slots_(std::size_t(slots_for(config.kind)) * num_params, 0.0f) {}

void Optimizer::apply(float* params, const float* grad, uint64_t t) {
    if (slots_.size() != std::size_t(num_slots()) * n_)
        fail(ErrorKind::Internal, "optimizer slots do not match the parameter count");
    const Eigen::Index n = Eigen::Index(n_);
    ArrayMap p(params, n);
    ConstArrayMap g(grad, n);
    const double lr_t = config_.learning_rate / (1.0 + config_.decay * double(t));
    const float lr = float(lr_t);

    switch (config_.kind) {
        case OptimizerKind::SGD:
            p -= lr * g;
            break;
        case OptimizerKind::Momentum: {
            ArrayMap v(slots_.data(), n);
            const float mu = float(config_.momentum);
            v = mu * v - lr * g;
            p += v;
            break;
        }
        case OptimizerKind::Nesterov: {
            ArrayMap v(slots_.data(), n);
            const float mu = float(config_.momentum);
            v = mu * v - lr * g;
            p += mu * v - lr * g;
            break;
        }
        case OptimizerKind::Adam: {
            ArrayMap m(slots_.data(), n);
            ArrayMap v(slots_.data() + n_, n);
            const double b1 = config_.beta1, b2 = config_.beta2;
            const double bc1 = 1.0 - std::pow(b1, double(t) + 1.0);
            const double bc2 = 1.0 - std::pow(b2, double(t) + 1.0);
            const float fb1 = float(b1), fb2 = float(b2);
            const float step = float(lr_t / bc1);        // lr_t * m / (1 - b1^(t+1))
            const float inv_bc2 = float(1.0 / bc2);       // v / (1 - b2^(t+1))
            const float eps = float(config_.epsilon);
            m = fb1 * m + float(1.0 - b1) * g;
            v = fb2 * v + float(1.0 - b2) * g.square();
            p -= step * m / ((v * inv_bc2).sqrt() + eps);
            break;
        }
        case OptimizerKind::RMSprop: {
            ArrayMap v(slots_.data(), n);
            const float rho = float(config_.rho);
            const float one_minus_rho = float(1.0 - config_.rho);
            const float eps = float(config_.epsilon);
            v = rho * v + one_minus_rho * g.square();
            p -= lr * g / (v.sqrt() + eps);
            break;
        }
    }
}

}  // namespace hopper
