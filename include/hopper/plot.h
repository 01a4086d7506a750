// Learning curves as pictures: an SVG line chart (one line per configuration, the best one
// highlighted, a configuration evaluated once drawn as a dot) whose legend names what tells the
// configurations apart, and a one-line text sparkline, for hopper.learning_curves_svg and
// hopper.sparkline.
#pragma once

#include <string>
#include <vector>

namespace hopper {

struct CurvePoint {
    double x;  // iteration
    double y;  // metric value; NaN (not finite) leaves a gap; a point alone between gaps is a dot
};

struct Curve {
    std::string label;  // shown in the legend, XML-escaped
    std::vector<CurvePoint> points;
    bool highlight = false;  // drawn thicker, on top, marked in the legend
};

struct ChartText {
    std::string title, x_label, y_label;
};

// A self-contained SVG document (width x height pixels; wider when the legend needs it). No curves
// or no finite point: a chart that says so. Every text is escaped; numbers on the axes are rounded
// for reading. The legend lists the first 30 curves, and the highlighted one wherever it is.
std::string learning_curves_svg(const std::vector<Curve>& curves, const ChartText& text, int width = 720,
                                int height = 420);

// What tells configurations apart, for legends: each configuration's settings are a JSON object
// (hopper's model_config: architecture, compile, fit); its label lists the settings whose values
// differ between the configurations that have them as "name=value" pairs sorted by name, e.g.
// "lr=0.001, optimizer=Adam" ("" when nothing differs). Settings only some configurations have (an
// Adam's beta_1 beside SGDs) are listed only when two labels would otherwise read the same while
// their configurations differ. A setting is named by the last part of its
// path -- an optimizer's "name" by "optimizer", "learning_rate" as "lr" -- with as much of the path
// as keeps it unique ("layers[1].units"); an array of plain values is one value ("[3,3]"). Text that
// is not a JSON object counts as one setting named "config".
std::vector<std::string> distinguishing_labels(const std::vector<std::string>& settings_json);

// One character per value from the eight block heights (U+2581..U+2588), scaled between the finite
// minimum and maximum; a space for a value that is not finite. Empty input: "".
std::string sparkline(const std::vector<double>& values);

// &, <, >, " and ' as XML entities; other control characters dropped.
std::string xml_escape(const std::string& s);

}  // namespace hopper
