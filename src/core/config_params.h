// Compile parameters (config_compile.cpp: optimizer, loss, metrics and their options, read through
// the vocabularies of vocabulary.h) and fit parameters (config_fit.cpp: batch_size, epochs, seed),
// each from a JSON object or MADlib's text (config_text.h). Not installed.
#pragma once

#include "config_json.h"

namespace hopper::cfg {

// Interpret an already parsed object (JSON form, or MADlib text turned into an object).
CompileParams compile_from_object(const json& obj);
FitParams fit_from_object(const json& obj);

// Range checks of each part on its own (used again by resolve_config for hand-built structs).
void validate_compile(const CompileParams& c);
void validate_fit(const FitParams& f);

ojson compile_to_ojson(const CompileParams& c);
ojson fit_to_ojson(const FitParams& f);

}  // namespace hopper::cfg
