// Import of a Keras Sequential model's to_json() into hopper's Architecture.
//
// Handled formats (all seen in the wild):
//   Keras 1.x     {"class_name": "Sequential", "config": [layers]}, Dense has output_dim, init,
//                 bias, W_regularizer, input_dim; Dropout has p
//   Keras 2.0-2.1 same list form, Dense has units, kernel_initializer (often VarianceScaling)
//   Keras 2.2+ / tf.keras  "config": {"name": ..., "layers": [...]}, usually with an InputLayer
//                 carrying batch_input_shape
//   Keras 3       InputLayer with batch_shape, "module"/"registered_name"/"build_config" keys,
//                 dtype policies as objects, "build_input_shape" on the Sequential config
//
// Layers: InputLayer ([null, n] or an image [null, height, width, channels]), Dense, Conv2D,
// MaxPooling2D, AveragePooling2D, GlobalAveragePooling2D, Flatten and BatchNormalization become
// hopper layers; Activation sets the activation of the layer before it when that one is linear
// (a linear Activation is a no-op); Dropout sets the dropout of the layer before it. Our choices
// for the corner cases:
//   - Dropout (or a non-linear Activation) before any layer: refused, hopper has no input
//     dropout or input activation.
//   - Two Dropouts in a row: combined into one of rate 1-(1-a)(1-b). Two independent inverted
//     dropouts keep an element with probability (1-a)(1-b) and scale it by the inverse of that,
//     exactly what one dropout of the combined rate does.
//   - Layer(linear) -> Dropout -> Activation: allowed only for relu (relu(c*x) = c*relu(x) for
//     c >= 0 and relu(0) = 0, so it commutes with dropout); other activations refused.
// `trainable: false` freezes the layer (a layer hopper merges, Activation or Dropout, has nothing to
// freeze). Keras config keys that do not change the maths (name, dtype, seeds, fused, ...)
// are ignored; keys that do and that hopper does not implement (regularizers, constraints, a
// non-zero bias initializer, noise_shape, data_format channels_first, dilation_rate > 1,
// groups > 1, batch renormalization, BatchNormalization over another axis or with other
// initial statistics, ...) are refused naming the option and the layer. An unknown key with a
// null/false value is ignored, with any other value refused. Input shapes that layers declare
// (batch_input_shape on the first layer, Keras 3's build_config on every layer) must agree with
// the shapes hopper computes.
#include "config_keras.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <map>

#include "config_architecture.h"
#include "hopper/interrupt.h"

