// Architecture (hopper's native JSON form), shared helpers, resolve_config and the canonical
// ModelConfig JSON. Keras import is in config_keras.cpp, compile/fit parameters in
// config_params.cpp.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "config_internal.h"
#include "hopper/interrupt.h"
#include "hopper/resources.h"
#include "layers.h"

namespace hopper {

const char* to_string(Activation a) {
    switch (a) {
        case Activation::Linear: return "linear";
        case Activation::Relu: return "relu";
        case Activation::Tanh: return "tanh";
        case Activation::Sigmoid: return "sigmoid";
        case Activation::Softmax: return "softmax";
    }
    return "unknown";
}

const char* to_string(Initializer i) {
    switch (i) {
        case Initializer::GlorotUniform: return "glorot_uniform";
        case Initializer::GlorotNormal: return "glorot_normal";
        case Initializer::HeUniform: return "he_uniform";
        case Initializer::HeNormal: return "he_normal";
        case Initializer::Zeros: return "zeros";
    }
    return "unknown";
}

const char* to_string(Loss l) {
    switch (l) {
        case Loss::SoftmaxCrossEntropy: return "softmax_cross_entropy";
        case Loss::BinaryCrossEntropy: return "binary_cross_entropy";
        case Loss::MeanSquaredError: return "mean_squared_error";
    }
    return "unknown";
}

const char* to_string(OptimizerKind o) {
    switch (o) {
        case OptimizerKind::SGD: return "sgd";
        case OptimizerKind::Momentum: return "momentum";
        case OptimizerKind::Nesterov: return "nesterov";
        case OptimizerKind::Adam: return "adam";
        case OptimizerKind::RMSprop: return "rmsprop";
    }
    return "unknown";
}

const char* to_string(LayerKind k) {
    switch (k) {
        case LayerKind::Dense: return "dense";
        case LayerKind::Conv2D: return "conv2d";
        case LayerKind::MaxPooling2D: return "max_pooling2d";
        case LayerKind::AveragePooling2D: return "average_pooling2d";
        case LayerKind::GlobalAveragePooling2D: return "global_average_pooling2d";
        case LayerKind::Flatten: return "flatten";
        case LayerKind::BatchNormalization: return "batch_normalization";
    }
    return "unknown";
}

const char* to_string(Padding p) { return p == Padding::Same ? "same" : "valid"; }

const char* to_string(Metric m) {
    switch (m) {
        case Metric::Accuracy: return "accuracy";
        case Metric::TopKAccuracy: return "top_k_accuracy";
        case Metric::MeanSquaredError: return "mean_squared_error";
        case Metric::MeanAbsoluteError: return "mean_absolute_error";
        case Metric::Loss: return "loss";
    }
    return "unknown";
}

namespace cfg {

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
             "An architecture has at most " + std::to_string(kMaxLayers) + " layers of at most " + std::to_string(kMaxDim) +
                 " units each.");
}

