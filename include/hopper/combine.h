// Hierarchical combine: mergeable states, the order they merge in, and the rule that decides
// whether an intermediate level (one merge per node group) is worth inserting between the
// per-segment partial states and the final merge.
//
// Three levels: *partial* (rows -> state, one per segment), *intermediate* (states -> state, one
// per node group), *final* (states -> result). The two-level form is partial -> final. Every level
// above the partial one uses the same `merge`, so the 2- and 3-level forms differ only in the order
// states meet.
//
// Order and determinism (the choice, and why):
//  * Model averaging is EXACT. Each value v (float32 parameter or optimizer slot) with weight w
//    (rows) adds round(v * 2^64) * w to a signed 128-bit integer. The rounding happens per input,
//    before any sum, and integer addition is associative and commutative, so the result is bit for
//    bit the same whatever the grouping (2 or 3 levels, PostgreSQL's parallel workers combining in
//    any order). Values |v| >= 2^-41 are represented exactly; smaller ones are rounded to the
//    2^-64 grid (far below float32 resolution for any weight that matters; Adam's v below 2^-41 is
//    also far below its epsilon). A copy with a non-finite value, or a value whose v * w does not
//    fit 2^63, has diverged: it is left out (a decision about that copy alone, so the order still
//    does not matter) and the average is marked diverged; totals of healthy copies that exceed
//    2^63 are an error. The cost: 16 bytes per value instead of 4. Compensated
//    (Kahan) sums would be as large and still depend on the order; sorting states by key before
//    merging would force an intermediate state to carry every state below it, which is exactly
//    what the intermediate level exists to avoid.
//  * Counts are integers: exact.
//  * Vector sums (float8 input) use Neumaier-compensated double sums, and metrics reuse EvalTotals
//    (double sums). Their results depend on the order in the last bits only; hopper's queries fix
//    the order (partials by dist_key within a group, groups by name), so a run is reproducible, and
//    2-level and 3-level results agree within kFloatStateTolerance (relative). When PostgreSQL
//    splits one segment's partial over parallel workers, that split is not fixed either, within the
//    same tolerance.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hopper/config.h"
#include "hopper/metrics.h"

namespace hopper {

// Relative tolerance within which float states (vector sums, metrics) combined in different orders
// agree: |a - b| <= kFloatStateTolerance * max(1, |a|, |b|) per value. Double sums of n terms differ
// by at most about n * 2^-53 of the sum of magnitudes; this bound covers millions of terms.
constexpr double kFloatStateTolerance = 1e-9;

// Kinds of state, as written in the serialized form.
enum class CombineKind : uint16_t { VectorSum = 1, ModelAverage = 2, Metrics = 3 };
const char* to_string(CombineKind kind);                // "vector_sum", "model_average", "metrics"
CombineKind parse_combine_kind(std::string_view name);  // InvalidParameter naming the known kinds

// ---------------------------------------------------------------------------------------------
// Plain numeric example: the sum and count of float8 vectors of one length.
struct VectorSumState {
    uint64_t count = 0;                     // vectors added
    std::vector<double> sum, compensation;  // Neumaier: the true sum is sum + compensation

    bool empty() const { return count == 0 && sum.empty(); }
    // Adds one vector (finite values; all vectors of a state have one length, Data error otherwise).
    void add(const double* x, std::size_t n);
    void merge(const VectorSumState& other);
    std::vector<double> total() const;  // sum + compensation
    std::vector<double> mean() const;   // total / count (NaN if count == 0)