namespace hopper::cfg {

namespace {

struct KerasLayerRef {
    std::size_t index;  // 1-based position in the Keras layer list
    std::string name;   // config.name or the layer's name, may be empty
    std::string label() const {
        if (index == 0) return "the Sequential model";
        std::string s = "Keras layer " + std::to_string(index);
        if (!name.empty()) s += " (\"" + name + "\")";
        return s;
    }
};

[[noreturn]] void refuse(const KerasLayerRef& r, const std::string& message, const std::string& detail = {},
                         const std::string& hint = {}) {
    fail(ErrorKind::InvalidParameter, message, detail, hint);
}

bool is_nullish(const json& v) {
    return v.is_null() || (v.is_boolean() && !v.get<bool>()) || (v.is_number() && v.get<double>() == 0.0);
}

// A Keras shape: [n] (flat) or [height, width, channels] (an image) once the batch dimension is
// dropped (`batch` says whether the first element is one). False if the shape is null (not
// given). Accepts a list or {"class_name": "TensorShape", "items": [...]} as found in SavedModel
// metadata.
bool keras_shape(const json& shape, bool batch, const KerasLayerRef& r, const std::string& key, TensorShape& out) {
    if (shape.is_null()) return false;
    const json* items = &shape;
    if (shape.is_object()) {
        auto it = shape.find("items");
        if (it == shape.end())
            bad_value(key, " in " + r.label(), shape, "An input shape is a list such as [null, 784].");
        items = &*it;
    }
    if (!items->is_array()) bad_value(key, " in " + r.label(), shape, "An input shape is a list such as [null, 784].");
    std::vector<json> dims(items->begin(), items->end());
    if (batch && !dims.empty()) dims.erase(dims.begin());
    if (dims.size() != 1 && dims.size() != 3) {
        // Say how many features a flattened row would have, when that is known.
        uint64_t prod = 1;
        bool known = !dims.empty();
        for (const json& d : dims) {
            int64_t v = 0;
            if (!as_integer(d, 1, kMaxDim, v)) {
                known = false;
                break;
            }
            prod *= static_cast<uint64_t>(v);
            if (prod > 1000000000000ull) {
                known = false;
                break;
            }
        }
        std::string hint;
        if (dims.size() == 2 && known)
            hint = "Give the images a channels dimension (input shape (" + show(dims[0]) + ", " + show(dims[1]) +
                   ", 1)), or flatten each row to " + std::to_string(prod) +
                   " numbers and give the model an input shape of (" + std::to_string(prod) + ",).";
        else if (known)
            hint = "Flatten each row to a one-dimensional array of " + std::to_string(prod) +
                   " numbers and give the model an input shape of (" + std::to_string(prod) + ",).";
        else hint = "Flatten each row to a one-dimensional array and give the model an input shape of (n,).";
        refuse(r, "input shape " + show(*items) + " of " + r.label() + " is not supported",
               "hopper supports inputs of shape [null, n] and images of shape [null, height, width, "
               "channels] (channels last).",
               hint);
    }
    int64_t v[3] = {1, 1, 1};
    for (std::size_t i = 0; i < dims.size(); ++i) {
        if (dims[i].is_null())
            refuse(r, "input shape " + show(*items) + " of " + r.label() + " has no feature count", {},
                   dims.size() == 1 ? "Give the input shape explicitly, e.g. input_shape=(784,)."
                                    : "Give the input shape explicitly, e.g. input_shape=(28, 28, 1).");
        if (!as_integer(dims[i], 1, kMaxDim, v[i])) {
            if (as_integer(dims[i], int64_t(kMaxDim) + 1, INT64_MAX, v[i]))
                fail(ErrorKind::Limit, "input shape " + show(*items) + " of " + r.label() + " is too large",
                     "The input dimension must be an integer between 1 and 1000000.");
            bad_value(key, " in " + r.label(), shape, "The input dimension must be an integer between 1 and 1000000.");
        }
    }
    out = TensorShape{};
    if (dims.size() == 1) {
        out.channels = static_cast<int>(v[0]);
        return true;
    }
    const uint64_t size = uint64_t(v[0]) * uint64_t(v[1]) * uint64_t(v[2]);
    if (size > uint64_t(kMaxDim))
        fail(ErrorKind::Limit, "input shape " + show(*items) + " of " + r.label() + " is too large",
             "A row has " + std::to_string(size) + " values; hopper reads at most 1000000 per row.");
    out.height = static_cast<int>(v[0]);
    out.width = static_cast<int>(v[1]);
    out.channels = static_cast<int>(v[2]);
    out.flat = false;
    return true;
}

// A shape for messages: "[null, 784]", "[null, 28, 28, 1]".
std::string keras_shape_string(const TensorShape& s) {
    if (s.flat) return "[null, " + std::to_string(s.channels) + "]";
    return "[null, " + std::to_string(s.height) + ", " + std::to_string(s.width) + ", " + std::to_string(s.channels) +
           "]";
}

// kernel_initializer / init as a string or {"class_name": ..., "config": {...}}.
Initializer kernel_initializer(const json& v, const KerasLayerRef& r, const std::string& key) {
    const std::string where = " in " + r.label();
    const char* detail =
        "hopper supports the kernel initializers glorot_uniform, glorot_normal, "
        "he_uniform, he_normal and zeros.";
    Initializer out;
    if (v.is_string()) {
        if (!initializer_from_name(v.get_ref<const std::string&>(), out))
            fail(ErrorKind::InvalidParameter, "unsupported kernel initializer " + show(v) + where, detail);
        return out;
    }
    if (!v.is_object() || !v.contains("class_name") || !v["class_name"].is_string()) bad_value(key, where, v, detail);
    const std::string& cls = v["class_name"].get_ref<const std::string&>();
    if (cls == "VarianceScaling") {
        // Keras 2.0-2.2 serialise glorot_* and he_* as VarianceScaling with these settings.
        const json cfg = v.value("config", json::object());
        double scale = 0;
        if (!cfg.is_object() || !cfg.contains("scale") || !as_double(cfg["scale"], scale))
            bad_value(key, where, v, detail);
        std::string mode = cfg.value("mode", std::string());
        std::string dist = cfg.value("distribution", std::string());
        bool uniform = dist == "uniform";
        bool normal = dist == "normal" || dist == "truncated_normal" || dist == "untruncated_normal";
        if (scale == 1.0 && mode == "fan_avg" && (uniform || normal))
            return uniform ? Initializer::GlorotUniform : Initializer::GlorotNormal;
        if (scale == 2.0 && mode == "fan_in" && (uniform || normal))
            return uniform ? Initializer::HeUniform : Initializer::HeNormal;
        fail(ErrorKind::InvalidParameter,
             "unsupported kernel initializer VarianceScaling(scale=" + fmt_double(scale) + ", mode=" + mode +
                 ", distribution=" + dist + ")" + where,
             detail);
    }
    if (!initializer_from_name(cls, out))
        fail(ErrorKind::InvalidParameter, "unsupported kernel initializer \"" + cls + "\"" + where, detail);
    // seed and dtype in the config are irrelevant: hopper seeds from the fit parameters.
    return out;
}

// An initializer that fills with `value`: "zeros"/"ones", Zeros/Ones, Constant(value).
bool is_constant_initializer(const json& v, double value) {
    auto named = [&](const std::string& name) {
        const std::string n = squash(name);
        return (value == 0.0 && (n == "zeros" || n == "zero")) || (value == 1.0 && (n == "ones" || n == "one"));
    };
    if (v.is_string()) return named(v.get_ref<const std::string&>());
    if (!v.is_object() || !v.contains("class_name") || !v["class_name"].is_string()) return false;
    const std::string& cls = v["class_name"].get_ref<const std::string&>();
    if (named(cls)) return true;
    if (cls == "Constant") {
        const json cfg = v.value("config", json::object());
        return cfg.is_object() && cfg.contains("value") && cfg["value"].is_number() &&
               cfg["value"].get<double>() == value;
    }
    return false;
}

Activation keras_activation(const json& v, const KerasLayerRef& r) {
    if (v.is_null()) return Activation::Linear;  // Keras: None means linear
    Activation a;
    if (!v.is_string() || !activation_from_name(v.get_ref<const std::string&>(), a))
        fail(ErrorKind::InvalidParameter, "unsupported activation " + show(v) + " in " + r.label(),
             "hopper supports the activations linear, relu, tanh, sigmoid and softmax.");
    return a;
}

// Keys of a layer's config that hopper ignores because they do not change the maths.
bool harmless_key(const std::string& k) {
    static const char* const keys[] = {"name",       "dtype",    "input_dtype", "sparse",
                                       "ragged",     "optional", "batch_size",  "seed",
                                       "lora_alpha", "autocast", "dynamic",     "expects_training_arg",
                                       "fused"};
    for (const char* h : keys)
        if (k == h) return true;
    return false;
}

// A layer's `trainable` (true unless given): false freezes it. Layers hopper merges into the one
// before them (Activation, Dropout) have no weights of their own: their flag changes nothing.
bool keras_trainable(const json& cfg, const KerasLayerRef& r) {
    auto it = cfg.find("trainable");
    if (it == cfg.end() || it->is_null()) return true;
    if (!it->is_boolean()) bad_value("trainable", " in " + r.label(), *it, "trainable must be true or false.");
    return it->get<bool>();
}

// Unknown keys are refused unless their value is null/false/0 (an option switched off).
void check_unknown(const json& cfg, const KerasLayerRef& r, const std::vector<std::string>& handled) {
    for (auto it = cfg.begin(); it != cfg.end(); ++it) {
        const std::string& k = it.key();
        if (harmless_key(k) || k == "trainable") continue;
        if (std::find(handled.begin(), handled.end(), k) != handled.end()) continue;
        if (is_nullish(*it)) continue;
        refuse(r, "unsupported option \"" + k + "\" in " + r.label(),
               "\"" + k + "\" is " + show(*it) + "; hopper does not implement this option.",
               "Remove the option from the Keras layer.");
    }
}

}  // namespace

namespace {

// The shapes a layer declares for its input: Keras 1/2 put batch_input_shape (or input_shape,
// input_dim) on the first layer, Keras 3 a build_config on every layer.
struct Declared {
    std::size_t layer;  // index of the hopper layer it declares the input of
    TensorShape shape;
    std::string what;  // "batch_input_shape", ...
    KerasLayerRef ref;
};

// The import: one method per Keras layer class, building the architecture as it goes.
class KerasImport {
public:
    Architecture arch;
    std::vector<std::string> labels;  // Keras label of each hopper layer

    void input_layer(const json& cfg, const KerasLayerRef& r) {
        if (seen_input_layer_ || !arch.layers.empty())
            refuse(r, "misplaced InputLayer (" + r.label() + ")",
                   "An InputLayer must be the first layer of a Sequential model.");
        seen_input_layer_ = true;
        bool any = false;
        TensorShape s;
        for (const char* k : {"batch_input_shape", "batch_shape"})
            if (cfg.contains(k) && keras_shape(cfg[k], true, r, k, s)) {
                set_input(s, r, k);
                any = true;
            }
        if (cfg.contains("input_shape") && keras_shape(cfg["input_shape"], false, r, "input_shape", s)) {
            set_input(s, r, "input_shape");
            any = true;
        }
        if (!any)
            refuse(r, r.label() + " has no input shape", {},
                   "Create the input with an explicit shape, e.g. keras.Input(shape=(784,)).");
    }

