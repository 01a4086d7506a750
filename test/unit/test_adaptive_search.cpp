// Successive halving and Hyperband: plans, rankings, progress, and that decisions do not depend on
// how the rungs are scheduled or on a crash in between.
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include <gtest/gtest.h>

#include "error_helpers.h"
#include "hopper/adaptive_search.h"
#include "hopper/error.h"

using namespace hopper;
using hopper::test::kind_of;
using hopper::test::message_of;

namespace {

AutomlBudget hyperband(int64_t R, int64_t eta, int64_t skip_last = 0) {
    AutomlBudget b;
    b.method = AutomlMethod::Hyperband;
    b.max_iterations = R;
    b.eta = eta;
    b.skip_last = skip_last;
    return b;
}

AutomlBudget halving(int64_t R, int64_t eta, std::optional<int64_t> n = std::nullopt) {
    AutomlBudget b;
    b.method = AutomlMethod::SuccessiveHalving;
    b.max_iterations = R;
    b.eta = eta;
    b.num_configs = n;
    return b;
}

// (num_configs, iterations) of every rung of a bracket.
std::vector<std::pair<int, int>> rungs(const BracketPlan& b) {
    std::vector<std::pair<int, int>> out;
    for (const RungPlan& r : b.rungs) out.emplace_back(r.num_configs, r.iterations);
    return out;
}

using Pairs = std::vector<std::pair<int, int>>;

}  // namespace

TEST(PlanSearch, HyperbandMatchesTheTableOfLiEtAl) {
    // R = 81, eta = 3 (Table 1 of the paper): n = ceil(5 * 3^s / (s + 1)), r_i = 81 * 3^(i - s).
    const SearchPlan p = plan_search(hyperband(81, 3));
    EXPECT_EQ(p.s_max, 4);
    ASSERT_EQ(p.brackets.size(), 5u);
    EXPECT_EQ(rungs(p.brackets[0]), (Pairs{{81, 1}, {27, 3}, {9, 9}, {3, 27}, {1, 81}}));
    EXPECT_EQ(rungs(p.brackets[1]), (Pairs{{34, 3}, {11, 9}, {3, 27}, {1, 81}}));
    EXPECT_EQ(rungs(p.brackets[2]), (Pairs{{15, 9}, {5, 27}, {1, 81}}));
    EXPECT_EQ(rungs(p.brackets[3]), (Pairs{{8, 27}, {2, 81}}));
    EXPECT_EQ(rungs(p.brackets[4]), (Pairs{{5, 81}}));
    EXPECT_EQ(p.num_trials(), 81 + 34 + 15 + 8 + 5);
    // mst_keys bracket after bracket, s_max's first.
    EXPECT_EQ(p.brackets[0].first_key, 1);
    EXPECT_EQ(p.brackets[1].first_key, 82);
    EXPECT_EQ(p.brackets[4].first_key, 139);
    EXPECT_EQ(p.bracket_of(81), 0);
    EXPECT_EQ(p.bracket_of(82), 1);
    EXPECT_EQ(p.bracket_of(143), 4);
    EXPECT_EQ(kind_of([&] { p.bracket_of(144); }), ErrorKind::InvalidParameter);
    // Survivors: floor(n_i / eta), none after the last rung.
    EXPECT_EQ(p.brackets[1].rungs[0].num_promoted, 11);
    EXPECT_EQ(p.brackets[1].rungs[3].num_promoted, 0);
    EXPECT_EQ(p.brackets[4].rungs[0].num_promoted, 0);
}

TEST(PlanSearch, ModelIterationsCountWarmStartedContinuations) {
    // R = 27, eta = 3: 27@1 9@3 3@9 1@27 | 12@3 4@9 1@27 | 6@9 2@27 | 4@27.
    const SearchPlan p = plan_search(hyperband(27, 3));
    EXPECT_EQ(p.num_trials(), 49);
    // Survivors train only the difference: 27*1 + 9*2 + 3*6 + 1*18 = 81, 12*3 + 4*6 + 18 = 78,
    // 6*9 + 2*18 = 90, 4*27 = 108.
    EXPECT_EQ(p.model_iterations(), 81 + 78 + 90 + 108);
    EXPECT_EQ(p.describe(), "brackets of 27, 12, 6 and 4 configurations");
}

