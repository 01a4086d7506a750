// Mergeable states for the hierarchical combine, their serialized form, topologies and the rule
// that decides whether the intermediate level is inserted. See hopper/combine.h for the design.
#include "hopper/combine.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "hopper/error.h"
#include "hopper/interrupt.h"
#include "hopper/optimizer.h"
#include "hopper/state_format.h"
#include "hopper/trainer.h"

namespace hopper {

namespace {

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "hopper's combine state format assumes a little-endian host"
#endif

// Serialized states: magic "HOPPERCS", u16 version, u16 kind, u32 payload length, payload,
// u32 CRC-32 (zlib) of everything before it. States cross levels (and, on a distributed engine,
// links) in this form; everything is checked before use, so a damaged value is an error, never a
// read out of bounds.
constexpr char kMagic[8] = {'H', 'O', 'P', 'P', 'E', 'R', 'C', 'S'};
constexpr uint16_t kVersion = 1;
constexpr std::size_t kHeader = 16;
constexpr uint32_t kMaxSlots = 8;

std::string kind_title(CombineKind kind) {
    switch (kind) {
        case CombineKind::VectorSum: return "vector sum";
        case CombineKind::ModelAverage: return "model averaging";
        case CombineKind::Metrics: return "metrics";
    }
    return "combine";
}

[[noreturn]] void bad_state(CombineKind kind, const std::string& what, const std::string& detail = {}) {
    fail(ErrorKind::Data, "invalid " + kind_title(kind) + " state: " + what, detail,
         "The value is not a hopper " + kind_title(kind) +
             " state (made by the matching _partial or _intermediate aggregate), or it was truncated or modified.");
}

class Writer {
public:
    template <typename T>
    void put(T v) {
        out_.append(reinterpret_cast<const char*>(&v), sizeof(T));
    }
    void put_string(const std::string& s) {
        put<uint32_t>(uint32_t(s.size()));
        out_.append(s);
    }
    void put_raw(const void* p, std::size_t n) { out_.append(static_cast<const char*>(p), n); }
    void reserve(std::size_t n) { out_.reserve(n); }

    std::string frame(CombineKind kind) const {
        if (out_.size() > std::numeric_limits<uint32_t>::max() - kHeader - 4)
            fail(ErrorKind::Limit, kind_title(kind) + " state is too large",
                 "It would take " + std::to_string(out_.size()) +
                     " bytes; a state holds at most 4 GB (and PostgreSQL 1 GB).");
        std::string s;
        s.reserve(kHeader + out_.size() + 4);
        s.append(kMagic, sizeof kMagic);
        uint16_t version = kVersion, k = uint16_t(kind);
        uint32_t len = uint32_t(out_.size());
        s.append(reinterpret_cast<const char*>(&version), 2);
        s.append(reinterpret_cast<const char*>(&k), 2);
        s.append(reinterpret_cast<const char*>(&len), 4);
        s.append(out_);
        uint32_t crc = crc32_of(s);
        s.append(reinterpret_cast<const char*>(&crc), 4);
        return s;
    }

private:
    std::string out_;
};

class Reader {
public:
    Reader(std::string_view bytes, CombineKind kind) : kind_(kind) {
        if (bytes.size() < kHeader + 4)
            bad_state(kind, "too short", "It has " + std::to_string(bytes.size()) + " bytes.");
        if (std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) bad_state(kind, "wrong magic number");
        uint16_t version, k;
        uint32_t len, crc;
        std::memcpy(&version, bytes.data() + 8, 2);
        std::memcpy(&k, bytes.data() + 10, 2);
        std::memcpy(&len, bytes.data() + 12, 4);
        if (version != kVersion)
            bad_state(kind, "unsupported format version " + std::to_string(version),
                      "This hopper reads version " + std::to_string(kVersion) + ".");
        if (k != uint16_t(kind)) {
            std::string other = (k >= 1 && k <= 3) ? kind_title(CombineKind(k)) + " state"
                                                   : "state of unknown kind " + std::to_string(k);
            bad_state(kind, "it is a " + other);
        }
        if (std::size_t(len) != bytes.size() - kHeader - 4)
            bad_state(kind, "length does not match",
                      "The header says " + std::to_string(len) + " payload bytes; the value has " +
                          std::to_string(bytes.size() - kHeader - 4) + ".");
        std::memcpy(&crc, bytes.data() + bytes.size() - 4, 4);
        if (crc32_of(bytes.substr(0, bytes.size() - 4)) != crc) bad_state(kind, "checksum mismatch");
        in_ = bytes.substr(kHeader, len);
    }

