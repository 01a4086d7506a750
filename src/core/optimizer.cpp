// The optimizer vocabulary (vocabulary.h): the table of optimizer arguments and the table of
// optimizers, one entry each with its names, arguments, state slots and update rule; and the
// Optimizer that applies them over the flat parameter vector. Step-dependent scalars (decayed
// learning rate, bias corrections, Nadam's momentum schedule) are computed in double; the per-parameter work is
// float32.
#include "hopper/optimizer.h"

#include <algorithm>
#include <cmath>

#include <Eigen/Core>

#include "hopper/error.h"
#include "vocabulary.h"

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
__attribute__((always_inline)) inline void for_each_chunk(std::size_t n, float* p, const float* g, float* s1, float* s2,
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

// The update rules (optimizer.h), each over chunks.
void sgd_update(const OptimizerConfig&, const vocab::UpdateStep& s) {
    const float lr = float(s.lr_t);
    for_each_chunk(s.n, s.p, s.g, s.s1, s.s2, [&](ChunkMap p, ConstChunkMap g, ChunkMap, ChunkMap) { p -= lr * g; });
}

void momentum_update(const OptimizerConfig& c, const vocab::UpdateStep& s) {
    const float lr = float(s.lr_t);
    const float mu = float(c.momentum);
    for_each_chunk(s.n, s.p, s.g, s.s1, s.s2, [&](ChunkMap p, ConstChunkMap g, ChunkMap v, ChunkMap) {
        v = mu * v - lr * g;
        p += v;
    });
}

void nesterov_update(const OptimizerConfig& c, const vocab::UpdateStep& s) {
    const float lr = float(s.lr_t);
    const float mu = float(c.momentum);
    for_each_chunk(s.n, s.p, s.g, s.s1, s.s2, [&](ChunkMap p, ConstChunkMap g, ChunkMap v, ChunkMap) {
        v = mu * v - lr * g;
        p += mu * v - lr * g;
    });
}

void adam_update(const OptimizerConfig& c, const vocab::UpdateStep& s) {
    const double b1 = c.beta1, b2 = c.beta2;
    const double bc1 = 1.0 - std::pow(b1, double(s.t) + 1.0);
    const double bc2 = 1.0 - std::pow(b2, double(s.t) + 1.0);
    const float fb1 = float(b1), fb2 = float(b2);
    const float cb1 = float(1.0 - b1), cb2 = float(1.0 - b2);
    const float step = float(s.lr_t / bc1);  // lr_t * m / (1 - b1^(t+1))
    const float inv_bc2 = float(1.0 / bc2);  // v / (1 - b2^(t+1))
    const float eps = float(c.epsilon);
    for_each_chunk(s.n, s.p, s.g, s.s1, s.s2, [&](ChunkMap p, ConstChunkMap g, ChunkMap m, ChunkMap v) {
        m = fb1 * m + cb1 * g;
        v = fb2 * v + cb2 * g.square();
        p -= step * m / ((v * inv_bc2).sqrt() + eps);
    });
}

void rmsprop_update(const OptimizerConfig& c, const vocab::UpdateStep& s) {
    const float lr = float(s.lr_t);
    const float rho = float(c.rho);
    const float one_minus_rho = float(1.0 - c.rho);
    const float eps = float(c.epsilon);
    for_each_chunk(s.n, s.p, s.g, s.s1, s.s2, [&](ChunkMap p, ConstChunkMap g, ChunkMap v, ChunkMap) {
        v = rho * v + one_minus_rho * g.square();
        p -= lr * g / (v.sqrt() + eps);
    });
}

// Adagrad, Adadelta, Adamax and Nadam follow tf.keras 2.x (OptimizerV2, tf.keras.optimizers.legacy
// from 2.11 on: the optimizers MADlib runs), with hopper's own arithmetic as for Adam: the moments
// written b m + (1-b) g, step-dependent scalars in double.
//   Adagrad:  acc (starts at initial_accumulator_value) += g^2;  p -= lr_t * g / (sqrt(acc) + eps)
void adagrad_update(const OptimizerConfig& c, const vocab::UpdateStep& s) {
    const float lr = float(s.lr_t);
    const float eps = float(c.epsilon);
    for_each_chunk(s.n, s.p, s.g, s.s1, s.s2, [&](ChunkMap p, ConstChunkMap g, ChunkMap acc, ChunkMap) {
        acc += g.square();
        p -= lr * g / (acc.sqrt() + eps);
    });
}

//   Adadelta: a = rho a + (1-rho) g^2;  d = sqrt(u + eps) / sqrt(a + eps) * g;  p -= lr_t * d;
//             u = rho u + (1-rho) d^2   (slots a then u; TensorFlow's ApplyAdadelta)
void adadelta_update(const OptimizerConfig& c, const vocab::UpdateStep& s) {
    const float lr = float(s.lr_t);
    const float rho = float(c.rho);
    const float one_minus_rho = float(1.0 - c.rho);
    const float eps = float(c.epsilon);
    for_each_chunk(s.n, s.p, s.g, s.s1, s.s2, [&](ChunkMap p, ConstChunkMap g, ChunkMap a, ChunkMap u) {
        a = rho * a + one_minus_rho * g.square();
        const Chunk d = (u + eps).sqrt() / (a + eps).sqrt() * g;
        p -= lr * d;
        u = rho * u + one_minus_rho * d.square();
    });
}

//   Adamax:   m = b1 m + (1-b1) g;  u = max(b2 u, |g|);  p -= lr_t / (1-b1^(t+1)) * m / (u + eps)
//             (slots m then u; TensorFlow's ApplyAdaMax)
void adamax_update(const OptimizerConfig& c, const vocab::UpdateStep& s) {
    const float fb1 = float(c.beta1), fb2 = float(c.beta2);
    const float cb1 = float(1.0 - c.beta1);
    const float step = float(s.lr_t / (1.0 - std::pow(c.beta1, double(s.t) + 1.0)));
    const float eps = float(c.epsilon);
    for_each_chunk(s.n, s.p, s.g, s.s1, s.s2, [&](ChunkMap p, ConstChunkMap g, ChunkMap m, ChunkMap u) {
        m = fb1 * m + cb1 * g;
        u = (fb2 * u).max(g.abs());
        p -= step * m / (u + eps);
    });
}

// Nadam's momentum schedule (Dozat; Keras' Nadam): mu_i = b1 (1 - 0.5 * 0.96^(schedule_decay * i))
// for the step i = 1, 2, ..., and the product of mu_1..mu_k. Keras keeps the product in a float32
// variable (momentum_cache) that it multiplies by each step's mu; hopper has no such state and
// recomputes it from the step count in double, always as the same sequence of products from mu_1
// (so its value does not depend on what was cached). The product shrinks at least as fast as
// b1^k: once it is below 2^-60 (1 minus it, or minus anything smaller, is 1 in double) it is 0.
double nadam_mu(const OptimizerConfig& c, double i) {
    return c.beta1 * (1.0 - 0.5 * std::pow(0.96, c.schedule_decay * i));
}

double nadam_schedule_product(const OptimizerConfig& c, uint64_t k) {
    // The last product computed on this thread, continued when the same schedule asks for a later step.
    thread_local struct {
        double beta1 = -1, decay = -1, prod = 1;
        uint64_t k = 0;
    } cache;
    if (cache.beta1 != c.beta1 || cache.decay != c.schedule_decay || cache.k > k) {
        cache.beta1 = c.beta1;
        cache.decay = c.schedule_decay;
        cache.prod = 1.0;
        cache.k = 0;
    }
    for (; cache.k < k && cache.prod != 0.0; ++cache.k) {
        cache.prod *= nadam_mu(c, double(cache.k + 1));
        if (cache.prod < 0x1p-60) cache.prod = 0.0;
    }
    return cache.prod;
}

//   Nadam:    with i = t+1, mu_i and mu_(i+1) as above, P = mu_1 ... mu_i, P' = P mu_(i+1):
//             m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;
//             mbar = (1-mu_i) g / (1-P) + mu_(i+1) m / (1-P');
//             p -= lr * mbar / (sqrt(v / (1-b2^i)) + eps)   (slots m then v)
//   Keras' Nadam takes no learning-rate decay (its decay argument is the schedule's decay).
void nadam_update(const OptimizerConfig& c, const vocab::UpdateStep& s) {
    const double i = double(s.t) + 1.0;
    const double mu = nadam_mu(c, i), mu_next = nadam_mu(c, i + 1.0);
    const double prod = nadam_schedule_product(c, s.t + 1);
    const double prod_next = prod * mu_next;
    const float fb1 = float(c.beta1), fb2 = float(c.beta2);
    const float cb1 = float(1.0 - c.beta1), cb2 = float(1.0 - c.beta2);
    const float gcoef = float((1.0 - mu) / (1.0 - prod));
    const float mcoef = float(mu_next / (1.0 - prod_next));
    const float inv_bc2 = float(1.0 / (1.0 - std::pow(c.beta2, i)));
    const float lr = float(s.lr_t);
    const float eps = float(c.epsilon);
    for_each_chunk(s.n, s.p, s.g, s.s1, s.s2, [&](ChunkMap p, ConstChunkMap g, ChunkMap m, ChunkMap v) {
        m = fb1 * m + cb1 * g;
        v = fb2 * v + cb2 * g.square();
        p -= lr * (gcoef * g + mcoef * m) / ((v * inv_bc2).sqrt() + eps);
    });
}

// Keras' SGD takes momentum and nesterov: the names "momentum" and "nesterov" ask for momentum,
// 0.9 unless given (SGD's Keras default stays 0).
void sgd_configure(const std::string& n, const vocab::GivenOptimizerArgs& given, OptimizerConfig& o) {
    bool nesterov = n == "nesterov";
    if (given.has("nesterov")) {
        const bool v = given.flag("nesterov");
        if (n == "nesterov" && !v) fail(ErrorKind::InvalidParameter, "optimizer nesterov contradicts nesterov=False");
        nesterov = v;
    }
    o.momentum = (n == "momentum" || n == "nesterov") ? 0.9 : 0.0;
    if (given.has("momentum")) o.momentum = given.number("momentum");
    o.kind = nesterov                              ? OptimizerKind::Nesterov
             : (n == "momentum" || o.momentum > 0) ? OptimizerKind::Momentum
                                                   : OptimizerKind::SGD;
}

void adam_configure(const std::string&, const vocab::GivenOptimizerArgs& given, OptimizerConfig&) {
    if (given.has("amsgrad") && given.flag("amsgrad"))
        fail(ErrorKind::InvalidParameter, "amsgrad is not supported",
             "hopper implements Adam without the AMSGrad variant.", "Use amsgrad=False or leave it out.");
}

void rmsprop_configure(const std::string&, const vocab::GivenOptimizerArgs& given, OptimizerConfig&) {
    if (given.has("momentum") && given.number("momentum") != 0.0)
        fail(ErrorKind::InvalidParameter, "momentum is not supported with rmsprop",
             "hopper implements RMSprop without momentum.", "Use momentum=0 or leave it out.");
    if (given.has("centered") && given.flag("centered"))
        fail(ErrorKind::InvalidParameter, "centered RMSprop is not supported", "hopper implements plain RMSprop.",
             "Use centered=False or leave it out.");
}

// Keras' Adadelta defaults rho to 0.95 (RMSprop's is 0.9).
void adadelta_configure(const std::string&, const vocab::GivenOptimizerArgs& given, OptimizerConfig& o) {
    if (!given.has("rho")) o.rho = 0.95;
}

void nadam_configure(const std::string&, const vocab::GivenOptimizerArgs& given, OptimizerConfig&) {
    if (given.has("decay") && given.number("decay") != 0.0)
        fail(ErrorKind::InvalidParameter, "decay is not supported with nadam",
             "Keras's Nadam does not decay its learning rate: it replaces decay by schedule_decay, the decay of "
             "its momentum schedule.",
             "Use schedule_decay (0.004 unless given) for the momentum schedule, or leave decay out.");
}

}  // namespace

