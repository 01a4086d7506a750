// Recipes (include/hopper/recipe.h): the fitter and recipe of a whole row, names, the checks and
// JSON reading shared by the column kinds.
#include "hopper/recipe.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "hopper/error.h"
#include "hopper/interrupt.h"
#include "recipe_columns.h"

namespace hopper {

using recipe_detail::ColumnEncoder;
using recipe_detail::ObjectReader;

ColumnKind parse_column_kind(const std::string& name) {
    if (name == "numeric") return ColumnKind::Numeric;
    if (name == "boolean") return ColumnKind::Boolean;
    if (name == "categorical") return ColumnKind::Categorical;
    if (name == "date") return ColumnKind::Date;
    if (name == "array") return ColumnKind::Array;
    fail(ErrorKind::InvalidParameter, "unknown column kind \"" + name + "\"", "",
         "Valid kinds are numeric, boolean, categorical, date and array.");
}

Imputation parse_imputation(const std::string& name) {
    if (name == "mean") return Imputation::Mean;
    if (name == "median") return Imputation::Median;
    if (name == "constant") return Imputation::Constant;
    fail(ErrorKind::InvalidParameter, "unknown imputation \"" + name + "\"", "",
         "Valid values are mean, median and constant.");
}

CategoryEncoding parse_category_encoding(const std::string& name) {
    if (name == "onehot") return CategoryEncoding::OneHot;
    if (name == "codes") return CategoryEncoding::Codes;
    fail(ErrorKind::InvalidParameter, "unknown category encoding \"" + name + "\"", "",
         "Valid values are onehot and codes.");
}

const char* to_string(ColumnKind kind) {
    switch (kind) {
        case ColumnKind::Numeric: return "numeric";
        case ColumnKind::Boolean: return "boolean";
        case ColumnKind::Categorical: return "categorical";
        case ColumnKind::Date: return "date";
        case ColumnKind::Array: return "array";
    }
    return "numeric";
}

const char* to_string(Imputation imputation) {
    switch (imputation) {
        case Imputation::Mean: return "mean";
        case Imputation::Median: return "median";
        case Imputation::Constant: return "constant";
    }
    return "mean";
}

const char* to_string(CategoryEncoding encoding) { return encoding == CategoryEncoding::Codes ? "codes" : "onehot"; }

namespace recipe_detail {

std::string quoted_column(const std::string& name) { return "column \"" + name + "\""; }

void wrong_cell(const std::string& column, const char* expected) {
    fail(ErrorKind::Internal, "recipe " + quoted_column(column) + " was given a value of the wrong type",
         std::string("It takes ") + expected + ".");
}

}  // namespace recipe_detail

std::string beyond_float8_range(double v) {
    if (std::fabs(v) != std::numeric_limits<double>::max()) return "";
    return v > 0 ? "1.8e308 or more (beyond float8's range too)" : "-1.8e308 or less (beyond float8's range too)";
}

namespace recipe_detail {

void check_finite(const std::string& column, double v) {
    if (!std::isfinite(v))
        fail(ErrorKind::Data, quoted_column(column) + " contains NaN or infinite values", "",
             "Clean the data, or turn such values into NULL, which the recipe imputes.");
}

void check_scaled(const std::string& column, const float* v, int n) {
    for (int i = 0; i < n; ++i)
        if (!std::isfinite(v[i]))
            fail(ErrorKind::Data, "a value of " + quoted_column(column) + " is out of range after scaling",
                 "Scaled with the statistics of the training data, it exceeds the float4 range.");
}

void check_utf8(const std::string& column, std::string_view s) {
    std::size_t i = 0;
    const std::size_t n = s.size();
    while (i < n) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        int more;
        uint32_t cp;
        if (c < 0x80) {
            ++i;
            continue;
        }
        if ((c & 0xE0) == 0xC0) {
            more = 1;
            cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            more = 2;
            cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            more = 3;
            cp = c & 0x07;
        } else break;
        bool ok = true;
        for (int k = 1; k <= more; ++k) {
            if (i + k >= n) {
                ok = false;
                break;
            }
            const unsigned char d = static_cast<unsigned char>(s[i + k]);
            if ((d & 0xC0) != 0x80) {
                ok = false;
                break;
            }
            cp = (cp << 6) | (d & 0x3F);
        }
        // Overlong forms, surrogates and values beyond U+10FFFF are not UTF-8 either.
        static const uint32_t min_cp[4] = {0, 0x80, 0x800, 0x10000};
        if (!ok || cp < min_cp[more] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) break;
        i += std::size_t(more) + 1;
    }
    if (i < n)
        fail(ErrorKind::Data, quoted_column(column) + " contains a value that is not valid UTF-8",
             "Byte " + std::to_string(i + 1) + " of the value starts no UTF-8 character.",
             "Recipes are stored as JSON, which holds UTF-8 text only.");
}

ObjectReader::ObjectReader(const json& j, std::string where) : j_(j), where_(std::move(where)) {
    if (!j_.is_object()) fail(ErrorKind::Data, "invalid recipe: " + where_ + " is not a JSON object");
}

void ObjectReader::bad(const std::string& key, const std::string& detail) const {
    fail(ErrorKind::Data, "invalid recipe: bad \"" + key + "\" in " + where_, detail);
}

const json& ObjectReader::at(const std::string& key) {
    auto it = j_.find(key);
    if (it == j_.end()) fail(ErrorKind::Data, "invalid recipe: " + where_ + " has no \"" + key + "\"");
    read_.insert(key);
    return *it;
}

std::string ObjectReader::string(const std::string& key) {
    const json& v = at(key);
    if (!v.is_string()) bad(key, "It must be a string, not " + cfg::show(v) + ".");
    return v.get<std::string>();
}

bool ObjectReader::boolean(const std::string& key) {
    const json& v = at(key);
    if (!v.is_boolean()) bad(key, "It must be true or false, not " + cfg::show(v) + ".");
    return v.get<bool>();
}

int64_t ObjectReader::integer(const std::string& key, int64_t lo, int64_t hi) {
    const json& v = at(key);
    int64_t out = 0;
    if (!cfg::as_integer(v, lo, hi, out))
        bad(key, "It must be an integer from " + std::to_string(lo) + " to " + std::to_string(hi) + ", not " +
                     cfg::show(v) + ".");
    return out;
}

double ObjectReader::number(const std::string& key) {
    const json& v = at(key);
    double out = 0;
    if (!cfg::as_double(v, out)) bad(key, "It must be a finite number, not " + cfg::show(v) + ".");
    return out;
}

namespace {
bool as_single(const json& v, float& out) {
    double d = 0;
    if (!cfg::as_double(v, d) || std::fabs(d) > 3.4028234663852886e38) return false;
    out = float(d);
    return std::isfinite(out);
}
}  // namespace

float ObjectReader::single(const std::string& key) {
    const json& v = at(key);
    float out = 0;
    if (!as_single(v, out)) bad(key, "It must be a finite float4 number, not " + cfg::show(v) + ".");
    return out;
}

std::vector<std::string> ObjectReader::strings(const std::string& key, std::size_t max_size) {
    const json& v = at(key);
    if (!v.is_array()) bad(key, "It must be an array of strings.");
    if (v.size() > max_size)
        bad(key,
            "It has " + std::to_string(v.size()) + " values; at most " + std::to_string(max_size) + " are allowed.");
    std::vector<std::string> out;
    out.reserve(v.size());
    InterruptTicker ticker;
    for (const json& e : v) {
        ticker.tick();
        if (!e.is_string()) bad(key, "It must hold only strings, not " + cfg::show(e) + ".");
        out.push_back(e.get<std::string>());
    }
    return out;
}

std::vector<float> ObjectReader::singles(const std::string& key, std::size_t size) {
    const json& v = at(key);
    if (!v.is_array() || v.size() != size) bad(key, "It must be an array of " + std::to_string(size) + " numbers.");
    std::vector<float> out(size);
    for (std::size_t i = 0; i < size; ++i)
        if (!as_single(v[i], out[i])) bad(key, "It must hold finite float4 numbers, not " + cfg::show(v[i]) + ".");
    return out;
}

void ObjectReader::done() {
    for (auto it = j_.begin(); it != j_.end(); ++it)
        if (!read_.count(it.key()))
            fail(ErrorKind::Data, "invalid recipe: unknown key \"" + it.key() + "\" in " + where_);
}

void check_sorted(const std::vector<std::string>& values, const std::string& key, const std::string& where) {
    for (std::size_t i = 1; i < values.size(); ++i)
        if (!(values[i - 1] < values[i]))
            fail(ErrorKind::Data, "invalid recipe: bad \"" + key + "\" in " + where,
                 "Its values must be distinct and sorted by bytes; " + cfg::show(json(values[i])) +
                     " is out of place.");
}

FeatureScaling read_scaling(ObjectReader& r, ScaleKind kind, int n, const std::string& where) {
    FeatureScaling s;
    if (kind == ScaleKind::None) return s;
    s.center = r.singles("center", std::size_t(n));
    s.spread = r.singles("spread", std::size_t(n));
    try {
        s.validate(n);
    } catch (const Error& e) { fail(ErrorKind::Data, "invalid recipe: bad scaling in " + where, e.detail()); }
    return s;
}

void write_scaling(ojson& j, ScaleKind kind, const FeatureScaling& s) {
    j["scale"] = to_string(kind);
    if (kind == ScaleKind::None) return;
    ojson c = ojson::array(), p = ojson::array();
    for (float f : s.center) c.push_back(cfg::float_for_json(f));
    for (float f : s.spread) p.push_back(cfg::float_for_json(f));
    j["center"] = std::move(c);
    j["spread"] = std::move(p);
}

void check_spec(const ColumnSpec& s) {
    const std::string col = quoted_column(s.name);
    if (s.kind == ColumnKind::Categorical) {
        if (s.scale != ScaleKind::None) fail(ErrorKind::InvalidParameter, "categorical " + col + " cannot be scaled");
        if (s.missing_indicator)
            fail(ErrorKind::InvalidParameter, "categorical " + col + " cannot have a missing indicator",
                 "NULL is a category of its own.");
        if (s.min_frequency < 1)
            fail(ErrorKind::InvalidParameter, "min_frequency of " + col + " must be at least 1",
                 "It is " + std::to_string(s.min_frequency) + ".");
        if (s.max_categories < 0 || s.max_categories > kMaxRecipeWidth)
            fail(ErrorKind::InvalidParameter,
                 "max_categories of " + col + " must be between 0 (no bound) and " + std::to_string(kMaxRecipeWidth),
                 "It is " + std::to_string(s.max_categories) + ".");
    } else if (s.kind == ColumnKind::Array) {
        if (s.missing_indicator)
            fail(ErrorKind::InvalidParameter, "array " + col + " cannot have a missing indicator",
                 "NULL arrays are refused, not imputed.");
        if (s.width < 0 || s.width > kMaxRecipeWidth)
            fail(ErrorKind::InvalidParameter,
                 "width of " + col + " must be between 0 (from the data) and " + std::to_string(kMaxRecipeWidth),
                 "It is " + std::to_string(s.width) + ".");
    } else if (s.impute == Imputation::Constant && !std::isfinite(s.impute_value)) {
        fail(ErrorKind::InvalidParameter, "the imputation constant of " + col + " must be a finite number");
    }
}

std::unique_ptr<ColumnFitter> make_fitter(const ColumnSpec& spec, const FitLimits& limits) {
    check_spec(spec);
    switch (spec.kind) {
        case ColumnKind::Categorical: return make_categorical_fitter(spec, limits);
        case ColumnKind::Array: return make_array_fitter(spec);
        default: return make_numeric_fitter(spec);
    }
}

uint64_t estimate_fitter_bytes(const ColumnSpec& spec, int64_t rows, int64_t distinct, double mean_text_bytes) {
    const uint64_t state = 256;  // a fitter itself, generously
    if (spec.kind == ColumnKind::Categorical)
        return state + uint64_t(std::max<int64_t>(distinct, 0)) * category_entry_bytes(mean_text_bytes);
    if (spec.kind == ColumnKind::Array) return state + uint64_t(std::max(spec.width, 1)) * 4 * sizeof(double);
    // An exact median keeps every value; the vector doubles its capacity, so up to twice that.
    if (spec.impute == Imputation::Median) return state + uint64_t(std::max<int64_t>(rows, 0)) * sizeof(float) * 2;
    return state;
}

std::shared_ptr<const ColumnEncoder> read_encoder(const json& j, const std::string& where) {
    if (!j.is_object()) fail(ErrorKind::Data, "invalid recipe: " + where + " is not a JSON object");
    auto name = j.find("name");
    auto kind = j.find("kind");
    if (name == j.end() || !name->is_string() || name->get_ref<const std::string&>().empty())
        fail(ErrorKind::Data, "invalid recipe: " + where + " has no name");
    if (kind == j.end() || !kind->is_string()) fail(ErrorKind::Data, "invalid recipe: " + where + " has no kind");
    const std::string& n = name->get_ref<const std::string&>();
    const std::string w = where + " (" + quoted_column(n) + ")";
    ColumnKind k;
    try {
        k = parse_column_kind(kind->get<std::string>());
    } catch (const Error& e) { fail(ErrorKind::Data, "invalid recipe: bad \"kind\" in " + w, e.hint()); }
    if (k == ColumnKind::Categorical) return read_categorical(j, n, w);
    if (k == ColumnKind::Array) return read_array(j, n, w);
    return read_numeric(j, k, n, w);
}

}  // namespace recipe_detail

