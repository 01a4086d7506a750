#include "hopper/plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace hopper {

namespace {

// Ten colours that stay apart for most eyes (Tableau 10).
const char* const kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

std::string number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

std::string fixed(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
}

// About five round tick values covering [lo, hi] (1, 2 or 5 times a power of ten apart).
std::vector<double> ticks(double lo, double hi) {
    if (!(hi > lo)) return {lo};
    const double raw = (hi - lo) / 5.0;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    const double step = raw / mag < 1.5 ? mag : raw / mag < 3.5 ? 2 * mag : raw / mag < 7.5 ? 5 * mag : 10 * mag;
    std::vector<double> out;
    for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9 && out.size() < 20; t += step)
        out.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
    return out;
}

}  // namespace

std::string xml_escape(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (unsigned char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&apos;"; break;
            default:
                if (c >= 0x20 || c == '\t') out += char(c);  // XML 1.0 has no other control characters
        }
    }
    return out;
}

std::string learning_curves_svg(const std::vector<Curve>& curves, const ChartText& text, int width, int height) {
    width = std::clamp(width, 200, 4000);
    height = std::clamp(height, 150, 4000);
    double x0 = std::numeric_limits<double>::infinity(), x1 = -x0, y0 = x0, y1 = -x0;
    for (const Curve& c : curves)
        for (const CurvePoint& p : c.points)
            if (std::isfinite(p.x) && std::isfinite(p.y)) {
                x0 = std::min(x0, p.x), x1 = std::max(x1, p.x), y0 = std::min(y0, p.y), y1 = std::max(y1, p.y);
            }
    const bool empty = !std::isfinite(x0);
    if (!empty) {
        if (x1 == x0) x0 -= 1, x1 += 1;
        if (y1 == y0) y0 -= std::max(std::fabs(y0) * 0.05, 1e-6), y1 += std::max(std::fabs(y1) * 0.05, 1e-6);
        const double pad = (y1 - y0) * 0.05;
        y0 -= pad, y1 += pad;
    }
    // Plot area, then the legend to its right, as wide as its longest label needs (~7.2 px per
    // character at 12 px, bold included): the document grows rather than cutting labels.
    std::size_t longest = 0;
    for (const Curve& c : curves) longest = std::max(longest, c.label.size() + (c.highlight ? 7 : 0));
    const double legend = std::clamp(56 + 7.2 * double(longest), 120.0, 640.0);
    const double left = 64, top = 40, right = width - 190.0, bottom = height - 48.0;
    width = int(right + legend);
    auto px = [&](double x) { return left + (x - x0) / (x1 - x0) * (right - left); };
    auto py = [&](double y) { return bottom - (y - y0) / (y1 - y0) * (bottom - top); };

    std::string s;
    s += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) + "\" height=\"" +
         std::to_string(height) + "\" viewBox=\"0 0 " + std::to_string(width) + " " + std::to_string(height) +
         "\" font-family=\"sans-serif\" font-size=\"12\">\n";
    s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    s += "<text class=\"title\" x=\"" + fixed(width / 2.0) + "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">" +
         xml_escape(text.title) + "</text>\n";
    if (empty) {
        s += "<text class=\"no-data\" x=\"" + fixed(width / 2.0) + "\" y=\"" + fixed(height / 2.0) +
             "\" text-anchor=\"middle\">no finite values to plot</text>\n</svg>\n";
        return s;
    }
    // Axes, grid and tick labels.
    s += "<g class=\"axes\" stroke=\"#333\">\n";
    s += "<line x1=\"" + fixed(left) + "\" y1=\"" + fixed(bottom) + "\" x2=\"" + fixed(right) + "\" y2=\"" + fixed(bottom) + "\"/>\n";
    s += "<line x1=\"" + fixed(left) + "\" y1=\"" + fixed(top) + "\" x2=\"" + fixed(left) + "\" y2=\"" + fixed(bottom) + "\"/>\n";
    s += "</g>\n<g class=\"ticks\" fill=\"#333\">\n";
    for (double t : ticks(x0, x1))
        s += "<text x=\"" + fixed(px(t)) + "\" y=\"" + fixed(bottom + 16) + "\" text-anchor=\"middle\">" + number(t) + "</text>\n";
    for (double t : ticks(y0, y1)) {
        s += "<line x1=\"" + fixed(left) + "\" y1=\"" + fixed(py(t)) + "\" x2=\"" + fixed(right) + "\" y2=\"" + fixed(py(t)) +
             "\" stroke=\"#e5e5e5\"/>\n";
        s += "<text x=\"" + fixed(left - 6) + "\" y=\"" + fixed(py(t) + 4) + "\" text-anchor=\"end\">" + number(t) + "</text>\n";
    }
    s += "</g>\n";
    s += "<text class=\"x-label\" x=\"" + fixed((left + right) / 2) + "\" y=\"" + fixed(height - 12.0) +
         "\" text-anchor=\"middle\">" + xml_escape(text.x_label) + "</text>\n";
    s += "<text class=\"y-label\" transform=\"translate(16," + fixed((top + bottom) / 2) +
         ") rotate(-90)\" text-anchor=\"middle\">" + xml_escape(text.y_label) + "</text>\n";
    // Lines: the highlighted one last, so it is on top; a gap where a value is not finite.
    std::vector<std::size_t> order(curves.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_partition(order.begin(), order.end(), [&](std::size_t i) { return !curves[i].highlight; });
    s += "<g class=\"curves\" fill=\"none\">\n";
    for (std::size_t i : order) {
        const Curve& c = curves[i];
        const std::string colour = kPalette[i % (sizeof kPalette / sizeof *kPalette)];
        const std::string stroke = "stroke=\"" + colour + "\" stroke-width=\"" + (c.highlight ? "3.5" : "1.5") + "\"";
        std::string pts;
        auto flush = [&] {
            if (!pts.empty())
                s += "<polyline class=\"curve" + std::string(c.highlight ? " best" : "") + "\" " + stroke +
                     " points=\"" + pts + "\"><title>" + xml_escape(c.label) + "</title></polyline>\n";
            pts.clear();
        };
        for (const CurvePoint& p : c.points) {
            if (!std::isfinite(p.x) || !std::isfinite(p.y)) {
                flush();
                continue;
            }
            if (!pts.empty()) pts += ' ';
            pts += fixed(px(p.x)) + "," + fixed(py(p.y));
        }
        flush();
    }
    s += "</g>\n<g class=\"legend\">\n";
    for (std::size_t i = 0; i < curves.size() && i < 30; ++i) {
        const double y = top + 8 + 18.0 * double(i);
        const std::string colour = kPalette[i % (sizeof kPalette / sizeof *kPalette)];
        s += "<line x1=\"" + fixed(right + 16) + "\" y1=\"" + fixed(y) + "\" x2=\"" + fixed(right + 40) + "\" y2=\"" +
             fixed(y) + "\" stroke=\"" + colour + "\" stroke-width=\"" + (curves[i].highlight ? "3.5" : "1.5") + "\"/>\n";
        s += "<text x=\"" + fixed(right + 46) + "\" y=\"" + fixed(y + 4) + "\"" +
             (curves[i].highlight ? " font-weight=\"bold\"" : "") + ">" + xml_escape(curves[i].label) +
             (curves[i].highlight ? " (best)" : "") + "</text>\n";
    }
    if (curves.size() > 30)
        s += "<text x=\"" + fixed(right + 16) + "\" y=\"" + fixed(top + 8 + 18.0 * 30) + "\">... " +
             std::to_string(curves.size() - 30) + " more</text>\n";
    s += "</g>\n</svg>\n";
    return s;
}

std::string sparkline(const std::vector<double>& values) {
    static const char* const kBlocks[] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                          "\u2585", "\u2586", "\u2587", "\u2588"};
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (double v : values)
        if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
    std::string out;
    for (double v : values) {
        if (!std::isfinite(v)) {
            out += ' ';
            continue;
        }
        const int level = hi > lo ? int(std::lround((v - lo) / (hi - lo) * 7.0)) : 3;
        out += kBlocks[std::clamp(level, 0, 7)];
    }
    return out;
}

}  // namespace hopper
