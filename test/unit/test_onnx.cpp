// ONNX export and import (hopper/onnx.h): hopper's models round-trip exactly (architecture and every
// parameter); graphs in PyTorch's layout (NCHW input, Gemm with transB, a Flatten of NCHW) import
// as the same function of hopper's HWC rows; bad files get clear errors. ONNX Runtime's view of the
// exported graphs is tested against hopper.predict in test/scripts/onnx_roundtrip.sh.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "error_helpers.h"
#include "hopper/config.h"
#include "hopper/network.h"
#include "hopper/onnx.h"
#include "hopper/recipe.h"
#include "hopper/rng.h"
#include "onnx_proto.h"

using namespace hopper;
using hopper::test::detail_of;
using hopper::test::hint_of;
using hopper::test::kind_of;
using hopper::test::message_of;

namespace {

std::vector<float> random_params(const Architecture& arch, uint64_t seed) {
    const Network net(arch);
    std::vector<float> p(net.num_params());
    net.initialize(p.data(), seed);
    // Non-trivial biases and batch-normalization statistics (initialize gives 0, 0, 1).
    for (std::size_t i = 0; i < p.size(); ++i) p[i] += 0.01f * float(int(i % 7) - 3);
    for (const LayerSlice& s : net.slices())
        if (s.stats_offset)
            for (std::size_t i = s.stats_offset; i < s.end_offset; ++i) p[i] = 0.5f + 0.001f * float(i % 11);
    return p;
}

MatrixF forward(const Architecture& arch, const std::vector<float>& params, const std::vector<float>& rows, int n) {
    const Network net(arch);
    ConstMatrixMap x(rows.data(), arch.input_dim, n);
    MatrixF out;
    net.predict(params.data(), x, out);
    return out;
}

void expect_round_trip(const std::string& json) {
    const Architecture arch = parse_architecture(json);
    const std::vector<float> params = random_params(arch, 7);
    const std::string bytes = export_onnx(arch, params, OnnxExportOptions{});
    const OnnxImported back = import_onnx(bytes);
    EXPECT_EQ(back.arch.to_json(), arch.to_json());
    ASSERT_EQ(back.params.size(), params.size());
    for (std::size_t i = 0; i < params.size(); ++i) ASSERT_EQ(back.params[i], params[i]) << "parameter " << i;
    EXPECT_EQ(back.producer, "hopper");
}

const char* kMlp = R"({"input_dim": 5, "layers": [{"units": 8, "activation": "relu", "dropout": 0.2},
    {"type": "batch_normalization", "activation": "tanh"}, {"units": 6, "activation": "sigmoid", "use_bias": false},
    {"units": 3, "activation": "softmax"}]})";
const char* kCnn = R"({"input_shape": [7, 6, 2], "layers": [
    {"type": "conv2d", "filters": 3, "kernel_size": [3, 2], "activation": "relu", "padding": "same"},
    {"type": "batch_normalization"},
    {"type": "max_pooling2d", "pool_size": [2, 2], "padding": "same"},
    {"type": "conv2d", "filters": 4, "kernel_size": 2, "strides": [1, 2]},
    {"type": "average_pooling2d", "pool_size": [2, 1], "strides": [1, 1], "padding": "same"},
    {"type": "flatten", "dropout": 0.1}, {"units": 4, "activation": "softmax"}]})";
const char* kGap = R"({"input_shape": [5, 5, 3], "layers": [
    {"type": "conv2d", "filters": 4, "kernel_size": 3, "activation": "tanh", "use_bias": false},
    {"type": "global_average_pooling2d"}, {"units": 2, "activation": "linear"}]})";

}  // namespace

TEST(Onnx, MlpRoundTripsExactly) { expect_round_trip(kMlp); }
TEST(Onnx, CnnRoundTripsExactly) { expect_round_trip(kCnn); }
TEST(Onnx, GlobalPoolingRoundTripsExactly) { expect_round_trip(kGap); }

