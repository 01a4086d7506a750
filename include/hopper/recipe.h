// Recipes: how a table's own columns become a fixed-width float32 feature row (issue 27).
//
// A RecipeFitter reads rows once, one at a time, as the port reads them (numbers, booleans and dates
// as doubles, categories as text, fixed-width arrays as floats, NULL as a null Cell); finish() gives
// an immutable Recipe: the ordered output features, and apply(), which turns a row into features the
// same way, bit for bit, at packing and at prediction time. A Recipe is stored as JSON with the
// packed table and every model (to_json / from_json, an exact round trip).
//
// Per column kind (ColumnSpec):
//   numeric, boolean, date  a NULL becomes the imputed value (mean, median or a constant), with an
//                           optional 0/1 "<name>_missing" feature after it; then the column is scaled
//                           (none, standardize, minmax) with statistics of the imputed column, as a
//                           pipeline imputer-then-scaler would. Booleans are 0/1; dates are days since
//                           1970-01-01 (timestamps fractional): the port converts.
//   categorical             one-hot ("<name>=<value>") or one integer code ("<name>", for an
//                           embedding layer). Values rarer than min_frequency, or beyond the
//                           max_categories most frequent, go to "<other>"; NULL is a category of its
//                           own ("<null>"); a value never seen while fitting goes to "<unknown>".
//   array                   a fixed number of floats ("<name>[1]"...), optionally scaled; NULL
//                           arrays are refused.
// Non-finite numbers are refused (Data), naming the column, at fitting and at applying.
//
// The dependent column has its own small pair: TargetFitter / Target.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "hopper/packing.h"

namespace hopper {

enum class ColumnKind { Numeric, Boolean, Categorical, Date, Array };
enum class Imputation { Mean, Median, Constant };
enum class CategoryEncoding { OneHot, Codes };

// Names as written in JSON and accepted from users: "numeric", "boolean", "categorical", "date",
// "array"; "mean", "median", "constant"; "onehot", "codes". Unknown names: InvalidParameter.
ColumnKind parse_column_kind(const std::string& name);
Imputation parse_imputation(const std::string& name);
CategoryEncoding parse_category_encoding(const std::string& name);
const char* to_string(ColumnKind kind);
const char* to_string(Imputation imputation);
const char* to_string(CategoryEncoding encoding);

// The PostgreSQL port reads a numeric beyond float8's range as float8's largest (or its negative),
// not as an error naming nothing: such a value stands for that range, and messages say so instead
// of printing the number. "1.8e308 or more (beyond float8's range too)" for those, "" for others.
std::string beyond_float8_range(double v);

// How one column is encoded. Options of other kinds are ignored, except that a categorical column
// cannot be scaled or get a missing indicator, and an array cannot get a missing indicator.
struct ColumnSpec {
    std::string name;
    ColumnKind kind = ColumnKind::Numeric;
    // numeric, boolean, date
    Imputation impute = Imputation::Mean;
    double impute_value = 0.0;  // for Imputation::Constant
    bool missing_indicator = false;
    // numeric, boolean, date, array
    ScaleKind scale = ScaleKind::None;
    // categorical
    CategoryEncoding encoding = CategoryEncoding::OneHot;
    int64_t min_frequency = 1;   // values seen fewer times go to "<other>"
    int64_t max_categories = 0;  // keep at most this many values (the most frequent); 0: no bound
    // array: the number of floats; 0 takes it from the first row
    int width = 0;
};

// One value of a row, as the port read it: a view of the port's memory, valid during the call.
struct Cell {
    enum class Type : uint8_t { Null, Number, Text, Floats };
    Type type = Type::Null;
    double number = 0.0;
    std::string_view text;
    const float* floats = nullptr;
    int count = 0;