    template <typename T>
    T get() {
        need(sizeof(T));
        T v;
        std::memcpy(&v, in_.data() + at_, sizeof(T));
        at_ += sizeof(T);
        return v;
    }
    std::string get_string() {
        uint32_t n = get<uint32_t>();
        need(n);
        std::string s(in_.substr(at_, n));
        at_ += n;
        return s;
    }
    void get_raw(void* p, std::size_t n) {
        need(n);
        if (n) std::memcpy(p, in_.data() + at_, n);
        at_ += n;
    }
    std::size_t left() const { return in_.size() - at_; }
    void done() const {
        if (at_ != in_.size())
            bad_state(kind_, "trailing bytes", std::to_string(in_.size() - at_) + " bytes were not read.");
    }

private:
    void need(std::size_t n) const {
        if (n > in_.size() - at_) bad_state(kind_, "truncated");
    }
    std::string_view in_;
    std::size_t at_ = 0;
    CombineKind kind_;
};

std::string fmt(double v, int precision = 4) {
    if (std::isinf(v)) return v > 0 ? "infinity" : "-infinity";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    return buf;
}

std::string dq(const std::string& s) { return "\"" + s + "\""; }

std::string describe_config(const std::string& json) {
    try {
        ModelConfig c = parse_model_config(json);
        return "architecture " + c.arch.shape_string() + ", optimizer " + to_string(c.compile.optimizer.kind);
    } catch (const Error&) { return "an unreadable configuration"; }
}

[[noreturn]] void overflow(const char* what) {
    fail(ErrorKind::Data, std::string("model averaging overflows: ") + what + " is too large to average exactly",
         "Averaging sums value x weight in 128-bit fixed point; the totals must stay below 2^63 in magnitude.",
         "Values this large mean the model has diverged; lower the learning rate.");
}

void add_checked(__int128& into, __int128 v, const char* what) {
    if (__builtin_add_overflow(into, v, &into)) overflow(what);
}

}  // namespace

const char* to_string(CombineKind kind) {
    switch (kind) {
        case CombineKind::VectorSum: return "vector_sum";
        case CombineKind::ModelAverage: return "model_average";
        case CombineKind::Metrics: return "metrics";
    }
    return "unknown";
}

CombineKind parse_combine_kind(std::string_view name) {
    for (CombineKind k : {CombineKind::VectorSum, CombineKind::ModelAverage, CombineKind::Metrics})
        if (name == to_string(k)) return k;
    fail(ErrorKind::InvalidParameter, "unknown combine kind \"" + std::string(name) + "\"",
         "Known kinds: vector_sum, model_average, metrics.");
}

// ------------------------------------------------------------------------------------------------
// Vector sums.

namespace {

// A sum that overflowed double precision is no sum (it read Infinity, or NaN once compensated):
// checked in the loops that add, not by another pass over the vector.
[[noreturn]] void sum_overflows(std::size_t i) {
    fail(ErrorKind::Data, "vector sum overflows double precision",
         "Element " + std::to_string(i + 1) + " of the sum is beyond about 1.8e308.");
}

}  // namespace

void VectorSumState::add(const double* x, std::size_t n) {
    if (count == 0 && sum.empty()) {
        sum.assign(n, 0.0);
        compensation.assign(n, 0.0);
    } else if (n != sum.size()) {
        fail(ErrorKind::Data, "vectors to sum have different lengths",
             "Earlier vectors have " + std::to_string(sum.size()) + " elements, this one " + std::to_string(n) + ".");
    }
    for (std::size_t i = 0; i < n; ++i)
        if (!std::isfinite(x[i]))
            fail(ErrorKind::Data, "vector to sum has a non-finite element",
                 "Element " + std::to_string(i + 1) + " is " + fmt(x[i]) + ".");
    for (std::size_t i = 0; i < n; ++i) {
        // Neumaier: the rounding error of each addition goes into the compensation.
        const double s = sum[i], v = x[i], t = s + v;
        if (!std::isfinite(t)) sum_overflows(i);
        compensation[i] += std::fabs(s) >= std::fabs(v) ? (s - t) + v : (v - t) + s;
        sum[i] = t;
    }
    ++count;
}

void VectorSumState::merge(const VectorSumState& other) {
    if (other.empty()) return;
    if (empty()) {
        *this = other;
        return;
    }
    if (other.sum.size() != sum.size())
        fail(ErrorKind::Data, "vector sums of different lengths cannot be merged",
             "One state sums vectors of " + std::to_string(sum.size()) + " elements, the other of " +
                 std::to_string(other.sum.size()) + ".");
    if (count > std::numeric_limits<uint64_t>::max() - other.count)
        fail(ErrorKind::Data, "vector sum counts more vectors than it can hold",
             "The states count " + std::to_string(count) + " and " + std::to_string(other.count) + ".");
    for (std::size_t i = 0; i < sum.size(); ++i) {
        const double s = sum[i], v = other.sum[i], t = s + v;
        compensation[i] += (std::fabs(s) >= std::fabs(v) ? (s - t) + v : (v - t) + s) + other.compensation[i];
        if (!std::isfinite(t) || !std::isfinite(compensation[i])) sum_overflows(i);
        sum[i] = t;
    }
    count += other.count;
}

std::vector<double> VectorSumState::total() const {
    std::vector<double> out(sum.size());
    for (std::size_t i = 0; i < sum.size(); ++i) out[i] = sum[i] + compensation[i];
    return out;
}

std::vector<double> VectorSumState::mean() const {
    std::vector<double> out = total();
    for (double& v : out) v = count ? v / double(count) : std::numeric_limits<double>::quiet_NaN();
    return out;
}

std::string VectorSumState::serialize() const {
    Writer w;
    w.reserve(16 + 16 * sum.size());
    w.put<uint64_t>(count);
    w.put<uint64_t>(sum.size());
    w.put_raw(sum.data(), 8 * sum.size());
    w.put_raw(compensation.data(), 8 * compensation.size());
    return w.frame(CombineKind::VectorSum);
}

VectorSumState VectorSumState::deserialize(std::string_view bytes) {
    Reader r(bytes, CombineKind::VectorSum);
    VectorSumState s;
    s.count = r.get<uint64_t>();
    uint64_t n = r.get<uint64_t>();
    if (n > r.left() / 16 || n * 16 != r.left())
        bad_state(CombineKind::VectorSum, "vector length does not match its size",
                  std::to_string(n) + " elements do not fill " + std::to_string(r.left()) + " bytes.");
    s.sum.resize(n);
    s.compensation.resize(n);
    r.get_raw(s.sum.data(), 8 * n);
    r.get_raw(s.compensation.data(), 8 * n);
    r.done();
    if (s.count == 0 && n != 0) bad_state(CombineKind::VectorSum, "an empty sum has elements");
    for (std::size_t i = 0; i < n; ++i)
        if (!std::isfinite(s.sum[i]) || !std::isfinite(s.compensation[i]))
            bad_state(CombineKind::VectorSum, "non-finite sum", "Element " + std::to_string(i + 1) + ".");
    return s;
}

// ------------------------------------------------------------------------------------------------
// Exact fixed point.

bool try_fixed_point(double v, __int128* out) {
    if (!std::isfinite(v)) return false;
    if (v == 0.0) {
        *out = 0;
        return true;
    }
    int exp;
    const double m = std::frexp(v, &exp);  // v = m * 2^exp, 0.5 <= |m| < 1
    if (exp > 63) return false;
    const int64_t mant = int64_t(std::ldexp(m, 53));  // exact: |mant| < 2^53
    const int shift = exp + 11;                       // v * 2^64 = mant * 2^(exp - 53 + 64)
    if (shift >= 0) {
        *out = __int128(mant) * (__int128(1) << shift);
        return true;
    }
    const int s = -shift;
    if (s >= 54) {  // |v * 2^64| < 1/2
        *out = 0;
        return true;
    }
    const uint64_t a = uint64_t(mant < 0 ? -mant : mant);
    uint64_t q = a >> s;
    const uint64_t r = a & ((uint64_t(1) << s) - 1), half = uint64_t(1) << (s - 1);
    if (r > half || (r == half && (q & 1))) ++q;  // round half to even
    *out = mant < 0 ? -__int128(q) : __int128(q);
    return true;
}

__int128 to_fixed_point(double v) {
    __int128 out;
    if (try_fixed_point(v, &out)) return out;
    if (!std::isfinite(v))
        fail(ErrorKind::Data, "cannot average a non-finite value", "The value is " + fmt(v) + ".",
             "The model has diverged; lower the learning rate.");
    fail(ErrorKind::Data, "model averaging overflows: a value is too large to average exactly",
         "The value is " + fmt(v, 17) + "; averaging holds values below 2^63 in magnitude.",
         "Values this large mean the model has diverged; lower the learning rate.");
}

double from_fixed_point(__int128 sum, uint64_t weight) {
    return std::ldexp(double(sum) / double(weight), -kFixedPointBits);
}

// ------------------------------------------------------------------------------------------------
// Model averaging.

void ModelAverageState::add(std::string_view model_state, uint64_t w) {
    Trainer t = deserialize_state(model_state);
    const std::string cfg = t.config().to_json();
    if (empty()) {
        config_json = cfg;
        num_params = t.params().size();
        num_slots = uint32_t(t.optimizer().num_slots());
        sums.assign(std::size_t(num_params) + t.optimizer().slots().size(), 0);
    } else if (cfg != config_json) {
        fail(ErrorKind::InvalidParameter, "cannot average model states with different configurations",
             "One has " + describe_config(config_json) + " (" + config_json + "), another " + describe_config(cfg) +
                 " (" + cfg + ").");
    }
    if (w > uint64_t(std::numeric_limits<int64_t>::max()) || weight + w < weight ||
        weight + w > uint64_t(std::numeric_limits<int64_t>::max()))
        fail(ErrorKind::InvalidParameter, "model averaging weights are too large", "Their sum exceeds 2^63.");
    const TrainCounters& c = t.counters();
    // Every value times the weight, exactly; a copy that diverged, or whose values do not fit, is
    // left out as a whole (a decision about this copy alone).
    std::vector<__int128> terms(sums.size());
    bool healthy = !c.diverged;
    const __int128 wide = w;
    for (std::size_t i = 0; healthy && i < terms.size(); ++i) {
        const float v = i < num_params ? t.params()[i] : t.optimizer().slots()[i - num_params];
        __int128 fixed;
        healthy = try_fixed_point(v, &fixed) && !__builtin_mul_overflow(fixed, wide, &terms[i]);
    }
    if (healthy) {
        for (std::size_t i = 0; i < sums.size(); ++i) add_checked(sums[i], terms[i], "a weighted sum");
        weight += w;
        iteration_totals.merge(c.iteration_totals);
    } else {
        ++excluded;
    }
    max_steps = std::max(max_steps, c.steps);
    max_base_samples = std::max(max_base_samples, c.samples_seen - std::min(c.samples_seen, c.last_visit_samples));
    last_samples += c.last_visit_samples;
    max_base_visits = std::max(max_base_visits, c.visits > 0 ? c.visits - 1 : 0);
    __int128 loss;
    if (healthy && try_fixed_point(c.last_visit_loss_sum, &loss))
        add_checked(last_loss_sum, loss, "the last-visit loss");
    diverged = diverged || !healthy;
    ++models;
}

void ModelAverageState::merge(const ModelAverageState& other) {
    if (other.empty()) return;
    if (empty()) {
        *this = other;
        return;
    }
    if (other.config_json != config_json)
        fail(ErrorKind::InvalidParameter, "cannot average model states with different configurations",
             "One has " + describe_config(config_json) + " (" + config_json + "), another " +
                 describe_config(other.config_json) + " (" + other.config_json + ").");
    if (other.sums.size() != sums.size())
        fail(ErrorKind::Internal, "model averaging states of one configuration have different sizes");
    if (weight + other.weight < weight || weight + other.weight > uint64_t(std::numeric_limits<int64_t>::max()))
        fail(ErrorKind::InvalidParameter, "model averaging weights are too large", "Their sum exceeds 2^63.");
    for (std::size_t i = 0; i < sums.size(); ++i) add_checked(sums[i], other.sums[i], "a weighted sum");
    add_checked(last_loss_sum, other.last_loss_sum, "the last-visit loss");
    iteration_totals.merge(other.iteration_totals);
    weight += other.weight;
    models += other.models;
    excluded += other.excluded;
    max_steps = std::max(max_steps, other.max_steps);
    max_base_samples = std::max(max_base_samples, other.max_base_samples);
    last_samples += other.last_samples;
    max_base_visits = std::max(max_base_visits, other.max_base_visits);
    diverged = diverged || other.diverged;
}

std::string ModelAverageState::result() const {
    if (empty()) fail(ErrorKind::Internal, "no model states to average");
    if (weight == 0 && excluded == 0)
        fail(ErrorKind::InvalidParameter, "cannot average model states whose weights sum to zero",
             std::to_string(models) + " model state" + (models == 1 ? " was" : "s were") +
                 " given, all with weight 0.");
    // Every copy diverged (or the healthy ones weigh nothing): there is no average to give.
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> params(num_params), slots(sums.size() - num_params);
    for (std::size_t i = 0; i < params.size(); ++i) params[i] = weight ? float(from_fixed_point(sums[i], weight)) : nan;
    for (std::size_t i = 0; i < slots.size(); ++i)
        slots[i] = weight ? float(from_fixed_point(sums[num_params + i], weight)) : nan;
    TrainCounters c;
    c.steps = max_steps;
    c.samples_seen = max_base_samples + last_samples;
    c.visits = max_base_visits + models;
    c.diverged = diverged;
    c.last_visit_loss_sum = std::ldexp(double(last_loss_sum), -kFixedPointBits);
    c.last_visit_samples = last_samples;
    ModelConfig config = parse_model_config(config_json);
    c.iteration_totals = iteration_totals;
    if (c.iteration_totals.metric_sums.size() != config.compile.metrics.size()) c.iteration_totals = EvalTotals{};
    Trainer t(std::move(config), std::move(params), std::move(slots), c);
    return serialize_state(t);
}

std::size_t ModelAverageState::serialized_size(const ModelConfig& config) {
    const std::size_t values = config.arch.num_params() +
                               config.arch.num_trainable_params() * Optimizer::slots_for(config.compile.optimizer.kind);
    return kHeader + 4 + config.to_json().size() + 8 + 4 + 7 * 8 + 16 + 8 + 8 + 4 + 8 * config.compile.metrics.size() +
           1 + 16 * values + 4;
}

std::string ModelAverageState::serialize() const {
    Writer w;
    w.reserve(64 + config_json.size() + 16 * sums.size());
    w.put_string(config_json);
    w.put<uint64_t>(num_params);
    w.put<uint32_t>(num_slots);
    w.put<uint64_t>(weight);
    w.put<uint64_t>(models);
    w.put<uint64_t>(excluded);
    w.put<uint64_t>(max_steps);
    w.put<uint64_t>(max_base_samples);
    w.put<uint64_t>(last_samples);
    w.put<uint64_t>(max_base_visits);
    w.put<__int128>(last_loss_sum);
    w.put<double>(iteration_totals.loss_sum);
    w.put<double>(iteration_totals.count);
    w.put<uint32_t>(uint32_t(iteration_totals.metric_sums.size()));
    for (double v : iteration_totals.metric_sums) w.put<double>(v);
    w.put<uint8_t>(diverged ? 1 : 0);
    w.put_raw(sums.data(), 16 * sums.size());
    return w.frame(CombineKind::ModelAverage);
}

ModelAverageState ModelAverageState::deserialize(std::string_view bytes) {
    constexpr CombineKind K = CombineKind::ModelAverage;
    Reader r(bytes, K);
    ModelAverageState s;
    s.config_json = r.get_string();
    s.num_params = r.get<uint64_t>();
    s.num_slots = r.get<uint32_t>();
    s.weight = r.get<uint64_t>();
    s.models = r.get<uint64_t>();
    s.excluded = r.get<uint64_t>();
    s.max_steps = r.get<uint64_t>();
    s.max_base_samples = r.get<uint64_t>();
    s.last_samples = r.get<uint64_t>();
    s.max_base_visits = r.get<uint64_t>();
    s.last_loss_sum = r.get<__int128>();
    s.iteration_totals.loss_sum = r.get<double>();
    s.iteration_totals.count = r.get<double>();
    const uint32_t num_metrics = r.get<uint32_t>();
    if (num_metrics > 4096) bad_state(K, "too many metrics", std::to_string(num_metrics));
    for (uint32_t i = 0; i < num_metrics; ++i) s.iteration_totals.metric_sums.push_back(r.get<double>());
    bool finite = std::isfinite(s.iteration_totals.loss_sum) && std::isfinite(s.iteration_totals.count) &&
                  s.iteration_totals.count >= 0;
    for (double v : s.iteration_totals.metric_sums) finite = finite && std::isfinite(v);
    if (!finite) bad_state(K, "training totals are not finite");
    uint8_t flag = r.get<uint8_t>();
    if (flag > 1) bad_state(K, "unknown flags");
    s.diverged = flag == 1;
    if (s.num_slots > kMaxSlots) bad_state(K, "too many optimizer slots", std::to_string(s.num_slots));
    const uint64_t values = r.left() / 16;
    // Parameters, then each slot over the trainable ones (checked against the configuration below).
    if (r.left() % 16 != 0 || values < s.num_params ||
        (s.num_slots == 0
             ? values != s.num_params
             : ((values - s.num_params) % s.num_slots != 0 || (values - s.num_params) / s.num_slots > s.num_params)))
        bad_state(K, "parameter count does not match the state size",
                  std::to_string(s.num_params) + " parameters with " + std::to_string(s.num_slots) +
                      " optimizer slots do not fill " + std::to_string(r.left()) + " bytes.");
    s.sums.resize(values);
    r.get_raw(s.sums.data(), 16 * values);
    r.done();
    if (s.models == 0) {
        if (!s.config_json.empty() || s.num_params != 0 || s.weight != 0 || s.excluded != 0)
            bad_state(K, "an empty state has contents");
        return s;
    }
    if (s.excluded > s.models || (s.excluded > 0 && !s.diverged))
        bad_state(K, "inconsistent counts of averaged models");
    ModelConfig config;
    try {
        config = parse_model_config(s.config_json);
    } catch (const Error& e) { bad_state(K, "its configuration cannot be read", e.message()); }
    if (config.arch.num_params() != s.num_params ||
        uint32_t(Optimizer::slots_for(config.compile.optimizer.kind)) != s.num_slots ||
        values != s.num_params + uint64_t(s.num_slots) * config.arch.num_trainable_params())
        bad_state(K, "sizes do not match its configuration",
                  "The architecture " + config.arch.shape_string() + " has " +
                      std::to_string(config.arch.num_params()) + " parameters; the state holds " +
                      std::to_string(s.num_params) + ".");
    if (config.to_json() != s.config_json) bad_state(K, "its configuration is not canonical");
    return s;
}

// ------------------------------------------------------------------------------------------------
// Metrics.

// The most rows a metrics state counts: 2^53, beyond which a double skips integers (a crafted count
// of 1e300 was reported as row_count -9223372036854775808).
constexpr double kMaxExactCount = 9007199254740992.0;

void MetricsState::start(const CompileParams& compile) {
    std::vector<std::string> names;
    for (Metric m : compile.metrics) names.push_back(to_string(m));
    const std::string loss = to_string(compile.loss);
    if (loss_name.empty()) {
        loss_name = loss;
        metric_names = names;
        if (totals.metric_sums.empty()) totals.metric_sums.assign(names.size(), 0.0);
    } else if (loss != loss_name || names != metric_names) {
        fail(ErrorKind::InvalidParameter, "rows carry models with different compile parameters",
             "A metrics aggregate evaluates one model; use one aggregate per model.");
    }
}

void MetricsState::merge(const MetricsState& other) {
    if (other.empty()) return;
    if (totals.count + other.totals.count > kMaxExactCount)
        fail(ErrorKind::Data, "metrics count more rows than a double counts exactly",
             "The states count " + fmt(totals.count) + " and " + fmt(other.totals.count) + " rows.");
    if (loss_name.empty()) {
        loss_name = other.loss_name;
        metric_names = other.metric_names;
    } else if (other.loss_name != loss_name || other.metric_names != metric_names) {
        auto list = [](const std::vector<std::string>& v) {
            std::string s = "[";
            for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
            return s + "]";
        };
        fail(ErrorKind::InvalidParameter, "cannot merge metrics of different compile parameters",
             "One state has loss " + loss_name + " and metrics " + list(metric_names) + ", the other loss " +
                 other.loss_name + " and metrics " + list(other.metric_names) + ".");
    }
    totals.merge(other.totals);
}

std::string MetricsState::metrics_json() const {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < metric_names.size(); ++i) {
        const double v = totals.metric(i);
        if (std::isfinite(v)) j[metric_names[i]] = v;
        else j[metric_names[i]] = nullptr;
    }
    return j.dump();
}

