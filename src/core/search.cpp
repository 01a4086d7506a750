// Model selection: cross products, grid and random search (see include/hopper/search.h).
#include "hopper/search.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "config_json.h"
#include "hopper/error.h"
#include "hopper/interrupt.h"
#include "hopper/rng.h"

namespace hopper {

namespace {

using cfg::json;

constexpr uint64_t kInfinite = std::numeric_limits<uint64_t>::max();

uint64_t mul_sat(uint64_t a, uint64_t b) {
    if (a == 0 || b == 0) return 0;
    return a > kInfinite / b ? kInfinite : a * b;
}

uint64_t add_sat(uint64_t a, uint64_t b) { return a > kInfinite - b ? kInfinite : a + b; }

// Rethrows e with "In <where>." added to its detail.
[[noreturn]] void rethrow_in(const Error& e, const std::string& where) {
    std::string detail = e.detail().empty() ? "In " + where + "." : e.detail() + " In " + where + ".";
    throw Error(e.kind(), e.message(), detail, e.hint());
}

std::string shorten(const std::string& s, std::size_t max = 120) {
    return s.size() <= max ? s : s.substr(0, max - 3) + "...";
}

// JSON text of a value with every float in its shortest round-trip form (nlohmann's dump can
// print 0.00311696 as 0.0031169600000000002). Object keys come sorted (nlohmann's json is a map).
std::string to_text(const json& v) {
    switch (v.type()) {
        case json::value_t::object: {
            std::string s = "{";
            for (auto it = v.begin(); it != v.end(); ++it)
                s += (s.size() > 1 ? "," : "") + json(it.key()).dump() + ":" + to_text(it.value());
            return s + "}";
        }
        case json::value_t::array: {
            std::string s = "[";
            for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + to_text(v[i]);
            return s + "]";
        }
        case json::value_t::number_float: return cfg::fmt_double(v.get<double>());
        default: return v.dump();
    }
}

std::string canonical_compile(const std::string& text) { return parse_compile_params(text).to_json(); }
std::string canonical_fit(const std::string& text) { return parse_fit_params(text).to_json(); }

std::string show_text(const std::string& s) { return s.empty() ? "''" : shorten(s); }

void check_model_ids(const std::vector<int32_t>& ids) {
    if (ids.empty())
        fail(ErrorKind::InvalidParameter, "model_id_list is empty", {},
             "List at least one model_id of the model architecture table.");
    std::map<int32_t, std::size_t> first;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        auto [it, added] = first.emplace(ids[i], i);
        if (!added)
            fail(ErrorKind::InvalidParameter, "model_id_list lists model_id " + std::to_string(ids[i]) + " twice",
                 "Elements " + std::to_string(it->second + 1) + " and " + std::to_string(i + 1) + " are both " +
                     std::to_string(ids[i]) + ".",
                 "Each configuration is trained once; list each model_id once.");
    }
}

// Parses every element of a parameter list (validating it) and refuses two with the same meaning.
void check_param_list(const std::vector<std::string>& list, const char* name, bool compile) {
    if (list.empty())
        fail(ErrorKind::InvalidParameter, std::string(name) + " is empty", {},
             std::string("Pass ARRAY[''] for the default ") + (compile ? "compile" : "fit") + " parameters.");
    std::map<std::string, std::size_t> first;
    for (std::size_t i = 0; i < list.size(); ++i) {
        std::string canonical;
        try {
            canonical = compile ? canonical_compile(list[i]) : canonical_fit(list[i]);
        } catch (const Error& e) { rethrow_in(e, std::string(name) + " element " + std::to_string(i + 1)); }
        auto [it, added] = first.emplace(canonical, i);
        if (!added)
            fail(ErrorKind::InvalidParameter,
                 std::string(name) + " element " + std::to_string(i + 1) + " repeats element " +
                     std::to_string(it->second + 1),
                 "Elements " + std::to_string(it->second + 1) + " (" + show_text(list[it->second]) + ") and " +
                     std::to_string(i + 1) + " (" + show_text(list[i]) + ") give the same " +
                     (compile ? "compile" : "fit") + " parameters.",
                 "Each configuration is trained once; remove the repetition.");
    }
}

// Values the elements of an optimizer_params_list may copy from the parameters beside them in all
// (a grid of 10,000 configurations copies far fewer).
constexpr uint64_t kMaxCopiedGridValues = 1000000;
// A search space's text and the values of one list: bounded before they are parsed and held (a
// grid is a few KB; parsed, JSON takes several times its text).
constexpr std::size_t kMaxSpaceJsonBytes = 8u << 20;
constexpr std::size_t kMaxListValues = 100000;

[[noreturn]] void too_many(uint64_t n, const char* hint) {
    fail(ErrorKind::Limit,
         "too many model configurations: " +
             (n == kInfinite ? std::string("more than 18446744073709551614") : std::to_string(n)),
         "hopper creates at most " + std::to_string(kMaxModelConfigs) + " configurations per call.", hint);
}

// --- search spaces ------------------------------------------------------------------------------

enum class DistKind { Uniform, LogUniform, IntUniform };

struct Param {
    std::string key;
    std::vector<json> choices;  // when not a distribution
    bool is_dist = false;
    DistKind kind = DistKind::Uniform;
    double lo = 0, hi = 0;     // Uniform, LogUniform
    int64_t ilo = 0, ihi = 0;  // IntUniform
    json spec;                 // the distribution as given, for messages
};

using Alternative = std::vector<Param>;  // sorted by key

struct Space {
    std::string what;  // "compile_params_grid"
    bool compile = false;
    std::vector<Alternative> alternatives;  // at least one
};

const char* const kDistHint =
    "Write e.g. {\"log_uniform\": [0.0001, 0.1]}; to use an object as a value, put it in a list.";

Param parse_distribution(const std::string& key, const json& v, const std::string& where) {
    Param p;
    p.key = key;
    p.is_dist = true;
    p.spec = v;
    const std::string named = "\"" + key + "\" in " + where;
    if (v.size() != 1)
        fail(ErrorKind::InvalidParameter, named + " is an object but not a distribution",
             "A distribution is an object with one key: uniform, log_uniform or int_uniform.", kDistHint);
    const std::string name = v.begin().key();
    const json& arg = v.begin().value();
    if (name == "uniform") p.kind = DistKind::Uniform;
    else if (name == "log_uniform") p.kind = DistKind::LogUniform;
    else if (name == "int_uniform") p.kind = DistKind::IntUniform;
    else if (!arg.is_array())  // {"name": "adam"}: a value, not a distribution
        fail(ErrorKind::InvalidParameter, named + " is an object but not a distribution",
             "A distribution is an object with one key: uniform, log_uniform or int_uniform.", kDistHint);
    else
        fail(ErrorKind::InvalidParameter, "unknown distribution \"" + name + "\" for " + named, {},
             "Distributions are uniform, log_uniform and int_uniform.");
    const std::string bad = "invalid " + name + " distribution for " + named + ": " + cfg::show(arg);
    if (!arg.is_array() || arg.size() != 2) fail(ErrorKind::InvalidParameter, bad, name + " takes [low, high].");
    if (p.kind == DistKind::IntUniform) {
        if (!cfg::as_integer(arg[0], INT64_MIN, INT64_MAX, p.ilo) ||
            !cfg::as_integer(arg[1], INT64_MIN, INT64_MAX, p.ihi))
            fail(ErrorKind::InvalidParameter, bad, "int_uniform takes two integers.");
        if (p.ilo > p.ihi) fail(ErrorKind::InvalidParameter, bad, "low is greater than high.");
    } else {
        if (!cfg::as_double(arg[0], p.lo) || !cfg::as_double(arg[1], p.hi))
            fail(ErrorKind::InvalidParameter, bad, name + " takes two finite numbers.");
        if (p.lo > p.hi) fail(ErrorKind::InvalidParameter, bad, "low is greater than high.");
        if (p.kind == DistKind::LogUniform && !(p.lo > 0))
            fail(ErrorKind::InvalidParameter, bad, "log_uniform needs 0 < low.");
    }
    return p;
}

Param parse_param(const std::string& key, const json& v, const std::string& where, bool compile) {
    const std::string named = "\"" + key + "\" in " + where;
    Param p;
    p.key = key;
    if (v.is_object()) return parse_distribution(key, v, where);
    if (!v.is_array()) {
        p.choices.push_back(v);  // a fixed value
        return p;
    }
    if (compile && key == "metrics") {
        // The value of metrics is itself a list: a list of names is one value, a list of lists
        // gives the choices.
        bool all_lists = !v.empty(), any_list = false;
        for (const json& e : v) {
            all_lists = all_lists && e.is_array();
            any_list = any_list || e.is_array();
        }
        if (!any_list) {
            p.choices.push_back(v);
            return p;
        }
        if (!all_lists)
            fail(ErrorKind::InvalidParameter, named + " mixes metric names and lists",
                 "A list of metric names is one value; a list of such lists gives the values to try.",
                 "Write e.g. [\"accuracy\"], or [[\"accuracy\"], [\"accuracy\", \"top_k_accuracy\"]] to try both.");
    }
    if (v.empty())
        fail(ErrorKind::InvalidParameter, named + " has no values", {},
             "List at least one value, or give a single value.");
    if (v.size() > kMaxListValues)
        fail(ErrorKind::Limit, named + " lists too many values",
             "It lists " + std::to_string(v.size()) + "; hopper takes at most " + std::to_string(kMaxListValues) +
                 " values a list.",
             "Give a distribution instead, e.g. {\"uniform\": [low, high]}.");
    // Repetitions found through an ordered map: comparing each value with every earlier one took 46 s,
    // deaf to cancel, on a list of 100,000 values (a hostile review).
    std::map<json, std::size_t> seen;
    InterruptTicker ticker;
    for (std::size_t i = 0; i < v.size(); ++i) {
        ticker.tick();
        const auto [at, added] = seen.emplace(v[i], i);
        if (!added)
            fail(ErrorKind::InvalidParameter, named + " lists " + cfg::show(v[i]) + " twice",
                 "Elements " + std::to_string(at->second + 1) + " and " + std::to_string(i + 1) + " are equal.",
                 "Each configuration is trained once; list each value once.");
        p.choices.push_back(v[i]);
    }
    return p;
}

std::vector<Param> parse_params(const json& obj, const std::string& where, bool compile) {
    std::vector<Param> out;
    for (auto it = obj.begin(); it != obj.end(); ++it) out.push_back(parse_param(it.key(), it.value(), where, compile));
    return out;
}

Space parse_space(const std::string& text, const std::string& what, bool compile) {
    if (text.size() > kMaxSpaceJsonBytes)
        fail(ErrorKind::Limit, what + " is too large",
             "It has " + std::to_string(text.size()) + " bytes of JSON; hopper takes at most " +
                 std::to_string(kMaxSpaceJsonBytes >> 20) + " MB.",
             "Give distributions instead of long lists.");
    json j = cfg::parse_json_text(text, what);
    if (!j.is_object())
        fail(ErrorKind::InvalidParameter, what + " must be a JSON object",
             "Got JSON " + std::string(j.type_name()) + ".",
             "Map each parameter name to its values, e.g. {\"learning_rate\": [0.01, 0.1]}; {} gives the defaults.");
    Space s;
    s.what = what;
    s.compile = compile;
    json subs = json::array();
    bool has_subs = false;
    if (compile && j.contains("optimizer_params_list")) {
        subs = j["optimizer_params_list"];
        has_subs = true;
        j.erase("optimizer_params_list");
        bool ok = subs.is_array() && !subs.empty();
        for (const json& e : subs) ok = ok && e.is_object();
        if (!ok)
            fail(ErrorKind::InvalidParameter, "invalid optimizer_params_list in " + what + ": " + cfg::show(subs),
                 "optimizer_params_list must be a non-empty list of objects, each a search space of its own.",
                 "Write e.g. [{\"optimizer\": \"sgd\", \"momentum\": [0.9, 0.99]}, {\"optimizer\": \"adam\"}].");
    }
    const std::vector<Param> base = parse_params(j, what, compile);
    // Every element of optimizer_params_list gets a copy of the parameters beside it: bounded before
    // copying (3,000 of each, an 86 KB text, took 1.3 GB; 6,000 took 5 GB).
    if (has_subs) {
        uint64_t copied = 0;
        for (const Param& p : base) copied = add_sat(copied, uint64_t(p.choices.size()) + 1);
        copied = mul_sat(copied, uint64_t(subs.size()));
        if (copied > kMaxCopiedGridValues)
            fail(ErrorKind::Limit, "optimizer_params_list of " + what + " is too large",
                 "Its " + std::to_string(subs.size()) + " elements would each copy the " + std::to_string(base.size()) +
                     " parameters beside it: " + std::to_string(copied) + " values; hopper takes at most " +
                     std::to_string(kMaxCopiedGridValues) + ".",
                 "Move parameters into fewer elements, or search them in separate calls.");
    }
    if (!has_subs) {
        s.alternatives.push_back(base);
    } else {
        for (std::size_t a = 0; a < subs.size(); ++a) {
            const std::string where = "optimizer_params_list element " + std::to_string(a + 1) + " of " + what;
            if (subs[a].contains("optimizer_params_list"))
                fail(ErrorKind::InvalidParameter, "nested optimizer_params_list in " + where);
            Alternative alt = base;
            for (Param& p : parse_params(subs[a], where, compile)) {
                if (j.contains(p.key))
                    fail(ErrorKind::InvalidParameter,
                         "\"" + p.key + "\" is given both in " + what + " and in its " +
                             "optimizer_params_list element " + std::to_string(a + 1),
                         {}, "Give each parameter in one place.");
                alt.push_back(std::move(p));
            }
            s.alternatives.push_back(std::move(alt));
        }
    }
    for (Alternative& alt : s.alternatives)
        std::sort(alt.begin(), alt.end(), [](const Param& x, const Param& y) { return x.key < y.key; });
    return s;
}

const Param* first_distribution(const Space& s) {
    for (const Alternative& alt : s.alternatives)
        for (const Param& p : alt)
            if (p.is_dist) return &p;
    return nullptr;
}

uint64_t grid_size(const Alternative& alt) {
    uint64_t n = 1;
    for (const Param& p : alt) n = mul_sat(n, p.choices.size());
    return n;
}

uint64_t grid_size(const Space& s) {
    uint64_t n = 0;
    for (const Alternative& alt : s.alternatives) n = add_sat(n, grid_size(alt));
    return n;
}

// Points a random search can draw (kInfinite with a continuous distribution).
uint64_t space_size(const Space& s) {
    uint64_t n = 0;
    for (const Alternative& alt : s.alternatives) {
        uint64_t a = 1;
        for (const Param& p : alt) {
            if (!p.is_dist) a = mul_sat(a, p.choices.size());
            else if (p.kind == DistKind::IntUniform) {
                const uint64_t span = uint64_t(p.ihi) - uint64_t(p.ilo);  // values - 1, modulo 2^64
                a = mul_sat(a, span == kInfinite ? kInfinite : span + 1);
            } else if (p.lo != p.hi) {
                a = kInfinite;
            }
        }
        n = add_sat(n, a);
    }
    return n;
}

// Point k (0-based, k < grid_size) of one alternative: mixed radix, last key fastest.
json grid_point(const Alternative& alt, uint64_t k) {
    json obj = json::object();
    std::vector<json> values(alt.size());
    for (std::size_t i = alt.size(); i-- > 0;) {
        const uint64_t n = alt[i].choices.size();
        values[i] = alt[i].choices[std::size_t(k % n)];
        k /= n;
    }
    for (std::size_t i = 0; i < alt.size(); ++i) obj[alt[i].key] = values[i];
    return obj;
}

// Rounds to 6 significant digits (shortest decimal of that precision), through text, so the
// value is what the JSON will say.
double round6(double v) {
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 6);
    double out = v;
    std::from_chars(buf, r.ptr, out);
    return out;
}