    void dense(const json& cfg, const KerasLayerRef& r, const json* build_shape) {
        const bool trainable = keras_trainable(cfg, r);
        static const std::vector<std::string> handled = {"units",
                                                         "output_dim",
                                                         "activation",
                                                         "use_bias",
                                                         "bias",
                                                         "kernel_initializer",
                                                         "init",
                                                         "bias_initializer",
                                                         "kernel_regularizer",
                                                         "bias_regularizer",
                                                         "activity_regularizer",
                                                         "kernel_constraint",
                                                         "bias_constraint",
                                                         "W_regularizer",
                                                         "b_regularizer",
                                                         "W_constraint",
                                                         "b_constraint",
                                                         "batch_input_shape",
                                                         "batch_shape",
                                                         "input_shape",
                                                         "input_dim"};
        check_unknown(cfg, r, handled);
        const std::string where = " in " + r.label();
        check_layer_count();
        declare_input(cfg, r, build_shape);
        if (cfg.contains("input_dim") && !cfg["input_dim"].is_null()) {  // Keras 1
            int64_t v = 0;
            if (!as_integer(cfg["input_dim"], 1, kMaxDim, v))
                bad_size("input_dim", where, cfg["input_dim"], "input_dim must be an integer between 1 and 1000000.");
            TensorShape s;
            s.channels = static_cast<int>(v);
            declare(s, r, "input_dim");
        }
        refuse_regularizers(cfg, r,
                            {"kernel_regularizer", "bias_regularizer", "activity_regularizer", "W_regularizer",
                             "b_regularizer"});
        refuse_constraints(cfg, r, {"kernel_constraint", "bias_constraint", "W_constraint", "b_constraint"});

        Layer l;
        const char* ukey = cfg.contains("units") ? "units" : "output_dim";
        if (!cfg.contains(ukey)) fail(ErrorKind::InvalidParameter, "missing key \"units\"" + where);
        int64_t v = 0;
        if (!as_integer(cfg[ukey], 1, kMaxDim, v))
            bad_size(ukey, where, cfg[ukey], "units must be an integer between 1 and 1000000.");
        l.units = static_cast<int>(v);
        if (cfg.contains("activation")) l.activation = keras_activation(cfg["activation"], r);
        const char* bkey = cfg.contains("use_bias") ? "use_bias" : "bias";
        if (cfg.contains(bkey)) {
            if (!cfg[bkey].is_boolean()) bad_value(bkey, where, cfg[bkey], "use_bias must be true or false.");
            l.use_bias = cfg[bkey].get<bool>();
        }
        // Keras's default kernel initializer is glorot_uniform whatever the activation.
        l.initializer = Initializer::GlorotUniform;
        const char* ikey = cfg.contains("kernel_initializer") ? "kernel_initializer" : "init";
        if (cfg.contains(ikey) && !cfg[ikey].is_null()) l.initializer = kernel_initializer(cfg[ikey], r, ikey);
        check_bias_initializer(cfg, r, l.use_bias);
        l.trainable = trainable;
        add(l, r);
    }

    void conv2d(const json& cfg, const KerasLayerRef& r, const json* build_shape) {
        const bool trainable = keras_trainable(cfg, r);
        static const std::vector<std::string> handled = {"filters",
                                                         "kernel_size",
                                                         "strides",
                                                         "padding",
                                                         "data_format",
                                                         "dilation_rate",
                                                         "groups",
                                                         "activation",
                                                         "use_bias",
                                                         "kernel_initializer",
                                                         "bias_initializer",
                                                         "kernel_regularizer",
                                                         "bias_regularizer",
                                                         "activity_regularizer",
                                                         "kernel_constraint",
                                                         "bias_constraint",
                                                         "batch_input_shape",
                                                         "batch_shape",
                                                         "input_shape"};
        check_unknown(cfg, r, handled);
        const std::string where = " in " + r.label();
        check_layer_count();
        declare_input(cfg, r, build_shape);
        check_data_format(cfg, r);
        refuse_regularizers(cfg, r, {"kernel_regularizer", "bias_regularizer", "activity_regularizer"});
        refuse_constraints(cfg, r, {"kernel_constraint", "bias_constraint"});
        if (cfg.contains("dilation_rate") && !cfg["dilation_rate"].is_null()) {
            int h = 0, w = 0;
            if (!window_size(cfg["dilation_rate"], h, w) || h != 1 || w != 1)
                refuse(r, "unsupported dilation_rate " + show(cfg["dilation_rate"]) + where,
                       "hopper implements convolutions without dilation (dilation_rate 1).",
                       "Remove dilation_rate from the layer.");
        }
        if (cfg.contains("groups") && !cfg["groups"].is_null()) {
            int64_t g = 0;
            if (!as_integer(cfg["groups"], 1, 1, g))
                refuse(r, "unsupported groups " + show(cfg["groups"]) + where,
                       "hopper implements convolutions over all input channels (groups 1).",
                       "Remove groups from the layer.");
        }
        Layer l;
        l.kind = LayerKind::Conv2D;
        if (!cfg.contains("filters")) fail(ErrorKind::InvalidParameter, "missing key \"filters\"" + where);
        int64_t v = 0;
        if (!as_integer(cfg["filters"], 1, kMaxDim, v))
            bad_size("filters", where, cfg["filters"], "filters must be an integer between 1 and 1000000.");
        l.filters = static_cast<int>(v);
        if (!cfg.contains("kernel_size")) fail(ErrorKind::InvalidParameter, "missing key \"kernel_size\"" + where);
        if (!window_size(cfg["kernel_size"], l.kernel_h, l.kernel_w))
            bad_window_size("kernel_size", where, cfg["kernel_size"]);
        window_options(cfg, r, l);
        if (cfg.contains("activation")) l.activation = keras_activation(cfg["activation"], r);
        if (cfg.contains("use_bias")) {
            if (!cfg["use_bias"].is_boolean())
                bad_value("use_bias", where, cfg["use_bias"], "use_bias must be true or false.");
            l.use_bias = cfg["use_bias"].get<bool>();
        }
        l.initializer = Initializer::GlorotUniform;  // Keras' default
        if (cfg.contains("kernel_initializer") && !cfg["kernel_initializer"].is_null())
            l.initializer = kernel_initializer(cfg["kernel_initializer"], r, "kernel_initializer");
        check_bias_initializer(cfg, r, l.use_bias);
        l.trainable = trainable;
        add(l, r);
    }

    void pooling(const json& cfg, const KerasLayerRef& r, const json* build_shape, LayerKind kind) {
        const bool trainable = keras_trainable(cfg, r);
        check_unknown(cfg, r,
                      {"pool_size", "strides", "padding", "data_format", "batch_input_shape", "batch_shape",
                       "input_shape"});
        const std::string where = " in " + r.label();
        check_layer_count();
        declare_input(cfg, r, build_shape);
        check_data_format(cfg, r);
        Layer l;
        l.kind = kind;
        l.kernel_h = l.kernel_w = 2;  // Keras' default pool_size
        if (cfg.contains("pool_size") && !window_size(cfg["pool_size"], l.kernel_h, l.kernel_w))
            bad_window_size("pool_size", where, cfg["pool_size"]);
        l.stride_h = l.kernel_h;  // strides=None: the pool size
        l.stride_w = l.kernel_w;
        window_options(cfg, r, l);
        l.trainable = trainable;
        add(l, r);
    }

