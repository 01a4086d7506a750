#include "hopper/plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "hopper/interrupt.h"

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

// About five round tick values covering [lo, hi] (1, 2 or 5 times a power of ten apart); whole
// numbers only when `whole` (iterations: no tick at iteration 2.5).
std::vector<double> ticks(double lo, double hi, bool whole = false) {
    if (!(hi > lo)) return {lo};
    const double raw = (hi - lo) / 5.0;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    double step = raw / mag < 1.5 ? mag : raw / mag < 3.5 ? 2 * mag : raw / mag < 7.5 ? 5 * mag : 10 * mag;
    if (whole) step = std::max(step, 1.0);
    std::vector<double> out;
    for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9 && out.size() < 20; t += step)
        out.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
    return out;
}

bool finite(const CurvePoint& p) { return std::isfinite(p.x) && std::isfinite(p.y); }

// Whether a curve is drawn as dots only (no two finite points in a row): its legend shows a dot.
bool dots_only(const Curve& c) {
    for (std::size_t i = 1; i < c.points.size(); ++i)
        if (finite(c.points[i - 1]) && finite(c.points[i])) return false;
    return true;
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
    bool whole_x = true;
    for (const Curve& c : curves)
        for (const CurvePoint& p : c.points)
            if (finite(p)) {
                x0 = std::min(x0, p.x), x1 = std::max(x1, p.x), y0 = std::min(y0, p.y), y1 = std::max(y1, p.y);
                whole_x = whole_x && p.x == std::floor(p.x);
            }
    const bool empty = !std::isfinite(x0);
    if (!empty) {
        if (x1 == x0) x0 -= 1, x1 += 1;
        if (y1 == y0) y0 -= std::max(std::fabs(y0) * 0.05, 1e-6), y1 += std::max(std::fabs(y1) * 0.05, 1e-6);
        const double pad = (y1 - y0) * 0.05;
        y0 -= pad, y1 += pad;
    }
    // The legend: the first 30 curves, and the highlighted one even when it comes later.
    std::vector<std::size_t> listed;
    for (std::size_t i = 0; i < curves.size(); ++i)
        if (i < 30 || (curves[i].highlight && listed.size() == 30)) listed.push_back(i);
    // Plot area, then the legend to its right, as wide as its longest label needs (~7.2 px per
    // character at 12 px, bold included): the document grows rather than cutting labels.
    std::size_t longest = 0;
    for (std::size_t i : listed) longest = std::max(longest, curves[i].label.size() + (curves[i].highlight ? 7 : 0));
    const double legend = std::clamp(56 + 7.2 * double(longest), 120.0, 1600.0);
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
    s += "<line x1=\"" + fixed(left) + "\" y1=\"" + fixed(bottom) + "\" x2=\"" + fixed(right) + "\" y2=\"" +
         fixed(bottom) + "\"/>\n";
    s += "<line x1=\"" + fixed(left) + "\" y1=\"" + fixed(top) + "\" x2=\"" + fixed(left) + "\" y2=\"" + fixed(bottom) +
         "\"/>\n";
    s += "</g>\n<g class=\"ticks\" fill=\"#333\">\n";
    for (double t : ticks(x0, x1, whole_x))
        s += "<text x=\"" + fixed(px(t)) + "\" y=\"" + fixed(bottom + 16) + "\" text-anchor=\"middle\">" + number(t) +
             "</text>\n";
    for (double t : ticks(y0, y1)) {
        s += "<line x1=\"" + fixed(left) + "\" y1=\"" + fixed(py(t)) + "\" x2=\"" + fixed(right) + "\" y2=\"" +
             fixed(py(t)) + "\" stroke=\"#e5e5e5\"/>\n";
        s += "<text x=\"" + fixed(left - 6) + "\" y=\"" + fixed(py(t) + 4) + "\" text-anchor=\"end\">" + number(t) +
             "</text>\n";
    }
    s += "</g>\n";
    s += "<text class=\"x-label\" x=\"" + fixed((left + right) / 2) + "\" y=\"" + fixed(height - 12.0) +
         "\" text-anchor=\"middle\">" + xml_escape(text.x_label) + "</text>\n";
    s += "<text class=\"y-label\" transform=\"translate(16," + fixed((top + bottom) / 2) +
         ") rotate(-90)\" text-anchor=\"middle\">" + xml_escape(text.y_label) + "</text>\n";
    // Lines: the highlighted one last, so it is on top; a gap where a value is not finite. A point
    // alone (a run evaluated only at its last iteration, or between gaps) is a dot: a polyline of
    // one point draws nothing.
    std::vector<std::size_t> order(curves.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_partition(order.begin(), order.end(), [&](std::size_t i) { return !curves[i].highlight; });
    s += "<g class=\"curves\" fill=\"none\">\n";
    for (std::size_t i : order) {
        const Curve& c = curves[i];
        const std::string colour = kPalette[i % (sizeof kPalette / sizeof *kPalette)];
        const std::string best = c.highlight ? " best" : "";
        const std::string title = "<title>" + xml_escape(c.label) + "</title>";
        std::string pts, first;
        int n = 0;
        auto flush = [&] {
            if (n == 1)
                s += "<circle class=\"marker" + best + "\" " + first + " r=\"" + (c.highlight ? "5.5" : "4") +
                     "\" fill=\"" + colour + "\">" + title + "</circle>\n";
            else if (n > 1)
                s += "<polyline class=\"curve" + best + "\" stroke=\"" + colour + "\" stroke-width=\"" +
                     (c.highlight ? "3.5" : "1.5") + "\" points=\"" + pts + "\">" + title + "</polyline>\n";
            pts.clear();
            n = 0;
        };
        for (const CurvePoint& p : c.points) {
            if (!finite(p)) {
                flush();
                continue;
            }
            if (n++ == 0) first = "cx=\"" + fixed(px(p.x)) + "\" cy=\"" + fixed(py(p.y)) + "\"";
            if (!pts.empty()) pts += ' ';
            pts += fixed(px(p.x)) + "," + fixed(py(p.y));
        }
        flush();
    }
    s += "</g>\n<g class=\"legend\">\n";
    for (std::size_t row = 0; row < listed.size(); ++row) {
        const std::size_t i = listed[row];
        const double y = top + 8 + 18.0 * double(row);
        const std::string colour = kPalette[i % (sizeof kPalette / sizeof *kPalette)];
        if (dots_only(curves[i]))
            s += "<circle cx=\"" + fixed(right + 28) + "\" cy=\"" + fixed(y) + "\" r=\"" +
                 (curves[i].highlight ? "5.5" : "4") + "\" fill=\"" + colour + "\"/>\n";
        else
            s += "<line x1=\"" + fixed(right + 16) + "\" y1=\"" + fixed(y) + "\" x2=\"" + fixed(right + 40) +
                 "\" y2=\"" + fixed(y) + "\" stroke=\"" + colour + "\" stroke-width=\"" +
                 (curves[i].highlight ? "3.5" : "1.5") + "\"/>\n";
        s += "<text x=\"" + fixed(right + 46) + "\" y=\"" + fixed(y + 4) + "\"" +
             (curves[i].highlight ? " font-weight=\"bold\"" : "") + ">" + xml_escape(curves[i].label) +
             (curves[i].highlight ? " (best)" : "") + "</text>\n";
    }
    if (curves.size() > listed.size())
        s += "<text x=\"" + fixed(right + 16) + "\" y=\"" + fixed(top + 8 + 18.0 * double(listed.size())) + "\">... " +
             std::to_string(curves.size() - listed.size()) + " more</text>\n";
    s += "</g>\n</svg>\n";
    return s;
}

namespace {

using Path = std::vector<std::string>;  // "compile", "optimizer", "learning_rate"; "layers[1]"

std::string plain(const nlohmann::json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); }

void flatten(const nlohmann::json& j, Path& path, std::map<Path, std::string>& out) {
    if (j.is_object() && !j.empty()) {
        for (auto it = j.begin(); it != j.end(); ++it) {
            path.push_back(it.key());
            flatten(it.value(), path, out);
            path.pop_back();
        }
    } else if (j.is_array() &&
               std::any_of(j.begin(), j.end(), [](const nlohmann::json& e) { return e.is_structured(); })) {
        for (std::size_t i = 0; i < j.size(); ++i) {
            // Whether the index is an element of its own: comparing the element with the index
            // afterwards took an empty key's element ("" + "[0]") for one, popped it, and the
            // caller's pop_back then ran on an empty path (a SIGSEGV any role could cause with a
            // trial's model_config of {"": [{}]}).
            const std::string index = "[" + std::to_string(i) + "]";
            const bool own_element = path.empty();
            if (own_element) path.push_back(index);
            else path.back() += index;
            flatten(j[i], path, out);
            if (own_element) path.pop_back();
            else path.back().resize(path.back().size() - index.size());
        }
    } else if (j.is_array() && !path.empty()) {
        std::string v = "[";
        for (const auto& e : j) v += (v.size() > 1 ? "," : "") + plain(e);
        out[path] = v + "]";
    } else if (!path.empty()) {  // the root is an object: only an empty one gets here, with nothing in it
        out[path] = plain(j);
    }
}

std::string joined(const Path& p, std::size_t last) {
    std::string s;
    for (std::size_t i = p.size() - last; i < p.size(); ++i) s += (s.empty() ? "" : ".") + p[i];
    return s;
}

bool ends_with(const Path& p, const Path& q, std::size_t last) {
    return p.size() >= last && q.size() >= last && std::equal(p.end() - last, p.end(), q.end() - last);
}

constexpr std::size_t kMaxShortenedSettings = 64;
constexpr std::size_t kMaxLabelBytes = 400;  // then ", ..." (a legend line, not a dump)

// "name=value, ..." of the given settings, for each configuration; each setting is named by the
// shortest end of its path that no other of them shares.
std::vector<std::string> labels_of(const std::vector<std::map<Path, std::string>>& settings,
                                   const std::vector<Path>& differing) {
    std::vector<Path> readable = differing;
    for (Path& r : readable) {
        if (r.size() > 1 && r.back() == "name") r.pop_back();
        if (r.back() == "learning_rate") r.back() = "lr";
    }
    std::vector<std::string> names(differing.size());
    // Shortening compares each setting's path with every other's: beyond a legend's worth of
    // settings, full paths (120,000 differing keys a trial owner planted stalled whoever rendered the
    // run for 33 s, deaf to cancel).
    const bool shorten = differing.size() <= kMaxShortenedSettings;
    InterruptTicker ticker;
    for (std::size_t i = 0; i < differing.size(); ++i) {
        ticker.tick();
        if (!shorten) {
            names[i] = joined(differing[i], differing[i].size());
            continue;
        }
        // From the innermost array element on, so that a layer's setting says which layer it is.
        const Path& r = readable[i];
        std::size_t last = 1;
        for (std::size_t k = r.size(); k-- > 0;)
            if (r[k].find('[') != std::string::npos) {
                last = r.size() - k;
                break;
            }
        auto clashes = [&](std::size_t k) {
            for (std::size_t j = 0; j < readable.size(); ++j)
                if (j != i && ends_with(readable[j], r, k)) return true;
            return false;
        };
        while (last < r.size() && clashes(last)) ++last;
        names[i] = clashes(last) ? joined(differing[i], differing[i].size()) : joined(r, last);
    }
    std::vector<std::string> labels;
    for (const auto& s : settings) {
        std::vector<std::pair<std::string, std::string>> pairs;
        for (std::size_t k = 0; k < differing.size(); ++k)
            if (const auto it = s.find(differing[k]); it != s.end()) pairs.emplace_back(names[k], it->second);
        std::sort(pairs.begin(), pairs.end());
        std::string label;
        for (const auto& [name, value] : pairs) {
            ticker.tick();
            if (label.size() > kMaxLabelBytes) {
                label += ", ...";
                break;
            }
            label += (label.empty() ? "" : ", ") + name + "=" + value;
        }
        labels.push_back(label);
    }
    return labels;
}

}  // namespace