json draw(const Param& p, Rng& rng) {
    if (!p.is_dist) return p.choices[std::size_t(rng.below(p.choices.size()))];
    switch (p.kind) {
        case DistKind::IntUniform: {
            const uint64_t span = uint64_t(p.ihi) - uint64_t(p.ilo);  // high - low, modulo 2^64
            const uint64_t off = span == kInfinite ? rng.next_u64() : rng.below(span + 1);
            return json(int64_t(uint64_t(p.ilo) + off));
        }
        case DistKind::Uniform: {
            const double v = round6(p.lo + rng.uniform() * (p.hi - p.lo));
            return json(std::clamp(v, p.lo, p.hi));
        }
        case DistKind::LogUniform: {
            const double l = std::log(p.lo), h = std::log(p.hi);
            const double v = round6(std::exp(l + rng.uniform() * (h - l)));
            return json(std::clamp(v, p.lo, p.hi));
        }
    }
    return json();
}

struct Drawn {
    std::size_t alternative = 0;
    json point;
};

Drawn draw(const Space& s, Rng& rng) {
    Drawn d;
    d.alternative = s.alternatives.size() > 1 ? std::size_t(rng.below(s.alternatives.size())) : 0;
    d.point = json::object();
    for (const Param& p : s.alternatives[d.alternative]) d.point[p.key] = draw(p, rng);
    return d;
}

