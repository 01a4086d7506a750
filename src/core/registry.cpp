#include "hopper/registry.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "hopper/error.h"
#include "vocabulary.h"

namespace hopper {

namespace {

bool is_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

// Bytes of the character starting at s[i]: a whole UTF-8 sequence when one starts there, else 1 (a
// message naming one byte of a 3-byte character was not valid UTF-8, and clients decoding strictly
// failed on it instead of showing the error: a hostile review).
std::size_t character_bytes(std::string_view s, std::size_t i) {
    const unsigned char lead = static_cast<unsigned char>(s[i]);
    const std::size_t n = lead >= 0xf0 && lead <= 0xf4 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc2 && lead < 0xe0 ? 2 : 1;
    if (n == 1 || lead > 0xf4 || i + n > s.size()) return 1;
    for (std::size_t k = 1; k < n; ++k)
        if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return 1;
    return n;
}

std::string printable(std::string_view s) {
    std::string out;
    std::size_t shown = 0;  // whole characters only
    while (shown < s.size() && shown + character_bytes(s, shown) <= 64) shown += character_bytes(s, shown);
    // Control characters and a byte that starts no UTF-8 character (a stray one, or a database of
    // another encoding) are written \xNN, so the message is valid UTF-8 whatever the name.
    for (std::size_t i = 0; i < shown;) {
        const std::size_t n = character_bytes(s, i);
        const unsigned char u = static_cast<unsigned char>(s[i]);
        if (n == 1 && (u < 0x20 || u == 0x7f || u >= 0x80)) {
            static const char* hex = "0123456789abcdef";
            out += "\\x";
            out += hex[u >> 4];
            out += hex[u & 15];
        } else {
            out.append(s.substr(i, n));
        }
        i += n;
    }
    if (shown < s.size()) out += "...";
    return out;
}

std::string upper(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        if (c >= 'a' && c <= 'z') c = char(c - 'a' + 'A');
    return out;
}

}  // namespace

const char* const kRegistryNamePattern = "^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$";

void check_registry_name(std::string_view name, const char* what) {
    const char first = what[0];
    const bool vowel = first == 'a' || first == 'e' || first == 'i' || first == 'o' || first == 'u';
    const std::string rule = std::string(vowel ? "An " : "A ") + what +
                             " has 1 to 128 ASCII letters, digits, underscores, hyphens and dots, starts with a "
                             "letter or digit and is not a number.";
    if (name.empty()) fail(ErrorKind::InvalidParameter, std::string(what) + " must not be empty", rule);
    if (name.size() > kMaxRegistryNameLength)
        fail(ErrorKind::InvalidParameter, std::string(what) + " is too long",
             "It has " + std::to_string(name.size()) + " characters; at most " +
                 std::to_string(kMaxRegistryNameLength) + " are allowed.");
    if (!is_alnum(name[0]))
        fail(ErrorKind::InvalidParameter,
             std::string(what) + " \"" + printable(name) + "\" must start with a letter or digit", rule);
    std::size_t position = 0;  // in characters, as PostgreSQL counts them
    for (std::size_t i = 0; i < name.size(); i += character_bytes(name, i)) {
        ++position;
        char c = name[i];
        if (!is_alnum(c) && c != '_' && c != '-' && c != '.')
            fail(ErrorKind::InvalidParameter,
                 std::string(what) + " \"" + printable(name) + "\" contains the character \"" +
                     printable(name.substr(i, character_bytes(name, i))) + "\" at position " + std::to_string(position),
                 rule);
    }
    if (std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }))
        fail(ErrorKind::InvalidParameter, std::string(what) + " \"" + std::string(name) + "\" is a number", rule);
}

std::string registry_name_key(std::string_view name) {
    std::string out(name);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
    return out;
}