    std::string serialize() const;
    static VectorSumState deserialize(std::string_view bytes);
};

// ---------------------------------------------------------------------------------------------
// Model averaging: the weighted mean of model states of one configuration, weights being rows.
// Parameters and optimizer slots are averaged alike (Adam's moments of the copies estimate the same
// gradient statistics; their weighted mean is the natural estimate for the averaged model, and
// resetting them would restart Adam's warm-up every iteration). Values are laid out as in the model
// state: parameters layer by layer (W_l then b_l), then the optimizer slots.
// Counters of the averaged model: steps = the most any copy did; samples_seen = the most any copy
// had seen before its last visit + the last-visit samples of all copies, and visits likewise
// (for copies trained from one state, one visit each: the common history plus every copy's
// visit); the last-visit loss and samples are summed (the mean training loss over all copies);
// diverged if any copy diverged.
// Diverged copies (flagged so, or with values that are not finite or too large to sum exactly) are
// left out of the sums; the average of the others is marked diverged. If every copy was left out,
// the average has NaN parameters (and is marked diverged).
struct ModelAverageState {
    std::string config_json;  // canonical configuration shared by every averaged state
    uint64_t num_params = 0;
    uint32_t num_slots = 0;
    std::vector<__int128> sums;  // the parameters, then num_slots slots over the trainable ones: fixed-point
                                 // weighted sums (2^-64 units)
    uint64_t weight = 0;         // sum of the weights of the copies in the sums
    uint64_t models = 0;         // states added
    uint64_t excluded = 0;       // of them, diverged copies left out of the sums
    uint64_t max_steps = 0, max_base_samples = 0, last_samples = 0, max_base_visits = 0;
    __int128 last_loss_sum = 0;  // fixed point, like the sums
    // The copies' training totals of the iteration, summed (healthy copies only): each copy trained
    // on other rows. Grid values (metrics.h), so the sum is exact in any order.
    EvalTotals iteration_totals;
    bool diverged = false;

    bool empty() const { return models == 0; }
    // Adds a model state (hopper's state format) with a weight (e.g. the rows it was trained on).
    void add(std::string_view model_state, uint64_t weight);
    // Configurations must be equal (InvalidParameter otherwise).
    void merge(const ModelAverageState& other);
    // The averaged model as a model state. InvalidParameter if the weights sum to zero.
    std::string result() const;
    // Size of a serialized state for a configuration (planning, limits).
    static std::size_t serialized_size(const ModelConfig& config);

    std::string serialize() const;
    static ModelAverageState deserialize(std::string_view bytes);
};

// Exact fixed-point conversion used by model averaging (exposed for tests).
constexpr int kFixedPointBits = 64;
__int128 to_fixed_point(double v);                       // round-half-even of v * 2^64; Data error if |v| >= 2^63
bool try_fixed_point(double v, __int128* out);           // the same; false (no error) for non-finite or |v| >= 2^63
double from_fixed_point(__int128 sum, uint64_t weight);  // sum / weight / 2^64

// ---------------------------------------------------------------------------------------------
// Loss and metrics of one model over data: EvalTotals plus the names needed to report them.
struct MetricsState {
    std::string loss_name;                  // empty in an empty state
    std::vector<std::string> metric_names;  // compile order
    EvalTotals totals;

    bool empty() const { return loss_name.empty() && totals.count == 0.0; }
    // Starts a state for a model's compile parameters (no-op if already started for the same names).
    void start(const CompileParams& compile);
    void merge(const MetricsState& other);
    std::string metrics_json() const;  // {"accuracy": 0.91, ...}; NaN as null

