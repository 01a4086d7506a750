// Tests of include/hopper/search.h: cross products, grid search, seeded random search, and their
// validation.
#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hopper/config.h"
#include "hopper/error.h"
#include "hopper/search.h"

using namespace hopper;
using nlohmann::json;

namespace {

Error expect_error(const std::function<void()>& f, ErrorKind kind, const std::string& in_message, int line) {
    try {
        f();
    } catch (const Error& e) {
        EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(kind))
            << "line " << line << ": " << e.message() << " / " << e.detail();
        EXPECT_NE(e.message().find(in_message), std::string::npos)
            << "line " << line << ": message \"" << e.message() << "\" lacks \"" << in_message << "\"";
        EXPECT_FALSE(e.message().empty());
        EXPECT_NE(e.message().back(), '.') << "line " << line << ": " << e.message();
        return e;
    } catch (const std::exception& e) {
        ADD_FAILURE() << "line " << line << ": non-hopper exception " << e.what();
        return Error(ErrorKind::Internal, "");
    }
    ADD_FAILURE() << "line " << line << ": no error thrown";
    return Error(ErrorKind::Internal, "");
}

#define EXPECT_ERR(expr, kind, text) expect_error([&] { (void)(expr); }, ErrorKind::kind, text, __LINE__)

SearchSpec grid(std::vector<int32_t> ids, std::string compile, std::string fit = "{}") {
    SearchSpec s;
    s.model_ids = std::move(ids);
    s.compile_space = std::move(compile);
    s.fit_space = std::move(fit);
    return s;
}

SearchSpec random_search(std::vector<int32_t> ids, std::string compile, std::string fit, int64_t n, uint64_t seed) {
    SearchSpec s = grid(std::move(ids), std::move(compile), std::move(fit));
    s.type = SearchType::Random;
    s.num_configs = n;
    s.seed = seed;
    return s;
}

// Every entry parses with the parsers fit_multiple uses.
void expect_parsable(const std::vector<SelectionEntry>& entries) {
    for (const SelectionEntry& e : entries) {
        EXPECT_NO_THROW(parse_compile_params(e.compile_params)) << e.compile_params;
        EXPECT_NO_THROW(parse_fit_params(e.fit_params)) << e.fit_params;
    }
}

const char* const kSoftmax =
    R"({"input_dim": 4, "layers": [{"units": 8, "activation": "relu"}, {"units": 3, "activation": "softmax"}]})";
const char* const kLinear = R"({"input_dim": 4, "layers": [{"units": 1, "activation": "linear"}]})";

}  // namespace

// --- load_model_selection_table ----------------------------------------------------------------

TEST(SearchCrossProduct, ModelIdSlowestFitFastestStringsKept) {
    auto rows = selection_cross_product({2, 1}, {"loss='mse'", "{\"optimizer\": \"adam\"}"}, {"batch_size=8", ""});
    ASSERT_EQ(rows.size(), 8u);
    EXPECT_EQ(rows[0], (SelectionEntry{2, "loss='mse'", "batch_size=8"}));
    EXPECT_EQ(rows[1], (SelectionEntry{2, "loss='mse'", ""}));
    EXPECT_EQ(rows[2], (SelectionEntry{2, "{\"optimizer\": \"adam\"}", "batch_size=8"}));
    EXPECT_EQ(rows[4], (SelectionEntry{1, "loss='mse'", "batch_size=8"}));
    EXPECT_EQ(rows[7], (SelectionEntry{1, "{\"optimizer\": \"adam\"}", ""}));
}

TEST(SearchCrossProduct, EmptyListsAreRefused) {
    EXPECT_ERR(selection_cross_product({}, {""}, {""}), InvalidParameter, "model_id_list is empty");
    auto e = EXPECT_ERR(selection_cross_product({1}, {}, {""}), InvalidParameter, "compile_params_list is empty");
    EXPECT_NE(e.hint().find("ARRAY['']"), std::string::npos);
    EXPECT_ERR(selection_cross_product({1}, {""}, {}), InvalidParameter, "fit_params_list is empty");
}

