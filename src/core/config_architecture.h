// hopper's native architecture JSON (config_architecture.cpp): reading it, the checks of every
// architecture (native, Keras or hand-built), the canonical JSON, and the layer options both forms
// share. Includes only config_json.h. Not installed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config_json.h"

namespace hopper::cfg {

bool activation_from_name(std::string_view name, Activation& out);
bool padding_from_name(std::string_view name, Padding& out);  // "valid", "same" (any case)
// A kernel, pool or stride size: an integer n (n x n) or a list [h, w], each in 1..kMaxDim.
bool window_size(const json& v, int& h, int& w);
// Refuses a size window_size did not accept: Limit for a part above kMaxDim, else InvalidParameter.
[[noreturn]] void bad_window_size(const std::string& key, const std::string& where, const json& v);
bool initializer_from_name(std::string_view name, Initializer& out);
Initializer default_initializer(Activation a);

// Checks the limits of an architecture. labels[i], when given, names layer i in messages
// ("layer 2" or `Keras layer 3 ("dense_1")`); `input_label` names where input_dim came from.
void validate_architecture(const Architecture& arch, const std::vector<std::string>* labels = nullptr,
                           const std::string& input_label = "\"input_dim\"");

Architecture parse_native_architecture(const json& j);
ojson architecture_to_ojson(const Architecture& a);

}  // namespace hopper::cfg
