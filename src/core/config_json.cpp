// JSON text with hopper's checks (duplicate keys, nesting, cancel), values for messages, number
// conversions and the messages every parser shares (config_json.h).
#include "config_json.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <set>

#include "hopper/interrupt.h"

namespace hopper::cfg {

namespace {

// Syntax error text from nlohmann ("[json.exception.parse_error.101] parse error at line 1, column
// 5: ...") as a detail sentence ("Parse error at line 1, column 5: ...").
std::string parse_error_detail(const std::string& what_text) {
    std::string d = what_text;
    auto p = d.find("] ");
    if (p != std::string::npos) d = d.substr(p + 2);
    if (!d.empty()) d[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(d[0])));
    if (!d.empty() && d.back() != '.') d += '.';
    return d;
}

// A first pass over the text that builds nothing: refuses a key repeated in one object (nlohmann
// keeps the last value silently, which would hide a typo'd edit) and nesting deeper than 64
// levels (so that later recursive code -- dump, our walkers -- never runs deep), and checks for
// cancel as it goes. Linear in the text: nlohmann's callback parser, which did these checks
// before, scans a parent array after every element it keeps, so a list of n layers cost O(n^2)
// (300,000 layers: 55 s, deaf to cancel).
class ValidatingSax {
public:
    explicit ValidatingSax(const std::string& what) : what_(what) {}

    bool null() { return value(); }
    bool boolean(bool) { return value(); }
    bool number_integer(json::number_integer_t) { return value(); }
    bool number_unsigned(json::number_unsigned_t) { return value(); }
    bool number_float(json::number_float_t, const json::string_t&) { return value(); }
    bool string(json::string_t&) { return value(); }
    bool binary(json::binary_t&) { return value(); }
    bool start_object(std::size_t) {
        value();
        open_.emplace_back();
        return nest();
    }
    bool key(json::string_t& k) {
        ticker_.tick();
        if (!open_.back().insert(k).second)
            fail(ErrorKind::InvalidParameter, "duplicate key \"" + k + "\" in " + what_,
                 "Each key may appear only once in a JSON object.");
        return true;
    }
    bool end_object() {
        open_.pop_back();
        --depth_;
        return true;
    }
    bool start_array(std::size_t) {
        value();
        return nest();
    }
    bool end_array() {
        --depth_;
        return true;
    }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
        fail(ErrorKind::Syntax, "syntax error in " + what_ + " JSON", parse_error_detail(e.what()));
    }

private:
    bool value() {
        ticker_.tick();
        return true;
    }
    bool nest() {
        if (++depth_ > 64)
            fail(ErrorKind::Syntax, "syntax error in " + what_ + " JSON",
                 "Values are nested more than 64 levels deep.");
        return true;
    }

    const std::string& what_;
    std::vector<std::set<std::string>> open_;  // keys seen in each open object
    int depth_ = 0;
    InterruptTicker ticker_;
};

}  // namespace

void check_text_size(std::string_view text, std::size_t limit, const std::string& what) {
    if (text.size() > limit)
        fail(ErrorKind::Limit, what + " is too large",
             "It has " + std::to_string(text.size()) + " bytes; hopper reads at most " + std::to_string(limit >> 20) +
                 " MB of " + what + " text.",
             "An architecture has at most " + std::to_string(kMaxLayers) + " layers of at most " +
                 std::to_string(kMaxDim) + " units each.");
}

json parse_json_text(std::string_view text, const std::string& what) {
    try {
        ValidatingSax sax(what);
        json::sax_parse(text.begin(), text.end(), &sax);
        check_interrupts();
        return json::parse(text.begin(), text.end());
    } catch (const json::parse_error& e) {
        fail(ErrorKind::Syntax, "syntax error in " + what + " JSON", parse_error_detail(e.what()));
    } catch (const json::exception& e) { fail(ErrorKind::Syntax, "syntax error in " + what + " JSON", e.what()); }
}

std::string show(const json& v) {
    std::string s;
    if (v.is_number_float()) {
        s = fmt_double(v.get<double>());
    } else {
        s = v.dump(-1, ' ', false, json::error_handler_t::replace);
    }
    if (s.size() > 80) {
        // Keep the closing quote or bracket so a message never ends in "." (PostgreSQL style).
        char close = s.back();
        s = s.substr(0, 76) + "...";
        if (close == '"' || close == '}' || close == ']') s += close;
    }
    return s;
}