TEST(Onnx, ExportWritesOpsetMetadataAndScaling) {
    const Architecture arch = parse_architecture(kMlp);
    OnnxExportOptions o;
    o.class_values = {"a", "b\"c", "d"};
    o.scaling.normalizing_const = 255.0;
    o.scaling.center = {1, 2, 3, 4, 5};
    o.scaling.spread = {1, 1, 2, 2, 3};
    o.producer_version = "0.2.0";
    onnx::ModelProto m;
    ASSERT_TRUE(m.ParseFromString(export_onnx(arch, random_params(arch, 1), o)));
    ASSERT_EQ(m.opset_import_size(), 1);
    EXPECT_EQ(m.opset_import(0).version(), kOnnxOpset);
    EXPECT_EQ(m.producer_version(), "0.2.0");
    std::string classes;
    for (const auto& e : m.metadata_props())
        if (e.key() == "class_values") classes = e.value();
    EXPECT_EQ(classes, R"(["a","b\"c","d"])");
    ASSERT_GE(m.graph().node_size(), 3);
    EXPECT_EQ(m.graph().node(0).op_type(), "Mul");
    EXPECT_EQ(m.graph().node(1).op_type(), "Sub");
    EXPECT_EQ(m.graph().node(2).op_type(), "Div");
    EXPECT_EQ(m.graph().input(0).name(), "input");
    EXPECT_EQ(m.graph().output(0).name(), "output");
    // A graph with the scaling in it imports only without it (an architecture has no scaling).
    const std::string bytes = export_onnx(arch, random_params(arch, 1), o);
    EXPECT_EQ(kind_of([&] { import_onnx(bytes); }), ErrorKind::FeatureNotSupported);
    EXPECT_NE(message_of([&] { import_onnx(bytes); }).find("\"Mul\""), std::string::npos);
}

namespace {

// A graph as torch.onnx.export writes a small CNN: NCHW input, Conv, Relu, Flatten, Gemm (transB).
struct TorchLike {
    onnx::ModelProto m;
    onnx::GraphProto* g;
    TorchLike() : g(m.mutable_graph()) {
        m.set_ir_version(7);
        m.add_opset_import()->set_version(13);
        m.set_producer_name("pytorch");
    }
    void input(const std::vector<int64_t>& dims) {
        auto* v = g->add_input();
        v->set_name("x");
        auto* t = v->mutable_type()->mutable_tensor_type();
        t->set_elem_type(onnx::TensorProto::FLOAT);
        t->mutable_shape()->add_dim()->set_dim_param("batch");
        for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
    }
    void init(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& v) {
        auto* t = g->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::FLOAT);
        for (int64_t d : dims) t->add_dims(d);
        for (float f : v) t->add_float_data(f);
    }
    onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& in, const std::string& out) {
        auto* n = g->add_node();
        n->set_op_type(op);
        n->set_name("/" + op + "_" + out);
        for (const auto& i : in) n->add_input(i);
        n->add_output(out);
        return n;
    }
    void init_int64(const std::string& name, const std::vector<int64_t>& dims, const std::vector<int64_t>& v) {
        auto* t = g->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::INT64);
        for (int64_t d : dims) t->add_dims(d);
        for (int64_t x : v) t->add_int64_data(x);
    }
    void output(const std::string& name) { g->add_output()->set_name(name); }
    std::string bytes() const { return m.SerializeAsString(); }
};

void int_attr(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
}

std::vector<float> ramp(std::size_t n, float scale) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = scale * float(int(i % 13) - 6);
    return v;
}

}  // namespace

