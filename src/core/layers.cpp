// The registry of layer kinds (layer_type), the Dense and Flatten kinds, what the kinds share
// (window arithmetic and checks), and the free functions that dispatch to a layer's kind.
#include "layers.h"

#include <algorithm>
#include <limits>

#include "hopper/error.h"

namespace hopper::layers {

uint64_t mul_sat(uint64_t a, uint64_t b) {
    if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a) return std::numeric_limits<uint64_t>::max();
    return a * b;
}

uint64_t add_sat(uint64_t a, uint64_t b) {
    return a > std::numeric_limits<uint64_t>::max() - b ? std::numeric_limits<uint64_t>::max() : a + b;
}

namespace {

std::string pair_string(int a, int b) { return std::to_string(a) + "x" + std::to_string(b); }

}  // namespace

int64_t output_length(int64_t in, int64_t kernel, int64_t stride, Padding padding) {
    if (in < 1 || kernel < 1 || stride < 1) return 0;
    if (padding == Padding::Same) return (in + stride - 1) / stride;
    if (kernel > in) return 0;
    return (in - kernel) / stride + 1;
}

Window window_of(const Layer& l, const TensorShape& in) {
    Window w;
    w.in_h = in.height;
    w.in_w = in.width;
    w.channels = in.channels;
    w.k_h = l.kernel_h;
    w.k_w = l.kernel_w;
    w.s_h = l.stride_h;
    w.s_w = l.stride_w;
    w.out_h = int(output_length(in.height, l.kernel_h, l.stride_h, l.padding));
    w.out_w = int(output_length(in.width, l.kernel_w, l.stride_w, l.padding));
    w.pad_top = w.pad_left = 0;
    if (l.padding == Padding::Same) {
        const int64_t pad_h = std::max<int64_t>(int64_t(w.out_h - 1) * w.s_h + w.k_h - w.in_h, 0);
        const int64_t pad_w = std::max<int64_t>(int64_t(w.out_w - 1) * w.s_w + w.k_w - w.in_w, 0);
        w.pad_top = int(pad_h / 2);
        w.pad_left = int(pad_w / 2);
    }
    return w;
}

TensorShape window_output_shape(const Layer& l, const TensorShape& in, int channels) {
    const Window w = window_of(l, in);
    TensorShape out;
    out.height = std::max(w.out_h, 0);
    out.width = std::max(w.out_w, 0);
    out.channels = channels;
    out.flat = false;
    return out;
}

void require_image(const Layer& l, const TensorShape& in, const std::string& label) {
    if (!in.flat) return;
    const char* kind = to_string(l.kind);
    fail(ErrorKind::InvalidParameter, std::string(kind) + " layer applied to a flat tensor (" + label + ")",
         "Its input is a vector of " + std::to_string(in.channels) + " features; " + kind +
             " needs an image [height, width, channels].",
         "Give the model an image input (\"input_shape\": [height, width, channels]) and put "
         "the layer before any Flatten, GlobalAveragePooling2D or Dense layer.");
}

void check_window(const Layer& l, const TensorShape& in, const std::string& label, const char* what) {
    if (output_length(in.height, l.kernel_h, l.stride_h, l.padding) < 1 ||
        output_length(in.width, l.kernel_w, l.stride_w, l.padding) < 1)
        fail(ErrorKind::InvalidParameter,
             std::string(what) + " " + pair_string(l.kernel_h, l.kernel_w) + " of " + label +
                 " is larger than its input",
             "The input of the layer has shape " + in.to_string() +
                 "; with padding \"valid\" a window must fit inside the input, or the layer has "
                 "no output.",
             "Use a smaller " + std::string(what) + ", padding \"same\", or fewer layers that shrink the image.");
}

std::string window_token(std::string s, const Layer& l, bool stride_defaults_to_window) {
    const int dh = stride_defaults_to_window ? l.kernel_h : 1, dw = stride_defaults_to_window ? l.kernel_w : 1;
    if (l.stride_h != dh || l.stride_w != dw)
        s += "_s" + (l.stride_h == l.stride_w ? std::to_string(l.stride_h) : pair_string(l.stride_h, l.stride_w));
    if (l.padding == Padding::Same) s += "_same";
    return s;
}

LayerSlice LayerType::slice(const Layer&, const TensorShape&, std::size_t offset) const {
    LayerSlice s;
    s.weight_offset = s.bias_offset = s.stats_offset = s.end_offset = offset;
    s.inputs = s.units = 0;
    return s;
}

LayerSlice kernel_slice(const Layer& l, std::size_t offset, int inputs, int units) {
    LayerSlice s;
    s.weight_offset = offset;
    s.inputs = inputs;
    s.units = units;
    s.bias_offset = offset + std::size_t(units) * std::size_t(inputs);
    s.stats_offset = s.end_offset = s.bias_offset + (units > 0 && l.use_bias ? std::size_t(units) : 0);
    return s;
}