TEST(SearchCrossProduct, DuplicatesAreRefusedByMeaning) {
    auto e = EXPECT_ERR(selection_cross_product({1, 2, 1}, {""}, {""}), InvalidParameter, "lists model_id 1 twice");
    EXPECT_NE(e.detail().find("Elements 1 and 3"), std::string::npos);
    // Different text, same meaning: lr is learning_rate, the MADlib and JSON forms agree.
    e = EXPECT_ERR(selection_cross_product(
                       {1}, {"optimizer='SGD(lr=0.1)'", "{\"optimizer\": \"sgd\", \"learning_rate\": 0.1}"}, {""}),
                   InvalidParameter, "compile_params_list element 2 repeats element 1");
    EXPECT_ERR(selection_cross_product({1}, {""}, {"batch_size=32", ""}), InvalidParameter,
               "fit_params_list element 2 repeats element 1");  // 32 is the default
}

TEST(SearchCrossProduct, InvalidElementsAreNamed) {
    auto e = EXPECT_ERR(selection_cross_product({1}, {"", "{\"learnin_rate\": 0.1}"}, {""}), InvalidParameter,
                        "unknown key \"learnin_rate\"");
    EXPECT_NE(e.detail().find("In compile_params_list element 2."), std::string::npos) << e.detail();
    e = EXPECT_ERR(selection_cross_product({1}, {""}, {"batch_size=0"}), InvalidParameter, "batch_size");
    EXPECT_NE(e.detail().find("In fit_params_list element 1."), std::string::npos) << e.detail();
    EXPECT_ERR(selection_cross_product({1}, {"loss="}, {""}), Syntax, "syntax error");
}

TEST(SearchCrossProduct, TooManyRowsIsALimit) {
    std::vector<int32_t> ids(101);
    for (int i = 0; i < 101; ++i) ids[i] = i;
    std::vector<std::string> compiles, fits;
    for (int i = 0; i < 10; ++i) compiles.push_back("learning_rate=" + std::to_string(i + 1) + "e-3");
    for (int i = 0; i < 10; ++i) fits.push_back("batch_size=" + std::to_string(i + 1));
    EXPECT_EQ(selection_cross_product(std::vector<int32_t>(ids.begin(), ids.begin() + 100), compiles, fits).size(),
              10000u);
    EXPECT_ERR(selection_cross_product(ids, compiles, fits), Limit, "too many model configurations: 10100");
}

// --- grid search -----------------------------------------------------------------------------

TEST(SearchType, ParsesGridAndRandom) {
    EXPECT_EQ(parse_search_type("grid"), SearchType::Grid);
    EXPECT_EQ(parse_search_type("Random"), SearchType::Random);
    EXPECT_ERR(parse_search_type("bayesian"), InvalidParameter, "unknown search_type \"bayesian\"");
    EXPECT_STREQ(to_string(SearchType::Random), "random");
}

TEST(GridSearch, CartesianProductInDocumentedOrder) {
    auto rows = generate_model_configs(
        grid({7, 3},
             R"({"optimizer": ["sgd", "adam"], "learning_rate": [0.1, 0.01], "loss": "categorical_crossentropy"})",
             R"({"batch_size": [16, 32]})"));
    ASSERT_EQ(rows.size(), 16u);
    // Keys alphabetical, the last (optimizer) fastest; values in the order listed.
    EXPECT_EQ(rows[0],
              (SelectionEntry{7, R"({"learning_rate":0.1,"loss":"categorical_crossentropy","optimizer":"sgd"})",
                              R"({"batch_size":16})"}));
    EXPECT_EQ(rows[1].fit_params, R"({"batch_size":32})");
    EXPECT_EQ(rows[2].compile_params, R"({"learning_rate":0.1,"loss":"categorical_crossentropy","optimizer":"adam"})");
    EXPECT_EQ(rows[4].compile_params, R"({"learning_rate":0.01,"loss":"categorical_crossentropy","optimizer":"sgd"})");
    EXPECT_EQ(rows[8].model_id, 3);
    expect_parsable(rows);
    std::set<std::string> distinct;
    for (auto& r : rows) distinct.insert(std::to_string(r.model_id) + r.compile_params + r.fit_params);
    EXPECT_EQ(distinct.size(), rows.size());
}

TEST(GridSearch, EmptySpacesGiveTheDefaults) {
    auto rows = generate_model_configs(grid({1}, "{}", "{}"));
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0], (SelectionEntry{1, "{}", "{}"}));
}

