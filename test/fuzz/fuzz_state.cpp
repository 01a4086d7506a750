// The model state format: deserialize_state, inspect_state, load_frozen_model, restore_for_config.
//
// Each input is tried twice: as given (a random change almost always breaks the CRC-32, which
// must be refused cleanly), and with its trailing CRC recomputed, so that mutations get past the
// checksum and reach the header, size and configuration checks. An accepted state must be
// accepted by every reader alike, survive serialize(deserialize(s)), restore into its own
// configuration, predict, train one buffer and be evaluated without undefined behaviour.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <zlib.h>

#include "fuzz_common.h"
#include "hopper/metrics.h"
#include "hopper/network.h"
#include "hopper/resources.h"
#include "hopper/state_format.h"
#include "hopper/trainer.h"

namespace {

using namespace hopper;
using hopper_fuzz::accepts;
using hopper_fuzz::require;

void exercise(const std::string& bytes) {
    StateSummary summary;
    const bool inspected = accepts([&] { summary = inspect_state(bytes); });
    FrozenModel frozen;
    const bool loaded = accepts([&] { frozen = load_frozen_model(bytes); });
    std::vector<Trainer> trainer;  // Trainer has no default constructor
    const bool restored = accepts([&] { trainer.push_back(deserialize_state(bytes)); });
    require(inspected == loaded && loaded == restored, "state readers disagree on whether a state is valid");
    if (!inspected) return;

    require(summary.num_params == frozen.params.size() && frozen.params.size() == trainer[0].params().size(),
            "state readers disagree on the parameter count");
    require(summary.config.to_json() == frozen.config.to_json(), "state readers disagree on the configuration");

    // Round trip: what hopper writes back reads the same, and is a fixed point from then on.
    const std::string again = serialize_state(trainer[0]);
    std::vector<Trainer> reread;
    require(accepts([&] { reread.push_back(deserialize_state(again)); }), "a re-serialized state is refused");
    require(serialize_state(reread[0]) == again, "serialize(deserialize(s)) is not stable");
    require(std::memcmp(reread[0].params().data(), frozen.params.data(), 4 * frozen.params.size()) == 0,
            "parameters change through serialization");

    // Warm start into its own configuration must work and keep the parameters.
    std::vector<Trainer> warm;
    require(accepts([&] { warm.push_back(restore_for_config(bytes, frozen.config)); }),
            "a state does not restore into its own configuration");
    // Into another architecture it must be refused (or accepted only if equal).
    ModelConfig other = frozen.config;
    other.arch.layers.back().units += 1;
    accepts([&] { restore_for_config(bytes, other); });

    // Use the model: predict, evaluate and train one small buffer. Sizes are bounded by the input
    // (parameters fill the state), so this stays cheap.
    const Architecture& a = frozen.config.arch;
    const int in = a.input_dim, out = a.output_dim();
    if (std::size_t(in) * 3 > (1u << 20) || std::size_t(out) * 3 > (1u << 20)) return;
    // A few parameters can still mean large feature maps (a convolution over a big image): keep
    // each input cheap.
    if (training_bytes(frozen.config, 3) > (std::size_t(64) << 20)) return;
    std::vector<float> x(std::size_t(in) * 3), y(std::size_t(out) * 3, 0.0f);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = float(int(i % 7) - 3) * 0.25f;
    for (int r = 0; r < 3; ++r) y[std::size_t(r) * out + std::size_t(r % out)] = 1.0f;
    Network net(a);
    MatrixF pred;
    ConstMatrixMap xm(x.data(), in, 3), ym(y.data(), out, 3);
    net.predict(frozen.params.data(), xm, pred);
    EvalTotals totals;
    totals.metric_sums.assign(frozen.config.compile.metrics.size(), 0.0);
    MatrixF scratch;
    evaluate_batch(net, frozen.params.data(), xm, ym, frozen.config.compile, totals, scratch);
    require(accepts([&] { warm[0].train_buffer(x.data(), y.data(), 3); }), "training a restored state failed");
    std::vector<Trainer> after;
    require(accepts([&] { after.push_back(deserialize_state(serialize_state(warm[0]))); }),
            "a trained state is refused");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
    std::string bytes(reinterpret_cast<const char*>(data), size);
    exercise(bytes);
    if (size >= 4) {
        uint32_t crc = hopper::crc32_of(std::string_view(bytes).substr(0, size - 4));
        std::memcpy(&bytes[size - 4], &crc, 4);
        exercise(bytes);
    }
    return 0;
}