json parse_json_text(std::string_view text, const std::string& what) {
    try {
        ValidatingSax sax(what);
        json::sax_parse(text.begin(), text.end(), &sax);
        check_interrupts();
        return json::parse(text.begin(), text.end());
    } catch (const json::parse_error& e) {
        fail(ErrorKind::Syntax, "syntax error in " + what + " JSON", parse_error_detail(e.what()));
    } catch (const json::exception& e) {
        fail(ErrorKind::Syntax, "syntax error in " + what + " JSON", e.what());
    }
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

void bad_value(const std::string& key, const std::string& where, const json& v,
               const std::string& detail, const std::string& hint) {
    fail(ErrorKind::InvalidParameter, "invalid value for \"" + key + "\"" + where + ": " + show(v),
         detail, hint);
}

void bad_size(const std::string& key, const std::string& where, const json& v, const std::string& detail) {
    int64_t n = 0;
    const bool huge = as_integer(v, int64_t(kMaxDim) + 1, INT64_MAX, n) ||
                      (v.is_number_float() && v.get<double>() >= 9223372036854775808.0) ||
                      (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX));
    if (huge)
        fail(ErrorKind::Limit, "value for \"" + key + "\"" + where + " is too large: " + show(v), detail);
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
        if (!std::isfinite(d) || d != std::floor(d) || d < -9223372036854775808.0 ||
            d >= 9223372036854775808.0)
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

bool activation_from_name(std::string_view name, Activation& out) {
    std::string n = lower(name);
    if (n == "linear") out = Activation::Linear;
    else if (n == "relu") out = Activation::Relu;
    else if (n == "tanh") out = Activation::Tanh;
    else if (n == "sigmoid") out = Activation::Sigmoid;
    else if (n == "softmax") out = Activation::Softmax;
    else return false;
    return true;
}

bool initializer_from_name(std::string_view name, Initializer& out) {
    std::string n = squash(name);  // also accepts Keras class names (GlorotUniform, ...)
    if (n == "glorotuniform") out = Initializer::GlorotUniform;
    else if (n == "glorotnormal") out = Initializer::GlorotNormal;
    else if (n == "heuniform") out = Initializer::HeUniform;
    else if (n == "henormal") out = Initializer::HeNormal;
    else if (n == "zeros" || n == "zero") out = Initializer::Zeros;  // "zero": Keras 1
    else return false;
    return true;
}

Initializer default_initializer(Activation a) {
    return a == Activation::Relu ? Initializer::HeUniform : Initializer::GlorotUniform;
}

static const char* const kActivationNames = "linear, relu, tanh, sigmoid, softmax";
static const char* const kInitializerNames =
    "glorot_uniform, glorot_normal, he_uniform, he_normal, zeros";

namespace {

// A [height, width] pair for messages and canonical JSON.
json pair_json(int h, int w) { return json::array({h, w}); }

// Range checks of the fields a layer's kind uses (hand-built layers; the parsers check as they
// read). Sizes above kMaxDim are refused like the parsers do.
void validate_layer_values(const Layer& l, const std::string& where) {
    auto positive = [&](const char* key, int h, int w, const char* what) {
        if (h < 1 || w < 1 || h > kMaxDim || w > kMaxDim)
            bad_value(key, where, pair_json(h, w),
                      std::string(what) + " must be integers between 1 and 1000000.");
    };
    switch (l.kind) {
        case LayerKind::Dense:
            if (l.units < 1 || l.units > kMaxDim)
                bad_value("units", where, l.units, "units must be an integer between 1 and 1000000.");
            break;
        case LayerKind::Conv2D:
            if (l.filters < 1 || l.filters > kMaxDim)
                bad_value("filters", where, l.filters, "filters must be an integer between 1 and 1000000.");
            positive("kernel_size", l.kernel_h, l.kernel_w, "The kernel's height and width");
            positive("strides", l.stride_h, l.stride_w, "Strides");
            break;
        case LayerKind::MaxPooling2D:
        case LayerKind::AveragePooling2D:
            positive("pool_size", l.kernel_h, l.kernel_w, "The pool's height and width");
            positive("strides", l.stride_h, l.stride_w, "Strides");
            break;
        case LayerKind::BatchNormalization:
            if (!(l.momentum >= 0.0 && l.momentum <= 1.0))
                bad_value("momentum", where, l.momentum, "momentum must be between 0 and 1.");
            // float32 must see a positive, finite epsilon too (1e-50 is 0 as a float).
            if (!(l.epsilon > 0.0 && float(l.epsilon) > 0.0f && std::isfinite(float(l.epsilon))))
                bad_value("epsilon", where, l.epsilon, "epsilon must be a positive number.");
            break;
        case LayerKind::GlobalAveragePooling2D:
        case LayerKind::Flatten:
            break;
    }
}

}  // namespace

void validate_architecture(const Architecture& arch, const std::vector<std::string>* labels,
                           const std::string& input_label) {
    auto label = [&](std::size_t i) {
        return labels && i < labels->size() ? (*labels)[i] : "layer " + std::to_string(i + 1);
    };
    if (arch.image_input() || arch.input_height != 0 || arch.input_width != 0) {
        const json shape = json::array({arch.input_height, arch.input_width, arch.input_channels});
        for (int d : {arch.input_height, arch.input_width, arch.input_channels})
            if (d < 1 || d > kMaxDim)
                fail(ErrorKind::InvalidParameter, "invalid input shape " + show(shape) + " (" + input_label + ")",
                     "Each dimension of an input shape must be an integer between 1 and 1000000.");
        const uint64_t size = uint64_t(arch.input_height) * uint64_t(arch.input_width) * uint64_t(arch.input_channels);
        if (size > uint64_t(kMaxDim))
            fail(ErrorKind::Limit, "input shape " + show(shape) + " is too large (" + input_label + ")",
                 "A row has " + std::to_string(size) + " values; hopper reads at most 1000000 per row.");
        if (uint64_t(arch.input_dim) != size)
            fail(ErrorKind::InvalidParameter,
                 "input dimension " + std::to_string(arch.input_dim) + " does not match the input shape " + show(shape),
                 "An image input of shape [height, width, channels] has height*width*channels = " +
                     std::to_string(size) + " features per row.");
    }
    if (arch.input_dim < 1 || arch.input_dim > kMaxDim)
        fail(ErrorKind::InvalidParameter,
             "invalid input dimension " + std::to_string(arch.input_dim) + " (" + input_label + ")",
             "The input dimension must be an integer between 1 and 1000000.");
    if (arch.layers.empty())
        fail(ErrorKind::InvalidParameter, "architecture has no layers",
             "At least one layer is needed.");
    if (arch.layers.size() > static_cast<std::size_t>(kMaxLayers))
        fail(ErrorKind::Limit, "architecture has too many layers",
             "It has " + std::to_string(arch.layers.size()) + " layers; at most " + std::to_string(kMaxLayers) +
                 " are supported.");
    const std::size_t n = arch.layers.size();
    TensorShape shape = arch.input_shape();
    // Per row: every layer's output and Conv2D patch buffers (layers.h); and parameters. 64-bit
    // saturating sums.
    uint64_t row_floats = 0, params = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const Layer& l = arch.layers[i];
        validate_layer_values(l, " in " + label(i));
        if (!(l.dropout >= 0.0f && l.dropout < 1.0f))
            bad_value("dropout", " in " + label(i), float_for_json(l.dropout),
                      "dropout must be at least 0 and less than 1.");
        if (l.activation == Activation::Softmax && i + 1 < n)
            fail(ErrorKind::InvalidParameter,
                 "softmax activation in " + label(i) + " is only allowed on the output layer",
                 "The architecture has " + std::to_string(n) + " layers.",
                 "Use relu, tanh, sigmoid or linear for hidden layers.");
        if (l.dropout > 0.0f && i + 1 == n)
            // Dropping predictions would feed zeros (log 0 for cross-entropy) to the loss.
            fail(ErrorKind::InvalidParameter,
                 "dropout is not allowed on the output layer (" + label(i) + ")",
                 "Dropout would randomly zero the model's predictions while training.",
                 "Use dropout on hidden layers only.");
        params = layers::add_sat(params, layers::param_count(l, shape));
        row_floats = layers::add_sat(row_floats, layers::columns_per_row(l, shape));
        shape = layers::checked_output_shape(l, shape, label(i));
        row_floats = layers::add_sat(row_floats, shape.size());
    }
    if (!shape.flat)
        fail(ErrorKind::InvalidParameter,
             "output layer (" + label(n - 1) + ") outputs a " + shape.to_string() + " tensor",
             "A model's output must be a flat vector of predictions.",
             "End the model with a Flatten or GlobalAveragePooling2D layer and a Dense layer.");
    if (arch.layers.back().activation == Activation::Softmax && shape.size() < 2)
        fail(ErrorKind::InvalidParameter,
             "softmax output layer (" + label(n - 1) + ") needs at least 2 units",
             "A softmax over one unit always outputs 1.",
             "Use sigmoid for a single output unit.");
    if (params > kMaxParams)
        fail(ErrorKind::Limit, "model has too many parameters",
             "The architecture " + arch.shape_string() + " has " + std::to_string(params) +
                 " parameters; at most 2147483647 are supported.",
             "Use fewer or smaller layers.");
    if (row_floats > layers::kMaxRowFloats)
        fail(ErrorKind::Limit, "architecture needs too much memory per row",
             "One row's activations and convolution patches take " + format_bytes(row_floats * 4) +
                 " while training; hopper allows at most 256 MB per row.",
             "Use smaller images, fewer filters, larger strides or more pooling.");
}