    void global_pooling(const json& cfg, const KerasLayerRef& r, const json* build_shape) {
        const bool trainable = keras_trainable(cfg, r);
        check_unknown(cfg, r, {"data_format", "keepdims", "batch_input_shape", "batch_shape", "input_shape"});
        check_layer_count();
        declare_input(cfg, r, build_shape);
        check_data_format(cfg, r);
        if (cfg.contains("keepdims") && !is_nullish(cfg["keepdims"]))
            refuse(r, "unsupported keepdims in " + r.label(),
                   "hopper's GlobalAveragePooling2D outputs a flat vector (keepdims false).",
                   "Remove keepdims from the layer.");
        Layer l;
        l.kind = LayerKind::GlobalAveragePooling2D;
        l.trainable = trainable;
        add(l, r);
    }

    void flatten(const json& cfg, const KerasLayerRef& r, const json* build_shape) {
        const bool trainable = keras_trainable(cfg, r);
        check_unknown(cfg, r, {"data_format", "batch_input_shape", "batch_shape", "input_shape"});
        check_layer_count();
        declare_input(cfg, r, build_shape);
        // channels_first would flatten in CHW order: another weight layout for the Dense after it.
        check_data_format(cfg, r);
        Layer l;
        l.kind = LayerKind::Flatten;
        l.trainable = trainable;
        add(l, r);
    }

    void batch_normalization(const json& cfg, const KerasLayerRef& r, const json* build_shape) {
        const bool trainable = keras_trainable(cfg, r);
        static const std::vector<std::string> handled = {"axis",
                                                         "momentum",
                                                         "epsilon",
                                                         "center",
                                                         "scale",
                                                         "beta_initializer",
                                                         "gamma_initializer",
                                                         "moving_mean_initializer",
                                                         "moving_variance_initializer",
                                                         "beta_regularizer",
                                                         "gamma_regularizer",
                                                         "beta_constraint",
                                                         "gamma_constraint",
                                                         "batch_input_shape",
                                                         "batch_shape",
                                                         "input_shape"};
        check_unknown(cfg, r, handled);
        const std::string where = " in " + r.label();
        check_layer_count();
        declare_input(cfg, r, build_shape);
        refuse_regularizers(cfg, r, {"beta_regularizer", "gamma_regularizer"});
        refuse_constraints(cfg, r, {"beta_constraint", "gamma_constraint"});
        Layer l;
        l.kind = LayerKind::BatchNormalization;
        double d = 0;
        if (cfg.contains("momentum") && !cfg["momentum"].is_null()) {
            if (!as_double(cfg["momentum"], d) || !(d >= 0.0 && d <= 1.0))
                bad_value("momentum", where, cfg["momentum"], "momentum must be between 0 and 1.");
            l.momentum = d;
        }
        if (cfg.contains("epsilon") && !cfg["epsilon"].is_null()) {
            if (!as_double(cfg["epsilon"], d) || !(d > 0.0) || !(static_cast<float>(d) > 0.0f) ||
                !std::isfinite(static_cast<float>(d)))
                bad_value("epsilon", where, cfg["epsilon"], "epsilon must be a positive number.");
            l.epsilon = d;
        }
        for (const char* key : {"center", "scale"})
            if (cfg.contains(key)) {
                if (!cfg[key].is_boolean())
                    bad_value(key, where, cfg[key], std::string(key) + " must be true or false.");
                (std::string(key) == "center" ? l.center : l.scale) = cfg[key].get<bool>();
            }
        struct Init {
            const char* key;
            double value;
            bool used;
        };
        for (const Init& i :
             {Init{"beta_initializer", 0.0, l.center}, Init{"gamma_initializer", 1.0, l.scale},
              Init{"moving_mean_initializer", 0.0, true}, Init{"moving_variance_initializer", 1.0, true}})
            if (i.used && cfg.contains(i.key) && !cfg[i.key].is_null() && !is_constant_initializer(cfg[i.key], i.value))
                refuse(r, "unsupported " + std::string(i.key) + " " + show(cfg[i.key]) + where,
                       "hopper starts batch normalization with gamma 1, beta 0, moving mean 0 and moving "
                       "variance 1.",
                       "Use the default initializers of BatchNormalization.");
        // The axis can only be checked once the input's rank is known (after the input shape).
        if (cfg.contains("axis") && !cfg["axis"].is_null()) {
            const json& ax = cfg["axis"];
            const json* one = &ax;
            if (ax.is_array()) one = ax.size() == 1 ? &ax[0] : nullptr;
            int64_t v = 0;
            if (!one || !as_integer(*one, -1000, 1000, v) || v == 0)
                refuse(r, "unsupported axis " + show(ax) + where,
                       "hopper normalizes over the channels, the last axis (-1).", "Remove axis from the layer.");
            if (v != -1) axes_.push_back({arch.layers.size(), v, r, show(ax)});
        }
        l.trainable = trainable;
        add(l, r);
    }

    // An Embedding of a functional model, bound to the column its InputLayer is named after.
    void embedding(const json& cfg, const KerasLayerRef& r, const std::string& column) {
        const bool trainable = keras_trainable(cfg, r);
        check_unknown(cfg, r,
                      {"input_dim", "output_dim", "embeddings_initializer", "embeddings_regularizer",
                       "activity_regularizer", "embeddings_constraint", "mask_zero", "input_length",
                       "batch_input_shape", "batch_shape", "input_shape"});
        const std::string where = " in " + r.label();
        check_layer_count();
        refuse_regularizers(cfg, r, {"embeddings_regularizer", "activity_regularizer"});
        refuse_constraints(cfg, r, {"embeddings_constraint"});
        if (cfg.contains("mask_zero") && !is_nullish(cfg["mask_zero"]))
            refuse(r, "unsupported mask_zero in " + r.label(), "hopper has no masking: code 0 is a category.",
                   "Remove mask_zero.");
        if (cfg.contains("input_length") && !cfg["input_length"].is_null()) {
            int64_t n = 0;
            if (!as_integer(cfg["input_length"], 1, 1, n))
                refuse(r, "unsupported input_length " + show(cfg["input_length"]) + where,
                       "An embedding of a column reads one code per row.", "Remove input_length.");
        }
        if (cfg.contains("embeddings_initializer") && !cfg["embeddings_initializer"].is_null()) {
            const json& v = cfg["embeddings_initializer"];
            const json c = v.is_object() ? v.value("config", json::object()) : json::object();
            const bool uniform =
                (v.is_string() && squash(v.get_ref<const std::string&>()) == "uniform") ||
                (v.is_object() && v.value("class_name", std::string()) == "RandomUniform" && c.is_object() &&
                 c.value("minval", -0.05) == -0.05 && c.value("maxval", 0.05) == 0.05);
            if (!uniform)
                refuse(r, "unsupported embeddings_initializer " + show(v) + where,
                       "hopper starts embeddings uniform in [-0.05, 0.05], Keras' default.",
                       "Use the default embeddings_initializer.");
        }
        Layer l;
        l.kind = LayerKind::Embedding;
        l.column = column;
        int64_t v = 0;
        if (!cfg.contains("output_dim")) fail(ErrorKind::InvalidParameter, "missing key \"output_dim\"" + where);
        if (!as_integer(cfg["output_dim"], 1, kMaxDim, v))
            bad_size("output_dim", where, cfg["output_dim"], "output_dim must be an integer between 1 and 1000000.");
        l.units = int(v);
        if (cfg.contains("input_dim") && !cfg["input_dim"].is_null()) {
            if (!as_integer(cfg["input_dim"], 1, kMaxDim, v))
                bad_size("input_dim", where, cfg["input_dim"], "input_dim must be an integer between 1 and 1000000.");
            l.vocabulary = int(v);
        }
        l.trainable = trainable;
        add(l, r);
    }

