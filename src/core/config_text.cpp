// MADlib's Python-like parameter text and its tokenizer (config_text.h).
#include "config_text.h"

#include <cctype>
#include <charconv>
#include <cmath>

namespace hopper::cfg {

// --- tokenizer for MADlib's key=value text and Keras optimizer strings ----------------------

void syntax(const std::string& what, std::size_t pos, const std::string& problem, const std::string& hint) {
    std::string d = problem + " at character " + std::to_string(pos + 1) + ".";
    d[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(d[0])));  // a sentence
    fail(ErrorKind::Syntax, "syntax error in " + what, d, hint);
}

std::vector<Token> tokenize(std::string_view s, const std::string& what) {
    std::vector<Token> out;
    std::size_t i = 0;
    auto digit = [&](std::size_t k) { return k < s.size() && std::isdigit(static_cast<unsigned char>(s[k])); };
    while (true) {
        while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
        if (i >= s.size()) break;
        const std::size_t start = i;
        const char c = s[i];
        if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
            while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_' || s[i] == '.')) ++i;
            out.push_back({Tk::Ident, std::string(s.substr(start, i - start)), start});
        } else if (digit(i) || ((c == '.' || c == '+' || c == '-') &&
                                (digit(i + 1) || (s.size() > i + 1 && s[i + 1] == '.' && digit(i + 2))))) {
            // Python float/int literal: [sign] digits [. digits] [e [sign] digits]
            if (c == '+' || c == '-') ++i;
            std::size_t mant = 0;
            while (digit(i)) {
                ++i;
                ++mant;
            }
            if (i < s.size() && s[i] == '.') {
                ++i;
                while (digit(i)) {
                    ++i;
                    ++mant;
                }
            }
            if (mant == 0) syntax(what, start, "invalid number");
            if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
                ++i;
                if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
                if (!digit(i)) syntax(what, start, "invalid number");
                while (digit(i)) ++i;
            }
            if (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_' || s[i] == '.'))
                syntax(what, start, "invalid number");
            out.push_back({Tk::Number, std::string(s.substr(start, i - start)), start});
        } else if (c == '\'' || c == '"') {
            std::string v;
            ++i;
            bool closed = false;
            while (i < s.size()) {
                char ch = s[i++];
                if (ch == c) {
                    closed = true;
                    break;
                }
                if (ch == '\\' && i < s.size()) {
                    char e = s[i++];
                    switch (e) {
                        case '\\':
                        case '\'':
                        case '"': v += e; break;
                        case 'n': v += '\n'; break;
                        case 't': v += '\t'; break;
                        default:
                            v += '\\';
                            v += e;
                            break;  // Python keeps unknown escapes
                    }
                    continue;
                }
                v += ch;
            }
            if (!closed)
                syntax(what, start, "unterminated quoted string",
                       "Close each string with the quote character that opened it.");
            out.push_back({Tk::String, std::move(v), start});
        } else {
            Tk k;
            switch (c) {
                case '[': k = Tk::LBrack; break;
                case ']': k = Tk::RBrack; break;
                case '(': k = Tk::LParen; break;
                case ')': k = Tk::RParen; break;
                case ',': k = Tk::Comma; break;
                case '=': k = Tk::Equals; break;
                case '{': k = Tk::LBrace; break;
                case '}': k = Tk::RBrace; break;
                case ':': k = Tk::Colon; break;
                default: {
                    std::string shown = std::isprint(static_cast<unsigned char>(c))
                                            ? "\"" + std::string(1, c) + "\""
                                            : "byte " + std::to_string(static_cast<unsigned char>(c));
                    syntax(what, start, "unexpected character " + shown);
                }
            }
            ++i;
            out.push_back({k, std::string(1, c), start});
        }
    }
    out.push_back({Tk::End, {}, s.size()});
    return out;
}

json number_value(const std::string& t) {
    const char* b = t.data();
    const char* e = t.data() + t.size();
    bool integral = t.find_first_of(".eE") == std::string::npos;
    if (*b == '+') ++b;
    if (integral) {
        int64_t i = 0;
        auto r = std::from_chars(b, e, i);
        if (r.ec == std::errc() && r.ptr == e) return json(i);
        uint64_t u = 0;
        r = std::from_chars(b, e, u);
        if (r.ec == std::errc() && r.ptr == e) return json(u);
    }
    double d = 0;
    auto r = std::from_chars(b, e, d);
    if (r.ec == std::errc::result_out_of_range) {
        // Python gives inf for 1e400 and 0.0 for 1e-400.
        auto ep = t.find_first_of("eE");
        bool tiny = ep != std::string::npos && ep + 1 < t.size() && t[ep + 1] == '-';
        d = tiny ? 0.0 : HUGE_VAL;
        if (t[0] == '-') d = -d;
    }
    return json(d);
}

std::string describe(const Token& tok) {
    switch (tok.kind) {
        case Tk::End: return "end of input";
        case Tk::String: return "string '" + tok.text.substr(0, 40) + "'";
        default: return "\"" + tok.text.substr(0, 40) + "\"";
    }
}