TEST(PlanSearch, IterationsAreRoundedHalfUp) {
    // R = 10 is no power of 3: 10/9 -> 1, 10/3 -> 3.
    SearchPlan p = plan_search(hyperband(10, 3));
    EXPECT_EQ(p.s_max, 2);
    EXPECT_EQ(rungs(p.brackets[0]), (Pairs{{9, 1}, {3, 3}, {1, 10}}));
    EXPECT_EQ(rungs(p.brackets[1]), (Pairs{{5, 3}, {1, 10}}));  // n = ceil(4.5)
    EXPECT_EQ(rungs(p.brackets[2]), (Pairs{{3, 10}}));
    // 6 / 4 = 1.5 -> 2.
    p = plan_search(hyperband(6, 4));
    EXPECT_EQ(p.s_max, 1);
    EXPECT_EQ(rungs(p.brackets[0]), (Pairs{{4, 2}, {1, 6}}));
    // The last rung of every bracket trains to R exactly; rungs strictly grow.
    for (int64_t R : {2, 3, 5, 7, 10, 26, 27, 28, 100, 1000})
        for (int64_t eta : {2, 3, 4, 5}) {
            if (R < eta) continue;
            for (const BracketPlan& b : plan_search(hyperband(R, eta)).brackets) {
                EXPECT_EQ(b.rungs.back().iterations, R);
                EXPECT_GE(b.rungs.front().iterations, 1);
                for (std::size_t i = 1; i < b.rungs.size(); ++i) {
                    EXPECT_GT(b.rungs[i].iterations, b.rungs[i - 1].iterations) << R << " " << eta;
                    EXPECT_EQ(b.rungs[i].num_configs, b.rungs[i - 1].num_promoted);
                    EXPECT_GE(b.rungs[i].num_configs, 1);
                }
            }
        }
}

TEST(PlanSearch, SkipLastAndNumBrackets) {
    // skip_last = 1 drops each bracket's last rung; bracket 0 (one rung) goes entirely.
    SearchPlan p = plan_search(hyperband(27, 3, 1));
    ASSERT_EQ(p.brackets.size(), 3u);
    EXPECT_EQ(rungs(p.brackets[0]), (Pairs{{27, 1}, {9, 3}, {3, 9}}));
    EXPECT_EQ(p.brackets[0].rungs.back().num_promoted, 0);
    EXPECT_EQ(rungs(p.brackets[1]), (Pairs{{12, 3}, {4, 9}}));
    EXPECT_EQ(rungs(p.brackets[2]), (Pairs{{6, 9}}));
    EXPECT_EQ(p.num_trials(), 45);

    AutomlBudget b = hyperband(27, 3);
    b.num_brackets = 2;
    p = plan_search(b);
    ASSERT_EQ(p.brackets.size(), 2u);
    EXPECT_EQ(p.brackets[0].s, 3);
    EXPECT_EQ(p.brackets[1].s, 2);
    EXPECT_EQ(p.num_trials(), 39);
}

TEST(PlanSearch, SuccessiveHalvingIsOneBracket) {
    SearchPlan p = plan_search(halving(27, 3));
    ASSERT_EQ(p.brackets.size(), 1u);
    EXPECT_EQ(rungs(p.brackets[0]), (Pairs{{27, 1}, {9, 3}, {3, 9}, {1, 27}}));
    EXPECT_EQ(p.model_iterations(), 81);
    // 10 configurations halve twice (9 <= 10 < 27): the first rung gets R / 9.
    p = plan_search(halving(27, 3, 10));
    EXPECT_EQ(rungs(p.brackets[0]), (Pairs{{10, 3}, {3, 9}, {1, 27}}));
    // More configurations than eta^s_max: the last rung trains several to R.
    p = plan_search(halving(27, 3, 100));
    EXPECT_EQ(rungs(p.brackets[0]), (Pairs{{100, 1}, {33, 3}, {11, 9}, {3, 27}}));
    AutomlBudget b = halving(27, 3, 27);
    b.skip_last = 2;
    p = plan_search(b);
    EXPECT_EQ(rungs(p.brackets[0]), (Pairs{{27, 1}, {9, 3}}));
    EXPECT_EQ(p.describe(), "one bracket of 27 configurations");
}

