#include "hopper/tensorboard.h"

#include <array>
#include <cstring>

namespace hopper::tensorboard {

namespace {

const std::array<uint32_t, 256>& crc32c_table() {
    static const std::array<uint32_t, 256> table = [] {
        std::array<uint32_t, 256> t{};
        for (uint32_t i = 0; i < 256; ++i) {
            uint32_t c = i;
            for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;  // reflected Castagnoli
            t[i] = c;
        }
        return t;
    }();
    return table;
}

// TFRecord stores CRCs masked, so that a CRC of data holding CRCs stays well distributed.
uint32_t masked(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xA282EAD8u; }

void put_le(std::string& out, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out.push_back(char((v >> (8 * i)) & 0xFF));
}

// Protobuf wire format: varints, and fields as (number << 3 | wire type) then the value.
void put_varint(std::string& out, uint64_t v) {
    while (v >= 0x80) {
        out.push_back(char((v & 0x7F) | 0x80));
        v >>= 7;
    }
    out.push_back(char(v));
}
void put_bytes_field(std::string& out, int field, std::string_view bytes) {
    put_varint(out, uint64_t(field) << 3 | 2);
    put_varint(out, bytes.size());
    out.append(bytes);
}
void put_double_field(std::string& out, int field, double v) {
    put_varint(out, uint64_t(field) << 3 | 1);
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    put_le(out, bits, 8);
}
void put_float_field(std::string& out, int field, float v) {
    put_varint(out, uint64_t(field) << 3 | 5);
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    put_le(out, bits, 4);
}

}  // namespace

uint32_t crc32c(std::string_view bytes) {
    const auto& t = crc32c_table();
    uint32_t c = 0xFFFFFFFFu;
    for (unsigned char b : bytes) c = t[(c ^ b) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

std::string record(std::string_view data) {
    std::string header;
    put_le(header, data.size(), 8);
    std::string out = header;
    put_le(out, masked(crc32c(header)), 4);
    out.append(data);
    put_le(out, masked(crc32c(data)), 4);
    return out;
}

// tensorflow.Event: wall_time = 1 (double), step = 2 (int64), file_version = 3 (string),
// summary = 5 (Summary: value = 1, repeated Value: tag = 1, simple_value = 2 (float)).
std::string file_version_event(double wall_time) {
    std::string event;
    put_double_field(event, 1, wall_time);
    put_bytes_field(event, 3, "brain.Event:2");
    return event;
}

std::string scalar_event(double wall_time, int64_t step, std::string_view tag, float value) {
    std::string v;
    put_bytes_field(v, 1, tag);
    put_float_field(v, 2, value);
    std::string summary;
    put_bytes_field(summary, 1, v);
    std::string event;
    put_double_field(event, 1, wall_time);
    put_varint(event, uint64_t(2) << 3 | 0);
    put_varint(event, uint64_t(step));
    put_bytes_field(event, 5, summary);
    return event;
}

}  // namespace hopper::tensorboard
