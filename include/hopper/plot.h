// Learning curves as pictures: an SVG line chart (one line per configuration, the best one
// highlighted) and a one-line text sparkline, for hopper.learning_curves_svg and hopper.sparkline.
#pragma once

#include <string>
#include <vector>

namespace hopper {

struct CurvePoint {
    double x;  // iteration
    double y;  // metric value; NaN (not finite) leaves a gap
};

struct Curve {
    std::string label;  // shown in the legend, XML-escaped
    std::vector<CurvePoint> points;
    bool highlight = false;  // drawn thicker, on top, marked in the legend
};

struct ChartText {
    std::string title, x_label, y_label;
};

// A self-contained SVG document (width x height pixels). No curves or no finite point: a chart that
// says so. Every text is escaped; numbers on the axes are rounded for reading.
std::string learning_curves_svg(const std::vector<Curve>& curves, const ChartText& text, int width = 720,
                                int height = 420);

// One character per value from the eight block heights (U+2581..U+2588), scaled between the finite
// minimum and maximum; a space for a value that is not finite. Empty input: "".
std::string sparkline(const std::vector<double>& values);

// &, <, >, " and ' as XML entities; other control characters dropped.
std::string xml_escape(const std::string& s);

}  // namespace hopper