    Cell() = default;
    Cell(std::nullopt_t) {}
    Cell(double v) : type(Type::Number), number(v) {}
    Cell(std::string_view s) : type(Type::Text), text(s) {}
    Cell(const char* s) : type(Type::Text), text(s) {}
    Cell(const std::string& s) : type(Type::Text), text(s) {}
    Cell(const float* v, int n) : type(Type::Floats), floats(v), count(n) {}
    Cell(const std::optional<double>& v) : type(v ? Type::Number : Type::Null), number(v ? *v : 0.0) {}
    Cell(const std::optional<std::string>& s)
        : type(s ? Type::Text : Type::Null), text(s ? std::string_view(*s) : std::string_view()) {}
    bool is_null() const { return type == Type::Null; }
};

// Bounds of a fit. Counting categories needs memory per distinct value, and an exact median one
// float per non-NULL row: both are bounded so a fit fails early (Limit, naming the column) rather
// than exhausting the backend.
struct FitLimits {
    int64_t max_distinct = 1000000;  // distinct non-NULL values of one categorical column
    uint64_t max_bytes = 0;          // state of the whole fitter (bytes_used); 0: no bound
};

// Hard bounds of any recipe, also enforced when one is read from JSON.
constexpr int kMaxRecipeWidth = 1000000;  // output features
// Recipe text: parsing holds the whole document in memory, several times its size, so a stored
// recipe is bounded. Values seen too rarely are stored (to tell them from unseen ones), so a column
// of millions of distinct values can exceed it: to_json refuses that (Limit).
constexpr std::size_t kMaxRecipeJsonBytes = std::size_t(64) << 20;
constexpr int kMaxRecipeColumns = 100000;

namespace recipe_detail {
class ColumnEncoder;
class ColumnFitter;
}  // namespace recipe_detail

// An embedding input: the output slot holding a categorical column's code, and how many codes there
// are (kept values, then "<other>", "<null>" if present, and "<unknown>").
struct EmbeddingInput {
    std::string column;
    int slot = 0;
    int vocabulary = 0;
};

class Recipe {
public:
    int width() const { return width_; }
    int num_columns() const { return int(columns_.size()); }
    int64_t rows() const { return rows_; }  // rows it was fitted on
    const std::vector<std::string>& column_names() const { return column_names_; }
    // Column c (0-based): its kind (which Cell type apply takes: numbers for numeric, boolean and
    // date, text for categorical, floats for array), and the output slots it writes.
    ColumnKind column_kind(int c) const;
    int column_offset(int c) const { return offset_.at(std::size_t(c)); }
    int column_width(int c) const;
    const std::vector<std::string>& feature_names() const { return feature_names_; }
    std::vector<EmbeddingInput> embeddings() const;
    // The categories of a categorical column as kept (in output order, without the "<...>"
    // slots); empty for other kinds. Throws InvalidParameter for an unknown column.
    std::vector<std::string> categories(const std::string& column) const;

    // row[c] is the value of column c (num_columns of them); writes width() floats to out. Does not
    // allocate. Throws Data for a value the recipe refuses (non-finite, a wrong array length, a NULL
    // array, a boolean other than 0/1), naming the column.
    void apply(const Cell* row, std::size_t num_values, float* out) const;
    std::vector<float> apply(const std::vector<Cell>& row) const;

    // Canonical JSON: the same recipe gives the same text, and from_json(to_json()) the same recipe.
    // Refuses (Limit) a text beyond kMaxRecipeJsonBytes, which from_json would refuse.
    std::string to_json() const;
    // Strict: unknown keys, wrong types, values out of range or inconsistent are refused (Syntax for
    // text that is not JSON, Limit for text beyond kMaxRecipeJsonBytes, Data otherwise).
    static Recipe from_json(std::string_view text);

private:
    friend class RecipeFitter;
    Recipe(std::vector<std::shared_ptr<const recipe_detail::ColumnEncoder>> columns, int64_t rows);

    std::vector<std::shared_ptr<const recipe_detail::ColumnEncoder>> columns_;
    std::vector<std::string> column_names_;
    std::vector<std::string> feature_names_;
    std::vector<int> offset_;  // first output slot of each column
    int width_ = 0;
    int64_t rows_ = 0;
};

class RecipeFitter {
public:
    // Refuses (InvalidParameter) no columns, an empty or repeated name, options out of range.
    explicit RecipeFitter(std::vector<ColumnSpec> specs, FitLimits limits = {});
    ~RecipeFitter();
    RecipeFitter(RecipeFitter&&) noexcept;
    RecipeFitter& operator=(RecipeFitter&&) noexcept;

