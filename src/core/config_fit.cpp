// Fit parameters: JSON objects or MADlib's text (config_text.h), e.g. batch_size=256, epochs=1.
#include <algorithm>
#include <charconv>
#include <cmath>

#include "config_params.h"
#include "config_text.h"
#include "gemm.h"

namespace hopper {

namespace cfg {

namespace {
constexpr int64_t kMaxClassWeights = 1000000;

void check_class_weight(double w, const json& shown) {
    // Kept as float32: a double beyond its range became an infinite weight.
    if (!std::isfinite(w) || w < 0 || !std::isfinite(float(w)))
        bad_value("class_weight", "", shown, "Each class weight must be a finite number >= 0.",
                  "Write e.g. class_weight={0: 1, 1: 10}.");
}

// Keras' form: class indices 0..K-1 (in class_values order) to weights, every index once.
std::vector<float> class_weight_from_object(const json& j) {
    const std::string hint =
        "Write e.g. class_weight={0: 1, 1: 10}: a weight for each class index 0, 1, ... in the "
        "packed table's class_values order.";
    if (!j.is_object() || j.empty())
        bad_value("class_weight", "", j, "class_weight must map class indices to weights.", hint);
    if (int64_t(j.size()) > kMaxClassWeights)
        bad_value("class_weight", "", int64_t(j.size()), "class_weight has more entries than classes can be.", hint);
    std::vector<float> out(j.size(), -1.0f);
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string& k = it.key();
        int64_t index = -1;
        const auto r = std::from_chars(k.data(), k.data() + k.size(), index);
        if (r.ec != std::errc() || r.ptr != k.data() + k.size() || index < 0 || index >= int64_t(j.size()))
            bad_value("class_weight", "", k,
                      "The keys of class_weight must be the class indices 0 to " + std::to_string(j.size() - 1) +
                          ", each once.",
                      hint);
        if (!it->is_number()) bad_value("class_weight", "", *it, "Each class weight must be a number.", hint);
        const double w = it->get<double>();
        check_class_weight(w, *it);
        // "0" and "00" are one index (a hostile review: index 1 was left at -1).
        if (out[std::size_t(index)] >= 0.0f)
            bad_value("class_weight", "", k, "Class index " + std::to_string(index) + " is given twice.", hint);
        out[std::size_t(index)] = float(w);
    }
    // All zero trains nothing (every step's gradient is 0), without a word.
    if (std::all_of(out.begin(), out.end(), [](float w) { return w == 0.0f; }))
        bad_value("class_weight", "", j, "At least one class weight must be above 0.", hint);
    return out;
}
}  // namespace

FitParams fit_from_object(const json& obj) {
    static const std::vector<std::string> valid = {"batch_size",    "class_weight",    "epochs",
                                                   "initial_epoch", "precision",       "seed",
                                                   "shuffle",       "steps_per_epoch", "verbose"};
    static const std::vector<std::string> unsupported = {"validation_split",
                                                         "validation_data",
                                                         "callbacks",
                                                         "sample_weight",
                                                         "validation_steps",
                                                         "validation_batch_size",
                                                         "validation_freq",
                                                         "max_queue_size",
                                                         "workers",
                                                         "use_multiprocessing",
                                                         "x",
                                                         "y"};
    check_keys(obj, valid, unsupported, "fit parameters");
    FitParams f;
    int64_t v = 0;
    if (auto it = obj.find("batch_size"); it != obj.end()) {
        if (!as_integer(*it, 1, kMaxDim, v))
            bad_size("batch_size", "", *it, "batch_size must be an integer between 1 and 1000000.");
        f.batch_size = static_cast<int>(v);
    }
    if (auto it = obj.find("epochs"); it != obj.end()) {
        if (!as_integer(*it, 1, 1000, v)) bad_value("epochs", "", *it, "epochs must be an integer between 1 and 1000.");
        f.epochs = static_cast<int>(v);
    }
    if (auto it = obj.find("seed"); it != obj.end()) {
        if (!as_integer(*it, 0, INT64_MAX, v))
            bad_value("seed", "", *it, "seed must be an integer between 0 and 9223372036854775807.");
        f.seed = static_cast<uint64_t>(v);
    }
    if (auto it = obj.find("shuffle"); it != obj.end()) {
        if (!it->is_boolean()) bad_value("shuffle", "", *it, "shuffle must be true or false.");
        f.shuffle = it->get<bool>();
    }
    if (auto it = obj.find("precision"); it != obj.end()) {
        const std::string hint = "precision must be 'float32' (the default) or 'bfloat16'.";
        if (!it->is_string()) bad_value("precision", "", *it, hint);
        const std::string p = it->get<std::string>();
        if (p == "float32") f.precision = FitParams::Precision::Float32;
        else if (p == "bfloat16") f.precision = FitParams::Precision::BFloat16;
        else bad_value("precision", "", *it, hint);
    }
    if (auto it = obj.find("steps_per_epoch"); it != obj.end()) {
        if (!as_integer(*it, 1, 10000, v))
            bad_value("steps_per_epoch", "", *it,
                      "steps_per_epoch must be an integer between 1 and 10000: the optimizer steps an epoch takes "
                      "on each whole packed buffer.");
        f.steps_per_epoch = static_cast<int>(v);
    }
    // initial_epoch: Keras' fit trains the epochs from initial_epoch to epochs, epochs - initial_epoch
    // of them (MADlib passes it on to every call of fit): that many epochs here.
    if (auto it = obj.find("initial_epoch"); it != obj.end()) {
        if (!as_integer(*it, 0, 999, v) || v >= f.epochs)
            bad_value("initial_epoch", "", *it,
                      "initial_epoch must be an integer from 0 to epochs - 1 (" + std::to_string(f.epochs - 1) +
                          "): Keras trains epochs - initial_epoch epochs.");
        f.epochs -= static_cast<int>(v);
    }
    if (auto it = obj.find("class_weight"); it != obj.end() && !it->is_null())
        f.class_weight = class_weight_from_object(*it);
    // verbose: accepted and ignored, because MADlib users pass Keras's verbose=0 out of habit
    // and hopper reports progress through PostgreSQL instead. Only its type is checked.
    if (auto it = obj.find("verbose"); it != obj.end())
        if (!it->is_number() && !it->is_boolean())
            bad_value("verbose", "", *it, "verbose must be a number or a boolean (it is ignored).");
    return f;
}

void validate_fit(const FitParams& f) {
    if (f.batch_size < 1 || f.batch_size > kMaxDim)
        bad_value("batch_size", "", f.batch_size, "batch_size must be an integer between 1 and 1000000.");
    if (f.epochs < 1 || f.epochs > 1000)
        bad_value("epochs", "", f.epochs, "epochs must be an integer between 1 and 1000.");
    if (f.seed > static_cast<uint64_t>(INT64_MAX))
        bad_value("seed", "", f.seed, "seed must be an integer between 0 and 9223372036854775807.");
    if (f.steps_per_epoch < 0 || f.steps_per_epoch > 10000)
        bad_value("steps_per_epoch", "", f.steps_per_epoch, "steps_per_epoch must be an integer between 1 and 10000.");
    for (float w : f.class_weight) check_class_weight(w, w);
}

ojson fit_to_ojson(const FitParams& f) {
    ojson j;
    j["batch_size"] = f.batch_size;
    j["epochs"] = f.epochs;
    j["seed"] = f.seed;
    // Written only when off, so that configurations that do not mention it keep the canonical JSON
    // they had before shuffle existed.
    if (!f.shuffle) j["shuffle"] = false;
    if (f.precision == FitParams::Precision::BFloat16) j["precision"] = "bfloat16";  // likewise
    if (f.steps_per_epoch > 0) j["steps_per_epoch"] = f.steps_per_epoch;             // likewise
    if (!f.class_weight.empty()) {                                                   // likewise
        ojson w;
        for (std::size_t k = 0; k < f.class_weight.size(); ++k) w[std::to_string(k)] = f.class_weight[k];
        j["class_weight"] = w;
    }
    return j;
}

}  // namespace cfg

FitParams parse_fit_params(std::string_view text) {
    return cfg::parse_params_text(text, "fit parameters", cfg::fit_from_object);
}

std::string FitParams::to_json() const { return cfg::fit_to_ojson(*this).dump(); }

int FitParams::step_rows(int buffer_rows) const {
    const int rows = std::max(1, buffer_rows);
    return steps_per_epoch > 0 ? rows : std::max(1, std::min(batch_size, rows));
}

void require_supported_precision(const FitParams& fit) {
    if (fit.precision != FitParams::Precision::BFloat16 || detail::bfloat16_products_supported()) return;
    fail(ErrorKind::FeatureNotSupported, "precision 'bfloat16' is not supported on this machine",
         detail::bfloat16_products_missing(), "Train with precision='float32' (the default).");
}

}  // namespace hopper