TEST(GridSearch, MetricsListIsOneValueListOfListsAreChoices) {
    auto rows = generate_model_configs(grid({1}, R"({"metrics": ["accuracy", "top_k_accuracy"]})"));
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].compile_params, R"({"metrics":["accuracy","top_k_accuracy"]})");
    rows = generate_model_configs(grid({1}, R"({"metrics": [["accuracy"], []]})"));
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[1].compile_params, R"({"metrics":[]})");
    EXPECT_ERR(generate_model_configs(grid({1}, R"({"metrics": ["accuracy", ["mae"]]})")), InvalidParameter,
               "\"metrics\" in compile_params_grid mixes metric names and lists");
    // Outside compile parameters a list is always choices.
    EXPECT_EQ(generate_model_configs(grid({1}, "{}", R"({"batch_size": [1, 2, 3]})")).size(), 3u);
}

TEST(GridSearch, OptimizerParamsListIsAUnionOfSubspaces) {
    auto rows = generate_model_configs(grid({1}, R"({"loss": "categorical_crossentropy",
        "optimizer_params_list": [{"optimizer": "sgd", "momentum": [0.9, 0.99]},
                                  {"optimizer": "adam", "beta_1": [0.8], "lr": [0.001, 0.01]}]})"));
    ASSERT_EQ(rows.size(), 4u);
    EXPECT_EQ(rows[0].compile_params, R"({"loss":"categorical_crossentropy","momentum":0.9,"optimizer":"sgd"})");
    EXPECT_EQ(rows[1].compile_params, R"({"loss":"categorical_crossentropy","momentum":0.99,"optimizer":"sgd"})");
    EXPECT_EQ(rows[3].compile_params,
              R"({"beta_1":0.8,"loss":"categorical_crossentropy","lr":0.01,"optimizer":"adam"})");
    expect_parsable(rows);
    // Without sub-spaces the same keys combine into invalid configurations, and the parser says so.
    auto e = EXPECT_ERR(generate_model_configs(grid({1}, R"({"optimizer": ["sgd", "adam"], "momentum": [0.9]})")),
                        InvalidParameter, "optimizer argument \"momentum\" does not apply to adam");
    EXPECT_NE(e.detail().find("In compile_params_grid point"), std::string::npos) << e.detail();
}

TEST(GridSearch, OptimizerParamsListErrors) {
    EXPECT_ERR(generate_model_configs(grid({1}, R"({"optimizer_params_list": []})")), InvalidParameter,
               "invalid optimizer_params_list in compile_params_grid");
    EXPECT_ERR(generate_model_configs(grid({1}, R"({"optimizer_params_list": [1]})")), InvalidParameter,
               "invalid optimizer_params_list");
    EXPECT_ERR(generate_model_configs(grid({1}, R"({"optimizer_params_list": [{"optimizer_params_list": [{}]}]})")),
               InvalidParameter, "nested optimizer_params_list");
    EXPECT_ERR(generate_model_configs(grid({1}, R"({"lr": [0.1], "optimizer_params_list": [{"lr": [0.2]}]})")),
               InvalidParameter,
               "\"lr\" is given both in compile_params_grid and in its optimizer_params_list element 1");
    // Only compile parameters have sub-spaces: in fit parameters it is an unknown key.
    EXPECT_ERR(generate_model_configs(grid({1}, "{}", R"({"optimizer_params_list": [[{}]]})")), InvalidParameter,
               "unknown key \"optimizer_params_list\" in fit parameters");
}

