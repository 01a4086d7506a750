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

// How a layer kind is written in hopper's native JSON: one entry per kind in native_layer_forms().
// The keys every kind has (activation, dropout) and the groups below are handled once; a kind's
// own fields by its hooks (null where it has none).
struct NativeLayerForm {
    LayerKind kind;
    const char* type;               // its "type" (to_string(LayerKind)); stored states hold it: never change it
    std::vector<std::string> keys;  // its keys, canonical order (Dense, the default type, has no "type")
    bool window;                    // strides and padding (Conv2D, pooling)
    bool kernel;                    // use_bias and initializer (Dense, Conv2D)
    // Reads its sizes (before strides and activation), and its options (after the initializer).
    void (*read_sizes)(const json& lj, const std::string& where, Layer& l);
    void (*read_options)(const json& lj, const std::string& where, Layer& l);
    void (*write)(const Layer& l, ojson& lj);                 // its fields, after "type"
    bool (*same)(const Layer& a, const Layer& b);             // its fields equal
    void (*check)(const Layer& l, const std::string& where);  // range checks of a hand-built layer
};
const std::vector<NativeLayerForm>& native_layer_forms();
const NativeLayerForm& native_form(LayerKind kind);  // Internal for a value outside the enum

}  // namespace hopper::cfg
