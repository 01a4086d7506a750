// A regression target standardized for training (Architecture::target_scaling): the network fits
// (y - offset) / scale, and every output, loss and metric is in the target's own units. Checked
// here: the canonical JSON and equality, resolve_inputs, the gradient (that of the standardized
// target), the outputs and totals (own units), training on a target of 1e5 with the default
// learning rate, model states, and ONNX export (Mul and Add after the output) and import.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "error_helpers.h"
#include "hopper/config.h"
#include "hopper/metrics.h"
#include "hopper/network.h"
#include "hopper/onnx.h"
#include "hopper/rng.h"
#include "hopper/state_format.h"
#include "hopper/trainer.h"
#include "onnx_proto.h"

using namespace hopper;
using hopper::test::kind_of;
using hopper::test::message_of;

namespace {

const char* kRegressor = R"({"input_dim": 3, "layers": [{"units": 8, "activation": "tanh"}, {"units": 1}]})";

Architecture scaled(const char* json, float offset, float scale) {
    Architecture a = parse_architecture(json);
    a.target_scaling = TargetScaling{offset, scale};
    return a;
}

std::vector<float> values(std::size_t n, uint64_t seed, double lo, double hi) {
    Rng rng(seed);
    std::vector<float> v(n);
    for (float& x : v) x = float(lo + (hi - lo) * rng.uniform());
    return v;
}

}  // namespace

TEST(TargetScaling, CanonicalJsonCarriesItOnlyWhenSet) {
    const Architecture plain = parse_architecture(kRegressor);
    EXPECT_EQ(plain.to_json().find("target_scaling"), std::string::npos);
    const Architecture a = scaled(kRegressor, 113706.45f, 30289.04f);
    const std::string json = a.to_json();
    EXPECT_NE(json.find(R"("target_scaling":{"offset":113706.45,"scale":30289.04})"), std::string::npos) << json;
    const Architecture back = parse_architecture(json);
    EXPECT_EQ(back.target_scaling, a.target_scaling);
    EXPECT_EQ(back, a);
    EXPECT_EQ(back.to_json(), json);
    // Part of equality, not of the parameter layout.
    EXPECT_NE(a, plain);
    EXPECT_TRUE(a.same_layers(plain));
    // The model configuration (what model states store) round-trips it.
    const ModelConfig c = resolve_config(a, parse_compile_params(R"({"loss": "mse"})"), FitParams{});
    EXPECT_EQ(parse_model_config(c.to_json()).arch.target_scaling, a.target_scaling);
    // A resume compares configurations without it (it comes from the packed table, as input_dim).
    ModelConfig other = c;
    other.arch.target_scaling = TargetScaling{};
    EXPECT_EQ(configuration_difference(c, other), "");
}

TEST(TargetScaling, RefusedOnBoundedOutputsAndBadValues) {
    const char* sigmoid = R"({"input_dim": 3, "layers": [{"units": 1, "activation": "sigmoid"}],
                              "target_scaling": {"offset": 1, "scale": 2}})";
    EXPECT_EQ(kind_of([&] { parse_architecture(sigmoid); }), ErrorKind::InvalidParameter);
    EXPECT_NE(message_of([&] { parse_architecture(sigmoid); }).find("linear output layer"), std::string::npos);
    for (const char* bad : {R"({"offset": 1, "scale": 0})", R"({"offset": 1, "scale": -2})", R"({"scale": "x"})",
                            R"({"offset": 1e300, "scale": 1})", R"({"offset": 1, "spread": 2})", R"([1, 2])"}) {
        const std::string json =
            R"({"input_dim": 3, "layers": [{"units": 1}], "target_scaling": )" + std::string(bad) + "}";
        EXPECT_EQ(kind_of([&] { parse_architecture(json); }), ErrorKind::InvalidParameter) << bad;
    }
}