std::string MetricsState::serialize() const {
    Writer w;
    w.put_string(loss_name);
    w.put<uint32_t>(uint32_t(metric_names.size()));
    for (const std::string& n : metric_names) w.put_string(n);
    w.put<double>(totals.loss_sum);
    w.put<double>(totals.count);
    w.put<uint32_t>(uint32_t(totals.metric_sums.size()));
    for (double v : totals.metric_sums) w.put<double>(v);
    return w.frame(CombineKind::Metrics);
}

MetricsState MetricsState::deserialize(std::string_view bytes) {
    constexpr CombineKind K = CombineKind::Metrics;
    Reader r(bytes, K);
    MetricsState s;
    s.loss_name = r.get_string();
    uint32_t k = r.get<uint32_t>();
    if (k > 64) bad_state(K, "too many metrics", std::to_string(k));
    for (uint32_t i = 0; i < k; ++i) s.metric_names.push_back(r.get_string());
    s.totals.loss_sum = r.get<double>();
    s.totals.count = r.get<double>();
    uint32_t k2 = r.get<uint32_t>();
    if (k2 != k && !(k2 == 0 && s.totals.count == 0.0)) bad_state(K, "metric sums do not match the metric names");
    s.totals.metric_sums.resize(k2);
    for (double& v : s.totals.metric_sums) v = r.get<double>();
    r.done();
    // No rows yet: a sum of 0 per metric, as start() makes them (a state with names and no sums
    // raised an internal error when its metrics were read).
    s.totals.metric_sums.resize(k, 0.0);
    if (s.loss_name.empty() && (k != 0 || s.totals.count != 0.0)) bad_state(K, "an empty state has contents");
    // Names are hopper's vocabulary (letters, digits, underscores): anything else, which could not
    // even be written as JSON, is no state of hopper's.
    const auto plain_name = [](const std::string& n) {
        return std::all_of(n.begin(), n.end(), [](char c) { return std::isalnum((unsigned char)c) || c == '_'; });
    };
    if (!plain_name(s.loss_name)) bad_state(K, "invalid loss name");
    for (const std::string& n : s.metric_names)
        if (n.empty() || !plain_name(n)) bad_state(K, "invalid metric name");
    if (!(s.totals.count >= 0.0) || !(s.totals.count <= kMaxExactCount) || s.totals.count != std::floor(s.totals.count))
        bad_state(K, "invalid row count", fmt(s.totals.count));
    return s;
}

