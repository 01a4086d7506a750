// Arrays as the bytes Apache MADlib 2.x packs them in: float32 or int16 values, little-endian, in the
// array's row-major order (numpy's tobytes() / frombuffer() on the machines MADlib runs on).
// hopper_madlib's packed tables carry MADlib's bytea columns beside hopper's arrays, and its
// convert_array_to_bytea / convert_bytea_to_*_array are these functions.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "hopper/error.h"
#include "pg/common/datum.h"

using namespace hopper;
using namespace hopper::pg;

namespace {

template <typename Bits>
void put_little_endian(std::string& out, Bits bits) {
    for (std::size_t i = 0; i < sizeof(Bits); ++i) out.push_back(char((bits >> (8 * i)) & 0xff));
}

template <typename Bits>
Bits get_little_endian(const std::string& in, std::size_t at) {
    Bits bits = 0;
    for (std::size_t i = 0; i < sizeof(Bits); ++i) bits |= Bits(Bits(uint8_t(in[at + i])) << (8 * i));
    return bits;
}

// The bytes of a bytea as values of `width` bytes: refused when the length is not a multiple.
std::size_t value_count(const std::string& bytes, std::size_t width, const char* what) {
    if (bytes.size() % width != 0)
        fail(ErrorKind::InvalidParameter,
             std::string(what) + " has " + std::to_string(bytes.size()) + " bytes, not a multiple of " +
                 std::to_string(width),
             "It holds " + std::to_string(width) + "-byte values, as MADlib packs them.");
    return bytes.size() / width;
}

}  // namespace

// float32_bytes(real[]) -> bytea
HOPPER_FUNCTION(float32_bytes) {
    const std::vector<double> v = float_array_to_vector(PG_GETARG_DATUM(0), "the array");
    std::string out;
    out.reserve(v.size() * 4);
    for (double d : v) {
        const float f = float(d);
        uint32_t bits;
        std::memcpy(&bits, &f, sizeof bits);
        put_little_endian(out, bits);
    }
    PG_RETURN_DATUM(bytes_to_bytea(out));
}

// float32_array(bytea) -> real[]
HOPPER_FUNCTION(float32_array) {
    const std::string bytes = bytea_to_string(PG_GETARG_DATUM(0));
    std::vector<float> v(value_count(bytes, 4, "the bytea"));
    for (std::size_t i = 0; i < v.size(); ++i) {
        const uint32_t bits = get_little_endian<uint32_t>(bytes, 4 * i);
        std::memcpy(&v[i], &bits, sizeof bits);
    }
    PG_RETURN_DATUM(make_float4_array(v.data(), {int(v.size())}));
}

// int16_bytes(smallint[]) -> bytea
HOPPER_FUNCTION(int16_bytes) {
    const std::vector<int64_t> v = int_array_to_vector(PG_GETARG_DATUM(0), "the array");
    std::string out;
    out.reserve(v.size() * 2);
    for (int64_t x : v) put_little_endian(out, uint16_t(int16_t(x)));
    PG_RETURN_DATUM(bytes_to_bytea(out));
}

// int16_array(bytea) -> smallint[]
HOPPER_FUNCTION(int16_array) {
    const std::string bytes = bytea_to_string(PG_GETARG_DATUM(0));
    std::vector<int16_t> v(value_count(bytes, 2, "the bytea"));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = int16_t(get_little_endian<uint16_t>(bytes, 2 * i));
    PG_RETURN_DATUM(make_int2_array(v));
}
