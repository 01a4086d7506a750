// ONNX import (onnx.h): a sequential ONNX graph of hopper's layer vocabulary as an architecture and
// its parameters. Parsing is libprotobuf's (through Debian's libonnx classes), which reads untrusted
// bytes without reading out of bounds; everything after parsing checks what it uses: every tensor's
// element count against its dimensions and the bytes it holds, every node's inputs and attributes
// against what the layer needs. Nothing is allocated beyond what the file holds.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config_json.h"
#include "hopper/error.h"
#include "hopper/network.h"
#include "hopper/onnx.h"
#include "onnx_proto.h"

namespace hopper {
namespace {

[[noreturn]] void corrupt(const std::string& what, const std::string& detail = {}) {
    fail(ErrorKind::Data, "invalid ONNX model: " + what, detail);
}

std::string node_label(const onnx::NodeProto& n, int index) {
    return "node \"" + (n.name().empty() ? "#" + std::to_string(index + 1) : n.name()) + "\"";
}

[[noreturn]] void unsupported(const onnx::NodeProto& n, int index, const std::string& why,
                              const std::string& hint = {}) {
    fail(ErrorKind::FeatureNotSupported,
         "ONNX operator \"" + n.op_type() + "\" (" + node_label(n, index) + ") is not supported: " + why, "", hint);
}

constexpr const char* kVocabulary =
    "hopper imports Gemm, MatMul (with Add), Conv, MaxPool, AveragePool, GlobalAveragePool, Flatten, Reshape, "
    "Squeeze, Transpose (to and from channels-last), Pad (of nothing), BatchNormalization, Relu, Tanh, Sigmoid, "
    "Softmax, Dropout and Identity in a sequential graph.";

// A tensor's float32 values (or int64 values) with its dimensions, checked.
struct Tensor {
    std::vector<int64_t> dims;
    std::vector<float> f;
    std::vector<int64_t> i;
    std::size_t count() const { return f.empty() ? i.size() : f.size(); }
};

// An element type as ONNX names it (DOUBLE, FLOAT16, ...), not its enum number.
std::string element_type_name(int type) {
    return onnx::TensorProto_DataType_IsValid(type)
               ? onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(type))
               : "number " + std::to_string(type);
}

const char* const kFloat32Hint =
    "Export a float32 model: in PyTorch, model.float() (and float32 inputs) before torch.onnx.export.";

Tensor read_tensor(const onnx::TensorProto& t, const std::string& what) {
    Tensor out;
    uint64_t count = 1;
    for (int64_t d : t.dims()) {
        if (d < 0) corrupt(what + " has a negative dimension");
        out.dims.push_back(d);
        count *= uint64_t(d);
        if (count > uint64_t(1) << 31) fail(ErrorKind::Limit, "ONNX " + what + " is too large");
    }
    if (t.has_data_location() && t.data_location() == onnx::TensorProto::EXTERNAL)
        fail(ErrorKind::FeatureNotSupported, "ONNX " + what + " keeps its data in an external file",
             "hopper imports self-contained ONNX files.", "Save the model without external data.");
    const std::string& raw = t.raw_data();
    switch (t.data_type()) {
        case onnx::TensorProto::FLOAT:
            if (!raw.empty()) {
                if (raw.size() != count * 4)
                    corrupt(what + " holds " + std::to_string(raw.size()) + " bytes for " + std::to_string(count) +
                            " float32 values");
                out.f.resize(count);
                std::copy(raw.begin(), raw.end(), reinterpret_cast<char*>(out.f.data()));
            } else {
                if (uint64_t(t.float_data_size()) != count)
                    corrupt(what + " holds " + std::to_string(t.float_data_size()) + " values for dimensions of " +
                            std::to_string(count));
                out.f.assign(t.float_data().begin(), t.float_data().end());
            }
            for (float v : out.f)
                if (!std::isfinite(v))
                    fail(ErrorKind::InvalidParameter, "ONNX " + what + " holds a NaN or infinite value");
            break;
        case onnx::TensorProto::INT64:
            if (!raw.empty()) {
                if (raw.size() != count * 8)
                    corrupt(what + " holds " + std::to_string(raw.size()) + " bytes for " + std::to_string(count) +
                            " int64 values");
                out.i.resize(count);
                std::copy(raw.begin(), raw.end(), reinterpret_cast<char*>(out.i.data()));
            } else {
                if (uint64_t(t.int64_data_size()) != count)
                    corrupt(what + " holds " + std::to_string(t.int64_data_size()) + " values for dimensions of " +
                            std::to_string(count));
                out.i.assign(t.int64_data().begin(), t.int64_data().end());
            }
            break;
        default:
            fail(ErrorKind::FeatureNotSupported,
                 "ONNX " + what + " has element type " + element_type_name(t.data_type()) +
                     "; hopper imports float32 weights (and int64 shapes)",
                 "", t.data_type() == onnx::TensorProto::DOUBLE ? kFloat32Hint : "");
    }
    return out;
}

const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, const std::string& name) {
    for (const onnx::AttributeProto& a : n.attribute())
        if (a.name() == name) return &a;
    return nullptr;
}
int64_t attr_int(const onnx::NodeProto& n, const std::string& name, int64_t dflt) {
    const onnx::AttributeProto* a = find_attr(n, name);
    return a ? a->i() : dflt;
}
float attr_float(const onnx::NodeProto& n, const std::string& name, float dflt) {
    const onnx::AttributeProto* a = find_attr(n, name);
    return a ? a->f() : dflt;
}
std::vector<int64_t> attr_ints(const onnx::NodeProto& n, const std::string& name) {
    const onnx::AttributeProto* a = find_attr(n, name);
    return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : std::vector<int64_t>{};
}
// A float attribute as the double its author wrote: the shortest decimal that rounds to it (ONNX
// keeps momentum and epsilon as float32; hopper, like Keras, as the Python float given).
double as_written(float f) {
    char buf[32];
    for (int digits = 6; digits <= 9; ++digits) {
        std::snprintf(buf, sizeof buf, "%.*g", digits, double(f));
        const double d = std::strtod(buf, nullptr);
        if (float(d) == f) return d;
    }
    return double(f);
}
std::string attr_string(const onnx::NodeProto& n, const std::string& name) {
    const onnx::AttributeProto* a = find_attr(n, name);
    return a ? a->s() : std::string();
}