// ------------------------------------------------------------------------------------------------
// Topology.

Topology Topology::build(std::vector<SegmentPlacement> segments, std::vector<LinkCost> links) {
    Topology t;
    std::sort(segments.begin(), segments.end(), [](const SegmentPlacement& a, const SegmentPlacement& b) {
        return std::tie(a.dist_key, a.group, a.node) < std::tie(b.dist_key, b.group, b.node);
    });
    std::map<std::string, std::string> group_of_node;
    for (const SegmentPlacement& s : segments) {
        if (s.node.empty())
            fail(ErrorKind::InvalidParameter,
                 "segment dist_key " + std::to_string(s.dist_key) + " has an empty node name");
        if (s.group.empty())
            fail(ErrorKind::InvalidParameter,
                 "segment dist_key " + std::to_string(s.dist_key) + " has an empty group name");
        if (!t.segments_.empty() && t.segments_.back().dist_key == s.dist_key) {
            const SegmentPlacement& prev = t.segments_.back();
            if (prev.group != s.group)
                fail(ErrorKind::InvalidParameter,
                     "segment dist_key " + std::to_string(s.dist_key) + " is in two groups: " + dq(prev.group) +
                         " and " + dq(s.group),
                     "A segment sits on one node, in one group.");
            if (prev.node != s.node)
                fail(ErrorKind::InvalidParameter,
                     "segment dist_key " + std::to_string(s.dist_key) + " is on two nodes: " + dq(prev.node) + " and " +
                         dq(s.node),
                     "A segment sits on one node, in one group.");
            continue;  // the same row twice
        }
        auto [it, inserted] = group_of_node.emplace(s.node, s.group);
        if (!inserted && it->second != s.group) {
            const std::string a = std::min(it->second, s.group), b = std::max(it->second, s.group);
            fail(ErrorKind::InvalidParameter, "node " + dq(s.node) + " is in two groups: " + dq(a) + " and " + dq(b),
                 "A group is a set of nodes; each node belongs to one.");
        }
        t.segments_.push_back(s);
    }
    // Lookups by binary search: scanning every segment per link and every link per pair of groups
    // took 38 s, deaf to cancel, on 5,000 groups and 4,999 links (a hostile review).
    for (const SegmentPlacement& s : t.segments_) t.groups_.push_back(s.group);
    std::sort(t.groups_.begin(), t.groups_.end());
    t.groups_.erase(std::unique(t.groups_.begin(), t.groups_.end()), t.groups_.end());
    if (t.segments_.empty() && !links.empty())
        fail(ErrorKind::InvalidParameter, "link costs are given but the topology is empty",
             "Link costs are between groups of the topology.");
    InterruptTicker ticker;
    for (LinkCost& l : links) {
        ticker.tick();
        if (l.group_b < l.group_a) std::swap(l.group_a, l.group_b);
        for (const std::string* g : {&l.group_a, &l.group_b})
            if (!t.has_group(*g))
                fail(
                    ErrorKind::InvalidParameter,
                    "link cost names unknown group " + dq(*g), "Groups of the topology: " + [&] {
                        std::string s;
                        for (const std::string& x : t.groups()) s += (s.empty() ? "" : ", ") + dq(x);
                        return s;
                    }() + ".");
        if (!std::isfinite(l.cost) || l.cost <= 0.0)
            fail(ErrorKind::InvalidParameter,
                 "link cost between groups " + dq(l.group_a) + " and " + dq(l.group_b) + " must be a positive number",
                 "It is " + fmt(l.cost) + ".");
    }
    std::sort(links.begin(), links.end(), [](const LinkCost& a, const LinkCost& b) {
        return std::tie(a.group_a, a.group_b, a.cost) < std::tie(b.group_a, b.group_b, b.cost);
    });
    for (const LinkCost& l : links) {
        if (!t.links_.empty() && t.links_.back().group_a == l.group_a && t.links_.back().group_b == l.group_b) {
            if (t.links_.back().cost != l.cost)
                fail(ErrorKind::InvalidParameter,
                     "link cost between groups " + dq(l.group_a) + " and " + dq(l.group_b) +
                         " is given twice: " + fmt(t.links_.back().cost, 17) + " and " + fmt(l.cost, 17),
                     "Costs are symmetric: give each pair of groups once.");
            continue;
        }
        t.links_.push_back(l);
    }
    return t;
}

