// Packing rows into minibatch buffers: seeded shuffling, buffer sizes, segment placement, class
// encoding and feature scaling. The PostgreSQL port reads rows and writes buffers; every decision
// about which row goes where, and how values are transformed, is made here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hopper {

// A permutation of 0..n-1, the same for a seed on every platform (Fisher-Yates over hopper::Rng).
std::vector<uint64_t> shuffled_order(uint64_t n, uint64_t seed);

// How rows fill the buffers. Even (hopper's): buffers as equal in size as possible. Full (Apache
// MADlib's, which its tests assert): ceil(rows / buffers) rows in every buffer but the last, which
// holds the rest -- 5, 5, 5, 2 for 17 rows in buffers of 5 where Even gives 5, 4, 4, 4. Either way
// there are ceil(rows / buffer_size) buffers (at least one per segment), none larger than buffer_size.
enum class BufferFill { Even, Full };
BufferFill parse_buffer_fill(const std::string& name);  // "even" | "full"
const char* to_string(BufferFill fill);

// How many rows each buffer holds and which segment it belongs to: buffers filled as `fill` says
// (never more than buffer_size rows), and dealt round-robin to segments, so segments differ by at
// most one buffer. Every segment gets at least one buffer: if there are fewer rows than that needs,
// buffers shrink (adjusted_buffer_size says so), and fill evenly where full buffers would leave one
// empty.
struct BufferPlan {
    std::vector<int> rows;     // rows in buffer b
    std::vector<int> segment;  // segment index of buffer b
    int adjusted_buffer_size = 0;
    std::vector<int64_t> rows_per_segment;
    std::vector<int> buffers_per_segment;
};
BufferPlan plan_buffers(int64_t num_rows, int buffer_size, int num_segments, BufferFill fill = BufferFill::Even);

enum class ScaleKind { None, Standardize, MinMax };
ScaleKind parse_scale_kind(const std::string& name);  // "none" | "standardize" | "minmax"
const char* to_string(ScaleKind kind);

constexpr int kDefaultBufferSize = 256;
constexpr int kMaxNumSegments = 1024;

// How one packing lays rows out, validated in one place for hopper.preprocess and
// preprocess_validation. 0 means "not given": the caller fills in the default (256 rows and the
// engine's segment count for training data; the training table's for validation data) and checks
// the result again with check_layout.
struct PackingLayout {
    int buffer_size = 0;
    int num_segments = 0;
};
// nullopt: not given. Given values must be positive, num_segments at most kMaxNumSegments.
PackingLayout make_packing_layout(std::optional<int64_t> buffer_size, std::optional<int64_t> num_segments);
// The same ranges for a layout whose defaults were filled in (from an engine or a summary table).
void check_layout(const PackingLayout& layout);

// Per-feature statistics for scaling, accumulated row by row (Welford, in double).
class FeatureStats {
public:
    explicit FeatureStats(int num_features);
    void add(const float* row);  // num_features values
    int num_features() const { return n_features_; }
    int64_t count() const { return count_; }
    std::vector<double> mean() const;
    std::vector<double> stddev() const;  // population standard deviation
    std::vector<double> min() const;
    std::vector<double> max() const;

private:
    int n_features_;
    int64_t count_ = 0;
    std::vector<double> mean_, m2_, min_, max_;
};

// x' = (x / normalizing_const - center[j]) / spread[j]; center/spread empty means none.
struct FeatureScaling {
    double normalizing_const = 1.0;
    std::vector<float> center;
    std::vector<float> spread;

    static FeatureScaling from_stats(ScaleKind kind, double normalizing_const, const FeatureStats& stats);
    void apply(float* row, int num_features) const;
    // Refuses (InvalidParameter) a scaling that cannot be applied to rows of `num_features`
    // features: normalizing_const not positive and finite, center and spread of different lengths or
    // not one per feature, a center or spread that is not finite, a spread of zero.
    void validate(int num_features) const;
    bool is_identity() const { return normalizing_const == 1.0 && center.empty(); }
};

// Checks that every value of a feature row is finite; returns the index of the first bad one or -1.
int first_non_finite(const float* row, int n);
// The largest magnitude in a row of finite values (0 for none).
float largest_magnitude(const float* row, int n);

}  // namespace hopper