std::string canonical(const Space& s, const std::string& text) {
    return s.compile ? canonical_compile(text) : canonical_fit(text);
}

void refuse_distributions(const Space& s) {
    if (const Param* p = first_distribution(s))
        fail(ErrorKind::InvalidParameter,
             "grid search cannot use the distribution " + cfg::show(p->spec) + " of \"" + p->key + "\" in " + s.what,
             "Grid search tries every listed value.", "List the values to try, or use search_type => 'random'.");
}

// Every grid point as JSON text, each validated by the parser, refusing two with the same meaning.
std::vector<std::string> grid_points(const Space& s) {
    std::vector<std::string> out;
    std::map<std::string, std::size_t> first;
    for (const Alternative& alt : s.alternatives) {
        const uint64_t n = grid_size(alt);
        for (uint64_t k = 0; k < n; ++k) {
            std::string text = to_text(grid_point(alt, k));
            std::string c;
            try {
                c = canonical(s, text);
            } catch (const Error& e) { rethrow_in(e, s.what + " point " + shorten(text)); }
            auto [it, added] = first.emplace(c, out.size());
            if (!added)
                fail(ErrorKind::InvalidParameter, s.what + " gives the same parameters twice",
                     "Points " + shorten(out[it->second]) + " and " + shorten(text) + " mean the same.",
                     "Each configuration is trained once; remove the repetition.");
            out.push_back(std::move(text));
        }
    }
    return out;
}