namespace vocab {

const std::vector<OptimizerArg>& optimizer_args() {
    using R = OptimizerArg::Range;
    using W = OptimizerArg::Where;
    static const std::vector<OptimizerArg> args = {
        {"learning_rate", "lr", R::Positive, W::Everywhere, &OptimizerConfig::learning_rate},
        {"momentum", nullptr, R::Fraction, W::Everywhere, &OptimizerConfig::momentum},
        {"nesterov", nullptr, R::Flag, W::Everywhere, nullptr},
        {"beta_1", nullptr, R::Fraction, W::Everywhere, &OptimizerConfig::beta1},
        {"beta_2", nullptr, R::Fraction, W::Everywhere, &OptimizerConfig::beta2},
        {"epsilon", nullptr, R::Positive, W::Everywhere, &OptimizerConfig::epsilon},
        {"rho", nullptr, R::Fraction, W::Everywhere, &OptimizerConfig::rho},
        {"decay", nullptr, R::NonNegative, W::Everywhere, &OptimizerConfig::decay},
        {"initial_accumulator_value", nullptr, R::NonNegative, W::Everywhere,
         &OptimizerConfig::initial_accumulator_value},
        {"schedule_decay", nullptr, R::NonNegative, W::Everywhere, &OptimizerConfig::schedule_decay},
        {"amsgrad", nullptr, R::Flag, W::OptimizerOnly, nullptr},
        {"centered", nullptr, R::Flag, W::OptimizerOnly, nullptr},
        {"weight_decay", nullptr, R::NonNegative, W::CompileOnly, &OptimizerConfig::weight_decay},
    };
    return args;
}

const OptimizerArg* optimizer_arg(const std::string& canonical) {
    for (const OptimizerArg& a : optimizer_args())
        if (canonical == a.name) return &a;
    return nullptr;
}

const std::vector<OptimizerSpec>& optimizers() {
    static const std::vector<OptimizerSpec> specs = {
        {OptimizerKind::SGD,
         "sgd",
         {"sgd", "momentum", "nesterov"},
         "SGD (with momentum or nesterov)",
         {"learning_rate", "momentum", "nesterov", "decay"},
         0.01,
         {},
         0,
         sgd_configure,
         sgd_update},
        {OptimizerKind::Momentum,
         "momentum",
         {},
         nullptr,
         {"learning_rate", "momentum", "nesterov", "decay"},
         0.01,
         {"momentum"},
         1,
         sgd_configure,
         momentum_update},
        {OptimizerKind::Nesterov,
         "nesterov",
         {},
         nullptr,
         {"learning_rate", "momentum", "nesterov", "decay"},
         0.01,
         {"momentum"},
         1,
         sgd_configure,
         nesterov_update},
        {OptimizerKind::Adam,
         "adam",
         {"adam"},
         "Adam",
         {"learning_rate", "beta_1", "beta_2", "epsilon", "decay", "amsgrad"},
         0.001,
         {"beta_1", "beta_2", "epsilon"},
         2,
         adam_configure,
         adam_update},
        {OptimizerKind::RMSprop,
         "rmsprop",
         {"rmsprop"},
         "RMSprop",
         {"learning_rate", "rho", "epsilon", "decay", "momentum", "centered"},
         0.001,
         {"rho", "epsilon"},
         1,
         rmsprop_configure,
         rmsprop_update},
        {OptimizerKind::Adagrad,
         "adagrad",
         {"adagrad"},
         "Adagrad",
         {"learning_rate", "initial_accumulator_value", "epsilon", "decay"},
         0.001,
         {"initial_accumulator_value", "epsilon"},
         1,
         nullptr,
         adagrad_update,
         &OptimizerConfig::initial_accumulator_value},
        {OptimizerKind::Adadelta,
         "adadelta",
         {"adadelta"},
         "Adadelta",
         {"learning_rate", "rho", "epsilon", "decay"},
         0.001,
         {"rho", "epsilon"},
         2,
         adadelta_configure,
         adadelta_update},
        {OptimizerKind::Adamax,
         "adamax",
         {"adamax"},
         "Adamax",
         {"learning_rate", "beta_1", "beta_2", "epsilon", "decay"},
         0.001,
         {"beta_1", "beta_2", "epsilon"},
         2,
         nullptr,
         adamax_update},
        {OptimizerKind::Nadam,
         "nadam",
         {"nadam"},
         "Nadam",
         {"learning_rate", "beta_1", "beta_2", "epsilon", "schedule_decay", "decay"},
         0.001,
         {"beta_1", "beta_2", "epsilon", "schedule_decay"},
         2,
         nadam_configure,
         nadam_update},
    };
    return specs;
}

const std::vector<RefusedName>& refused_optimizers() {
    static const std::vector<RefusedName> names = {
        {"ftrl", "hopper does not implement the FTRL-Proximal optimizer.", nullptr},
        {"adamw", "hopper does not implement decoupled weight decay (AdamW).",
         "Use Adam with weight_decay as a compile parameter of its own for an L2 penalty on weights."},
        {"adafactor", "hopper does not implement the Adafactor optimizer.", nullptr},
        {"lion", "hopper does not implement the Lion optimizer.", nullptr},
        {"lossscaleoptimizer", "hopper trains in float32 and does not scale losses.", nullptr},
    };
    return names;
}

const OptimizerSpec* optimizer(OptimizerKind kind) {
    for (const OptimizerSpec& s : optimizers())
        if (s.kind == kind) return &s;
    return nullptr;
}

const OptimizerSpec* optimizer_named(const std::string& lowercase_name) {
    for (const OptimizerSpec& s : optimizers())
        for (const char* w : s.written)
            if (lowercase_name == w) return &s;
    return nullptr;
}

}  // namespace vocab