// --- native form -----------------------------------------------------------------------------

namespace {

// Layer types of the native form; a layer without "type" is Dense. Keras class names work too
// ("Conv2D", "MaxPooling2D", ...: compared without case and underscores).
bool layer_kind_from_name(std::string_view name, LayerKind& out) {
    const std::string n = squash(name);
    for (LayerKind k : {LayerKind::Dense, LayerKind::Conv2D, LayerKind::MaxPooling2D, LayerKind::AveragePooling2D,
                        LayerKind::GlobalAveragePooling2D, LayerKind::Flatten, LayerKind::BatchNormalization})
        if (n == squash(to_string(k))) {
            out = k;
            return true;
        }
    return false;
}

const char* const kLayerTypeNames =
    "dense, conv2d, max_pooling2d, average_pooling2d, global_average_pooling2d, flatten, batch_normalization";

// Keys of each layer type in the native form (canonical order).
const std::vector<std::string>& native_layer_keys(LayerKind k) {
    static const std::vector<std::string> dense = {"units", "activation", "use_bias", "initializer", "dropout"};
    static const std::vector<std::string> conv = {"type", "filters", "kernel_size", "strides", "padding", "activation",
                                                  "use_bias", "initializer", "dropout"};
    static const std::vector<std::string> pool = {"type", "pool_size", "strides", "padding", "activation", "dropout"};
    static const std::vector<std::string> plain = {"type", "activation", "dropout"};
    static const std::vector<std::string> bn = {"type", "momentum", "epsilon", "center", "scale", "activation", "dropout"};
    switch (k) {
        case LayerKind::Dense: return dense;
        case LayerKind::Conv2D: return conv;
        case LayerKind::MaxPooling2D:
        case LayerKind::AveragePooling2D: return pool;
        case LayerKind::GlobalAveragePooling2D:
        case LayerKind::Flatten: return plain;
        case LayerKind::BatchNormalization: return bn;
    }
    return plain;
}

}  // namespace