TEST(PlanSearch, RefusesBadBudgets) {
    EXPECT_EQ(message_of([] { plan_search(hyperband(27, 1)); }), "eta must be at least 2");
    EXPECT_EQ(kind_of([] { plan_search(hyperband(27, 0)); }), ErrorKind::InvalidParameter);
    EXPECT_EQ(message_of([] { plan_search(hyperband(2, 3)); }), "budget is smaller than one rung");
    EXPECT_EQ(message_of([] { plan_search(halving(2, 3)); }), "budget is smaller than one rung");
    EXPECT_EQ(message_of([] { plan_search(hyperband(0, 3)); }), "max_iterations must be positive");
    EXPECT_EQ(kind_of([] { plan_search(hyperband(kMaxSearchIterations + 1, 3)); }), ErrorKind::Limit);
    EXPECT_EQ(message_of([] { plan_search(hyperband(27, 3, -1)); }), "skip_last must not be negative");
    EXPECT_EQ(message_of([] { plan_search(hyperband(27, 3, 4)); }), "skip_last must be at most 3");
    EXPECT_EQ(message_of([] { plan_search(hyperband(27, 3, 3)); }), "");  // bracket s = 3 keeps one rung
    AutomlBudget b = halving(27, 3, 9);
    b.skip_last = 2;  // 9 configurations halve twice: skipping 2 leaves one rung
    EXPECT_EQ(message_of([&] { plan_search(b); }), "skip_last must be at most 1");
    EXPECT_EQ(message_of([] { plan_search(halving(27, 3, 2)); }), "num_configs must be at least eta");
    EXPECT_EQ(kind_of([] { plan_search(halving(27, 3, 20000)); }), ErrorKind::Limit);
    b = hyperband(27, 3);
    b.num_configs = 10;
    EXPECT_EQ(message_of([&] { plan_search(b); }), "num_configs applies only to successive_halving");
    b = halving(27, 3);
    b.num_brackets = 1;
    EXPECT_EQ(message_of([&] { plan_search(b); }), "num_brackets applies only to hyperband");
    b = hyperband(27, 3);
    b.num_brackets = 0;
    EXPECT_EQ(message_of([&] { plan_search(b); }), "num_brackets must be between 1 and 4");
    b.num_brackets = 5;
    EXPECT_EQ(message_of([&] { plan_search(b); }), "num_brackets must be between 1 and 4");
    // 2^19 configurations in the first bracket.
    EXPECT_EQ(kind_of([] { plan_search(hyperband(1000000, 2)); }), ErrorKind::Limit);
}