std::string fmt_double(double d) {
    if (std::isnan(d)) return "NaN";
    if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
    char buf[40];
    for (int prec = 1; prec <= 17; ++prec) {
        std::snprintf(buf, sizeof buf, "%.*g", prec, d);
        double back = 0;
        std::from_chars(buf, buf + std::char_traits<char>::length(buf), back);
        if (back == d) break;
    }
    return buf;
}

double float_for_json(float f) {
    if (!std::isfinite(f)) return f;
    char buf[40];
    for (int prec = 1; prec <= 9; ++prec) {
        std::snprintf(buf, sizeof buf, "%.*g", prec, static_cast<double>(f));
        double back = 0;
        std::from_chars(buf, buf + std::char_traits<char>::length(buf), back);
        // The parser reads a double and casts it to float: test exactly that path.
        if (static_cast<float>(back) == f) return back;
    }
    return f;
}

std::string lower(std::string_view s) {
    std::string r(s);
    for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return r;
}

std::string squash(std::string_view s) {
    std::string r;
    for (char c : s)
        if (c != '_') r += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return r;
}

std::string join(const std::vector<std::string>& names, const char* sep) {
    std::string r;
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (i) r += sep;
        r += names[i];
    }
    return r;
}

void bad_value(const std::string& key, const std::string& where, const json& v, const std::string& detail,
               const std::string& hint) {
    fail(ErrorKind::InvalidParameter, "invalid value for \"" + key + "\"" + where + ": " + show(v), detail, hint);
}

void bad_size(const std::string& key, const std::string& where, const json& v, const std::string& detail) {
    int64_t n = 0;
    const bool huge = as_integer(v, int64_t(kMaxDim) + 1, INT64_MAX, n) ||
                      (v.is_number_float() && v.get<double>() >= 9223372036854775808.0) ||
                      (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX));
    if (huge) fail(ErrorKind::Limit, "value for \"" + key + "\"" + where + " is too large: " + show(v), detail);
    bad_value(key, where, v, detail);
}

bool as_integer(const json& v, int64_t lo, int64_t hi, int64_t& out) {
    if (v.is_number_unsigned()) {
        uint64_t u = v.get<uint64_t>();
        if (u > static_cast<uint64_t>(INT64_MAX)) return false;
        out = static_cast<int64_t>(u);
    } else if (v.is_number_integer()) {
        out = v.get<int64_t>();
    } else if (v.is_number_float()) {
        double d = v.get<double>();
        // 9223372036854775808.0 is 2^63, the first double outside int64.
        if (!std::isfinite(d) || d != std::floor(d) || d < -9223372036854775808.0 || d >= 9223372036854775808.0)
            return false;
        out = static_cast<int64_t>(d);
    } else {
        return false;
    }
    return out >= lo && out <= hi;
}

bool as_double(const json& v, double& out) {
    if (!v.is_number()) return false;
    out = v.get<double>();
    return std::isfinite(out);
}

void check_keys(const json& obj, const std::vector<std::string>& valid, const std::vector<std::string>& unsupported,
                const std::string& what) {
    for (auto it = obj.begin(); it != obj.end(); ++it) {
        const std::string& k = it.key();
        if (std::find(valid.begin(), valid.end(), k) != valid.end()) continue;
        const std::string hint = "Valid keys are: " + join(valid) + ".";
        // Keras' options default to None: an unsupported one given as None asks for nothing.
        if (it->is_null() && std::find(unsupported.begin(), unsupported.end(), k) != unsupported.end()) continue;
        // A Keras option hopper knows but has no counterpart for: a feature not supported (0A000).
        if (std::find(unsupported.begin(), unsupported.end(), k) != unsupported.end())
            fail(ErrorKind::FeatureNotSupported, "unsupported key \"" + k + "\" in " + what,
                 "hopper does not support Keras's " + k + " option.", hint);
        fail(ErrorKind::InvalidParameter, "unknown key \"" + k + "\" in " + what, {}, hint);
    }
}

}  // namespace hopper::cfg