// ---- Recipe ----

Recipe::Recipe(std::vector<std::shared_ptr<const ColumnEncoder>> columns, int64_t rows)
    : columns_(std::move(columns)), rows_(rows) {
    int64_t width = 0;
    for (const auto& c : columns_) {
        offset_.push_back(int(width));
        width += c->width();
        if (width > kMaxRecipeWidth)
            fail(ErrorKind::Limit, "a recipe would have more than " + std::to_string(kMaxRecipeWidth) + " features",
                 "The features up to " + recipe_detail::quoted_column(c->name()) + " number " + std::to_string(width) +
                     ".",
                 "Bound categorical columns with max_categories or min_frequency, or encode them as codes.");
        column_names_.push_back(c->name());
        c->feature_names(feature_names_);
    }
    width_ = int(width);
    if (width_ == 0) fail(ErrorKind::InvalidParameter, "a recipe needs at least one feature");
}

ColumnKind Recipe::column_kind(int c) const { return columns_.at(std::size_t(c))->kind(); }
int Recipe::column_width(int c) const { return columns_.at(std::size_t(c))->width(); }

std::vector<EmbeddingInput> Recipe::embeddings() const {
    std::vector<EmbeddingInput> out;
    for (std::size_t c = 0; c < columns_.size(); ++c)
        if (columns_[c]->vocabulary() > 0) out.push_back({columns_[c]->name(), offset_[c], columns_[c]->vocabulary()});
    return out;
}