    // A functional model's input: the packed table's row, whose width is known when training starts.
    Architecture finish_functional() {
        if (arch.layers.empty() || arch.layers.back().kind == LayerKind::Embedding)
            fail(ErrorKind::InvalidParameter, "Keras model has no layers after its inputs",
                 "hopper needs at least one layer after the Concatenate, such as a Dense layer.");
        arch.input_dim = 0;
        validate_architecture(arch, &labels, "the Keras model's inputs");
        return arch;
    }

    void activation(const json& cfg, const KerasLayerRef& r) {
        keras_trainable(cfg, r);  // checked; nothing of its own to freeze
        check_unknown(cfg, r, {"activation"});
        Activation a = keras_activation(cfg.value("activation", json()), r);
        if (a == Activation::Linear) return;  // identity
        if (arch.layers.empty())
            refuse(r, r.label() + " applies " + std::string(to_string(a)) + " before any layer",
                   "hopper applies activations to the outputs of layers only.",
                   "Remove the Activation layer or move it after a Dense or Conv2D layer.");
        Layer& d = arch.layers.back();
        if (d.activation != Activation::Linear)
            refuse(r,
                   r.label() + " applies " + std::string(to_string(a)) + " after " + labels.back() +
                       " which already uses " + to_string(d.activation),
                   "hopper applies one activation per layer.",
                   "Give the layer before activation='linear' or remove one of the activations.");
        if (dropout_since_layer_ && a != Activation::Relu)
            refuse(r, r.label() + " applies " + std::string(to_string(a)) + " after a Dropout layer",
                   "hopper applies dropout after the activation; only relu commutes with dropout.",
                   "Put the Activation layer before the Dropout layer.");
        d.activation = a;
    }

    void dropout(const json& cfg, const KerasLayerRef& r) {
        keras_trainable(cfg, r);  // checked; nothing of its own to freeze
        check_unknown(cfg, r, {"rate", "p", "noise_shape"});
        if (cfg.contains("noise_shape") && !cfg["noise_shape"].is_null())
            refuse(r, "unsupported noise_shape in " + r.label(), "hopper drops each value independently.",
                   "Remove noise_shape.");
        const char* key = cfg.contains("rate") ? "rate" : "p";  // p: Keras 1
        if (!cfg.contains(key)) fail(ErrorKind::InvalidParameter, "missing key \"rate\" in " + r.label());
        double rate = 0;
        if (!as_double(cfg[key], rate) || !(rate >= 0.0 && rate < 1.0))
            bad_value(key, " in " + r.label(), cfg[key], "The dropout rate must be at least 0 and less than 1.");
        if (arch.layers.empty())
            refuse(r, r.label() + " drops inputs before any layer",
                   "hopper applies dropout to the outputs of layers only.",
                   "Remove the Dropout layer or move it after the first layer.");
        Layer& d = arch.layers.back();
        double keep = (1.0 - static_cast<double>(d.dropout)) * (1.0 - rate);
        float combined = static_cast<float>(1.0 - keep);
        if (!(combined < 1.0f))
            bad_value(key, " in " + r.label(), cfg[key],
                      "The combined dropout rate of consecutive Dropout layers must be less than 1.");
        d.dropout = combined;
        dropout_since_layer_ = true;
    }

    // After the last layer: the input shape, validation, and the declared shapes and axes that
    // needed the computed shapes.
    Architecture finish(const json* build_input_shape) {
        if (arch.layers.empty())
            fail(ErrorKind::InvalidParameter, "Keras model has no layers",
                 "hopper needs at least one layer after the input, such as a Dense layer.");
        if (build_input_shape) {
            KerasLayerRef r{0, {}};
            TensorShape s;
            if (keras_shape(*build_input_shape, true, r, "build_input_shape", s)) {
                if (have_input_ && s != input_)
                    fail(ErrorKind::InvalidParameter, "conflicting input shapes in Keras model",
                         input_label_ + " gives " + describe(input_) + " but build_input_shape gives " +
                             describe_again(input_, s) + ".");
                if (!have_input_) {
                    have_input_ = true;
                    input_ = s;
                    input_label_ = "build_input_shape";
                }
            }
        }
        if (!have_input_)
            fail(ErrorKind::InvalidParameter, "Keras model does not specify its input shape", {},
                 "Build the model with an input shape (keras.Input(shape=(n,)) or input_shape=(n,) on "
                 "the first layer; (height, width, channels) for images) before calling to_json().");
        arch.input_dim = static_cast<int>(input_.size());
        if (!input_.flat) {
            arch.input_height = input_.height;
            arch.input_width = input_.width;
            arch.input_channels = input_.channels;
        }
        validate_architecture(arch, &labels, input_label_);

        const std::vector<TensorShape> shapes = arch.layer_shapes();
        for (const Declared& d : declared_) {
            const TensorShape& in = d.layer == 0 ? input_ : shapes[d.layer - 1];
            if (d.shape != in)
                refuse(d.ref, "input shape of " + d.ref.label() + " does not match the previous layer",
                       d.what + " says " + keras_shape_string(d.shape) + " but the previous layer outputs " +
                           keras_shape_string(in) + ".");
        }
        for (const Axis& a : axes_) {
            const TensorShape& in = a.layer == 0 ? input_ : shapes[a.layer - 1];
            const int64_t last = in.flat ? 1 : 3;  // with the batch axis
            if (a.axis != last)
                refuse(a.ref, "unsupported axis " + a.shown + " in " + a.ref.label(),
                       "hopper normalizes over the channels, the last axis; the input of the layer has "
                       "shape " +
                           keras_shape_string(in) + ".",
                       "Use axis=-1.");
        }
        return arch;
    }

private:
    struct Axis {
        std::size_t layer;
        int64_t axis;
        KerasLayerRef ref;
        std::string shown;
    };

    static std::string describe(const TensorShape& s) {
        return s.flat ? std::to_string(s.channels) + " inputs" : "inputs of shape " + keras_shape_string(s);
    }
    // The second of two shapes in one sentence: "... gives 8 inputs but ... gives 4".
    static std::string describe_again(const TensorShape& first, const TensorShape& s) {
        return first.flat && s.flat ? std::to_string(s.channels) : describe(s);
    }

    void set_input(const TensorShape& s, const KerasLayerRef& r, const std::string& what) {
        if (have_input_ && s != input_)
            refuse(r, "conflicting input shapes in Keras model",
                   input_label_ + " gives " + describe(input_) + " but " + what + " of " + r.label() + " gives " +
                       describe_again(input_, s) + ".");
        if (!have_input_) {
            have_input_ = true;
            input_ = s;
            input_label_ = what + " of " + r.label();
        }
    }

