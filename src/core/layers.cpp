// Rules of the layers other than Dense: shapes and their checks, parameter counts, per-row memory,
// initialisation, and dispatch to each kind's forward and backward pass (layer_*.cpp).
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

bool is_window(LayerKind k) {
    return k == LayerKind::Conv2D || k == LayerKind::MaxPooling2D || k == LayerKind::AveragePooling2D;
}

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

TensorShape output_shape(const Layer& l, const TensorShape& in) {
    TensorShape out;
    switch (l.kind) {
        case LayerKind::Dense:
            out.channels = l.units;
            return out;
        case LayerKind::Conv2D:
        case LayerKind::MaxPooling2D:
        case LayerKind::AveragePooling2D: {
            const Window w = window_of(l, in);
            out.height = std::max(w.out_h, 0);
            out.width = std::max(w.out_w, 0);
            out.channels = l.kind == LayerKind::Conv2D ? l.filters : in.channels;
            out.flat = false;
            return out;
        }
        case LayerKind::GlobalAveragePooling2D:
            out.channels = in.channels;
            return out;
        case LayerKind::Flatten:
            out.channels = int(std::min<uint64_t>(in.size(), uint64_t(std::numeric_limits<int>::max())));
            return out;
        case LayerKind::BatchNormalization:
            return in;
    }
    return out;
}