    // One row: row[c] for column c. Refuses values of the wrong type for a column (Internal: the
    // port's mistake), non-finite values, booleans other than 0/1, arrays of another width (Data),
    // and going beyond FitLimits (Limit), naming the column.
    void add(const Cell* row, std::size_t num_values);
    void add(const std::vector<Cell>& row) { add(row.data(), row.size()); }

    int64_t rows() const { return rows_; }
    // Memory held now by the fitter's state (an estimate from sizes, not a measurement).
    uint64_t bytes_used() const;
    // What fitting `rows` rows would hold at the end, before building anything: distinct[c] is the
    // number of distinct values of categorical column c (others ignored; missing entries count as
    // 0) and mean_text_bytes their average length.
    static uint64_t estimate_bytes(const std::vector<ColumnSpec>& specs, int64_t rows,
                                   const std::vector<int64_t>& distinct, double mean_text_bytes);

    // The recipe. Refuses (Data) no rows, and a column that was NULL in every row. The fitter is
    // unchanged and may take more rows.
    Recipe finish() const;

private:
    void check_bytes() const;

    std::vector<std::unique_ptr<recipe_detail::ColumnFitter>> columns_;
    FitLimits limits_;
    int64_t rows_ = 0;
};

// ---- The dependent column ----

enum class TargetKind { Classification, Regression };
// The order of class values: Text sorts by bytes (C collation); Numeric by their value as numbers
// (integer and numeric labels, as ORDER BY sorts them), equal numbers by text. Booleans ("f"/"t" or
// "false"/"true") sort the same in both.
enum class ClassOrder { Text, Numeric };

constexpr int kMaxTargetClasses = 100000;

class Target {
public:
    TargetKind kind() const { return kind_; }
    ClassOrder order() const { return order_; }
    const std::string& column() const { return column_; }
    const std::vector<std::string>& classes() const { return classes_; }  // classification
    int width() const { return kind_ == TargetKind::Classification ? int(classes_.size()) : 1; }
    int64_t rows() const { return rows_; }        // rows with a target
    int64_t skipped() const { return skipped_; }  // rows whose target was NULL
    // The index of a class value, -1 if it is not one. No allocation.
    int class_index(std::string_view value) const;
    // One-hot for classification, the value for regression; width() floats. Returns false (and
    // writes nothing) for a NULL. Throws Data for a class value that is not one of classes(), or a
    // non-finite regression value, naming the column.
    bool encode(const Cell& value, float* out) const;

    std::string to_json() const;
    static Target from_json(std::string_view text);

private:
    friend class TargetFitter;
    Target() = default;
    void index_classes();  // fills by_bytes_
    TargetKind kind_ = TargetKind::Classification;
    ClassOrder order_ = ClassOrder::Text;
    std::string column_;
    std::vector<std::string> classes_;
    std::vector<int> by_bytes_;  // indices of classes_ sorted by bytes, for class_index
    int64_t rows_ = 0;
    int64_t skipped_ = 0;
};

class TargetFitter {
public:
    TargetFitter(std::string column, TargetKind kind, ClassOrder order = ClassOrder::Text,
                 int max_classes = kMaxTargetClasses);
    // Returns false for a NULL target: the row is skipped (and counted) and must not be given to
    // the RecipeFitter either. Classification takes text cells, regression numbers; a Numeric order
    // refuses text that is not a number (Data), too many classes are a Limit.
    bool add(const Cell& value);
    int64_t skipped() const { return skipped_; }
    // Refuses (Data) no non-NULL target, and a classification with fewer than two classes.
    Target finish() const;

private:
    Target t_;
    int max_classes_;
    std::set<std::string, std::less<>> seen_;  // distinct class values
    int64_t skipped_ = 0;
    int64_t rows_ = 0;
};

}  // namespace hopper