int Optimizer::slots_for(OptimizerKind kind) {
    if (const vocab::OptimizerSpec* s = vocab::optimizer(kind)) return s->slots;
    fail(ErrorKind::Internal, "unknown optimizer kind");
}

Optimizer::Optimizer(const OptimizerConfig& config, std::size_t num_params)
    : Optimizer(config, num_params, {ParamRange{0, num_params}}) {}

Optimizer::Optimizer(const OptimizerConfig& config, std::size_t num_params, std::vector<ParamRange> trainable)
    : config_(config), n_(num_params), ranges_(std::move(trainable)) {
    std::size_t at = 0;
    for (const ParamRange& r : ranges_) {
        if (r.begin < at || r.end < r.begin || r.end > n_)
            fail(ErrorKind::Internal, "optimizer ranges are not ascending runs of the parameters");
        slot_size_ += r.end - r.begin;
        at = r.end;
    }
    slots_ = initial_slots(config, slot_size_);
}

std::vector<float> Optimizer::initial_slots(const OptimizerConfig& config, std::size_t slot_size) {
    const vocab::OptimizerSpec* s = vocab::optimizer(config.kind);
    if (!s) fail(ErrorKind::Internal, "unknown optimizer kind");
    return std::vector<float>(std::size_t(s->slots) * slot_size, s->slot_start ? float(config.*(s->slot_start)) : 0.0f);
}

void Optimizer::apply(float* params, const float* grad, uint64_t t) {
    if (slots_.size() != std::size_t(num_slots()) * slot_size_)
        fail(ErrorKind::Internal, "optimizer slots do not match the parameter count");
    const double lr_t = config_.learning_rate / (1.0 + config_.decay * double(t));
    float* s1 = slots_.empty() ? nullptr : slots_.data();
    float* s2 = num_slots() > 1 ? slots_.data() + slot_size_ : nullptr;
    const vocab::OptimizerSpec& spec = *vocab::optimizer(config_.kind);
    // Each range from its own start: with every parameter trainable, one range, the chunks of before.
    std::size_t o = 0;
    for (const ParamRange& r : ranges_) {
        const std::size_t len = r.end - r.begin;
        spec.update(config_,
                    {len, params + r.begin, grad + r.begin, s1 ? s1 + o : nullptr, s2 ? s2 + o : nullptr, lr_t, t});
        o += len;
    }
}

}  // namespace hopper
