// The layers other than Dense, behind one small interface: shape rules and checks, parameter
// counts, per-row memory, initialisation, and the forward and backward pass of one layer over a
// batch. Dense layers stay in network.cpp, whose arithmetic hopper's stored models and tests pin
// bit for bit. Not installed.
//
// Data: a batch is (features x n), column-major, one sample per column; an image sample holds
// height*width*channels values in HWC order, so an image batch is also a (channels x positions*n)
// matrix, which is how Conv2D, pooling and batch normalization see it.
//
// Each kind is one LayerType subclass (below) in its layer_*.cpp file, registered by one line in
// layer_type() (layers.cpp); docs/DEVELOPING.md says what else a new kind needs.
#pragma once

#include <cstdint>
#include <string>

#include "hopper/config.h"
#include "hopper/network.h"

namespace hopper::layers {

// Floats per row hopper allows for one row's activations (every layer's output) and convolution
// patches (one image's of every Conv2D layer), together: 64 Mi floats (256 MiB). Larger feature maps are refused when
// the architecture is parsed (Limit). No dense architecture can reach it (64 layers of at most 10^6 units are 6.4e7 <
// 2^26 floats), so it never refuses a model hopper accepted before.
constexpr uint64_t kMaxRowFloats = uint64_t(1) << 26;

// Floats of one chunk of Conv2D patches (im2col): 64 Ki floats, 256 KB, so that the patch matrix
// stays in the L2 cache while the GEMMs read it (layer_conv.cpp has the measurements). A chunk
// holds at least one image's patches, whatever their size.
constexpr uint64_t kPatchChunkFloats = uint64_t(1) << 16;

// a * b, saturating at UINT64_MAX (sizes of absurd layers are compared with limits, never used).
uint64_t mul_sat(uint64_t a, uint64_t b);
uint64_t add_sat(uint64_t a, uint64_t b);

// Window arithmetic of Conv2D and pooling layers, Keras' (conv_utils.conv_output_length): "valid"
// gives floor((in - kernel) / stride) + 1 positions (none if the kernel is larger than the input),
// "same" ceil(in / stride), padded by max((out - 1) * stride + kernel - in, 0) of which the smaller
// half goes on top/left (TensorFlow's rule, which Keras 3 follows on every backend).
int64_t output_length(int64_t in, int64_t kernel, int64_t stride, Padding padding);

struct Window {
    int in_h, in_w, channels;
    int k_h, k_w, s_h, s_w;
    int out_h, out_w;
    int pad_top, pad_left;
};
Window window_of(const Layer& l, const TensorShape& in);
// The image a window kind outputs on `in`: its positions, `channels` deep (none if it does not fit).
TensorShape window_output_shape(const Layer& l, const TensorShape& in, int channels);

// Output shape of `l` on input `in`, without checks (a validated architecture).
TensorShape output_shape(const Layer& l, const TensorShape& in);
// The same, after checking that `l` applies to `in`: Dense needs a flat input, Conv2D and pooling
// an image whose (padded) size holds the window, every output at most kMaxRowFloats values.
// Throws hopper::Error (InvalidParameter, or Limit for sizes) naming the layer by `label`.
TensorShape checked_output_shape(const Layer& l, const TensorShape& in, const std::string& label);

// Floats of parameters of `l` on input `in` (saturating): Dense and Conv2D weights and biases;
// BatchNormalization gamma (if scale), beta (if center), moving mean and variance.
uint64_t param_count(const Layer& l, const TensorShape& in);

// Floats of Conv2D's patches (im2col) of one image on `in`; 0 for other layers and for 1x1
// convolutions with stride 1, which read their input directly.
uint64_t columns_per_row(const Layer& l, const TensorShape& in);
// Floats of the patch buffer a Conv2D layer keeps (a chunk of images, see kPatchChunkFloats) for
// batches of `batch` rows; 0 where columns_per_row is 0.
uint64_t patch_buffer_floats(const Layer& l, const TensorShape& in, uint64_t batch);

// "conv3x3x32", "maxpool2x2_s1_same", "gap", ... for shape_string(); Dense: its units.
std::string shape_token(const Layer& l);

// One layer of a network, as the functions below see it.
struct LayerArgs {
    const Layer& layer;
    const TensorShape& in;
    const TensorShape& out;
    const LayerSlice& slice;
};

// Initial parameters of a layer without a kernel (BatchNormalization: gamma 1, beta 0, moving
// mean 0, moving variance 1; Embedding: uniform in [-0.05, 0.05] from the layer's own stream
// `seed`). Kernels (Dense, Conv2D) are drawn by Network::initialize.
void initialize(const LayerArgs& a, float* params, uint64_t seed);

// Pre-activation output z (out.size() x n) of x (in.size() x n). Training keeps in `scratch` what
// backward needs (argmax, batch statistics) and uses batch statistics for batch normalization;
// inference uses the moving statistics. Buffers in `scratch` only grow.
void forward(const LayerArgs& a, const float* params, const float* x, float* z, Eigen::Index n, bool training,
             LayerScratch& scratch);

// After a training forward: the parameter gradient (mean over the batch: dz already carries the
// 1/n) into grad at the layer's slice, every entry of the slice written (0 for moving statistics),
// and dL/dx into dx unless dx is null. x is the forward's input, intact.
void backward(const LayerArgs& a, const float* params, const float* x, const float* dz, float* grad, float* dx,
              Eigen::Index n, LayerScratch& scratch);

// Writes the moving statistics updated by the last training forward into params
// (BatchNormalization; nothing for other layers or before any training forward).
void store_moving_statistics(const LayerArgs& a, float* params, const LayerScratch& scratch);

// One kind of layer, as the core sees it: shape rules and their checks, parameter layout, per-row
// memory, initialisation, the forward and backward pass. The free functions above and below
// dispatch to it.
class LayerType {
public:
    explicit LayerType(LayerKind kind) : kind_(kind) {}
    virtual ~LayerType() = default;
    LayerKind kind() const { return kind_; }

