// Tables as they are (issue 27): see tabular.h.
#include "pg/training/tabular.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hopper/error.h"
#include "pg/common/datum.h"
#include "pg/common/owned.h"
#include "pg/common/resource_limits.h"
#include "pg/training/preprocess.h"

extern "C" {
#include "access/transam.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
}

namespace hopper::pg {

bool is_numeric_array_type(Oid t) {
    return t == INT2ARRAYOID || t == INT4ARRAYOID || t == INT8ARRAYOID || t == FLOAT4ARRAYOID || t == FLOAT8ARRAYOID ||
           t == NUMERICARRAYOID;
}

namespace {

using json = nlohmann::json;

constexpr long kFetchBatch = 10000;

bool is_numeric_type(Oid t) {
    return t == INT2OID || t == INT4OID || t == INT8OID || t == FLOAT4OID || t == FLOAT8OID || t == NUMERICOID;
}
bool is_text_type(Oid t) {
    return t == TEXTOID || t == VARCHAROID || t == BPCHAROID || t == NAMEOID || t == CHAROID ||
           call([&] { return get_typtype(t) == TYPTYPE_ENUM; });
}
bool is_date_type(Oid t) { return t == DATEOID || t == TIMESTAMPOID || t == TIMESTAMPTZOID; }
// Read as numbers of seconds: a time of day since midnight, an interval in all (a month as 30 days,
// as PostgreSQL's epoch of an interval counts it). Time series tables have them.
bool is_seconds_type(Oid t) { return t == TIMEOID || t == INTERVALOID; }
bool is_array_type(Oid t) {
    return call([&] { return OidIsValid(get_element_type(t)); });
}

std::string type_name(Oid t) {
    return call([&] { return format_type_be(t); });
}

[[noreturn]] void refuse_type(const std::string& column, Oid type) {
    fail(ErrorKind::WrongType, "independent column \"" + column + "\" has type " + type_name(type),
         "Features are numbers, booleans, text, enums, dates, timestamps, times of day, intervals and arrays of "
         "numbers.",
         "Cast the column to one of these types in a view, or exclude it.");
}

// The kind a column's type gets unless the user says otherwise.
ColumnKind default_kind(const std::string& column, Oid type) {
    if (is_numeric_type(type) || is_seconds_type(type)) return ColumnKind::Numeric;
    if (type == BOOLOID) return ColumnKind::Boolean;
    if (is_date_type(type)) return ColumnKind::Date;
    if (is_text_type(type)) return ColumnKind::Categorical;
    if (is_numeric_array_type(type)) return ColumnKind::Array;
    refuse_type(column, type);
}

// A kind the user asks for must be one the type can be read as.
void check_kind(const std::string& column, Oid type, ColumnKind kind) {
    const ColumnKind natural = default_kind(column, type);
    if (kind == natural) return;
    // An array is one: its elements are not categories, and no other column is an array.
    if (natural == ColumnKind::Array || kind == ColumnKind::Array)
        fail(ErrorKind::WrongType,
             "column \"" + column + "\" of type " + type_name(type) + " cannot be read as " + to_string(kind),
             natural == ColumnKind::Array ? "An array of numbers is read as an array of features."
                                          : "Only arrays of numbers are read as arrays of features.");
    if (kind == ColumnKind::Categorical) return;
    // At prediction the kind is the recipe's, fixed when the model was trained: a cast is the way out.
    const char* cast = kind == ColumnKind::Numeric   ? "::float8"
                       : kind == ColumnKind::Boolean ? "::boolean"
                       : kind == ColumnKind::Date    ? "::date (or ::timestamp)"
                                                     : "";
    fail(ErrorKind::WrongType,
         "column \"" + column + "\" of type " + type_name(type) + " cannot be read as " + to_string(kind),
         std::string("Its type makes it ") + to_string(natural) +
             (natural == ColumnKind::Categorical ? "." : "; it can also be declared categorical."),
         *cast
             ? "Cast it in a view or subquery, e.g. " + quote_ident(column) + cast + " AS " + quote_ident(column) + "."
             : "");
}

// Whether a type's text output depends on the session's settings (DateStyle, TimeZone,
// IntervalStyle, extra_float_digits, lc_monetary).
bool session_dependent_text(Oid type) {
    switch (type) {
        case DATEOID:
        case TIMESTAMPOID:
        case TIMESTAMPTZOID:
        case INTERVALOID:
        case FLOAT4OID:
        case FLOAT8OID:
        case CASHOID: return true;
        default: return false;
    }
}

// float8's largest value, as numeric compares it.
constexpr const char* kLargestFloat8 = "1.7976931348623157e308";

}  // namespace

std::string float8_sql(const std::string& column_ref, Oid type) {
    if (is_seconds_type(type)) return "pg_catalog.date_part('epoch', " + column_ref + ")";
    if (type != NUMERICOID) return column_ref + "::pg_catalog.float8";
    // numeric's cast to float8 raises for a value beyond float8's range, either way (22003, naming
    // no column): one beyond its largest becomes that largest, which packing then refuses naming the
    // column (beyond float32); one below its smallest becomes 0, as in float32. NaN and the
    // infinities (which compare above or below every number) pass as they are, refused as such.
    return "CASE WHEN " + column_ref + " OPERATOR(pg_catalog.>) " + kLargestFloat8 + " AND " + column_ref +
           " OPERATOR(pg_catalog.<) 'Infinity'::pg_catalog.numeric THEN " + kLargestFloat8 +
           "::pg_catalog.float8 WHEN " + column_ref + " OPERATOR(pg_catalog.<) -" + kLargestFloat8 + " AND " +
           column_ref + " OPERATOR(pg_catalog.>) '-Infinity'::pg_catalog.numeric THEN -" + kLargestFloat8 +
           "::pg_catalog.float8 WHEN pg_catalog.abs(" + column_ref +
           ") OPERATOR(pg_catalog.<) 1e-300 THEN 0::pg_catalog.float8 ELSE " + column_ref + "::pg_catalog.float8 END";
}

namespace {

// How a column is read: numbers, booleans (0/1) and dates (days since 1970-01-01) as float8, categories
// as text, arrays of numbers as real[] (fitting and encoding read the same floats). Only pg_catalog's
// casts, functions and operators.
std::string cell_sql(const std::string& column_ref, Oid type, ColumnKind kind) {
    switch (kind) {
        case ColumnKind::Array: return column_ref + "::pg_catalog.float4[]";
        case ColumnKind::Categorical:
            // Types whose text follows the session's settings, named by the defaults' text.
            if (session_dependent_text(type)) return "hopper.category_text(" + column_ref + ")";
            // An enum's text by its output function, as ::text would without a cast: its owner may
            // CREATE CAST (the enum AS text) WITH FUNCTION of theirs, which ::text would run as the
            // caller (a superuser packing or scoring the table included).
            if (type >= FirstNormalObjectId) return "pg_catalog.textin(pg_catalog.enum_out(" + column_ref + "))";
            return column_ref + "::pg_catalog.text";
        case ColumnKind::Boolean: return column_ref + "::pg_catalog.int4::pg_catalog.float8";
        case ColumnKind::Date:
            // Date subtraction raises for 'infinity' (22008, naming no column); as a timestamp's epoch
            // does, it becomes an infinite float, which packing and prediction refuse naming the column.
            // NULL stays NULL (imputed).
            if (type == DATEOID)
                return "CASE WHEN pg_catalog.isfinite(" + column_ref + ") THEN (" + column_ref +
                       " OPERATOR(pg_catalog.-) '1970-01-01'::pg_catalog.date)::pg_catalog.float8 WHEN " + column_ref +
                       " OPERATOR(pg_catalog.>) '1970-01-01'::pg_catalog.date THEN 'Infinity'::pg_catalog.float8 WHEN " +
                       column_ref +
                       " OPERATOR(pg_catalog.<) '1970-01-01'::pg_catalog.date THEN '-Infinity'::pg_catalog.float8 END";
            return "(pg_catalog.date_part('epoch', " + column_ref +
                   ") OPERATOR(pg_catalog./) 86400::pg_catalog.float8)";
        default: return float8_sql(column_ref, type);
    }
}

struct TableColumn {
    std::string name;
    Oid type;
};

std::vector<TableColumn> table_columns(Spi& spi, const TableName& table) {
    spi.execute(
        "SELECT attname::pg_catalog.text, atttypid FROM pg_catalog.pg_attribute WHERE attrelid OPERATOR(pg_catalog.=)"
        " $1::pg_catalog.regclass AND attnum OPERATOR(pg_catalog.>) 0 AND NOT attisdropped ORDER BY attnum",
        {SqlParam::text_copy(table.quoted())});
    std::vector<TableColumn> out;
    for (uint64_t r = 0; r < spi.rows(); ++r) out.push_back({spi.text(r, 0), Oid(spi.integer(r, 1))});
    return out;
}

std::vector<std::string> selected_columns(Spi& spi, const TableName& table, const TabularRequest& req) {
    std::vector<std::string> excluded;
    if (!req.exclude_columns.empty()) {
        excluded = parse_column_list(req.exclude_columns, "exclude_columns");
        for (const auto& c : excluded) require_column(table, c, "excluded");
    }
    auto is_excluded = [&](const std::string& c) {
        return c == req.dependent || std::find(excluded.begin(), excluded.end(), c) != excluded.end();
    };
    std::vector<std::string> out;
    if (req.independent_varname == "*") {
        for (const TableColumn& c : table_columns(spi, table))
            if (!is_excluded(c.name)) out.push_back(c.name);
        if (out.empty())
            fail(ErrorKind::InvalidParameter,
                 "independent_varname '*' leaves no feature column in table " + table.display(),
                 "Every column is the dependent variable or in exclude_columns.");
        return out;
    }
    for (const auto& c : parse_column_list(req.independent_varname, "independent_varname")) {
        require_column(table, c, "independent");
        if (!is_excluded(c)) out.push_back(c);
    }
    if (out.empty())
        fail(ErrorKind::InvalidParameter, "independent_varname leaves no feature column",
             "Every column it names is the dependent variable or in exclude_columns.");
    return out;
}

// Per-column options as JSON: {"column": {"kind": ..., "impute": ..., ...}, ...}.
void apply_options(const TableName& table, const std::string& text, std::vector<ColumnSpec>& specs,
                   const std::vector<Oid>& types) {
    json options;
    try {
        options = json::parse(text);
    } catch (const json::exception&) { fail(ErrorKind::Syntax, "columns is not valid JSON"); }
    if (!options.is_object()) fail(ErrorKind::InvalidParameter, "columns must be a JSON object of column names");
    for (auto it = options.begin(); it != options.end(); ++it) {
        const std::string& column = it.key();
        auto spec = std::find_if(specs.begin(), specs.end(), [&](const ColumnSpec& s) { return s.name == column; });
        if (spec == specs.end()) {
            if (!OidIsValid(column_type(table, column)))
                fail(ErrorKind::UndefinedColumn,
                     "column \"" + column + "\" named in columns does not exist in table " + table.display());
            fail(ErrorKind::InvalidParameter, "columns names \"" + column + "\", which is not a feature column",
                 "It is the dependent variable, excluded, or not in independent_varname.");
        }
        const Oid type = types[std::size_t(spec - specs.begin())];
        if (!it.value().is_object())
            fail(ErrorKind::InvalidParameter, "columns option of \"" + column + "\" must be a JSON object");
        auto bad = [&](const std::string& key, const char* expected) {
            fail(ErrorKind::InvalidParameter,
                 "columns option \"" + key + "\" of \"" + column + "\" must be " + expected);
        };
        auto as_text = [&](const std::string& key, const json& v) {
            if (!v.is_string()) bad(key, "a string");
            return v.get<std::string>();
        };
        auto as_count = [&](const std::string& key, const json& v) {
            if (!v.is_number_integer() || v.get<int64_t>() < 0) bad(key, "a non-negative integer");
            return v.get<int64_t>();
        };
        auto apply_option = [&](const std::string& key, const json& v) {
            if (key == "kind") {
                spec->kind = parse_column_kind(as_text(key, v));
                check_kind(column, type, spec->kind);
            } else if (key == "impute") {
                spec->impute = parse_imputation(as_text(key, v));
            } else if (key == "impute_value") {
                if (!v.is_number()) bad(key, "a number");
                spec->impute = Imputation::Constant;
                spec->impute_value = v.get<double>();
            } else if (key == "missing_indicator") {
                if (!v.is_boolean()) bad(key, "true or false");
                spec->missing_indicator = v.get<bool>();
            } else if (key == "scale") {
                spec->scale = parse_scale_kind(as_text(key, v));
            } else if (key == "encoding") {
                spec->encoding = parse_category_encoding(as_text(key, v));
            } else if (key == "min_frequency") {
                spec->min_frequency = as_count(key, v);
            } else if (key == "max_categories") {
                spec->max_categories = as_count(key, v);
            } else {
                fail(ErrorKind::InvalidParameter, "unknown columns option \"" + key + "\" for \"" + column + "\"", "",
                     "Options are kind, impute, impute_value, missing_indicator, scale, encoding, min_frequency and "
                     "max_categories.");
            }
        };
        for (auto o = it.value().begin(); o != it.value().end(); ++o) {
            const std::string& key = o.key();
            const json& v = o.value();
            try {
                apply_option(key, v);
            } catch (const Error& e) {
                // The core's parsers name the value; the user needs the column too.
                if (e.kind() != ErrorKind::InvalidParameter ||
                    e.message().find("\"" + column + "\"") != std::string::npos)
                    throw;
                fail(e.kind(), e.message() + " for column \"" + column + "\"", e.detail(), e.hint());
            }
        }
        // A categorical column is neither scaled nor given a missing indicator (NULL is a category).
        if (spec->kind == ColumnKind::Categorical) {
            if (spec->missing_indicator)
                fail(ErrorKind::InvalidParameter,
                     "categorical column \"" + column + "\" cannot have a missing_indicator",
                     "NULL is a category of its own.");
            if (it.value().contains("scale"))
                fail(ErrorKind::InvalidParameter, "categorical column \"" + column + "\" cannot be scaled");
            spec->scale = ScaleKind::None;
        }
        // Options of another kind of column were accepted and did nothing ("impute" on a text
        // column, "max_categories" on a numeric one): refused, naming the column's kind.
        static const char* const categorical_only[] = {"encoding", "min_frequency", "max_categories"};
        static const char* const imputed_only[] = {"impute", "impute_value", "missing_indicator"};
        auto refuse_option = [&](const char* key, const char* hint) {
            fail(ErrorKind::InvalidParameter,
                 "columns option \"" + std::string(key) + "\" does not apply to " + to_string(spec->kind) +
                     " column \"" + column + "\"",
                 "", hint);
        };
        if (spec->kind != ColumnKind::Categorical)
            for (const char* key : categorical_only)
                if (it.value().contains(key))
                    refuse_option(key, "It applies to categorical columns (text, or \"kind\": \"categorical\").");
        if (spec->kind == ColumnKind::Categorical || spec->kind == ColumnKind::Array)
            for (const char* key : imputed_only)
                if (it.value().contains(key) && !(std::string(key) == "missing_indicator" && !spec->missing_indicator))
                    refuse_option(key, spec->kind == ColumnKind::Categorical
                                           ? "NULL is a category of its own in a categorical column."
                                           : "NULL arrays are refused, not imputed.");
    }
}

// The recipe of a packed table or model, parsed once per query and process (hopper.recipe_features).
struct CachedRecipe {
    std::string text;
    std::optional<Recipe> recipe;
    std::vector<Cell> cells;
    std::vector<float> floats;  // the array columns' values
    std::vector<float> out;
};

}  // namespace

bool needs_recipe(Spi& spi, const TableName& table, const TabularRequest& req) {
    if (req.independent_varname == "*" || !req.exclude_columns.empty() || !req.columns_json.empty()) return true;
    const std::vector<std::string> columns = parse_column_list(req.independent_varname, "independent_varname");
    std::string any_null;
    for (const auto& c : columns) {
        const Oid t = column_type(table, c);
        // Missing columns and a single array are packed as numbers (and their errors); an array among
        // other columns is an array column of a recipe.
        if (!OidIsValid(t)) return false;
        if (is_array_type(t)) {
            if (columns.size() == 1) return false;
            return true;
        }
        if (!is_numeric_type(t)) return true;
        any_null += (any_null.empty() ? "" : " OR ") + quote_ident(c) + " IS NULL";
    }
    // SELECT 1, not an empty target list: Citus cannot plan that over a distributed table ("a column
    // definition list is required", a Citus sweep).
    return spi.scalar_int("SELECT pg_catalog.count(*) FROM (SELECT 1 FROM " + table.quoted() + " WHERE " + any_null +
                          " LIMIT 1) AS n") > 0;
}

TabularColumns describe_tabular(Spi& spi, const TableName& table, const TabularRequest& req) {
    TabularColumns out;
    std::vector<Oid> types;
    for (const std::string& c : selected_columns(spi, table, req)) {
        const Oid t = require_column(table, c, "independent");
        ColumnSpec spec;
        spec.name = c;
        spec.kind = default_kind(c, t);
        if (spec.kind != ColumnKind::Categorical && spec.kind != ColumnKind::Boolean) spec.scale = req.default_scale;
        out.specs.push_back(spec);
        types.push_back(t);
    }
    if (!req.columns_json.empty()) apply_options(table, req.columns_json, out.specs, types);
    for (std::size_t i = 0; i < out.specs.size(); ++i)
        out.cell_sql.push_back(cell_sql(quote_ident(out.specs[i].name), types[i], out.specs[i].kind));
    return out;
}

namespace {

// Numeric and date columns go into the model as they are unless scaled (scale => 'none', the
// default, as MADlib's): a network barely trains on raw values in the thousands -- diamonds' cut
// reached 0.406 accuracy (the majority class is 0.399) with price and the others raw, 0.712
// standardized -- so a NOTICE names such columns.
constexpr double kLargeUnscaled = 100.0;

void notice_unscaled(const std::vector<ColumnSpec>& specs, const std::vector<double>& largest) {
    std::string names;
    double most = 0.0;
    int count = 0;
    for (std::size_t c = 0; c < specs.size(); ++c) {
        const ColumnSpec& s = specs[c];
        if (s.scale != ScaleKind::None ||
            (s.kind != ColumnKind::Numeric && s.kind != ColumnKind::Date && s.kind != ColumnKind::Array) ||
            largest[c] <= kLargeUnscaled)
            continue;
        if (++count <= 5) names += (names.empty() ? "" : ", ") + quote_ident(s.name);
        most = std::max(most, largest[c]);
    }
    if (count == 0) return;
    notice(std::string(count == 1 ? "column " : "columns ") + names + (count > 5 ? ", ..." : "") +
               (count == 1 ? " goes" : " go") + " into the model unscaled, with values up to " + describe_double(most),
           "Networks train poorly on large raw values: pass scale => 'standardize', or a column's \"scale\" "
           "option in columns.");
}

// A categorical column with a value per row or so (an identifier '*' took in), or with thousands of
// values, becomes as many one-hot features in every packed row, without a word: letter recognition
// with a unique text code per row packed 16,017 floats a row (1 GB for 16,000 rows), lme4's
// InstEval 3.4 MB of table into 962 MB. So a WARNING names it and the ways out.
constexpr int64_t kWideOneHot = 1000;

void warn_wide_one_hot(const ColumnSpec& s, int64_t distinct, int64_t rows) {
    // A column whose values the user bounded or encodes otherwise was looked at.
    if (s.encoding != CategoryEncoding::OneHot || s.min_frequency > 1 || s.max_categories > 0) return;
    const bool identifier = distinct >= 100 && 2 * distinct >= rows;
    if (distinct < kWideOneHot && !identifier) return;
    warning("categorical column \"" + s.name + "\" becomes " + std::to_string(distinct) + " one-hot features",
            "It has " + std::to_string(distinct) + " distinct values in " + std::to_string(rows) + " rows" +
                (identifier ? ", nearly one per row, as an identifier has." : ".") +
                " Each packed row holds a float for each of them.",
            "Leave it out (exclude_columns) if it identifies rows; else keep its frequent values (\"max_categories\" "
            "or \"min_frequency\" in columns), or pack it as one code (\"encoding\": \"codes\") for an embedding "
            "layer.");
}

}  // namespace

std::string fit_recipe(Spi& spi, const TableName& table, const TabularColumns& cols, const std::string& row_filter,
                       int64_t rows) {
    FitLimits limits;
    // The estimate below refuses a fit up front; this bounds the fitter itself should it go beyond.
    limits.max_bytes = memory_budget_bytes();
    // First a cheap pass: the vocabulary of each categorical column, to refuse before holding it.
    std::vector<std::size_t> categorical;
    for (std::size_t i = 0; i < cols.specs.size(); ++i)
        if (cols.specs[i].kind == ColumnKind::Categorical) categorical.push_back(i);
    std::vector<int64_t> distinct(cols.specs.size(), 0);
    double mean_text = 0;
    if (!categorical.empty()) {
        std::string sql = "SELECT ";
        std::string lengths;
        for (std::size_t k = 0; k < categorical.size(); ++k) {
            const std::string& e = cols.cell_sql[categorical[k]];
            sql += (k ? ", " : "") + std::string("pg_catalog.count(DISTINCT ") + e + ")";
            lengths += (k ? " OPERATOR(pg_catalog.+) " : "") +
                       std::string("coalesce(pg_catalog.avg(pg_catalog.octet_length(") + e + ")), 0)";
        }
        spi.execute(sql + ", (" + lengths + ")::pg_catalog.float8 FROM " + table.quoted() + row_filter);
        for (std::size_t k = 0; k < categorical.size(); ++k) {
            distinct[categorical[k]] = spi.integer(0, int(k));
            if (distinct[categorical[k]] > limits.max_distinct)
                fail(ErrorKind::Limit,
                     "categorical column \"" + cols.specs[categorical[k]].name + "\" has too many distinct values",
                     "It has " + std::to_string(distinct[categorical[k]]) + "; hopper counts at most " +
                         std::to_string(limits.max_distinct) + ".",
                     "Exclude it (exclude_columns), or is it an identifier?");
        }
        mean_text = spi.number(0, int(categorical.size())) / double(categorical.size());
        for (std::size_t c : categorical) warn_wide_one_hot(cols.specs[c], distinct[c], rows);
    }
    check_memory(RecipeFitter::estimate_bytes(cols.specs, rows, distinct, mean_text),
                 "fitting the feature recipe of " + std::to_string(cols.specs.size()) + " columns over " +
                     std::to_string(rows) + " rows",
                 "Exclude columns with many distinct values, or fit on fewer rows.");

    RecipeFitter fitter(cols.specs, limits);
    std::string select;
    for (std::size_t i = 0; i < cols.cell_sql.size(); ++i) select += (i ? ", " : "") + cols.cell_sql[i];
    std::vector<Cell> row(cols.specs.size());
    std::vector<std::string> texts(cols.specs.size());
    std::vector<std::vector<float>> arrays(cols.specs.size());
    std::vector<double> largest(cols.specs.size(), 0.0);  // of each column's magnitudes
    spi.open_cursor("SELECT " + select + " FROM " + table.quoted() + row_filter);
    while (spi.fetch(kFetchBatch) > 0) {
        check_for_interrupts();
        for (uint64_t r = 0; r < spi.rows(); ++r) {
            for (std::size_t c = 0; c < row.size(); ++c) {
                if (spi.is_null(r, int(c))) {
                    row[c] = Cell();
                } else if (cols.specs[c].kind == ColumnKind::Categorical) {
                    texts[c] = spi.text(r, int(c));
                    row[c] = Cell(std::string_view(texts[c]));
                } else if (cols.specs[c].kind == ColumnKind::Array) {
                    // real[] (cell_sql): the doubles are floats, exactly.
                    const std::vector<double> v = spi.float8_array(r, int(c), "array \"" + cols.specs[c].name + "\"");
                    arrays[c].assign(v.begin(), v.end());
                    for (float x : arrays[c]) largest[c] = std::max(largest[c], double(std::fabs(x)));
                    row[c] = Cell(arrays[c].data(), int(arrays[c].size()));
                } else {
                    row[c] = Cell(spi.number(r, int(c)));
                    largest[c] = std::max(largest[c], std::fabs(row[c].number));
                }
            }
            fitter.add(row);
        }
    }
    spi.close_cursor();
    std::string recipe = fitter.finish().to_json();
    notice_unscaled(cols.specs, largest);
    return recipe;
}

std::string recipe_features_sql(const TableName& table, const Recipe& recipe, const std::string& recipe_sql,
                                const std::string& qualifier) {
    return recipe_features_sql(
        recipe, recipe_sql,
        [&](const std::string& name) -> std::optional<RecipeColumn> {
            const Oid type = column_type(table, name);
            if (!OidIsValid(type)) return std::nullopt;
            return RecipeColumn{qualifier + quote_ident(name), type};
        },
        [&](const std::vector<std::string>& names) { refuse_missing_recipe_columns(table, recipe, names); });
}

void refuse_missing_recipe_columns(const TableName& table, const Recipe& recipe,
                                   const std::vector<std::string>& names) {
    if (names.size() == 1) require_column(table, names[0], "independent");  // with its case hint
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "\"" : ", \"") + n + "\"";
    fail(ErrorKind::UndefinedColumn, "independent columns " + list + " do not exist in table " + table.display(),
         "The model's recipe reads " + std::to_string(recipe.num_columns()) + " columns; " +
             std::to_string(names.size()) + " of them are missing.");
}