// Validates a drawn point, and that each of its distributions is valid over its whole range (the
// parsers' ranges are intervals, so both ends valid means every value between is too): an error
// then does not depend on the seed.
std::string check_drawn(const Space& s, const Drawn& d, std::size_t config) {
    const std::string text = to_text(d.point);
    std::string c;
    try {
        c = canonical(s, text);
    } catch (const Error& e) {
        rethrow_in(e, "random configuration " + std::to_string(config) + ", " + s.what + " point " + shorten(text));
    }
    for (const Param& p : s.alternatives[d.alternative]) {
        if (!p.is_dist) continue;
        for (int end = 0; end < 2; ++end) {
            json probe = d.point;
            probe[p.key] = p.kind == DistKind::IntUniform ? json(end ? p.ihi : p.ilo) : json(end ? p.hi : p.lo);
            try {
                (void)canonical(s, to_text(probe));
            } catch (const Error& e) {
                rethrow_in(e,
                           "the range of the distribution " + cfg::show(p.spec) + " of \"" + p.key + "\" in " + s.what);
            }
        }
    }
    return c;
}

}  // namespace

std::vector<SelectionEntry> selection_cross_product(const std::vector<int32_t>& model_ids,
                                                    const std::vector<std::string>& compile_params_list,
                                                    const std::vector<std::string>& fit_params_list) {
    check_model_ids(model_ids);
    check_param_list(compile_params_list, "compile_params_list", true);
    check_param_list(fit_params_list, "fit_params_list", false);
    const uint64_t n = mul_sat(mul_sat(model_ids.size(), compile_params_list.size()), fit_params_list.size());
    if (n > kMaxModelConfigs) too_many(n, "Pass shorter lists.");
    std::vector<SelectionEntry> out;
    out.reserve(std::size_t(n));
    for (int32_t id : model_ids)
        for (const std::string& c : compile_params_list)
            for (const std::string& f : fit_params_list) out.push_back({id, c, f});
    return out;
}