json parse_value(Cursor& c, const std::string& what, const std::string& key, bool allow_list) {
    const Token& tok = c.take();
    switch (tok.kind) {
        case Tk::String: return json(tok.text);
        case Tk::Number: return number_value(tok.text);
        case Tk::Ident: {
            std::string l = lower(tok.text);
            if (l == "true") return json(true);
            if (l == "false") return json(false);
            if (l == "none" || l == "null") return json(nullptr);
            syntax(what, tok.pos, "unquoted value \"" + tok.text.substr(0, 40) + "\" for \"" + key + "\"",
                   "Quote string values, e.g. " + key + "='" + tok.text.substr(0, 40) + "'.");
        }
        case Tk::LBrack: {
            if (!allow_list) syntax(what, tok.pos, "unexpected list for \"" + key + "\"");
            json arr = json::array();
            while (c.peek().kind != Tk::RBrack) {
                if (c.peek().kind == Tk::LBrack) syntax(what, c.peek().pos, "nested list for \"" + key + "\"");
                arr.push_back(parse_value(c, what, key, false));
                const Token& sep = c.peek();
                if (sep.kind == Tk::Comma) {
                    c.take();
                    continue;
                }  // Python allows [a, b,]
                if (sep.kind != Tk::RBrack) syntax(what, sep.pos, "expected \",\" or \"]\" but found " + describe(sep));
            }
            c.take();
            return arr;
        }
        case Tk::LBrace: {
            // A Python dict of numbers or strings to plain values (Keras' class_weight={0: 10, 1: 1}),
            // as a JSON object whose keys are the keys' text.
            if (!allow_list) syntax(what, tok.pos, "unexpected dict for \"" + key + "\"");
            json obj = json::object();
            while (c.peek().kind != Tk::RBrace) {
                const Token& k = c.take();
                if (k.kind != Tk::Number && k.kind != Tk::String)
                    syntax(what, k.pos,
                           "expected a number or a string as a key of \"" + key + "\" but found " + describe(k));
                if (c.peek().kind != Tk::Colon)
                    syntax(what, c.peek().pos, "expected \":\" but found " + describe(c.peek()));
                c.take();
                if (obj.contains(k.text))
                    fail(ErrorKind::InvalidParameter,
                         "duplicate key " + describe(k) + " in \"" + key + "\" of " + what);
                obj[k.text] = parse_value(c, what, key, false);
                const Token& sep = c.peek();
                if (sep.kind == Tk::Comma) {
                    c.take();
                    continue;
                }  // Python allows {a: b,}
                if (sep.kind != Tk::RBrace) syntax(what, sep.pos, "expected \",\" or \"}\" but found " + describe(sep));
            }
            c.take();
            return obj;
        }
        default: syntax(what, tok.pos, "expected a value for \"" + key + "\" but found " + describe(tok));
    }
}

// MADlib's form: key=value pairs separated by commas.
json parse_kv(std::string_view text, const std::string& what) {
    std::vector<Token> toks = tokenize(text, what);
    Cursor c{toks};
    json obj = json::object();
    if (c.peek().kind == Tk::End) return obj;
    const std::string hint =
        "Write parameters as key=value pairs separated by commas, e.g. " +
        std::string(what == "fit parameters" ? "batch_size=64, epochs=1" : "loss='mse', optimizer='Adam(lr=0.001)'") +
        ".";
    while (true) {
        const Token& k = c.take();
        if (k.kind != Tk::Ident || k.text.find('.') != std::string::npos)
            syntax(what, k.pos, "expected a parameter name but found " + describe(k), hint);
        if (c.peek().kind != Tk::Equals)
            syntax(what, c.peek().pos, "expected \"=\" after \"" + k.text + "\" but found " + describe(c.peek()), hint);
        c.take();
        json v = parse_value(c, what, k.text, true);
        if (obj.contains(k.text))
            fail(ErrorKind::InvalidParameter, "duplicate key \"" + k.text + "\" in " + what,
                 "Each parameter may be given only once.");
        obj[k.text] = std::move(v);
        const Token& sep = c.take();
        if (sep.kind == Tk::End) break;
        if (sep.kind != Tk::Comma) syntax(what, sep.pos, "expected \",\" but found " + describe(sep), hint);
        // MADlib splits on commas, so a trailing comma there is an empty parameter: refuse it.
        if (c.peek().kind == Tk::End) syntax(what, sep.pos, "trailing comma", hint);
    }
    return obj;
}

// JSON object, MADlib text, or empty (all defaults).
json object_from_text(std::string_view text, const std::string& what) {
    std::size_t p = 0;
    while (p < text.size() && std::isspace(static_cast<unsigned char>(text[p]))) ++p;
    if (p == text.size()) return json::object();  // MADlib accepts '' for all defaults
    if (text[p] == '{') return parse_json_text(text, what);
    if (json::accept(text.begin(), text.end())) {
        // Valid JSON that is not an object (null, a list, ...). Its type follows from the first
        // character; parsing it again could build a deeply nested value for nothing.
        const char c = text[p];
        const char* type = c == '['                 ? "array"
                           : c == '"'               ? "string"
                           : c == 'n'               ? "null"
                           : (c == 't' || c == 'f') ? "boolean"
                                                    : "number";
        fail(ErrorKind::InvalidParameter, what + " must be a JSON object or a list of key=value pairs",
             "Got JSON " + std::string(type) + ".", "Pass an empty string for the defaults.");
    }
    return parse_kv(text, what);
}

}  // namespace hopper::cfg
