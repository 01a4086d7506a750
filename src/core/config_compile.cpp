// Compile parameters: JSON objects or MADlib's text (config_text.h)
//   loss='categorical_crossentropy', optimizer='SGD(lr=0.05, momentum=0.9)', metrics=['accuracy']
// read through the tables of optimizers, losses and metrics (vocabulary.h).
#include <algorithm>
#include <cmath>
#include <map>

#include "config_params.h"
#include "config_text.h"
#include "vocabulary.h"

namespace hopper {

const char* to_string(Loss l) {
    const auto* s = vocab::loss(l);
    return s ? s->name : "unknown";
}

const char* to_string(OptimizerKind o) {
    const vocab::OptimizerSpec* s = vocab::optimizer(o);
    return s ? s->name : "unknown";
}

const char* to_string(Metric m) {
    const auto* s = vocab::metric(m);
    return s ? s->name : "unknown";
}

namespace cfg {

namespace {

// --- optimizer ------------------------------------------------------------------------------

struct OptArg {
    json value;
    std::string written;  // the key as the user wrote it, for messages
};

// The optimizer arguments also accepted as compile parameters of their own (JSON form, and
// hopper's extension of MADlib's form), each spelling.
const std::vector<std::string>& top_level_optimizer_keys() {
    static const std::vector<std::string> keys = [] {
        std::vector<std::string> k;
        for (const vocab::OptimizerArg& a : vocab::optimizer_args())
            if (a.where == vocab::OptimizerArg::Where::Everywhere) {
                k.push_back(a.name);
                if (a.alias) k.push_back(a.alias);
            }
        return k;
    }();
    return keys;
}

// The table entry of a (hand-built) config's optimizer kind; Internal for a value outside the enum.
const vocab::OptimizerSpec& optimizer_spec(OptimizerKind kind) {
    if (const vocab::OptimizerSpec* s = vocab::optimizer(kind)) return *s;
    fail(ErrorKind::Internal, "unknown optimizer kind");
}

std::string optimizer_hint() {
    std::vector<std::string> names;
    for (const vocab::OptimizerSpec& o : vocab::optimizers())
        if (o.listed) names.push_back(o.listed);
    return "Supported optimizers are: " + join(names) + ".";
}

// Canonical name of an optimizer argument ("lr" -> "learning_rate"), or refuses it.
std::string canonical_arg(const std::string& key) {
    for (const vocab::OptimizerArg& a : vocab::optimizer_args())
        if (a.where != vocab::OptimizerArg::Where::CompileOnly && (key == a.name || (a.alias && key == a.alias)))
            return a.name;
    if (key == "clipnorm" || key == "clipvalue" || key == "global_clipnorm")
        fail(ErrorKind::InvalidParameter, "unsupported optimizer argument \"" + key + "\"",
             "hopper does not clip gradients.");
    if (key == "weight_decay")
        fail(ErrorKind::InvalidParameter, "unsupported optimizer argument \"weight_decay\"",
             "Keras's optimizer weight_decay is decoupled weight decay, which hopper does not implement.",
             "For an L2 penalty on weights give weight_decay as a compile parameter of its own.");
    std::vector<std::string> listed;
    for (const vocab::OptimizerArg& a : vocab::optimizer_args())
        if (a.where == vocab::OptimizerArg::Where::Everywhere)
            listed.push_back(a.alias ? std::string(a.name) + " (" + a.alias + ")" : std::string(a.name));
    fail(ErrorKind::InvalidParameter, "unknown optimizer argument \"" + key + "\"", {},
         "Optimizer arguments are: " + join(listed) + ".");
}

void add_arg(std::map<std::string, OptArg>& args, const std::string& key, const json& v) {
    if (key == "name") return;  // Keras optimizers take a name; it has no effect
    // None takes the default, as Keras' Adam(epsilon=None) does (MADlib's tests write it).
    if (v.is_null()) return;
    std::string c = canonical_arg(key);
    auto it = args.find(c);
    if (it != args.end())
        fail(ErrorKind::InvalidParameter, "duplicate value for \"" + c + "\" in compile parameters",
             it->second.written == key ? "\"" + key + "\" is given twice."
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
            if (sep.kind == Tk::Comma) {
                c.take();
                continue;
            }
            if (sep.kind != Tk::RParen) syntax(what, sep.pos, "expected \",\" or \")\" but found " + describe(sep));
        }
        c.take();
    }
    if (c.peek().kind != Tk::End)
        syntax(what, c.peek().pos, "unexpected " + describe(c.peek()) + " after the optimizer");
}

// Range check shared by parsing (naming the key as written) and validate_compile.
void check_opt_range(const std::string& canonical, const std::string& written, double v) {
    using R = vocab::OptimizerArg::Range;
    const vocab::OptimizerArg* a = vocab::optimizer_arg(canonical);
    if (!a) fail(ErrorKind::Internal, "unknown optimizer argument \"" + canonical + "\"");
    auto bad = [&](const char* what) { bad_value(written, "", v, canonical + " must be " + what + "."); };
    if (a->range == R::Positive && !(std::isfinite(v) && v > 0)) bad("a positive finite number");
    if (a->range == R::Fraction && !(v >= 0 && v < 1)) bad("at least 0 and less than 1");
    if (a->range == R::NonNegative && !(std::isfinite(v) && v >= 0)) bad("a non-negative finite number");
}

double opt_number(const OptArg& a, const std::string& canonical) {
    double d = 0;
    if (!a.value.is_number()) bad_value(a.written, "", a.value, canonical + " must be a number.");
    d = a.value.get<double>();
    check_opt_range(canonical, a.written, d);
    return d;
}

bool opt_bool(const OptArg& a) {
    if (!a.value.is_boolean()) bad_value(a.written, "", a.value, a.written + " must be True or False.");
    return a.value.get<bool>();
}

class GivenArgs : public vocab::GivenOptimizerArgs {
public:
    explicit GivenArgs(const std::map<std::string, OptArg>& args) : args_(args) {}
    const OptArg* get(const char* k) const {
        auto it = args_.find(k);
        return it == args_.end() ? nullptr : &it->second;
    }
    bool has(const char* k) const override { return get(k) != nullptr; }
    double number(const char* k) const override { return opt_number(*get(k), k); }
    bool flag(const char* k) const override { return opt_bool(*get(k)); }

private:
    const std::map<std::string, OptArg>& args_;
};

OptimizerConfig build_optimizer(std::string name, const std::map<std::string, OptArg>& args) {
    const std::string n = lower(name);
    const vocab::OptimizerSpec* spec = vocab::optimizer_named(n);
    if (!spec) {
        for (const vocab::RefusedName& r : vocab::refused_optimizers())
            if (n == r.written)
                fail(ErrorKind::FeatureNotSupported, "optimizer \"" + name + "\" is not supported by hopper", r.detail,
                     r.hint ? std::string(r.hint) : optimizer_hint());
        fail(ErrorKind::InvalidParameter, "unsupported optimizer \"" + name + "\"", {}, optimizer_hint());
    }
    const std::string family = spec->name;
    std::vector<std::string> allowed(spec->args.begin(), spec->args.end());
    for (const auto& [k, a] : args)
        if (std::find(allowed.begin(), allowed.end(), k) == allowed.end())
            fail(ErrorKind::InvalidParameter, "optimizer argument \"" + a.written + "\" does not apply to " + family,
                 "The " + family + " optimizer takes: " + join(allowed) + ".",
                 k == "momentum" ? "Momentum is an argument of SGD, e.g. optimizer='SGD(lr=0.01, momentum=0.9)'."
                                 : std::string());
    const GivenArgs given(args);
    OptimizerConfig o;
    o.kind = spec->kind;
    o.learning_rate = spec->default_learning_rate;
    // The arguments every optimizer reads the same way, then its own (in this order, which decides
    // which of several bad values a message names), then what is particular to it.
    std::vector<const char*> read = {"learning_rate", "decay", "epsilon"};
    for (const char* p : spec->params)
        if (std::find_if(read.begin(), read.end(), [&](const char* r) { return std::string(r) == p; }) == read.end())
            read.push_back(p);
    for (const char* k : read)
        if (given.has(k)) o.*(vocab::optimizer_arg(k)->field) = given.number(k);
    if (spec->configure) spec->configure(n, given, o);
    return o;
}

// --- loss and metrics -----------------------------------------------------------------------

template <typename Spec>
std::string vocabulary_hint(const char* what, const std::vector<Spec>& specs) {
    std::vector<std::string> names;
    for (const Spec& s : specs) names.push_back(s.listed);
    return "Supported " + std::string(what) + " are: " + join(names) + ".";
}

// The entry of `specs` whose written names hold `n`; refuses a name of `refused` with its reason
// and any other name.
template <typename Spec>
const Spec& vocabulary_entry(const std::string& n, const std::string& shown, const char* what,
                             const std::vector<Spec>& specs, const std::vector<vocab::RefusedName>& refused,
                             const std::string& hint) {
    for (const Spec& s : specs)
        for (const char* w : s.written)
            if (n == w) return s;
    for (const vocab::RefusedName& r : refused)
        if (n == r.written)
            fail(ErrorKind::InvalidParameter, "unsupported " + std::string(what) + " \"" + shown + "\"", r.detail,
                 r.hint ? std::string(r.hint) : hint);
    fail(ErrorKind::InvalidParameter, "unsupported " + std::string(what) + " \"" + shown + "\"", {}, hint);
}

Loss loss_from(const json& v) {
    const std::string hint = vocabulary_hint("losses", vocab::losses());
    if (!v.is_string()) bad_value("loss", "", v, "loss must be a loss name.", hint);
    const std::string& s = v.get_ref<const std::string&>();
    // Squashed: also accepts Keras class names (CategoricalCrossentropy).
    return vocabulary_entry(squash(s), s, "loss", vocab::losses(), vocab::refused_losses(), hint).kind;
}

Metric metric_from(const json& v) {
    const std::string hint = vocabulary_hint("metrics", vocab::metrics());
    if (!v.is_string()) bad_value("metrics", "", v, "Each metric must be a metric name.", hint);
    const std::string& s = v.get_ref<const std::string&>();
    return vocabulary_entry(lower(s), s, "metric", vocab::metrics(), vocab::refused_metrics(), hint).kind;
}

void check_loss_weight(double w) {
    if (!std::isfinite(w) || w < 0.0)
        bad_value("loss_weights", "", w, "Each loss weight must be a finite number >= 0.",
                  "Write e.g. loss_weights=[2].");
}

}  // namespace

CompileParams compile_from_object(const json& obj) {
    static const std::vector<std::string> valid = [] {
        std::vector<std::string> v = {"loss", "loss_given", "optimizer"};
        for (const std::string& k : top_level_optimizer_keys()) v.push_back(k);
        v.insert(v.end(), {"weight_decay", "metrics", "top_k", "loss_weights"});
        return v;
    }();
    static const std::vector<std::string> unsupported = {"sample_weight_mode", "weighted_metrics",    "target_tensors",
                                                         "run_eagerly",        "steps_per_execution", "jit_compile",
                                                         "auto_scale_loss"};
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
            bad_value("optimizer", "", *it,
                      "optimizer must be a name such as 'adam', a Keras-style "
                      "string such as 'SGD(lr=0.01)' or an object.",
                      optimizer_hint());
        }
    }
    // Top-level optimizer arguments (JSON form, and hopper's extension of MADlib's form).
    for (const std::string& k : top_level_optimizer_keys())
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
                         : "\"" + first + "\" and " + show(m) + " are the same metric (" + to_string(mm) + ").");
            }
            c.metrics.push_back(mm);
            written.push_back(m.get<std::string>());
        }
    }
    if (auto it = obj.find("top_k"); it != obj.end()) {
        int64_t v = 0;
        if (!as_integer(*it, 1, 1000, v)) bad_value("top_k", "", *it, "top_k must be an integer between 1 and 1000.");
        c.top_k = static_cast<int>(v);
    }
    if (auto it = obj.find("loss_weights"); it != obj.end() && !it->is_null()) {
        // Keras' list of one weight per output; hopper's models have one output.
        const std::string hint = "Write one weight for the model's one output, e.g. loss_weights=[2].";
        if (!it->is_array()) bad_value("loss_weights", "", *it, "loss_weights must be a list of numbers.", hint);
        if (it->size() != 1)
            bad_value("loss_weights", "", *it,
                      "loss_weights must hold one weight per output, and the model has one output.", hint);
        const json& w = (*it)[0];
        if (!w.is_number()) bad_value("loss_weights", "", *it, "loss_weights must be a list of numbers.", hint);
        c.loss_weight = w.get<double>();
        check_loss_weight(c.loss_weight);
    }
    return c;
}