// Where the chain stands: the tensor the next node must read and its layout.
struct Current {
    std::string name;
    enum class Form { Flat, Nchw, Nhwc } form = Form::Flat;
    int h = 1, w = 1, c = 0;  // image; flat: c features
    // Flat after Flatten of an NCHW image (H*W > 1): hopper's feature j is the original's feature
    // from_original[j] (the next Dense layer's input weights are permuted so).
    std::vector<int> from_original;
    bool squeezable = false;   // a [N, C, 1, 1] GlobalAveragePool output, already flat for hopper
    bool fresh_layer = false;  // produced by the last layer without anything after it (activations merge)
};

class Importer {
public:
    explicit Importer(const onnx::ModelProto& m) : m_(m), g_(m.graph()) {}

    OnnxImported run() {
        check_opsets();
        for (const onnx::TensorProto& t : g_.initializer()) {
            if (t.name().empty()) corrupt("an initializer has no name");
            consts_[t.name()] = &t;
        }
        read_input();
        for (int i = 0; i < g_.node_size(); ++i) convert(g_.node(i), i);
        if (g_.output_size() != 1)
            fail(
                ErrorKind::FeatureNotSupported,
                "the ONNX graph has " + std::to_string(g_.output_size()) + " outputs; hopper imports graphs of one",
                "Its outputs are " +
                    [&] {
                        std::string names;
                        for (const auto& o : g_.output()) names += (names.empty() ? "\"" : ", \"") + o.name() + "\"";
                        return names;
                    }() +
                    ".",
                "Export the model with one output (the class scores or the prediction).");
        if (g_.output(0).name() != cur_.name)
            fail(ErrorKind::FeatureNotSupported,
                 "the ONNX graph's output \"" + g_.output(0).name() + "\" is not the end of its chain of layers",
                 kVocabulary);
        if (cur_.form != Current::Form::Flat && !cur_.squeezable)
            fail(ErrorKind::FeatureNotSupported, "the ONNX graph's output is an image, not a flat vector");
        if (arch_.layers.empty()) fail(ErrorKind::FeatureNotSupported, "the ONNX graph has no layers");
        keep_training_settings();
        // The checks (and limits) of hopper's own architectures, by the parser that makes them.
        OnnxImported out;
        out.arch = parse_architecture(arch_.to_json());
        if (out.arch.num_params() != params_.size())
            fail(ErrorKind::Internal,
                 "ONNX import: " + std::to_string(params_.size()) + " parameters for " + out.arch.shape_string());
        out.params = std::move(params_);
        out.producer = (m_.producer_name() + " " + m_.producer_version());
        while (!out.producer.empty() && out.producer.back() == ' ') out.producer.pop_back();
        return out;
    }

private:
    const onnx::ModelProto& m_;
    const onnx::GraphProto& g_;
    std::map<std::string, const onnx::TensorProto*> consts_;
    std::map<std::string, onnx::TensorProto> constant_nodes_;
    Architecture arch_;
    std::vector<float> params_;
    Current cur_;
    bool input_shape_set_ = false;
    // The target's scaling read: its Mul (an Add of the offset may follow), or both.
    enum class Scaled { No, Mul, Add };
    Scaled scaled_ = Scaled::No;