TEST(GridSearch, BadSpacesAreRefused) {
    EXPECT_ERR(generate_model_configs(grid({1}, "[1, 2]")), InvalidParameter,
               "compile_params_grid must be a JSON object");
    EXPECT_ERR(generate_model_configs(grid({1}, "{}", "null")), InvalidParameter,
               "fit_params_grid must be a JSON object");
    EXPECT_ERR(generate_model_configs(grid({1}, "{\"lr\": ")), Syntax, "syntax error in compile_params_grid JSON");
    EXPECT_ERR(generate_model_configs(grid({1}, R"({"lr": []})")), InvalidParameter,
               "\"lr\" in compile_params_grid has no values");
    auto e = EXPECT_ERR(generate_model_configs(grid({1}, R"({"lr": [0.1, 0.2, 0.1]})")), InvalidParameter,
                        "\"lr\" in compile_params_grid lists 0.1 twice");
    EXPECT_NE(e.detail().find("Elements 1 and 3"), std::string::npos);
    EXPECT_ERR(generate_model_configs(grid({1}, R"({"optimizer": ["sgd", "SGD"]})")), InvalidParameter,
               "compile_params_grid gives the same parameters twice");
    EXPECT_ERR(generate_model_configs(grid({1}, R"({"learnin_rate": [0.1]})")), InvalidParameter,
               "unknown key \"learnin_rate\" in compile parameters");
    EXPECT_ERR(generate_model_configs(grid({1}, "{}", R"({"batch_size": [0, 8]})")), InvalidParameter,
               "invalid value for \"batch_size\": 0");
    EXPECT_ERR(generate_model_configs(grid({1, 1}, "{}")), InvalidParameter, "model_id_list lists model_id 1 twice");
    EXPECT_ERR(generate_model_configs(grid({}, "{}")), InvalidParameter, "model_id_list is empty");
    e = EXPECT_ERR(generate_model_configs(grid({1}, R"({"optimizer": {"name": "adam"}})")), InvalidParameter,
                   "\"optimizer\" in compile_params_grid is an object but not a distribution");
    EXPECT_NE(e.hint().find("put it in a list"), std::string::npos);
    // ...and in a list an optimizer object is a value like any other.
    EXPECT_EQ(generate_model_configs(grid({1}, R"({"optimizer": [{"name": "adam", "learning_rate": 0.01}]})"))[0]
                  .compile_params,
              R"({"optimizer":{"learning_rate":0.01,"name":"adam"}})");
}

TEST(GridSearch, DistributionsAndRandomOnlyArgumentsAreRefused) {
    auto e =
        EXPECT_ERR(generate_model_configs(grid({1}, R"({"lr": {"log_uniform": [0.0001, 0.1]}})")), InvalidParameter,
                   "grid search cannot use the distribution {\"log_uniform\":[0.0001,0.1]} of \"lr\"");
    EXPECT_NE(e.hint().find("search_type => 'random'"), std::string::npos);
    SearchSpec s = grid({1}, "{}");
    s.num_configs = 3;
    EXPECT_ERR(generate_model_configs(s), InvalidParameter, "num_configs applies only to random search");
    s.num_configs.reset();
    s.seed = 1;
    EXPECT_ERR(generate_model_configs(s), InvalidParameter, "random_state applies only to random search");
}

TEST(GridSearch, HugeGridsAreRefusedBeforeTheyAreBuilt) {
    // 10 keys of 10 values: 10^10 points, refused at once (building them would take minutes).
    std::string space = "{";
    for (int k = 0; k < 10; ++k)
        space += std::string(k ? "," : "") + "\"k" + std::to_string(k) + "\": [0,1,2,3,4,5,6,7,8,9]";
    space += "}";
    auto e =
        EXPECT_ERR(generate_model_configs(grid({1, 2}, space)), Limit, "too many model configurations: 20000000000");
    EXPECT_NE(e.hint().find("num_configs"), std::string::npos);
    EXPECT_NE(e.detail().find("10000"), std::string::npos);
}

TEST(GridSearch, LongListsAndCopiesAreBoundedBeforeTheyAreHeld) {
    // Repetitions in a long list are found at once (comparing every pair of 100,000 values took 46 s),
    // naming both elements.
    std::string list;
    for (int k = 0; k < 50000; ++k) list += std::string(k ? "," : "") + std::to_string(k);
    auto e = EXPECT_ERR(generate_model_configs(grid({1}, "{\"seed\": [" + list + ", 49999]}", "{}")), InvalidParameter,
                        "lists 49999 twice");
    EXPECT_NE(e.detail().find("Elements 50000 and 50001"), std::string::npos);
    // More values than a list may hold, and a text beyond 8 MB: Limit before anything is held.
    std::string longer;
    for (int k = 0; k < 100001; ++k) longer += std::string(k ? "," : "") + std::to_string(k);
    EXPECT_ERR(generate_model_configs(grid({1}, "{}", "{\"seed\": [" + longer + "]}")), Limit,
               "\"seed\" in fit_params_grid lists too many values");
    EXPECT_ERR(generate_model_configs(grid({1}, "{\"x\": \"" + std::string(9u << 20, 'a') + "\"}")), Limit,
               "compile_params_grid is too large");
    // optimizer_params_list elements each copy the parameters beside them: 1,001 keys x 1,000
    // elements (3,000 x 3,000, an 86 KB text, took 1.3 GB).
    std::string space = "{";
    for (int k = 0; k < 1001; ++k) space += "\"k" + std::to_string(k) + "\": 1,";
    space += "\"optimizer_params_list\": [";
    for (int k = 0; k < 1000; ++k) space += std::string(k ? "," : "") + "{}";
    space += "]}";
    EXPECT_ERR(generate_model_configs(grid({1}, space)), Limit,
               "optimizer_params_list of compile_params_grid is too large");
}