    // An input shape the layer about to be added declares: the model's input for the first layer,
    // checked against the computed shapes for later ones -- at once after Dense layers (the width
    // is their units, whatever the input), else once the shapes are known (finish).
    void declare(const TensorShape& s, const KerasLayerRef& r, const std::string& what) {
        if (arch.layers.empty()) {
            set_input(s, r, what);
            return;
        }
        const Layer& prev = arch.layers.back();
        if (prev.kind != LayerKind::Dense) {
            declared_.push_back({arch.layers.size(), s, what, r});
            return;
        }
        if (!s.flat || s.channels != prev.units)
            refuse(r, "input shape of " + r.label() + " does not match the previous layer",
                   what + " says " + (s.flat ? std::to_string(s.channels) + " inputs" : keras_shape_string(s)) +
                       " but the previous layer has " + std::to_string(prev.units) + " units.");
    }

    void declare_input(const json& cfg, const KerasLayerRef& r, const json* build_shape) {
        TensorShape s;
        for (const char* k : {"batch_input_shape", "batch_shape"})
            if (cfg.contains(k) && keras_shape(cfg[k], true, r, k, s)) declare(s, r, k);
        if (cfg.contains("input_shape") && keras_shape(cfg["input_shape"], false, r, "input_shape", s))
            declare(s, r, "input_shape");
        if (build_shape && keras_shape(*build_shape, true, r, "build_config.input_shape", s))
            declare(s, r, "build_config.input_shape");
    }

    void check_layer_count() const {
        if (arch.layers.size() >= static_cast<std::size_t>(kMaxLayers))
            fail(ErrorKind::Limit, "architecture has too many layers",
                 "The Keras model has more than " + std::to_string(kMaxLayers) +
                     " layers (not counting Activation and Dropout layers); at most " + std::to_string(kMaxLayers) +
                     " are supported.");
    }

    void add(const Layer& l, const KerasLayerRef& r) {
        arch.layers.push_back(l);
        labels.push_back(r.label());
        dropout_since_layer_ = false;
    }

    static void refuse_regularizers(const json& cfg, const KerasLayerRef& r, std::initializer_list<const char*> keys) {
        for (const char* k : keys)
            if (cfg.contains(k) && !cfg[k].is_null())
                refuse(r, "unsupported " + std::string(k) + " in " + r.label(),
                       "hopper does not implement Keras regularizers.",
                       "Remove the regularizer; for L2 on weights use weight_decay in the "
                       "compile parameters.");
    }

    static void refuse_constraints(const json& cfg, const KerasLayerRef& r, std::initializer_list<const char*> keys) {
        for (const char* k : keys)
            if (cfg.contains(k) && !cfg[k].is_null())
                refuse(r, "unsupported " + std::string(k) + " in " + r.label(),
                       "hopper does not implement Keras weight constraints.", "Remove the constraint from the layer.");
    }

    static void check_bias_initializer(const json& cfg, const KerasLayerRef& r, bool use_bias) {
        if (use_bias && cfg.contains("bias_initializer") && !cfg["bias_initializer"].is_null() &&
            !is_constant_initializer(cfg["bias_initializer"], 0.0))
            refuse(r, "unsupported bias_initializer " + show(cfg["bias_initializer"]) + " in " + r.label(),
                   "hopper initialises biases to zero.", "Use the default bias initializer (zeros).");
    }

    static void check_data_format(const json& cfg, const KerasLayerRef& r) {
        if (!cfg.contains("data_format") || cfg["data_format"].is_null()) return;
        const json& f = cfg["data_format"];
        if (!f.is_string() || f.get_ref<const std::string&>() != "channels_last")
            refuse(r, "unsupported data_format " + show(f) + " in " + r.label(),
                   "hopper reads images channels last ([height, width, channels]), Keras' default.",
                   "Build the model with data_format=\"channels_last\".");
    }

    // strides and padding of Conv2D and pooling layers (the defaults already in l).
    static void window_options(const json& cfg, const KerasLayerRef& r, Layer& l) {
        const std::string where = " in " + r.label();
        if (cfg.contains("strides") && !cfg["strides"].is_null() &&
            !window_size(cfg["strides"], l.stride_h, l.stride_w))
            bad_window_size("strides", where, cfg["strides"]);
        if (cfg.contains("padding") && !cfg["padding"].is_null())
            if (!cfg["padding"].is_string() ||
                !padding_from_name(cfg["padding"].get_ref<const std::string&>(), l.padding))
                bad_value("padding", where, cfg["padding"], "hopper supports padding \"valid\" and \"same\".");
    }

    bool seen_input_layer_ = false;
    bool have_input_ = false;
    TensorShape input_;
    std::string input_label_;
    bool dropout_since_layer_ = false;  // a Dropout follows the current layer
    std::vector<Declared> declared_;
    std::vector<Axis> axes_;
};

}  // namespace

namespace {

// The Keras classes hopper reads, each by one method of KerasImport: one line per class.
struct KerasClass {
    const char* name;
    void (*read)(KerasImport& im, const json& cfg, const KerasLayerRef& r, const json* build_shape);
};

const std::vector<KerasClass>& keras_classes() {
    static const std::vector<KerasClass> classes = {
        {"InputLayer",
         [](KerasImport& im, const json& c, const KerasLayerRef& r, const json*) { im.input_layer(c, r); }},
        {"Dense", [](KerasImport& im, const json& c, const KerasLayerRef& r, const json* b) { im.dense(c, r, b); }},
        {"Conv2D", [](KerasImport& im, const json& c, const KerasLayerRef& r, const json* b) { im.conv2d(c, r, b); }},
        {"MaxPooling2D", [](KerasImport& im, const json& c, const KerasLayerRef& r,
                            const json* b) { im.pooling(c, r, b, LayerKind::MaxPooling2D); }},
        {"AveragePooling2D", [](KerasImport& im, const json& c, const KerasLayerRef& r,
                                const json* b) { im.pooling(c, r, b, LayerKind::AveragePooling2D); }},
        {"GlobalAveragePooling2D",
         [](KerasImport& im, const json& c, const KerasLayerRef& r, const json* b) { im.global_pooling(c, r, b); }},
        {"Flatten", [](KerasImport& im, const json& c, const KerasLayerRef& r, const json* b) { im.flatten(c, r, b); }},
        {"BatchNormalization", [](KerasImport& im, const json& c, const KerasLayerRef& r,
                                  const json* b) { im.batch_normalization(c, r, b); }},
        {"Activation",
         [](KerasImport& im, const json& c, const KerasLayerRef& r, const json*) { im.activation(c, r); }},
        {"Dropout", [](KerasImport& im, const json& c, const KerasLayerRef& r, const json*) { im.dropout(c, r); }},
    };
    return classes;
}

const KerasClass* keras_class(const std::string& name) {
    for (const KerasClass& k : keras_classes())
        if (name == k.name) return &k;
    return nullptr;
}

std::string keras_supported() {
    std::vector<std::string> names;
    for (const KerasClass& k : keras_classes()) names.push_back(k.name);
    return "Supported Keras layers are: " + join(names) + ".";
}

}  // namespace

namespace {

// A functional model (Keras' Model / Functional) of the common tabular shape: an InputLayer per
// categorical column, each through an Embedding (and a Flatten or Reshape) into one Concatenate,
// optionally with one other InputLayer first (the packed features no embedding reads), then a
// stack of layers to the one output. An InputLayer's name is the column its Embedding binds; the
// embeddings follow Concatenate's order. Other graphs are refused naming the node that does not fit.
class FunctionalGraph {
public:
    explicit FunctionalGraph(const json& layers) {
        for (std::size_t i = 0; i < layers.size(); ++i) {
            const json& lj = layers[i];
            Node n;
            n.index = i;
            if (!lj.is_object() || !lj.contains("class_name") || !lj["class_name"].is_string())
                fail(ErrorKind::InvalidParameter, "Keras layer " + std::to_string(i + 1) + " has no class_name",
                     "Expected the output of model.to_json().");
            n.cls = lj["class_name"].get<std::string>();
            n.cfg = lj.value("config", json::object());
            if (!n.cfg.is_object())
                fail(ErrorKind::InvalidParameter,
                     "config of Keras layer " + std::to_string(i + 1) + " is not an object");
            if (lj.contains("name") && lj["name"].is_string()) n.name = lj["name"].get<std::string>();
            else if (n.cfg.contains("name") && n.cfg["name"].is_string()) n.name = n.cfg["name"].get<std::string>();
            if (n.name.empty() || by_name_.count(n.name))
                fail(ErrorKind::InvalidParameter, "Keras layer " + std::to_string(i + 1) + " has no unique name",
                     "A functional model's layers are connected by their names.");
            const json nodes = lj.value("inbound_nodes", json::array());
            if (!nodes.is_array() || nodes.size() > 1)
                refuse_node(n, "is called more than once",
                            "hopper reads each layer of a model once (no shared layers).");
            if (!nodes.empty()) read_inbound(nodes[0], n);
            by_name_[n.name] = nodes_.size();
            nodes_.push_back(std::move(n));
        }
    }