    // What a graph does not compute but training uses (dropout, the kernel initializer, frozen
    // layers), from the architecture hopper's exports keep in metadata_props: taken only where the
    // graph's layers are of the same kinds, so the graph stays what decides the function.
    void keep_training_settings() {
        for (const onnx::StringStringEntryProto& e : m_.metadata_props()) {
            if (e.key() != "hopper_architecture") continue;
            Architecture meta;
            try {
                meta = parse_architecture(e.value());
            } catch (const Error&) {
                return;  // someone else's metadata: the graph alone
            }
            if (meta.layers.size() != arch_.layers.size()) return;
            for (std::size_t i = 0; i < meta.layers.size(); ++i)
                if (meta.layers[i].kind != arch_.layers[i].kind) return;
            for (std::size_t i = 0; i < meta.layers.size(); ++i) {
                arch_.layers[i].dropout = meta.layers[i].dropout;
                arch_.layers[i].initializer = meta.layers[i].initializer;
                arch_.layers[i].trainable = meta.layers[i].trainable;
            }
        }
    }

    void check_opsets() {
        bool found = false;
        for (const onnx::OperatorSetIdProto& o : m_.opset_import()) {
            if (!o.domain().empty() && o.domain() != "ai.onnx") continue;
            found = true;
            if (o.version() < 7 || o.version() > 21)
                fail(ErrorKind::FeatureNotSupported, "ONNX opset " + std::to_string(o.version()) + " is not supported",
                     "hopper imports opsets 7 to 21 (it exports opset " + std::to_string(kOnnxOpset) + ").");
        }
        if (!found) corrupt("the model imports no version of the default operator set");
        if (!m_.has_graph()) corrupt("the model has no graph");
    }

    void read_input() {
        const onnx::ValueInfoProto* in = nullptr;
        for (const onnx::ValueInfoProto& v : g_.input()) {
            if (consts_.count(v.name())) continue;  // older exporters list initializers as inputs
            if (in)
                fail(ErrorKind::FeatureNotSupported, "the ONNX graph has more than one input (\"" + in->name() +
                                                         "\", \"" + v.name() + "\"); hopper models take one");
            in = &v;
        }
        if (!in) corrupt("the graph has no input");
        const onnx::TypeProto& type = in->type();
        if (!type.has_tensor_type() || type.tensor_type().elem_type() != onnx::TensorProto::FLOAT)
            fail(ErrorKind::FeatureNotSupported,
                 "the ONNX graph's input \"" + in->name() + "\" is not a float32 tensor",
                 type.has_tensor_type() ? "It is a tensor of " + element_type_name(type.tensor_type().elem_type()) + "."
                                        : "It is not a tensor.",
                 kFloat32Hint);
        const onnx::TensorShapeProto& shape = type.tensor_type().shape();
        std::vector<int64_t> dims;
        for (int i = 1; i < shape.dim_size(); ++i) {
            if (!shape.dim(i).has_dim_value() || shape.dim(i).dim_value() < 1 || shape.dim(i).dim_value() > (1 << 30))
                fail(ErrorKind::FeatureNotSupported,
                     "the ONNX graph's input \"" + in->name() + "\" has an unknown or invalid dimension " +
                         std::to_string(i + 1),
                     "hopper needs every dimension but the first (the batch) fixed.");
            dims.push_back(shape.dim(i).dim_value());
        }
        cur_.name = in->name();
        if (dims.size() == 1) {
            check_row_size(uint64_t(dims[0]), "input");
            arch_.input_dim = int(dims[0]);
            cur_.c = int(dims[0]);
        } else if (dims.size() == 3 && first_node_transposes_to_nchw(in->name())) {
            // NHWC (Keras through tf2onnx): hopper's own layout, transposed to NCHW by the graph.
            set_image_input(int(dims[0]), int(dims[1]), int(dims[2]));
            cur_.form = Current::Form::Nhwc;
        } else if (dims.size() == 3) {
            set_image_input(int(dims[1]), int(dims[2]), int(dims[0]));
            cur_.form = Current::Form::Nchw;
        } else {
            fail(ErrorKind::FeatureNotSupported,
                 "the ONNX graph's input \"" + in->name() + "\" has " + std::to_string(shape.dim_size()) +
                     " dimensions",
                 "hopper imports inputs [N, features] and images [N, channels, height, width].");
        }
    }

    bool first_node_transposes_to_nchw(const std::string& input) const {
        for (const onnx::NodeProto& n : g_.node()) {
            if (n.op_type() == "Constant") continue;
            return n.op_type() == "Transpose" && n.input_size() == 1 && n.input(0) == input &&
                   attr_ints(n, "perm") == std::vector<int64_t>{0, 3, 1, 2};
        }
        return false;
    }

    // A row of more values than hopper reads (kMaxDim, as an architecture's input_shape) is refused
    // before anything is sized by it: a 156-byte file of a 16384 x 16384 input grew the backend to
    // 2.1 GB flattening it before the architecture's own check refused it.
    static void check_row_size(uint64_t values, const std::string& what) {
        if (values > uint64_t(cfg::kMaxDim))
            fail(ErrorKind::Limit, "the ONNX graph's " + what + " is too large",
                 "It has " + std::to_string(values) + " values a row; hopper reads at most " +
                     std::to_string(cfg::kMaxDim) + ".");
    }

