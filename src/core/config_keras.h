// Import of a Keras Sequential model's to_json() (config_keras.cpp). Not installed.
#pragma once

#include "config_json.h"

namespace hopper::cfg {

// `j` is the parsed model, an object with "class_name".
Architecture parse_keras_architecture(const json& j);

}  // namespace hopper::cfg