TEST(Onnx, TorchLayoutCnnComputesTheSameFunctionOfHwcRows) {
    // x [N, 2, 3, 3] -> Conv(2->2, 2x2, valid) -> Relu -> Flatten (CHW order) -> Gemm(8 -> 3, transB).
    TorchLike t;
    t.input({2, 3, 3});
    const std::vector<float> k = ramp(2 * 2 * 2 * 2, 0.1f), kb = {0.05f, -0.02f};
    const std::vector<float> w = ramp(3 * 8, 0.07f), wb = {0.1f, 0.0f, -0.1f};
    t.init("k", {2, 2, 2, 2}, k);
    t.init("kb", {2}, kb);
    t.init("w", {3, 8}, w);
    t.init("wb", {3}, wb);
    t.node("Conv", {"x", "k", "kb"}, "c");
    t.node("Relu", {"c"}, "r");
    int_attr(t.node("Flatten", {"r"}, "f"), "axis", 1);
    int_attr(t.node("Gemm", {"f", "w", "wb"}, "y"), "transB", 1);
    t.output("y");
    const OnnxImported im = import_onnx(t.bytes());
    EXPECT_EQ(im.arch.shape_string(), "3x3x2-conv2x2x2-flatten-3");
    EXPECT_EQ(im.producer, "pytorch");

    // The reference: the ONNX graph computed by hand on an NCHW image.
    const std::vector<float> chw = ramp(18, 0.3f);
    std::vector<float> conv(2 * 2 * 2);  // [m][y][x]
    for (int m = 0; m < 2; ++m)
        for (int y = 0; y < 2; ++y)
            for (int x = 0; x < 2; ++x) {
                float s = kb[m];
                for (int c = 0; c < 2; ++c)
                    for (int i = 0; i < 2; ++i)
                        for (int j = 0; j < 2; ++j)
                            s += k[std::size_t(((m * 2 + c) * 2 + i) * 2 + j)] *
                                 chw[std::size_t((c * 3 + y + i) * 3 + x + j)];
                conv[std::size_t((m * 2 + y) * 2 + x)] = std::max(s, 0.0f);
            }
    std::vector<float> ref(3);
    for (int u = 0; u < 3; ++u) {
        float s = wb[u];
        for (int i = 0; i < 8; ++i) s += w[std::size_t(u * 8 + i)] * conv[std::size_t(i)];
        ref[std::size_t(u)] = s;
    }
    // hopper's row: the same image channels-last.
    std::vector<float> hwc(18);
    for (int c = 0; c < 2; ++c)
        for (int y = 0; y < 3; ++y)
            for (int x = 0; x < 3; ++x) hwc[std::size_t((y * 3 + x) * 2 + c)] = chw[std::size_t((c * 3 + y) * 3 + x)];
    const MatrixF out = forward(im.arch, im.params, hwc, 1);
    for (int u = 0; u < 3; ++u) EXPECT_NEAR(out(u, 0), ref[std::size_t(u)], 1e-5f) << "output " << u;
}

TEST(Onnx, MatMulAddAndBatchNormImport) {
    TorchLike t;
    t.input({3});
    t.init("w", {3, 2}, {1, 2, 3, 4, 5, 6});
    t.init("b", {2}, {0.5f, -0.5f});
    for (const char* n : {"g", "be", "mu", "var"}) t.init(n, {2}, {1.5f, 0.25f});
    t.node("MatMul", {"x", "w"}, "m");
    t.node("Add", {"m", "b"}, "a");
    t.node("BatchNormalization", {"a", "g", "be", "mu", "var"}, "bn");
    t.node("Sigmoid", {"bn"}, "y");
    t.output("y");
    const OnnxImported im = import_onnx(t.bytes());
    EXPECT_EQ(im.arch.shape_string(), "3-2-bn");
    EXPECT_EQ(im.arch.layers[1].activation, Activation::Sigmoid);
    EXPECT_EQ(im.arch.layers[1].epsilon, 1e-5);
    EXPECT_EQ(im.arch.layers[1].momentum, 0.9);
}

TEST(Onnx, BadFilesGetClearErrors) {
    EXPECT_EQ(kind_of([] { import_onnx(""); }), ErrorKind::Data);
    EXPECT_EQ(kind_of([] { import_onnx("\xff\xff\xff\xff garbage"); }), ErrorKind::Data);
    const Architecture arch = parse_architecture(kCnn);
    const std::string good = export_onnx(arch, random_params(arch, 3), OnnxExportOptions{});
    // Every truncation is refused with an error of its own, never a crash.
    for (std::size_t n = 1; n < good.size(); n += 1 + n / 8) {
        const ErrorKind k = kind_of([&] { import_onnx(good.substr(0, n)); });
        EXPECT_TRUE(k == ErrorKind::Data || k == ErrorKind::FeatureNotSupported) << "at " << n;
    }
}