    void set_image_input(int h, int w, int c) {
        check_row_size(uint64_t(h) * uint64_t(w) * uint64_t(c), "input image");
        arch_.input_height = h;
        arch_.input_width = w;
        arch_.input_channels = c;
        arch_.input_dim = h * w * c;
        cur_.h = h;
        cur_.w = w;
        cur_.c = c;
        input_shape_set_ = true;
    }

    Tensor constant(const onnx::NodeProto& n, int index, int input, bool required = true) {
        if (n.input_size() <= input || n.input(input).empty()) {
            if (required)
                corrupt(node_label(n, index) + " (" + n.op_type() + ") lacks input " + std::to_string(input + 1));
            return {};
        }
        const std::string& name = n.input(input);
        const std::string what = "tensor \"" + name + "\" of " + node_label(n, index);
        if (auto it = consts_.find(name); it != consts_.end()) return read_tensor(*it->second, what);
        if (auto it = constant_nodes_.find(name); it != constant_nodes_.end()) return read_tensor(it->second, what);
        unsupported(n, index, "its input \"" + name + "\" is not a constant (an initializer)",
                    "hopper imports weights stored in the graph.");
    }

    // A weight, bias or statistic: float32. An int64 tensor read as weights (its floats empty) made
    // the kernel loops read through a null pointer (a hostile review's 125-byte file crashed the
    // server).
    Tensor weights(const onnx::NodeProto& n, int index, int input, bool required = true) {
        Tensor t = constant(n, index, input, required);
        if (!t.i.empty())
            fail(ErrorKind::FeatureNotSupported,
                 "ONNX tensor \"" + n.input(input) + "\" of " + node_label(n, index) + " (" + n.op_type() +
                     ") holds int64 values",
                 "", "hopper imports float32 weights.");
        return t;
    }

    void reads_current(const onnx::NodeProto& n, int index) {
        if (n.input_size() < 1 || n.input(0) != cur_.name)
            fail(ErrorKind::FeatureNotSupported,
                 "the ONNX graph is not a sequential chain: " + node_label(n, index) + " (" + n.op_type() +
                     ") does not read \"" + cur_.name + "\"",
                 kVocabulary);
        if (n.output_size() < 1 || n.output(0).empty()) corrupt(node_label(n, index) + " has no output");
    }

    void produce(const onnx::NodeProto& n, bool fresh_layer) {
        cur_.name = n.output(0);
        cur_.fresh_layer = fresh_layer;
    }

    Layer& add_layer(LayerKind kind) {
        input_shape_set_ = true;
        arch_.layers.push_back(Layer{});
        arch_.layers.back().kind = kind;
        return arch_.layers.back();
    }

    bool image() const { return cur_.form != Current::Form::Flat; }
    void need_nchw(const onnx::NodeProto& n, int index) {
        if (cur_.form != Current::Form::Nchw || cur_.squeezable)
            unsupported(n, index, "it needs an image in NCHW layout here");
    }
    void need_flat(const onnx::NodeProto& n, int index) {
        if (cur_.form != Current::Form::Flat) unsupported(n, index, "it needs a flat [N, features] tensor here");
    }