namespace {
// A categorical column read from a number or boolean column (the text '408', 'true') where the
// recipe learned its categories from text ('area_code_408', 'yes'): every value goes to the unknown
// category, and accuracy fell from 0.918 to 0.814 without a word (a user sweep's scoring table).
// Warned when no category of the recipe reads as a value of the column's type.
void warn_unmatchable_categories(const std::string& column, Oid type, const std::vector<std::string>& categories) {
    const bool boolean = type == BOOLOID;
    if ((!boolean && !is_numeric_type(type)) || categories.empty()) return;
    auto readable = [&](const std::string& c) {
        if (boolean) return c == "true" || c == "false";
        char* end = nullptr;
        (void)std::strtod(c.c_str(), &end);
        return !c.empty() && end == c.c_str() + c.size() && !std::isspace(static_cast<unsigned char>(c[0]));
    };
    if (std::any_of(categories.begin(), categories.end(), readable)) return;
    std::string examples;
    for (std::size_t k = 0; k < categories.size() && k < 3; ++k)
        examples += std::string(k ? ", " : "") + "\"" + categories[k] + "\"";
    if (categories.size() > 3) examples += ", ...";
    warning("column \"" + column + "\" of type " + type_name(type) + " matches none of its " +
                std::to_string(categories.size()) + " categories",
            "The recipe learned the categories from text (" + examples + "); read as " +
                (boolean ? "true or false" : "a number") + ", every value of the column is an unknown category.",
            "Give the column as it was when the model was trained, e.g. in a view.");
}
}  // namespace

