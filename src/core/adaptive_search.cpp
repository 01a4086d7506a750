// Successive halving and Hyperband: plans, rankings and progress (see include/hopper/adaptive_search.h).
#include "hopper/adaptive_search.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include "hopper/error.h"
#include "hopper/search.h"

namespace hopper {

AutomlMethod parse_automl_method(std::string_view text) {
    std::string t;
    for (char c : text) t += char(std::tolower(static_cast<unsigned char>(c)));
    if (t == "hyperband") return AutomlMethod::Hyperband;
    if (t == "successive_halving" || t == "successive halving" || t == "sha") return AutomlMethod::SuccessiveHalving;
    if (t == "hyperopt")
        fail(ErrorKind::InvalidParameter, "automl_method hyperopt is not supported",
             "hopper runs hyperband and successive_halving.", "Use automl_method => 'hyperband'.");
    fail(ErrorKind::InvalidParameter, "unknown automl_method \"" + std::string(text) + "\"", {},
         "Use 'hyperband' or 'successive_halving'.");
}

BracketRule parse_bracket_rule(std::string_view text) {
    std::string t;
    for (char c : text) t += char(std::tolower(static_cast<unsigned char>(c)));
    if (t == "li" || t == "li_et_al") return BracketRule::LiEtAl;
    if (t == "madlib") return BracketRule::Madlib;
    fail(ErrorKind::InvalidParameter, "unknown bracket_rule \"" + std::string(text) + "\"",
         "li is Li et al.'s Hyperband, madlib the brackets and rounds of MADlib's madlib_keras_automl.",
         "Use 'li' or 'madlib'.");
}

const char* to_string(BracketRule r) { return r == BracketRule::Madlib ? "madlib" : "li"; }

const char* to_string(AutomlMethod m) { return m == AutomlMethod::Hyperband ? "hyperband" : "successive_halving"; }

const char* to_string(TrialStatus s) {
    switch (s) {
        case TrialStatus::Pending: return "pending";
        case TrialStatus::Training: return "training";
        case TrialStatus::Stopped: return "stopped";
        case TrialStatus::Completed: return "completed";
        case TrialStatus::Diverged: return "diverged";
    }
    return "?";
}

namespace {

// eta^e for values known to stay below kMaxSearchIterations * eta (e <= s_max + 1).
int64_t power(int64_t eta, int e) {
    int64_t p = 1;
    for (int i = 0; i < e; ++i) p *= eta;
    return p;
}

// round(R * eta^i / eta^s), half up, in integers (R * eta^i <= R^2 <= 10^12).
int rung_iterations(int64_t R, int64_t eta, int i, int s) {
    const int64_t num = R * power(eta, i), den = power(eta, s);
    return int((2 * num + den) / (2 * den));
}

// rule Madlib: each rung trains r_i more, so it ends at r_0 + ... + r_i.
BracketPlan plan_bracket(int s, int64_t n, int64_t R, int64_t eta, int num_rungs, BracketRule rule) {
    BracketPlan b;
    b.s = s;
    b.num_trials = int(n);
    int in_all = 0;
    for (int i = 0; i < num_rungs; ++i) {
        RungPlan r;
        in_all = rule == BracketRule::Madlib ? in_all + rung_iterations(R, eta, i, s) : rung_iterations(R, eta, i, s);
        r.iterations = in_all;
        r.num_configs = int(n / power(eta, i));
        r.num_promoted = i + 1 < num_rungs ? int(n / power(eta, i + 1)) : 0;
        b.rungs.push_back(r);
    }
    return b;
}

}  // namespace

int SearchPlan::num_trials() const {
    int n = 0;
    for (const BracketPlan& b : brackets) n += b.num_trials;
    return n;
}

int SearchPlan::max_trial_iterations() const {
    int most = 0;
    for (const BracketPlan& b : brackets)
        if (!b.rungs.empty()) most = std::max(most, b.rungs.back().iterations);
    return most;
}

int64_t SearchPlan::model_iterations() const {
    int64_t total = 0;
    for (const BracketPlan& b : brackets) {
        int previous = 0;
        for (const RungPlan& r : b.rungs) {
            total += int64_t(r.num_configs) * (r.iterations - previous);
            previous = r.iterations;
        }
    }
    return total;
}

int SearchPlan::bracket_of(int32_t mst_key) const {
    for (std::size_t i = 0; i < brackets.size(); ++i)
        if (mst_key >= brackets[i].first_key && mst_key < brackets[i].first_key + brackets[i].num_trials) return int(i);
    fail(ErrorKind::InvalidParameter, "mst_key " + std::to_string(mst_key) + " is not a trial of this search");
}

std::string SearchPlan::describe() const {
    if (brackets.size() == 1) return "one bracket of " + std::to_string(brackets[0].num_trials) + " configurations";
    std::string s = "brackets of ";
    for (std::size_t i = 0; i < brackets.size(); ++i) {
        if (i) s += i + 1 == brackets.size() ? " and " : ", ";
        s += std::to_string(brackets[i].num_trials);
    }
    return s + " configurations";
}

SearchPlan plan_search(const AutomlBudget& budget) {
    const int64_t R = budget.max_iterations, eta = budget.eta;
    const bool hyperband = budget.method == AutomlMethod::Hyperband;
    if (eta < 2)
        fail(ErrorKind::InvalidParameter, "eta must be at least 2", "It is " + std::to_string(eta) + ".",
             "Each rung keeps the best 1/eta of its configurations; eta = 3 is usual.");
    if (R < 1) fail(ErrorKind::InvalidParameter, "max_iterations must be positive", "It is " + std::to_string(R) + ".");
    if (R > kMaxSearchIterations)
        fail(ErrorKind::Limit, "max_iterations must be at most " + std::to_string(kMaxSearchIterations),
             "It is " + std::to_string(R) + ".");
    if (R < eta)
        fail(ErrorKind::InvalidParameter, "budget is smaller than one rung",
             "max_iterations is " + std::to_string(R) + " and eta " + std::to_string(eta) +
                 ": the rung before the last would train fewer than one iteration (R / eta).",
             "Raise max_iterations to at least eta, or lower eta.");
    if (budget.skip_last < 0)
        fail(ErrorKind::InvalidParameter, "skip_last must not be negative",
             "It is " + std::to_string(budget.skip_last) + ".");
    if (hyperband && budget.num_configs)
        fail(ErrorKind::InvalidParameter, "num_configs applies only to successive_halving",
             "Hyperband draws the configurations its brackets need.", "Use num_brackets to make a search smaller.");
    if (!hyperband && budget.rule == BracketRule::Madlib)
        fail(ErrorKind::InvalidParameter, "bracket_rule madlib applies only to hyperband",
             "It is the brackets and rounds of MADlib's Hyperband; successive halving runs one bracket of num_configs.",
             "Leave out bracket_rule.");
    if (!hyperband && budget.num_brackets)
        fail(ErrorKind::InvalidParameter, "num_brackets applies only to hyperband",
             "Successive halving runs one bracket.", "Use num_configs to choose its size.");

    SearchPlan plan;
    plan.budget = budget;
    while (power(eta, plan.s_max + 1) <= R) ++plan.s_max;

    if (hyperband) {
        if (budget.skip_last > plan.s_max)
            fail(ErrorKind::InvalidParameter, "skip_last must be at most " + std::to_string(plan.s_max),
                 "With max_iterations " + std::to_string(R) + " and eta " + std::to_string(eta) +
                     " a bracket has at most " + std::to_string(plan.s_max + 1) + " rungs; skip_last " +
                     std::to_string(budget.skip_last) + " would skip them all.");
        // Brackets s_max .. skip_last keep at least one rung.
        const int available = plan.s_max - int(budget.skip_last) + 1;
        int count = available;
        if (budget.num_brackets) {
            if (*budget.num_brackets < 1 || *budget.num_brackets > available)
                fail(ErrorKind::InvalidParameter, "num_brackets must be between 1 and " + std::to_string(available),
                     "It is " + std::to_string(*budget.num_brackets) + "; max_iterations " + std::to_string(R) +
                         ", eta " + std::to_string(eta) + " and skip_last " + std::to_string(budget.skip_last) +
                         " allow " + std::to_string(available) + ".");
            count = int(*budget.num_brackets);
        }
        for (int s = plan.s_max; s > plan.s_max - count; --s) {
            // Li et al.: ceil((s_max + 1) eta^s / (s + 1)); MADlib: floor((s_max + 1) / (s + 1)) eta^s.
            const int64_t n = budget.rule == BracketRule::Madlib ? (plan.s_max + 1) / (s + 1) * power(eta, s)
                                                                 : ((plan.s_max + 1) * power(eta, s) + s) / (s + 1);
            plan.brackets.push_back(plan_bracket(s, n, R, eta, s - int(budget.skip_last) + 1, budget.rule));
        }
    } else {
        const int64_t n = budget.num_configs.value_or(power(eta, plan.s_max));
        if (n < eta)
            fail(
                ErrorKind::InvalidParameter, "num_configs must be at least eta",
                "It is " + std::to_string(n) + " and eta " + std::to_string(eta) +
                    ": successive halving keeps the best 1/eta after each rung, so fewer configurations leave nothing to halve.");
        if (uint64_t(n) > kMaxModelConfigs)
            fail(ErrorKind::Limit, "too many model configurations",
                 "num_configs is " + std::to_string(n) + "; at most " + std::to_string(kMaxModelConfigs) +
                     " are trained in one search.");
        int s = 0;
        while (s < plan.s_max && power(eta, s + 1) <= n) ++s;
        if (budget.skip_last > s - 1)
            fail(ErrorKind::InvalidParameter, "skip_last must be at most " + std::to_string(s - 1),
                 "This search halves " + std::to_string(s) + " time" + (s == 1 ? "" : "s") + "; skip_last " +
                     std::to_string(budget.skip_last) + " would leave fewer than two rungs.");
        plan.brackets.push_back(plan_bracket(s, n, R, eta, s - int(budget.skip_last) + 1, budget.rule));
    }
    int32_t key = 1;
    for (BracketPlan& b : plan.brackets) {
        b.first_key = key;
        key += b.num_trials;
    }
    if (uint64_t(plan.num_trials()) > kMaxModelConfigs)
        fail(ErrorKind::Limit, "too many model configurations",
             "This search would train " + std::to_string(plan.num_trials()) + " (" + plan.describe() + "); at most " +
                 std::to_string(kMaxModelConfigs) + " are trained in one search.",
             "Lower max_iterations, raise eta, or run fewer brackets (num_brackets).");
    return plan;
}

RungRanking rank_rung(const std::vector<RungScore>& scores, int num_promoted, bool smaller_is_better) {
    std::vector<RungScore> sorted = scores;
    auto ranked = [](const RungScore& s) { return !s.diverged && s.value && std::isfinite(*s.value); };
    std::stable_sort(sorted.begin(), sorted.end(), [&](const RungScore& a, const RungScore& b) {
        const bool ra = ranked(a), rb = ranked(b);
        if (ra != rb) return ra;
        if (ra && *a.value != *b.value) return smaller_is_better ? *a.value < *b.value : *a.value > *b.value;
        return a.mst_key < b.mst_key;
    });
    RungRanking out;
    for (const RungScore& s : sorted) {
        out.order.push_back(s.mst_key);
        if (int(out.promoted.size()) < num_promoted && ranked(s)) out.promoted.push_back(s.mst_key);
    }
    return out;
}

SearchProgress::SearchProgress(SearchPlan plan) : plan_(std::move(plan)) {
    current_.assign(plan_.brackets.size(), 0);
    recorded_end_.assign(plan_.brackets.size(), -1);
    members_.resize(plan_.brackets.size());
    for (std::size_t b = 0; b < plan_.brackets.size(); ++b) {
        const BracketPlan& bp = plan_.brackets[b];
        members_[b].resize(bp.rungs.size());
        for (int k = 0; k < bp.num_trials; ++k) members_[b][0].push_back(bp.first_key + k);
    }
}

bool SearchProgress::bracket_finished(int bracket) const {
    return current_[bracket] >= int(plan_.brackets[bracket].rungs.size());
}

bool SearchProgress::finished() const {
    for (std::size_t b = 0; b < current_.size(); ++b)
        if (!bracket_finished(int(b))) return false;
    return true;
}

std::vector<RungRef> SearchProgress::training_rungs(bool pack_brackets) const {
    std::vector<RungRef> out;
    for (std::size_t b = 0; b < current_.size(); ++b) {
        if (bracket_finished(int(b))) continue;
        out.push_back({int(b), current_[b]});
        if (!pack_brackets) break;
    }
    return out;
}

const std::vector<int32_t>& SearchProgress::members(RungRef r) const {
    if (r.bracket < 0 || r.bracket >= int(members_.size()) || r.rung < 0 || r.rung >= int(members_[r.bracket].size()) ||
        r.rung > current_[r.bracket])
        fail(ErrorKind::Internal,
             "rung " + std::to_string(r.rung) + " of bracket " + std::to_string(r.bracket) + " is not known yet");
    return members_[r.bracket][r.rung];
}

int SearchProgress::target_iterations(RungRef r) const {
    return plan_.brackets.at(r.bracket).rungs.at(r.rung).iterations;
}

std::vector<std::pair<int32_t, TrialStatus>> SearchProgress::record(RungRef r, const RungRanking& ranking,
                                                                    const std::vector<int32_t>& diverged) {
    if (r.bracket < 0 || r.bracket >= int(current_.size()) || bracket_finished(r.bracket) ||
        r.rung != current_[r.bracket])
        fail(ErrorKind::Data, "rung " + std::to_string(r.rung) + " of bracket " + std::to_string(r.bracket) +
                                  " is not the one being decided");
    const BracketPlan& bp = plan_.brackets[r.bracket];
    const RungPlan& rp = bp.rungs[r.rung];
    const std::vector<int32_t>& mine = members_[r.bracket][r.rung];
    const std::string where = " of rung " + std::to_string(r.rung) + " of bracket " + std::to_string(bp.s);
    if (std::multiset<int32_t>(ranking.order.begin(), ranking.order.end()) !=
        std::multiset<int32_t>(mine.begin(), mine.end()))
        fail(ErrorKind::Data, "the ranking" + where + " does not list its trials",
             std::to_string(ranking.order.size()) + " ranked, " + std::to_string(mine.size()) + " trained.");
    if (int(ranking.promoted.size()) > rp.num_promoted ||
        !std::equal(ranking.promoted.begin(), ranking.promoted.end(), ranking.order.begin()))
        fail(ErrorKind::Data, "the survivors" + where + " are not its best trials",
             std::to_string(ranking.promoted.size()) + " promoted, at most " + std::to_string(rp.num_promoted) +
                 " planned.");
    std::set<int32_t> promoted(ranking.promoted.begin(), ranking.promoted.end());
    std::set<int32_t> bad(diverged.begin(), diverged.end());
    std::vector<std::pair<int32_t, TrialStatus>> out;
    const bool last = r.rung + 1 == int(bp.rungs.size());
    for (int32_t key : ranking.order) {
        TrialStatus st = bad.count(key)        ? TrialStatus::Diverged
                         : promoted.count(key) ? TrialStatus::Training
                         : last                ? TrialStatus::Completed
                                               : TrialStatus::Stopped;
        out.emplace_back(key, st);
    }
    if (!last && !ranking.promoted.empty()) {
        members_[r.bracket][r.rung + 1] = ranking.promoted;
        current_[r.bracket] = r.rung + 1;
    } else {
        // The last rung, or nobody to continue: the bracket is done (later rungs are skipped).
        recorded_end_[r.bracket] = r.rung + 1;
        current_[r.bracket] = int(bp.rungs.size());
    }
    return out;
}

std::vector<RungRef> SearchProgress::skipped_rungs(int bracket) const {
    std::vector<RungRef> out;
    if (!bracket_finished(bracket) || recorded_end_[bracket] < 0) return out;
    for (int k = recorded_end_[bracket]; k < int(plan_.brackets[bracket].rungs.size()); ++k)
        out.push_back({bracket, k});
    return out;
}

}  // namespace hopper
