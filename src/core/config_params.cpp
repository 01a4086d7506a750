// Compile and fit parameters: JSON objects or MADlib's Python-like text
//   loss='categorical_crossentropy', optimizer='SGD(lr=0.05, momentum=0.9)', metrics=['accuracy']
// Both forms are first turned into one JSON object, then interpreted by the same code, so they
// accept the same keys and give the same messages.
#include <algorithm>
#include <charconv>
#include <cctype>
#include <cmath>
#include <map>

#include "config_internal.h"

namespace hopper::cfg {

namespace {

// --- tokenizer for MADlib's key=value text and Keras optimizer strings ----------------------

enum class Tk { End, Ident, String, Number, LBrack, RBrack, LParen, RParen, Comma, Equals };

struct Token {
    Tk kind;
    std::string text;  // identifier, unescaped string contents or number literal
    std::size_t pos;   // 0-based byte offset
};

[[noreturn]] void syntax(const std::string& what, std::size_t pos, const std::string& problem,
                         const std::string& hint = {}) {
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
            while (digit(i)) { ++i; ++mant; }
            if (i < s.size() && s[i] == '.') {
                ++i;
                while (digit(i)) { ++i; ++mant; }
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
                if (ch == c) { closed = true; break; }
                if (ch == '\\' && i < s.size()) {
                    char e = s[i++];
                    switch (e) {
                        case '\\': case '\'': case '"': v += e; break;
                        case 'n': v += '\n'; break;
                        case 't': v += '\t'; break;
                        default: v += '\\'; v += e; break;  // Python keeps unknown escapes
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

struct Cursor {
    const std::vector<Token>& t;
    std::size_t i = 0;
    const Token& peek() const { return t[i]; }
    const Token& take() { return t[i < t.size() - 1 ? i++ : i]; }
};

std::string describe(const Token& tok) {
    switch (tok.kind) {
        case Tk::End: return "end of input";
        case Tk::String: return "string '" + tok.text.substr(0, 40) + "'";
        default: return "\"" + tok.text.substr(0, 40) + "\"";
    }
}

// A scalar (or, when lists are allowed, a flat list of scalars) in Python syntax.
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
                if (c.peek().kind == Tk::LBrack)
                    syntax(what, c.peek().pos, "nested list for \"" + key + "\"");
                arr.push_back(parse_value(c, what, key, false));
                const Token& sep = c.peek();
                if (sep.kind == Tk::Comma) { c.take(); continue; }  // Python allows [a, b,]
                if (sep.kind != Tk::RBrack)
                    syntax(what, sep.pos, "expected \",\" or \"]\" but found " + describe(sep));
            }
            c.take();
            return arr;
        }
        default:
            syntax(what, tok.pos, "expected a value for \"" + key + "\" but found " + describe(tok));
    }
}

// MADlib's form: key=value pairs separated by commas.
json parse_kv(std::string_view text, const std::string& what) {
    std::vector<Token> toks = tokenize(text, what);
    Cursor c{toks};
    json obj = json::object();
    if (c.peek().kind == Tk::End) return obj;
    const std::string hint = "Write parameters as key=value pairs separated by commas, e.g. " +
                             std::string(what == "fit parameters" ? "batch_size=64, epochs=1"
                                                                  : "loss='mse', optimizer='Adam(lr=0.001)'") + ".";
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
        if (sep.kind != Tk::Comma)
            syntax(what, sep.pos, "expected \",\" but found " + describe(sep), hint);
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
        const char* type = c == '[' ? "array" : c == '"' ? "string" : c == 'n' ? "null"
                         : (c == 't' || c == 'f') ? "boolean" : "number";
        fail(ErrorKind::InvalidParameter, what + " must be a JSON object or a list of key=value pairs",
             "Got JSON " + std::string(type) + ".", "Pass an empty string for the defaults.");
    }
    return parse_kv(text, what);
}

// --- optimizer ------------------------------------------------------------------------------

struct OptArg {
    json value;
    std::string written;  // the key as the user wrote it, for messages
};

const char* const kOptimizerHint =
    "Supported optimizers are: SGD (with momentum or nesterov), Adam, RMSprop.";

// Canonical name of an optimizer argument ("lr" -> "learning_rate"), or refuses it.
std::string canonical_arg(const std::string& key) {
    if (key == "lr" || key == "learning_rate") return "learning_rate";
    static const char* const known[] = {"momentum", "nesterov", "beta_1", "beta_2", "epsilon",
                                        "rho", "decay", "amsgrad", "centered"};
    for (const char* k : known)
        if (key == k) return key;
    if (key == "clipnorm" || key == "clipvalue" || key == "global_clipnorm")
        fail(ErrorKind::InvalidParameter, "unsupported optimizer argument \"" + key + "\"",
             "hopper does not clip gradients.");
    if (key == "weight_decay")
        fail(ErrorKind::InvalidParameter, "unsupported optimizer argument \"weight_decay\"",
             "Keras's optimizer weight_decay is decoupled weight decay, which hopper does not implement.",
             "For an L2 penalty on weights give weight_decay as a compile parameter of its own.");
    fail(ErrorKind::InvalidParameter, "unknown optimizer argument \"" + key + "\"", {},
         "Optimizer arguments are: learning_rate (lr), momentum, nesterov, beta_1, beta_2, epsilon, "
         "rho, decay.");
}

void add_arg(std::map<std::string, OptArg>& args, const std::string& key, const json& v) {
    if (key == "name") return;  // Keras optimizers take a name; it has no effect
    std::string c = canonical_arg(key);
    auto it = args.find(c);
    if (it != args.end())
        fail(ErrorKind::InvalidParameter, "duplicate value for \"" + c + "\" in compile parameters",
             it->second.written == key
                 ? "\"" + key + "\" is given twice."
                 : "It is given as \"" + it->second.written + "\" and as \"" + key + "\".");
    args[c] = OptArg{v, key};
}

// Keras-style optimizer string: Name or Name(arg=value, ...).
void parse_optimizer_string(const std::string& s, std::string& name, std::map<std::string, OptArg>& args) {
    const std::string what = "optimizer \"" + s.substr(0, 80) + "\"";
    std::vector<Token> toks = tokenize(s, what);
    Cursor c{toks};
    const Token& n = c.take();
    if (n.kind != Tk::Ident)
        syntax(what, n.pos, "expected an optimizer name but found " + describe(n),
               "Write the optimizer as e.g. 'SGD(lr=0.01, momentum=0.9)' or 'adam'.");
    name = n.text;
    auto dot = name.rfind('.');  // keras.optimizers.Adam -> Adam
    if (dot != std::string::npos) name = name.substr(dot + 1);
    if (c.peek().kind == Tk::LParen) {
        c.take();
        while (c.peek().kind != Tk::RParen) {
            const Token& k = c.take();
            if (k.kind != Tk::Ident || c.peek().kind != Tk::Equals)
                syntax(what, k.pos, "expected a named argument but found " + describe(k),
                       "Name each argument, e.g. SGD(lr=0.01).");
            c.take();
            json v = parse_value(c, what, k.text, false);
            add_arg(args, k.text, v);
            const Token& sep = c.peek();
            if (sep.kind == Tk::Comma) { c.take(); continue; }
            if (sep.kind != Tk::RParen)
                syntax(what, sep.pos, "expected \",\" or \")\" but found " + describe(sep));
        }
        c.take();
    }
    if (c.peek().kind != Tk::End)
        syntax(what, c.peek().pos, "unexpected " + describe(c.peek()) + " after the optimizer");
}

// Range check shared by parsing (naming the key as written) and validate_compile.
void check_opt_range(const std::string& canonical, const std::string& written, double v) {
    auto bad = [&](const char* what) {
        bad_value(written, "", v, canonical + " must be " + what + ".");
    };
    if (canonical == "learning_rate" || canonical == "epsilon") {
        if (!(std::isfinite(v) && v > 0)) bad("a positive finite number");
    } else if (canonical == "momentum" || canonical == "beta_1" || canonical == "beta_2" ||
               canonical == "rho") {
        if (!(v >= 0 && v < 1)) bad("at least 0 and less than 1");
    } else if (canonical == "decay" || canonical == "weight_decay") {
        if (!(std::isfinite(v) && v >= 0)) bad("a non-negative finite number");
    }
}

double opt_number(const OptArg& a, const std::string& canonical) {
    double d = 0;
    if (!a.value.is_number())
        bad_value(a.written, "", a.value, canonical + " must be a number.");
    d = a.value.get<double>();
    check_opt_range(canonical, a.written, d);
    return d;
}

bool opt_bool(const OptArg& a) {
    if (!a.value.is_boolean())
        bad_value(a.written, "", a.value, a.written + " must be True or False.");
    return a.value.get<bool>();
}

OptimizerConfig build_optimizer(std::string name, const std::map<std::string, OptArg>& args) {
    const std::string n = lower(name);
    std::vector<std::string> allowed;
    OptimizerConfig o;
    if (n == "sgd" || n == "momentum" || n == "nesterov") {
        allowed = {"learning_rate", "momentum", "nesterov", "decay"};
    } else if (n == "adam") {
        allowed = {"learning_rate", "beta_1", "beta_2", "epsilon", "decay", "amsgrad"};
    } else if (n == "rmsprop") {
        allowed = {"learning_rate", "rho", "epsilon", "decay", "momentum", "centered"};
    } else {
        fail(ErrorKind::InvalidParameter, "unsupported optimizer \"" + name + "\"", {}, kOptimizerHint);
    }
    const std::string family = n == "adam" ? "adam" : n == "rmsprop" ? "rmsprop" : "sgd";
    for (const auto& [k, a] : args)
        if (std::find(allowed.begin(), allowed.end(), k) == allowed.end())
            fail(ErrorKind::InvalidParameter,
                 "optimizer argument \"" + a.written + "\" does not apply to " + family,
                 "The " + family + " optimizer takes: " + join(allowed) + ".",
                 k == "momentum" ? "Momentum is an argument of SGD, e.g. optimizer='SGD(lr=0.01, momentum=0.9)'."
                                 : std::string());
    auto get = [&](const char* k) -> const OptArg* {
        auto it = args.find(k);
        return it == args.end() ? nullptr : &it->second;
    };
    // Keras defaults: SGD 0.01, Adam and RMSprop 0.001.
    o.learning_rate = family == "sgd" ? 0.01 : 0.001;
    if (auto a = get("learning_rate")) o.learning_rate = opt_number(*a, "learning_rate");
    if (auto a = get("decay")) o.decay = opt_number(*a, "decay");
    if (auto a = get("epsilon")) o.epsilon = opt_number(*a, "epsilon");
    if (family == "sgd") {
        bool nesterov = n == "nesterov";
        if (auto a = get("nesterov")) {
            bool v = opt_bool(*a);
            if (n == "nesterov" && !v)
                fail(ErrorKind::InvalidParameter, "optimizer nesterov contradicts nesterov=False");
            nesterov = v;
        }
        // The names "momentum" and "nesterov" ask for momentum: 0.9 unless given (SGD's Keras
        // default stays 0).
        o.momentum = (n == "momentum" || n == "nesterov") ? 0.9 : 0.0;
        if (auto a = get("momentum")) o.momentum = opt_number(*a, "momentum");
        o.kind = nesterov ? OptimizerKind::Nesterov
                 : (n == "momentum" || o.momentum > 0) ? OptimizerKind::Momentum
                                                         : OptimizerKind::SGD;
    } else if (family == "adam") {
        o.kind = OptimizerKind::Adam;
        if (auto a = get("beta_1")) o.beta1 = opt_number(*a, "beta_1");
        if (auto a = get("beta_2")) o.beta2 = opt_number(*a, "beta_2");
        if (auto a = get("amsgrad"); a && opt_bool(*a))
            fail(ErrorKind::InvalidParameter, "amsgrad is not supported",
                 "hopper implements Adam without the AMSGrad variant.",
                 "Use amsgrad=False or leave it out.");
    } else {
        o.kind = OptimizerKind::RMSprop;
        if (auto a = get("rho")) o.rho = opt_number(*a, "rho");
        if (auto a = get("momentum"); a && opt_number(*a, "momentum") != 0.0)
            fail(ErrorKind::InvalidParameter, "momentum is not supported with rmsprop",
                 "hopper implements RMSprop without momentum.", "Use momentum=0 or leave it out.");
        if (auto a = get("centered"); a && opt_bool(*a))
            fail(ErrorKind::InvalidParameter, "centered RMSprop is not supported",
                 "hopper implements plain RMSprop.", "Use centered=False or leave it out.");
    }
    return o;
}

// --- loss and metrics -----------------------------------------------------------------------

const char* const kLossHint =
    "Supported losses are: categorical_crossentropy (softmax_cross_entropy), binary_crossentropy, "
    "mean_squared_error (mse).";
const char* const kMetricHint =
    "Supported metrics are: accuracy (acc, categorical_accuracy, binary_accuracy), "
    "top_k_accuracy (top_k_categorical_accuracy), mean_squared_error (mse), "
    "mean_absolute_error (mae), loss.";

Loss loss_from(const json& v) {
    if (!v.is_string()) bad_value("loss", "", v, "loss must be a loss name.", kLossHint);
    const std::string& s = v.get_ref<const std::string&>();
    std::string n = squash(s);  // also accepts Keras class names (CategoricalCrossentropy)
    if (n == "categoricalcrossentropy" || n == "softmaxcrossentropy") return Loss::SoftmaxCrossEntropy;
    if (n == "binarycrossentropy") return Loss::BinaryCrossEntropy;
    if (n == "meansquarederror" || n == "mse") return Loss::MeanSquaredError;
    if (n == "sparsecategoricalcrossentropy")
        fail(ErrorKind::InvalidParameter, "unsupported loss \"" + s + "\"",
             "hopper's preprocessing one-hot encodes class labels, so the labels are not sparse.",
             "Use loss='categorical_crossentropy'.");
    fail(ErrorKind::InvalidParameter, "unsupported loss \"" + s + "\"", {}, kLossHint);
}

Metric metric_from(const json& v) {
    if (!v.is_string()) bad_value("metrics", "", v, "Each metric must be a metric name.", kMetricHint);
    const std::string& s = v.get_ref<const std::string&>();
    std::string n = lower(s);
    if (n == "accuracy" || n == "acc" || n == "categorical_accuracy" || n == "binary_accuracy")
        return Metric::Accuracy;
    if (n == "top_k_categorical_accuracy" || n == "top_k_accuracy") return Metric::TopKAccuracy;
    if (n == "mean_squared_error" || n == "mse") return Metric::MeanSquaredError;
    if (n == "mean_absolute_error" || n == "mae") return Metric::MeanAbsoluteError;
    if (n == "loss") return Metric::Loss;
    if (n == "sparse_categorical_accuracy" || n == "sparse_top_k_categorical_accuracy")
        fail(ErrorKind::InvalidParameter, "unsupported metric \"" + s + "\"",
             "hopper's preprocessing one-hot encodes class labels, so the labels are not sparse.",
             kMetricHint);
    fail(ErrorKind::InvalidParameter, "unsupported metric \"" + s + "\"", {}, kMetricHint);
}

void check_keys(const json& obj, const std::vector<std::string>& valid,
                const std::vector<std::string>& unsupported, const std::string& what) {
    for (auto it = obj.begin(); it != obj.end(); ++it) {
        const std::string& k = it.key();
        if (std::find(valid.begin(), valid.end(), k) != valid.end()) continue;
        const std::string hint = "Valid keys are: " + join(valid) + ".";
        if (std::find(unsupported.begin(), unsupported.end(), k) != unsupported.end())
            fail(ErrorKind::InvalidParameter, "unsupported key \"" + k + "\" in " + what,
                 "hopper does not support Keras's " + k + " option.", hint);
        fail(ErrorKind::InvalidParameter, "unknown key \"" + k + "\" in " + what, {}, hint);
    }
}

}  // namespace

