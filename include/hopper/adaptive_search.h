// Adaptive model selection: successive halving and Hyperband (Li et al., "Hyperband: A Novel
// Bandit-Based Approach to Hyperparameter Optimization", JMLR 18, 2018) on top of model hopping.
// This file decides everything about a search that does not need a database: the brackets and
// rungs a budget allows, which configurations survive a rung, and what trains next. The port
// (src/pg/procedures/adaptive_search.cpp) trains, evaluates and records; the SQL procedure is
// hopper.fit_automl.
//
// Budget. R = max_iterations (the most iterations one configuration trains), eta (each rung keeps
// the best 1/eta), s_max = the largest s with eta^s <= R. Bracket s (s = s_max, ..., 0) starts
// n = ceil((s_max + 1) * eta^s / (s + 1)) configurations; its rung i (i = 0 .. s - skip_last) trains
// n_i = floor(n / eta^i) of them until each has r_i = round(R * eta^(i - s)) iterations in all
// (half rounds up), and keeps the best floor(n_i / eta) for rung i + 1. A survivor continues from
// its state (weights, optimizer moments, step counter): rung i + 1 trains it r_(i+1) - r_i more
// iterations, never from scratch. Hyperband runs the brackets s_max, s_max - 1, ... (num_brackets of
// them, all by default); successive halving runs one bracket: num_configs configurations (default
// eta^s_max) with s = min(s_max, floor(log_eta num_configs)) halvings. skip_last drops the last
// skip_last rungs of every bracket (a bracket left without rungs is dropped), as in MADlib.
//
// Bracket rules. The above is Li et al.'s (Algorithm 1; BracketRule::LiEtAl, the default). MADlib's
// madlib_keras_automl (madlib_keras_automl_hyperband.py_in, find_hyperband_config) computes other
// brackets, and hopper_madlib follows it (BracketRule::Madlib, Hyperband only): bracket s starts
// n = floor((s_max + 1) / (s + 1)) * eta^s configurations (an integer division where the paper
// divides exactly: R = 9, eta = 3 gives brackets of 9, 3 and 3, the paper's 9, 5 and 3), and each
// round i trains its survivors r_i = round(R * eta^(i - s)) iterations more (MADlib's
// fit_multiple_model with warm start for r_i iterations), so that rung i ends at r_0 + ... + r_i
// iterations in all (1, 4 and 13 for bracket 2 of R = 9, eta = 3; the paper's 1, 3 and 9).
// n_i = n / eta^i and the promotions are the same (MADlib rounds n * eta^-i, an integer here).
//
// Trials are numbered 1..N (mst_key) bracket after bracket, s_max's first, as MADlib numbers them.
//
// Ranking. A rung ranks its trials by the searcher metric (smaller or larger first), ties to the
// smaller mst_key; a trial without a finite value (it diverged) ranks last and is never promoted,
// so a rung may promote fewer than planned, and a bracket whose rung promotes nobody ends there.
//
// Schedule. A trial's training does not depend on which other trials share the hop ring (see
// HopSchedule::for_phases): rungs of all brackets may train in one ring (pack_brackets) or one
// bracket after the other, the results are the same bit for bit, and so are the decisions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hopper {

enum class AutomlMethod { Hyperband, SuccessiveHalving };
// "hyperband" or "successive_halving" (any case; "successive halving" and "sha" too).
AutomlMethod parse_automl_method(std::string_view text);
const char* to_string(AutomlMethod m);

// Largest max_iterations a search accepts (Error(Limit) beyond it).
constexpr int64_t kMaxSearchIterations = 1000000;

enum class BracketRule { LiEtAl, Madlib };
// "li" (Li et al.'s, any case; "li_et_al" too) or "madlib".
BracketRule parse_bracket_rule(std::string_view text);
const char* to_string(BracketRule r);

struct AutomlBudget {
    AutomlMethod method = AutomlMethod::Hyperband;
    BracketRule rule = BracketRule::LiEtAl;
    int64_t max_iterations = 0;  // R
    int64_t eta = 3;
    int64_t skip_last = 0;
    std::optional<int64_t> num_brackets;  // Hyperband only: the first (most aggressive) brackets
    std::optional<int64_t> num_configs;   // successive halving only
};