    std::string serialize() const;
    static MetricsState deserialize(std::string_view bytes);
};

// The 2-level and 3-level forms over states keyed by producing dist_key, in hopper's fixed order:
// partials by dist_key (within a group), intermediates by group name (byte order). Both use only
// State::merge. group_of must name the group of every partial's dist_key.
template <typename State>
State combine_two_level(std::vector<std::pair<int32_t, State>> partials) {
    std::sort(partials.begin(), partials.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    State out;
    for (const auto& p : partials) out.merge(p.second);
    return out;
}

template <typename State>
State combine_three_level(std::vector<std::pair<int32_t, State>> partials,
                          const std::map<int32_t, std::string>& group_of) {
    std::sort(partials.begin(), partials.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::map<std::string, State> intermediate;
    for (const auto& p : partials) intermediate[group_of.at(p.first)].merge(p.second);
    State out;
    for (const auto& g : intermediate) out.merge(g.second);
    return out;
}

// ---------------------------------------------------------------------------------------------
// Topology: where segments sit. A group is a set of nearby nodes (a rack, a region); link costs
// are relative costs per byte, symmetric, between two groups or (same group twice) within one.
struct SegmentPlacement {
    int32_t dist_key = 0;
    std::string node;
    std::string group;
};

struct LinkCost {
    std::string group_a, group_b;
    double cost = 0.0;
};

class Topology {
public:
    Topology() = default;  // empty: every segment in one group
    // Validates (InvalidParameter, naming what is wrong): names not empty; a segment on one node and
    // in one group (a repeated identical row is harmless); a node in one group; costs finite and
    // positive, between groups of the topology, not given twice with different values.
    static Topology build(std::vector<SegmentPlacement> segments, std::vector<LinkCost> links);

    bool empty() const { return segments_.empty(); }
    const std::vector<SegmentPlacement>& segments() const { return segments_; }  // by dist_key
    const SegmentPlacement* find(int32_t dist_key) const;
    std::vector<std::string> groups() const;  // sorted, distinct
    bool has_group(const std::string& group) const;
    std::optional<double> cost(const std::string& a, const std::string& b) const;
    const std::vector<LinkCost>& links() const { return links_; }

private:
    std::vector<SegmentPlacement> segments_;
    std::vector<std::string> groups_;  // sorted, distinct
    std::vector<LinkCost> links_;      // group_a <= group_b, sorted by (group_a, group_b)
};

// The insertion rule's parameters.
struct CombinePolicy {
    double cost_factor = 10.0;                     // between-group cost must be at least this multiple of within-group
    double bytes_factor = 1.5;                     // bytes crossing group boundaries must fall by at least this factor
    uint64_t min_bytes_saved = 1u << 20;           // ... and by at least this many bytes (small states never pay)
    std::optional<std::string> coordinator_group;  // where the final level runs; none: outside all groups
};

struct CombineCheck {
    std::string name;  // groups, group_size, link_cost_gap, bytes_reduction, bytes_saved
    bool passed = false;
    std::string value;     // the figure, as text
    std::string required;  // the threshold, as text
};

// What the rule decided and the figures behind it (an EXPLAIN-like record).
struct CombineDecision {
    bool intermediate = false;  // insert the intermediate level
    int levels = 2;
    std::string reason;
    uint64_t state_bytes = 0;
    uint64_t producers = 0, groups = 0, nodes = 0;
    std::vector<std::pair<std::string, uint64_t>> producers_per_group;  // by group name
    bool default_topology = false;                                      // the topology was empty: one group
    std::optional<std::string> coordinator_group;
    uint64_t bytes_two_level = 0, bytes_three_level = 0;  // crossing group boundaries
    double bytes_reduction = 1.0;
    uint64_t bytes_saved = 0;
    bool costs_measured = false;
    double within_cost = 1.0;
    std::optional<double> between_cost, cost_ratio, cost_two_level, cost_three_level;
    CombinePolicy policy;
    std::vector<CombineCheck> checks;
    std::map<int32_t, std::string> group_of;  // every producer's group (for the 3-level query)

    std::string to_json() const;
};

// The insertion rule, a pure function: the intermediate level is inserted only if producers sit in
// at least 2 groups, some group has 2 or more producers, the cheapest measured link between groups
// costs at least cost_factor times the dearest measured link within a group (unmeasured: groups
// are taken to be far apart, and the record says so), and the bytes crossing group boundaries fall
// by at least bytes_factor and by at least min_bytes_saved. Every producer must be in a non-empty
// topology (InvalidParameter naming the dist_key otherwise); an empty topology is one group.
CombineDecision plan_combine(const Topology& topology, const std::vector<int32_t>& producers, uint64_t state_bytes,
                             const CombinePolicy& policy);

}  // namespace hopper