// --- random search ---------------------------------------------------------------------------

TEST(RandomSearch, SeededAndReproducible) {
    const char* compile = R"({"optimizer": ["sgd", "adam"], "learning_rate": {"log_uniform": [0.0001, 0.1]},
                              "loss": "categorical_crossentropy", "metrics": ["accuracy"]})";
    const char* fit = R"({"batch_size": {"int_uniform": [8, 64]}})";
    auto a = generate_model_configs(random_search({1, 2, 3}, compile, fit, 20, 42));
    auto b = generate_model_configs(random_search({1, 2, 3}, compile, fit, 20, 42));
    auto c = generate_model_configs(random_search({1, 2, 3}, compile, fit, 20, 43));
    ASSERT_EQ(a.size(), 20u);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
    expect_parsable(a);
    // A prefix does not depend on how many are drawn.
    auto five = generate_model_configs(random_search({1, 2, 3}, compile, fit, 5, 42));
    EXPECT_TRUE(std::equal(five.begin(), five.end(), a.begin()));
}

TEST(RandomSearch, SameResultOnEveryPlatform) {
    // Golden values: the generator is SplitMix64 with Lemire's bounded draws and 6-digit rounding,
    // so these must never change (a user's random_state reproduces their table anywhere).
    auto rows = generate_model_configs(random_search({1, 2}, R"({"learning_rate": {"log_uniform": [0.0001, 0.1]},
        "momentum": {"uniform": [0.5, 0.99]}, "optimizer": ["sgd", "nesterov"]})",
                                                     R"({"batch_size": {"int_uniform": [1, 100]}})", 3, 7));
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_EQ(rows[0], (SelectionEntry{1, R"({"learning_rate":0.000751777,"momentum":0.88835,"optimizer":"sgd"})",
                                       R"({"batch_size":96})"}));
    EXPECT_EQ(rows[1], (SelectionEntry{2, R"({"learning_rate":0.000355203,"momentum":0.728145,"optimizer":"sgd"})",
                                       R"({"batch_size":79})"}));
    EXPECT_EQ(rows[2], (SelectionEntry{1, R"({"learning_rate":0.00261918,"momentum":0.930731,"optimizer":"nesterov"})",
                                       R"({"batch_size":39})"}));
}

TEST(RandomSearch, DistributionsStayInRangeAndLookRight) {
    auto rows =
        generate_model_configs(random_search({1}, R"({"learning_rate": {"log_uniform": [0.0001, 1]},
        "momentum": {"uniform": [0.2, 0.4]}})",
                                             R"({"batch_size": {"int_uniform": [1, 4]}, "epochs": [1, 2]})", 2000, 11));
    ASSERT_EQ(rows.size(), 2000u);
    int below_geometric_mean = 0, lr_low_decade = 0;
    double momentum_sum = 0;
    std::set<int64_t> batch_sizes;
    for (const SelectionEntry& r : rows) {
        json c = json::parse(r.compile_params), f = json::parse(r.fit_params);
        const double lr = c["learning_rate"], m = c["momentum"];
        ASSERT_GE(lr, 0.0001);
        ASSERT_LE(lr, 1.0);
        ASSERT_GE(m, 0.2);
        ASSERT_LE(m, 0.4);
        // 6 significant digits, printed shortest: the JSON text is short.
        const std::size_t at = r.compile_params.find("\"learning_rate\":") + 16;
        const std::string lr_text = r.compile_params.substr(at, r.compile_params.find(',', at) - at);
        ASSERT_LE(lr_text.size(), 11u) << lr_text;
        below_geometric_mean += lr < 0.01;
        lr_low_decade += lr < 0.001;
        momentum_sum += m;
        ASSERT_TRUE(f["batch_size"].is_number_integer());
        batch_sizes.insert(f["batch_size"].get<int64_t>());
    }
    // Log-uniform: half below the geometric mean, a quarter in the lowest of four decades.
    EXPECT_NEAR(below_geometric_mean / 2000.0, 0.5, 0.05);
    EXPECT_NEAR(lr_low_decade / 2000.0, 0.25, 0.04);
    EXPECT_NEAR(momentum_sum / 2000.0, 0.3, 0.01);
    EXPECT_EQ(batch_sizes, (std::set<int64_t>{1, 2, 3, 4}));  // both ends included
}

