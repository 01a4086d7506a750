#include "hopper/packing.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "hopper/error.h"
#include "hopper/rng.h"

namespace hopper {

std::vector<uint64_t> shuffled_order(uint64_t n, uint64_t seed) {
    std::vector<uint64_t> order(n);
    for (uint64_t i = 0; i < n; ++i) order[i] = i;
    Rng rng(mix_seed(seed, 0x5348554646ULL));  // "SHUFF"
    for (uint64_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
    return order;
}

BufferFill parse_buffer_fill(const std::string& name) {
    if (name == "even") return BufferFill::Even;
    if (name == "full") return BufferFill::Full;
    fail(ErrorKind::InvalidParameter, "unknown buffer_fill \"" + name + "\"",
         "even: buffers as equal in size as possible; full: every buffer but the last holds ceil(rows / buffers) "
         "rows (Apache MADlib's layout).",
         "Valid values are even and full.");
}

const char* to_string(BufferFill fill) { return fill == BufferFill::Full ? "full" : "even"; }

BufferPlan plan_buffers(int64_t num_rows, int buffer_size, int num_segments, BufferFill fill) {
    if (num_rows <= 0) fail(ErrorKind::Data, "no rows to pack", "The source table is empty.");
    if (buffer_size <= 0)
        fail(ErrorKind::InvalidParameter, "buffer_size must be positive", "It is " + std::to_string(buffer_size) + ".");
    if (num_segments <= 0)
        fail(ErrorKind::InvalidParameter, "num_segments must be positive",
             "It is " + std::to_string(num_segments) + ".");
    if (num_rows < num_segments)
        fail(ErrorKind::InvalidParameter,
             "cannot spread " + std::to_string(num_rows) + " rows over " + std::to_string(num_segments) + " segments",
             "Every segment needs at least one row.", "Use fewer segments.");
    BufferPlan plan;
    int64_t buffers = (num_rows + buffer_size - 1) / buffer_size;
    if (buffers < num_segments) buffers = num_segments;
    if (buffers > std::numeric_limits<int>::max())
        fail(ErrorKind::Limit, "too many buffers", std::to_string(buffers) + " buffers would be needed.",
             "Use a larger buffer_size.");
    const int64_t base = num_rows / buffers;
    const int64_t extra = num_rows % buffers;  // Even: the first `extra` buffers hold one more row
    const int64_t full = base + (extra ? 1 : 0);
    // Full: `full` rows each, the last buffer the rest -- unless that leaves a buffer empty (more
    // buffers than rows / full, where segments asked for more buffers than rows need).
    const bool fill_full = fill == BufferFill::Full && (buffers - 1) * full < num_rows;
    plan.adjusted_buffer_size = int(full);
    plan.rows.resize(buffers);
    plan.segment.resize(buffers);
    plan.rows_per_segment.assign(num_segments, 0);
    plan.buffers_per_segment.assign(num_segments, 0);
    for (int64_t b = 0; b < buffers; ++b) {
        plan.rows[b] = fill_full ? int(std::min(full, num_rows - b * full)) : int(base + (b < extra ? 1 : 0));
        plan.segment[b] = int(b % num_segments);
        plan.rows_per_segment[plan.segment[b]] += plan.rows[b];
        plan.buffers_per_segment[plan.segment[b]] += 1;
    }
    return plan;
}

ScaleKind parse_scale_kind(const std::string& name) {
    if (name == "none") return ScaleKind::None;
    if (name == "standardize") return ScaleKind::Standardize;
    if (name == "minmax") return ScaleKind::MinMax;
    fail(ErrorKind::InvalidParameter, "unknown scale \"" + name + "\"", "",
         "Valid values are none, standardize and minmax.");
}

namespace {
int checked_size(int64_t v, const char* name, int64_t max) {
    if (v < 1 || v > max)
        fail(ErrorKind::InvalidParameter,
             std::string(name) +
                 (max == INT32_MAX ? " must be positive" : " must be between 1 and " + std::to_string(max)),
             "It is " + std::to_string(v) + ".");
    return int(v);
}
}  // namespace

PackingLayout make_packing_layout(std::optional<int64_t> buffer_size, std::optional<int64_t> num_segments) {
    PackingLayout l;
    if (buffer_size) l.buffer_size = checked_size(*buffer_size, "buffer_size", INT32_MAX);
    if (num_segments) l.num_segments = checked_size(*num_segments, "num_segments", kMaxNumSegments);
    return l;
}

void check_layout(const PackingLayout& l) {
    (void)checked_size(l.buffer_size, "buffer_size", INT32_MAX);
    (void)checked_size(l.num_segments, "num_segments", kMaxNumSegments);
}

const char* to_string(ScaleKind kind) {
    switch (kind) {
        case ScaleKind::None: return "none";
        case ScaleKind::Standardize: return "standardize";
        case ScaleKind::MinMax: return "minmax";
    }
    return "none";
}

FeatureStats::FeatureStats(int num_features)
    : n_features_(num_features),
      mean_(num_features, 0.0),
      m2_(num_features, 0.0),
      min_(num_features, std::numeric_limits<double>::infinity()),
      max_(num_features, -std::numeric_limits<double>::infinity()) {}

void FeatureStats::add(const float* row) {
    ++count_;
    const double inv = 1.0 / double(count_);
    for (int j = 0; j < n_features_; ++j) {
        const double x = row[j];
        const double d = x - mean_[j];
        mean_[j] += d * inv;
        m2_[j] += d * (x - mean_[j]);
        min_[j] = std::min(min_[j], x);
        max_[j] = std::max(max_[j], x);
    }
}

std::vector<double> FeatureStats::mean() const { return mean_; }
std::vector<double> FeatureStats::min() const { return min_; }
std::vector<double> FeatureStats::max() const { return max_; }

std::vector<double> FeatureStats::stddev() const {
    std::vector<double> s(n_features_, 0.0);
    if (count_ > 0)
        for (int j = 0; j < n_features_; ++j) s[j] = std::sqrt(m2_[j] / double(count_));
    return s;
}

FeatureScaling FeatureScaling::from_stats(ScaleKind kind, double normalizing_const, const FeatureStats& stats) {
    if (!(normalizing_const > 0) || !std::isfinite(normalizing_const))
        fail(ErrorKind::InvalidParameter, "normalizing_const must be a positive finite number");
    FeatureScaling s;
    s.normalizing_const = normalizing_const;
    if (kind == ScaleKind::None) return s;
    const int n = stats.num_features();
    s.center.resize(n);
    s.spread.resize(n);
    // Statistics were taken on raw values; the transform divides by normalizing_const first.
    const std::vector<double> a = kind == ScaleKind::Standardize ? stats.mean() : stats.min();
    const std::vector<double> mx = stats.max();
    const std::vector<double> sd = stats.stddev();
    for (int j = 0; j < n; ++j) {
        double spread = kind == ScaleKind::Standardize ? sd[j] : mx[j] - a[j];
        spread /= normalizing_const;
        // A constant feature carries no information: centre it and leave its scale alone.
        s.center[j] = float(a[j] / normalizing_const);
        s.spread[j] = float(spread > 1e-12 ? spread : 1.0);
    }
    return s;
}

void FeatureScaling::apply(float* row, int num_features) const {
    if (normalizing_const != 1.0) {
        const float inv = float(1.0 / normalizing_const);
        for (int j = 0; j < num_features; ++j) row[j] *= inv;
    }
    if (!center.empty())
        for (int j = 0; j < num_features; ++j) row[j] = (row[j] - center[j]) / spread[j];
}

void FeatureScaling::validate(int num_features) const {
    if (!(normalizing_const > 0) || !std::isfinite(normalizing_const))
        fail(ErrorKind::InvalidParameter, "normalizing_const must be a positive finite number");
    if ((!center.empty() && int(center.size()) != num_features) || center.size() != spread.size())
        fail(ErrorKind::InvalidParameter, "feature_center and feature_spread must both have one value per feature",
             "There are " + std::to_string(num_features) + " features; feature_center has " +
                 std::to_string(center.size()) + " values and feature_spread " + std::to_string(spread.size()) + ".");
    for (std::size_t j = 0; j < center.size(); ++j)
        if (!std::isfinite(center[j]) || !std::isfinite(spread[j]) || spread[j] == 0)
            fail(ErrorKind::InvalidParameter,
                 "feature_center and feature_spread must be finite, and feature_spread non-zero",
                 "Feature " + std::to_string(j + 1) + " has center " + std::to_string(center[j]) + " and spread " +
                     std::to_string(spread[j]) + ".");
}

int first_non_finite(const float* row, int n) {
    // Rows are nearly always finite, and every row packed or scored is checked: a branch-free pass
    // over the exponent bits first, which vectorizes (the loop with an early exit does not: 0.6 us of
    // a 784-feature row scored by name, 0.1 us this way).
    uint32_t any = 0;
    for (int j = 0; j < n; ++j) {
        uint32_t bits;
        std::memcpy(&bits, row + j, sizeof bits);
        any |= uint32_t((bits & 0x7f800000u) == 0x7f800000u);
    }
    if (!any) return -1;
    for (int j = 0; j < n; ++j)
        if (!std::isfinite(row[j])) return j;
    return -1;
}

float largest_magnitude(const float* row, int n) {
    float most = 0.0f;
    for (int j = 0; j < n; ++j) most = std::max(most, std::fabs(row[j]));
    return most;
}

}  // namespace hopper