TEST(Onnx, UnsupportedOperatorIsNamedWithItsNode) {
    TorchLike t;
    t.input({3});
    t.init("w", {2, 3}, ramp(6, 1));
    int_attr(t.node("Gemm", {"x", "w"}, "g"), "transB", 1);
    t.node("LeakyRelu", {"g"}, "y");
    t.output("y");
    EXPECT_EQ(kind_of([&] { import_onnx(t.bytes()); }), ErrorKind::FeatureNotSupported);
    EXPECT_EQ(message_of([&] { import_onnx(t.bytes()); }),
              "ONNX operator \"LeakyRelu\" (node \"/LeakyRelu_y\") is not supported: hopper has no layer for it");
}

TEST(Onnx, ModelsBeyondTheLimitsAreRefused) {
    // An image of 2,000,000 values per row: beyond hopper's 1,000,000 (54000).
    TorchLike t;
    t.input({1, 1000, 2000});
    t.init("k", {1, 1, 1, 1}, {1});
    t.node("Conv", {"x", "k"}, "c");
    t.node("GlobalAveragePool", {"c"}, "p");
    int_attr(t.node("Flatten", {"p"}, "f"), "axis", 1);
    t.output("f");
    EXPECT_EQ(kind_of([&] { import_onnx(t.bytes()); }), ErrorKind::Limit);
}

TEST(Onnx, Int64WeightsAreRefusedNamingTheTensor) {
    // Read as weights, an int64 tensor left the floats empty and the kernel loops read through a
    // null pointer: a Gemm, a MatMul, a Conv, a bias and a normalization's statistics.
    auto refused = [](TorchLike& t) {
        EXPECT_EQ(kind_of([&] { import_onnx(t.bytes()); }), ErrorKind::FeatureNotSupported);
        EXPECT_NE(message_of([&] { import_onnx(t.bytes()); }).find("holds int64 values"), std::string::npos);
    };
    {
        TorchLike t;
        t.input({3});
        t.init_int64("w", {2, 3}, {1, 2, 3, 4, 5, 6});
        int_attr(t.node("Gemm", {"x", "w"}, "y"), "transB", 1);
        t.output("y");
        refused(t);
    }
    {
        TorchLike t;
        t.input({3});
        t.init("w", {2, 3}, ramp(6, 1));
        t.init_int64("b", {2}, {1, 2});
        int_attr(t.node("Gemm", {"x", "w", "b"}, "y"), "transB", 1);
        t.output("y");
        refused(t);
    }
    {
        TorchLike t;
        t.input({3});
        t.init_int64("w", {3, 2}, {1, 2, 3, 4, 5, 6});
        t.node("MatMul", {"x", "w"}, "y");
        t.output("y");
        refused(t);
    }
    {
        TorchLike t;
        t.input({1, 4, 4});
        t.init_int64("k", {2, 1, 1, 1}, {1, 2});
        t.node("Conv", {"x", "k"}, "y");
        t.output("y");
        refused(t);
    }
    {
        TorchLike t;
        t.input({2});
        for (const char* n : {"g", "be", "mu"}) t.init(n, {2}, {1.5f, 0.25f});
        t.init_int64("var", {2}, {1, 1});
        t.node("BatchNormalization", {"x", "g", "be", "mu", "var"}, "y");
        t.output("y");
        refused(t);
    }
}

TEST(Onnx, AFlattenBeyondTheRowLimitIsRefusedBeforeItIsSized) {
    // A 1x1 convolution of 2 filters over a 1000 x 1000 image, flattened: 2,000,000 values a row.
    // The flatten's reordering was sized (8 bytes a value) before the architecture's check refused
    // it: a 16384 x 16384 input took 2.1 GB from a 156-byte file.
    TorchLike t;
    t.input({1, 1000, 1000});
    t.init("k", {2, 1, 1, 1}, {1, 2});
    t.node("Conv", {"x", "k"}, "c");
    int_attr(t.node("Flatten", {"c"}, "f"), "axis", 1);
    t.output("f");
    EXPECT_EQ(kind_of([&] { import_onnx(t.bytes()); }), ErrorKind::Limit);
    EXPECT_NE(message_of([&] { import_onnx(t.bytes()); }).find("flattened image is too large"), std::string::npos);
    // A flat input beyond the limit too.
    TorchLike flat;
    flat.input({2000000});
    flat.init("w", {2000000, 1}, std::vector<float>(1, 0.0f));
    flat.node("MatMul", {"x", "w"}, "y");
    flat.output("y");
    EXPECT_EQ(kind_of([&] { import_onnx(flat.bytes()); }), ErrorKind::Limit);
}

