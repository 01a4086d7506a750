// Keras' flat weights as MADlib's load_keras_model stores them (float32 bytes in get_weights()
// order) become a hopper model state whose predictions are the Keras model's, computed by hand.

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hopper/config.h"
#include "hopper/error.h"
#include "hopper/network.h"
#include "hopper/state_format.h"
#include "hopper/trainer.h"

using namespace hopper;

namespace {

std::string bytes_of(const std::vector<float>& v) {
    std::string s(4 * v.size(), '\0');
    std::memcpy(&s[0], v.data(), s.size());
    return s;
}

ModelConfig config_of(const std::string& arch) { return resolve_config(parse_architecture(arch), {}, {}); }

}  // namespace

TEST(KerasWeights, DenseKernelInKerasLayoutGivesTheHandComputedPredictions) {
    // Dense(2 -> 3, relu), Dense(3 -> 1, linear). Keras kernels are [in, out] in C order.
    const ModelConfig c = config_of(R"({"input_dim": 2, "layers": [{"units": 3, "activation": "relu"},
        {"units": 1, "activation": "linear"}]})");
    const float k1[2][3] = {{1, 2, -1}, {0.5f, -1, 3}};
    const float b1[3] = {0.1f, 0.2f, 0.3f};
    const float k2[3][1] = {{1}, {-2}, {0.5f}};
    const float b2[1] = {0.25f};
    std::vector<float> flat;
    for (auto& row : k1) flat.insert(flat.end(), row, row + 3);
    flat.insert(flat.end(), b1, b1 + 3);
    for (auto& row : k2) flat.push_back(row[0]);
    flat.push_back(b2[0]);
    const std::string state = state_from_weights(bytes_of(flat), c);
    const FrozenModel m = load_frozen_model(state);
    EXPECT_EQ(m.config.arch, c.arch);
    const float x[2][2] = {{1, 2}, {-1, 0.5f}};
    MatrixF out;
    Network net(m.config.arch);
    net.predict(m.params.data(), ConstMatrixMap(&x[0][0], 2, 2), out);
    for (int r = 0; r < 2; ++r) {
        float h[3];
        for (int j = 0; j < 3; ++j) h[j] = std::max(0.0f, x[r][0] * k1[0][j] + x[r][1] * k1[1][j] + b1[j]);
        const float want = h[0] * k2[0][0] + h[1] * k2[1][0] + h[2] * k2[2][0] + b2[0];
        EXPECT_FLOAT_EQ(out(0, r), want) << r;
    }
    // Row 0 by hand: h = relu(1+1+0.1, 2-2+0.2, -1+6+0.3) = (2.1, 0.2, 5.3); 2.1 - 0.4 + 2.65 + 0.25.
    EXPECT_FLOAT_EQ(out(0, 0), 4.6f);
    // A hopper model state is taken as it is.
    EXPECT_EQ(state_from_weights(state, c), state);
}

TEST(KerasWeights, Conv2DKernelIsKerasHwioLayout) {
    // One 2x2 filter over a 2x2x2 image: out = sum over kh, kw, in of x[kh][kw][in] * k[kh][kw][in][0] + b.
    const ModelConfig c = config_of(R"({"input_shape": [2, 2, 2], "layers": [
        {"type": "conv2d", "filters": 1, "kernel_size": 2}, {"type": "flatten"}, {"units": 1}]})");
    std::vector<float> flat;
    for (int i = 0; i < 8; ++i) flat.push_back(float(i + 1));  // k[kh][kw][in][0]
    flat.push_back(0.5f);                                      // conv bias
    flat.push_back(2.0f);                                      // dense kernel [1, 1]
    flat.push_back(-1.0f);                                     // dense bias
    const FrozenModel m = load_frozen_model(state_from_weights(bytes_of(flat), c));
    std::vector<float> x = {1, 0, 0, 1, 1, 1, 2, -1};  // [h][w][c]
    MatrixF out;
    Network(m.config.arch).predict(m.params.data(), ConstMatrixMap(x.data(), 8, 1), out);
    float conv = 0.5f;
    for (int i = 0; i < 8; ++i) conv += x[std::size_t(i)] * float(i + 1);
    EXPECT_FLOAT_EQ(out(0, 0), 2.0f * conv - 1.0f);
}

TEST(KerasWeights, WrongLengthNamesExpectedAndActualBytes) {
    const ModelConfig c = config_of(R"({"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]})");
    try {
        state_from_weights(std::string(32, '\0'), c);
        FAIL() << "accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::InvalidParameter);
        EXPECT_NE(e.message().find("model_weights have 32 bytes; the architecture 2-3 needs 36"), std::string::npos)
            << e.message();
    }
    std::vector<float> nan(9, 0.0f);
    nan[4] = std::nanf("");
    EXPECT_THROW(state_from_weights(bytes_of(nan), c), Error);
}
