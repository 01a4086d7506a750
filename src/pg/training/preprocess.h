// Packing tables into minibatch buffers (hopper.preprocess) and reading what was packed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hopper/packing.h"
#include "pg/common/names.h"
#include "pg/common/spi.h"

// The extension's version (the Makefile passes hopper.control's default_version).
#ifndef HOPPER_VERSION
#error "HOPPER_VERSION must be defined (the Makefile passes hopper.control's default_version)"
#endif

namespace hopper::pg {

struct PackOptions {
    std::string source_table, output_table, dependent_varname, independent_varname;
    int buffer_size = 0;                        // 0: default (training) or the training table's (validation)
    int num_segments = 0;                       // 0: default
    BufferFill buffer_fill = BufferFill::Even;  // how rows fill the buffers (MADlib's: Full)
    double normalizing_const = 1.0;
    // none, standardize, minmax, or auto: standardize a table's own columns (a recipe), none for
    // numbers (an array column, numeric columns without NULLs: MADlib's way).
    std::string scale = "none";
    uint64_t seed = 0;
    std::string response_type = "auto";
    std::string training_packed_table;  // set for validation data
    std::string segment_placement;      // "" (the engine's default), "shard" or "worker"
    // Tables as they are (tabular.h): "" when not given.
    std::string exclude_columns;
    std::string columns_json;
    // Classification: 0, or the number of classes the one-hot vectors hold when that is more than the
    // data's (MADlib's num_classes: room for classes still to come, named "<padding 1>", ...).
    int num_classes = 0;
    // Validation data laid out as a model's training data was (hopper.evaluate on a table's raw
    // rows): used instead of reading training_packed_table's summary. Such a packed table is a
    // scratch table of the caller's, not recorded as one hopper made for users.
    const struct PackedInfo* training_layout = nullptr;
};

// A regression target's mean and standard deviation over the training rows (the summary's
// target_mean, target_stddev): the target is standardized for training (TargetScaling).
struct TargetStats {
    double mean = 0.0, stddev = 1.0;
};

// What hopper.preprocess wrote about a packed table (its _summary row) and its segments.
struct PackedInfo {
    TableName table;
    std::string response_type;
    std::vector<std::string> class_values;
    int num_segments = 0;
    double normalizing_const = 1.0;
    std::string scale;
    std::vector<float> feature_center, feature_spread;
    int64_t num_rows = 0;
    int num_buffers = 0;
    int independent_dim = 0;
    int dependent_dim = 0;
    int buffer_size = 0;
    std::string dependent_varname, independent_varname, dependent_vartype;
    std::vector<int32_t> dist_keys;  // segments holding data, ascending
    // The feature recipe (JSON, as stored in jsonb) when the table was packed from its columns as
    // they are; "" for features packed as numbers (and for tables packed before recipes existed).
    std::string feature_recipe;
    int64_t skipped_rows = 0;  // rows left out because their dependent value was NULL
    // A standardized regression target (validation tables carry the training table's); none for
    // tables packed raw or before hopper standardized targets (no target_mean column).
    std::optional<TargetStats> target;
};

PackedInfo pack_table(Spi& spi, const PackOptions& opt);

// Feature columns of a table: one numeric array column, or a comma-separated list of numeric
// columns; `expression` is SQL giving the features of a row as an array.
struct FeatureColumns {
    std::vector<std::string> columns;
    bool is_array = false;
    std::string expression;
};
FeatureColumns describe_features(const TableName& table, const std::string& independent_varname);
std::vector<std::string> parse_column_list(const std::string& text, const char* what);
PackedInfo read_packed_info(Spi& spi, const TableName& packed);

// How `other` was packed otherwise than `training` (response type, class values, feature recipe,
// normalizing_const, scaling): a sentence for a message's detail, "" when alike. A table packed
// on its own, or against an earlier packing of the training table, gives its rows other meanings
// (other classes, categories or scales): metrics on it are wrong without a sign.
std::string packing_difference(const PackedInfo& training, const PackedInfo& other);

// SQL reading a summary's column of names or types as text. MADlib 2.x's summaries (hopper_madlib's
// packed tables and models) hold dependent_varname, independent_varname and dependent_vartype as
// text[] (one per variable), theirs to change, and hopper's reading of them as hopper_<column>:
// that column when there is one, else an array's elements joined by ", ", else the text.
std::string summary_text_column(const TableName& summary, const char* column);

// A classifier's class_values name its outputs (one-hot columns) in order, one each: raises 22004
// when they are NULL and 22023 when there are not `outputs` of them, naming `source` ("summary
// table s.m_summary") and both counts.
void check_class_values(const std::vector<std::string>& class_values, bool is_null, int outputs,
                        const std::string& source);

}  // namespace hopper::pg