TensorShape checked_output_shape(const Layer& l, const TensorShape& in, const std::string& label) {
    const char* kind = to_string(l.kind);
    if (l.kind == LayerKind::Dense && !in.flat)
        fail(ErrorKind::InvalidParameter, "dense layer applied to a non-flat tensor (" + label + ")",
             "Its input has shape " + in.to_string() + "; a Dense layer takes a flat vector.",
             "Put a Flatten or GlobalAveragePooling2D layer before it.");
    if ((is_window(l.kind) || l.kind == LayerKind::GlobalAveragePooling2D) && in.flat)
        fail(ErrorKind::InvalidParameter, std::string(kind) + " layer applied to a flat tensor (" + label + ")",
             "Its input is a vector of " + std::to_string(in.channels) + " features; " + kind +
                 " needs an image [height, width, channels].",
             "Give the model an image input (\"input_shape\": [height, width, channels]) and put "
             "the layer before any Flatten, GlobalAveragePooling2D or Dense layer.");
    if (is_window(l.kind)) {
        const char* what = l.kind == LayerKind::Conv2D ? "kernel_size" : "pool_size";
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
    const TensorShape out = output_shape(l, in);
    if (l.kind == LayerKind::Flatten || out.size() > kMaxRowFloats) {
        const uint64_t size = l.kind == LayerKind::Flatten ? in.size() : out.size();
        if (size > kMaxRowFloats)
            fail(ErrorKind::Limit, "output of " + label + " is too large",
                 "Its output has " + std::to_string(size) + " values per row (" +
                     (out.flat ? std::to_string(size) : out.to_string()) + "), " +
                     std::to_string(size * 4 >> 20) + " MB; hopper allows at most " +
                     std::to_string(kMaxRowFloats) + " values (256 MB) per layer and row.",
                 "Use smaller images, fewer filters, larger strides or more pooling.");
    }
    return out;
}

uint64_t param_count(const Layer& l, const TensorShape& in) {
    switch (l.kind) {
        case LayerKind::Dense:
            return add_sat(mul_sat(in.size(), uint64_t(std::max(l.units, 0))),
                           l.use_bias ? uint64_t(std::max(l.units, 0)) : 0);
        case LayerKind::Conv2D: {
            const uint64_t k = mul_sat(mul_sat(uint64_t(std::max(l.kernel_h, 0)), uint64_t(std::max(l.kernel_w, 0))),
                                       uint64_t(std::max(in.channels, 0)));
            const uint64_t f = uint64_t(std::max(l.filters, 0));
            return add_sat(mul_sat(k, f), l.use_bias ? f : 0);
        }
        case LayerKind::BatchNormalization:
            return uint64_t(std::max(in.channels, 0)) * uint64_t(2 + (l.scale ? 1 : 0) + (l.center ? 1 : 0));
        case LayerKind::MaxPooling2D:
        case LayerKind::AveragePooling2D:
        case LayerKind::GlobalAveragePooling2D:
        case LayerKind::Flatten:
            return 0;
    }
    return 0;
}

uint64_t columns_per_row(const Layer& l, const TensorShape& in) {
    if (l.kind != LayerKind::Conv2D) return 0;
    if (l.kernel_h == 1 && l.kernel_w == 1 && l.stride_h == 1 && l.stride_w == 1) return 0;
    const TensorShape out = output_shape(l, in);
    const uint64_t k = mul_sat(mul_sat(uint64_t(l.kernel_h), uint64_t(l.kernel_w)), uint64_t(in.channels));
    return mul_sat(k, mul_sat(uint64_t(out.height), uint64_t(out.width)));
}

uint64_t patch_buffer_floats(const Layer& l, const TensorShape& in, uint64_t batch) {
    const uint64_t per_image = columns_per_row(l, in);
    if (per_image == 0) return 0;
    const uint64_t images = std::max<uint64_t>(1, std::min<uint64_t>(batch, kPatchChunkFloats / per_image));
    return mul_sat(per_image, images);
}

std::string shape_token(const Layer& l) {
    std::string s;
    switch (l.kind) {
        case LayerKind::Dense:
            return std::to_string(l.units);
        case LayerKind::Conv2D:
            s = "conv" + pair_string(l.kernel_h, l.kernel_w) + "x" + std::to_string(l.filters);
            break;
        case LayerKind::MaxPooling2D:
            s = "maxpool" + pair_string(l.kernel_h, l.kernel_w);
            break;
        case LayerKind::AveragePooling2D:
            s = "avgpool" + pair_string(l.kernel_h, l.kernel_w);
            break;
        case LayerKind::GlobalAveragePooling2D:
            return "gap";
        case LayerKind::Flatten:
            return "flatten";
        case LayerKind::BatchNormalization:
            return "bn";
    }
    // Strides and padding only where they differ from the kind's default.
    const bool conv = l.kind == LayerKind::Conv2D;
    const int dh = conv ? 1 : l.kernel_h, dw = conv ? 1 : l.kernel_w;
    if (l.stride_h != dh || l.stride_w != dw)
        s += "_s" + (l.stride_h == l.stride_w ? std::to_string(l.stride_h) : pair_string(l.stride_h, l.stride_w));
    if (l.padding == Padding::Same) s += "_same";
    return s;
}

// ---------------------------------------------------------------------------------------------

void initialize(const LayerArgs& a, float* params) {
    const Layer& l = a.layer;
    const LayerSlice& s = a.slice;
    switch (l.kind) {
        case LayerKind::BatchNormalization: {
            const int c = a.in.channels;
            if (l.scale) std::fill(params + s.weight_offset, params + s.weight_offset + c, 1.0f);
            if (l.center) std::fill(params + s.bias_offset, params + s.bias_offset + c, 0.0f);
            std::fill(params + s.stats_offset, params + s.stats_offset + c, 0.0f);
            std::fill(params + s.stats_offset + c, params + s.stats_offset + 2 * c, 1.0f);
            return;
        }
        case LayerKind::Dense:
        case LayerKind::Conv2D:  // kernels are drawn with Dense's (Network::initialize)
        case LayerKind::MaxPooling2D:
        case LayerKind::AveragePooling2D:
        case LayerKind::GlobalAveragePooling2D:
        case LayerKind::Flatten:
            return;
    }
}

void forward(const LayerArgs& a, const float* params, const float* x, float* z, Eigen::Index n,
             bool training, LayerScratch& scratch) {
    switch (a.layer.kind) {
        case LayerKind::Conv2D:
            conv_forward(a, params, x, z, n, scratch);
            return;
        case LayerKind::MaxPooling2D:
        case LayerKind::AveragePooling2D:
            pool_forward(a, x, z, n, scratch);
            return;
        case LayerKind::GlobalAveragePooling2D:
            global_pool_forward(a, x, z, n);
            return;
        case LayerKind::Flatten:
            // HWC is already Keras' flatten order: the values move unchanged.
            std::copy(x, x + a.in.size() * std::size_t(n), z);
            return;
        case LayerKind::BatchNormalization:
            batchnorm_forward(a, params, x, z, n, training, scratch);
            return;
        case LayerKind::Dense:
            break;
    }
    fail(ErrorKind::Internal, "dense layer routed to the layer dispatch");
}

void backward(const LayerArgs& a, const float* params, const float* x, const float* dz,
              float* grad, float* dx, Eigen::Index n, LayerScratch& scratch) {
    switch (a.layer.kind) {
        case LayerKind::Conv2D:
            conv_backward(a, params, x, dz, grad, dx, n, scratch);
            return;
        case LayerKind::MaxPooling2D:
        case LayerKind::AveragePooling2D:
            if (dx) pool_backward(a, dz, dx, n, scratch);
            return;
        case LayerKind::GlobalAveragePooling2D:
            if (dx) global_pool_backward(a, dz, dx, n);
            return;
        case LayerKind::Flatten:
            if (dx) std::copy(dz, dz + a.in.size() * std::size_t(n), dx);
            return;
        case LayerKind::BatchNormalization:
            batchnorm_backward(a, params, x, dz, grad, dx, n, scratch);
            return;
        case LayerKind::Dense:
            break;
    }
    fail(ErrorKind::Internal, "dense layer routed to the layer dispatch");
}

void store_moving_statistics(const LayerArgs& a, float* params, const LayerScratch& scratch) {
    if (a.layer.kind == LayerKind::BatchNormalization) batchnorm_store(a, params, scratch);
}

}  // namespace hopper::layers