TEST(PlanSearch, MadlibBracketRuleIsMadlibsHyperband) {
    // MADlib's madlib_keras_automl: n = floor((s_max + 1) / (s + 1)) * eta^s, and every round trains
    // r_i = round(R * eta^(i - s)) iterations more (warm start), so rung i ends at r_0 + ... + r_i.
    AutomlBudget b = hyperband(9, 3);
    const SearchPlan li = plan_search(b);
    ASSERT_EQ(li.brackets.size(), 3u);  // Li et al.: 9, 5 and 3 configurations, rungs ending at r_i
    EXPECT_EQ(rungs(li.brackets[1]), (Pairs{{5, 3}, {1, 9}}));
    EXPECT_EQ(li.num_trials(), 17);
    b.rule = BracketRule::Madlib;
    const SearchPlan p = plan_search(b);
    ASSERT_EQ(p.brackets.size(), 3u);
    EXPECT_EQ(rungs(p.brackets[0]), (Pairs{{9, 1}, {3, 4}, {1, 13}}));
    EXPECT_EQ(rungs(p.brackets[1]), (Pairs{{3, 3}, {1, 12}}));
    EXPECT_EQ(rungs(p.brackets[2]), (Pairs{{3, 9}}));
    EXPECT_EQ(p.num_trials(), 15);
    EXPECT_EQ(p.brackets[1].first_key, 10);
    EXPECT_EQ(p.brackets[0].rungs[0].num_promoted, 3);
    EXPECT_EQ(p.max_trial_iterations(), 13);
    EXPECT_EQ(li.max_trial_iterations(), 9);
    // R = 81, eta = 3 (MADlib's docs' schedule): n = 81, 27, 9, 6, 5.
    b.max_iterations = 81;
    const SearchPlan q = plan_search(b);
    std::vector<int> n;
    for (const BracketPlan& x : q.brackets) n.push_back(x.num_trials);
    EXPECT_EQ(n, (std::vector<int>{81, 27, 9, 6, 5}));
    EXPECT_EQ(rungs(q.brackets[3]), (Pairs{{6, 27}, {2, 108}}));
    // skip_last drops the last rounds as with Li et al.'s rule.
    b.max_iterations = 9;
    b.skip_last = 1;
    EXPECT_EQ(rungs(plan_search(b).brackets[0]), (Pairs{{9, 1}, {3, 4}}));
    EXPECT_EQ(plan_search(b).brackets.size(), 2u);
    // Hyperband's only.
    AutomlBudget h = halving(9, 3);
    h.rule = BracketRule::Madlib;
    EXPECT_EQ(message_of([&] { plan_search(h); }), "bracket_rule madlib applies only to hyperband");
    EXPECT_EQ(parse_bracket_rule("MADlib"), BracketRule::Madlib);
    EXPECT_EQ(parse_bracket_rule("li"), BracketRule::LiEtAl);
    EXPECT_EQ(std::string(to_string(BracketRule::Madlib)), "madlib");
    EXPECT_EQ(kind_of([] { parse_bracket_rule("paper"); }), ErrorKind::InvalidParameter);
}

TEST(AutomlMethodNames, ParseAndPrint) {
    EXPECT_EQ(parse_automl_method("Hyperband"), AutomlMethod::Hyperband);
    EXPECT_EQ(parse_automl_method("successive_halving"), AutomlMethod::SuccessiveHalving);
    EXPECT_EQ(parse_automl_method("Successive Halving"), AutomlMethod::SuccessiveHalving);
    EXPECT_EQ(std::string(to_string(AutomlMethod::SuccessiveHalving)), "successive_halving");
    EXPECT_EQ(message_of([] { parse_automl_method("hyperopt"); }), "automl_method hyperopt is not supported");
    EXPECT_EQ(kind_of([] { parse_automl_method("grid"); }), ErrorKind::InvalidParameter);
}

TEST(RankRung, TiesGoToTheSmallerKeyAndUnrankableTrialsLast) {
    std::vector<RungScore> s = {{5, 0.3, false},          {2, 0.1, false}, {9, 0.1, false}, {4, std::nullopt, false},
                                {1, std::nan(""), false}, {7, 0.05, true}, {3, 0.2, false}};
    RungRanking r = rank_rung(s, 2, true);
    EXPECT_EQ(r.order, (std::vector<int32_t>{2, 9, 3, 5, 1, 4, 7}));
    EXPECT_EQ(r.promoted, (std::vector<int32_t>{2, 9}));
    // Larger is better (accuracy).
    r = rank_rung(s, 3, false);
    EXPECT_EQ(r.order, (std::vector<int32_t>{5, 3, 2, 9, 1, 4, 7}));
    EXPECT_EQ(r.promoted, (std::vector<int32_t>{5, 3, 2}));
    // Never promotes a trial without a value, even when the plan would keep more.
    r = rank_rung({{1, std::nullopt, false}, {2, 1.0, true}, {3, 0.5, false}}, 3, true);
    EXPECT_EQ(r.order, (std::vector<int32_t>{3, 1, 2}));
    EXPECT_EQ(r.promoted, (std::vector<int32_t>{3}));
    // The input order does not matter.
    std::vector<RungScore> reversed(s.rbegin(), s.rend());
    EXPECT_EQ(rank_rung(reversed, 2, true).order, rank_rung(s, 2, true).order);
}