    Architecture import(const json& outputs) {
        const std::string out = single_output(outputs);
        // Back from the output through layers of one input, to the Concatenate, an Embedding (a
        // model of one categorical input) or the only input.
        std::vector<const Node*> stack;
        const Node* n = &node(out, "output_layers");
        while (n->cls != "Concatenate" && n->cls != "InputLayer" && n->cls != "Embedding") {
            // A path longer than the model has layers goes round a cycle (a layer among its own
            // inputs: CI's fuzz_architecture found one that looped until the stack filled memory).
            if (stack.size() > nodes_.size())
                refuse_node(*n, "leads back to itself: the layers form a cycle",
                            "Expected the output of model.to_json(), whose layers take earlier ones only.");
            if (n->cls == "Reshape" && only_input(*n).cls == "Embedding") {
                stack.push_back(n);  // the embedding's, read with it
                n = &only_input(*n);
                break;
            }
            if (!keras_class(n->cls)) refuse_node(*n, "is not supported in a functional model", keras_supported());
            stack.push_back(n);
            n = &only_input(*n);
        }
        KerasImport im;
        std::vector<const Node*> used(stack.begin(), stack.end());
        if (n->cls == "Embedding") {
            // Its Flatten or Reshape belongs to the embedding.
            if (!stack.empty() && (stack.back()->cls == "Flatten" || stack.back()->cls == "Reshape")) {
                n = stack.back();
                stack.pop_back();
            }
            im.arch.other_features = 0;
            read_branch(*n, nullptr, true, im, used);
        } else if (n->cls == "Concatenate") {
            const Node& concat = *n;
            used.push_back(n);
            check_unknown(concat.cfg, ref(concat), {"axis"});
            int64_t axis = -1;
            if (concat.cfg.contains("axis") && (!as_integer(concat.cfg["axis"], -1, 1, axis) || axis == 0))
                refuse_node(concat, "joins along axis " + show(concat.cfg["axis"]),
                            "hopper concatenates features, the last axis.");
            im.arch.other_features = 0;
            for (std::size_t b = 0; b < concat.inputs.size(); ++b)
                read_branch(node(concat.inputs[b], concat.name), &concat, b == 0, im, used);
        } else {
            used.push_back(n);
            im.input_layer(n->cfg, ref(*n));
        }
        for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
            const Node& l = **it;
            keras_class(l.cls)->read(im, l.cfg, ref(l), nullptr);
        }
        // Every layer is on the path to the output: no branch, no second output.
        for (const Node& x : nodes_)
            if (std::find(used.begin(), used.end(), &x) == used.end())
                refuse_node(x, "is not on the path of the model's output",
                            "hopper reads one path from the inputs to the one output.");
        if (n->cls == "InputLayer") return im.finish(nullptr);
        return im.finish_functional();
    }

private:
    struct Node {
        std::size_t index = 0;
        std::string cls, name;
        json cfg;
        std::vector<std::string> inputs;  // names of the layers it takes, in order
    };

    static KerasLayerRef ref(const Node& n) { return KerasLayerRef{n.index + 1, n.name}; }

    // One input of the embeddings stage: the numeric InputLayer (first only), or InputLayer ->
    // Embedding -> (Flatten | Reshape).
    void read_branch(const Node& top, const Node* concat, bool first, KerasImport& im,
                     std::vector<const Node*>& used) const {
        const Node* x = &top;
        if (x->cls == "InputLayer" && concat) {
            if (!first)
                refuse_node(*concat, "takes the input \"" + x->name + "\" after an embedding",
                            "hopper puts the features no embedding reads first, then the embeddings' vectors, in "
                            "Concatenate's order.",
                            "Give Concatenate the numeric input first.");
            im.arch.other_features = input_width(*x);
            used.push_back(x);
            return;
        }
        if (x->cls == "Flatten" || x->cls == "Reshape") {
            if (x->cls == "Reshape") check_reshape(*x);
            used.push_back(x);
            x = &only_input(*x);
        }
        if (x->cls != "Embedding")
            refuse_node(*x, "feeds " + (concat ? "Concatenate (\"" + concat->name + "\")" : std::string("the model")),
                        "Concatenate may take the numeric input and embeddings (through Flatten or Reshape) of "
                        "categorical inputs only.");
        const Node& column = only_input(*x);
        if (column.cls != "InputLayer")
            refuse_node(column, "feeds an Embedding (\"" + x->name + "\")",
                        "An embedding reads an InputLayer named after its categorical column.");
        im.embedding(x->cfg, ref(*x), column.name);
        used.push_back(x);
        used.push_back(&column);
    }

    [[noreturn]] static void refuse_node(const Node& n, const std::string& what, const std::string& detail,
                                         const std::string& hint = {}) {
        fail(ErrorKind::InvalidParameter,
             "unsupported node \"" + n.name + "\" (" + n.cls + ", Keras layer " + std::to_string(n.index + 1) +
                 "): it " + what,
             detail, hint);
    }

    // Keras 2: a node is a list of [name, node_index, tensor_index, kwargs]; Keras 3: {"args": [...]}
    // whose tensors (also inside lists) carry "keras_history": [name, node_index, tensor_index].
    void read_inbound(const json& node, Node& n) {
        if (node.is_array()) {
            for (const json& t : node)
                if (t.is_array() && !t.empty() && t[0].is_string()) n.inputs.push_back(t[0].get<std::string>());
                else
                    refuse_node(n, "has an inbound node hopper cannot read", "Expected the output of model.to_json().");
        } else if (node.is_object()) {
            collect_history(node.value("args", json::array()), n);
        } else {
            refuse_node(n, "has an inbound node hopper cannot read", "Expected the output of model.to_json().");
        }
    }
    void collect_history(const json& v, Node& n) {
        if (v.is_array()) {
            for (const json& e : v) collect_history(e, n);
        } else if (v.is_object()) {
            const json c = v.value("config", json::object());
            if (c.is_object() && c.contains("keras_history") && c["keras_history"].is_array() &&
                !c["keras_history"].empty() && c["keras_history"][0].is_string())
                n.inputs.push_back(c["keras_history"][0].get<std::string>());
        }
    }