bool window_size(const json& v, int& h, int& w) {
    int64_t a = 0, b = 0;
    if (v.is_array()) {
        if (v.size() != 2 || !as_integer(v[0], 1, kMaxDim, a) || !as_integer(v[1], 1, kMaxDim, b)) return false;
    } else {
        if (!as_integer(v, 1, kMaxDim, a)) return false;
        b = a;
    }
    h = static_cast<int>(a);
    w = static_cast<int>(b);
    return true;
}

void bad_window_size(const std::string& key, const std::string& where, const json& v) {
    const std::string detail = key + " must be a positive integer or a list of two, such as [3, 3].";
    if (v.is_array() && v.size() == 2) {
        int64_t x = 0;
        for (const json& e : v)
            if (as_integer(e, int64_t(kMaxDim) + 1, INT64_MAX, x) ||
                (e.is_number_float() && e.get<double>() > double(kMaxDim)))
                bad_size(key, where, e, detail + " Each is at most 1000000.");
    }
    bad_size(key, where, v, detail);
}

bool padding_from_name(std::string_view name, Padding& out) {
    const std::string n = lower(name);
    if (n == "valid") out = Padding::Valid;
    else if (n == "same") out = Padding::Same;
    else return false;
    return true;
}

namespace {

bool input_shape_from_json(const json& v, int& h, int& w, int& c) {
    if (!v.is_array() || v.size() != 3) return false;
    int64_t d[3];
    for (int i = 0; i < 3; ++i)
        if (!as_integer(v[i], 1, kMaxDim, d[i])) return false;
    h = int(d[0]);
    w = int(d[1]);
    c = int(d[2]);
    return true;
}

}  // namespace

