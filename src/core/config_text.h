// MADlib's Python-like parameter text (config_text.cpp): key=value pairs such as
//   loss='categorical_crossentropy', optimizer='SGD(lr=0.05, momentum=0.9)', metrics=['accuracy']
// and the tokens of Keras optimizer strings. Compile and fit parameters turn both their forms --
// a JSON object or this text -- into one JSON object, so that both accept the same keys and give
// the same messages. Includes only config_json.h. Not installed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config_json.h"

namespace hopper::cfg {

enum class Tk { End, Ident, String, Number, LBrack, RBrack, LParen, RParen, Comma, Equals, LBrace, RBrace, Colon };

struct Token {
    Tk kind;
    std::string text;  // identifier, unescaped string contents or number literal
    std::size_t pos;   // 0-based byte offset
};

struct Cursor {
    const std::vector<Token>& t;
    std::size_t i = 0;
    const Token& peek() const { return t[i]; }
    const Token& take() { return t[i < t.size() - 1 ? i++ : i]; }
};

// Syntax `syntax error in <what>` with "<Problem> at character <pos + 1>." as the detail.
[[noreturn]] void syntax(const std::string& what, std::size_t pos, const std::string& problem,
                         const std::string& hint = {});
std::vector<Token> tokenize(std::string_view s, const std::string& what);
std::string describe(const Token& tok);  // for messages: "end of input", "string 'x'", "\"=\""
// A scalar (or, when lists are allowed, a flat list of scalars) in Python syntax.
json parse_value(Cursor& c, const std::string& what, const std::string& key, bool allow_list);

// Parameters text (a JSON object, MADlib's text, or empty for all defaults) of at most
// kMaxParamsTextBytes, interpreted by from_object; nlohmann's own errors become InvalidParameter
// "invalid <what>".
json object_from_text(std::string_view text, const std::string& what);
template <typename FromObject>
auto parse_params_text(std::string_view text, const std::string& what, FromObject from_object) {
    check_text_size(text, kMaxParamsTextBytes, what);
    json obj = object_from_text(text, what);
    try {
        return from_object(obj);
    } catch (const json::exception& e) { fail(ErrorKind::InvalidParameter, "invalid " + what, e.what()); }
}

}  // namespace hopper::cfg