struct RungPlan {
    int iterations = 0;    // each trial's iterations in all at the end of the rung (r_i)
    int num_configs = 0;   // trials training in the rung (n_i)
    int num_promoted = 0;  // kept for the next rung (0 in the last)
};

struct BracketPlan {
    int s = 0;              // Hyperband's bracket index (halvings planned before skip_last)
    int32_t first_key = 1;  // mst_keys first_key .. first_key + num_trials - 1
    int num_trials = 0;
    std::vector<RungPlan> rungs;
};

struct SearchPlan {
    AutomlBudget budget;
    int s_max = 0;
    std::vector<BracketPlan> brackets;  // in mst_key order (s descending)

    int num_trials() const;
    // The most iterations a trial trains in all (the last rung's budget of the longest bracket).
    int max_trial_iterations() const;
    // Iterations trained in all when nothing diverges (what a search costs in model-epochs).
    int64_t model_iterations() const;
    // Index into `brackets` of the bracket holding mst_key (Error(InvalidParameter) if none).
    int bracket_of(int32_t mst_key) const;
    // "brackets of 9, 5 and 3 configurations" / "one bracket of 27 configurations": for messages.
    std::string describe() const;
};

// Validates the budget (Error(InvalidParameter): eta < 2, max_iterations < eta -- a budget smaller
// than one rung --, num_configs < eta, skip_last or num_brackets out of range, an option of the other
// method; Error(Limit): max_iterations above kMaxSearchIterations, more than kMaxModelConfigs trials)
// and plans the brackets.
SearchPlan plan_search(const AutomlBudget& budget);

// ---- ranking ----------------------------------------------------------------------------------
struct RungScore {
    int32_t mst_key = 0;
    std::optional<double> value;  // the searcher metric; none (or not finite): ranks last
    bool diverged = false;        // ranks last too
};
struct RungRanking {
    std::vector<int32_t> order;     // every trial of the rung, best first
    std::vector<int32_t> promoted;  // the first num_promoted of `order` with a finite value, not diverged
};
RungRanking rank_rung(const std::vector<RungScore>& scores, int num_promoted, bool smaller_is_better);

// ---- progress ---------------------------------------------------------------------------------
enum class TrialStatus { Pending, Training, Stopped, Completed, Diverged };
const char* to_string(TrialStatus s);  // "pending", "training", "stopped", "completed", "diverged"

struct RungRef {
    int bracket = 0;  // index into SearchPlan::brackets
    int rung = 0;
    bool operator==(const RungRef& o) const { return bracket == o.bracket && rung == o.rung; }
};

// The decisions made so far. A search resumed after a crash replays the recorded rankings and
// continues with the rungs that had not completed.
class SearchProgress {
public:
    explicit SearchProgress(SearchPlan plan);

    const SearchPlan& plan() const { return plan_; }
    // Rungs to train now: every unfinished bracket's current rung (pack_brackets), or only the
    // first unfinished bracket's.
    std::vector<RungRef> training_rungs(bool pack_brackets) const;
    // The trials of a rung: rung 0 all of its bracket's, a later rung those the rung before promoted.
    // Known once the rung before is recorded (Error(Internal) otherwise).
    const std::vector<int32_t>& members(RungRef r) const;
    int target_iterations(RungRef r) const;
    // The rung a bracket trains now (== its number of rungs once finished).
    int current_rung(int bracket) const { return current_[bracket]; }
    bool bracket_finished(int bracket) const;
    bool finished() const;
    // Records a rung's ranking (it must be the bracket's current rung; the order a permutation of
    // its members; the promoted its first ones, at most as many as planned -- Error(Data) otherwise,
    // so that decisions read back from tables are checked too). Returns each member's status after
    // the rung: training (promoted), stopped, completed (the bracket's last rung) or diverged (as
    // given by `diverged`).
    std::vector<std::pair<int32_t, TrialStatus>> record(RungRef r, const RungRanking& ranking,
                                                        const std::vector<int32_t>& diverged = {});
    // Rungs that will never train because a rung before them promoted nobody.
    std::vector<RungRef> skipped_rungs(int bracket) const;

private:
    SearchPlan plan_;
    std::vector<int> current_;                                // per bracket
    std::vector<int> recorded_end_;                           // per bracket: rungs recorded once it ended, or -1
    std::vector<std::vector<std::vector<int32_t>>> members_;  // [bracket][rung]
};

}  // namespace hopper