TEST(SearchProgress, PackedAndSequentialOrders) {
    SearchProgress p(plan_search(hyperband(9, 3)));  // 9@1 3@3 1@9 | 5@3 1@9 | 3@9
    auto packed = p.training_rungs(true);
    ASSERT_EQ(packed.size(), 3u);
    EXPECT_EQ(packed[1], (RungRef{1, 0}));
    ASSERT_EQ(p.training_rungs(false).size(), 1u);
    EXPECT_EQ(p.members({1, 0}), (std::vector<int32_t>{10, 11, 12, 13, 14}));
    EXPECT_EQ(p.target_iterations({0, 1}), 3);
    EXPECT_EQ(kind_of([&] { p.members({0, 1}); }), ErrorKind::Internal);  // not decided yet

    auto st = p.record({0, 0},
                       rank_rung({{1, 9.0, false},
                                  {2, 8.0, false},
                                  {3, 7.0, false},
                                  {4, 6.0, false},
                                  {5, 5.0, false},
                                  {6, 4.0, false},
                                  {7, 3.0, false},
                                  {8, 2.0, false},
                                  {9, 1.0, true}},
                                 3, true),
                       {9});
    EXPECT_EQ(p.members({0, 1}), (std::vector<int32_t>{8, 7, 6}));
    std::map<int32_t, TrialStatus> m(st.begin(), st.end());
    EXPECT_EQ(m[8], TrialStatus::Training);
    EXPECT_EQ(m[5], TrialStatus::Stopped);
    EXPECT_EQ(m[9], TrialStatus::Diverged);
    EXPECT_EQ(p.current_rung(0), 1);
    // Sequential: bracket 0 trains until it is done.
    EXPECT_EQ(p.training_rungs(false)[0], (RungRef{0, 1}));

    // A rung that promotes nobody ends its bracket; the rest is skipped.
    p.record({0, 1}, RungRanking{{8, 7, 6}, {}}, {6, 7, 8});
    EXPECT_TRUE(p.bracket_finished(0));
    ASSERT_EQ(p.skipped_rungs(0).size(), 1u);
    EXPECT_EQ(p.skipped_rungs(0)[0], (RungRef{0, 2}));
    EXPECT_FALSE(p.finished());
    auto last = p.record({2, 0}, RungRanking{{16, 15, 17}, {}});
    EXPECT_EQ(last[0].second, TrialStatus::Completed);
    EXPECT_TRUE(p.skipped_rungs(2).empty());
}

TEST(SearchProgress, RefusesDecisionsThatDoNotFit) {
    SearchProgress p(plan_search(halving(9, 3)));  // 9@1 3@3 1@9
    const RungRanking good =
        rank_rung({{1, 1.0}, {2, 2.0}, {3, 3.0}, {4, 4.0}, {5, 5.0}, {6, 6.0}, {7, 7.0}, {8, 8.0}, {9, 9.0}}, 3, true);
    // Not the current rung.
    EXPECT_EQ(kind_of([&] { p.record({0, 1}, good); }), ErrorKind::Data);
    EXPECT_EQ(kind_of([&] { p.record({1, 0}, good); }), ErrorKind::Data);
    // Not a permutation of the rung's trials.
    RungRanking bad = good;
    bad.order.pop_back();
    EXPECT_EQ(kind_of([&] { p.record({0, 0}, bad); }), ErrorKind::Data);
    bad = good;
    bad.order[0] = 42;
    EXPECT_EQ(kind_of([&] { p.record({0, 0}, bad); }), ErrorKind::Data);
    // Survivors that are not the best, or too many.
    bad = good;
    bad.promoted = {2, 1, 3};
    EXPECT_EQ(kind_of([&] { p.record({0, 0}, bad); }), ErrorKind::Data);
    bad = good;
    bad.promoted = {1, 2, 3, 4};
    EXPECT_EQ(kind_of([&] { p.record({0, 0}, bad); }), ErrorKind::Data);
    p.record({0, 0}, good);
    EXPECT_EQ(p.members({0, 1}), (std::vector<int32_t>{1, 2, 3}));
}