const SegmentPlacement* Topology::find(int32_t dist_key) const {
    auto it = std::lower_bound(segments_.begin(), segments_.end(), dist_key,
                               [](const SegmentPlacement& s, int32_t k) { return s.dist_key < k; });
    return it != segments_.end() && it->dist_key == dist_key ? &*it : nullptr;
}

std::vector<std::string> Topology::groups() const { return groups_; }

bool Topology::has_group(const std::string& group) const {
    return std::binary_search(groups_.begin(), groups_.end(), group);
}

std::optional<double> Topology::cost(const std::string& a, const std::string& b) const {
    const std::string& x = std::min(a, b);
    const std::string& y = std::max(a, b);
    auto it = std::lower_bound(links_.begin(), links_.end(), std::tie(x, y),
                               [](const LinkCost& l, const auto& key) { return std::tie(l.group_a, l.group_b) < key; });
    if (it != links_.end() && it->group_a == x && it->group_b == y) return it->cost;
    return std::nullopt;
}

// ------------------------------------------------------------------------------------------------
// The insertion rule.

CombineDecision plan_combine(const Topology& topology, const std::vector<int32_t>& producers_in, uint64_t state_bytes,
                             const CombinePolicy& policy) {
    if (!std::isfinite(policy.cost_factor) || policy.cost_factor < 1.0)
        fail(ErrorKind::InvalidParameter, "cost_factor must be at least 1", "It is " + fmt(policy.cost_factor) + ".");
    if (!std::isfinite(policy.bytes_factor) || policy.bytes_factor < 1.0)
        fail(ErrorKind::InvalidParameter, "bytes_factor must be at least 1", "It is " + fmt(policy.bytes_factor) + ".");
    if (policy.coordinator_group && !topology.has_group(*policy.coordinator_group))
        fail(ErrorKind::InvalidParameter,
             "coordinator group " + dq(*policy.coordinator_group) + " is not in the topology",
             topology.empty() ? "The topology is empty." : "");

    std::vector<int32_t> producers = producers_in;
    std::sort(producers.begin(), producers.end());
    producers.erase(std::unique(producers.begin(), producers.end()), producers.end());

    CombineDecision d;
    d.policy = policy;
    d.state_bytes = state_bytes;
    d.producers = producers.size();
    d.coordinator_group = policy.coordinator_group;
    d.default_topology = topology.empty();
    std::map<std::string, uint64_t> per_group;
    std::set<std::string> nodes;
    for (int32_t k : producers) {
        if (topology.empty()) {
            d.group_of[k] = "default";
            continue;
        }
        const SegmentPlacement* s = topology.find(k);
        if (!s) {
            std::string known;
            std::size_t shown = 0;
            for (const SegmentPlacement& p : topology.segments()) {
                if (shown++ == 20) {
                    known += ", ...";
                    break;
                }
                known += (known.empty() ? "" : ", ") + std::to_string(p.dist_key);
            }
            fail(ErrorKind::InvalidParameter, "segment dist_key " + std::to_string(k) + " is not in the topology",
                 "The topology places dist_keys " + known + ".",
                 "Add a row for dist_key " + std::to_string(k) + ", or leave the topology empty for one group.");
        }
        d.group_of[k] = s->group;
        nodes.insert(s->node);
    }
    for (const auto& [k, g] : d.group_of) ++per_group[g];
    d.producers_per_group.assign(per_group.begin(), per_group.end());
    d.groups = per_group.size();
    d.nodes = topology.empty() ? (producers.empty() ? 0 : 1) : nodes.size();

    // Bytes crossing group boundaries: every state sent to the coordinator from outside its group.
    const std::string coord = policy.coordinator_group.value_or("");
    uint64_t crossing_producers = 0, crossing_groups = 0, max_per_group = 0;
    for (const auto& [g, n] : per_group) {
        max_per_group = std::max(max_per_group, n);
        if (!policy.coordinator_group || g != coord) {
            crossing_producers += n;
            ++crossing_groups;
        }
    }
    d.bytes_two_level = crossing_producers * state_bytes;
    d.bytes_three_level = crossing_groups * state_bytes;
    d.bytes_saved = d.bytes_two_level - d.bytes_three_level;
    d.bytes_reduction = d.bytes_three_level > 0
                            ? double(d.bytes_two_level) / double(d.bytes_three_level)
                            : (d.bytes_two_level > 0 ? std::numeric_limits<double>::infinity() : 1.0);

    // Link costs: the dearest measured link within a group of producers, the cheapest measured one
    // between two groups the states travel between.
    std::vector<std::string> involved;
    for (const auto& [g, n] : per_group) involved.push_back(g);
    if (policy.coordinator_group && !per_group.count(coord)) involved.push_back(coord);
    std::optional<double> within, between;
    InterruptTicker ticker;
    for (const std::string& g : involved) {
        ticker.tick();
        if (auto c = topology.cost(g, g)) within = std::max(within.value_or(0.0), *c);
    }
    // Every measured link between two involved groups (each pair is given once): the links, not
    // the pairs of groups, which are quadratic in the groups.
    std::sort(involved.begin(), involved.end());
    for (const LinkCost& l : topology.links()) {
        ticker.tick();
        if (l.group_a != l.group_b && std::binary_search(involved.begin(), involved.end(), l.group_a) &&
            std::binary_search(involved.begin(), involved.end(), l.group_b))
            between = std::min(between.value_or(l.cost), l.cost);
    }
    d.within_cost = within.value_or(1.0);
    d.between_cost = between;
    d.costs_measured = between.has_value();
    if (between) {
        d.cost_ratio = *between / d.within_cost;
        const double all = double(d.producers) * double(state_bytes);
        d.cost_two_level = double(d.bytes_two_level) * *between + (all - double(d.bytes_two_level)) * d.within_cost;
        const double local_intermediates = double(d.groups - crossing_groups) * double(state_bytes);
        d.cost_three_level = double(d.bytes_three_level) * *between + (all + local_intermediates) * d.within_cost;
    }

    auto check = [&](const char* name, bool passed, std::string value, std::string required) {
        d.checks.push_back({name, passed, std::move(value), std::move(required)});
        return passed;
    };
    const bool groups_ok = check("groups", d.groups >= 2, std::to_string(d.groups), ">= 2");
    const bool size_ok = check("group_size", max_per_group >= 2, std::to_string(max_per_group), ">= 2");
    const bool cost_ok = check("link_cost_gap", !d.cost_ratio || *d.cost_ratio >= policy.cost_factor,
                               d.cost_ratio ? fmt(*d.cost_ratio) : "not measured", ">= " + fmt(policy.cost_factor));
    const bool bytes_ok = check("bytes_reduction", d.bytes_reduction >= policy.bytes_factor, fmt(d.bytes_reduction),
                                ">= " + fmt(policy.bytes_factor));
    const bool saved_ok = check("bytes_saved", d.bytes_saved >= policy.min_bytes_saved, std::to_string(d.bytes_saved),
                                ">= " + std::to_string(policy.min_bytes_saved));
    d.intermediate = groups_ok && size_ok && cost_ok && bytes_ok && saved_ok;
    d.levels = d.intermediate ? 3 : 2;

    if (!groups_ok)
        d.reason = d.producers == 0     ? "there are no producers"
                   : d.default_topology ? "the topology is empty: every segment is in one group"
                                        : "all producers are in one group";
    else if (!size_ok) d.reason = "no group has 2 or more producers: an intermediate level would merge nothing";
    else if (!cost_ok)
        d.reason = "links between groups cost only " + fmt(*d.cost_ratio) + "x the links within a group (needs " +
                   fmt(policy.cost_factor) + "x)";
    else if (!bytes_ok)
        d.reason = "the bytes crossing group boundaries would fall only " + fmt(d.bytes_reduction) + "x (needs " +
                   fmt(policy.bytes_factor) + "x)";
    else if (!saved_ok)
        d.reason = "the state is too small to matter: the intermediate level would save " +
                   std::to_string(d.bytes_saved) + " bytes (needs " + std::to_string(policy.min_bytes_saved) + ")";
    else
        d.reason = "the intermediate level cuts the bytes crossing group boundaries " + fmt(d.bytes_reduction) +
                   "x, from " + std::to_string(d.bytes_two_level) + " to " + std::to_string(d.bytes_three_level) +
                   (d.costs_measured ? "" : " (link costs not measured: groups are taken to be far apart)");
    return d;
}

