// hopper's native architecture JSON, the checks of every architecture and its canonical JSON
// (config_architecture.h), and the Architecture and TensorShape methods.
#include "config_architecture.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "hopper/recipe.h"
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

const char* to_string(LayerKind k) {
    for (const cfg::NativeLayerForm& f : cfg::native_layer_forms())
        if (f.kind == k) return f.type;
    return "unknown";
}

const char* to_string(Padding p) { return p == Padding::Same ? "same" : "valid"; }

namespace cfg {

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
static const char* const kInitializerNames = "glorot_uniform, glorot_normal, he_uniform, he_normal, zeros";

namespace {

// A [height, width] pair for messages and canonical JSON.
json pair_json(int h, int w) { return json::array({h, w}); }

// A size pair a hand-built layer gives: refused unless both are in 1..kMaxDim.
void check_positive(const char* key, int h, int w, const char* what, const std::string& where) {
    if (h < 1 || w < 1 || h > kMaxDim || w > kMaxDim)
        bad_value(key, where, pair_json(h, w), std::string(what) + " must be integers between 1 and 1000000.");
}

const json& required(const json& lj, const char* key, const std::string& where) {
    auto it = lj.find(key);
    if (it == lj.end())
        fail(ErrorKind::InvalidParameter, "missing key \"" + std::string(key) + "\"" + where + " of the architecture");
    return *it;
}

int read_count(const json& lj, const char* key, const std::string& where) {
    const json& u = required(lj, key, where);
    int64_t v = 0;
    if (!as_integer(u, 1, kMaxDim, v))
        bad_size(key, where, u, std::string(key) + " must be an integer between 1 and 1000000.");
    return static_cast<int>(v);
}

void check_count(const char* key, int n, const std::string& where) {
    if (n < 1 || n > kMaxDim) bad_value(key, where, n, std::string(key) + " must be an integer between 1 and 1000000.");
}

// Dense

void dense_read(const json& lj, const std::string& where, Layer& l) { l.units = read_count(lj, "units", where); }
void dense_write(const Layer& l, ojson& lj) { lj["units"] = l.units; }
bool dense_same(const Layer& a, const Layer& b) { return a.units == b.units; }
void dense_check(const Layer& l, const std::string& where) { check_count("units", l.units, where); }

// Conv2D

void conv_read(const json& lj, const std::string& where, Layer& l) {
    l.filters = read_count(lj, "filters", where);
    const json& k = required(lj, "kernel_size", where);
    if (!window_size(k, l.kernel_h, l.kernel_w)) bad_window_size("kernel_size", where, k);
}
void conv_write(const Layer& l, ojson& lj) {
    lj["filters"] = l.filters;
    lj["kernel_size"] = ojson::array({l.kernel_h, l.kernel_w});
}
bool conv_same(const Layer& a, const Layer& b) { return a.filters == b.filters; }
void conv_check(const Layer& l, const std::string& where) {
    check_count("filters", l.filters, where);
    check_positive("kernel_size", l.kernel_h, l.kernel_w, "The kernel's height and width", where);
    check_positive("strides", l.stride_h, l.stride_w, "Strides", where);
}

// MaxPooling2D, AveragePooling2D: Keras' default pool_size [2, 2]; strides default to the pool size.

void pool_read(const json& lj, const std::string& where, Layer& l) {
    l.kernel_h = l.kernel_w = 2;
    if (auto it = lj.find("pool_size"); it != lj.end())
        if (!window_size(*it, l.kernel_h, l.kernel_w)) bad_window_size("pool_size", where, *it);
    l.stride_h = l.kernel_h;
    l.stride_w = l.kernel_w;
}
void pool_write(const Layer& l, ojson& lj) { lj["pool_size"] = ojson::array({l.kernel_h, l.kernel_w}); }
void pool_check(const Layer& l, const std::string& where) {
    check_positive("pool_size", l.kernel_h, l.kernel_w, "The pool's height and width", where);
    check_positive("strides", l.stride_h, l.stride_w, "Strides", where);
}

// BatchNormalization

void bn_read(const json& lj, const std::string& where, Layer& l) {
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
void bn_write(const Layer& l, ojson& lj) {
    lj["momentum"] = l.momentum;
    lj["epsilon"] = l.epsilon;
    lj["center"] = l.center;
    lj["scale"] = l.scale;
}
bool bn_same(const Layer& a, const Layer& b) {
    return a.momentum == b.momentum && a.epsilon == b.epsilon && a.center == b.center && a.scale == b.scale;
}
void bn_check(const Layer& l, const std::string& where) {
    if (!(l.momentum >= 0.0 && l.momentum <= 1.0))
        bad_value("momentum", where, l.momentum, "momentum must be between 0 and 1.");
    // float32 must see a positive, finite epsilon too (1e-50 is 0 as a float).
    if (!(l.epsilon > 0.0 && float(l.epsilon) > 0.0f && std::isfinite(float(l.epsilon))))
        bad_value("epsilon", where, l.epsilon, "epsilon must be a positive number.");
}

// Embedding: its column and sizes; its binding (offset, width) as resolve_inputs wrote it.

void embedding_read(const json& lj, const std::string& where, Layer& l) {
    const json& c = required(lj, "column", where);
    if (!c.is_string() || c.get_ref<const std::string&>().empty())
        bad_value("column", where, c, "column must name a categorical column of the packed table.");
    l.column = c.get<std::string>();
    l.units = read_count(lj, "output_dim", where);
    if (lj.contains("input_dim")) l.vocabulary = read_count(lj, "input_dim", where);
    const bool bound = lj.contains("offset") || lj.contains("width");
    if (bound) {
        const json& o = required(lj, "offset", where);
        int64_t v = 0;
        if (!as_integer(o, 0, kMaxDim - 1, v))
            bad_value("offset", where, o, "offset must be an integer between 0 and 999999.");
        l.column_offset = int(v);
        l.column_width = read_count(lj, "width", where);
    }
}
void embedding_write(const Layer& l, ojson& lj) {
    lj["column"] = l.column;
    lj["output_dim"] = l.units;
    if (l.vocabulary > 0) lj["input_dim"] = l.vocabulary;
    if (l.column_offset >= 0) {
        lj["offset"] = l.column_offset;
        lj["width"] = l.column_width;
    }
}
bool embedding_same(const Layer& a, const Layer& b) {
    return a.column == b.column && a.units == b.units && a.vocabulary == b.vocabulary &&
           a.column_offset == b.column_offset && a.column_width == b.column_width;
}
void embedding_check(const Layer& l, const std::string& where) {
    if (l.column.empty())
        bad_value("column", where, l.column, "column must name a categorical column of the packed table.");
    check_count("output_dim", l.units, where);
    if (l.vocabulary != 0) check_count("input_dim", l.vocabulary, where);
    if (l.activation != Activation::Linear)
        bad_value("activation", where, to_string(l.activation), "An embedding layer has no activation.");
    if (l.column_offset >= 0 && (l.vocabulary == 0 || (l.column_width != 1 && l.column_width != l.vocabulary)))
        bad_value("width", where, l.column_width,
                  "An embedding reads one code or a one-hot block of input_dim slots: width is 1 or input_dim.");
}

}  // namespace

const std::vector<NativeLayerForm>& native_layer_forms() {
    static const std::vector<NativeLayerForm> forms = {
        {LayerKind::Dense,
         "dense",
         {"units", "activation", "use_bias", "initializer", "dropout", "trainable"},
         false,
         true,
         dense_read,
         nullptr,
         dense_write,
         dense_same,
         dense_check},
        {LayerKind::Conv2D,
         "conv2d",
         {"type", "filters", "kernel_size", "strides", "padding", "activation", "use_bias", "initializer", "dropout",
          "trainable"},
         true,
         true,
         conv_read,
         nullptr,
         conv_write,
         conv_same,
         conv_check},
        {LayerKind::MaxPooling2D,
         "max_pooling2d",
         {"type", "pool_size", "strides", "padding", "activation", "dropout", "trainable"},
         true,
         false,
         pool_read,
         nullptr,
         pool_write,
         nullptr,
         pool_check},
        {LayerKind::AveragePooling2D,
         "average_pooling2d",
         {"type", "pool_size", "strides", "padding", "activation", "dropout", "trainable"},
         true,
         false,
         pool_read,
         nullptr,
         pool_write,
         nullptr,
         pool_check},
        {LayerKind::GlobalAveragePooling2D,
         "global_average_pooling2d",
         {"type", "activation", "dropout", "trainable"},
         false,
         false,
         nullptr,
         nullptr,
         nullptr,
         nullptr,
         nullptr},
        {LayerKind::Flatten,
         "flatten",
         {"type", "activation", "dropout", "trainable"},
         false,
         false,
         nullptr,
         nullptr,
         nullptr,
         nullptr,
         nullptr},
        {LayerKind::BatchNormalization,
         "batch_normalization",
         {"type", "momentum", "epsilon", "center", "scale", "activation", "dropout", "trainable"},
         false,
         false,
         nullptr,
         bn_read,
         bn_write,
         bn_same,
         bn_check},
        {LayerKind::Embedding,
         "embedding",
         {"type", "column", "output_dim", "input_dim", "offset", "width", "activation", "dropout", "trainable"},
         false,
         false,
         embedding_read,
         nullptr,
         embedding_write,
         embedding_same,
         embedding_check},
    };
    return forms;
}

const NativeLayerForm& native_form(LayerKind kind) {
    for (const NativeLayerForm& f : native_layer_forms())
        if (f.kind == kind) return f;
    fail(ErrorKind::Internal, "unknown layer kind");
}

namespace {

// Embedding layers lead the stack and read distinct columns of the packed row (not the vectors of
// earlier embeddings), from a flat input; only the last may have dropout: its output is the whole
// concatenation of features and vectors.
template <typename Label>
void check_embeddings(const Architecture& arch, const Label& label) {
    std::size_t lead = 0;
    while (lead < arch.layers.size() && arch.layers[lead].kind == LayerKind::Embedding) ++lead;
    for (std::size_t i = lead; i < arch.layers.size(); ++i)
        if (arch.layers[i].kind == LayerKind::Embedding)
            fail(ErrorKind::InvalidParameter, "embedding layer (" + label(i) + ") after a layer of another kind",
                 "Embedding layers read columns of the packed row: they come first, before every other layer.");
    if (lead == 0) return;
    if (arch.image_input())
        fail(ErrorKind::InvalidParameter, "embedding layer (" + label(0) + ") on an image input",
             "An embedding reads a categorical column of flat rows packed from a table's columns.");
    // Features of the packed row still in the input of each embedding (before the vectors).
    int64_t packed = arch.input_dim;
    for (std::size_t i = 0; i < lead; ++i) {
        const Layer& l = arch.layers[i];
        for (std::size_t k = 0; k < i; ++k)
            if (arch.layers[k].column == l.column)
                fail(ErrorKind::InvalidParameter,
                     "two embedding layers (" + label(k) + ", " + label(i) + ") of column \"" + l.column + "\"",
                     "Each column has at most one embedding.");
        if (l.dropout > 0.0f && i + 1 < lead)
            fail(ErrorKind::InvalidParameter, "dropout on an embedding layer other than the last (" + label(i) + ")",
                 "The last embedding layer outputs the features and every embedding's vector; dropout there "
                 "applies to all of them.",
                 "Give the dropout to the last embedding layer.");
        if (arch.input_dim > 0 && l.column_offset >= 0) {
            if (int64_t(l.column_offset) + l.column_width > packed)
                fail(ErrorKind::InvalidParameter,
                     "embedding of column \"" + l.column + "\" (" + label(i) + ") reads beyond the packed features",
                     "Its slots " + std::to_string(l.column_offset) + " to " +
                         std::to_string(int64_t(l.column_offset) + l.column_width - 1) + " are not among the " +
                         std::to_string(packed) + " features of the packed row before it.");
            packed -= l.column_width;
        }
    }
}

}  // namespace

void validate_architecture(const Architecture& arch, const std::vector<std::string>* labels,
                           const std::string& input_label) {
    auto label = [&](std::size_t i) {
        return labels && i < labels->size() ? (*labels)[i] : "layer " + std::to_string(i + 1);
    };
    // Left out (0): the packed table's width, resolved when training starts; until then shapes
    // and sizes are unknown and only the layers' own values are checked.
    const bool resolved = arch.resolved();
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
    if ((arch.input_dim < 1 && !(arch.input_dim == 0 && !arch.image_input())) || arch.input_dim > kMaxDim)
        fail(ErrorKind::InvalidParameter,
             "invalid input dimension " + std::to_string(arch.input_dim) + " (" + input_label + ")",
             "The input dimension must be an integer between 1 and 1000000.");
    if (arch.layers.empty())
        fail(ErrorKind::InvalidParameter, "architecture has no layers", "At least one layer is needed.");
    if (arch.layers.size() > static_cast<std::size_t>(kMaxLayers))
        fail(ErrorKind::Limit, "architecture has too many layers",
             "It has " + std::to_string(arch.layers.size()) + " layers; at most " + std::to_string(kMaxLayers) +
                 " are supported.");
    check_embeddings(arch, label);
    const std::size_t n = arch.layers.size();
    TensorShape shape = arch.input_shape();
    // Per row: every layer's output and Conv2D patch buffers (layers.h); and parameters. 64-bit
    // saturating sums.
    uint64_t row_floats = 0, params = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const Layer& l = arch.layers[i];
        if (auto check = native_form(l.kind).check) check(l, " in " + label(i));
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
            fail(ErrorKind::InvalidParameter, "dropout is not allowed on the output layer (" + label(i) + ")",
                 "Dropout would randomly zero the model's predictions while training.",
                 "Use dropout on hidden layers only.");
        if (!resolved) continue;
        params = layers::add_sat(params, layers::param_count(l, shape));
        row_floats = layers::add_sat(row_floats, layers::columns_per_row(l, shape));
        shape = layers::checked_output_shape(l, shape, label(i));
        row_floats = layers::add_sat(row_floats, shape.size());
    }
    if (!arch.target_scaling.identity()) {
        const TargetScaling& t = arch.target_scaling;
        // A subnormal scale is 0 to training, which flushes subnormals (a sweep: 1e-45 was taken).
        if (!std::isfinite(t.offset) || !std::isfinite(t.scale) || !(t.scale >= std::numeric_limits<float>::min()))
            fail(ErrorKind::InvalidParameter, "invalid target_scaling in architecture",
                 "Its offset must be finite and its scale a finite number of at least 1.2e-38 (float32's smallest "
                 "normal number).");
        if (arch.layers.back().activation != Activation::Linear)
            fail(ErrorKind::InvalidParameter,
                 "target_scaling needs a linear output layer (" + label(n - 1) + " has activation " +
                     to_string(arch.layers.back().activation) + ")",
                 "The model learns the standardized target (y - offset) / scale, which a bounded output cannot "
                 "reach.",
                 "Leave target_scaling out, or give the output layer activation linear.");
    }
    if (!resolved) return;
    if (!shape.flat)
        fail(ErrorKind::InvalidParameter,
             "output layer (" + label(n - 1) + ") outputs a " + shape.to_string() + " tensor",
             "A model's output must be a flat vector of predictions.",
             "End the model with a Flatten or GlobalAveragePooling2D layer and a Dense layer.");
    if (arch.layers.back().activation == Activation::Softmax && shape.size() < 2)
        fail(ErrorKind::InvalidParameter, "softmax output layer (" + label(n - 1) + ") needs at least 2 units",
             "A softmax over one unit always outputs 1.",
             "For classification give the output layer one unit per class (2 for two classes); a single output "
             "unit takes sigmoid or linear.");
    if (params == 0)
        // Pooling and flattening alone: nothing to train, and a loss over the raw pixels (a fuzz
        // finding of CI's fuzz_architecture: Input, MaxPooling2D, Flatten).
        fail(ErrorKind::InvalidParameter, "model has no parameters to train",
             "The architecture " + arch.shape_string() + " has only layers without weights.",
             "End the model with a Dense layer.");
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

// --- resolving what was left to the packed table ----------------------------------------------

namespace {

[[noreturn]] void bad_embedding_column(const Layer& l, std::size_t i, const std::string& message,
                                       const std::string& detail, const Recipe* recipe) {
    std::string hint;
    if (recipe) {
        std::vector<std::string> names;
        for (int c = 0; c < recipe->num_columns(); ++c)
            if (recipe->column_kind(c) == ColumnKind::Categorical)
                names.push_back(recipe->column_names()[std::size_t(c)]);
        hint = names.empty() ? "The packed table has no categorical column."
                             : "Its categorical columns are: " + join(names) + ".";
    }
    fail(ErrorKind::InvalidParameter,
         "embedding layer (layer " + std::to_string(i + 1) + ") of column \"" + l.column + "\": " + message, detail,
         hint);
}

}  // namespace

}  // namespace cfg

Architecture resolve_inputs(Architecture arch, int packed_width, const Recipe* recipe, const TargetScaling* target) {
    using namespace cfg;
    // The packed table's standardization of its target, for an output that can reach it, unless the
    // architecture states one (it was replaced without a word, a sweep).
    if (target && !arch.layers.empty() && arch.layers.back().activation == Activation::Linear &&
        arch.target_scaling.identity())
        arch.target_scaling = *target;
    if (arch.input_dim == 0 && !arch.image_input()) arch.input_dim = packed_width;
    // An embedding is bound to its column only against the packed row it reads: with another width
    // it would stay unbound (and the architecture unresolved) until training refused the shapes.
    if (arch.input_dim != packed_width && !arch.layers.empty() && arch.layers[0].kind == LayerKind::Embedding)
        fail(ErrorKind::InvalidParameter,
             "input_dim " + std::to_string(arch.input_dim) + " is not the packed table's width " +
                 std::to_string(packed_width),
             "An architecture with embedding layers reads the packed table's rows as they are.",
             "Leave input_dim out: hopper takes it from the packed table.");
    if (arch.input_dim == packed_width) {
        // Each embedding's block, in the packed row: its offset and width.
        std::vector<std::pair<int, int>> blocks;
        for (std::size_t i = 0; i < arch.layers.size() && arch.layers[i].kind == LayerKind::Embedding; ++i) {
            Layer& l = arch.layers[i];
            if (!recipe)
                bad_embedding_column(l, i, "the packed table has no columns",
                                     "It was packed from an array of numbers; an embedding reads a categorical "
                                     "column of a table packed from its columns.",
                                     nullptr);
            const std::vector<std::string>& names = recipe->column_names();
            const auto it = std::find(names.begin(), names.end(), l.column);
            if (it == names.end())
                bad_embedding_column(l, i, "the packed table has no such column",
                                     "Its feature recipe reads " + std::to_string(names.size()) + " columns.", recipe);
            const int c = int(it - names.begin());
            if (recipe->column_kind(c) != ColumnKind::Categorical)
                bad_embedding_column(l, i, "the column is not categorical",
                                     "It is packed as a " + std::string(to_string(recipe->column_kind(c))) +
                                         " column; an embedding reads a categorical column's code or one-hot block.",
                                     recipe);
            int offset = recipe->column_offset(c), width = recipe->column_width(c), vocabulary = width;
            for (const EmbeddingInput& e : recipe->embeddings())
                if (e.column == l.column) {
                    offset = e.slot;
                    width = 1;
                    vocabulary = e.vocabulary;
                }
            if (l.vocabulary != 0 && l.vocabulary != vocabulary)
                bad_embedding_column(l, i,
                                     "input_dim " + std::to_string(l.vocabulary) + " is not the column's vocabulary",
                                     "The packed table has " + std::to_string(vocabulary) +
                                         " categories of the column (with \"<other>\", \"<null>\" and "
                                         "\"<unknown>\" where present).",
                                     nullptr);
            // Its place in the layer's input: earlier embeddings took their blocks out before it.
            int local = offset;
            for (const auto& [o, w] : blocks)
                if (o < offset) local -= w;
            blocks.emplace_back(offset, width);
            if (l.column_offset >= 0 && (l.column_offset != local || l.column_width != width))
                bad_embedding_column(l, i, "its binding does not match the packed table",
                                     "It reads " + std::to_string(l.column_width) + " slot(s) from offset " +
                                         std::to_string(l.column_offset) + "; the packed table has the column in " +
                                         std::to_string(width) + " slot(s) from offset " + std::to_string(local) + ".",
                                     nullptr);
            l.vocabulary = vocabulary;
            l.column_offset = local;
            l.column_width = width;
        }
        // A column packed as one integer code means nothing as a number (codes follow the
        // categories' frequencies): only an embedding may read it.
        if (recipe)
            for (const EmbeddingInput& e : recipe->embeddings()) {
                const bool read = std::any_of(blocks.begin(), blocks.end(),
                                              [&](const std::pair<int, int>& b) { return b.first == e.slot; });
                if (!read)
                    fail(ErrorKind::InvalidParameter,
                         "column \"" + e.column + "\" is packed as integer codes but no embedding layer reads it",
                         "Its codes (0 to " + std::to_string(e.vocabulary - 1) +
                             ") number its categories by frequency; a dense layer would read them as a quantity.",
                         "Start the layers with {\"type\": \"embedding\", \"column\": \"" + e.column +
                             "\", \"output_dim\": 4}, or pack the column one-hot (its default encoding).");
            }
        int other = packed_width;
        for (const auto& b : blocks) other -= b.second;
        if (arch.other_features >= 0 && arch.other_features != other)
            fail(ErrorKind::InvalidParameter,
                 "the Keras model's other input has " + std::to_string(arch.other_features) +
                     " features but the packed table has " + std::to_string(other) + " besides its embedded columns",
                 "The packed row has " + std::to_string(packed_width) + " features; the embeddings read " +
                     std::to_string(packed_width - other) + " of them.",
                 "Give the model's other input the shape of the features no embedding reads, or pack the table "
                 "with the columns the model was built for.");
    }
    validate_architecture(arch);
    return arch;
}

namespace cfg {

// --- native form -----------------------------------------------------------------------------

namespace {

// Layer types of the native form; a layer without "type" is Dense. Keras class names work too
// ("Conv2D", "MaxPooling2D", ...: compared without case and underscores).
const NativeLayerForm* native_form_named(std::string_view name) {
    const std::string n = squash(name);
    for (const NativeLayerForm& f : native_layer_forms())
        if (n == squash(f.type)) return &f;
    return nullptr;
}

std::string layer_type_names() {
    std::vector<std::string> names;
    for (const NativeLayerForm& f : native_layer_forms()) names.push_back(f.type);
    return join(names);
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

static TargetScaling read_target_scaling(const json& v) {
    const char* detail =
        "target_scaling is an object {\"offset\": m, \"scale\": s}: the model learns "
        "(y - m) / s and predicts z * s + m; s is a positive finite number.";
    if (!v.is_object()) bad_value("target_scaling", "", v, detail);
    for (auto it = v.begin(); it != v.end(); ++it)
        if (it.key() != "offset" && it.key() != "scale")
            fail(ErrorKind::InvalidParameter, "unknown key \"" + it.key() + "\" in target_scaling of the architecture",
                 detail);
    TargetScaling t;
    double d = 0;
    if (auto it = v.find("offset"); it != v.end()) {
        if (!as_double(*it, d) || !std::isfinite(float(d))) bad_value("target_scaling", "", v, detail);
        t.offset = float(d);
    }
    if (auto it = v.find("scale"); it != v.end()) {
        if (!as_double(*it, d) || !std::isfinite(float(d)) || !(float(d) > 0.0f))
            bad_value("target_scaling", "", v, detail);
        t.scale = float(d);
    }
    return t;
}

Architecture parse_native_architecture(const json& j) {
    static const std::vector<std::string> top_keys = {"input_dim", "input_shape", "layers", "initializer",
                                                      "target_scaling"};
    for (auto it = j.begin(); it != j.end(); ++it)
        if (std::find(top_keys.begin(), top_keys.end(), it.key()) == top_keys.end())
            fail(ErrorKind::InvalidParameter, "unknown key \"" + it.key() + "\" in architecture", {},
                 "Valid keys are: " + join(top_keys) + ". A Keras model needs \"class_name\".");
    Architecture a;
    auto in = j.find("input_dim");
    auto shape = j.find("input_shape");
    int64_t v = 0;
    if (in != j.end() && shape != j.end())
        fail(ErrorKind::InvalidParameter, "both \"input_dim\" and \"input_shape\" in architecture",
             "input_dim gives the features of flat rows, input_shape the [height, width, channels] of images.",
             "Give only one of them.");
    if (shape != j.end()) {
        const char* detail =
            "input_shape must be a list [height, width, channels] of positive integers, or [n] "
            "for flat rows of n features.";
        if (shape->is_array() && shape->size() == 1) {
            if (!as_integer((*shape)[0], 1, kMaxDim, v)) {
                if (as_integer((*shape)[0], int64_t(kMaxDim) + 1, INT64_MAX, v))
                    bad_size("input_shape", "", (*shape)[0], detail);
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
        // Left out: the packed table's width (resolve_inputs).
        if (in == j.end()) v = 0;
        else if (!as_integer(*in, 1, kMaxDim, v))
            bad_size("input_dim", "", *in, "input_dim must be an integer between 1 and 1000000.");
        a.input_dim = static_cast<int>(v);
    }

    bool have_default_init = false;
    Initializer default_init = Initializer::GlorotUniform;
    if (auto it = j.find("initializer"); it != j.end()) {
        if (!it->is_string() || !initializer_from_name(it->get_ref<const std::string&>(), default_init))
            bad_value("initializer", "", *it, "Supported initializers are: " + std::string(kInitializerNames) + ".");
        have_default_init = true;
    }

    auto ls = j.find("layers");
    if (ls == j.end())
        fail(ErrorKind::InvalidParameter, "missing key \"layers\" in architecture", {},
             "Give a list of layers, e.g. \"layers\": [{\"units\": 10, \"activation\": \"softmax\"}].");
    if (!ls->is_array()) bad_value("layers", "", *ls, "layers must be a list of layer objects.");
    if (ls->empty())
        fail(ErrorKind::InvalidParameter, "architecture has no layers", "At least one Dense layer is needed.");
    if (ls->size() > static_cast<std::size_t>(kMaxLayers))
        fail(ErrorKind::Limit, "architecture has too many layers",
             "It has " + std::to_string(ls->size()) + " layers; at most " + std::to_string(kMaxLayers) +
                 " are supported.");

    for (std::size_t i = 0; i < ls->size(); ++i) {
        const json& lj = (*ls)[i];
        const std::string where = " in layer " + std::to_string(i + 1);
        if (!lj.is_object())
            fail(ErrorKind::InvalidParameter,
                 "layer " + std::to_string(i + 1) + " of the architecture is not an object",
                 "Each layer is an object such as {\"units\": 128, \"activation\": \"relu\"}.");
        Layer l;
        const NativeLayerForm* form = &native_form(LayerKind::Dense);
        if (auto t = lj.find("type"); t != lj.end())
            if (!t->is_string() || !(form = native_form_named(t->get_ref<const std::string&>())))
                bad_value("type", where, *t, "Supported layer types are: " + layer_type_names() + ".");
        l.kind = form->kind;
        const std::vector<std::string>& keys = form->keys;
        for (auto it = lj.begin(); it != lj.end(); ++it)
            if (it.key() != "type" && std::find(keys.begin(), keys.end(), it.key()) == keys.end())
                fail(ErrorKind::InvalidParameter, "unknown key \"" + it.key() + "\"" + where + " of the architecture",
                     {},
                     l.kind == LayerKind::Dense
                         ? "Valid keys are: " + join(keys) + "."
                         : "Valid keys of a " + std::string(to_string(l.kind)) + " layer are: " + join(keys) + ".");
        if (form->read_sizes) form->read_sizes(lj, where, l);
        if (form->window) {
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
        if (form->kernel) {
            l.initializer = have_default_init ? default_init : default_initializer(l.activation);
            if (auto it = lj.find("initializer"); it != lj.end())
                if (!it->is_string() || !initializer_from_name(it->get_ref<const std::string&>(), l.initializer))
                    bad_value("initializer", where, *it,
                              "Supported initializers are: " + std::string(kInitializerNames) + ".");
        }
        if (form->read_options) form->read_options(lj, where, l);
        if (auto it = lj.find("dropout"); it != lj.end()) {
            double d = 0;
            // Checked after the cast too: 0.9999999999 rounds to 1.0f.
            if (!as_double(*it, d) || !(d >= 0.0 && d < 1.0) || !(static_cast<float>(d) < 1.0f))
                bad_value("dropout", where, *it, "dropout must be at least 0 and less than 1.");
            l.dropout = static_cast<float>(d);
        }
        if (auto it = lj.find("trainable"); it != lj.end()) {
            if (!it->is_boolean()) bad_value("trainable", where, *it, "trainable must be true or false.");
            l.trainable = it->get<bool>();
        }
        a.layers.push_back(l);
    }
    if (auto it = j.find("target_scaling"); it != j.end()) a.target_scaling = read_target_scaling(*it);
    validate_architecture(a);
    return a;
}

ojson architecture_to_ojson(const Architecture& a) {
    ojson j;
    if (a.image_input()) j["input_shape"] = ojson::array({a.input_height, a.input_width, a.input_channels});
    else if (a.input_dim > 0) j["input_dim"] = a.input_dim;
    ojson layers = ojson::array();
    for (const Layer& l : a.layers) {
        ojson lj;
        // Dense layers keep the form of hopper's first versions (no "type"): stored states and
        // their checksums contain it.
        const NativeLayerForm& form = native_form(l.kind);
        if (l.kind != LayerKind::Dense) lj["type"] = form.type;
        if (form.write) form.write(l, lj);
        if (form.window) {
            lj["strides"] = ojson::array({l.stride_h, l.stride_w});
            lj["padding"] = to_string(l.padding);
        }
        lj["activation"] = to_string(l.activation);
        if (form.kernel) {
            lj["use_bias"] = l.use_bias;
            lj["initializer"] = to_string(l.initializer);
        }
        lj["dropout"] = float_for_json(l.dropout);
        // Only when false: the canonical JSON (and so the stored states) of models without frozen
        // layers stays what it was before layers could be frozen.
        if (!l.trainable) lj["trainable"] = false;
        layers.push_back(std::move(lj));
    }
    j["layers"] = std::move(layers);
    // Only when not the identity: the canonical JSON (and so the stored states and their
    // checksums) of every model trained without it stays what it was.
    if (!a.target_scaling.identity())
        j["target_scaling"] = ojson{{"offset", float_for_json(a.target_scaling.offset)},
                                    {"scale", float_for_json(a.target_scaling.scale)}};
    return j;
}

}  // namespace cfg

using namespace cfg;

bool Architecture::resolved() const {
    if (input_dim < 1) return false;
    for (const Layer& l : layers)
        if (l.kind == LayerKind::Embedding && (l.column_offset < 0 || l.vocabulary < 1)) return false;
    return true;
}

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

std::size_t Architecture::num_trainable_params() const {
    uint64_t n = 0;
    TensorShape s = input_shape();
    if (s.channels < 0) s.channels = 0;
    for (const Layer& l : layers) {
        if (l.trainable) n = layers::add_sat(n, layers::param_count(l, s));
        s = layers::output_shape(l, s);
        if (s.channels < 0) s.channels = 0;
    }
    return std::size_t(n);
}

bool Architecture::operator==(const Architecture& o) const {
    if (!same_layers(o) || target_scaling != o.target_scaling) return false;
    for (std::size_t i = 0; i < layers.size(); ++i)
        if (layers[i].trainable != o.layers[i].trainable) return false;
    return true;
}

bool Architecture::same_layers(const Architecture& o) const {
    if (input_dim != o.input_dim || input_height != o.input_height || input_width != o.input_width ||
        input_channels != o.input_channels || layers.size() != o.layers.size())
        return false;
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const Layer& a = layers[i];
        const Layer& b = o.layers[i];
        if (a.kind != b.kind || a.activation != b.activation || a.dropout != b.dropout) return false;
        const NativeLayerForm& form = native_form(a.kind);
        if (form.kernel && (a.use_bias != b.use_bias || a.initializer != b.initializer)) return false;
        if (form.window && (a.kernel_h != b.kernel_h || a.kernel_w != b.kernel_w || a.stride_h != b.stride_h ||
                            a.stride_w != b.stride_w || a.padding != b.padding))
            return false;
        if (form.same && !form.same(a, b)) return false;
    }
    return true;
}

}  // namespace hopper