Architecture parse_native_architecture(const json& j) {
    static const std::vector<std::string> top_keys = {"input_dim", "input_shape", "layers", "initializer"};
    for (auto it = j.begin(); it != j.end(); ++it)
        if (std::find(top_keys.begin(), top_keys.end(), it.key()) == top_keys.end())
            fail(ErrorKind::InvalidParameter, "unknown key \"" + it.key() + "\" in architecture",
                 {}, "Valid keys are: " + join(top_keys) + ". A Keras model needs \"class_name\".");
    Architecture a;
    auto in = j.find("input_dim");
    auto shape = j.find("input_shape");
    int64_t v = 0;
    if (in != j.end() && shape != j.end())
        fail(ErrorKind::InvalidParameter, "both \"input_dim\" and \"input_shape\" in architecture",
             "input_dim gives the features of flat rows, input_shape the [height, width, channels] of images.",
             "Give only one of them.");
    if (shape != j.end()) {
        const char* detail = "input_shape must be a list [height, width, channels] of positive integers, or [n] "
                             "for flat rows of n features.";
        if (shape->is_array() && shape->size() == 1) {
            if (!as_integer((*shape)[0], 1, kMaxDim, v)) {
                if (as_integer((*shape)[0], int64_t(kMaxDim) + 1, INT64_MAX, v)) bad_size("input_shape", "", (*shape)[0], detail);
                bad_value("input_shape", "", *shape, detail);
            }
            a.input_dim = static_cast<int>(v);
        } else {
            if (!input_shape_from_json(*shape, a.input_height, a.input_width, a.input_channels)) {
                if (shape->is_array())
                    for (const json& e : *shape)
                        if (as_integer(e, int64_t(kMaxDim) + 1, INT64_MAX, v))
                            bad_size("input_shape", "", e, "Each dimension is at most 1000000.");
                bad_value("input_shape", "", *shape, detail);
            }
            const uint64_t size = uint64_t(a.input_height) * uint64_t(a.input_width) * uint64_t(a.input_channels);
            if (size > uint64_t(kMaxDim))
                fail(ErrorKind::Limit, "value for \"input_shape\" is too large: " + show(*shape),
                     "A row has " + std::to_string(size) + " values; hopper reads at most 1000000 per row.");
            a.input_dim = static_cast<int>(size);
        }
    } else {
        if (in == j.end())
            fail(ErrorKind::InvalidParameter, "missing key \"input_dim\" in architecture", {},
                 "Give the number of input features, e.g. {\"input_dim\": 784, \"layers\": [...]}, or the "
                 "shape of image inputs, e.g. \"input_shape\": [28, 28, 1].");
        if (!as_integer(*in, 1, kMaxDim, v))
            bad_size("input_dim", "", *in, "input_dim must be an integer between 1 and 1000000.");
        a.input_dim = static_cast<int>(v);
    }

    bool have_default_init = false;
    Initializer default_init = Initializer::GlorotUniform;
    if (auto it = j.find("initializer"); it != j.end()) {
        if (!it->is_string() || !initializer_from_name(it->get_ref<const std::string&>(), default_init))
            bad_value("initializer", "", *it, "Supported initializers are: " +
                                                  std::string(kInitializerNames) + ".");
        have_default_init = true;
    }

    auto ls = j.find("layers");
    if (ls == j.end())
        fail(ErrorKind::InvalidParameter, "missing key \"layers\" in architecture", {},
             "Give a list of layers, e.g. \"layers\": [{\"units\": 10, \"activation\": \"softmax\"}].");
    if (!ls->is_array())
        bad_value("layers", "", *ls, "layers must be a list of layer objects.");
    if (ls->empty())
        fail(ErrorKind::InvalidParameter, "architecture has no layers",
             "At least one Dense layer is needed.");
    if (ls->size() > static_cast<std::size_t>(kMaxLayers))
        fail(ErrorKind::Limit, "architecture has too many layers",
             "It has " + std::to_string(ls->size()) + " layers; at most " + std::to_string(kMaxLayers) + " are supported.");

    for (std::size_t i = 0; i < ls->size(); ++i) {
        const json& lj = (*ls)[i];
        const std::string where = " in layer " + std::to_string(i + 1);
        if (!lj.is_object())
            fail(ErrorKind::InvalidParameter,
                 "layer " + std::to_string(i + 1) + " of the architecture is not an object",
                 "Each layer is an object such as {\"units\": 128, \"activation\": \"relu\"}.");
        Layer l;
        if (auto t = lj.find("type"); t != lj.end())
            if (!t->is_string() || !layer_kind_from_name(t->get_ref<const std::string&>(), l.kind))
                bad_value("type", where, *t, "Supported layer types are: " + std::string(kLayerTypeNames) + ".");
        const std::vector<std::string>& keys = native_layer_keys(l.kind);
        for (auto it = lj.begin(); it != lj.end(); ++it)
            if (it.key() != "type" && std::find(keys.begin(), keys.end(), it.key()) == keys.end())
                fail(ErrorKind::InvalidParameter,
                     "unknown key \"" + it.key() + "\"" + where + " of the architecture", {},
                     l.kind == LayerKind::Dense
                         ? "Valid keys are: " + join(keys) + "."
                         : "Valid keys of a " + std::string(to_string(l.kind)) + " layer are: " + join(keys) + ".");
        // Required sizes.
        auto required = [&](const char* key) -> const json& {
            auto it = lj.find(key);
            if (it == lj.end())
                fail(ErrorKind::InvalidParameter, "missing key \"" + std::string(key) + "\"" + where + " of the architecture");
            return *it;
        };
        switch (l.kind) {
            case LayerKind::Dense: {
                const json& u = required("units");
                if (!as_integer(u, 1, kMaxDim, v))
                    bad_size("units", where, u, "units must be an integer between 1 and 1000000.");
                l.units = static_cast<int>(v);
                break;
            }
            case LayerKind::Conv2D: {
                const json& f = required("filters");
                if (!as_integer(f, 1, kMaxDim, v))
                    bad_size("filters", where, f, "filters must be an integer between 1 and 1000000.");
                l.filters = static_cast<int>(v);
                const json& k = required("kernel_size");
                if (!window_size(k, l.kernel_h, l.kernel_w)) bad_window_size("kernel_size", where, k);
                break;
            }
            case LayerKind::MaxPooling2D:
            case LayerKind::AveragePooling2D: {
                l.kernel_h = l.kernel_w = 2;  // Keras' default pool_size
                if (auto it = lj.find("pool_size"); it != lj.end())
                    if (!window_size(*it, l.kernel_h, l.kernel_w)) bad_window_size("pool_size", where, *it);
                break;
            }
            case LayerKind::BatchNormalization:
            case LayerKind::GlobalAveragePooling2D:
            case LayerKind::Flatten:
                break;
        }
        if (l.kind == LayerKind::Conv2D || l.kind == LayerKind::MaxPooling2D || l.kind == LayerKind::AveragePooling2D) {
            // Strides default to 1 for Conv2D and to the pool size for pooling (Keras).
            if (l.kind != LayerKind::Conv2D) {
                l.stride_h = l.kernel_h;
                l.stride_w = l.kernel_w;
            }
            if (auto it = lj.find("strides"); it != lj.end())
                if (!window_size(*it, l.stride_h, l.stride_w)) bad_window_size("strides", where, *it);
            if (auto it = lj.find("padding"); it != lj.end())
                if (!it->is_string() || !padding_from_name(it->get_ref<const std::string&>(), l.padding))
                    bad_value("padding", where, *it, "padding must be \"valid\" or \"same\".");
        }
        if (auto it = lj.find("activation"); it != lj.end())
            if (!it->is_string() || !activation_from_name(it->get_ref<const std::string&>(), l.activation))
                bad_value("activation", where, *it,
                          "Supported activations are: " + std::string(kActivationNames) + ".");
        if (auto it = lj.find("use_bias"); it != lj.end()) {
            if (!it->is_boolean()) bad_value("use_bias", where, *it, "use_bias must be true or false.");
            l.use_bias = it->get<bool>();
        }
        if (l.kind == LayerKind::Dense || l.kind == LayerKind::Conv2D) {
            l.initializer = have_default_init ? default_init : default_initializer(l.activation);
            if (auto it = lj.find("initializer"); it != lj.end())
                if (!it->is_string() || !initializer_from_name(it->get_ref<const std::string&>(), l.initializer))
                    bad_value("initializer", where, *it, "Supported initializers are: " +
                                                             std::string(kInitializerNames) + ".");
        }
        if (l.kind == LayerKind::BatchNormalization) {
            double d = 0;
            if (auto it = lj.find("momentum"); it != lj.end()) {
                if (!as_double(*it, d) || !(d >= 0.0 && d <= 1.0))
                    bad_value("momentum", where, *it, "momentum must be between 0 and 1.");
                l.momentum = d;
            }
            if (auto it = lj.find("epsilon"); it != lj.end()) {
                // Checked after the cast too: 1e-50 is 0 as a float.
                if (!as_double(*it, d) || !(d > 0.0) || !(static_cast<float>(d) > 0.0f) ||
                    !std::isfinite(static_cast<float>(d)))
                    bad_value("epsilon", where, *it, "epsilon must be a positive number.");
                l.epsilon = d;
            }
            for (const char* key : {"center", "scale"})
                if (auto it = lj.find(key); it != lj.end()) {
                    if (!it->is_boolean()) bad_value(key, where, *it, std::string(key) + " must be true or false.");
                    (std::string(key) == "center" ? l.center : l.scale) = it->get<bool>();
                }
        }
        if (auto it = lj.find("dropout"); it != lj.end()) {
            double d = 0;
            // Checked after the cast too: 0.9999999999 rounds to 1.0f.
            if (!as_double(*it, d) || !(d >= 0.0 && d < 1.0) ||
                !(static_cast<float>(d) < 1.0f))
                bad_value("dropout", where, *it, "dropout must be at least 0 and less than 1.");
            l.dropout = static_cast<float>(d);
        }
        a.layers.push_back(l);
    }
    validate_architecture(a);
    return a;
}