TEST(RandomSearch, ConfigurationsAreDistinctAndModelIdsDrawn) {
    // 2 model ids x 3 optimizers x 2 batch sizes = 12 points: asking for all 12 gives each once.
    auto rows = generate_model_configs(
        random_search({5, 6}, R"({"optimizer": ["sgd", "adam", "rmsprop"]})", R"({"batch_size": [8, 16]})", 12, 3));
    std::set<std::string> distinct;
    std::set<int32_t> ids;
    for (auto& r : rows) {
        distinct.insert(std::to_string(r.model_id) + r.compile_params + r.fit_params);
        ids.insert(r.model_id);
    }
    EXPECT_EQ(distinct.size(), 12u);
    EXPECT_EQ(ids, (std::set<int32_t>{5, 6}));
    auto e = EXPECT_ERR(generate_model_configs(random_search({5, 6}, R"({"optimizer": ["sgd", "adam", "rmsprop"]})",
                                                             R"({"batch_size": [8, 16]})", 13, 3)),
                        InvalidParameter, "random search cannot draw 13 distinct configurations");
    EXPECT_NE(e.detail().find("only 12"), std::string::npos);
    // Finite distributions count too: int_uniform [1, 3] has 3 values.
    EXPECT_ERR(generate_model_configs(random_search({1}, "{}", R"({"batch_size": {"int_uniform": [1, 3]}})", 4, 1)),
               InvalidParameter, "cannot draw 4");
    // Values that differ in text but not in meaning are found by drawing.
    EXPECT_ERR(generate_model_configs(random_search({1}, R"({"optimizer": ["sgd", "SGD"]})", "{}", 2, 1)),
               InvalidParameter, "random search found only 1 distinct configurations in 1200 draws");
}

TEST(RandomSearch, ArgumentsAreChecked) {
    SearchSpec s = random_search({1}, "{}", "{}", 1, 1);
    s.num_configs.reset();
    EXPECT_ERR(generate_model_configs(s), InvalidParameter, "random search needs num_configs");
    s.num_configs = 0;
    EXPECT_ERR(generate_model_configs(s), InvalidParameter, "num_configs must be positive");
    s.num_configs = 10001;
    EXPECT_ERR(generate_model_configs(s), Limit, "too many model configurations: 10001");
}

TEST(RandomSearch, BadDistributionsAreRefused) {
    auto r = [](const std::string& compile) { return generate_model_configs(random_search({1}, compile, "{}", 1, 1)); };
    EXPECT_ERR(r(R"({"lr": {"normal": [0, 1]}})"), InvalidParameter, "unknown distribution \"normal\" for \"lr\"");
    EXPECT_ERR(r(R"({"lr": {"uniform": [0.1, 0.2], "log_uniform": [0.1, 0.2]}})"), InvalidParameter,
               "is an object but not a distribution");
    EXPECT_ERR(r(R"({"lr": {}})"), InvalidParameter, "is an object but not a distribution");
    EXPECT_ERR(r(R"({"lr": {"uniform": [0.1]}})"), InvalidParameter, "invalid uniform distribution for \"lr\"");
    EXPECT_ERR(r(R"({"lr": {"uniform": 0.1}})"), InvalidParameter, "invalid uniform distribution");
    EXPECT_ERR(r(R"({"lr": {"uniform": ["a", 1]}})"), InvalidParameter, "invalid uniform distribution");
    auto e = EXPECT_ERR(r(R"({"lr": {"uniform": [0.2, 0.1]}})"), InvalidParameter, "invalid uniform distribution");
    EXPECT_EQ(e.detail(), "low is greater than high.");
    e = EXPECT_ERR(r(R"({"lr": {"log_uniform": [0, 0.1]}})"), InvalidParameter, "invalid log_uniform distribution");
    EXPECT_EQ(e.detail(), "log_uniform needs 0 < low.");
    e = EXPECT_ERR(generate_model_configs(
                       random_search({1}, "{}", R"({"batch_size": {"int_uniform": [1.5, 4]}})", 1, 1)),
                   InvalidParameter, "invalid int_uniform distribution for \"batch_size\" in fit_params_grid");
    EXPECT_EQ(e.detail(), "int_uniform takes two integers.");
    EXPECT_ERR(generate_model_configs(random_search({1}, "{}", R"({"batch_size": {"int_uniform": [9, 4]}})", 1, 1)),
               InvalidParameter, "invalid int_uniform distribution");
}