std::vector<std::string> Recipe::categories(const std::string& column) const {
    for (const auto& c : columns_)
        if (c->name() == column) return c->categories();
    fail(ErrorKind::InvalidParameter, "the recipe has no " + recipe_detail::quoted_column(column));
}

void Recipe::apply(const Cell* row, std::size_t num_values, float* out) const {
    if (num_values != columns_.size())
        fail(ErrorKind::Internal, "a recipe of " + std::to_string(columns_.size()) + " columns was given " +
                                      std::to_string(num_values) + " values");
    for (std::size_t c = 0; c < columns_.size(); ++c) columns_[c]->apply(row[c], out + offset_[c]);
}

std::vector<float> Recipe::apply(const std::vector<Cell>& row) const {
    std::vector<float> out(static_cast<std::size_t>(width_));
    apply(row.data(), row.size(), out.data());
    return out;
}

std::string Recipe::to_json() const {
    cfg::ojson j;
    j["format"] = "hopper.recipe";
    j["version"] = 1;
    j["rows"] = rows_;
    j["width"] = width_;
    cfg::ojson cols = cfg::ojson::array();
    for (const auto& c : columns_) cols.push_back(c->to_json());
    j["columns"] = std::move(cols);
    std::string text = j.dump();
    if (text.size() > kMaxRecipeJsonBytes)
        fail(ErrorKind::Limit, "recipe is too large",
             "It would have " + std::to_string(text.size()) + " bytes; hopper stores at most " +
                 std::to_string(kMaxRecipeJsonBytes >> 20) + " MB of recipe text.",
             "The values of categorical columns are stored: leave identifier-like columns out.");
    return text;
}