CompileParams compile_from_object(const json& obj) {
    static const std::vector<std::string> valid = {
        "loss", "loss_given", "optimizer", "learning_rate", "lr", "momentum", "nesterov",
        "beta_1", "beta_2", "epsilon", "rho", "decay", "weight_decay", "metrics", "top_k"};
    static const std::vector<std::string> unsupported = {
        "loss_weights", "sample_weight_mode", "weighted_metrics", "target_tensors",
        "run_eagerly", "steps_per_execution", "jit_compile", "auto_scale_loss"};
    check_keys(obj, valid, unsupported, "compile parameters");
    CompileParams c;

    if (auto it = obj.find("loss"); it != obj.end() && !it->is_null()) {
        c.loss = loss_from(*it);
        c.loss_given = true;
    }
    if (auto it = obj.find("loss_given"); it != obj.end()) {
        // Written by CompileParams::to_json so that an inferred loss round-trips as inferred.
        if (!it->is_boolean()) bad_value("loss_given", "", *it, "loss_given must be true or false.");
        if (it->get<bool>() && !c.loss_given)
            fail(ErrorKind::InvalidParameter, "loss_given is true but no loss is given");
        c.loss_given = it->get<bool>();
    }

    std::string opt_name = "sgd";
    std::map<std::string, OptArg> args;
    if (auto it = obj.find("optimizer"); it != obj.end() && !it->is_null()) {
        if (it->is_string()) {
            parse_optimizer_string(it->get<std::string>(), opt_name, args);
        } else if (it->is_object()) {  // {"name": "adam", "learning_rate": 0.001, ...}
            auto n = it->find("name");
            if (n == it->end() || !n->is_string())
                fail(ErrorKind::InvalidParameter, "optimizer object has no \"name\"", {},
                     "Write e.g. {\"name\": \"adam\", \"learning_rate\": 0.001}.");
            opt_name = n->get<std::string>();
            for (auto a = it->begin(); a != it->end(); ++a)
                if (a.key() != "name") add_arg(args, a.key(), a.value());
        } else {
            bad_value("optimizer", "", *it, "optimizer must be a name such as 'adam', a Keras-style "
                                            "string such as 'SGD(lr=0.01)' or an object.",
                      kOptimizerHint);
        }
    }
    // Top-level optimizer arguments (JSON form, and hopper's extension of MADlib's form).
    for (const char* k : {"learning_rate", "lr", "momentum", "nesterov", "beta_1", "beta_2",
                          "epsilon", "rho", "decay"})
        if (auto it = obj.find(k); it != obj.end()) add_arg(args, k, *it);
    c.optimizer = build_optimizer(opt_name, args);

    if (auto it = obj.find("weight_decay"); it != obj.end()) {
        if (!it->is_number()) bad_value("weight_decay", "", *it, "weight_decay must be a number.");
        c.optimizer.weight_decay = it->get<double>();
        check_opt_range("weight_decay", "weight_decay", c.optimizer.weight_decay);
    }
    if (auto it = obj.find("metrics"); it != obj.end() && !it->is_null()) {
        if (!it->is_array())
            bad_value("metrics", "", *it, "metrics must be a list of metric names.",
                      "Write e.g. metrics=['accuracy'].");
        std::vector<std::string> written;
        for (const json& m : *it) {
            Metric mm = metric_from(m);
            auto dup = std::find(c.metrics.begin(), c.metrics.end(), mm);
            if (dup != c.metrics.end()) {
                const std::string& first = written[static_cast<std::size_t>(dup - c.metrics.begin())];
                fail(ErrorKind::InvalidParameter, "duplicate metric " + show(m),
                     first == m.get<std::string>()
                         ? "The metric is listed twice."
                         : "\"" + first + "\" and " + show(m) + " are the same metric (" +
                               to_string(mm) + ").");
            }
            c.metrics.push_back(mm);
            written.push_back(m.get<std::string>());
        }
    }
    if (auto it = obj.find("top_k"); it != obj.end()) {
        int64_t v = 0;
        if (!as_integer(*it, 1, 1000, v))
            bad_value("top_k", "", *it, "top_k must be an integer between 1 and 1000.");
        c.top_k = static_cast<int>(v);
    }
    return c;
}