// torch.onnx writes nn.AvgPool2d(2) as a Pad of zeros before its AveragePool (every opset torch 1.13
// writes): a no-op, read through. Padding of its own, and a shape read while the graph runs (the
// x.view(x.size(0), -1) idiom), are refused saying what to change; a float64 tensor or input is
// named as DOUBLE (it read "element type 11"), and a graph's outputs are named.
TEST(Onnx, ZeroPadsPassAndUnsupportedExportsSayWhatToChange) {
    auto pooled = [](const std::vector<int64_t>& pads) {
        TorchLike t;
        t.input({1, 4, 4});
        t.init_int64("pads", {8}, pads);
        t.node("Pad", {"x", "pads"}, "p");
        auto* pool = t.node("AveragePool", {"p"}, "a");
        auto* k = pool->add_attribute();
        k->set_name("kernel_shape");
        k->set_type(onnx::AttributeProto::INTS);
        k->add_ints(2);
        k->add_ints(2);
        auto* st = pool->add_attribute();
        st->set_name("strides");
        st->set_type(onnx::AttributeProto::INTS);
        st->add_ints(2);
        st->add_ints(2);
        int_attr(t.node("Flatten", {"a"}, "f"), "axis", 1);
        t.init("w", {4, 2}, ramp(8, 1));
        t.node("MatMul", {"f", "w"}, "y");
        t.output("y");
        return t;
    };
    const OnnxImported im = import_onnx(pooled({0, 0, 0, 0, 0, 0, 0, 0}).bytes());
    EXPECT_EQ(im.arch.layers[0].kind, LayerKind::AveragePooling2D);
    EXPECT_EQ(im.arch.input_dim, 16);
    TorchLike padded = pooled({0, 0, 1, 1, 0, 0, 1, 1});
    EXPECT_EQ(kind_of([&] { import_onnx(padded.bytes()); }), ErrorKind::FeatureNotSupported);
    EXPECT_NE(hint_of([&] { import_onnx(padded.bytes()); }).find("padding \"same\""), std::string::npos);

    TorchLike viewed;
    viewed.input({1, 2, 2});
    viewed.node("Shape", {"x"}, "s");
    viewed.output("s");
    EXPECT_NE(hint_of([&] { import_onnx(viewed.bytes()); }).find("torch.flatten(x, 1)"), std::string::npos);

    TorchLike doubles;
    doubles.input({3});
    auto* w = doubles.g->add_initializer();
    w->set_name("w");
    w->set_data_type(onnx::TensorProto::DOUBLE);
    w->add_dims(3);
    w->add_dims(2);
    for (int i = 0; i < 6; ++i) w->add_double_data(i);
    doubles.node("MatMul", {"x", "w"}, "y");
    doubles.output("y");
    EXPECT_NE(message_of([&] { import_onnx(doubles.bytes()); }).find("element type DOUBLE"), std::string::npos);
    EXPECT_NE(hint_of([&] { import_onnx(doubles.bytes()); }).find("model.float()"), std::string::npos);

    TorchLike two;
    two.input({3});
    two.init("w", {3, 2}, ramp(6, 1));
    two.node("MatMul", {"x", "w"}, "y");
    two.output("y");
    two.output("z");
    EXPECT_NE(detail_of([&] { import_onnx(two.bytes()); }).find("\"y\", \"z\""), std::string::npos);
}

TEST(Onnx, WeightsThatDoNotFitTheirShapeAreCorrupt) {
    TorchLike t;
    t.input({3});
    t.init("w", {2, 3}, ramp(5, 1));  // 5 values for 6
    int_attr(t.node("Gemm", {"x", "w"}, "y"), "transB", 1);
    t.output("y");
    EXPECT_EQ(kind_of([&] { import_onnx(t.bytes()); }), ErrorKind::Data);
}

