// Learning-curve pictures (include/hopper/plot.h): the SVG's structure, escaping, gaps and the
// best curve; the sparkline's levels and gaps.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

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
    EXPECT_EQ(count(one, "<polyline"), 1);
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
