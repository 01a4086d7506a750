// parse_architecture: hopper's native JSON and Keras Sequential and functional to_json(). An accepted
// architecture must survive its canonical JSON: parse(to_json(a)) == a, and make a network whose
// layout and shapes agree with it (once resolved, when it leaves its input width to the table).
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "fuzz_common.h"
#include "hopper/config.h"
#include "hopper/network.h"
#include "hopper/resources.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
    using namespace hopper;
    std::string_view text(reinterpret_cast<const char*>(data), size);
    Architecture a;
    if (!hopper_fuzz::accepts([&] { a = parse_architecture(text); })) return 0;
    const std::string canonical = a.to_json();
    Architecture b;
    hopper_fuzz::require(hopper_fuzz::accepts([&] { b = parse_architecture(canonical); }),
                         "canonical architecture JSON is refused:", canonical);
    hopper_fuzz::require(a == b, "architecture changes through its canonical JSON:", canonical);
    hopper_fuzz::require(b.to_json() == canonical, "canonical architecture JSON is not stable:", canonical);
    if (!a.resolved()) {
        // Left to the packed table: no network until resolved, then as any other (a table of 8
        // features without a recipe: embeddings are refused).
        hopper_fuzz::require(!hopper_fuzz::accepts([&] { Network n(a); }),
                             "an unresolved architecture has a network:", canonical);
        if (!hopper_fuzz::accepts([&] { a = resolve_inputs(a, 8, nullptr); })) return 0;
        hopper_fuzz::require(a.resolved(), "a resolved architecture is not resolved:", a.to_json());
        hopper_fuzz::require(hopper_fuzz::accepts([&] { b = parse_architecture(a.to_json()); }) && a == b,
                             "a resolved architecture does not survive its canonical JSON:", a.to_json());
    }
    hopper_fuzz::require(a.num_params() > 0 && a.num_params() <= 2147483647u, "parameter count out of range");
    // The network lays out what the architecture counts (no allocation of parameters here), its
    // output is the flat vector the architecture says, and the memory plan is computable.
    std::vector<Network> net;
    hopper_fuzz::require(hopper_fuzz::accepts([&] { net.emplace_back(a); }),
                         "an accepted architecture has no network:", canonical);
    hopper_fuzz::require(net[0].num_params() == a.num_params(),
                         "network and architecture count parameters differently:", canonical);
    hopper_fuzz::require(net[0].shapes().back().flat && net[0].shapes().back().size() == uint64_t(a.output_dim()) &&
                             net[0].shapes().front().size() == uint64_t(a.input_dim),
                         "network shapes disagree with the architecture:", canonical);
    ModelConfig c;
    c.arch = a;
    hopper_fuzz::require(training_bytes(c, 64) > inference_bytes(c, 1), "memory plan out of order:", canonical);
    return 0;
}