TEST(Onnx, RecipeModelTakesTheRawColumnsByName) {
    // A recipe of a numeric column with a missing indicator and a one-hot categorical (x, y, <null>,
    // <unknown>): 6 features.
    RecipeFitter fitter({ColumnSpec{"a", ColumnKind::Numeric, Imputation::Mean, 0.0, true, ScaleKind::Standardize},
                         ColumnSpec{"b", ColumnKind::Categorical}});
    fitter.add({Cell(1.0), Cell("x")});
    fitter.add({Cell(3.0), Cell("y")});
    fitter.add({Cell(std::nullopt), Cell(std::nullopt)});
    const Recipe recipe = fitter.finish();
    ASSERT_EQ(recipe.width(), 6);
    const Architecture arch =
        parse_architecture(R"({"input_dim": 6, "layers": [{"units": 2, "activation": "softmax"}]})");
    OnnxExportOptions o;
    o.recipe_json = recipe.to_json();
    onnx::ModelProto m;
    ASSERT_TRUE(m.ParseFromString(export_onnx(arch, random_params(arch, 2), o)));
    ASSERT_EQ(m.graph().input_size(), 2);
    EXPECT_EQ(m.graph().input(0).name(), "a");
    EXPECT_EQ(m.graph().input(0).type().tensor_type().elem_type(), onnx::TensorProto::FLOAT);
    EXPECT_EQ(m.graph().input(1).name(), "b");
    EXPECT_EQ(m.graph().input(1).type().tensor_type().elem_type(), onnx::TensorProto::STRING);
    std::vector<std::string> ops;
    for (const auto& n : m.graph().node()) ops.push_back(n.domain() + ":" + n.op_type());
    for (const char* op :
         {"ai.onnx.ml:Imputer", ":IsNaN", "ai.onnx.ml:LabelEncoder", "ai.onnx.ml:OneHotEncoder", ":Concat"})
        EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op;
    // A recipe of another width than the model's input is refused.
    const Architecture wider =
        parse_architecture(R"({"input_dim": 7, "layers": [{"units": 2, "activation": "softmax"}]})");
    EXPECT_EQ(kind_of([&] { export_onnx(wider, random_params(wider, 2), o); }), ErrorKind::Data);
}

TEST(Onnx, CharColumnsMapTheirBlankPaddedValuesAsTheTrimmedOnes) {
    // A categorical column read from char(4): its categories are trimmed ("ab", "é"), drivers hand
    // the values padded to 4 characters ("ab  ", "é   ": two bytes, three blanks); both map to one
    // slot. A column without a width gets no padded keys.
    RecipeFitter fitter({ColumnSpec{"k", ColumnKind::Categorical}, ColumnSpec{"j", ColumnKind::Categorical}});
    fitter.add({Cell("ab"), Cell("ab")});
    fitter.add({Cell("\xc3\xa9"), Cell("cd")});
    const Recipe recipe = fitter.finish();
    const Architecture arch = parse_architecture("{\"input_dim\": " + std::to_string(recipe.width()) +
                                                 ", \"layers\": [{\"units\": 2, \"activation\": \"softmax\"}]}");
    OnnxExportOptions o;
    o.recipe_json = recipe.to_json();
    o.char_widths = {{"k", 4}};
    onnx::ModelProto m;
    ASSERT_TRUE(m.ParseFromString(export_onnx(arch, random_params(arch, 2), o)));
    std::vector<std::map<std::string, int64_t>> encoders;
    for (const auto& n : m.graph().node()) {
        if (n.op_type() != "LabelEncoder") continue;
        std::vector<std::string> keys;
        std::vector<int64_t> values;
        for (const auto& a : n.attribute()) {
            if (a.name() == "keys_strings") keys.assign(a.strings().begin(), a.strings().end());
            if (a.name() == "values_int64s") values.assign(a.ints().begin(), a.ints().end());
        }
        ASSERT_EQ(keys.size(), values.size());
        std::map<std::string, int64_t> map;
        for (std::size_t i = 0; i < keys.size(); ++i) EXPECT_TRUE(map.emplace(keys[i], values[i]).second) << keys[i];
        encoders.push_back(map);
    }
    ASSERT_EQ(encoders.size(), 2u);
    const auto& k = encoders[0];
    ASSERT_TRUE(k.count("ab") && k.count("ab  ") && k.count("\xc3\xa9") && k.count("\xc3\xa9   "));
    EXPECT_EQ(k.at("ab"), k.at("ab  "));
    EXPECT_EQ(k.at("\xc3\xa9"), k.at("\xc3\xa9   "));
    EXPECT_NE(k.at("ab"), k.at("\xc3\xa9"));
    EXPECT_EQ(k.at(""), k.at("    "));
    EXPECT_EQ(encoders[1].count("ab  "), 0u);
    EXPECT_EQ(encoders[1].size(), 3u);  // ab, cd and "" (NULL)
}