FitParams fit_from_object(const json& obj) {
    static const std::vector<std::string> valid = {"batch_size", "epochs", "seed", "verbose"};
    static const std::vector<std::string> unsupported = {
        "shuffle", "validation_split", "validation_data", "callbacks", "class_weight",
        "sample_weight", "initial_epoch", "steps_per_epoch", "validation_steps",
        "validation_batch_size", "validation_freq", "max_queue_size", "workers",
        "use_multiprocessing", "x", "y"};
    check_keys(obj, valid, unsupported, "fit parameters");
    FitParams f;
    int64_t v = 0;
    if (auto it = obj.find("batch_size"); it != obj.end()) {
        if (!as_integer(*it, 1, kMaxDim, v))
            bad_size("batch_size", "", *it, "batch_size must be an integer between 1 and 1000000.");
        f.batch_size = static_cast<int>(v);
    }
    if (auto it = obj.find("epochs"); it != obj.end()) {
        if (!as_integer(*it, 1, 1000, v))
            bad_value("epochs", "", *it, "epochs must be an integer between 1 and 1000.");
        f.epochs = static_cast<int>(v);
    }
    if (auto it = obj.find("seed"); it != obj.end()) {
        if (!as_integer(*it, 0, INT64_MAX, v))
            bad_value("seed", "", *it, "seed must be an integer between 0 and 9223372036854775807.");
        f.seed = static_cast<uint64_t>(v);
    }
    // verbose: accepted and ignored, because MADlib users pass Keras's verbose=0 out of habit
    // and hopper reports progress through PostgreSQL instead. Only its type is checked.
    if (auto it = obj.find("verbose"); it != obj.end())
        if (!it->is_number() && !it->is_boolean())
            bad_value("verbose", "", *it, "verbose must be a number or a boolean (it is ignored).");
    return f;
}