std::string recipe_features_sql(const Recipe& recipe, const std::string& recipe_sql,
                                const std::function<std::optional<RecipeColumn>(const std::string& name)>& column,
                                const std::function<void(const std::vector<std::string>& names)>& missing) {
    std::vector<std::optional<RecipeColumn>> found_columns;
    std::vector<std::string> lacking;
    for (const std::string& name : recipe.column_names()) {
        found_columns.push_back(column(name));
        if (!found_columns.back()) lacking.push_back(name);
    }
    if (!lacking.empty()) {
        missing(lacking);
        fail(ErrorKind::Internal, "recipe columns are missing and nothing said so");
    }
    std::string numbers, texts, arrays = "'{}'::pg_catalog.float4[]", lengths;
    bool any_array = false;
    for (int c = 0; c < recipe.num_columns(); ++c) {
        const std::string& name = recipe.column_names()[std::size_t(c)];
        const ColumnKind kind = recipe.column_kind(c);
        const RecipeColumn& found = *found_columns[std::size_t(c)];
        const Oid type = found.type;
        check_kind(name, type, kind);
        if (kind == ColumnKind::Categorical) warn_unmatchable_categories(name, type, recipe.categories(name));
        const std::string cell = cell_sql(found.sql, type, kind);
        if (kind == ColumnKind::Array) {
            // The arrays end to end, and each one's length (NULL for a NULL array, which
            // array_cat skips) to tell them apart.
            any_array = true;
            arrays = "pg_catalog.array_cat(" + arrays + ", " + cell + ")";
            lengths += (lengths.empty() ? "" : ", ") + std::string("pg_catalog.cardinality(") + cell + ")";
            continue;
        }
        std::string& list = kind == ColumnKind::Categorical ? texts : numbers;
        list += (list.empty() ? "" : ", ") + cell;
    }
    return "hopper.recipe_features(" + recipe_sql + ", ARRAY[" + numbers + "]::pg_catalog.float8[], ARRAY[" + texts +
           "]::pg_catalog.text[]" +
           (any_array ? ", " + arrays + ", ARRAY[" + lengths + "]::pg_catalog.int4[]" : std::string()) + ")";
}

}  // namespace hopper::pg