Recipe Recipe::from_json(std::string_view text) {
    if (text.size() > kMaxRecipeJsonBytes)
        fail(ErrorKind::Limit, "recipe is too large",
             "It has " + std::to_string(text.size()) + " bytes; hopper reads at most " +
                 std::to_string(kMaxRecipeJsonBytes >> 20) + " MB of recipe text.");
    const cfg::json j = cfg::parse_json_text(text, "recipe");
    ObjectReader r(j, "the recipe");
    if (r.string("format") != "hopper.recipe") r.bad("format", "It must be \"hopper.recipe\".");
    const int64_t version = r.integer("version", 0, INT32_MAX);
    if (version != 1)
        fail(ErrorKind::Data, "recipe version " + std::to_string(version) + " is not supported",
             "This hopper reads recipe version 1.", "Was the recipe written by a newer hopper?");
    const int64_t rows = r.integer("rows", 1, INT64_MAX);
    const int64_t width = r.integer("width", 1, kMaxRecipeWidth);
    const cfg::json& cols = r.at("columns");
    if (!cols.is_array() || cols.empty() || cols.size() > std::size_t(kMaxRecipeColumns))
        r.bad("columns", "It must be an array of 1 to " + std::to_string(kMaxRecipeColumns) + " columns.");
    r.done();
    std::vector<std::shared_ptr<const ColumnEncoder>> encoders;
    std::set<std::string> names;
    for (std::size_t i = 0; i < cols.size(); ++i) {
        encoders.push_back(recipe_detail::read_encoder(cols[i], "column " + std::to_string(i + 1)));
        if (!names.insert(encoders.back()->name()).second)
            fail(ErrorKind::Data,
                 "invalid recipe: " + recipe_detail::quoted_column(encoders.back()->name()) + " appears twice");
    }
    Recipe recipe(std::move(encoders), rows);
    if (recipe.width() != width)
        fail(ErrorKind::Data, "invalid recipe: its columns give " + std::to_string(recipe.width()) + " features, not " +
                                  std::to_string(width));
    return recipe;
}