void validate_compile(const CompileParams& c) {
    const OptimizerConfig& o = c.optimizer;
    check_opt_range("learning_rate", "learning_rate", o.learning_rate);
    check_opt_range("decay", "decay", o.decay);
    check_opt_range("weight_decay", "weight_decay", o.weight_decay);
    switch (o.kind) {
        case OptimizerKind::SGD: break;
        case OptimizerKind::Momentum:
        case OptimizerKind::Nesterov: check_opt_range("momentum", "momentum", o.momentum); break;
        case OptimizerKind::Adam:
            check_opt_range("beta_1", "beta_1", o.beta1);
            check_opt_range("beta_2", "beta_2", o.beta2);
            check_opt_range("epsilon", "epsilon", o.epsilon);
            break;
        case OptimizerKind::RMSprop:
            check_opt_range("rho", "rho", o.rho);
            check_opt_range("epsilon", "epsilon", o.epsilon);
            break;
    }
    if (c.top_k < 1 || c.top_k > 1000)
        bad_value("top_k", "", c.top_k, "top_k must be an integer between 1 and 1000.");
    for (std::size_t i = 0; i < c.metrics.size(); ++i)
        for (std::size_t k = 0; k < i; ++k)
            if (c.metrics[i] == c.metrics[k])
                fail(ErrorKind::InvalidParameter,
                     "duplicate metric \"" + std::string(to_string(c.metrics[i])) + "\"");
}