    // Spatial attributes of Conv and the pooling operators: fills the layer's kernel, strides and
    // padding, refusing what hopper's "valid" and "same" (TensorFlow's) cannot express.
    void spatial(const onnx::NodeProto& n, int index, Layer& l, int64_t kh, int64_t kw, bool pooling) {
        for (int64_t d : attr_ints(n, "dilations"))
            if (d != 1) unsupported(n, index, "dilations other than 1");
        if (attr_int(n, "ceil_mode", 0) != 0) unsupported(n, index, "ceil_mode 1");
        if (attr_int(n, "storage_order", 0) != 0) unsupported(n, index, "storage_order 1");
        if (n.output_size() > 1 && !n.output(1).empty()) unsupported(n, index, "its indices output");
        std::vector<int64_t> strides = attr_ints(n, "strides");
        if (strides.empty()) strides = {1, 1};
        if (strides.size() != 2 || strides[0] < 1 || strides[1] < 1 || strides[0] > 1000000 || strides[1] > 1000000)
            unsupported(n, index, "strides must be two positive integers");
        if (kh < 1 || kw < 1 || kh > 1000000 || kw > 1000000) unsupported(n, index, "an invalid kernel shape");
        l.kernel_h = int(kh);
        l.kernel_w = int(kw);
        l.stride_h = int(strides[0]);
        l.stride_w = int(strides[1]);
        const std::string auto_pad = attr_string(n, "auto_pad");
        std::vector<int64_t> pads = attr_ints(n, "pads");
        if (pads.empty()) pads = {0, 0, 0, 0};
        if (pads.size() != 4) unsupported(n, index, "pads must have four values");
        const bool zero = std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p == 0; });
        if (auto_pad == "VALID" || ((auto_pad.empty() || auto_pad == "NOTSET") && zero)) {
            l.padding = Padding::Valid;
        } else if (auto_pad == "SAME_UPPER") {
            l.padding = Padding::Same;
        } else if (auto_pad.empty() || auto_pad == "NOTSET") {
            auto total = [](int64_t in, int64_t k, int64_t s) {
                const int64_t out = (in + s - 1) / s;
                return std::max<int64_t>((out - 1) * s + k - in, 0);
            };
            const int64_t ph = total(cur_.h, kh, l.stride_h), pw = total(cur_.w, kw, l.stride_w);
            if (pads != std::vector<int64_t>{ph / 2, pw / 2, ph - ph / 2, pw - pw / 2})
                unsupported(n, index, "its padding is neither \"valid\" (none) nor TensorFlow's \"same\"",
                            "hopper pads as Keras' padding=\"same\" does (the odd element at the bottom and right).");
            l.padding = Padding::Same;
        } else {
            unsupported(n, index, "auto_pad " + auto_pad);
        }
        if (pooling && l.padding == Padding::Same && n.op_type() == "AveragePool" &&
            attr_int(n, "count_include_pad", 0) != 0)
            unsupported(n, index, "count_include_pad 1 with padding",
                        "hopper averages a padded window over its valid elements (count_include_pad 0).");
    }

    void advance_image(const Layer& l) {
        const TensorShape out = l.kind == LayerKind::GlobalAveragePooling2D ? TensorShape{1, 1, cur_.c, true} : [&] {
            TensorShape in{cur_.h, cur_.w, cur_.c, false};
            // The output shape as hopper computes it (its validation
            // refuses windows that do not fit, later).
            auto len = [](int64_t i, int64_t k, int64_t s, Padding p) {
                if (p == Padding::Same) return (i + s - 1) / s;
                return i < k ? int64_t(0) : (i - k) / s + 1;
            };
            in.height = int(len(cur_.h, l.kernel_h, l.stride_h, l.padding));
            in.width = int(len(cur_.w, l.kernel_w, l.stride_w, l.padding));
            if (l.kind == LayerKind::Conv2D) in.channels = l.filters;
            return in;
        }();
        if (out.height < 1 || out.width < 1)
            fail(ErrorKind::FeatureNotSupported,
                 "the ONNX graph's " + std::string(to_string(l.kind)) + " layer has a window larger than its input");
        cur_.h = out.height;
        cur_.w = out.width;
        cur_.c = out.channels;
    }

    void dense(const onnx::NodeProto& n, int index, const Tensor& kernel, bool trans, float alpha, const Tensor* bias,
               float beta) {
        need_flat(n, index);
        if (kernel.dims.size() != 2) unsupported(n, index, "its weight is not a matrix");
        const int64_t in = trans ? kernel.dims[1] : kernel.dims[0], out = trans ? kernel.dims[0] : kernel.dims[1];
        if (in != cur_.c)
            corrupt(node_label(n, index) + " (" + n.op_type() + ") takes " + std::to_string(in) +
                    " features, its input has " + std::to_string(cur_.c));
        if (out < 1) corrupt(node_label(n, index) + " has no outputs");
        Layer& l = add_layer(LayerKind::Dense);
        l.units = int(out);
        l.use_bias = bias != nullptr;
        const std::size_t base = params_.size();
        params_.resize(base + std::size_t(in * out) + (bias ? std::size_t(out) : 0));
        // hopper's kernel [inputs, units] in C order; a Flatten of NCHW reorders the inputs.
        for (int64_t j = 0; j < in; ++j) {
            const int64_t src = cur_.from_original.empty() ? j : cur_.from_original[std::size_t(j)];
            for (int64_t u = 0; u < out; ++u)
                params_[base + std::size_t(j * out + u)] =
                    alpha * kernel.f[std::size_t(trans ? u * in + src : src * out + u)];
        }
        if (bias) {
            if (bias->count() == 1 && out > 1) {
                for (int64_t u = 0; u < out; ++u) params_[base + std::size_t(in * out + u)] = beta * bias->f[0];
            } else if (int64_t(bias->count()) == out) {
                for (int64_t u = 0; u < out; ++u)
                    params_[base + std::size_t(in * out + u)] = beta * bias->f[std::size_t(u)];
            } else {
                corrupt(node_label(n, index) + " has " + std::to_string(bias->count()) + " biases for " +
                        std::to_string(out) + " units");
            }
        }
        cur_.c = int(out);
        cur_.from_original.clear();
    }

    void activation(const onnx::NodeProto& n, int index, Activation a) {
        if (a == Activation::Softmax) {
            need_flat(n, index);
            const int64_t axis = attr_int(n, "axis", -1);
            if (axis != -1 && axis != 1) unsupported(n, index, "a softmax over axis " + std::to_string(axis));
        }
        if (arch_.layers.empty() || !cur_.fresh_layer || arch_.layers.back().activation != Activation::Linear)
            unsupported(n, index, "hopper applies an activation as part of the layer before it",
                        "Put the activation right after a Gemm, Conv, pooling, Flatten or BatchNormalization node.");
        arch_.layers.back().activation = a;
        produce(n, false);
    }

    void convert(const onnx::NodeProto& n, int index) {
        const std::string& op = n.op_type();
        if (!n.domain().empty() && n.domain() != "ai.onnx")
            unsupported(n, index, "it is in operator domain \"" + n.domain() + "\"", kVocabulary);
        if (op == "Constant") {
            const onnx::AttributeProto* v = find_attr(n, "value");
            if (!v || !v->has_t() || n.output_size() != 1) unsupported(n, index, "only tensor constants are read");
            constant_nodes_[n.output(0)] = v->t();
            return;
        }
        reads_current(n, index);
        // The target's scaling (hopper's exports of a model with a standardized target) ends the graph.
        if (scaled_ != Scaled::No && op != "Identity" && op != "Dropout" && !(op == "Add" && scaled_ == Scaled::Mul))
            unsupported(n, index,
                        "hopper reads a Mul (and Add) of one value after the output layer only as the last "
                        "nodes of the graph: the target's scaling");
        if (op == "Mul" && !arch_.layers.empty()) {
            target_scaling(n, index, true);
        } else if (op == "Add" && scaled_ == Scaled::Mul) {
            target_scaling(n, index, false);
        } else if (op == "Gemm") {
            if (attr_int(n, "transA", 0) != 0) unsupported(n, index, "transA 1");
            const Tensor b = weights(n, index, 1);
            const Tensor c = weights(n, index, 2, false);
            dense(n, index, b, attr_int(n, "transB", 0) != 0, attr_float(n, "alpha", 1.0f), c.f.empty() ? nullptr : &c,
                  attr_float(n, "beta", 1.0f));
            produce(n, true);
        } else if (op == "MatMul") {
            dense(n, index, weights(n, index, 1), false, 1.0f, nullptr, 1.0f);
            produce(n, true);
        } else if (op == "Add") {
            // The bias of a MatMul just before.
            if (arch_.layers.empty() || !cur_.fresh_layer || arch_.layers.back().kind != LayerKind::Dense ||
                arch_.layers.back().use_bias)
                unsupported(n, index, "hopper reads Add only as the bias of the MatMul before it", kVocabulary);
            const Tensor b = weights(n, index, 1);
            const int units = arch_.layers.back().units;
            if (int64_t(b.f.size()) != units)
                corrupt(node_label(n, index) + " adds " + std::to_string(b.f.size()) + " values to " +
                        std::to_string(units) + " units");
            arch_.layers.back().use_bias = true;
            params_.insert(params_.end(), b.f.begin(), b.f.end());
            produce(n, true);
        } else if (op == "Conv") {
            need_nchw(n, index);
            if (attr_int(n, "group", 1) != 1) unsupported(n, index, "grouped convolution");
            const Tensor k = weights(n, index, 1);
            const Tensor b = weights(n, index, 2, false);
            if (k.dims.size() != 4 || k.dims[1] != cur_.c || k.dims[0] < 1)
                corrupt(node_label(n, index) + " (Conv) has a kernel that does not fit its " + std::to_string(cur_.c) +
                        " input channels");
            const int64_t m = k.dims[0], c = k.dims[1], kh = k.dims[2], kw = k.dims[3];
            Layer l;
            l.kind = LayerKind::Conv2D;
            spatial(n, index, l, kh, kw, false);
            l.filters = int(m);
            l.use_bias = !b.f.empty();
            if (l.use_bias && int64_t(b.f.size()) != m)
                corrupt(node_label(n, index) + " has " + std::to_string(b.f.size()) + " biases for " +
                        std::to_string(m) + " filters");
            const std::size_t base = params_.size();
            params_.resize(base + k.f.size() + b.f.size());
            for (int64_t i = 0; i < kh; ++i)
                for (int64_t j = 0; j < kw; ++j)
                    for (int64_t ci = 0; ci < c; ++ci)
                        for (int64_t mi = 0; mi < m; ++mi)
                            params_[base + std::size_t(((i * kw + j) * c + ci) * m + mi)] =
                                k.f[std::size_t(((mi * c + ci) * kh + i) * kw + j)];
            std::copy(b.f.begin(), b.f.end(), params_.begin() + std::ptrdiff_t(base + k.f.size()));
            add_layer(LayerKind::Conv2D) = l;
            advance_image(l);
            produce(n, true);
        } else if (op == "MaxPool" || op == "AveragePool") {
            need_nchw(n, index);
            const std::vector<int64_t> k = attr_ints(n, "kernel_shape");
            if (k.size() != 2) unsupported(n, index, "kernel_shape must have two values");
            Layer l;
            l.kind = op == "MaxPool" ? LayerKind::MaxPooling2D : LayerKind::AveragePooling2D;
            spatial(n, index, l, k[0], k[1], true);
            add_layer(l.kind) = l;
            advance_image(l);
            produce(n, true);
        } else if (op == "GlobalAveragePool") {
            need_nchw(n, index);
            add_layer(LayerKind::GlobalAveragePooling2D);
            advance_image(arch_.layers.back());
            cur_.squeezable = true;
            produce(n, true);
        } else if (op == "Flatten" || op == "Reshape" || op == "Squeeze") {
            reshape(n, index);
        } else if (op == "Pad") {
            // torch.onnx writes AvgPool2d(k) (count_include_pad, no padding) as a Pad of zeros before
            // its AveragePool: nothing to do. Padding of its own hopper has only inside a layer.
            std::vector<int64_t> pads = attr_ints(n, "pads");  // opset < 11
            if (n.input_size() > 1 && !n.input(1).empty()) pads = constant(n, index, 1).i;
            if (std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; }))
                unsupported(n, index, "it pads by more than nothing",
                            "hopper pads only within a convolution or pooling layer (padding \"same\"): give the "
                            "padding to the Conv or pooling layer instead.");
            produce(n, cur_.fresh_layer);
        } else if (op == "Shape") {
            unsupported(n, index, "it reads a shape while the graph runs (PyTorch's x.view(x.size(0), -1))",
                        "Flatten with nn.Flatten() or torch.flatten(x, 1), or reshape to (-1, n) with n fixed, and "
                        "export again.");
        } else if (op == "Transpose") {
            const std::vector<int64_t> perm = attr_ints(n, "perm");
            if (cur_.form == Current::Form::Nhwc && perm == std::vector<int64_t>{0, 3, 1, 2})
                cur_.form = Current::Form::Nchw;
            else if (cur_.form == Current::Form::Nchw && !cur_.squeezable && perm == std::vector<int64_t>{0, 2, 3, 1})
                cur_.form = Current::Form::Nhwc;
            else unsupported(n, index, "hopper reads Transpose only between NCHW and NHWC images", kVocabulary);
            produce(n, cur_.fresh_layer);
        } else if (op == "BatchNormalization") {
            if (attr_int(n, "training_mode", 0) != 0) unsupported(n, index, "training_mode 1");
            if (n.output_size() > 1) unsupported(n, index, "its running statistics outputs (training mode)");
            if (cur_.form == Current::Form::Nhwc || cur_.squeezable)
                unsupported(n, index, "it needs an NCHW image or a flat tensor");
            std::vector<Tensor> t;
            for (int i = 1; i <= 4; ++i) {
                t.push_back(weights(n, index, i));
                if (int64_t(t.back().f.size()) != cur_.c)
                    corrupt(node_label(n, index) + " (BatchNormalization) has " + std::to_string(t.back().f.size()) +
                            " values for " + std::to_string(cur_.c) + " channels");
            }
            Layer& l = add_layer(LayerKind::BatchNormalization);
            l.epsilon = as_written(attr_float(n, "epsilon", 1e-5f));
            l.momentum = as_written(attr_float(n, "momentum", 0.9f));
            // gamma, beta, mean, variance: in the order of hopper's layout; a pending NCHW flatten
            // order travels through (the statistics are permuted with the features).
            for (const Tensor& x : t)
                for (int j = 0; j < cur_.c; ++j)
                    params_.push_back(
                        x.f[std::size_t(cur_.from_original.empty() ? j : cur_.from_original[std::size_t(j)])]);
            produce(n, true);
        } else if (op == "Relu") {
            activation(n, index, Activation::Relu);
        } else if (op == "Tanh") {
            activation(n, index, Activation::Tanh);
        } else if (op == "Sigmoid") {
            activation(n, index, Activation::Sigmoid);
        } else if (op == "Softmax") {
            activation(n, index, Activation::Softmax);
        } else if (op == "Dropout" || op == "Identity") {
            if (op == "Dropout" && n.output_size() > 1 && !n.output(1).empty())
                unsupported(n, index, "its mask output");
            produce(n, cur_.fresh_layer);
        } else if ((op == "Mul" || op == "Sub" || op == "Div") && arch_.layers.empty()) {
            unsupported(n, index, "it scales the input, and an architecture holds no input scaling",
                        "hopper keeps a model's input scaling with its training data (normalizing_const, "
                        "standardize); import the graph without it and scale the rows the same way.");
        } else {
            unsupported(n, index, "hopper has no layer for it", kVocabulary);
        }
    }

    // A Mul by one positive value after a linear output layer, then perhaps an Add of one value: a
    // target standardized for training given back in its own units (Architecture::target_scaling).
    void target_scaling(const onnx::NodeProto& n, int index, bool mul) {
        need_flat(n, index);
        if (mul && arch_.layers.back().activation != Activation::Linear)
            unsupported(n, index, "hopper reads a Mul after the output layer only as the scaling of a linear output");
        const Tensor v = weights(n, index, 1);
        if (v.f.size() != 1)
            unsupported(n, index,
                        "hopper reads " + n.op_type() + " after the output layer only of one value (the target's " +
                            (mul ? "scale" : "offset") + "), not of " + std::to_string(v.f.size()),
                        kVocabulary);
        if (!std::isfinite(v.f[0]) || (mul && !(v.f[0] > 0.0f)))
            unsupported(n, index,
                        std::string("the target's ") + (mul ? "scale must be a positive" : "offset must be a") +
                            " finite number");
        if (mul) arch_.target_scaling.scale = v.f[0];
        else arch_.target_scaling.offset = v.f[0];
        scaled_ = mul ? Scaled::Mul : Scaled::Add;
        produce(n, false);
    }

    // Flatten, Reshape and Squeeze: an image to a flat row (hopper's Flatten, or nothing after a
    // GlobalAveragePool), or the flat input to an image (hopper's own exports: NHWC; or one channel).
    void reshape(const onnx::NodeProto& n, int index) {
        const std::string& op = n.op_type();
        std::vector<int64_t> target;
        if (op == "Flatten") {
            if (attr_int(n, "axis", 1) != 1) unsupported(n, index, "a flatten at an axis other than 1");
            target = {0, -1};
        } else if (op == "Reshape") {
            const Tensor s = constant(n, index, 1);
            if (s.i.empty()) unsupported(n, index, "its shape is not an int64 constant");
            target = s.i;
            if (attr_int(n, "allowzero", 0) != 0) unsupported(n, index, "allowzero 1");
        } else {
            target = {0, -1};  // Squeeze of [N, C, 1, 1] (checked below)
        }
        const bool to_flat = target.size() == 2 && (target[1] == -1 || target[1] == int64_t(cur_.h) * cur_.w * cur_.c);
        if (to_flat && cur_.squeezable) {
            cur_.form = Current::Form::Flat;
            cur_.squeezable = false;
            produce(n, cur_.fresh_layer);
            return;
        }
        if (op == "Squeeze") unsupported(n, index, "hopper reads Squeeze only after a GlobalAveragePool");
        if (to_flat && image()) {
            check_row_size(uint64_t(cur_.h) * uint64_t(cur_.w) * uint64_t(cur_.c), "flattened image");
            const int h = cur_.h, w = cur_.w, c = cur_.c;
            const bool nchw = cur_.form == Current::Form::Nchw;
            Layer& l = add_layer(LayerKind::Flatten);
            (void)l;
            cur_.form = Current::Form::Flat;
            cur_.c = h * w * c;
            cur_.from_original.clear();
            if (nchw && h * w > 1 && c > 1) {
                // hopper's feature (y, x, ch) is the NCHW flatten's ch*H*W + y*W + x.
                cur_.from_original.resize(std::size_t(h) * std::size_t(w) * std::size_t(c));
                for (int y = 0; y < h; ++y)
                    for (int x = 0; x < w; ++x)
                        for (int ch = 0; ch < c; ++ch)
                            cur_.from_original[std::size_t((y * w + x) * c + ch)] = (ch * h + y) * w + x;
            }
            produce(n, true);
            return;
        }
        if (to_flat) {  // flat to flat
            produce(n, cur_.fresh_layer);
            return;
        }
        if (cur_.form == Current::Form::Flat && arch_.layers.empty() && cur_.from_original.empty() &&
            target.size() == 4 && !input_shape_set_) {
            // The flat input row as an image: NHWC when a Transpose to NCHW follows (hopper's
            // exports), else NCHW, which is hopper's HWC row only with one channel.
            const int64_t a = target[1], b = target[2], c = target[3];
            if (a < 1 || b < 1 || c < 1 || a * b * c != cur_.c)
                unsupported(n, index,
                            "the shape it gives does not hold the " + std::to_string(cur_.c) + " input features");
            const bool nhwc = index + 1 < g_.node_size() && g_.node(index + 1).op_type() == "Transpose" &&
                              attr_ints(g_.node(index + 1), "perm") == std::vector<int64_t>{0, 3, 1, 2};
            if (nhwc) {
                set_image_input(int(a), int(b), int(c));
                cur_.form = Current::Form::Nhwc;
            } else if (a == 1) {
                set_image_input(int(b), int(c), 1);
                cur_.form = Current::Form::Nchw;
            } else {
                unsupported(n, index, "it shapes the input row as an NCHW image of " + std::to_string(a) + " channels",
                            "hopper's rows are channels-last (HWC): give the graph an NCHW input [N, C, H, W], or "
                            "reshape to NHWC and transpose.");
            }
            produce(n, false);
            return;
        }
        unsupported(n, index, "hopper reads reshapes only to flatten an image or to shape the input row as an image",
                    kVocabulary);
    }
};

}  // namespace

OnnxImported import_onnx(std::string_view bytes) {
    if (bytes.size() > kMaxOnnxBytes)
        fail(ErrorKind::Limit, "the ONNX file is too large",
             "It has " + std::to_string(bytes.size()) + " bytes; hopper imports at most 1 GB.");
    if (bytes.empty()) corrupt("the file is empty");
    onnx::ModelProto model;
    if (!model.ParseFromArray(bytes.data(), int(bytes.size())))
        corrupt("the file is not an ONNX model (it does not parse as a ModelProto; corrupt or truncated?)",
                std::to_string(bytes.size()) + " bytes.");
    return Importer(model).run();
}

}  // namespace hopper