TEST(TargetScaling, ResolveInputsTakesThePackedTablesForLinearOutputsOnly) {
    const TargetScaling t{9.03f, 5.14f};
    Architecture a = parse_architecture(R"({"layers": [{"units": 4, "activation": "relu"}, {"units": 1}]})");
    EXPECT_EQ(resolve_inputs(a, 3, nullptr, &t).target_scaling, t);
    EXPECT_TRUE(resolve_inputs(a, 3, nullptr).target_scaling.identity());
    // A sigmoid output cannot reach a standardized target: it keeps the target raw, as before.
    Architecture s = parse_architecture(R"({"layers": [{"units": 1, "activation": "sigmoid"}]})");
    EXPECT_TRUE(resolve_inputs(s, 3, nullptr, &t).target_scaling.identity());
    // An architecture that states one keeps it (it was replaced by the packed table's, a sweep).
    Architecture stated = a;
    stated.target_scaling = TargetScaling{100.0f, 3.0f};
    EXPECT_EQ(resolve_inputs(stated, 3, nullptr, &t).target_scaling, stated.target_scaling);
}

TEST(TargetScaling, OutputsAreInOwnUnitsAndGradientsThoseOfTheStandardizedTarget) {
    const float m = 1000.0f, s = 250.0f;
    const Architecture raw = parse_architecture(kRegressor);
    const Architecture sc = scaled(kRegressor, m, s);
    const Network net_raw(raw), net(sc);
    std::vector<float> params(net.num_params());
    net.initialize(params.data(), 3);
    const int n = 7;
    const std::vector<float> x = values(std::size_t(3) * n, 4, -1, 1);
    const std::vector<float> y = values(std::size_t(n), 5, 500, 1500);
    std::vector<float> ystd(y.size());
    for (std::size_t i = 0; i < y.size(); ++i) ystd[i] = (y[i] - m) / s;
    const ConstMatrixMap xm(x.data(), 3, n), ym(y.data(), 1, n), ysm(ystd.data(), 1, n);

    // Predictions: the last layer's output times scale plus offset.
    MatrixF z, out;
    net_raw.predict(params.data(), xm, z);
    net.predict(params.data(), xm, out);
    for (int j = 0; j < n; ++j) {
        const float times = z(0, j) * s;
        EXPECT_EQ(out(0, j), times + m) << j;
    }

    // The gradient is that of the raw network on the standardized target; the loss and the
    // metrics are those of the outputs in own units against y.
    CompileParams compile = parse_compile_params(R"({"loss": "mse", "metrics": ["mse", "mae"]})");
    std::vector<float> g_raw(net.num_params()), g(net.num_params());
    GradientWorkspace ws_raw(net_raw), ws(net);
    EvalTotals t_raw, t;
    const double l_std =
        ws_raw.loss_and_gradient(params.data(), xm, ysm, Loss::MeanSquaredError, g_raw.data(), 1, &compile, &t_raw);
    const double l = ws.loss_and_gradient(params.data(), xm, ym, Loss::MeanSquaredError, g.data(), 1, &compile, &t);
    EXPECT_EQ(g, g_raw);
    double sq = 0, ab = 0;
    for (int j = 0; j < n; ++j) {
        sq += double(out(0, j) - y[j]) * double(out(0, j) - y[j]);
        ab += std::fabs(double(out(0, j) - y[j]));
    }
    EXPECT_NEAR(l, sq, 1e-9 * sq);
    EXPECT_NEAR(l, l_std * double(s) * double(s), 1e-4 * l);
    EXPECT_NEAR(t.metric(0), sq / n, 1e-6 * sq / n);
    EXPECT_NEAR(t.metric(1), ab / n, 1e-6 * ab / n);
    EXPECT_NEAR(t.loss(), sq / n, 1e-6 * sq / n);

    // Evaluation: the same totals as the training pass made, in own units.
    EvalTotals e;
    MatrixF scratch;
    evaluate_batch(net, params.data(), xm, ym, compile, e, scratch);
    EXPECT_NEAR(e.metric(0), t.metric(0), 1e-6 * t.metric(0));
    EXPECT_NEAR(e.metric(1), t.metric(1), 1e-6 * t.metric(1));
}