void validate_fit(const FitParams& f) {
    if (f.batch_size < 1 || f.batch_size > kMaxDim)
        bad_value("batch_size", "", f.batch_size, "batch_size must be an integer between 1 and 1000000.");
    if (f.epochs < 1 || f.epochs > 1000)
        bad_value("epochs", "", f.epochs, "epochs must be an integer between 1 and 1000.");
    if (f.seed > static_cast<uint64_t>(INT64_MAX))
        bad_value("seed", "", f.seed, "seed must be an integer between 0 and 9223372036854775807.");
}

ojson compile_to_ojson(const CompileParams& c) {
    const OptimizerConfig& o = c.optimizer;
    ojson opt;
    opt["name"] = to_string(o.kind);
    opt["learning_rate"] = o.learning_rate;
    // Only the arguments of this optimizer: the parser refuses the others.
    switch (o.kind) {
        case OptimizerKind::SGD: break;
        case OptimizerKind::Momentum:
        case OptimizerKind::Nesterov: opt["momentum"] = o.momentum; break;
        case OptimizerKind::Adam:
            opt["beta_1"] = o.beta1;
            opt["beta_2"] = o.beta2;
            opt["epsilon"] = o.epsilon;
            break;
        case OptimizerKind::RMSprop:
            opt["rho"] = o.rho;
            opt["epsilon"] = o.epsilon;
            break;
    }
    opt["decay"] = o.decay;
    ojson j;
    j["loss"] = to_string(c.loss);
    j["loss_given"] = c.loss_given;
    j["optimizer"] = std::move(opt);
    j["weight_decay"] = o.weight_decay;
    ojson m = ojson::array();
    for (Metric x : c.metrics) m.push_back(to_string(x));
    j["metrics"] = std::move(m);
    j["top_k"] = c.top_k;
    return j;
}

ojson fit_to_ojson(const FitParams& f) {
    ojson j;
    j["batch_size"] = f.batch_size;
    j["epochs"] = f.epochs;
    j["seed"] = f.seed;
    return j;
}

}  // namespace hopper::cfg

namespace hopper {

using namespace cfg;

CompileParams parse_compile_params(std::string_view text) {
    check_text_size(text, kMaxParamsTextBytes, "compile parameters");
    json obj = object_from_text(text, "compile parameters");
    try {
        return compile_from_object(obj);
    } catch (const json::exception& e) {
        fail(ErrorKind::InvalidParameter, "invalid compile parameters", e.what());
    }
}

FitParams parse_fit_params(std::string_view text) {
    check_text_size(text, kMaxParamsTextBytes, "fit parameters");
    json obj = object_from_text(text, "fit parameters");
    try {
        return fit_from_object(obj);
    } catch (const json::exception& e) {
        fail(ErrorKind::InvalidParameter, "invalid fit parameters", e.what());
    }
}

std::string CompileParams::to_json() const { return compile_to_ojson(*this).dump(); }
std::string FitParams::to_json() const { return fit_to_ojson(*this).dump(); }

}  // namespace hopper