TEST(RandomSearch, ARangeWithInvalidValuesIsRefusedWhateverTheSeed) {
    // learning_rate 0 is invalid; a uniform draw almost never hits it, but the range includes it.
    for (uint64_t seed : {1u, 2u, 3u}) {
        auto e = EXPECT_ERR(generate_model_configs(
                                random_search({1}, R"({"learning_rate": {"uniform": [0, 0.1]}})", "{}", 1, seed)),
                            InvalidParameter, "invalid value for \"learning_rate\": 0");
        EXPECT_NE(
            e.detail().find(
                "In the range of the distribution {\"uniform\":[0,0.1]} of \"learning_rate\" in compile_params_grid."),
            std::string::npos)
            << e.detail();
    }
    EXPECT_ERR(generate_model_configs(random_search({1}, R"({"momentum": {"uniform": [0.5, 1]}})", "{}", 1, 1)),
               InvalidParameter, "invalid value for \"momentum\": 1");
    EXPECT_ERR(generate_model_configs(random_search({1}, "{}", R"({"batch_size": {"int_uniform": [0, 8]}})", 1, 1)),
               InvalidParameter, "invalid value for \"batch_size\": 0");
    // A drawn value that is invalid in its context names the configuration.
    auto e = EXPECT_ERR(generate_model_configs(
                            random_search({1}, R"({"optimizer": ["adam"], "momentum": [0.9]})", "{}", 1, 1)),
                        InvalidParameter, "does not apply to adam");
    EXPECT_NE(e.detail().find("In random configuration 1, compile_params_grid point"), std::string::npos) << e.detail();
}

TEST(RandomSearch, OptimizerParamsListSubspacesAreDrawnUniformly) {
    auto rows = generate_model_configs(random_search({1}, R"({"optimizer_params_list": [
        {"optimizer": "sgd", "learning_rate": {"log_uniform": [0.001, 0.1]}},
        {"optimizer": "adam", "learning_rate": {"log_uniform": [0.0001, 0.01]}, "beta_1": {"uniform": [0.8, 0.95]}}]})",
                                                     "{}", 400, 5));
    int adam = 0;
    for (auto& r : rows) {
        json c = json::parse(r.compile_params);
        if (c["optimizer"] == "adam") {
            ++adam;
            EXPECT_TRUE(c.contains("beta_1"));
            EXPECT_LE(c["learning_rate"].get<double>(), 0.01);
        } else {
            EXPECT_FALSE(c.contains("beta_1"));
            EXPECT_GE(c["learning_rate"].get<double>(), 0.001);
        }
    }
    EXPECT_NEAR(adam / 400.0, 0.5, 0.08);
    expect_parsable(rows);
}

// --- against architectures -------------------------------------------------------------------

TEST(SearchCheckArchitectures, LossMustFitTheOutputLayer) {
    std::map<int32_t, Architecture> archs = {{1, parse_architecture(kSoftmax)}, {2, parse_architecture(kLinear)}};
    auto rows = selection_cross_product({1, 2}, {"loss='mse'", ""}, {""});
    EXPECT_NO_THROW(check_against_architectures(rows, archs));
    rows = selection_cross_product({1, 2}, {"", "loss='categorical_crossentropy'"}, {"batch_size=4"});
    auto e = EXPECT_ERR(check_against_architectures(rows, archs), InvalidParameter,
                        "loss categorical_crossentropy (softmax_cross_entropy) needs a softmax output layer");
    EXPECT_NE(e.detail().find("In configuration 4 (model_id 2, architecture 4-1, compile_params "
                              "loss='categorical_crossentropy', fit_params batch_size=4)."),
              std::string::npos)
        << e.detail();
    // top_k at the number of classes is accepted, as in Keras and MADlib (the metric is 1).
    rows = selection_cross_product({1}, {"metrics=['top_k_accuracy'], top_k=3"}, {""});
    EXPECT_NO_THROW(check_against_architectures(rows, archs));
    rows = selection_cross_product({3}, {""}, {""});
    EXPECT_ERR(check_against_architectures(rows, archs), Internal, "no architecture for model_id 3");
}