std::vector<std::string> distinguishing_labels(const std::vector<std::string>& settings_json) {
    std::vector<std::map<Path, std::string>> settings(settings_json.size());
    for (std::size_t i = 0; i < settings_json.size(); ++i) {
        const nlohmann::json j = nlohmann::json::parse(settings_json[i], nullptr, false);
        if (j.is_object()) {
            Path path;
            flatten(j, path, settings[i]);
        } else {
            settings[i][{"config"}] = j.is_discarded() ? settings_json[i] : plain(j);
        }
    }
    // The settings whose values differ where they are given, and those some configurations lack
    // (an Adam's beta_1 beside SGDs: the optimizer already tells them apart).
    std::set<Path> all;
    for (const auto& s : settings)
        for (const auto& kv : s) all.insert(kv.first);
    std::vector<Path> differing, partial;
    for (const Path& p : all) {
        const std::string* value = nullptr;
        bool everywhere = true, same = true;
        for (const auto& s : settings) {
            const auto it = s.find(p);
            if (it == s.end()) {
                everywhere = false;
                continue;
            }
            if (value && *value != it->second) same = false;
            value = &it->second;
        }
        if (!same) differing.push_back(p);
        else if (!everywhere) partial.push_back(p);
    }
    std::vector<std::string> labels = labels_of(settings, differing);
    // Configurations that differ only in what one of them lacks: name that too. (Two that read the
    // same and differ: one of them differs from the first that reads so.)
    std::map<std::string, std::size_t> first_reading;
    for (std::size_t i = 0; i < settings.size(); ++i) {
        const auto [at, added] = first_reading.emplace(labels[i], i);
        if (!added && settings[at->second] != settings[i]) {
            differing.insert(differing.end(), partial.begin(), partial.end());
            std::sort(differing.begin(), differing.end());
            return labels_of(settings, differing);
        }
    }
    return labels;
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