std::vector<std::string> normalize_labels(const std::vector<std::string>& labels) {
    if (labels.size() > kMaxLabels)
        fail(ErrorKind::InvalidParameter, "too many labels",
             "There are " + std::to_string(labels.size()) + "; at most " + std::to_string(kMaxLabels) +
                 " are allowed.");
    std::vector<std::string> out;
    std::set<std::string> seen;
    for (const std::string& l : labels) {
        if (l.empty()) fail(ErrorKind::InvalidParameter, "a label must not be empty");
        if (l.size() > kMaxLabelLength)
            fail(ErrorKind::InvalidParameter, "label \"" + printable(l) + "\" is too long",
                 "It has " + std::to_string(l.size()) + " bytes; at most " + std::to_string(kMaxLabelLength) +
                     " are allowed.");
        for (char c : l) {
            unsigned char u = static_cast<unsigned char>(c);
            if (u < 0x20 || u == 0x7f)
                fail(ErrorKind::InvalidParameter, "label \"" + printable(l) + "\" contains a control character");
        }
        if (l.front() == ' ' || l.back() == ' ')
            fail(ErrorKind::InvalidParameter, "label \"" + l + "\" begins or ends with a space");
        if (seen.insert(l).second) out.push_back(l);
    }
    return out;
}

void check_task_type(std::string_view type) {
    const char* rule =
        "A task type has 1 to 63 uppercase ASCII letters, digits and underscores and starts with a letter, "
        "e.g. TRAINING or IMPORT.";
    if (type.empty() || type.size() > 63 || !(type[0] >= 'A' && type[0] <= 'Z'))
        fail(ErrorKind::InvalidParameter, "invalid task type \"" + printable(type) + "\"", rule);
    for (char c : type)
        if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
            fail(ErrorKind::InvalidParameter, "invalid task type \"" + printable(type) + "\"", rule);
}

// ---- states ---------------------------------------------------------------------------------

const char* to_string(CheckpointState s) {
    switch (s) {
        case CheckpointState::Active: return "ACTIVE";
        case CheckpointState::Completed: return "COMPLETED";
        case CheckpointState::Error: return "ERROR";
        case CheckpointState::Deleting: return "DELETING";
        case CheckpointState::Deleted: return "DELETED";
        case CheckpointState::PartiallyDeleted: return "PARTIALLY_DELETED";
    }
    return "UNKNOWN";
}

CheckpointState parse_checkpoint_state(std::string_view text) {
    const std::string u = upper(text);
    for (CheckpointState s : {CheckpointState::Active, CheckpointState::Completed, CheckpointState::Error,
                              CheckpointState::Deleting, CheckpointState::Deleted, CheckpointState::PartiallyDeleted})
        if (u == to_string(s)) return s;
    fail(ErrorKind::InvalidParameter, "unknown checkpoint state \"" + printable(text) + "\"",
         "Valid states are ACTIVE, COMPLETED, ERROR, DELETING, DELETED and PARTIALLY_DELETED.");
}

bool is_deleted_state(CheckpointState s) {
    return s == CheckpointState::Deleting || s == CheckpointState::Deleted || s == CheckpointState::PartiallyDeleted;
}

bool checkpoint_transition_allowed(CheckpointState from, CheckpointState to) {
    using S = CheckpointState;
    switch (from) {
        case S::Active: return to == S::Completed || to == S::Error;
        case S::Completed: return to == S::Error;
        case S::Deleting: return to == S::Deleted || to == S::PartiallyDeleted;
        case S::PartiallyDeleted: return to == S::Deleted;
        case S::Error:
        case S::Deleted: return false;
    }
    return false;
}

// ---- searcher metric -----------------------------------------------------------------------

bool metric_smaller_is_better(std::string_view metric) {
    return metric == "loss" || metric == "mean_squared_error" || metric == "mean_absolute_error";
}

