// The registry's database-independent rules: names, labels, states, searcher metric, sort keys,
// garbage-collection policy and chunking.
#include <cmath>
#include <functional>
#include <regex>

#include <gtest/gtest.h>

#include "error_helpers.h"
#include "hopper/error.h"
#include "hopper/registry.h"

using namespace hopper;
using hopper::test::kind_of;
using hopper::test::message_of;

namespace {}  // namespace

TEST(RegistryNames, AcceptsTheDocumentedAlphabet) {
    for (const char* ok : {"fraud", "Fraud-Detector", "a", "7up", "m.v2", "x_1-2.3", "A0"})
        EXPECT_NO_THROW(check_registry_name(ok, "model name")) << ok;
    EXPECT_NO_THROW(check_registry_name(std::string(128, 'a'), "model name"));
}

TEST(RegistryNames, RefusesWithAMessageThatSaysWhy) {
    EXPECT_EQ(message_of([] { check_registry_name("", "model name"); }), "model name must not be empty");
    EXPECT_EQ(message_of([] { check_registry_name(std::string(129, 'a'), "model name"); }), "model name is too long");
    EXPECT_EQ(message_of([] { check_registry_name("-x", "alias"); }), "alias \"-x\" must start with a letter or digit");
    EXPECT_EQ(message_of([] { check_registry_name("a b", "model name"); }),
              "model name \"a b\" contains the character \" \" at position 2");
    EXPECT_EQ(message_of([] { check_registry_name("42", "alias"); }), "alias \"42\" is a number");
    try {
        check_registry_name("42", "alias");
    } catch (const Error& e) { EXPECT_EQ(e.detail().substr(0, 9), "An alias "); }
    EXPECT_EQ(message_of([] { check_registry_name("a\nb", "model name"); }),
              "model name \"a\\x0ab\" contains the character \"\\x0a\" at position 2");
    // A character of several UTF-8 bytes is named whole, at its position in characters, and a long
    // name is cut between characters: the message stays valid UTF-8 (a zero-width space was named
    // by its first byte, "\xE2", a hostile review).
    EXPECT_EQ(message_of([] { check_registry_name("churn\u200b", "model name"); }),
              "model name \"churn\u200b\" contains the character \"\u200b\" at position 6");
    EXPECT_EQ(message_of([] { check_registry_name("caf\u00e9s\u00e9", "model name"); }),
              "model name \"caf\u00e9s\u00e9\" contains the character \"\u00e9\" at position 4");
    // A byte that starts no UTF-8 character is written \xNN.
    EXPECT_EQ(message_of([] { check_registry_name("ab\xe9", "model name"); }),
              "model name \"ab\\xe9\" contains the character \"\\xe9\" at position 3");
    const std::string long_name = std::string(63, 'a') + "\u00e9b";
    EXPECT_EQ(message_of([&] { check_registry_name(long_name, "model name"); }),
              "model name \"" + std::string(63, 'a') + "...\" contains the character \"\u00e9\" at position 64");
    for (const char* bad : {"x;drop", "é", "a/b", "a'b", "\"q\"", ".x", "_x"})
        EXPECT_EQ(kind_of([&] { check_registry_name(bad, "model name"); }), ErrorKind::InvalidParameter) << bad;
}

TEST(RegistryNames, PatternAgreesWithTheCheck) {
    // The SQL CHECK constraint uses kRegistryNamePattern plus "not digits only"; both must agree.
    std::regex re(kRegistryNamePattern, std::regex::extended);
    std::regex digits("^[0-9]+$", std::regex::extended);
    for (const std::string& s :
         std::vector<std::string>{"fraud", "a b", "-x", "42", "7up", "m.v2", "", "x;y", std::string(128, 'z'),
                                  std::string(129, 'z'), "_x", "Z_", "a..b"}) {
        bool sql_ok = std::regex_match(s, re) && !std::regex_match(s, digits);
        bool core_ok = true;
        try {
            check_registry_name(s, "model name");
        } catch (const Error&) { core_ok = false; }
        EXPECT_EQ(sql_ok, core_ok) << s;
    }
}