// ---- RecipeFitter ----

RecipeFitter::RecipeFitter(std::vector<ColumnSpec> specs, FitLimits limits) : limits_(limits) {
    if (specs.empty()) fail(ErrorKind::InvalidParameter, "a recipe needs at least one column");
    if (specs.size() > std::size_t(kMaxRecipeColumns))
        fail(ErrorKind::Limit, "a recipe takes at most " + std::to_string(kMaxRecipeColumns) + " columns",
             "There are " + std::to_string(specs.size()) + ".");
    if (limits.max_distinct < 1) fail(ErrorKind::InvalidParameter, "max_distinct must be positive");
    std::set<std::string> names;
    for (const ColumnSpec& s : specs) {
        if (s.name.empty()) fail(ErrorKind::InvalidParameter, "a recipe column needs a name");
        recipe_detail::check_utf8(s.name, s.name);
        if (!names.insert(s.name).second)
            fail(ErrorKind::InvalidParameter, "recipe " + recipe_detail::quoted_column(s.name) + " is given twice");
        columns_.push_back(recipe_detail::make_fitter(s, limits_));
    }
}

RecipeFitter::~RecipeFitter() = default;
RecipeFitter::RecipeFitter(RecipeFitter&&) noexcept = default;
RecipeFitter& RecipeFitter::operator=(RecipeFitter&&) noexcept = default;

void RecipeFitter::add(const Cell* row, std::size_t num_values) {
    if (num_values != columns_.size())
        fail(ErrorKind::Internal, "a recipe fitter of " + std::to_string(columns_.size()) + " columns was given " +
                                      std::to_string(num_values) + " values");
    for (std::size_t c = 0; c < columns_.size(); ++c) columns_[c]->add(row[c]);
    ++rows_;
    // The state grows by at most a few bytes per row and column: checking every 1024 rows is enough.
    if (limits_.max_bytes && rows_ % 1024 == 0) check_bytes();
}

uint64_t RecipeFitter::bytes_used() const {
    uint64_t total = 0;
    for (const auto& c : columns_) total += c->bytes_used();
    return total;
}

void RecipeFitter::check_bytes() const {
    const uint64_t used = bytes_used();
    if (used <= limits_.max_bytes) return;
    std::size_t largest = 0;
    for (std::size_t c = 1; c < columns_.size(); ++c)
        if (columns_[c]->bytes_used() > columns_[largest]->bytes_used()) largest = c;
    fail(ErrorKind::Limit, "fitting the recipe needs more memory than allowed",
         "After " + std::to_string(rows_) + " rows it holds " + std::to_string(used) + " bytes, " +
             std::to_string(columns_[largest]->bytes_used()) + " of them for " +
             recipe_detail::quoted_column(columns_[largest]->spec().name) + "; the limit is " +
             std::to_string(limits_.max_bytes) + ".",
         "An exact median keeps every value, and a categorical column every distinct value: use mean "
         "imputation, or fewer distinct values.");
}

uint64_t RecipeFitter::estimate_bytes(const std::vector<ColumnSpec>& specs, int64_t rows,
                                      const std::vector<int64_t>& distinct, double mean_text_bytes) {
    uint64_t total = 0;
    for (std::size_t c = 0; c < specs.size(); ++c)
        total += recipe_detail::estimate_fitter_bytes(specs[c], rows, c < distinct.size() ? distinct[c] : 0,
                                                      mean_text_bytes);
    return total;
}

Recipe RecipeFitter::finish() const {
    if (rows_ == 0) fail(ErrorKind::Data, "no rows to fit a recipe on", "The source table is empty.");
    std::vector<std::shared_ptr<const ColumnEncoder>> encoders;
    for (const auto& c : columns_) encoders.push_back(c->finish());
    return Recipe(std::move(encoders), rows_);
}

}  // namespace hopper
