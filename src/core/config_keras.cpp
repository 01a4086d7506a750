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
// Layer mapping: InputLayer gives input_dim; Dense becomes a DenseLayer; Activation sets the
// activation of the preceding Dense when that Dense is linear (a linear Activation is a no-op);
// Dropout sets the dropout of the preceding Dense. Our choices for the corner cases:
//   - Dropout (or a non-linear Activation) before any Dense: refused, hopper has no input
//     dropout or input activation.
//   - Two Dropouts in a row: combined into one of rate 1-(1-a)(1-b). Two independent inverted
//     dropouts keep an element with probability (1-a)(1-b) and scale it by the inverse of that,
//     exactly what one dropout of the combined rate does.
//   - Dense(linear) -> Dropout -> Activation: allowed only for relu (relu(c*x) = c*relu(x) for
//     c >= 0 and relu(0) = 0, so it commutes with dropout); other activations refused.
// Keras config keys that do not change the maths (name, trainable=true, dtype, seeds, ...) are
// ignored; keys that do and that hopper does not implement (regularizers, constraints, a
// non-zero bias initializer, noise_shape, ...) are refused naming the layer. An unknown key
// with a null/false value is ignored, with any other value refused.
#include <algorithm>
#include <cmath>

#include "config_internal.h"

namespace hopper::cfg {

namespace {

const char* const kSupported = "Supported Keras layers are: InputLayer, Dense, Activation, Dropout.";

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

[[noreturn]] void refuse(const KerasLayerRef& r, const std::string& message,
                         const std::string& detail = {}, const std::string& hint = {}) {
    fail(ErrorKind::InvalidParameter, message, detail, hint);
}

bool is_nullish(const json& v) {
    return v.is_null() || (v.is_boolean() && !v.get<bool>()) ||
           (v.is_number() && v.get<double>() == 0.0);
}

// Dimension of a Keras shape: `batch` says whether the first element is the batch dimension.
// Returns -1 if the shape is null (not given). Accepts a list or {"class_name": "TensorShape",
// "items": [...]} as found in SavedModel metadata.
int shape_dim(const json& shape, bool batch, const KerasLayerRef& r, const std::string& key) {
    if (shape.is_null()) return -1;
    const json* items = &shape;
    if (shape.is_object()) {
        auto it = shape.find("items");
        if (it == shape.end())
            bad_value(key, " in " + r.label(), shape, "An input shape is a list such as [null, 784].");
        items = &*it;
    }
    if (!items->is_array())
        bad_value(key, " in " + r.label(), shape, "An input shape is a list such as [null, 784].");
    std::vector<json> dims(items->begin(), items->end());
    if (batch && !dims.empty()) dims.erase(dims.begin());
    if (dims.size() != 1) {
        // Say how many features a flattened row would have, when that is known.
        std::string hint = "hopper trains dense networks on flat feature vectors: flatten each row "
                           "to a one-dimensional array";
        uint64_t prod = 1;
        bool known = !dims.empty();
        for (const json& d : dims) {
            int64_t v = 0;
            if (!as_integer(d, 1, kMaxDim, v)) { known = false; break; }
            prod *= static_cast<uint64_t>(v);
            if (prod > 1000000000000ull) { known = false; break; }
        }
        if (known)
            hint += " of " + std::to_string(prod) + " numbers and give the model an input shape of (" +
                    std::to_string(prod) + ",).";
        else
            hint += " and give the model an input shape of (n,).";
        refuse(r, "input shape " + show(*items) + " of " + r.label() + " is not one-dimensional",
               "hopper supports only inputs of shape [null, n].", hint);
    }
    int64_t v = 0;
    if (dims[0].is_null())
        refuse(r, "input shape " + show(*items) + " of " + r.label() + " has no feature count",
               {}, "Give the input shape explicitly, e.g. input_shape=(784,).");
    if (!as_integer(dims[0], 1, kMaxDim, v)) {
        if (as_integer(dims[0], int64_t(kMaxDim) + 1, INT64_MAX, v))
            fail(ErrorKind::Limit, "input shape " + show(*items) + " of " + r.label() + " is too large",
                 "The input dimension must be an integer between 1 and 1000000.");
        bad_value(key, " in " + r.label(), shape, "The input dimension must be an integer between 1 and 1000000.");
    }
    return static_cast<int>(v);
}

// kernel_initializer / init as a string or {"class_name": ..., "config": {...}}.
Initializer kernel_initializer(const json& v, const KerasLayerRef& r, const std::string& key) {
    const std::string where = " in " + r.label();
    const char* detail = "hopper supports the kernel initializers glorot_uniform, glorot_normal, "
                         "he_uniform, he_normal and zeros.";
    Initializer out;
    if (v.is_string()) {
        if (!initializer_from_name(v.get_ref<const std::string&>(), out))
            fail(ErrorKind::InvalidParameter,
                 "unsupported kernel initializer " + show(v) + where, detail);
        return out;
    }
    if (!v.is_object() || !v.contains("class_name") || !v["class_name"].is_string())
        bad_value(key, where, v, detail);
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
             "unsupported kernel initializer VarianceScaling(scale=" + fmt_double(scale) +
                 ", mode=" + mode + ", distribution=" + dist + ")" + where,
             detail);
    }
    if (!initializer_from_name(cls, out))
        fail(ErrorKind::InvalidParameter, "unsupported kernel initializer \"" + cls + "\"" + where,
             detail);
    // seed and dtype in the config are irrelevant: hopper seeds from the fit parameters.
    return out;
}