SearcherMetric resolve_searcher_metric(std::string_view requested, bool has_validation,
                                       const std::vector<std::vector<Metric>>& metrics_per_configuration) {
    static const std::vector<std::string> known = {"loss", "accuracy", "top_k_accuracy", "mean_squared_error",
                                                   "mean_absolute_error"};
    const char* hint =
        "Name loss or a metric of the compile parameters (accuracy, top_k_accuracy, mean_squared_error, "
        "mean_absolute_error), optionally prefixed with training_ or validation_.";
    SearcherMetric s;
    std::string_view rest = requested.empty() ? std::string_view("loss") : requested;
    bool explicit_set = false;
    if (rest.substr(0, 9) == "training_" && rest != "training_") {
        rest.remove_prefix(9);
        s.validation = false;
        explicit_set = true;
    } else if (rest.substr(0, 11) == "validation_") {
        rest.remove_prefix(11);
        s.validation = true;
        explicit_set = true;
        if (!has_validation)
            fail(ErrorKind::InvalidParameter,
                 "searcher metric \"" + std::string(requested) + "\" needs a validation table",
                 "The run has no validation_table.",
                 "Pass validation_table, or use training_" + std::string(rest) + ".");
    }
    if (!explicit_set) s.validation = has_validation;
    s.metric = std::string(rest);
    // The names compile parameters take for a metric name it here too (mae, acc, mse, ...).
    for (const vocab::MetricSpec& spec : vocab::metrics())
        for (const char* written : spec.written)
            if (s.metric == written) s.metric = spec.name;
    if (std::find(known.begin(), known.end(), s.metric) == known.end())
        fail(ErrorKind::InvalidParameter, "unknown searcher metric \"" + printable(requested) + "\"", "", hint);
    if (s.metric != "loss") {
        for (std::size_t i = 0; i < metrics_per_configuration.size(); ++i) {
            const auto& ms = metrics_per_configuration[i];
            bool found = std::any_of(ms.begin(), ms.end(), [&](Metric m) { return s.metric == to_string(m); });
            if (!found)
                fail(ErrorKind::InvalidParameter,
                     "searcher metric \"" + s.metric + "\" is not computed for every model configuration",
                     "Configuration " + std::to_string(i + 1) +
                         " of the run does not list it in its compile parameters' metrics.",
                     "Add it to the metrics of every configuration, or use loss.");
        }
    }
    s.smaller_is_better = metric_smaller_is_better(s.metric);
    s.name = (s.validation ? "validation_" : "training_") + s.metric;
    return s;
}

std::optional<double> signed_searcher_value(double value, bool smaller_is_better) {
    if (!std::isfinite(value)) return std::nullopt;
    return smaller_is_better ? value : -value;
}

// ---- sort keys ------------------------------------------------------------------------------

namespace {

void check_metric_name(std::string_view name, std::string_view text) {
    bool ok = !name.empty() && name.size() <= 63;
    for (char c : name) ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
    if (!ok)
        fail(ErrorKind::InvalidParameter, "invalid metric name in order_by \"" + printable(text) + "\"",
             "A metric name has lowercase letters, digits and underscores, e.g. validation.accuracy.");
}

std::optional<SortKey> parse_metric_sort(std::string_view text) {
    for (auto [prefix, kind] : {std::pair<std::string_view, SortKey::Kind>{"training.", SortKey::TrainingMetric},
                                {"validation.", SortKey::ValidationMetric}}) {
        if (text.substr(0, prefix.size()) == prefix) {
            std::string_view m = text.substr(prefix.size());
            check_metric_name(m, text);
            return SortKey{kind, std::string(m)};
        }
    }
    return std::nullopt;
}

}  // namespace

SortKey parse_checkpoint_sort(std::string_view text) {
    if (text == "steps" || text == "steps_completed") return {SortKey::Steps, {}};
    if (text == "report_time") return {SortKey::ReportTime, {}};
    if (text == "searcher_metric") return {SortKey::SearcherMetric, {}};
    if (auto k = parse_metric_sort(text)) return *k;
    if (!text.empty() && text.find('.') == std::string_view::npos && text.find(' ') == std::string_view::npos) {
        check_metric_name(text, text);
        return {SortKey::ValidationMetric, std::string(text)};
    }
    fail(ErrorKind::InvalidParameter, "unknown order_by \"" + printable(text) + "\"",
         "Checkpoints sort by steps, report_time, searcher_metric, training.<metric> or validation.<metric>.");
}

