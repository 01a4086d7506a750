// parse_architecture: hopper's native JSON and Keras Sequential to_json(). An accepted
// architecture must survive its canonical JSON: parse(to_json(a)) == a.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_common.h"
#include "hopper/config.h"

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
    hopper_fuzz::require(a.num_params() > 0 && a.num_params() <= 2147483647u, "parameter count out of range");
    return 0;
}