using namespace hopper;
using namespace hopper::pg;

// recipe_features(recipe text, numbers float8[], texts text[] [, arrays real[], array_lengths int4[]])
// -> real[]: a raw row's features by a recipe; numbers are the row's numeric, boolean and date columns
// in recipe order, texts its categorical ones (NULLs allowed), arrays its array columns end to end
// with their lengths (NULL for a NULL array). Packing and prediction both go through it, so a row
// encodes bit for bit the same.
HOPPER_FUNCTION(recipe_features) {
    require_not_null(fcinfo, 0, "recipe");
    require_not_null(fcinfo, 1, "numbers");
    require_not_null(fcinfo, 2, "texts");
    auto* cache = static_cast<CachedRecipe*>(fcinfo->flinfo->fn_extra);
    // A constant or parameter recipe is the same on every row: parsed once. Otherwise compared.
    const bool stable = call([&] { return get_fn_expr_arg_stable(fcinfo->flinfo, 0); });
    if (!cache || !stable) {
        std::string text = text_to_string(PG_GETARG_DATUM(0));
        if (!cache || cache->text != text) {
            auto fresh = std::make_unique<CachedRecipe>();
            fresh->recipe = Recipe::from_json(text);
            fresh->text = std::move(text);
            if (cache) {
                *cache = std::move(*fresh);
            } else {
                cache = own_in_context(fcinfo->flinfo->fn_mcxt, std::move(fresh));
                fcinfo->flinfo->fn_extra = cache;
            }
        }
    }
    const Recipe& recipe = *cache->recipe;
    // An argument's elements (deconstruct_array's three outputs).
    struct Elements {
        Datum* values = nullptr;
        bool* nulls = nullptr;
        int count = 0;
    };
    Elements numbers, texts, arrays, lengths;
    const bool with_arrays = PG_NARGS() == 5;
    if (with_arrays) {
        require_not_null(fcinfo, 3, "arrays");
        require_not_null(fcinfo, 4, "array_lengths");
    }
    call([&] {
        auto elements = [&](int arg, Oid type, int16 len, bool byval, char align, const char* what, Elements& out) {
            ArrayType* v = PG_GETARG_ARRAYTYPE_P(arg);
            if (ARR_ELEMTYPE(v) != type) elog(ERROR, "recipe_features: %s has the wrong element type", what);
            // A row's arrays end to end: a multidimensional one stays so (an array of arrays of
            // another shape cannot be put after it), and was read as its elements in a row.
            if (arg == 3 && ARR_NDIM(v) > 1)
                ereport(ERROR, (errcode(ERRCODE_DATA_EXCEPTION), errmsg("array features must be one-dimensional"),
                                errdetail("An array column of the row has %d dimensions.", ARR_NDIM(v)),
                                errhint("Flatten it in a view.")));
            deconstruct_array(v, type, len, byval, align, &out.values, &out.nulls, &out.count);
        };
        elements(1, FLOAT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, "numbers", numbers);
        elements(2, TEXTOID, -1, false, TYPALIGN_INT, "texts", texts);
        if (!with_arrays) return;
        elements(3, FLOAT4OID, 4, true, TYPALIGN_INT, "arrays", arrays);
        elements(4, INT4OID, 4, true, TYPALIGN_INT, "array_lengths", lengths);
    });
    // The array columns' floats, split by their lengths below.
    std::vector<float>& floats = cache->floats;
    floats.resize(std::size_t(arrays.count));
    for (int i = 0; i < arrays.count; ++i)
        floats[std::size_t(i)] = arrays.nulls[i] ? 0.0f : DatumGetFloat4(arrays.values[i]);
    std::vector<Cell>& cells = cache->cells;
    cells.assign(std::size_t(recipe.num_columns()), Cell());
    int n = 0, t = 0, a = 0;
    int64_t used = 0;  // of the arrays' floats
    for (int c = 0; c < recipe.num_columns(); ++c) {
        if (recipe.column_kind(c) == ColumnKind::Array) {
            if (a >= lengths.count) {
                ++a;  // counted as missing below
                continue;
            }
            if (!lengths.nulls[a]) {
                const int32 length = DatumGetInt32(lengths.values[a]);
                if (length < 0 || used + length > arrays.count)
                    fail(ErrorKind::Data, "array_lengths do not match arrays",
                         length < 0 ? "A length is negative."
                                    : "The lengths add up to more than the " + std::to_string(arrays.count) +
                                          " floats given.");
                // A NULL element is named only in an array of the recipe's length (another length is
                // the error the encoder gives).
                for (int i = 0; i < length && length == recipe.column_width(c); ++i)
                    if (arrays.nulls[used + i])
                        fail(ErrorKind::NullValue,
                             "array column \"" + recipe.column_names()[std::size_t(c)] + "\" contains NULL elements",
                             "Element " + std::to_string(i + 1) + " is NULL.",
                             "Arrays are not imputed: filter such rows out, e.g. with a view.");
                cells[std::size_t(c)] = Cell(floats.data() + used, length);
                used += length;
            }
            ++a;
        } else if (recipe.column_kind(c) == ColumnKind::Categorical) {
            if (t >= texts.count) break;
            if (!texts.nulls[t]) {
                text* v = (text*)DatumGetPointer(texts.values[t]);
                cells[std::size_t(c)] = Cell(std::string_view(VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v)));
            }
            ++t;
        } else {
            if (n >= numbers.count) break;
            if (!numbers.nulls[n]) cells[std::size_t(c)] = Cell(DatumGetFloat8(numbers.values[n]));
            ++n;
        }
    }
    if (n != numbers.count || t != texts.count || a != lengths.count || n + t + a != recipe.num_columns())
        fail(ErrorKind::Data, "the row does not match the recipe",
             "The recipe has " + std::to_string(recipe.num_columns()) + " columns; the row gives " +
                 std::to_string(numbers.count) + " numbers, " + std::to_string(texts.count) + " texts and " +
                 std::to_string(lengths.count) + " arrays.",
             a > lengths.count ? "The recipe reads array columns: pass them as arrays and array_lengths." : "");
    if (used != arrays.count)
        fail(ErrorKind::Data, "array_lengths do not match arrays",
             "The lengths add up to " + std::to_string(used) + " of the " + std::to_string(arrays.count) +
                 " floats given.");
    cache->out.resize(std::size_t(recipe.width()));
    recipe.apply(cells.data(), cells.size(), cache->out.data());
    PG_RETURN_DATUM(make_float4_array(cache->out.data(), {recipe.width()}));
}
