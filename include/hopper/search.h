// Model selection: the configurations of a model selection table, built from lists
// (hopper.load_model_selection_table) or from a search space (hopper.generate_model_configs: grid
// or seeded random search). Every configuration this file produces is checked with the same
// parsers fit_multiple uses, so a model selection table never holds a configuration that
// fit_multiple would refuse.
//
// Search spaces are JSON objects, one for compile parameters and one for fit parameters:
//   {"optimizer": ["sgd", "adam"], "learning_rate": [0.01, 0.1], "loss": "categorical_crossentropy",
//    "metrics": ["accuracy"]}
// Each key is a parameter name of compile_params / fit_params and each value is
//   * a list: the values to try (grid: each one; random: one chosen uniformly);
//   * a scalar (string, number, boolean, null): a fixed value;
//   * a distribution (random search only), an object with one key:
//       {"uniform": [low, high]}      a number uniform in [low, high]
//       {"log_uniform": [low, high]}  a number whose logarithm is uniform (learning rates), low > 0
//       {"int_uniform": [low, high]}  an integer uniform in low..high, both ends included
//     Drawn numbers are rounded to 6 significant digits (readable, and the same on every platform
//     even where exp/log differ in the last bit).
// "metrics" takes a list as its value, so in the compile space a list of names is that fixed
// value (MADlib's form, ["accuracy"]) and a list of lists gives the choices ([["accuracy"], []]).
// The compile space may also hold "optimizer_params_list": a list of sub-spaces (MADlib's name),
// e.g. [{"optimizer": "sgd", "momentum": [0.9, 0.99]}, {"optimizer": "adam", "beta_1": [0.9]}]:
// optimizer arguments that only make sense together. The space is then the union over the
// sub-spaces, each combined with the other keys.
//
// Order (the mst_key order): model_id slowest, then compile parameters, then fit parameters. A
// grid enumerates keys in alphabetical order with the last key varying fastest and values in the
// order listed (sub-spaces of optimizer_params_list in the order listed). Random search draws
// configurations in order from one seeded stream (hopper/rng.h), so a random_state reproduces the
// same table on every platform.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hopper/config.h"

namespace hopper {

// Most configurations one call creates (Error(Limit) beyond it).
constexpr std::size_t kMaxModelConfigs = 10000;

// One row of a model selection table; its mst_key is its 1-based position.
struct SelectionEntry {
    int32_t model_id = 0;
    std::string compile_params;
    std::string fit_params;

    bool operator==(const SelectionEntry& o) const {
        return model_id == o.model_id && compile_params == o.compile_params && fit_params == o.fit_params;
    }
};

// hopper.load_model_selection_table: every model_id x compile x fit (in that order, fit fastest),
// strings kept as given. Refuses empty lists, a string the parsers refuse (naming the list and
// element), duplicates (the same model_id twice, or two strings with the same meaning, e.g.
// "lr=0.1" and "learning_rate=0.1": a model selection table never trains one configuration twice)
// and more than kMaxModelConfigs rows.
std::vector<SelectionEntry> selection_cross_product(const std::vector<int32_t>& model_ids,
                                                    const std::vector<std::string>& compile_params_list,
                                                    const std::vector<std::string>& fit_params_list);

enum class SearchType { Grid, Random };
SearchType parse_search_type(std::string_view text);  // "grid" or "random", any case
const char* to_string(SearchType t);

struct SearchSpec {
    std::vector<int32_t> model_ids;
    std::string compile_space = "{}";  // JSON object (see above)
    std::string fit_space = "{}";
    SearchType type = SearchType::Grid;
    std::optional<int64_t> num_configs;  // random search: required
    std::optional<uint64_t> seed;        // random search: required (the port draws one if the user gave none)
};

// hopper.generate_model_configs. Grid: model_ids x compile grid x fit grid, refusing
// distributions, duplicate configurations and more than kMaxModelConfigs. Random: num_configs
// distinct configurations (model_id drawn uniformly too), refusing a space with fewer. The
// compile_params and fit_params are JSON objects that parse_compile_params / parse_fit_params
// accept.
std::vector<SelectionEntry> generate_model_configs(const SearchSpec& spec);

// Checks every entry against its model's architecture (resolve_config: a loss that does not fit the
// output layer, top_k over too few classes, ...). `archs` must hold every model_id of `entries`;
// errors name the configuration (1-based, its future mst_key) and its parts.
void check_against_architectures(const std::vector<SelectionEntry>& entries,
                                 const std::map<int32_t, Architecture>& archs);

}  // namespace hopper