TEST(RegistryNames, KeyIsCaseInsensitive) {
    EXPECT_EQ(registry_name_key("Fraud-V2"), "fraud-v2");
    EXPECT_EQ(registry_name_key("fraud-v2"), registry_name_key("FRAUD-V2"));
}

TEST(RegistryLabels, DropsDuplicatesKeepsOrder) {
    EXPECT_EQ(normalize_labels({"b", "a", "b", "c", "a"}), (std::vector<std::string>{"b", "a", "c"}));
    EXPECT_TRUE(normalize_labels({}).empty());
}

TEST(RegistryLabels, RefusesBadLabels) {
    EXPECT_EQ(message_of([] { normalize_labels({"ok", ""}); }), "a label must not be empty");
    EXPECT_EQ(message_of([] { normalize_labels({std::string(65, 'x')}); }).substr(0, 7), "label \"");
    EXPECT_EQ(message_of([] { normalize_labels({"a\tb"}); }), "label \"a\\x09b\" contains a control character");
    EXPECT_EQ(message_of([] { normalize_labels({" x"}); }), "label \" x\" begins or ends with a space");
    EXPECT_EQ(message_of([] { normalize_labels(std::vector<std::string>(65, "x")); }), "too many labels");
    EXPECT_NO_THROW(normalize_labels({"production", "team: ranking", "ünïcode"}));
}

TEST(RegistryTasks, TaskTypes) {
    for (const char* ok : {"TRAINING", "IMPORT", "FINE_TUNE", "X1"}) EXPECT_NO_THROW(check_task_type(ok)) << ok;
    for (const char* bad : {"", "training", "1X", "A-B", "A B"})
        EXPECT_EQ(kind_of([&] { check_task_type(bad); }), ErrorKind::InvalidParameter) << bad;
    EXPECT_EQ(kind_of([] { check_task_type(std::string(64, 'A')); }), ErrorKind::InvalidParameter);
}

TEST(CheckpointStates, ParseAndPrintRoundTrip) {
    for (CheckpointState s : {CheckpointState::Active, CheckpointState::Completed, CheckpointState::Error,
                              CheckpointState::Deleting, CheckpointState::Deleted, CheckpointState::PartiallyDeleted})
        EXPECT_EQ(parse_checkpoint_state(to_string(s)), s);
    EXPECT_EQ(parse_checkpoint_state("completed"), CheckpointState::Completed);
    EXPECT_EQ(message_of([] { parse_checkpoint_state("DONE"); }), "unknown checkpoint state \"DONE\"");
    EXPECT_TRUE(is_deleted_state(CheckpointState::Deleting));
    EXPECT_TRUE(is_deleted_state(CheckpointState::PartiallyDeleted));
    EXPECT_FALSE(is_deleted_state(CheckpointState::Error));
}

TEST(CheckpointStates, Transitions) {
    using S = CheckpointState;
    EXPECT_TRUE(checkpoint_transition_allowed(S::Active, S::Completed));
    EXPECT_TRUE(checkpoint_transition_allowed(S::Active, S::Error));
    EXPECT_TRUE(checkpoint_transition_allowed(S::Completed, S::Error));
    EXPECT_TRUE(checkpoint_transition_allowed(S::Deleting, S::Deleted));
    EXPECT_TRUE(checkpoint_transition_allowed(S::Deleting, S::PartiallyDeleted));
    EXPECT_TRUE(checkpoint_transition_allowed(S::PartiallyDeleted, S::Deleted));
    // Deletion goes through delete_checkpoints; nothing comes back from DELETED or ERROR.
    EXPECT_FALSE(checkpoint_transition_allowed(S::Completed, S::Deleted));
    EXPECT_FALSE(checkpoint_transition_allowed(S::Completed, S::Deleting));
    EXPECT_FALSE(checkpoint_transition_allowed(S::Deleted, S::Completed));
    EXPECT_FALSE(checkpoint_transition_allowed(S::Error, S::Completed));
    EXPECT_FALSE(checkpoint_transition_allowed(S::Completed, S::Active));
}