void validate_compile(const CompileParams& c) {
    const OptimizerConfig& o = c.optimizer;
    check_loss_weight(c.loss_weight);
    check_opt_range("learning_rate", "learning_rate", o.learning_rate);
    check_opt_range("decay", "decay", o.decay);
    check_opt_range("weight_decay", "weight_decay", o.weight_decay);
    for (const char* p : optimizer_spec(o.kind).params) check_opt_range(p, p, o.*(vocab::optimizer_arg(p)->field));
    if (c.top_k < 1 || c.top_k > 1000) bad_value("top_k", "", c.top_k, "top_k must be an integer between 1 and 1000.");
    for (std::size_t i = 0; i < c.metrics.size(); ++i)
        for (std::size_t k = 0; k < i; ++k)
            if (c.metrics[i] == c.metrics[k])
                fail(ErrorKind::InvalidParameter, "duplicate metric \"" + std::string(to_string(c.metrics[i])) + "\"");
}

ojson compile_to_ojson(const CompileParams& c) {
    const OptimizerConfig& o = c.optimizer;
    ojson opt;
    opt["name"] = to_string(o.kind);
    opt["learning_rate"] = o.learning_rate;
    // Only the arguments of this optimizer: the parser refuses the others.
    for (const char* p : optimizer_spec(o.kind).params) opt[p] = o.*(vocab::optimizer_arg(p)->field);
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
    // Only when given: the canonical JSON of every model without it stays as it was.
    if (c.loss_weight != 1.0) j["loss_weights"] = ojson::array({c.loss_weight});
    return j;
}

}  // namespace cfg

CompileParams parse_compile_params(std::string_view text) {
    return cfg::parse_params_text(text, "compile parameters", cfg::compile_from_object);
}

std::string CompileParams::to_json() const { return cfg::compile_to_ojson(*this).dump(); }

}  // namespace hopper