SortKey parse_version_sort(std::string_view text) {
    if (text == "version") return {SortKey::Version, {}};
    if (text == "creation_time") return {SortKey::CreationTime, {}};
    if (text == "steps" || text == "steps_completed") return {SortKey::Steps, {}};
    if (text == "searcher_metric") return {SortKey::SearcherMetric, {}};
    if (auto k = parse_metric_sort(text)) return *k;
    fail(ErrorKind::InvalidParameter, "unknown order_by \"" + printable(text) + "\"",
         "Model versions sort by version, creation_time, steps, searcher_metric, training.<metric> or "
         "validation.<metric>.");
}

void check_page(int64_t page_size, int64_t page_offset) {
    if (page_size < 1 || page_size > kMaxPageSize)
        fail(ErrorKind::InvalidParameter, "page_size must be between 1 and " + std::to_string(kMaxPageSize),
             "It is " + std::to_string(page_size) + ".");
    if (page_offset < 0)
        fail(ErrorKind::InvalidParameter, "page_offset must not be negative",
             "It is " + std::to_string(page_offset) + ".");
}

// ---- garbage collection ---------------------------------------------------------------------

void check_gc_policy(const GcPolicy& p) {
    for (auto [name, v] : {std::pair<const char*, int64_t>{"keep_best_per_run", p.keep_best_per_run},
                           {"keep_best_overall", p.keep_best_overall},
                           {"keep_latest_per_run", p.keep_latest_per_run},
                           {"keep_latest_per_configuration", p.keep_latest_per_configuration}})
        if (v < 0)
            fail(ErrorKind::InvalidParameter, std::string(name) + " must not be negative",
                 "It is " + std::to_string(v) + ".");
}

std::vector<int64_t> select_checkpoints_to_remove(const std::vector<GcCandidate>& candidates, const GcPolicy& policy) {
    check_gc_policy(policy);
    std::set<int64_t> keep;
    auto best_first = [](const GcCandidate* a, const GcCandidate* b) {
        if (*a->signed_value != *b->signed_value) return *a->signed_value < *b->signed_value;
        return a->id < b->id;
    };
    auto latest_first = [](const GcCandidate* a, const GcCandidate* b) { return a->id > b->id; };
    auto keep_top = [&](std::vector<const GcCandidate*> group, int64_t n, bool best) {
        if (n <= 0) return;
        if (best) {
            group.erase(std::remove_if(group.begin(), group.end(),
                                       [](const GcCandidate* c) { return !c->signed_value; }),
                        group.end());
            std::sort(group.begin(), group.end(), best_first);
        } else {
            std::sort(group.begin(), group.end(), latest_first);
        }
        for (std::size_t i = 0; i < group.size() && int64_t(i) < n; ++i) keep.insert(group[i]->id);
    };
    std::map<int64_t, std::vector<const GcCandidate*>> by_run, by_configuration;
    std::vector<const GcCandidate*> all;
    for (const GcCandidate& c : candidates) {
        by_run[c.run].push_back(&c);
        by_configuration[c.configuration].push_back(&c);
        all.push_back(&c);
        if (c.is_protected) keep.insert(c.id);
    }
    for (auto& [run, group] : by_run) {
        keep_top(group, policy.keep_best_per_run, true);
        keep_top(group, policy.keep_latest_per_run, false);
    }
    for (auto& [configuration, group] : by_configuration) keep_top(group, policy.keep_latest_per_configuration, false);
    keep_top(all, policy.keep_best_overall, true);
    std::vector<int64_t> remove;
    for (const GcCandidate& c : candidates)
        if (!keep.count(c.id)) remove.push_back(c.id);
    std::sort(remove.begin(), remove.end());
    remove.erase(std::unique(remove.begin(), remove.end()), remove.end());
    return remove;
}

std::vector<std::string_view> split_chunks(std::string_view payload, std::size_t chunk_bytes) {
    if (chunk_bytes == 0) fail(ErrorKind::Internal, "chunk size must be positive");
    std::vector<std::string_view> out;
    for (std::size_t at = 0; at < payload.size(); at += chunk_bytes) out.push_back(payload.substr(at, chunk_bytes));
    if (out.empty()) out.push_back(payload);  // an empty payload is one empty chunk
    return out;
}

}  // namespace hopper