TEST(SearcherMetric, DefaultsToTheLossOfTheBestDataSet) {
    SearcherMetric v = resolve_searcher_metric("", true, {{Metric::Accuracy}});
    EXPECT_EQ(v.name, "validation_loss");
    EXPECT_TRUE(v.smaller_is_better);
    SearcherMetric t = resolve_searcher_metric("", false, {{}});
    EXPECT_EQ(t.name, "training_loss");
    EXPECT_FALSE(t.validation);
}

TEST(SearcherMetric, DirectionFollowsTheMetric) {
    SearcherMetric a =
        resolve_searcher_metric("accuracy", true, {{Metric::Accuracy}, {Metric::Accuracy, Metric::Loss}});
    EXPECT_EQ(a.name, "validation_accuracy");
    EXPECT_FALSE(a.smaller_is_better);
    SearcherMetric m = resolve_searcher_metric("training_mean_absolute_error", true, {{Metric::MeanAbsoluteError}});
    EXPECT_EQ(m.name, "training_mean_absolute_error");
    EXPECT_TRUE(m.smaller_is_better);
    EXPECT_FALSE(metric_smaller_is_better("top_k_accuracy"));
    EXPECT_TRUE(metric_smaller_is_better("mean_squared_error"));
}

TEST(SearcherMetric, TakesTheNamesCompileParametersTake) {
    // metrics=['mae'] in the compile parameters, searcher_metric => 'mae': one metric (it was unknown).
    SearcherMetric mae = resolve_searcher_metric("mae", true, {{Metric::MeanAbsoluteError}});
    EXPECT_EQ(mae.name, "validation_mean_absolute_error");
    EXPECT_TRUE(mae.smaller_is_better);
    EXPECT_EQ(resolve_searcher_metric("training_acc", true, {{Metric::Accuracy}}).name, "training_accuracy");
    EXPECT_EQ(resolve_searcher_metric("top_k_categorical_accuracy", false, {{Metric::TopKAccuracy}}).name,
              "training_top_k_accuracy");
}

TEST(SearcherMetric, Refusals) {
    EXPECT_EQ(message_of([] { resolve_searcher_metric("f1", false, {{}}); }), "unknown searcher metric \"f1\"");
    EXPECT_EQ(message_of([] { resolve_searcher_metric("validation_loss", false, {{}}); }),
              "searcher metric \"validation_loss\" needs a validation table");
    EXPECT_EQ(message_of([] {
                  resolve_searcher_metric("accuracy", true, {{Metric::Accuracy}, {Metric::Loss}});
              }),
              "searcher metric \"accuracy\" is not computed for every model configuration");
    EXPECT_EQ(message_of([] { resolve_searcher_metric("validation_", true, {{}}); }),
              "unknown searcher metric \"validation_\"");
}

TEST(SearcherMetric, SignedValue) {
    EXPECT_EQ(*signed_searcher_value(0.25, true), 0.25);
    EXPECT_EQ(*signed_searcher_value(0.75, false), -0.75);
    EXPECT_FALSE(signed_searcher_value(std::nan(""), true));
    EXPECT_FALSE(signed_searcher_value(INFINITY, false));
}

