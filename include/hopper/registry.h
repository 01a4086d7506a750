// Checkpoints and the model registry: the rules that do not need a database. Names of models and
// aliases, labels, checkpoint states and their transitions, the searcher metric of a training run,
// sort keys of the listing functions, and which checkpoints a garbage-collection policy removes.
// The PostgreSQL port (src/pg/registry/checkpoint_store.cpp, checkpoint_fns.cpp, model_fns.cpp) applies them; the
// extension script repeats the name rule as a CHECK constraint so that plain INSERTs obey it too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hopper/config.h"

namespace hopper {

// ---- names ---------------------------------------------------------------------------------
// A model name or an alias: 1 to 128 ASCII letters, digits, '_', '-' and '.', starting with a
// letter or digit, and not made of digits only (so that "3" always means version 3). Names are
// unique without regard to case. Throws Error(InvalidParameter) saying what is wrong; `what` names
// the argument ("model name", "alias").
constexpr std::size_t kMaxRegistryNameLength = 128;
void check_registry_name(std::string_view name, const char* what);
// The same rule as a POSIX regular expression (the CHECK constraint in sql/ext/40_registry.sql).
extern const char* const kRegistryNamePattern;
// The key under which names are unique: ASCII lowercase.
std::string registry_name_key(std::string_view name);

// Labels: each 1 to 64 characters without control characters or surrounding spaces; duplicates
// are dropped (first occurrence kept, order otherwise unchanged).
constexpr std::size_t kMaxLabelLength = 64;
constexpr std::size_t kMaxLabels = 64;
std::vector<std::string> normalize_labels(const std::vector<std::string>& labels);

// A task type: 1 to 63 characters, uppercase ASCII letters, digits and '_', starting with a letter
// ("TRAINING", "IMPORT", "FINE_TUNE", ...).
void check_task_type(std::string_view type);

// ---- checkpoint states ---------------------------------------------------------------------
enum class CheckpointState { Active, Completed, Error, Deleting, Deleted, PartiallyDeleted };
const char* to_string(CheckpointState s);
// Parses ACTIVE, COMPLETED, ... (case-insensitive); Error(InvalidParameter) listing the valid ones.
CheckpointState parse_checkpoint_state(std::string_view text);
bool is_deleted_state(CheckpointState s);  // DELETING, DELETED, PARTIALLY_DELETED
// Whether a writer may move a checkpoint from one state to another with set_checkpoint_state:
// ACTIVE -> COMPLETED | ERROR; COMPLETED -> ERROR; DELETING -> DELETED | PARTIALLY_DELETED;
// PARTIALLY_DELETED -> DELETED. (Deletion itself goes through delete_checkpoints, which checks
// that no model version uses the checkpoint.)
bool checkpoint_transition_allowed(CheckpointState from, CheckpointState to);

// ---- the searcher metric -------------------------------------------------------------------
// The figure that ranks the checkpoints of a run ("best"). `requested` is empty (the loss), a
// metric name ("loss", "accuracy", "top_k_accuracy", "mean_squared_error",
// "mean_absolute_error"), or one prefixed with "training_" or "validation_" to choose the data
// set; without a prefix the validation set is used when the run has one.
struct SearcherMetric {
    std::string name;         // as stored: e.g. "validation_loss"
    std::string metric;       // "loss", "accuracy", ...
    bool validation = false;  // computed on the validation set
    bool smaller_is_better = true;
};
// Every configuration of the run must compute the metric (the loss always is); Error(InvalidParameter)
// otherwise, naming the configuration index and the valid choices.
SearcherMetric resolve_searcher_metric(std::string_view requested, bool has_validation,
                                       const std::vector<std::vector<Metric>>& metrics_per_configuration);
bool metric_smaller_is_better(std::string_view metric);
// The value used for "best first" ordering: the value when smaller is better, else its negation.
// Non-finite values have no rank (nullopt).
std::optional<double> signed_searcher_value(double value, bool smaller_is_better);

// ---- sort keys of list_checkpoints / list_model_versions ------------------------------------
struct SortKey {
    enum Kind { Steps, ReportTime, SearcherMetric, TrainingMetric, ValidationMetric, Version, CreationTime } kind;
    std::string metric;  // for TrainingMetric / ValidationMetric
};
// Checkpoints: "steps", "report_time", "searcher_metric", "training.<metric>",
// "validation.<metric>" (a bare metric name means its validation value).
SortKey parse_checkpoint_sort(std::string_view text);
// Versions: "version", "creation_time", "steps", "searcher_metric", "validation.<metric>", ...
SortKey parse_version_sort(std::string_view text);
constexpr int64_t kMaxPageSize = 10000;
void check_page(int64_t page_size, int64_t page_offset);

// ---- garbage collection ---------------------------------------------------------------------
// A checkpoint is kept when any rule keeps it or it is protected; the others are removed.
struct GcPolicy {
    int64_t keep_best_per_run = 1;
    int64_t keep_best_overall = 0;
    int64_t keep_latest_per_run = 0;
    int64_t keep_latest_per_configuration = 1;
};
void check_gc_policy(const GcPolicy& policy);  // Error(InvalidParameter) for negative counts

struct GcCandidate {
    int64_t id = 0;  // checkpoint id: larger means written later
    int64_t run = 0;
    int64_t configuration = 0;           // trial
    std::optional<double> signed_value;  // searcher metric, smaller is better; none: never "best"
    bool is_protected = false;           // registered as a model version or a warm-start source
};
// Ids to remove, ascending. Best ranks by signed value ascending, ties by id ascending (the
// earlier checkpoint); latest ranks by id descending. Idempotent: applied again to the kept
// checkpoints, it removes nothing.
std::vector<int64_t> select_checkpoints_to_remove(const std::vector<GcCandidate>& candidates, const GcPolicy& policy);

// ---- payload ------------------------------------------------------------------------------
// Model states are stored in chunks of this size (the last one shorter), so that no single value
// is larger than needed and SELECT * FROM hopper.checkpoints never reads them.
constexpr std::size_t kCheckpointChunkBytes = 1024 * 1024;
std::vector<std::string_view> split_chunks(std::string_view payload, std::size_t chunk_bytes = kCheckpointChunkBytes);
constexpr const char* kModelStateFormat = "hopper_model_state_v1";

}  // namespace hopper
