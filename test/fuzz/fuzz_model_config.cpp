// parse_model_config: the canonical ModelConfig JSON stored inside every model state. Accepted
// configurations must be resolvable and survive their canonical JSON.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_common.h"
#include "hopper/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
    using namespace hopper;
    std::string_view text(reinterpret_cast<const char*>(data), size);
    ModelConfig c;
    if (!hopper_fuzz::accepts([&] { c = parse_model_config(text); })) return 0;
    const std::string canonical = c.to_json();
    ModelConfig again;
    hopper_fuzz::require(hopper_fuzz::accepts([&] { again = parse_model_config(canonical); }),
                         "canonical model configuration is refused:", canonical);
    hopper_fuzz::require(again.to_json() == canonical, "model configuration changes through canonical JSON:",
                         canonical + " became " + again.to_json());
    hopper_fuzz::require(again.arch == c.arch, "architecture changes through canonical JSON", canonical);
    ModelConfig resolved;
    hopper_fuzz::require(hopper_fuzz::accepts([&] { resolved = resolve_config(c.arch, c.compile, c.fit); }),
                         "a stored model configuration does not resolve:", canonical);
    return 0;
}
