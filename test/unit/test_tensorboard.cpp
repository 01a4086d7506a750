// TensorBoard event files (include/hopper/tensorboard.h): CRC-32C against its published check value,
// TFRecord framing (length, masked CRCs), and the Event messages' protobuf bytes field by field.
#include <cstdint>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "hopper/tensorboard.h"

using namespace hopper;

namespace {

uint64_t le(const std::string& s, std::size_t at, int bytes) {
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = v << 8 | uint8_t(s[at + i]);
    return v;
}

uint32_t masked(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xA282EAD8u; }

}  // namespace

TEST(TensorBoard, Crc32cCheckValues) {
    EXPECT_EQ(tensorboard::crc32c("123456789"), 0xE3069283u);  // the CRC-32C catalogue's check value
    EXPECT_EQ(tensorboard::crc32c(""), 0u);
    EXPECT_EQ(tensorboard::crc32c(std::string(32, '\0')), 0x8A9136AAu);  // RFC 3720 B.4: 32 bytes of zeros
}

TEST(TensorBoard, RecordFraming) {
    const std::string data = "hello";
    const std::string r = tensorboard::record(data);
    ASSERT_EQ(r.size(), 8u + 4u + data.size() + 4u);
    EXPECT_EQ(le(r, 0, 8), data.size());
    EXPECT_EQ(le(r, 8, 4), masked(tensorboard::crc32c(r.substr(0, 8))));
    EXPECT_EQ(r.substr(12, data.size()), data);
    EXPECT_EQ(le(r, 12 + data.size(), 4), masked(tensorboard::crc32c(data)));
}

TEST(TensorBoard, FileVersionEvent) {
    const std::string e = tensorboard::file_version_event(1.5);
    std::string want = "\x09";  // field 1 (wall_time), 64-bit
    double w = 1.5;
    char bits[8];
    std::memcpy(bits, &w, 8);
    want.append(bits, 8);
    want +=
        "\x1a\x0d"
        "brain.Event:2";  // field 3 (file_version), length 13
    EXPECT_EQ(e, want);
}

TEST(TensorBoard, ScalarEvent) {
    const std::string e = tensorboard::scalar_event(2.0, 300, "epoch_loss", 0.25f);
    std::string want = "\x09";
    double w = 2.0;
    char bits[8];
    std::memcpy(bits, &w, 8);
    want.append(bits, 8);
    want += std::string("\x10\xac\x02", 3);  // field 2 (step), varint 300
    // field 5 (summary, 19 bytes): field 1 (value, 17 bytes): tag "epoch_loss", simple_value 0.25f
    want += std::string("\x2a\x13\x0a\x11\x0a\x0a", 6) + "epoch_loss" + std::string("\x15\x00\x00\x80\x3e", 5);
    EXPECT_EQ(e, want);
}