namespace {

// Runs a whole search as the port does -- train the training rungs one iteration at a time, decide
// every rung that reached its budget -- with a searcher metric that depends only on the trial and
// its iterations (as training does, see HopSchedule::for_phases). Returns each rung's decision.
using Decisions = std::map<std::pair<int, int>, RungRanking>;

double fake_loss(int32_t key, int iterations) {
    // Configurations differ in how fast they learn; some cross over.
    const double speed = 0.1 + 0.07 * ((key * 37) % 11);
    const double floor_ = 0.02 * ((key * 53) % 7);
    return floor_ + 1.0 / (1.0 + speed * iterations);
}

Decisions simulate(SearchProgress& p, bool pack, int crash_after_steps = -1, int* steps_done = nullptr) {
    Decisions out;
    std::map<int32_t, int> iterations;
    // Continue rungs in progress from their start (a resumed search restarts them).
    for (int b = 0; b < int(p.plan().brackets.size()); ++b)
        if (!p.bracket_finished(b) && p.current_rung(b) > 0)
            for (int32_t k : p.members({b, p.current_rung(b)}))
                iterations[k] = p.target_iterations({b, p.current_rung(b) - 1});
    int steps = 0;
    while (!p.finished()) {
        if (steps == crash_after_steps) break;
        const std::vector<RungRef> now = p.training_rungs(pack);
        for (RungRef r : now)
            for (int32_t k : p.members(r)) ++iterations[k];
        ++steps;
        for (RungRef r : now) {
            const std::vector<int32_t>& keys = p.members(r);
            if (iterations[keys[0]] < p.target_iterations(r)) continue;
            std::vector<RungScore> scores;
            for (int32_t k : keys) {
                EXPECT_EQ(iterations[k], p.target_iterations(r));
                scores.push_back({k, fake_loss(k, iterations[k]), false});
            }
            RungRanking ranking = rank_rung(scores, p.plan().brackets[r.bracket].rungs[r.rung].num_promoted, true);
            out[{r.bracket, r.rung}] = ranking;
            p.record(r, ranking);
        }
    }
    if (steps_done) *steps_done = steps;
    return out;
}

bool same(const Decisions& a, const Decisions& b) {
    if (a.size() != b.size()) return false;
    for (const auto& [k, r] : a) {
        auto it = b.find(k);
        if (it == b.end() || it->second.order != r.order || it->second.promoted != r.promoted) return false;
    }
    return true;
}

}  // namespace

TEST(SearchProgress, PackingChangesTheScheduleNotTheDecisions) {
    for (int64_t R : {9, 27, 30}) {
        SearchProgress packed(plan_search(hyperband(R, 3))), sequential(plan_search(hyperband(R, 3)));
        int packed_steps = 0, sequential_steps = 0;
        const Decisions a = simulate(packed, true, -1, &packed_steps);
        const Decisions b = simulate(sequential, false, -1, &sequential_steps);
        EXPECT_TRUE(same(a, b)) << R;
        // Packed, the brackets train side by side: as many ring iterations as the longest bracket (R).
        EXPECT_EQ(packed_steps, R);
        EXPECT_GT(sequential_steps, packed_steps);
        int rung_count = 0;
        for (const BracketPlan& bp : packed.plan().brackets) rung_count += int(bp.rungs.size());
        EXPECT_EQ(int(a.size()), rung_count);
    }
}

TEST(SearchProgress, ACrashedSearchReplaysItsDecisionsAndMakesTheSameOnes) {
    const SearchPlan plan = plan_search(hyperband(27, 3));
    SearchProgress whole(plan);
    const Decisions expected = simulate(whole, true);
    for (int crash : {1, 2, 5, 9, 10, 20, 26}) {
        for (bool pack : {true, false}) {
            SearchProgress first(plan);
            const Decisions before = simulate(first, pack, crash);
            // Resume: a new progress replays what was recorded (in any bracket order), then goes on.
            SearchProgress resumed(plan);
            for (int b = int(plan.brackets.size()) - 1; b >= 0; --b)
                for (int k = 0;; ++k) {
                    auto it = before.find({b, k});
                    if (it == before.end()) break;
                    resumed.record({b, k}, it->second);
                }
            Decisions after = simulate(resumed, !pack);
            after.insert(before.begin(), before.end());
            EXPECT_TRUE(same(after, expected)) << "crash after " << crash << (pack ? " packed" : " sequential");
        }
    }
}
