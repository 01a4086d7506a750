// Learning-curve pictures (include/hopper/plot.h): the SVG's structure, escaping, gaps, dots for
// lone points and the best curve; legend labels that tell configurations apart; the sparkline's
// levels and gaps.
#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "hopper/plot.h"

using namespace hopper;

namespace {

int count(const std::string& s, const std::string& what) {
    int n = 0;
    for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + what.size())) ++n;
    return n;
}

const double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

TEST(Plot, OneLinePerCurveTheBestOnTopAndNamedInTheLegend) {
    std::vector<Curve> curves = {{"mst_key 1: SGD", {{1, 0.7}, {2, 0.8}, {3, 0.82}}, false},
                                 {"mst_key 2: Adam", {{1, 0.75}, {2, 0.85}, {3, 0.87}}, true},
                                 {"mst_key 3", {{1, 0.5}, {2, 0.6}}, false}};
    const std::string svg = learning_curves_svg(curves, {"run 7", "iteration", "validation accuracy"});
    EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
    EXPECT_NE(svg.find("</svg>"), std::string::npos);
    EXPECT_EQ(count(svg, "<polyline"), 3);
    EXPECT_EQ(count(svg, "class=\"curve best\""), 1);
    // The highlighted line is drawn last (on top).
    EXPECT_GT(svg.find("class=\"curve best\""), svg.rfind("class=\"curve\""));
    EXPECT_NE(svg.find("mst_key 2: Adam (best)"), std::string::npos);
    EXPECT_NE(svg.find(">iteration</text>"), std::string::npos);
    EXPECT_NE(svg.find(">validation accuracy</text>"), std::string::npos);
    EXPECT_NE(svg.find(">run 7</text>"), std::string::npos);
    // Every point inside the plot area.
    EXPECT_EQ(svg.find("nan"), std::string::npos);
    EXPECT_EQ(svg.find("inf"), std::string::npos);
}

TEST(Plot, LabelsAreEscaped) {
    std::vector<Curve> curves = {{"<script>alert('x')</script> & \"q\"\x01", {{1, 1.0}, {2, 2.0}}, true}};
    const std::string svg = learning_curves_svg(curves, {"a<b", "x&y", "\"y\""});
    EXPECT_EQ(svg.find("<script>"), std::string::npos);
    EXPECT_NE(svg.find("&lt;script&gt;alert(&apos;x&apos;)&lt;/script&gt; &amp; &quot;q&quot;"), std::string::npos);
    EXPECT_EQ(svg.find('\x01'), std::string::npos);
    EXPECT_NE(svg.find("a&lt;b"), std::string::npos);
    EXPECT_NE(svg.find("x&amp;y"), std::string::npos);
}

TEST(Plot, NotFiniteValuesLeaveGaps) {
    std::vector<Curve> curves = {{"diverged", {{1, 0.5}, {2, 0.6}, {3, kNaN}, {4, 0.7}, {5, 0.8}}, false}};
    const std::string svg = learning_curves_svg(curves, {"", "iteration", "loss"});
    EXPECT_EQ(count(svg, "<polyline"), 2);  // before and after the gap
    EXPECT_EQ(svg.find("nan"), std::string::npos);
}

TEST(Plot, NothingToPlotSaysSo) {
    for (const auto& curves : {std::vector<Curve>{}, std::vector<Curve>{{"only NaN", {{1, kNaN}}, false}}}) {
        const std::string svg = learning_curves_svg(curves, {"empty", "iteration", "accuracy"});
        EXPECT_NE(svg.find("no finite values to plot"), std::string::npos);
        EXPECT_EQ(count(svg, "<polyline"), 0);
        EXPECT_NE(svg.find("</svg>"), std::string::npos);
    }
    // One point, or a flat curve: a usable scale, no division by zero.
    const std::string one = learning_curves_svg({{"one", {{1, 0.5}}, true}}, {"", "", ""});
    EXPECT_EQ(one.find("nan"), std::string::npos);
    EXPECT_EQ(count(one, "<circle class=\"marker best\""), 1);
}