SearchType parse_search_type(std::string_view text) {
    if (cfg::lower(text) == "grid") return SearchType::Grid;
    if (cfg::lower(text) == "random") return SearchType::Random;
    fail(ErrorKind::InvalidParameter, "unknown search_type \"" + shorten(std::string(text), 40) + "\"", {},
         "Valid values are grid and random.");
}

const char* to_string(SearchType t) { return t == SearchType::Grid ? "grid" : "random"; }

std::vector<SelectionEntry> generate_model_configs(const SearchSpec& spec) {
    check_model_ids(spec.model_ids);
    const Space compile = parse_space(spec.compile_space, "compile_params_grid", true);
    const Space fit = parse_space(spec.fit_space, "fit_params_grid", false);
    std::vector<SelectionEntry> out;

    if (spec.type == SearchType::Grid) {
        if (spec.num_configs)
            fail(ErrorKind::InvalidParameter, "num_configs applies only to random search",
                 "Grid search creates every combination.", "Leave num_configs out, or use search_type => 'random'.");
        if (spec.seed)
            fail(ErrorKind::InvalidParameter, "random_state applies only to random search",
                 "Grid search draws nothing.", "Leave random_state out, or use search_type => 'random'.");
        refuse_distributions(compile);
        refuse_distributions(fit);
        // Count before enumerating: a huge grid is refused without building it.
        const uint64_t n = mul_sat(mul_sat(spec.model_ids.size(), grid_size(compile)), grid_size(fit));
        if (n > kMaxModelConfigs) too_many(n, "Narrow the grid, or use search_type => 'random' with num_configs.");
        const std::vector<std::string> cs = grid_points(compile), fs = grid_points(fit);
        for (int32_t id : spec.model_ids)
            for (const std::string& c : cs)
                for (const std::string& f : fs) out.push_back({id, c, f});
        return out;
    }

    if (!spec.num_configs)
        fail(ErrorKind::InvalidParameter, "random search needs num_configs", {},
             "Pass num_configs => the number of configurations to draw.");
    const int64_t wanted = *spec.num_configs;
    if (wanted <= 0)
        fail(ErrorKind::InvalidParameter, "num_configs must be positive", "It is " + std::to_string(wanted) + ".");
    if (uint64_t(wanted) > kMaxModelConfigs) too_many(uint64_t(wanted), "Lower num_configs.");
    if (!spec.seed) fail(ErrorKind::Internal, "random search without a seed");
    const uint64_t size = mul_sat(mul_sat(spec.model_ids.size(), space_size(compile)), space_size(fit));
    if (size < uint64_t(wanted))
        fail(ErrorKind::InvalidParameter,
             "random search cannot draw " + std::to_string(wanted) + " distinct configurations",
             "The search space has only " + std::to_string(size) + ".",
             "Lower num_configs, or use search_type => 'grid' to create all " + std::to_string(size) + ".");

    Rng rng(mix_seed(*spec.seed, 0x6d6f64656c73656cULL));
    std::set<std::string> seen;
    const uint64_t max_draws = 100 * uint64_t(wanted) + 1000;
    uint64_t draws = 0;
    while (out.size() < std::size_t(wanted)) {
        if (draws++ == max_draws)
            fail(ErrorKind::InvalidParameter,
                 "random search found only " + std::to_string(out.size()) + " distinct configurations in " +
                     std::to_string(max_draws) + " draws",
                 "num_configs is " + std::to_string(wanted) + "; the space has few distinct configurations.",
                 "Lower num_configs, or widen the search space.");
        const int32_t id = spec.model_ids[std::size_t(rng.below(spec.model_ids.size()))];
        const Drawn c = draw(compile, rng);
        const Drawn f = draw(fit, rng);
        const std::size_t number = out.size() + 1;
        const std::string key =
            std::to_string(id) + "\n" + check_drawn(compile, c, number) + "\n" + check_drawn(fit, f, number);
        if (!seen.insert(key).second) continue;
        out.push_back({id, to_text(c.point), to_text(f.point)});
    }
    return out;
}

void check_against_architectures(const std::vector<SelectionEntry>& entries,
                                 const std::map<int32_t, Architecture>& archs) {
    std::map<std::string, CompileParams> compiles;
    std::map<std::string, FitParams> fits;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const SelectionEntry& e = entries[i];
        auto a = archs.find(e.model_id);
        if (a == archs.end()) fail(ErrorKind::Internal, "no architecture for model_id " + std::to_string(e.model_id));
        const std::string where = "configuration " + std::to_string(i + 1) + " (model_id " +
                                  std::to_string(e.model_id) + ", architecture " + a->second.shape_string() +
                                  ", compile_params " + show_text(e.compile_params) + ", fit_params " +
                                  show_text(e.fit_params) + ")";
        try {
            auto c = compiles.find(e.compile_params);
            if (c == compiles.end())
                c = compiles.emplace(e.compile_params, parse_compile_params(e.compile_params)).first;
            auto f = fits.find(e.fit_params);
            if (f == fits.end()) f = fits.emplace(e.fit_params, parse_fit_params(e.fit_params)).first;
            (void)resolve_config(a->second, c->second, f->second);
        } catch (const Error& err) { rethrow_in(err, where); }
    }
}

}  // namespace hopper