ojson architecture_to_ojson(const Architecture& a) {
    ojson j;
    if (a.image_input())
        j["input_shape"] = ojson::array({a.input_height, a.input_width, a.input_channels});
    else
        j["input_dim"] = a.input_dim;
    ojson layers = ojson::array();
    for (const Layer& l : a.layers) {
        ojson lj;
        // Dense layers keep the form of hopper's first versions (no "type"): stored states and
        // their checksums contain it.
        if (l.kind != LayerKind::Dense) lj["type"] = to_string(l.kind);
        switch (l.kind) {
            case LayerKind::Dense:
                lj["units"] = l.units;
                break;
            case LayerKind::Conv2D:
                lj["filters"] = l.filters;
                lj["kernel_size"] = ojson::array({l.kernel_h, l.kernel_w});
                break;
            case LayerKind::MaxPooling2D:
            case LayerKind::AveragePooling2D:
                lj["pool_size"] = ojson::array({l.kernel_h, l.kernel_w});
                break;
            case LayerKind::BatchNormalization:
                lj["momentum"] = l.momentum;
                lj["epsilon"] = l.epsilon;
                lj["center"] = l.center;
                lj["scale"] = l.scale;
                break;
            case LayerKind::GlobalAveragePooling2D:
            case LayerKind::Flatten:
                break;
        }
        if (l.kind == LayerKind::Conv2D || l.kind == LayerKind::MaxPooling2D || l.kind == LayerKind::AveragePooling2D) {
            lj["strides"] = ojson::array({l.stride_h, l.stride_w});
            lj["padding"] = to_string(l.padding);
        }
        lj["activation"] = to_string(l.activation);
        if (l.kind == LayerKind::Dense || l.kind == LayerKind::Conv2D) {
            lj["use_bias"] = l.use_bias;
            lj["initializer"] = to_string(l.initializer);
        }
        lj["dropout"] = float_for_json(l.dropout);
        layers.push_back(std::move(lj));
    }
    j["layers"] = std::move(layers);
    return j;
}