TEST(SortKeys, Checkpoints) {
    EXPECT_EQ(parse_checkpoint_sort("steps").kind, SortKey::Steps);
    EXPECT_EQ(parse_checkpoint_sort("report_time").kind, SortKey::ReportTime);
    EXPECT_EQ(parse_checkpoint_sort("searcher_metric").kind, SortKey::SearcherMetric);
    SortKey v = parse_checkpoint_sort("validation.accuracy");
    EXPECT_EQ(v.kind, SortKey::ValidationMetric);
    EXPECT_EQ(v.metric, "accuracy");
    SortKey t = parse_checkpoint_sort("training.loss");
    EXPECT_EQ(t.kind, SortKey::TrainingMetric);
    EXPECT_EQ(t.metric, "loss");
    SortKey bare = parse_checkpoint_sort("top_k_accuracy");
    EXPECT_EQ(bare.kind, SortKey::ValidationMetric);
    EXPECT_EQ(message_of([] { parse_checkpoint_sort("validation.acc'); drop"); }),
              "invalid metric name in order_by \"validation.acc'); drop\"");
    EXPECT_EQ(message_of([] { parse_checkpoint_sort("size.x"); }), "unknown order_by \"size.x\"");
    EXPECT_EQ(kind_of([] { parse_checkpoint_sort(""); }), ErrorKind::InvalidParameter);
    EXPECT_EQ(kind_of([] { parse_checkpoint_sort("validation."); }), ErrorKind::InvalidParameter);
}

TEST(SortKeys, Versions) {
    EXPECT_EQ(parse_version_sort("version").kind, SortKey::Version);
    EXPECT_EQ(parse_version_sort("creation_time").kind, SortKey::CreationTime);
    EXPECT_EQ(parse_version_sort("validation.loss").kind, SortKey::ValidationMetric);
    EXPECT_EQ(message_of([] { parse_version_sort("accuracy"); }), "unknown order_by \"accuracy\"");
}

TEST(Paging, Bounds) {
    EXPECT_NO_THROW(check_page(1, 0));
    EXPECT_NO_THROW(check_page(kMaxPageSize, 1000000));
    EXPECT_EQ(message_of([] { check_page(0, 0); }), "page_size must be between 1 and 10000");
    EXPECT_EQ(message_of([] { check_page(kMaxPageSize + 1, 0); }), "page_size must be between 1 and 10000");
    EXPECT_EQ(message_of([] { check_page(10, -1); }), "page_offset must not be negative");
}

namespace {

GcCandidate cand(int64_t id, int64_t run, int64_t conf, std::optional<double> v, bool prot = false) {
    GcCandidate c;
    c.id = id;
    c.run = run;
    c.configuration = conf;
    c.signed_value = v;
    c.is_protected = prot;
    return c;
}

}  // namespace

TEST(GcPolicy, DefaultKeepsBestPerRunAndLatestPerConfiguration) {
    // Run 1: configuration 10 (ids 1..3), configuration 11 (ids 4..6); run 2: configuration 20 (7..8).
    std::vector<GcCandidate> c = {cand(1, 1, 10, 0.9), cand(2, 1, 10, 0.3), cand(3, 1, 10, 0.5), cand(4, 1, 11, 0.8),
                                  cand(5, 1, 11, 0.7), cand(6, 1, 11, 0.6), cand(7, 2, 20, 0.1), cand(8, 2, 20, 0.2)};
    // Kept: best of run 1 (2), latest of 10 (3), latest of 11 (6), best of run 2 (7), latest of 20 (8).
    EXPECT_EQ(select_checkpoints_to_remove(c, GcPolicy{}), (std::vector<int64_t>{1, 4, 5}));
}

TEST(GcPolicy, EachRuleAlone) {
    std::vector<GcCandidate> c = {cand(1, 1, 10, 0.9), cand(2, 1, 10, 0.3), cand(3, 1, 11, 0.5), cand(4, 2, 20, 0.1),
                                  cand(5, 2, 20, std::nullopt)};
    GcPolicy none{0, 0, 0, 0};
    EXPECT_EQ(select_checkpoints_to_remove(c, none), (std::vector<int64_t>{1, 2, 3, 4, 5}));
    GcPolicy best_overall{0, 2, 0, 0};
    EXPECT_EQ(select_checkpoints_to_remove(c, best_overall), (std::vector<int64_t>{1, 3, 5}));
    GcPolicy latest_run{0, 0, 1, 0};
    EXPECT_EQ(select_checkpoints_to_remove(c, latest_run), (std::vector<int64_t>{1, 2, 4}));
    GcPolicy best_run{2, 0, 0, 0};
    // Run 2 has only one ranked checkpoint: the unranked one (NULL metric) is never "best".
    EXPECT_EQ(select_checkpoints_to_remove(c, best_run), (std::vector<int64_t>{1, 5}));
}

