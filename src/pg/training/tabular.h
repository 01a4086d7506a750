// Tables as they are (issue 27): a table's own columns (numbers, booleans, text, enums, dates, with
// NULLs) become features through the core's Recipe (hopper/recipe.h). This is the port's half: which
// kind each column is, the SQL that reads a column the way a Recipe takes it, fitting a recipe over
// a table, and the SQL expression that applies a stored recipe to raw rows (hopper.recipe_features),
// the same at packing and at prediction.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hopper/recipe.h"
#include "pg/common/names.h"
#include "pg/common/spi.h"

namespace hopper::pg {

struct TabularRequest {
    std::string independent_varname;            // a column list or '*'
    std::string dependent;                      // never a feature
    std::string exclude_columns;                // "" or a column list
    std::string columns_json;                   // "" or a JSON object of per-column options
    ScaleKind default_scale = ScaleKind::None;  // preprocess's scale, for numeric and date columns
};

// An array of PostgreSQL's built-in numbers: packed as numbers alone, a recipe's array column beside
// other columns (read as real[]).
bool is_numeric_array_type(Oid t);

// Whether a request needs a recipe rather than today's packing of one numeric array column or a
// list of numeric columns (kept bit for bit): '*', exclude_columns, per-column options, a column of
// another type, or a NULL in a numeric column (one query).
bool needs_recipe(Spi& spi, const TableName& table, const TabularRequest& req);

// A number column of type `type` read as float8, without numeric's error beyond float8's range (a
// value beyond it reads as float8's largest, which packing refuses as beyond float32; one below its
// smallest as 0).
std::string float8_sql(const std::string& column_ref, Oid type);

struct TabularColumns {
    std::vector<ColumnSpec> specs;
    std::vector<std::string> cell_sql;  // per column: a float8 (numbers, booleans, dates) or text expression
};

// The feature columns and their specs; refuses (before anything is written) a missing column (42703),
// a type that cannot be a feature (42804), unknown options (22023), and no feature left.
TabularColumns describe_tabular(Spi& spi, const TableName& table, const TabularRequest& req);

// Fits a recipe on the rows of `table` that pass `row_filter` (SQL after FROM, e.g. " WHERE ...").
// The memory it will hold is estimated first (distinct values of categorical columns) and refused
// with 53200 beyond hopper.max_memory_mb; a vocabulary beyond the fit's limits is refused (54000),
// naming the column. Returns the recipe's JSON.
std::string fit_recipe(Spi& spi, const TableName& table, const TabularColumns& cols, const std::string& row_filter,
                       int64_t rows);

// The SQL expression (a real[]) giving a row's features by the recipe whose JSON text is the SQL
// `recipe_sql` (a parameter such as "$5"): every recipe column must exist in `table` with a type its
// kind takes (42703, 42804). `qualifier` ("s." or "") prefixes column references.
std::string recipe_features_sql(const TableName& table, const Recipe& recipe, const std::string& recipe_sql,
                                const std::string& qualifier);
// The same over columns `column` finds by name: the SQL that reads it and its type, or nothing for a
// column it lacks; `missing` raises the caller's error naming every column lacking (a row missing 28
// of a recipe's columns was told of one at a time).
struct RecipeColumn {
    std::string sql;
    Oid type = InvalidOid;
};
std::string recipe_features_sql(const Recipe& recipe, const std::string& recipe_sql,
                                const std::function<std::optional<RecipeColumn>(const std::string& name)>& column,
                                const std::function<void(const std::vector<std::string>& names)>& missing);
// The error of recipe columns `names` lacking in `table` (42703): with one, its case hint.
[[noreturn]] void refuse_missing_recipe_columns(const TableName& table, const Recipe& recipe,
                                                const std::vector<std::string>& names);

// The columns a validation table or a prediction names when a recipe decides them: '*' or the
// recipe's columns in any order (22023 otherwise).
void check_recipe_columns(const Recipe& recipe, const std::string& independent_varname);

}  // namespace hopper::pg