    const Node& node(const std::string& name, const std::string& from) const {
        auto it = by_name_.find(name);
        if (it == by_name_.end())
            fail(ErrorKind::InvalidParameter, "Keras layer \"" + name + "\" (named by " + from + ") does not exist",
                 "Expected the output of model.to_json().");
        return nodes_[it->second];
    }

    const Node& only_input(const Node& n) const {
        if (n.inputs.size() != 1)
            refuse_node(n, "takes " + std::to_string(n.inputs.size()) + " inputs",
                        "Only Concatenate may join inputs: every other layer takes one.");
        return node(n.inputs[0], n.name);
    }

    // The features of the numeric input, as its shape declares them.
    static int input_width(const Node& n) {
        TensorShape s;
        bool any = false;
        for (const char* k : {"batch_input_shape", "batch_shape"})
            if (!any && n.cfg.contains(k)) any = keras_shape(n.cfg[k], true, ref(n), k, s);
        if (!any && n.cfg.contains("input_shape"))
            any = keras_shape(n.cfg["input_shape"], false, ref(n), "input_shape", s);
        if (!any)
            refuse_node(n, "has no input shape",
                        "Create the input with an explicit shape, e.g. keras.Input(shape=(6,)).");
        if (!s.flat) refuse_node(n, "is an image", "The numeric input of a tabular model is flat: [null, n].");
        return s.channels;
    }

    // Reshape of an embedding's (1, output_dim) to (output_dim,) is a Flatten.
    static void check_reshape(const Node& n) {
        const json shape = n.cfg.value("target_shape", json());
        int64_t v = 0;
        if (!shape.is_array() || shape.size() != 1 || !(as_integer(shape[0], 1, kMaxDim, v) || shape[0] == -1))
            refuse_node(n, "reshapes to " + show(shape), "Only a Reshape to (output_dim,) of an embedding is read.",
                        "Use Flatten.");
    }

    static std::string single_output(const json& outputs) {
        // [name, 0, 0] (Keras 3, one output) or [[name, 0, 0], ...].
        const json* o = &outputs;
        if (o->is_array() && !o->empty() && (*o)[0].is_array()) {
            if (o->size() != 1)
                fail(ErrorKind::InvalidParameter, "Keras model has " + std::to_string(o->size()) + " outputs",
                     "hopper trains models of one output.", "Build the model with a single output.");
            o = &(*o)[0];
        }
        if (!o->is_array() || o->empty() || !(*o)[0].is_string())
            fail(ErrorKind::InvalidParameter, "Keras model has no output layer",
                 "Expected the output of model.to_json().");
        return (*o)[0].get<std::string>();
    }

    std::vector<Node> nodes_;
    std::map<std::string, std::size_t> by_name_;
};

Architecture parse_keras_functional(const json& j) {
    const json cfg = j.value("config", json::object());
    if (!cfg.is_object() || !cfg.contains("layers") || !cfg["layers"].is_array())
        fail(ErrorKind::InvalidParameter, "Keras model has no list of layers",
             "Expected \"config\" to be an object with \"layers\".");
    if (!cfg.contains("output_layers"))
        fail(ErrorKind::InvalidParameter, "Keras functional model has no \"output_layers\"",
             "Expected the output of model.to_json().");
    FunctionalGraph g(cfg["layers"]);
    return g.import(cfg["output_layers"]);
}

}  // namespace

Architecture parse_keras_architecture(const json& j) {
    const json& cn = j["class_name"];
    if (cn.is_string() &&
        (cn.get_ref<const std::string&>() == "Functional" || cn.get_ref<const std::string&>() == "Model"))
        return parse_keras_functional(j);
    if (!cn.is_string() || cn.get_ref<const std::string&>() != "Sequential")
        fail(ErrorKind::InvalidParameter, "unsupported Keras model class " + show(cn),
             "Only Keras Sequential models and functional models of the tabular shape (inputs, "
             "Embedding, Concatenate, a stack of layers) can be imported.",
             "Build the model with keras.Sequential and a stack of supported layers.");
    auto cfg_it = j.find("config");
    if (cfg_it == j.end())
        fail(ErrorKind::InvalidParameter, "Keras model has no \"config\"", "Expected the output of model.to_json().");
    const json* layers = nullptr;
    const json* build_input_shape = nullptr;
    if (cfg_it->is_array()) {
        layers = &*cfg_it;  // Keras 1 and Keras 2.0-2.1
    } else if (cfg_it->is_object()) {
        auto ls = cfg_it->find("layers");
        if (ls != cfg_it->end()) layers = &*ls;
        auto b = cfg_it->find("build_input_shape");
        if (b != cfg_it->end() && !b->is_null()) build_input_shape = &*b;
    }
    if (!layers || !layers->is_array())
        fail(ErrorKind::InvalidParameter, "Keras model has no list of layers",
             "Expected \"config\" to be a list of layers or an object with \"layers\".");

    KerasImport im;
    InterruptTicker ticker(256);
    for (std::size_t i = 0; i < layers->size(); ++i) {
        ticker.tick();
        const json& lj = (*layers)[i];
        KerasLayerRef r{i + 1, {}};
        if (!lj.is_object() || !lj.contains("class_name") || !lj["class_name"].is_string())
            fail(ErrorKind::InvalidParameter, "Keras layer " + std::to_string(i + 1) + " has no class_name",
                 "Expected the output of model.to_json().");
        const std::string& cls = lj["class_name"].get_ref<const std::string&>();
        json cfg = lj.value("config", json::object());
        if (!cfg.is_object())
            fail(ErrorKind::InvalidParameter, "config of Keras layer " + std::to_string(i + 1) + " is not an object");
        if (cfg.contains("name") && cfg["name"].is_string()) r.name = cfg["name"].get<std::string>();
        else if (lj.contains("name") && lj["name"].is_string()) r.name = lj["name"].get<std::string>();
        if (r.name.size() > 64) r.name = r.name.substr(0, 61) + "...";  // keep messages short

        // Keras 3 records the shape each layer was built with.
        const json* build_shape = nullptr;
        if (auto b = lj.find("build_config"); b != lj.end() && b->is_object())
            if (auto s = b->find("input_shape"); s != b->end() && !s->is_null()) build_shape = &*s;

        const KerasClass* kc = keras_class(cls);
        if (kc) kc->read(im, cfg, r, build_shape);
        else {
            std::string msg = "unsupported Keras layer \"" + cls + "\" (layer " + std::to_string(i + 1);
            if (!r.name.empty()) msg += ", \"" + r.name + "\"";
            msg += ")";
            fail(ErrorKind::InvalidParameter, msg, {},
                 cls == "Reshape" ? keras_supported() + " Use a Flatten layer, or reshape the data itself."
                                  : keras_supported());
        }
    }
    return im.finish(build_input_shape);
}

}  // namespace hopper::cfg
