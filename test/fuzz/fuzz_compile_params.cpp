// parse_compile_params: a JSON object or MADlib's text form. Accepted parameters must survive
// their canonical JSON.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_common.h"
#include "hopper/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
    using namespace hopper;
    std::string_view text(reinterpret_cast<const char*>(data), size);
    CompileParams c;
    if (!hopper_fuzz::accepts([&] { c = parse_compile_params(text); })) return 0;
    const std::string canonical = c.to_json();
    CompileParams again;
    hopper_fuzz::require(hopper_fuzz::accepts([&] { again = parse_compile_params(canonical); }),
                         "canonical compile parameters are refused:", canonical);
    hopper_fuzz::require(again.to_json() == canonical,
                         "compile parameters change through canonical JSON:", canonical + " became " + again.to_json());
    return 0;
}
