// parse_fit_params: a JSON object or MADlib's text form. Accepted parameters must survive their
// canonical JSON.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_common.h"
#include "hopper/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
    using namespace hopper;
    std::string_view text(reinterpret_cast<const char*>(data), size);
    FitParams f;
    if (!hopper_fuzz::accepts([&] { f = parse_fit_params(text); })) return 0;
    const std::string canonical = f.to_json();
    FitParams again;
    hopper_fuzz::require(hopper_fuzz::accepts([&] { again = parse_fit_params(canonical); }),
                         "canonical fit parameters are refused:", canonical);
    hopper_fuzz::require(again.to_json() == canonical,
                         "fit parameters change through canonical JSON:", canonical + " became " + again.to_json());
    hopper_fuzz::require(f.batch_size > 0 && f.epochs > 0, "accepted fit parameters out of range", canonical);
    return 0;
}