bool is_zeros_initializer(const json& v) {
    Initializer i;
    if (v.is_string()) return initializer_from_name(v.get_ref<const std::string&>(), i) && i == Initializer::Zeros;
    if (!v.is_object() || !v.contains("class_name") || !v["class_name"].is_string()) return false;
    const std::string& cls = v["class_name"].get_ref<const std::string&>();
    if (initializer_from_name(cls, i)) return i == Initializer::Zeros;
    if (cls == "Constant") {
        const json cfg = v.value("config", json::object());
        return cfg.is_object() && cfg.contains("value") && cfg["value"].is_number() &&
               cfg["value"].get<double>() == 0.0;
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
    static const char* const keys[] = {
        "name", "dtype", "input_dtype", "sparse", "ragged", "optional", "batch_size",
        "seed", "lora_alpha", "autocast", "dynamic", "expects_training_arg"};
    for (const char* h : keys)
        if (k == h) return true;
    return false;
}

// Refuses `trainable: false`: hopper trains every layer from scratch.
void check_trainable(const json& cfg, const KerasLayerRef& r) {
    auto it = cfg.find("trainable");
    if (it != cfg.end() && !(it->is_boolean() && it->get<bool>()))
        refuse(r, "frozen " + r.label() + " is not supported",
               "hopper trains all layers of a model; \"trainable\" is " + show(*it) + ".",
               "Remove trainable=False from the layer.");
}

// Unknown keys are refused unless their value is null/false/0 (an option switched off).
void check_unknown(const json& cfg, const KerasLayerRef& r,
                   const std::vector<std::string>& handled) {
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

Architecture parse_keras_architecture(const json& j) {
    const json& cn = j["class_name"];
    if (!cn.is_string() || cn.get_ref<const std::string&>() != "Sequential")
        fail(ErrorKind::InvalidParameter, "unsupported Keras model class " + show(cn),
             "Only Keras Sequential models can be imported.",
             "Build the model with keras.Sequential and a stack of Dense layers.");
    auto cfg_it = j.find("config");
    if (cfg_it == j.end())
        fail(ErrorKind::InvalidParameter, "Keras model has no \"config\"",
             "Expected the output of model.to_json().");
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

    Architecture arch;
    std::vector<std::string> labels;
    int input_dim = -1;
    std::string input_label;
    bool seen_input_layer = false;
    bool dropout_since_dense = false;  // a Dropout follows the current Dense

    auto set_input = [&](int dim, const KerasLayerRef& r, const std::string& what) {
        if (dim < 0) return;
        if (input_dim >= 0 && dim != input_dim)
            refuse(r, "conflicting input shapes in Keras model",
                   input_label + " gives " + std::to_string(input_dim) + " inputs but " + what +
                       " of " + r.label() + " gives " + std::to_string(dim) + ".");
        if (input_dim < 0) {
            input_dim = dim;
            input_label = what + " of " + r.label();
        }
    };

    for (std::size_t i = 0; i < layers->size(); ++i) {
        const json& lj = (*layers)[i];
        KerasLayerRef r{i + 1, {}};
        if (!lj.is_object() || !lj.contains("class_name") || !lj["class_name"].is_string())
            fail(ErrorKind::InvalidParameter,
                 "Keras layer " + std::to_string(i + 1) + " has no class_name",
                 "Expected the output of model.to_json().");
        const std::string& cls = lj["class_name"].get_ref<const std::string&>();
        json cfg = lj.value("config", json::object());
        if (!cfg.is_object())
            fail(ErrorKind::InvalidParameter,
                 "config of Keras layer " + std::to_string(i + 1) + " is not an object");
        if (cfg.contains("name") && cfg["name"].is_string())
            r.name = cfg["name"].get<std::string>();
        else if (lj.contains("name") && lj["name"].is_string())
            r.name = lj["name"].get<std::string>();
        if (r.name.size() > 64) r.name = r.name.substr(0, 61) + "...";  // keep messages short

        // Keras 3 records the shape each layer was built with.
        const json* build_shape = nullptr;
        if (auto b = lj.find("build_config"); b != lj.end() && b->is_object())
            if (auto s = b->find("input_shape"); s != b->end() && !s->is_null()) build_shape = &*s;

        if (cls == "InputLayer") {
            if (seen_input_layer || !arch.layers.empty())
                refuse(r, "misplaced InputLayer (" + r.label() + ")",
                       "An InputLayer must be the first layer of a Sequential model.");
            seen_input_layer = true;
            int dim = -1;
            for (const char* k : {"batch_input_shape", "batch_shape"})
                if (cfg.contains(k) && !cfg[k].is_null()) set_input(dim = shape_dim(cfg[k], true, r, k), r, k);
            if (cfg.contains("input_shape") && !cfg["input_shape"].is_null())
                set_input(dim = shape_dim(cfg["input_shape"], false, r, "input_shape"), r, "input_shape");
            if (dim < 0)
                refuse(r, r.label() + " has no input shape", {},
                       "Create the input with an explicit shape, e.g. keras.Input(shape=(784,)).");
            continue;
        }

        if (cls == "Dense") {
            check_trainable(cfg, r);
            static const std::vector<std::string> handled = {
                "units", "output_dim", "activation", "use_bias", "bias", "kernel_initializer",
                "init", "bias_initializer", "kernel_regularizer", "bias_regularizer",
                "activity_regularizer", "kernel_constraint", "bias_constraint", "W_regularizer",
                "b_regularizer", "W_constraint", "b_constraint", "batch_input_shape",
                "batch_shape", "input_shape", "input_dim"};
            check_unknown(cfg, r, handled);
            const std::string where = " in " + r.label();
            if (arch.layers.size() >= static_cast<std::size_t>(kMaxLayers))
                fail(ErrorKind::Limit, "architecture has too many layers",
                     "The Keras model has more than " + std::to_string(kMaxLayers) + " Dense layers; at most " +
                         std::to_string(kMaxLayers) + " are supported.");
            // Input shape: given on the first Dense when there is no InputLayer; on later
            // layers it must agree with the previous layer's width.
            int width = arch.layers.empty() ? -1 : arch.layers.back().units;
            auto check_in = [&](int dim, const std::string& what) {
                if (dim < 0) return;
                if (width < 0) set_input(dim, r, what);
                else if (dim != width)
                    refuse(r, "input shape of " + r.label() + " does not match the previous layer",
                           what + " says " + std::to_string(dim) +
                               " inputs but the previous layer has " + std::to_string(width) +
                               " units.");
            };
            for (const char* k : {"batch_input_shape", "batch_shape"})
                if (cfg.contains(k)) check_in(shape_dim(cfg[k], true, r, k), k);
            if (cfg.contains("input_shape"))
                check_in(shape_dim(cfg["input_shape"], false, r, "input_shape"), "input_shape");
            if (cfg.contains("input_dim") && !cfg["input_dim"].is_null()) {  // Keras 1
                int64_t v = 0;
                if (!as_integer(cfg["input_dim"], 1, kMaxDim, v))
                    bad_size("input_dim", where, cfg["input_dim"],
                              "input_dim must be an integer between 1 and 1000000.");
                check_in(static_cast<int>(v), "input_dim");
            }
            if (build_shape) check_in(shape_dim(*build_shape, true, r, "build_config.input_shape"),
                                      "build_config.input_shape");

            for (const char* k : {"kernel_regularizer", "bias_regularizer", "activity_regularizer",
                                  "W_regularizer", "b_regularizer"})
                if (cfg.contains(k) && !cfg[k].is_null())
                    refuse(r, "unsupported " + std::string(k) + where,
                           "hopper does not implement Keras regularizers.",
                           "Remove the regularizer; for L2 on weights use weight_decay in the "
                           "compile parameters.");
            for (const char* k : {"kernel_constraint", "bias_constraint", "W_constraint", "b_constraint"})
                if (cfg.contains(k) && !cfg[k].is_null())
                    refuse(r, "unsupported " + std::string(k) + where,
                           "hopper does not implement Keras weight constraints.",
                           "Remove the constraint from the layer.");

            DenseLayer l;
            const char* ukey = cfg.contains("units") ? "units" : "output_dim";
            if (!cfg.contains(ukey))
                fail(ErrorKind::InvalidParameter, "missing key \"units\"" + where);
            int64_t v = 0;
            if (!as_integer(cfg[ukey], 1, kMaxDim, v))
                bad_size(ukey, where, cfg[ukey], "units must be an integer between 1 and 1000000.");
            l.units = static_cast<int>(v);
            if (cfg.contains("activation")) l.activation = keras_activation(cfg["activation"], r);
            const char* bkey = cfg.contains("use_bias") ? "use_bias" : "bias";
            if (cfg.contains(bkey)) {
                if (!cfg[bkey].is_boolean())
                    bad_value(bkey, where, cfg[bkey], "use_bias must be true or false.");
                l.use_bias = cfg[bkey].get<bool>();
            }
            // Keras's default kernel initializer is glorot_uniform whatever the activation.
            l.initializer = Initializer::GlorotUniform;
            const char* ikey = cfg.contains("kernel_initializer") ? "kernel_initializer" : "init";
            if (cfg.contains(ikey) && !cfg[ikey].is_null())
                l.initializer = kernel_initializer(cfg[ikey], r, ikey);
            if (l.use_bias && cfg.contains("bias_initializer") && !cfg["bias_initializer"].is_null() &&
                !is_zeros_initializer(cfg["bias_initializer"]))
                refuse(r, "unsupported bias_initializer " + show(cfg["bias_initializer"]) + where,
                       "hopper initialises biases to zero.",
                       "Use the default bias initializer (zeros).");
            arch.layers.push_back(l);
            labels.push_back(r.label());
            dropout_since_dense = false;
            continue;
        }

        if (cls == "Activation") {
            check_trainable(cfg, r);
            check_unknown(cfg, r, {"activation"});
            Activation a = keras_activation(cfg.value("activation", json()), r);
            if (a == Activation::Linear) continue;  // identity
            if (arch.layers.empty())
                refuse(r, r.label() + " applies " + std::string(to_string(a)) +
                              " before any Dense layer",
                       "hopper applies activations to the outputs of Dense layers only.",
                       "Remove the Activation layer or move it after a Dense layer.");
            DenseLayer& d = arch.layers.back();
            if (d.activation != Activation::Linear)
                refuse(r, r.label() + " applies " + std::string(to_string(a)) + " after " +
                              labels.back() + " which already uses " + to_string(d.activation),
                       "hopper applies one activation per Dense layer.",
                       "Give the Dense layer activation='linear' or remove one of the activations.");
            if (dropout_since_dense && a != Activation::Relu)
                refuse(r, r.label() + " applies " + std::string(to_string(a)) +
                              " after a Dropout layer",
                       "hopper applies dropout after the activation; only relu commutes with dropout.",
                       "Put the Activation layer before the Dropout layer.");
            d.activation = a;
            continue;
        }

        if (cls == "Dropout") {
            check_trainable(cfg, r);
            check_unknown(cfg, r, {"rate", "p", "noise_shape"});
            if (cfg.contains("noise_shape") && !cfg["noise_shape"].is_null())
                refuse(r, "unsupported noise_shape in " + r.label(),
                       "hopper drops each value independently.", "Remove noise_shape.");
            const char* key = cfg.contains("rate") ? "rate" : "p";  // p: Keras 1
            if (!cfg.contains(key))
                fail(ErrorKind::InvalidParameter, "missing key \"rate\" in " + r.label());
            double rate = 0;
            if (!as_double(cfg[key], rate) || !(rate >= 0.0 && rate < 1.0))
                bad_value(key, " in " + r.label(), cfg[key],
                          "The dropout rate must be at least 0 and less than 1.");
            if (arch.layers.empty())
                refuse(r, r.label() + " drops inputs before any Dense layer",
                       "hopper applies dropout to the outputs of Dense layers only.",
                       "Remove the Dropout layer or move it after the first Dense layer.");
            DenseLayer& d = arch.layers.back();
            double keep = (1.0 - static_cast<double>(d.dropout)) * (1.0 - rate);
            float combined = static_cast<float>(1.0 - keep);
            if (!(combined < 1.0f))
                bad_value(key, " in " + r.label(), cfg[key],
                          "The combined dropout rate of consecutive Dropout layers must be less than 1.");
            d.dropout = combined;
            dropout_since_dense = true;
            continue;
        }

        std::string msg = "unsupported Keras layer \"" + cls + "\" (layer " + std::to_string(i + 1);
        if (!r.name.empty()) msg += ", \"" + r.name + "\"";
        msg += ")";
        fail(ErrorKind::InvalidParameter, msg, {},
             cls == "Flatten" || cls == "Reshape"
                 ? std::string(kSupported) + " Flatten the data to one-dimensional rows instead."
                 : std::string(kSupported));
    }

    if (arch.layers.empty())
        fail(ErrorKind::InvalidParameter, "Keras model has no Dense layer",
             "hopper needs at least one Dense layer.");
    if (build_input_shape) {
        KerasLayerRef r{0, {}};
        int dim = shape_dim(*build_input_shape, true, r, "build_input_shape");
        if (input_dim >= 0 && dim >= 0 && dim != input_dim)
            fail(ErrorKind::InvalidParameter, "conflicting input shapes in Keras model",
                 input_label + " gives " + std::to_string(input_dim) +
                     " inputs but build_input_shape gives " + std::to_string(dim) + ".");
        if (input_dim < 0 && dim >= 0) {
            input_dim = dim;
            input_label = "build_input_shape";
        }
    }
    if (input_dim < 0)
        fail(ErrorKind::InvalidParameter, "Keras model does not specify its input shape", {},
             "Build the model with an input shape (keras.Input(shape=(n,)) or input_shape=(n,) on "
             "the first layer) before calling to_json().");
    arch.input_dim = input_dim;
    validate_architecture(arch, &labels, input_label);
    return arch;
}

}  // namespace hopper::cfg