std::string CombineDecision::to_json() const {
    using json = nlohmann::ordered_json;
    auto opt = [](const std::optional<double>& v) { return v && std::isfinite(*v) ? json(*v) : json(nullptr); };
    json j;
    j["levels"] = levels;
    j["intermediate_level"] = intermediate;
    j["reason"] = reason;
    j["state_bytes"] = state_bytes;
    j["producers"] = producers;
    j["groups"] = groups;
    j["nodes"] = nodes;
    json per = json::object();
    for (const auto& [g, n] : producers_per_group) per[g] = n;
    j["producers_per_group"] = per;
    j["default_topology"] = default_topology;
    j["coordinator_group"] = coordinator_group ? json(*coordinator_group) : json(nullptr);
    j["bytes_crossing_groups"] = {{"two_level", bytes_two_level},
                                  {"three_level", bytes_three_level},
                                  {"reduction", std::isfinite(bytes_reduction) ? json(bytes_reduction) : json(nullptr)},
                                  {"saved", bytes_saved}};
    j["link_costs"] = {{"measured", costs_measured},
                       {"within_group", within_cost},
                       {"between_groups", opt(between_cost)},
                       {"ratio", opt(cost_ratio)}};
    j["estimated_cost"] = {{"two_level", opt(cost_two_level)}, {"three_level", opt(cost_three_level)}};
    j["thresholds"] = {{"cost_factor", policy.cost_factor},
                       {"bytes_factor", policy.bytes_factor},
                       {"min_bytes_saved", policy.min_bytes_saved}};
    json cs = json::array();
    for (const CombineCheck& c : checks)
        cs.push_back({{"check", c.name}, {"passed", c.passed}, {"value", c.value}, {"required", c.required}});
    j["checks"] = cs;
    return j.dump();
}

}  // namespace hopper