namespace {

// Dense: the arithmetic stays in network.cpp, exactly as before other layers existed (stored models
// and pinned results depend on every bit); the network never routes a Dense layer here.
class DenseType : public LayerType {
public:
    DenseType() : LayerType(LayerKind::Dense) {}
    TensorShape output_shape(const Layer& l, const TensorShape&) const override {
        TensorShape out;
        out.channels = l.units;
        return out;
    }
    void check_input(const Layer&, const TensorShape& in, const std::string& label) const override {
        if (!in.flat)
            fail(ErrorKind::InvalidParameter, "dense layer applied to a non-flat tensor (" + label + ")",
                 "Its input has shape " + in.to_string() + "; a Dense layer takes a flat vector.",
                 "Put a Flatten or GlobalAveragePooling2D layer before it.");
    }
    uint64_t param_count(const Layer& l, const TensorShape& in) const override {
        return add_sat(mul_sat(in.size(), uint64_t(std::max(l.units, 0))),
                       l.use_bias ? uint64_t(std::max(l.units, 0)) : 0);
    }
    LayerSlice slice(const Layer& l, const TensorShape& in, std::size_t offset) const override {
        return kernel_slice(l, offset, int(in.size()), l.units);
    }
    double kernel_fan_out(const Layer&, const LayerSlice& s) const override { return double(s.units); }
    std::string shape_token(const Layer& l) const override { return std::to_string(l.units); }
    void forward(const LayerArgs&, const float*, const float*, float*, Eigen::Index, bool,
                 LayerScratch&) const override {
        fail(ErrorKind::Internal, "dense layer routed to the layer dispatch");
    }
    void backward(const LayerArgs&, const float*, const float*, const float*, float*, float*, Eigen::Index,
                  LayerScratch&) const override {
        fail(ErrorKind::Internal, "dense layer routed to the layer dispatch");
    }
};

// Flatten: HWC is already Keras' flatten order, so the values move unchanged.
class FlattenType : public LayerType {
public:
    FlattenType() : LayerType(LayerKind::Flatten) {}
    TensorShape output_shape(const Layer&, const TensorShape& in) const override {
        TensorShape out;
        out.channels = int(std::min<uint64_t>(in.size(), uint64_t(std::numeric_limits<int>::max())));
        return out;
    }
    uint64_t output_values(const Layer&, const TensorShape& in) const override { return in.size(); }
    std::string shape_token(const Layer&) const override { return "flatten"; }
    void forward(const LayerArgs& a, const float*, const float* x, float* z, Eigen::Index n, bool,
                 LayerScratch&) const override {
        std::copy(x, x + a.in.size() * std::size_t(n), z);
    }
    void backward(const LayerArgs& a, const float*, const float*, const float* dz, float*, float* dx, Eigen::Index n,
                  LayerScratch&) const override {
        if (dx) std::copy(dz, dz + a.in.size() * std::size_t(n), dx);
    }
};

}  // namespace

const LayerType& dense_layer() {
    static const DenseType t;
    return t;
}

const LayerType& flatten_layer() {
    static const FlattenType t;
    return t;
}

const LayerType& layer_type(LayerKind kind) {
    // The registered kinds: one line each.
    static const LayerType* const types[] = {
        &dense_layer(),
        &conv2d_layer(),
        &max_pooling2d_layer(),
        &average_pooling2d_layer(),
        &global_average_pooling2d_layer(),
        &flatten_layer(),
        &batch_normalization_layer(),
        &embedding_layer(),
    };
    for (const LayerType* t : types)
        if (t->kind() == kind) return *t;
    fail(ErrorKind::Internal, "unknown layer kind");
}

TensorShape output_shape(const Layer& l, const TensorShape& in) { return layer_type(l.kind).output_shape(l, in); }

TensorShape checked_output_shape(const Layer& l, const TensorShape& in, const std::string& label) {
    const LayerType& type = layer_type(l.kind);
    type.check_input(l, in, label);
    const TensorShape out = type.output_shape(l, in);
    const uint64_t size = type.output_values(l, in);
    if (size > kMaxRowFloats)
        fail(ErrorKind::Limit, "output of " + label + " is too large",
             "Its output has " + std::to_string(size) + " values per row (" +
                 (out.flat ? std::to_string(size) : out.to_string()) + "), " + std::to_string(size * 4 >> 20) +
                 " MB; hopper allows at most " + std::to_string(kMaxRowFloats) + " values (256 MB) per layer and row.",
             "Use smaller images, fewer filters, larger strides or more pooling.");
    return out;
}

uint64_t param_count(const Layer& l, const TensorShape& in) { return layer_type(l.kind).param_count(l, in); }

uint64_t columns_per_row(const Layer& l, const TensorShape& in) { return layer_type(l.kind).columns_per_row(l, in); }

uint64_t patch_buffer_floats(const Layer& l, const TensorShape& in, uint64_t batch) {
    const uint64_t per_image = columns_per_row(l, in);
    if (per_image == 0) return 0;
    const uint64_t images = std::max<uint64_t>(1, std::min<uint64_t>(batch, kPatchChunkFloats / per_image));
    return mul_sat(per_image, images);
}

std::string shape_token(const Layer& l) { return layer_type(l.kind).shape_token(l); }

// ---------------------------------------------------------------------------------------------

void initialize(const LayerArgs& a, float* params, uint64_t seed) {
    layer_type(a.layer.kind).initialize(a, params, seed);
}

void forward(const LayerArgs& a, const float* params, const float* x, float* z, Eigen::Index n, bool training,
             LayerScratch& scratch) {
    layer_type(a.layer.kind).forward(a, params, x, z, n, training, scratch);
}

void backward(const LayerArgs& a, const float* params, const float* x, const float* dz, float* grad, float* dx,
              Eigen::Index n, LayerScratch& scratch) {
    layer_type(a.layer.kind).backward(a, params, x, dz, grad, dx, n, scratch);
}

void store_moving_statistics(const LayerArgs& a, float* params, const LayerScratch& scratch) {
    layer_type(a.layer.kind).store_moving_statistics(a, params, scratch);
}

}  // namespace hopper::layers