static void require_object(const json& j, const std::string& what) {
    if (!j.is_object())
        fail(ErrorKind::InvalidParameter, what + " must be a JSON object",
             "Got " + std::string(j.type_name()) + ".");
}

}  // namespace cfg

using namespace cfg;

std::string TensorShape::to_string() const {
    if (flat) return std::to_string(channels);
    return std::to_string(height) + "x" + std::to_string(width) + "x" + std::to_string(channels);
}

TensorShape Architecture::input_shape() const {
    TensorShape s;
    if (image_input()) {
        s.height = input_height;
        s.width = input_width;
        s.channels = input_channels;
        s.flat = false;
    } else {
        s.channels = input_dim;
    }
    return s;
}

std::vector<TensorShape> Architecture::layer_shapes() const {
    std::vector<TensorShape> out;
    out.reserve(layers.size());
    TensorShape s = input_shape();
    for (const Layer& l : layers) out.push_back(s = layers::output_shape(l, s));
    return out;
}

int Architecture::output_dim() const {
    if (layers.empty()) return 0;
    if (layers.back().kind == LayerKind::Dense) return layers.back().units;
    const uint64_t n = layer_shapes().back().size();
    return n > uint64_t(INT32_MAX) ? INT32_MAX : int(n);
}

std::size_t Architecture::num_params() const {
    uint64_t n = 0;  // saturating: hand-built architectures may be absurd
    TensorShape s = input_shape();
    if (s.channels < 0) s.channels = 0;
    for (const Layer& l : layers) {
        n = layers::add_sat(n, layers::param_count(l, s));
        s = layers::output_shape(l, s);
        if (s.channels < 0) s.channels = 0;
    }
    return std::size_t(n);
}

std::string Architecture::shape_string() const {
    std::string s = input_shape().to_string();
    for (const Layer& l : layers) s += "-" + layers::shape_token(l);
    return s;
}

std::string Architecture::to_json() const { return architecture_to_ojson(*this).dump(); }

bool Architecture::operator==(const Architecture& o) const {
    if (input_dim != o.input_dim || input_height != o.input_height || input_width != o.input_width ||
        input_channels != o.input_channels || layers.size() != o.layers.size())
        return false;
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const Layer& a = layers[i];
        const Layer& b = o.layers[i];
        if (a.kind != b.kind || a.activation != b.activation || a.dropout != b.dropout) return false;
        const bool kernel = a.kind == LayerKind::Dense || a.kind == LayerKind::Conv2D;
        const bool window = a.kind == LayerKind::Conv2D || a.kind == LayerKind::MaxPooling2D ||
                            a.kind == LayerKind::AveragePooling2D;
        if (kernel && (a.use_bias != b.use_bias || a.initializer != b.initializer)) return false;
        if (window && (a.kernel_h != b.kernel_h || a.kernel_w != b.kernel_w || a.stride_h != b.stride_h ||
                       a.stride_w != b.stride_w || a.padding != b.padding))
            return false;
        if (a.kind == LayerKind::Dense && a.units != b.units) return false;
        if (a.kind == LayerKind::Conv2D && a.filters != b.filters) return false;
        if (a.kind == LayerKind::BatchNormalization &&
            (a.momentum != b.momentum || a.epsilon != b.epsilon || a.center != b.center || a.scale != b.scale))
            return false;
    }
    return true;
}

Architecture parse_architecture(std::string_view text) {
    check_text_size(text, kMaxArchitectureBytes, "architecture");
    std::size_t p = 0;
    while (p < text.size() && std::isspace(static_cast<unsigned char>(text[p]))) ++p;
    if (p == text.size())
        fail(ErrorKind::Syntax, "architecture is empty",
             "Expected hopper's architecture JSON or a Keras model's to_json().");
    json j = parse_json_text(text, "architecture");
    require_object(j, "architecture");
    try {
        if (j.contains("class_name")) return parse_keras_architecture(j);
        return parse_native_architecture(j);
    } catch (const json::exception& e) {
        // Our walkers check types before reading; this is a safety net, not an expected path.
        fail(ErrorKind::InvalidParameter, "invalid architecture", e.what());
    }
}

std::string ModelConfig::to_json() const {
    ojson j;
    j["architecture"] = architecture_to_ojson(arch);
    j["compile"] = compile_to_ojson(compile);
    j["fit"] = fit_to_ojson(fit);
    return j.dump();
}

