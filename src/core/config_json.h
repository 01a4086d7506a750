// Private helpers of every configuration parser (config_*.cpp, search.cpp): JSON text with hopper's
// checks, values shortened for messages, number conversions, the limits, and the InvalidParameter
// messages they share. The bottom of the parsers' includes: it includes none of them. Not installed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "hopper/config.h"
#include "hopper/error.h"

namespace hopper::cfg {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;  // keeps insertion order: canonical output has a fixed order

// Hard limits of the architecture (see config.h and the checks in validate_architecture; the
// per-row limit on activations is layers::kMaxRowFloats). 64 layers (after Keras' Activation and
// Dropout layers are merged into the layer before them) hold VGG-16/19 with batch normalization.
constexpr int kMaxDim = 1000000;
constexpr int kMaxLayers = 64;
constexpr uint64_t kMaxParams = 2147483647ull;  // 2^31-1 floats
// Largest text hopper parses as an architecture (a Keras to_json() of 64 layers is about 50 kB) and
// as compile or fit parameters: larger texts are refused (54000) before any parsing.
constexpr std::size_t kMaxArchitectureBytes = std::size_t(4) << 20;
constexpr std::size_t kMaxParamsTextBytes = std::size_t(1) << 20;

// Refuses (54000) a text of more than `limit` bytes before anything parses it.
void check_text_size(std::string_view text, std::size_t limit, const std::string& what);

// Parses JSON text. Syntax errors (and a duplicated key in one object, which nlohmann would
// silently resolve to the last one) are reported naming `what` ("architecture", ...).
json parse_json_text(std::string_view text, const std::string& what);

// A JSON value shortened for a message (strings quoted, long values cut).
std::string show(const json& v);
// Shortest decimal that reads back as the same double.
std::string fmt_double(double d);
// A float as the double whose shortest decimal reads back (through double) as the same float,
// so canonical JSON prints 0.2 rather than 0.20000000298023224.
double float_for_json(float f);

std::string lower(std::string_view s);
// Lowercase with underscores removed: "GlorotUniform" and "glorot_uniform" both give
// "glorotuniform".
std::string squash(std::string_view s);
std::string join(const std::vector<std::string>& names, const char* sep = ", ");

// InvalidParameter `invalid value for "key"<where>: <value>` with the detail sentence given.
[[noreturn]] void bad_value(const std::string& key, const std::string& where, const json& v, const std::string& detail,
                            const std::string& hint = {});

// Like bad_value, but a whole number above kMaxDim is a limit (54000), not a bad value (22023).
[[noreturn]] void bad_size(const std::string& key, const std::string& where, const json& v, const std::string& detail);

// Number conversions that accept JSON integers and integral floats; false if v is not such a
// number or lies outside [lo, hi].
bool as_integer(const json& v, int64_t lo, int64_t hi, int64_t& out);
bool as_double(const json& v, double& out);  // any finite JSON number

// Refuses a key of obj outside `valid`: "unsupported" for Keras options listed in `unsupported`,
// "unknown" for others, naming `what` ("compile parameters").
void check_keys(const json& obj, const std::vector<std::string>& valid, const std::vector<std::string>& unsupported,
                const std::string& what);

}  // namespace hopper::cfg
