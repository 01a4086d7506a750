// The entry points that combine the parts: parse_architecture (hopper's JSON or a Keras model),
// resolve_config (the parts checked against each other) and the canonical ModelConfig JSON. The
// parts: config_json (JSON text and shared helpers), config_architecture (native form and
// checks), config_keras (Keras import), config_text (MADlib's text), config_compile, config_fit.
#include <algorithm>
#include <cctype>

#include "config_architecture.h"
#include "config_keras.h"
#include "config_params.h"
#include "vocabulary.h"

namespace hopper {

using namespace cfg;

namespace {

void require_object(const json& j, const std::string& what) {
    if (!j.is_object())
        fail(ErrorKind::InvalidParameter, what + " must be a JSON object", "Got " + std::string(j.type_name()) + ".");
}

}  // namespace

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
        for (const vocab::LossSpec& l : vocab::losses())
            if (std::find(l.inferred_for.begin(), l.inferred_for.end(), out.activation) != l.inferred_for.end())
                compile.loss = l.kind;
    }
    const vocab::OutputLayer output{out.activation, out_units, out_label};
    const vocab::LossSpec* loss = vocab::loss(compile.loss);
    if (!loss) fail(ErrorKind::Internal, "unknown loss");
    if (loss->check_output) loss->check_output(output);
    for (Metric m : compile.metrics) {
        const vocab::MetricSpec* metric = vocab::metric(m);
        if (!metric) fail(ErrorKind::Internal, "unknown metric");
        if (metric->check) metric->check(compile, output);
    }
    if (!fit.class_weight.empty()) {
        // Weighting a row's categorical cross-entropy by its class is weighting its one-hot target
        // (the loss and its gradient are linear in the target); other losses are not.
        if (compile.loss != Loss::SoftmaxCrossEntropy)
            fail(ErrorKind::InvalidParameter, "class_weight needs categorical cross-entropy",
                 std::string("The loss is ") + to_string(compile.loss) + ".",
                 "Give the model a softmax output with one unit per class (the loss follows it), or leave out "
                 "class_weight.");
        if (int(fit.class_weight.size()) != out_units)
            fail(ErrorKind::InvalidParameter,
                 "class_weight has " + std::to_string(fit.class_weight.size()) + " weights but " + out_label + " has " +
                     std::to_string(out_units) + " units",
                 "", "Give a weight for each class index 0 to " + std::to_string(out_units - 1) + ".");
    }
    return ModelConfig{std::move(arch), std::move(compile), std::move(fit)};
}

std::string configuration_difference(const ModelConfig& trained, const ModelConfig& requested) {
    Architecture arch = requested.arch;
    arch.input_dim = trained.arch.input_dim;
    arch.input_height = trained.arch.input_height;
    arch.input_width = trained.arch.input_width;
    arch.input_channels = trained.arch.input_channels;
    arch.target_scaling = trained.arch.target_scaling;  // the packed table's, as the input width
    std::vector<std::string> differ;
    if (!(arch == trained.arch)) differ.push_back("architecture");
    if (requested.compile.to_json() != trained.compile.to_json()) differ.push_back("compile parameters");
    if (requested.fit.to_json() != trained.fit.to_json()) differ.push_back("fit parameters");
    std::string out;
    for (std::size_t i = 0; i < differ.size(); ++i)
        out += (i == 0 ? "" : i + 1 == differ.size() ? " and " : ", ") + differ[i];
    return out;
}

ModelConfig parse_model_config(std::string_view text) {
    json j = parse_json_text(text, "model configuration");
    require_object(j, "model configuration");
    static const std::vector<std::string> keys = {"architecture", "compile", "fit"};
    for (auto it = j.begin(); it != j.end(); ++it)
        if (std::find(keys.begin(), keys.end(), it.key()) == keys.end())
            fail(ErrorKind::InvalidParameter, "unknown key \"" + it.key() + "\" in model configuration", {},
                 "Valid keys are: " + join(keys) + ".");
    for (const std::string& k : keys) {
        if (!j.contains(k)) fail(ErrorKind::InvalidParameter, "missing key \"" + k + "\" in model configuration");
        require_object(j[k], "\"" + k + "\" of the model configuration");
    }
    try {
        // The canonical form is the native architecture; a Keras model here is not canonical.
        Architecture arch = parse_native_architecture(j["architecture"]);
        CompileParams c = compile_from_object(j["compile"]);
        FitParams f = fit_from_object(j["fit"]);
        return resolve_config(std::move(arch), std::move(c), std::move(f));
    } catch (const json::exception& e) { fail(ErrorKind::InvalidParameter, "invalid model configuration", e.what()); }
}

}  // namespace hopper