TEST(Onnx, ColumnsNamedLikeTheGraphsOwnNamesStayUnique) {
    // Columns named "output" (the graph's output) and "a_center_1" (what the scaling's first
    // initializer would be named): every value of the graph still has a name of its own, or
    // onnxruntime refuses the file ("Duplicate definition of name (output)").
    RecipeFitter fitter(
        {ColumnSpec{"output", ColumnKind::Numeric, Imputation::Mean, 0.0, false, ScaleKind::Standardize},
         ColumnSpec{"a_center_1", ColumnKind::Numeric, Imputation::Mean, 0.0, false, ScaleKind::Standardize}});
    fitter.add({Cell(1.0), Cell(2.0)});
    fitter.add({Cell(3.0), Cell(5.0)});
    OnnxExportOptions o;
    o.recipe_json = fitter.finish().to_json();
    const Architecture arch =
        parse_architecture(R"({"input_dim": 2, "layers": [{"units": 2, "activation": "softmax"}]})");
    onnx::ModelProto m;
    ASSERT_TRUE(m.ParseFromString(export_onnx(arch, random_params(arch, 2), o)));
    EXPECT_EQ(onnx_output_name(o.recipe_json), "output_");
    ASSERT_EQ(m.graph().output_size(), 1);
    EXPECT_EQ(m.graph().output(0).name(), "output_");
    std::set<std::string> defined;
    for (const auto& i : m.graph().input()) EXPECT_TRUE(defined.insert(i.name()).second) << i.name();
    for (const auto& t : m.graph().initializer()) EXPECT_TRUE(defined.insert(t.name()).second) << t.name();
    for (const auto& n : m.graph().node())
        for (const auto& out : n.output()) EXPECT_TRUE(defined.insert(out).second) << out;
    EXPECT_EQ(onnx_output_name(""), "output");
}

TEST(Onnx, NhwcInputTransposedToNchwIsHoppersLayout) {
    // tf2onnx's form of a Keras model: x [N, 3, 3, 2] (NHWC), Transpose to NCHW, Conv, Transpose back,
    // Flatten, Gemm: hopper's rows are that NHWC input as it is, and no weights are reordered.
    TorchLike t;
    t.input({3, 3, 2});
    t.init("k", {2, 2, 2, 2}, ramp(16, 0.1f));
    t.init("w", {8, 3}, ramp(24, 0.07f));
    auto perm = [](onnx::NodeProto* n, std::vector<int64_t> p) {
        auto* a = n->add_attribute();
        a->set_name("perm");
        a->set_type(onnx::AttributeProto::INTS);
        for (int64_t v : p) a->add_ints(v);
    };
    perm(t.node("Transpose", {"x"}, "nchw"), {0, 3, 1, 2});
    t.node("Conv", {"nchw", "k"}, "c");
    perm(t.node("Transpose", {"c"}, "nhwc"), {0, 2, 3, 1});
    int_attr(t.node("Flatten", {"nhwc"}, "f"), "axis", 1);
    t.node("Gemm", {"f", "w"}, "y");
    t.output("y");
    const OnnxImported im = import_onnx(t.bytes());
    EXPECT_EQ(im.arch.shape_string(), "3x3x2-conv2x2x2-flatten-3");
    // The Dense kernel is the Gemm's B as it is (Keras order, no CHW permutation).
    const Network net(im.arch);
    const LayerSlice& dense = net.slices()[2];
    const std::vector<float> w = ramp(24, 0.07f);
    for (std::size_t i = 0; i < w.size(); ++i) EXPECT_EQ(im.params[dense.weight_offset + i], w[i]);
}