// A Salaries-like target (mean 1e5, deviation 3e4): with the default SGD learning rate, the
// standardized model ends far below the MSE of predicting the mean; raw, it does not.
TEST(TargetScaling, TrainsATargetOf1e5WithTheDefaultLearningRate) {
    const int n = 256;
    const std::vector<float> x = values(std::size_t(3) * n, 11, -1.7, 1.7);
    std::vector<float> y(n);
    double mean = 0;
    for (int j = 0; j < n; ++j) mean += (y[j] = 100000.0f + 20000.0f * x[3 * j] - 10000.0f * x[3 * j + 2]);
    mean /= n;
    double var = 0;
    for (float v : y) var += (v - mean) * (v - mean);
    var /= n;
    const auto fit = [&](const Architecture& arch) {
        const ModelConfig c =
            resolve_config(arch, parse_compile_params(R"({"loss": "mse", "optimizer": "SGD", "metrics": ["mse"]})"),
                           parse_fit_params(R"({"batch_size": 16, "epochs": 20})"));
        Trainer t(c);
        for (int e = 0; e < 20; ++e) t.train_buffer(x.data(), y.data(), n);
        EvalTotals totals;
        MatrixF scratch;
        evaluate_batch(t.network(), t.params().data(), ConstMatrixMap(x.data(), 3, n), ConstMatrixMap(y.data(), 1, n),
                       c.compile, totals, scratch);
        return totals.metric(0);
    };
    double sd = std::sqrt(var);
    const double standardized = fit(scaled(kRegressor, float(mean), float(sd)));
    const double raw = fit(parse_architecture(kRegressor));
    EXPECT_LT(standardized, 0.05 * var) << "variance " << var;
    EXPECT_FALSE(raw < 0.5 * var) << "raw " << raw << ", variance " << var;
}

TEST(TargetScaling, ModelStatesKeepIt) {
    const ModelConfig c = resolve_config(scaled(kRegressor, -3.5f, 0.25f), CompileParams{}, FitParams{});
    const Trainer t(c);
    const std::string bytes = serialize_state(t);
    EXPECT_EQ(inspect_state(bytes).config.arch.target_scaling, (TargetScaling{-3.5f, 0.25f}));
    EXPECT_EQ(deserialize_state(bytes).config().arch.target_scaling, (TargetScaling{-3.5f, 0.25f}));
}

TEST(TargetScaling, OnnxExportEndsWithMulAndAddAndImportsBack) {
    const Architecture a = scaled(kRegressor, 113706.45f, 30289.04f);
    const Network net(a);
    std::vector<float> params(net.num_params());
    net.initialize(params.data(), 9);
    const std::string bytes = export_onnx(a, params, OnnxExportOptions{});
    onnx::ModelProto m;
    ASSERT_TRUE(m.ParseFromString(bytes));
    const int k = m.graph().node_size();
    ASSERT_GE(k, 3);
    EXPECT_EQ(m.graph().node(k - 3).op_type(), "Mul");
    EXPECT_EQ(m.graph().node(k - 2).op_type(), "Add");
    EXPECT_EQ(m.graph().node(k - 1).op_type(), "Identity");
    const OnnxImported back = import_onnx(bytes);
    EXPECT_EQ(back.arch, a);
    EXPECT_EQ(back.params, params);
    // The imported model computes what the exported one did, in own units.
    const std::vector<float> x = values(3 * 5, 2, -2, 2);
    MatrixF before, after;
    net.predict(params.data(), ConstMatrixMap(x.data(), 3, 5), before);
    Network(back.arch).predict(back.params.data(), ConstMatrixMap(x.data(), 3, 5), after);
    EXPECT_EQ(before, after);
    EXPECT_GT(before.minCoeff(), 1000.0f);  // around the offset, not around 0
    // Without a scaling, nothing is added (every model exported before keeps its graph).
    onnx::ModelProto plain;
    ASSERT_TRUE(plain.ParseFromString(export_onnx(parse_architecture(kRegressor), params, OnnxExportOptions{})));
    EXPECT_EQ(plain.graph().node(plain.graph().node_size() - 2).op_type(), "Gemm");
}