ModelConfig resolve_config(Architecture arch, CompileParams compile, FitParams fit) {
    validate_architecture(arch);
    validate_compile(compile);
    validate_fit(fit);
    const Layer& out = arch.layers.back();
    const int out_units = arch.output_dim();
    const std::string out_label = "layer " + std::to_string(arch.layers.size());
    if (!compile.loss_given) {
        // loss_given stays false: it records that the loss was inferred, and resolving again
        // (parse_model_config) infers the same loss.
        if (out.activation == Activation::Softmax) compile.loss = Loss::SoftmaxCrossEntropy;
        else if (out.activation == Activation::Sigmoid) compile.loss = Loss::BinaryCrossEntropy;
        else compile.loss = Loss::MeanSquaredError;
    }
    const std::string out_act = to_string(out.activation);
    switch (compile.loss) {
        case Loss::SoftmaxCrossEntropy:
            // hopper's cross-entropy takes probabilities: -sum y log p. On logits or sigmoid
            // outputs it is not a proper loss, so refuse instead of training nonsense.
            if (out.activation != Activation::Softmax)
                fail(ErrorKind::InvalidParameter,
                     "loss softmax_cross_entropy needs a softmax output layer",
                     "The output layer (" + out_label + ") uses " + out_act + ".",
                     out.activation == Activation::Sigmoid
                         ? "Use binary_crossentropy with a sigmoid output, or softmax on the output layer."
                         : "Use activation softmax on the output layer.");
            if (out_units < 2)
                fail(ErrorKind::InvalidParameter,
                     "loss softmax_cross_entropy needs at least 2 output units",
                     "The output layer (" + out_label + ") has 1 unit.",
                     "Use a sigmoid output with binary_crossentropy.");
            break;
        case Loss::BinaryCrossEntropy:
            if (out.activation != Activation::Sigmoid)
                fail(ErrorKind::InvalidParameter,
                     "loss binary_cross_entropy needs a sigmoid output layer",
                     "The output layer (" + out_label + ") uses " + out_act + ".",
                     out.activation == Activation::Softmax
                         ? "Use categorical_crossentropy with a softmax output."
                         : "Use activation sigmoid on the output layer.");
            break;
        case Loss::MeanSquaredError:
            break;
    }
    for (Metric m : compile.metrics) {
        if (m == Metric::TopKAccuracy && compile.top_k >= out_units)
            // top-k over k >= classes is always 1: a metric that cannot fail misleads.
            bad_value("top_k", "", compile.top_k,
                      "top_k_accuracy with k=" + std::to_string(compile.top_k) + " over " +
                          std::to_string(out_units) + " output unit" + (out_units == 1 ? "" : "s") +
                          " is always 1; k must be less than the number of output units.",
                      out_units <= 2 ? "Use the metric accuracy instead." : "Set a smaller top_k.");
        if (m == Metric::Accuracy && compile.loss == Loss::MeanSquaredError &&
            out.activation != Activation::Softmax && out.activation != Activation::Sigmoid)
            // A regression output (linear, relu, tanh) has no classes; "accuracy" would
            // threshold or argmax arbitrary values.
            fail(ErrorKind::InvalidParameter,
                 "metric accuracy is meaningless for a regression model",
                 "The output layer (" + out_label + ") uses " + out_act +
                     " and the loss is mean_squared_error.",
                 "Use the metrics mse or mae, or a softmax/sigmoid output for classification.");
    }
    return ModelConfig{std::move(arch), std::move(compile), std::move(fit)};
}

ModelConfig parse_model_config(std::string_view text) {
    json j = parse_json_text(text, "model configuration");
    require_object(j, "model configuration");
    static const std::vector<std::string> keys = {"architecture", "compile", "fit"};
    for (auto it = j.begin(); it != j.end(); ++it)
        if (std::find(keys.begin(), keys.end(), it.key()) == keys.end())
            fail(ErrorKind::InvalidParameter,
                 "unknown key \"" + it.key() + "\" in model configuration", {},
                 "Valid keys are: " + join(keys) + ".");
    for (const std::string& k : keys) {
        if (!j.contains(k))
            fail(ErrorKind::InvalidParameter, "missing key \"" + k + "\" in model configuration");
        require_object(j[k], "\"" + k + "\" of the model configuration");
    }
    try {
        // The canonical form is the native architecture; a Keras model here is not canonical.
        Architecture arch = parse_native_architecture(j["architecture"]);
        CompileParams c = compile_from_object(j["compile"]);
        FitParams f = fit_from_object(j["fit"]);
        return resolve_config(std::move(arch), std::move(c), std::move(f));
    } catch (const json::exception& e) {
        fail(ErrorKind::InvalidParameter, "invalid model configuration", e.what());
    }
}

}  // namespace hopper