TEST(GcPolicy, ProtectedAreNeverRemovedAndTakeNoSlot) {
    std::vector<GcCandidate> c = {cand(1, 1, 10, 0.9, true), cand(2, 1, 10, 0.3), cand(3, 1, 10, 0.5)};
    GcPolicy p{1, 0, 0, 0};
    EXPECT_EQ(select_checkpoints_to_remove(c, p), (std::vector<int64_t>{3}));
    GcPolicy none{0, 0, 0, 0};
    EXPECT_EQ(select_checkpoints_to_remove(c, none), (std::vector<int64_t>{2, 3}));
}

TEST(GcPolicy, TiesGoToTheEarlierCheckpoint) {
    std::vector<GcCandidate> c = {cand(5, 1, 10, 0.5), cand(3, 1, 10, 0.5), cand(9, 1, 10, 0.5)};
    EXPECT_EQ(select_checkpoints_to_remove(c, GcPolicy{1, 0, 0, 0}), (std::vector<int64_t>{5, 9}));
}

TEST(GcPolicy, IsIdempotent) {
    // Many policies over a pseudo-random population: a second pass over the kept ones removes nothing.
    uint64_t x = 12345;
    auto next = [&] {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        return x >> 33;
    };
    for (int trial = 0; trial < 200; ++trial) {
        std::vector<GcCandidate> c;
        int n = 1 + int(next() % 40);
        for (int i = 0; i < n; ++i) {
            std::optional<double> v;
            if (next() % 5) v = double(next() % 7);
            c.push_back(cand(i + 1, int64_t(next() % 3), int64_t(next() % 6), v, next() % 11 == 0));
        }
        GcPolicy p{int64_t(next() % 3), int64_t(next() % 3), int64_t(next() % 3), int64_t(next() % 3)};
        std::vector<int64_t> removed = select_checkpoints_to_remove(c, p);
        std::vector<GcCandidate> kept;
        for (const GcCandidate& k : c)
            if (!std::binary_search(removed.begin(), removed.end(), k.id)) kept.push_back(k);
        EXPECT_TRUE(select_checkpoints_to_remove(kept, p).empty()) << "trial " << trial;
        for (const GcCandidate& k : c) {
            if (k.is_protected) { EXPECT_FALSE(std::binary_search(removed.begin(), removed.end(), k.id)); }
        }
    }
}

TEST(GcPolicy, NegativeCountsAreRefused) {
    EXPECT_EQ(message_of([] { check_gc_policy(GcPolicy{-1, 0, 0, 0}); }), "keep_best_per_run must not be negative");
    EXPECT_EQ(message_of([] {
                  select_checkpoints_to_remove({}, GcPolicy{0, 0, 0, -2});
              }),
              "keep_latest_per_configuration must not be negative");
}

TEST(Chunks, SplitAndReassemble) {
    std::string payload(2500, 'x');
    for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = char(i % 251);
    auto chunks = split_chunks(payload, 1000);
    ASSERT_EQ(chunks.size(), 3u);
    EXPECT_EQ(chunks[2].size(), 500u);
    std::string back;
    for (auto c : chunks) back += std::string(c);
    EXPECT_EQ(back, payload);
    EXPECT_EQ(split_chunks("", 1000).size(), 1u);
    EXPECT_EQ(split_chunks(std::string(2000, 'a'), 1000).size(), 2u);
    EXPECT_EQ(kind_of([] { split_chunks("abc", 0); }), ErrorKind::Internal);
}