// A run evaluated only at its last iteration (fit_multiple's default) has one point per
// configuration: a polyline of one point draws nothing, so each is a dot of its curve's colour.
TEST(Plot, APointAloneIsADot) {
    std::vector<Curve> curves = {{"mst_key 1", {{10, 0.7}}, false}, {"mst_key 2", {{10, 0.9}}, true}};
    const std::string svg = learning_curves_svg(curves, {"", "iteration", "accuracy"});
    EXPECT_EQ(count(svg, "<polyline"), 0);
    EXPECT_EQ(count(svg, "<circle class=\"marker\""), 1);
    EXPECT_EQ(count(svg, "<circle class=\"marker best\""), 1);
    EXPECT_NE(svg.find("r=\"4\" fill=\"#4e79a7\"><title>mst_key 1</title></circle>"), std::string::npos);
    EXPECT_EQ(svg.find("nan"), std::string::npos);
    // Iterations are whole numbers: around the one iteration, ticks 9, 10, 11 and nothing between.
    EXPECT_NE(svg.find(">10</text>"), std::string::npos);
    EXPECT_EQ(svg.find(">10.5</text>"), std::string::npos);
    // The legend shows dots for them too.
    EXPECT_EQ(count(svg, "<circle cx="), 2);
    EXPECT_EQ(count(svg, "stroke-width"), 0);  // no line of a curve, in the plot or the legend
    // Between gaps too; longer stretches stay lines.
    const std::string gaps =
        learning_curves_svg({{"c", {{1, 0.5}, {2, kNaN}, {3, 0.6}, {4, kNaN}, {5, 0.7}, {6, 0.8}}, false}},
                            {"", "iteration", "loss"});
    EXPECT_EQ(count(gaps, "<circle"), 2);
    EXPECT_EQ(count(gaps, "<polyline"), 1);
}

TEST(Plot, TheLegendListsTheBestCurveEvenBeyondItsFirstThirty) {
    std::vector<Curve> curves;
    for (int i = 0; i < 40; ++i)
        curves.push_back({"mst_key " + std::to_string(i), {{1, 0.5}, {2, 0.1 * (i % 7)}}, i == 35});
    const std::string svg = learning_curves_svg(curves, {"", "iteration", "loss"});
    EXPECT_NE(svg.find(">mst_key 35 (best)</text>"), std::string::npos);
    EXPECT_EQ(svg.find(">mst_key 36</text>"), std::string::npos);
    EXPECT_NE(svg.find(">... 9 more</text>"), std::string::npos);
}

namespace {

std::string config(const std::string& optimizer, const std::string& lr, const std::string& units = "16") {
    return R"({"architecture": {"input_dim": 4, "layers": [{"units": )" + units +
           R"(, "activation": "relu"}, {"units": 3, "activation": "softmax"}]}, "compile": {"loss": "softmax_cross_entropy",)"
           R"( "metrics": ["accuracy"], "optimizer": {"name": ")" +
           optimizer + R"(", "learning_rate": )" + lr + R"(, "decay": 0}}, "fit": {"batch_size": 16, "epochs": 1}})";
}

}  // namespace

// The old legend was the compile parameters cut at 48 characters: configurations that differ only
// in their learning rate read the same. A label names what differs, and only that.
TEST(Plot, LabelsNameWhatTellsConfigurationsApart) {
    const std::vector<std::string> labels =
        distinguishing_labels({config("Adam", "0.001"), config("SGD", "0.01"), config("Adam", "0.01")});
    EXPECT_EQ(labels, (std::vector<std::string>{"lr=0.001, optimizer=Adam", "lr=0.01, optimizer=SGD",
                                                "lr=0.01, optimizer=Adam"}));
    // Nothing differs, or one configuration: nothing to say.
    EXPECT_EQ(distinguishing_labels({config("SGD", "0.1"), config("SGD", "0.1")}), (std::vector<std::string>{"", ""}));
    EXPECT_EQ(distinguishing_labels({config("SGD", "0.1")}), std::vector<std::string>{""});
    EXPECT_TRUE(distinguishing_labels({}).empty());
}

// Thousands of differing settings (a trial's model_config is its owner's to write): full paths,
// not the shortening that compares every path with every other (120,000 keys took 33 s, deaf to
// cancel), and a legend line cut after 400 bytes.
TEST(Plot, ManyDifferingSettingsAreLabelledInLinearTime) {
    std::string a = "{", b = "{";
    for (int k = 0; k < 50000; ++k) {
        a += std::string(k ? "," : "") + "\"k" + std::to_string(k) + "\": {\"v\": 1}";
        b += std::string(k ? "," : "") + "\"k" + std::to_string(k) + "\": {\"v\": 2}";
    }
    a += "}";
    b += "}";
    const std::vector<std::string> labels = distinguishing_labels({a, b});
    ASSERT_EQ(labels.size(), 2u);
    EXPECT_EQ(labels[0].substr(0, 14), "k0.v=1, k1.v=1");
    EXPECT_LT(labels[0].size(), 500u);
    EXPECT_EQ(labels[0].substr(labels[0].size() - 5), ", ...");
    EXPECT_NE(labels[0], labels[1]);
}

