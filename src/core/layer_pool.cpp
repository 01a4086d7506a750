// MaxPooling2D, AveragePooling2D and GlobalAveragePooling2D over HWC images, with Keras'
// (TensorFlow's) semantics: windows are clipped to the image, so with padding "same" padded
// elements never win a maximum and an average is over the window's valid elements only. Max
// pooling sends the gradient to the first maximum of a window in row-major order (ties: the
// earliest element, as TensorFlow's CPU kernels do), remembered as the argmax of the forward pass.
#include <algorithm>

#include "layers.h"

namespace hopper::layers {

using Index = Eigen::Index;

namespace {

// The window of output position (oy, ox), clipped to the image: rows [y0, y1), columns [x0, x1).
struct Span {
    int y0, y1, x0, x1;
};
Span span(const Window& w, int oy, int ox) {
    const int top = oy * w.s_h - w.pad_top, left = ox * w.s_w - w.pad_left;
    return Span{std::max(top, 0), std::min(top + w.k_h, w.in_h), std::max(left, 0), std::min(left + w.k_w, w.in_w)};
}

}  // namespace

void pool_forward(const LayerArgs& a, const float* x, float* z, Index n, LayerScratch& s) {
    const Window w = window_of(a.layer, a.in);
    const Index c = w.channels;
    const Index in_size = Index(w.in_h) * w.in_w * c, out_size = Index(w.out_h) * w.out_w * c;
    const bool max = a.layer.kind == LayerKind::MaxPooling2D;
    if (max && Index(s.argmax.size()) < out_size * n) s.argmax.resize(std::size_t(out_size * n));
    for (Index j = 0; j < n; ++j) {
        const float* img = x + j * in_size;
        float* out = z + j * out_size;
        int32_t* arg = max ? s.argmax.data() + j * out_size : nullptr;
        for (int oy = 0; oy < w.out_h; ++oy)
            for (int ox = 0; ox < w.out_w; ++ox) {
                const Span sp = span(w, oy, ox);
                const Index o = (Index(oy) * w.out_w + ox) * c;
                float* dst = out + o;
                if (max) {
                    // Every window holds at least one valid element (output_length guarantees it).
                    const Index first = (Index(sp.y0) * w.in_w + sp.x0) * c;
                    for (Index ch = 0; ch < c; ++ch) {
                        dst[ch] = img[first + ch];
                        arg[o + ch] = int32_t(first + ch);
                    }
                    for (int iy = sp.y0; iy < sp.y1; ++iy)
                        for (int ix = sp.x0; ix < sp.x1; ++ix) {
                            const Index base = (Index(iy) * w.in_w + ix) * c;
                            for (Index ch = 0; ch < c; ++ch)
                                if (img[base + ch] > dst[ch]) {
                                    dst[ch] = img[base + ch];
                                    arg[o + ch] = int32_t(base + ch);
                                }
                        }
                } else {
                    std::fill(dst, dst + c, 0.0f);
                    for (int iy = sp.y0; iy < sp.y1; ++iy)
                        for (int ix = sp.x0; ix < sp.x1; ++ix) {
                            const float* src = img + (Index(iy) * w.in_w + ix) * c;
                            for (Index ch = 0; ch < c; ++ch) dst[ch] += src[ch];
                        }
                    const float inv = 1.0f / float((sp.y1 - sp.y0) * (sp.x1 - sp.x0));
                    for (Index ch = 0; ch < c; ++ch) dst[ch] *= inv;
                }
            }
    }
}

void pool_backward(const LayerArgs& a, const float* dz, float* dx, Index n, const LayerScratch& s) {
    const Window w = window_of(a.layer, a.in);
    const Index c = w.channels;
    const Index in_size = Index(w.in_h) * w.in_w * c, out_size = Index(w.out_h) * w.out_w * c;
    std::fill(dx, dx + in_size * n, 0.0f);
    if (a.layer.kind == LayerKind::MaxPooling2D) {
        for (Index j = 0; j < n; ++j) {
            float* img = dx + j * in_size;
            const float* g = dz + j * out_size;
            const int32_t* arg = s.argmax.data() + j * out_size;
            for (Index o = 0; o < out_size; ++o) img[arg[o]] += g[o];
        }
        return;
    }
    for (Index j = 0; j < n; ++j) {
        float* img = dx + j * in_size;
        const float* g = dz + j * out_size;
        for (int oy = 0; oy < w.out_h; ++oy)
            for (int ox = 0; ox < w.out_w; ++ox) {
                const Span sp = span(w, oy, ox);
                const float* src = g + (Index(oy) * w.out_w + ox) * c;
                const float inv = 1.0f / float((sp.y1 - sp.y0) * (sp.x1 - sp.x0));
                for (int iy = sp.y0; iy < sp.y1; ++iy)
                    for (int ix = sp.x0; ix < sp.x1; ++ix) {
                        float* d = img + (Index(iy) * w.in_w + ix) * c;
                        for (Index ch = 0; ch < c; ++ch) d[ch] += src[ch] * inv;
                    }
            }
    }
}

void global_pool_forward(const LayerArgs& a, const float* x, float* z, Index n) {
    const Index c = a.in.channels, positions = Index(a.in.height) * a.in.width;
    const float inv = 1.0f / float(positions);
    for (Index j = 0; j < n; ++j) {
        const float* img = x + j * positions * c;
        float* out = z + j * c;
        std::fill(out, out + c, 0.0f);
        for (Index p = 0; p < positions; ++p)
            for (Index ch = 0; ch < c; ++ch) out[ch] += img[p * c + ch];
        for (Index ch = 0; ch < c; ++ch) out[ch] *= inv;
    }
}

void global_pool_backward(const LayerArgs& a, const float* dz, float* dx, Index n) {
    const Index c = a.in.channels, positions = Index(a.in.height) * a.in.width;
    const float inv = 1.0f / float(positions);
    for (Index j = 0; j < n; ++j) {
        const float* g = dz + j * c;
        float* img = dx + j * positions * c;
        for (Index p = 0; p < positions; ++p)
            for (Index ch = 0; ch < c; ++ch) img[p * c + ch] = g[ch] * inv;
    }
}

namespace {

// MaxPooling2D and AveragePooling2D: a window per channel, strides defaulting to the pool size.
class PoolingType : public LayerType {
public:
    PoolingType(LayerKind kind, const char* token) : LayerType(kind), token_(token) {}
    TensorShape output_shape(const Layer& l, const TensorShape& in) const override {
        return window_output_shape(l, in, in.channels);
    }
    void check_input(const Layer& l, const TensorShape& in, const std::string& label) const override {
        require_image(l, in, label);
        check_window(l, in, label, "pool_size");
    }
    // Max pooling keeps, per output value, the input it came from.
    uint64_t argmax_per_row(const Layer& l, const TensorShape& out) const override {
        return l.kind == LayerKind::MaxPooling2D ? out.size() : 0;
    }
    std::string shape_token(const Layer& l) const override {
        return window_token(token_ + std::to_string(l.kernel_h) + "x" + std::to_string(l.kernel_w), l, true);
    }
    void forward(const LayerArgs& a, const float*, const float* x, float* z, Index n, bool,
                 LayerScratch& s) const override {
        pool_forward(a, x, z, n, s);
    }
    void backward(const LayerArgs& a, const float*, const float*, const float* dz, float*, float* dx, Index n,
                  LayerScratch& s) const override {
        if (dx) pool_backward(a, dz, dx, n, s);
    }

private:
    std::string token_;
};

class GlobalAveragePoolingType : public LayerType {
public:
    GlobalAveragePoolingType() : LayerType(LayerKind::GlobalAveragePooling2D) {}
    TensorShape output_shape(const Layer&, const TensorShape& in) const override {
        TensorShape out;
        out.channels = in.channels;
        return out;
    }
    void check_input(const Layer& l, const TensorShape& in, const std::string& label) const override {
        require_image(l, in, label);
    }
    std::string shape_token(const Layer&) const override { return "gap"; }
    void forward(const LayerArgs& a, const float*, const float* x, float* z, Index n, bool,
                 LayerScratch&) const override {
        global_pool_forward(a, x, z, n);
    }
    void backward(const LayerArgs& a, const float*, const float*, const float* dz, float*, float* dx, Index n,
                  LayerScratch&) const override {
        if (dx) global_pool_backward(a, dz, dx, n);
    }
};

}  // namespace

const LayerType& max_pooling2d_layer() {
    static const PoolingType t(LayerKind::MaxPooling2D, "maxpool");
    return t;
}

const LayerType& average_pooling2d_layer() {
    static const PoolingType t(LayerKind::AveragePooling2D, "avgpool");
    return t;
}

const LayerType& global_average_pooling2d_layer() {
    static const GlobalAveragePoolingType t;
    return t;
}

}  // namespace hopper::layers