    // Output shape on `in`, without checks (a validated architecture).
    virtual TensorShape output_shape(const Layer& l, const TensorShape& in) const = 0;
    // Refuses an input the layer does not apply to, naming it by `label` (checked_output_shape
    // then checks the output's size, output_values).
    virtual void check_input(const Layer& l, const TensorShape& in, const std::string& label) const {}
    // Values of one row's output, unclamped (the shape's channels saturate at INT_MAX).
    virtual uint64_t output_values(const Layer& l, const TensorShape& in) const { return output_shape(l, in).size(); }
    // Parameter floats (saturating), and their layout from `offset` (end_offset is one past them):
    // none by default. Valid sizes only (Network builds it for a validated architecture).
    virtual uint64_t param_count(const Layer& l, const TensorShape& in) const { return 0; }
    virtual LayerSlice slice(const Layer& l, const TensorShape& in, std::size_t offset) const;
    // A kernel Network::initialize draws (units x inputs of the slice) with the layer's initializer,
    // and its fan-out (Keras' fans); kinds without one return 0 and initialize their own parameters.
    virtual double kernel_fan_out(const Layer& l, const LayerSlice& s) const { return 0.0; }
    // Workspace: floats of patches (im2col) of one image kept while training; 32-bit argmax
    // entries per row kept from forward to backward (max pooling).
    virtual uint64_t columns_per_row(const Layer& l, const TensorShape& in) const { return 0; }
    virtual uint64_t argmax_per_row(const Layer& l, const TensorShape& out) const { return 0; }
    // The token in shape_string().
    virtual std::string shape_token(const Layer& l) const = 0;
    // Initial parameters other than kernels (Network::initialize draws those); `seed` is the
    // layer's own stream.
    virtual void initialize(const LayerArgs& a, float* params, uint64_t seed) const {}
    virtual void forward(const LayerArgs& a, const float* params, const float* x, float* z, Eigen::Index n,
                         bool training, LayerScratch& scratch) const = 0;
    virtual void backward(const LayerArgs& a, const float* params, const float* x, const float* dz, float* grad,
                          float* dx, Eigen::Index n, LayerScratch& scratch) const = 0;
    virtual void store_moving_statistics(const LayerArgs& a, float* params, const LayerScratch& scratch) const {}

private:
    LayerKind kind_;
};

// The registered kind of `kind`; Internal for a value outside the enum.
const LayerType& layer_type(LayerKind kind);

// The kinds, each defined in its file (registered in layer_type()).
const LayerType& dense_layer();                     // layers.cpp (arithmetic in network.cpp)
const LayerType& flatten_layer();                   // layers.cpp
const LayerType& conv2d_layer();                    // layer_conv.cpp
const LayerType& max_pooling2d_layer();             // layer_pool.cpp
const LayerType& average_pooling2d_layer();         // layer_pool.cpp
const LayerType& global_average_pooling2d_layer();  // layer_pool.cpp
const LayerType& batch_normalization_layer();       // layer_batchnorm.cpp
const LayerType& embedding_layer();                 // layer_embedding.cpp

// The layout of a kernel kind (Dense, Conv2D): `units` columns of `inputs` weights, then `units`
// biases if use_bias.
LayerSlice kernel_slice(const Layer& l, std::size_t offset, int inputs, int units);

// Shared by the kinds: refuses a flat input of a kind that needs an image; refuses a window
// (`what`: "kernel_size", "pool_size") that does not fit the input; the shape token of a window
// kind ("conv3x3x32", "maxpool2x2_s1_same": strides and padding where they differ from the kind's
// default, strides of 1 or the window's size).
void require_image(const Layer& l, const TensorShape& in, const std::string& label);
void check_window(const Layer& l, const TensorShape& in, const std::string& label, const char* what);
std::string window_token(std::string prefix, const Layer& l, bool stride_defaults_to_window);

// The kinds' implementations (layer_conv.cpp, layer_pool.cpp, layer_batchnorm.cpp).
void conv_forward(const LayerArgs& a, const float* params, const float* x, float* z, Eigen::Index n, LayerScratch& s);
void conv_backward(const LayerArgs& a, const float* params, const float* x, const float* dz, float* grad, float* dx,
                   Eigen::Index n, LayerScratch& s);
void pool_forward(const LayerArgs& a, const float* x, float* z, Eigen::Index n, LayerScratch& s);
void pool_backward(const LayerArgs& a, const float* dz, float* dx, Eigen::Index n, const LayerScratch& s);
void global_pool_forward(const LayerArgs& a, const float* x, float* z, Eigen::Index n);
void global_pool_backward(const LayerArgs& a, const float* dz, float* dx, Eigen::Index n);
void batchnorm_forward(const LayerArgs& a, const float* params, const float* x, float* z, Eigen::Index n, bool training,
                       LayerScratch& s);
void batchnorm_backward(const LayerArgs& a, const float* params, const float* x, const float* dz, float* grad,
                        float* dx, Eigen::Index n, LayerScratch& s);
void batchnorm_store(const LayerArgs& a, float* params, const LayerScratch& s);

}  // namespace hopper::layers
