#include "hopper/state_format.h"

#include <cmath>
#include <cstring>
#include <limits>

#include <zlib.h>

#ifdef HOPPER_WITH_ISAL
#include <isa-l/crc.h>
#endif

#include "hopper/error.h"

namespace hopper {

namespace {

constexpr char kMagic[8] = {'H', 'O', 'P', 'P', 'E', 'R', 'M', 'S'};
static_assert(sizeof(float) == 4 && sizeof(double) == 8, "IEEE float sizes expected");

// The format is little-endian; hopper's targets (x86-64, aarch64 Linux) are too.
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "hopper's model state format assumes a little-endian host"
#endif

template <typename T>
void put(std::string& out, std::size_t offset, T value) {
    std::memcpy(&out[offset], &value, sizeof(T));
}

template <typename T>
T get(std::string_view in, std::size_t offset) {
    T value;
    std::memcpy(&value, in.data() + offset, sizeof(T));
    return value;
}

[[noreturn]] void corrupt(const std::string& what, const std::string& detail = {}) {
    fail(ErrorKind::Data, "invalid model state: " + what, detail,
         "The value is not a hopper model state, or it was truncated or modified.");
}

struct Parsed {
    uint16_t version;
    ModelConfig config;
    TrainCounters counters;
    uint64_t num_params;
    uint32_t num_slots;
    std::size_t params_offset;
    std::size_t slot_floats;  // num_slots * the trainable parameters
};

// Bytes of the iteration totals (version 2): loss sum, sample count, one sum per compile metric.
std::size_t totals_bytes(uint16_t version, const ModelConfig& config) {
    return version < 2 ? 0 : 8 * (2 + config.compile.metrics.size());
}

Parsed parse(std::string_view bytes) {
    if (bytes.size() < kStateHeaderSize + 4)
        corrupt("too short", "It has " + std::to_string(bytes.size()) + " bytes; a state has at least " +
                                 std::to_string(kStateHeaderSize + 4) + ".");
    if (std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) corrupt("wrong magic number");
    uint16_t version = get<uint16_t>(bytes, 8);
    if (version < kOldestStateFormatVersion || version > kStateFormatVersion)
        fail(ErrorKind::Data, "unsupported model state format version " + std::to_string(version),
             "This hopper reads versions " + std::to_string(kOldestStateFormatVersion) + " to " +
                 std::to_string(kStateFormatVersion) + ".",
             "Use the hopper version that wrote the state.");
    uint32_t stored_crc = get<uint32_t>(bytes, bytes.size() - 4);
    if (crc32_of(bytes.substr(0, bytes.size() - 4)) != stored_crc) corrupt("checksum mismatch");

    Parsed p;
    p.version = version;
    uint16_t flags = get<uint16_t>(bytes, 10);
    if (flags & ~uint16_t(1)) corrupt("unknown flags");
    uint32_t config_len = get<uint32_t>(bytes, 12);
    p.counters.diverged = (flags & 1) != 0;
    p.counters.steps = get<uint64_t>(bytes, 16);
    p.counters.samples_seen = get<uint64_t>(bytes, 24);
    p.counters.visits = get<uint64_t>(bytes, 32);
    p.counters.last_visit_loss_sum = get<double>(bytes, 40);
    p.counters.last_visit_samples = get<uint64_t>(bytes, 48);
    p.num_params = get<uint64_t>(bytes, 56);
    p.num_slots = get<uint32_t>(bytes, 64);
    p.counters.iterations = get<uint32_t>(bytes, 68);
    if (version == 1 && p.counters.iterations != 0) corrupt("reserved field is not zero");

    const std::size_t body = bytes.size() - 4 - kStateHeaderSize;
    if (config_len > body) corrupt("configuration length exceeds the state");
    if (p.num_slots > 8) corrupt("too many optimizer slots", std::to_string(p.num_slots));
    try {
        p.config = parse_model_config(bytes.substr(kStateHeaderSize, config_len));
    } catch (const Error& e) { corrupt("its configuration cannot be read", e.message()); }
    const std::size_t totals = totals_bytes(version, p.config);
    if (body - config_len < totals) corrupt("too short for its training totals");
    const std::size_t float_bytes = body - config_len - totals;
    if (float_bytes % 4 != 0) corrupt("parameter area is not a whole number of floats");
    const uint64_t floats = float_bytes / 4;
    // Each slot holds the trainable parameters (all of them unless layers are frozen); an
    // architecture of another size is named by the check after this one.
    const uint64_t trainable =
        p.config.arch.num_params() == p.num_params ? p.config.arch.num_trainable_params() : p.num_params;
    if (p.num_params == 0 || p.num_params > floats || floats - p.num_params != uint64_t(p.num_slots) * trainable)
        corrupt("parameter count does not match the state size",
                std::to_string(p.num_params) + " parameters with " + std::to_string(p.num_slots) +
                    " optimizer slots do not fill " + std::to_string(float_bytes) + " bytes.");
    if (p.config.arch.num_params() != p.num_params)
        corrupt("parameter count does not match its architecture",
                "The architecture " + p.config.arch.shape_string() + " has " +
                    std::to_string(p.config.arch.num_params()) + " parameters; the state holds " +
                    std::to_string(p.num_params) + ".");
    if (uint32_t(Optimizer::slots_for(p.config.compile.optimizer.kind)) != p.num_slots)
        corrupt("optimizer slots do not match its optimizer");
    if (totals > 0) {
        std::size_t at = kStateHeaderSize + config_len + float_bytes;
        EvalTotals& t = p.counters.iteration_totals;
        t.loss_sum = get<double>(bytes, at);
        t.count = get<double>(bytes, at + 8);
        t.metric_sums.resize(p.config.compile.metrics.size());
        for (std::size_t i = 0; i < t.metric_sums.size(); ++i) t.metric_sums[i] = get<double>(bytes, at + 16 + 8 * i);
        bool finite = std::isfinite(t.loss_sum) && std::isfinite(t.count) && t.count >= 0;
        for (double v : t.metric_sums) finite = finite && std::isfinite(v);
        if (!finite) corrupt("training totals are not finite");
        if (t.count == 0 && t.metric_sums.empty()) t = EvalTotals{};
    }
    p.params_offset = kStateHeaderSize + config_len;
    p.slot_floats = std::size_t(trainable) * p.num_slots;
    return p;
}

}  // namespace

uint32_t crc32_of(std::string_view bytes) {
#ifdef HOPPER_WITH_ISAL
    // ISA-L's gzip CRC-32 is zlib's (same reflected polynomial, same inversions), with carry-less
    // multiplications: 24.6 GB/s against zlib 1.2.13's 2.85 on this VM (8 MB, AVX-512). A model state
    // is checked at every load and written at every store, hop after hop: fit_multiple of 4
    // configurations on 2 segments spent ~16 ms an iteration in zlib's crc32 (perf, 2026-11-30).
    return crc32_gzip_refl(0, reinterpret_cast<const unsigned char*>(bytes.data()), uint64_t(bytes.size()));
#else
    uLong crc = crc32(0L, Z_NULL, 0);
    // zlib takes uInt lengths: feed large states in pieces.
    const char* p = bytes.data();
    std::size_t left = bytes.size();
    while (left > 0) {
        uInt chunk = left > (1u << 30) ? (1u << 30) : uInt(left);
        crc = crc32(crc, reinterpret_cast<const Bytef*>(p), chunk);
        p += chunk;
        left -= chunk;
    }
    return uint32_t(crc);
#endif
}

std::string with_iterations(std::string_view bytes, uint32_t iterations) {
    const Parsed p = parse(bytes);  // a well-formed state of a version this hopper reads
    std::string out(bytes);
    if (p.version < 2) {
        // Version 1 has no training totals: they go in, empty, before the checksum.
        out.resize(out.size() - 4);
        out.append(totals_bytes(2, p.config), '\0');
        out.append(4, '\0');
    } else {
        const std::size_t n = totals_bytes(2, p.config);
        std::memset(&out[out.size() - 4 - n], 0, n);
    }
    put<uint16_t>(out, 8, kStateFormatVersion);
    put<uint32_t>(out, 68, iterations);
    put<uint32_t>(out, out.size() - 4, crc32_of(std::string_view(out).substr(0, out.size() - 4)));
    return out;
}

std::size_t state_size(const ModelConfig& config) {
    const std::size_t p = config.arch.num_params();
    const std::size_t k = Optimizer::slots_for(config.compile.optimizer.kind);
    return kStateHeaderSize + config.to_json().size() + 4 * (p + k * config.arch.num_trainable_params()) +
           totals_bytes(kStateFormatVersion, config) + 4;
}

std::string serialize_state(const Trainer& trainer) {
    const std::string config = trainer.config().to_json();
    const auto& params = trainer.params();
    const auto& slots = trainer.optimizer().slots();
    const std::size_t totals = totals_bytes(kStateFormatVersion, trainer.config());
    const std::size_t total = kStateHeaderSize + config.size() + 4 * (params.size() + slots.size()) + totals + 4;
    std::string out(total, '\0');
    std::memcpy(&out[0], kMagic, sizeof kMagic);
    const TrainCounters& c = trainer.counters();
    put<uint16_t>(out, 8, kStateFormatVersion);
    put<uint16_t>(out, 10, c.diverged ? 1 : 0);
    put<uint32_t>(out, 12, uint32_t(config.size()));
    put<uint64_t>(out, 16, c.steps);
    put<uint64_t>(out, 24, c.samples_seen);
    put<uint64_t>(out, 32, c.visits);
    put<double>(out, 40, c.last_visit_loss_sum);
    put<uint64_t>(out, 48, c.last_visit_samples);
    put<uint64_t>(out, 56, params.size());
    put<uint32_t>(out, 64, uint32_t(trainer.optimizer().num_slots()));
    put<uint32_t>(out, 68, c.iterations);
    std::size_t at = kStateHeaderSize;
    std::memcpy(&out[at], config.data(), config.size());
    at += config.size();
    std::memcpy(&out[at], params.data(), 4 * params.size());
    at += 4 * params.size();
    if (!slots.empty()) std::memcpy(&out[at], slots.data(), 4 * slots.size());
    at += 4 * slots.size();
    const EvalTotals& t = c.iteration_totals;
    if (t.count > 0 || t.loss_sum != 0) {
        if (t.metric_sums.size() != trainer.config().compile.metrics.size())
            fail(ErrorKind::Internal, "training totals do not match the metric list");
        put<double>(out, at, t.loss_sum);
        put<double>(out, at + 8, t.count);
        for (std::size_t i = 0; i < t.metric_sums.size(); ++i) put<double>(out, at + 16 + 8 * i, t.metric_sums[i]);
    }
    at += totals;
    put<uint32_t>(out, at, crc32_of(std::string_view(out).substr(0, at)));
    return out;
}

StateSummary inspect_state(std::string_view bytes) {
    Parsed p = parse(bytes);
    StateSummary s;
    s.format_version = p.version;
    s.config = std::move(p.config);
    s.counters = p.counters;
    s.num_params = p.num_params;
    s.num_slots = p.num_slots;
    s.bytes = bytes.size();
    return s;
}

FrozenModel load_frozen_model(std::string_view bytes) {
    Parsed p = parse(bytes);
    FrozenModel m;
    m.config = std::move(p.config);
    m.params.resize(p.num_params);
    std::memcpy(m.params.data(), bytes.data() + p.params_offset, 4 * m.params.size());
    m.checksum = get<uint32_t>(bytes, bytes.size() - 4);
    return m;
}

Trainer deserialize_state(std::string_view bytes) {
    Parsed p = parse(bytes);
    std::vector<float> params(p.num_params);
    std::vector<float> slots(p.slot_floats);
    std::memcpy(params.data(), bytes.data() + p.params_offset, 4 * params.size());
    if (!slots.empty()) std::memcpy(slots.data(), bytes.data() + p.params_offset + 4 * params.size(), 4 * slots.size());
    return Trainer(std::move(p.config), std::move(params), std::move(slots), p.counters);
}

Trainer restore_for_config(std::string_view bytes, const ModelConfig& requested, bool* optimizer_kept) {
    Parsed p = parse(bytes);
    // A regression target's scaling travels with the weights trained under it: a model continued on a
    // table packed again (or one trained raw, before targets were standardized) keeps its own, or its
    // outputs would change scale at once (z * s + m of a model that learnt y).
    ModelConfig config = requested;
    config.arch.target_scaling = p.config.arch.target_scaling;
    if (!p.config.arch.same_layers(config.arch))
        fail(ErrorKind::InvalidParameter, "model state does not match the architecture",
             "The state was trained with architecture " + p.config.arch.shape_string() + " (" +
                 p.config.arch.to_json() + "); the requested architecture is " + config.arch.shape_string() + " (" +
                 config.arch.to_json() + ").",
             "Warm start and transfer learning need the same architecture.");
    std::vector<float> params(p.num_params);
    std::memcpy(params.data(), bytes.data() + p.params_offset, 4 * params.size());
    // Slots are kept for the same optimizer over the same trainable parameters; freezing other
    // layers (transfer learning) starts the optimizer afresh, as a new optimizer does.
    const bool keep = p.config.compile.optimizer.kind == config.compile.optimizer.kind && p.config.arch == config.arch;
    std::vector<float> slots =
        keep ? std::vector<float>(p.slot_floats)
             : Optimizer::initial_slots(config.compile.optimizer, config.arch.num_trainable_params());
    TrainCounters counters;
    if (keep) {
        if (!slots.empty())
            std::memcpy(slots.data(), bytes.data() + p.params_offset + 4 * params.size(), 4 * slots.size());
        counters = p.counters;
    } else {
        counters.samples_seen = p.counters.samples_seen;
        counters.visits = p.counters.visits;
        counters.iterations = p.counters.iterations;
    }
    counters.diverged = false;
    counters.iteration_totals = EvalTotals{};  // a new run counts its own (and may ask for other metrics)
    if (optimizer_kept) *optimizer_kept = keep;
    return Trainer(config, std::move(params), std::move(slots), counters);
}

bool is_model_state(std::string_view bytes) {
    return bytes.size() >= sizeof kMagic && std::memcmp(bytes.data(), kMagic, sizeof kMagic) == 0;
}

std::string state_from_weights(std::string_view weights, const ModelConfig& config) {
    if (is_model_state(weights)) return std::string(weights);
    // Without its input width an architecture has no parameter count to check the weights against.
    if (!config.arch.resolved())
        fail(ErrorKind::InvalidParameter, "model_weights need the architecture's input width",
             "The architecture leaves input_dim (or an embedding's column binding) to the packed table; the "
             "weights' layout depends on it.",
             "Give input_dim (and each embedding's input_dim, offset and width) with the weights.");
    const std::size_t n = config.arch.num_params();
    if (weights.size() != 4 * n)
        fail(ErrorKind::InvalidParameter,
             "model_weights have " + std::to_string(weights.size()) + " bytes; the architecture " +
                 config.arch.shape_string() + " needs " + std::to_string(4 * n),
             "Keras weights are " + std::to_string(n) +
                 " float32 values (4 bytes each), every layer's arrays in Keras' get_weights() order; "
                 "a hopper model state starts with \"HOPPERMS\".",
             "Pass the weights of this architecture, e.g. numpy.concatenate([w.flatten() for w in "
             "model.get_weights()]).astype('<f4').tobytes(), or a model state of a hopper model.");
    Trainer t(config);
    std::memcpy(t.params().data(), weights.data(), weights.size());
    for (std::size_t i = 0; i < n; ++i)
        if (!std::isfinite(t.params()[i]))
            fail(ErrorKind::InvalidParameter, "model_weights hold a value that is not finite",
                 "Weight " + std::to_string(i) + " of " + std::to_string(n) + " is NaN or infinite.");
    return serialize_state(t);
}

}  // namespace hopper