TEST(Plot, LabelsSayWhichLayerAndKeepNamesUnique) {
    // A layer's setting names its layer; two settings called epsilon keep as much path as they need.
    EXPECT_EQ(distinguishing_labels({config("SGD", "0.1", "16"), config("SGD", "0.1", "64")}),
              (std::vector<std::string>{"layers[0].units=16", "layers[0].units=64"}));
    const std::vector<std::string> labels = distinguishing_labels(
        {R"({"a": {"epsilon": 0.1}, "layers": [{"epsilon": 1}], "metrics": ["accuracy"]})",
         R"({"a": {"epsilon": 0.2}, "layers": [{"epsilon": 2}], "metrics": ["accuracy", "top_k_accuracy"]})"});
    EXPECT_EQ(labels,
              (std::vector<std::string>{"a.epsilon=0.1, layers[0].epsilon=1, metrics=[accuracy]",
                                        "a.epsilon=0.2, layers[0].epsilon=2, metrics=[accuracy,top_k_accuracy]"}));
}

TEST(Plot, LabelsOfEmptyKeysAboveArrays) {
    // An empty key above an array of objects (a trial's model_config any role can write): its path
    // element is "" + "[0]"; it crashed the server (an empty path popped).
    EXPECT_EQ(distinguishing_labels({R"({"": [{}]})", R"({"": [{}]})"}), (std::vector<std::string>{"", ""}));
    EXPECT_EQ(distinguishing_labels(
                  {R"({"": [{"u": 1}], "x": {"": [[{"v": 1}]]}})", R"({"": [{"u": 2}], "x": {"": [[{"v": 1}]]}})"}),
              (std::vector<std::string>{"[0].u=1", "[0].u=2"}));
}

TEST(Plot, LabelsOfSettingsSomeConfigurationsLack) {
    // Adam's betas and Momentum's momentum come with the optimizer: its name says enough.
    EXPECT_EQ(distinguishing_labels({R"({"optimizer": {"name": "SGD", "learning_rate": 0.1}})",
                                     R"({"optimizer": {"name": "Momentum", "learning_rate": 0.1, "momentum": 0.9}})",
                                     R"({"optimizer": {"name": "Adam", "learning_rate": 0.01, "beta_1": 0.9}})"}),
              (std::vector<std::string>{"lr=0.1, optimizer=SGD", "lr=0.1, optimizer=Momentum",
                                        "lr=0.01, optimizer=Adam"}));
    // Unless that is all that differs; momenta that differ are named.
    EXPECT_EQ(distinguishing_labels({R"({"lr": 0.1, "dropout": 0.5})", R"({"lr": 0.1})"}),
              (std::vector<std::string>{"dropout=0.5", ""}));
    EXPECT_EQ(distinguishing_labels({R"({"optimizer": {"name": "Momentum", "momentum": 0.9}})",
                                     R"({"optimizer": {"name": "Momentum", "momentum": 0.99}})",
                                     R"({"optimizer": {"name": "SGD"}})"}),
              (std::vector<std::string>{"momentum=0.9, optimizer=Momentum", "momentum=0.99, optimizer=Momentum",
                                        "optimizer=SGD"}));
    // Text that is not a JSON object is one setting.
    EXPECT_EQ(distinguishing_labels({"not json", "[1, 2]", "{}"}),
              (std::vector<std::string>{"config=not json", "config=[1,2]", ""}));
}

TEST(Plot, Sparkline) {
    EXPECT_EQ(sparkline({}), "");
    EXPECT_EQ(sparkline({0.0, 1.0}), "\u2581\u2588");
    EXPECT_EQ(sparkline({1.0, kNaN, 0.0}), "\u2588 \u2581");
    EXPECT_EQ(sparkline({2.0, 2.0}), "\u2584\u2584");  // flat: the middle
    EXPECT_EQ(sparkline({kNaN}), " ");
    const std::string s = sparkline({0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8});
    EXPECT_EQ(s, "\u2581\u2582\u2583\u2584\u2585\u2586\u2587\u2588");
}
