// hopper.preprocess and hopper.preprocess_validation: pack a table's rows into minibatch buffers.
//
// Rows are shuffled with a seed, features converted to float32 (and scaled if asked), class labels
// one-hot encoded, and rows packed into buffers of about buffer_size rows, each tagged with the
// dist_key of the segment it belongs to. The packed table is partitioned by dist_key (one
// partition per segment), and its array columns are stored uncompressed out of line: float data
// hardly compresses and decompressing it on every epoch costs more than reading it.
//
// Shuffling without sorting wide rows: hopper reads only the row identifiers (ctid), shuffles them
// in memory, and fetches each buffer's rows with one TID scan.
#include "pg/training/preprocess.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "hopper/error.h"
#include "hopper/packing.h"
#include "hopper/resources.h"
#include "pg/common/datum.h"
#include "pg/common/names.h"
#include "pg/common/output_tables.h"
#include "pg/common/resource_limits.h"
#include "pg/common/spi.h"
#include "pg/engine/engine.h"
#include "pg/runtime/buffer_cache.h"
#include "pg/runtime/shared_buffer_cache.h"
#include "pg/training/pack_buffers.h"
#include "pg/training/tabular.h"

extern "C" {
#include "access/heaptoast.h"
#include "access/htup_details.h"
#include "optimizer/cost.h"
#include "optimizer/paths.h"
#include "storage/itemptr.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/varlena.h"
}

namespace hopper::pg {

namespace {

constexpr int kMaxClasses = 100000;

std::vector<std::string> split_column_list(const std::string& text, const char* what) {
    // An expression (MADlib users write ARRAY[a, b]) split at its commas named columns "array[a" and
    // "b]" that did not exist: say what is taken instead.
    bool quoted = false;
    for (char c : text) {
        if (c == '"') quoted = !quoted;
        if (!quoted && std::strchr("()[]+-*/:'|<>=", c))
            fail(ErrorKind::FeatureNotSupported, std::string(what) + " takes column names, not an expression",
                 "It is \"" + text + "\".",
                 "Name the columns (a, b; double-quote a name with other characters), or pack a view that has the "
                 "expression as a column.");
    }
    std::vector<std::string> out;
    bool ok = call([&] {
        char* raw = pstrdup(text.c_str());
        List* names = NIL;
        if (!SplitIdentifierString(raw, ',', &names)) return false;
        ListCell* lc;
        foreach (lc, names) out.emplace_back((char*)lfirst(lc));
        return true;
    });
    if (!ok || out.empty())
        fail(ErrorKind::InvalidName, std::string("invalid ") + what + " \"" + text + "\"",
             "Expected a column name, or a comma-separated list of column names.");
    return out;
}

bool is_numeric_scalar(Oid t) {
    return t == INT2OID || t == INT4OID || t == INT8OID || t == FLOAT4OID || t == FLOAT8OID || t == NUMERICOID;
}

// Class labels are read as their text (and an enum's classes sorted in the enum's order).
bool is_label_type(Oid t) {
    return t == TEXTOID || t == VARCHAROID || t == BPCHAROID || t == BOOLOID || t == INT2OID || t == INT4OID ||
           t == INT8OID || t == CHAROID || t == NAMEOID || call([&] { return type_is_enum(t); });
}

std::string type_name(Oid t) {
    return call([&] { return format_type_be(t); });
}

struct Source {
    TableName table;
    std::string dependent;  // column name
    Oid dependent_type = InvalidOid;
    std::vector<std::string> independent;  // column names
    bool independent_is_array = false;
    std::string x_expr;  // SQL expression for the features as an array
    std::string y_expr;  // SQL expression for the response
    // Packing through a feature recipe (tabular.h): x_expr applies it (its JSON is parameter $2 of
    // the fetch), and rows whose response is NULL are skipped (row_filter).
    std::string recipe_json;
    std::string row_filter;
};

// The table and its dependent column; the features are described by the caller.
Source describe_dependent(const std::string& table_text, const std::string& dep_text, const char* what) {
    Source s;
    s.table = resolve_source_table(table_text, what);
    auto dep = split_column_list(dep_text, "dependent_varname");
    if (dep.size() != 1)
        fail(ErrorKind::InvalidParameter, "dependent_varname must name exactly one column",
             "It names " + std::to_string(dep.size()) + ".");
    s.dependent = dep[0];
    s.dependent_type = require_column(s.table, s.dependent, "dependent");
    s.y_expr = quote_ident(s.dependent);
    return s;
}

// Features read through a recipe: the recipe's columns, NULL responses skipped.
void use_recipe(Source& s, const std::string& recipe_json) {
    const Recipe recipe = Recipe::from_json(recipe_json);
    s.recipe_json = recipe_json;
    s.independent = recipe.column_names();
    s.independent_is_array = true;  // one real[] per row, which the fetch detoasts
    s.x_expr = recipe_features_sql(s.table, recipe, "$2::pg_catalog.text", "");
    s.row_filter = " WHERE " + s.y_expr + " IS NOT NULL";
}

Source describe_source(Source s, const std::string& indep_text) {
    FeatureColumns f = describe_features(s.table, indep_text);
    s.independent = f.columns;
    s.independent_is_array = f.is_array;
    s.x_expr = f.expression;
    return s;
}

enum class Response { Classification, Regression };

Response choose_response(const std::string& requested, const Source& src) {
    const bool label = is_label_type(src.dependent_type);
    const bool numeric = is_numeric_scalar(src.dependent_type) || is_numeric_array_type(src.dependent_type);
    if (requested == "auto") {
        if (label) return Response::Classification;
        if (numeric) return Response::Regression;
    } else if (requested == "classification") {
        if (label || is_numeric_scalar(src.dependent_type)) return Response::Classification;
    } else if (requested == "regression") {
        if (numeric) return Response::Regression;
    } else {
        fail(ErrorKind::InvalidParameter, "unknown response_type \"" + requested + "\"", "",
             "Valid values are auto, classification and regression.");
    }
    fail(ErrorKind::WrongType,
         "dependent column \"" + src.dependent + "\" of type " + type_name(src.dependent_type) +
             " cannot be used for " + (requested == "auto" ? std::string("training") : requested),
         "Classification needs a text, enum, boolean or integer label; regression a numeric value or numeric array.");
}

// The packed layout every buffer follows, decided by the training table and reused for validation.
struct Layout {
    Response response = Response::Classification;
    std::vector<std::string> class_values;  // classification, in sorted order
    int x_dim = 0;
    int y_dim = 0;
    FeatureScaling scaling;
    ScaleKind scale_kind = ScaleKind::None;
    // The summary's scale when it is not scale_kind's name: how a recipe scaled the columns.
    std::string scale_text;
    // A one-column regression target standardized for training: its mean and standard deviation
    // over the training rows (the summary's target_mean and target_stddev; the buffers keep it raw).
    std::optional<TargetStats> target;
};

struct Counts {
    int64_t rows = 0;     // rows to pack
    int64_t skipped = 0;  // rows whose response is NULL (recipe packing)
    int x_dim = 0;
    int y_dim = 1;
    double largest_target = 0.0;                    // of a scalar regression target's magnitudes (NaN when one is NaN)
    double target_mean = 0.0, target_spread = 0.0;  // its mean and standard deviation
};

// The fewest and most elements of the non-NULL arrays of a column. Each value is read only as far
// as its header (dimensions): pg_catalog.cardinality decompressed every whole array, a fifth of
// preprocess's time on Fashion-MNIST, which packing then decompressed a second time.
struct WidthRange {
    int64_t min = 0, max = 0;
};

WidthRange array_width_range(Spi& spi, const TableName& table, const std::string& column_expr) {
    WidthRange range;
    bool any = false;
    // Streamed: a value is read where it lies, as far as its header, never copied whole (the
    // executor checks for interrupts as it scans).
    spi.stream("SELECT " + column_expr + " FROM " + table.quoted(), {}, [&](TupleTableSlot* slot) {
        if (slot->tts_isnull[0]) return;
        const Datum d = slot->tts_values[0];
        const int64_t n = call([&] {
            struct varlena* v = (struct varlena*)DatumGetPointer(d);
            // The header up to the widest dimensions: ndim, data offset, element type, then
            // ndim sizes and lower bounds.
            struct varlena* head = pg_detoast_datum_slice(v, 0, int32(ARR_OVERHEAD_NONULLS(MAXDIM)));
            const ArrayType* a = (const ArrayType*)head;
            const int64_t items = ARR_NDIM(a) == 0 ? 0 : ArrayGetNItems(ARR_NDIM(a), ARR_DIMS(a));
            if (head != v) pfree(head);
            return items;
        });
        range.min = any ? std::min(range.min, n) : n;
        range.max = any ? std::max(range.max, n) : n;
        any = true;
    });
    return range;
}

Counts count_and_check(Spi& spi, const Source& src, Response response, const char* what) {
    const std::string from = " FROM " + src.table.quoted();
    const bool recipe = !src.recipe_json.empty();
    std::string sql = "SELECT pg_catalog.count(*), pg_catalog.count(*) FILTER (WHERE " + src.y_expr + " IS NULL), ";
    // A recipe's features are never NULL and have its width (checked by the caller).
    sql += recipe ? std::string("0") : "pg_catalog.count(*) FILTER (WHERE " + src.x_expr + " IS NULL)";
    const bool scalar_target = response == Response::Regression && is_numeric_scalar(src.dependent_type);
    const std::string target = float8_sql(src.y_expr, src.dependent_type);
    // Mean and spread in numeric: float8's stddev overflows (22003) on values beyond 1e154, which
    // packing refuses naming the column.
    const std::string exact = "(" + target + ")::pg_catalog.numeric";
    // Rounded to 300 decimals first: a mean of 1e-325 is beyond float8 too (22003, a hostile review).
    sql += scalar_target ? ", pg_catalog.max(pg_catalog.abs(" + target + ")), pg_catalog.round(pg_catalog.avg(" +
                               exact + "), 300)::pg_catalog.float8, pg_catalog.round(pg_catalog.stddev_pop(" + exact +
                               "), 300)::pg_catalog.float8"
                         : std::string(", 0, 0, 0");
    spi.execute(sql + from);
    Counts c;
    c.rows = spi.integer(0, 0);
    if (c.rows == 0) fail(ErrorKind::Data, std::string(what) + " " + src.table.display() + " is empty");
    if (scalar_target && !spi.is_null(0, 3)) c.largest_target = spi.number(0, 3);
    if (scalar_target && !spi.is_null(0, 4)) c.target_mean = spi.number(0, 4);
    if (scalar_target && !spi.is_null(0, 5)) c.target_spread = spi.number(0, 5);
    if (recipe) {
        c.skipped = spi.integer(0, 1);
        c.rows -= c.skipped;
        if (c.rows == 0)
            fail(ErrorKind::NullValue, "dependent column \"" + src.dependent + "\" is NULL in every row",
                 "Rows whose dependent value is NULL are skipped; none is left.");
    } else if (spi.integer(0, 1) > 0)
        fail(ErrorKind::NullValue, "dependent column \"" + src.dependent + "\" contains NULL values",
             std::to_string(spi.integer(0, 1)) + " of " + std::to_string(c.rows) + " rows are NULL.",
             "Filter them out, e.g. with a view, before packing.");
    if (spi.integer(0, 2) > 0)
        fail(ErrorKind::NullValue, "independent variable contains NULL values",
             std::to_string(spi.integer(0, 2)) + " of " + std::to_string(c.rows) + " rows are NULL.",
             "Filter them out, e.g. with a view, before packing.");
    // The widths of arrays, once the NULLs are checked; a recipe's width is checked by the caller.
    WidthRange x{recipe ? 1 : int64_t(src.independent.size()), recipe ? 1 : int64_t(src.independent.size())};
    if (!recipe && src.independent_is_array) x = array_width_range(spi, src.table, src.x_expr);
    const int64_t xmin = x.min, xmax = x.max;
    if (xmin != xmax)
        fail(ErrorKind::Data, "feature arrays have different lengths",
             "Lengths range from " + std::to_string(xmin) + " to " + std::to_string(xmax) + ".",
             "Every row needs the same number of features.");
    if (xmin <= 0) fail(ErrorKind::Data, "feature arrays are empty");
    c.x_dim = int(xmin);
    WidthRange y{1, 1};
    if (is_numeric_array_type(src.dependent_type)) y = array_width_range(spi, src.table, src.y_expr);
    const int64_t ymin = y.min, ymax = y.max;
    if (ymin != ymax)
        fail(ErrorKind::Data, "dependent arrays have different lengths",
             "Lengths range from " + std::to_string(ymin) + " to " + std::to_string(ymax) + ".");
    if (ymin <= 0) fail(ErrorKind::Data, "dependent arrays are empty");
    c.y_dim = int(ymin);
    return c;
}

// A regression target went into the loss as it is: a network's output starts near 0, and on
// targets in the thousands it trains poorly -- R's carData::Salaries (salaries up to 232,000): a
// validation RMSE of 114,030, where predicting the mean gives 32,262 and the same fit on salary /
// 1000 24,852 (x 1000). A NOTICE told users to pack a standardizing view and undo it by hand on
// every prediction; with the defaults CPS1985's wage still ended at an MSE of 38.8 where the mean
// has 31.0, Salaries at 17x the mean's, economics' psavert at 3x (a user sweep). So, as sklearn's
// TransformedTargetRegressor does, a one-column target packed with scale 'auto' (or
// 'standardize') is standardized for training: its mean and standard deviation go into the
// summary, the model carries them (Architecture::target_scaling) and gives everything back in the
// target's own units. A constant target (a deviation of 0, or below float32's smallest normal
// number) is centred only (scale 1): trained raw, a constant 1e9 diverged in its first iteration (a
// sweep), and a subnormal scale became 0 under training's flush of subnormals.
std::optional<TargetStats> target_stats(const Counts& c) {
    const double mean = c.target_mean, spread = c.target_spread;
    if (!std::isfinite(mean) || !std::isfinite(spread)) return std::nullopt;
    // The model applies them in float32.
    const float m = float(mean), s = float(spread);
    if (!std::isfinite(m) || !std::isfinite(s)) return std::nullopt;
    if (!(s >= std::numeric_limits<float>::min()))
        return m == 0.0f ? std::nullopt : std::optional(TargetStats{mean, 1.0});
    return TargetStats{mean, spread};
}

// Packed buffers hold the target as float32, whose steps at a value of 1.2e9 are 128: a target that
// varies by 9 around 1,234,567,909 packed as one value, and trained to a loss of 0 while its
// predictions had 10x the mean's MSE (a sweep). Said when the steps at the target's largest
// magnitude are above a tenth of its deviation.
void warn_target_resolution(const Source& src, const Counts& c) {
    const double largest = c.largest_target, spread = c.target_spread;
    if (!std::isfinite(largest) || !std::isfinite(spread) || !(spread > 0) ||
        largest > double(std::numeric_limits<float>::max()))
        return;
    const float at = float(largest);
    const double step = double(std::nextafter(at, std::numeric_limits<float>::infinity())) - double(at);
    if (!(step > spread / 10)) return;
    char digits[64];  // every digit of the rounded mean: the view must subtract it exactly
    std::snprintf(digits, sizeof digits, "%.17g", std::round(c.target_mean));
    const std::string near_mean = digits;
    warning("dependent column \"" + src.dependent + "\" varies by less than float32 keeps at its magnitude",
            "Its values reach " + describe_double(largest) +
                ", where float32 (what packed buffers hold) keeps steps of " + describe_double(step) +
                "; their standard deviation is " + describe_double(spread) +
                ", so packing loses most of the variation.",
            "Pack its difference from a value near its mean, e.g. a view with " + quote_ident(src.dependent) + " - " +
                near_mean + " AS " + quote_ident(src.dependent) + ", and add that back to the predictions.");
}

void notice_standardized_target(const Source& src, const TargetStats& t) {
    notice("dependent column \"" + src.dependent + "\" is standardized for training: mean " + describe_double(t.mean) +
               ", standard deviation " + describe_double(t.stddev),
           "The model learns (" + quote_ident(src.dependent) +
               " - mean) / standard deviation; its predictions, losses and metrics are in the column's own units.");
}

// Packed raw (scale 'none' or 'minmax', as the MADlib facade packs, or a constant target).
void notice_unscaled_target(const Source& src, const Counts& c) {
    // A network's output starts near 0 with a spread near 1: a target far from 0 or widely spread
    // is fit poorly. With the defaults, meats' protein (mean 17.7, fired no NOTICE below values of
    // 100) ended at 13x the MSE of predicting the mean, HousePrices' price at 9x; divided by a power
    // of ten, as this NOTICE advised, price ended at 80x (the offset remained): a user sweep. So the
    // way out is standardizing, with the numbers to undo it.
    const double mean = c.target_mean, spread = c.target_spread;
    if (!std::isfinite(mean) || !std::isfinite(spread) || (std::fabs(mean) <= 3.0 && spread <= 3.0)) return;
    const std::string y = quote_ident(src.dependent);
    const std::string m = describe_double(mean), s = describe_double(spread > 0 ? spread : 1.0);
    notice("dependent column \"" + src.dependent + "\" is packed for regression as it is: mean " + m +
               ", standard deviation " + describe_double(spread),
           "Networks start near 0 and fit a target far from 0 or widely spread poorly, often worse than its "
           "mean: pack a view with (" +
               y + " - " + m + ") / " + s + " AS " + y + ", and turn predictions back with * " + s + " + " + m + ".");
}

// Features given as numbers (an array column, or numeric columns without NULLs: no recipe) are
// packed as they are, divided by normalizing_const: Fashion-MNIST's pixels packed without
// normalizing_const => 255 reached 0.783 test accuracy after 5 epochs of the MLP with Adam (lr
// 0.001) instead of 0.862, without a word. The recipe's columns have their own notice (tabular.cpp). Seen while
// packing.
void notice_unscaled_features(const PackOptions& opt, float largest) {
    if (!(largest > 100.0f)) return;
    notice("features of " + opt.independent_varname + " go into the model unscaled, with values up to " +
               describe_double(largest),
           "Networks train poorly on large raw values: pass normalizing_const (255 for 8-bit pixels), or "
           "standardize the features (hopper.preprocess: scale => 'standardize'; elsewhere, in a view).");
}

// An integer target is packed for classification unless response_type says otherwise (as MADlib
// does); one with distinct values in a large share of its rows is most likely a quantity -- a
// price, a count, an id -- and its classes cost a one-hot output each: diamonds' price became
// 10,758 classes in 1.8 GB of packed table, without a word. So is one whose many classes include
// many rare ones, as a count's tails do: churn's calls per day (121 values in 4,022 rows, 17 of them
// in fewer than 3 rows) went silently to 121 classes, and preprocess_validation then failed on a
// count the training rows lacked. Labels of many classes are seldom that thin (CIFAR-100's have 500
// rows each).
constexpr int64_t kRareClassRows = 3;
// More classes than this, from a value other than 0 or 1 (or spread), are a quantity's values.
constexpr std::size_t kOffsetClasses = 20;

void warn_integer_classes(const Source& src, const std::string& requested, const std::vector<std::string>& values,
                          int64_t rows, int64_t rare_classes) {
    const bool integer =
        src.dependent_type == INT2OID || src.dependent_type == INT4OID || src.dependent_type == INT8OID;
    const std::size_t classes = values.size();
    if (requested != "auto" || !integer || classes <= kOffsetClasses) return;
    // Codes of many classes run 0..K-1 or so (CIFAR-100's 0..99); a quantity's values are spread
    // over a wider range: STAR's first-grade math scores, 67 values between 404 and 676 in 6,600
    // rows, went to 67 classes without a word (a user sweep; training accuracy 0.033).
    int64_t lowest = INT64_MAX, highest = INT64_MIN;
    for (const std::string& v : values) {
        const int64_t n = std::strtoll(v.c_str(), nullptr, 10);
        lowest = std::min(lowest, n);
        highest = std::max(highest, n);
    }
    const bool spread = double(highest) - double(lowest) + 1 >= 2.0 * double(classes);
    // Codes of classes start at 0 or 1; a quantity's values start where the quantity does: a table's
    // ages, 53 values, went to 53 classes without a word (a user trying hopper). So from more than
    // kOffsetClasses classes, a range that starts elsewhere (or spreads) warns too.
    const bool offset = lowest < 0 || lowest > 1;
    const bool dense = int64_t(classes) * 20 >= rows, thin = rare_classes * 10 >= int64_t(classes);
    if (classes < 50 ? !offset && !spread : !dense && !thin && !spread && !offset) return;
    warning("dependent column \"" + src.dependent + "\" is packed for classification with " + std::to_string(classes) +
                " classes",
            "It is an integer column with " + std::to_string(classes) + " distinct values in " + std::to_string(rows) +
                " rows" +
                (spread || offset ? " (from " + std::to_string(lowest) + " to " + std::to_string(highest) + ")" : "") +
                (classes < 50 || dense || spread || offset
                     ? std::string()
                     : ", " + std::to_string(rare_classes) + " of them in fewer than " +
                           std::to_string(kRareClassRows) + " rows") +
                "; integer targets are class labels unless told otherwise.",
            "To predict it as a number, pass response_type => 'regression'; for labels, response_type => "
            "'classification' says so and silences this warning.");
}

// The class values in order; rare_classes counts those of fewer than kRareClassRows rows.
std::vector<std::string> read_class_values(Spi& spi, const Source& src, int num_classes, int64_t& rare_classes) {
    spi.execute("SELECT " + src.y_expr + ", pg_catalog.count(*) FROM " + src.table.quoted() + src.row_filter +
                " GROUP BY 1 ORDER BY 1");
    if (spi.rows() > uint64_t(kMaxClasses))
        fail(ErrorKind::Limit, "too many distinct class values",
             "The dependent column has " + std::to_string(spi.rows()) + " distinct values; hopper allows " +
                 std::to_string(kMaxClasses) + ".",
             "Is it a regression target? Pass response_type => 'regression'.");
    std::vector<std::string> values;
    rare_classes = 0;
    for (uint64_t r = 0; r < spi.rows(); ++r) {
        values.push_back(spi.text(r, 0));
        if (spi.integer(r, 1) < kRareClassRows) ++rare_classes;
    }
    if (num_classes > 0) {
        if (std::size_t(num_classes) < values.size())
            fail(ErrorKind::InvalidParameter,
                 "num_classes " + std::to_string(num_classes) + " is less than the " + std::to_string(values.size()) +
                     " classes of the data",
                 "", "num_classes must be at least the number of distinct class values.");
        // Padded classes come after the data's, so a class still to come never shifts those.
        const std::size_t data_classes = values.size();
        for (std::size_t k = 1; values.size() < std::size_t(num_classes); ++k) {
            const std::string name = "<padding " + std::to_string(k) + ">";
            if (std::find(values.begin(), values.begin() + long(data_classes), name) !=
                values.begin() + long(data_classes))
                fail(ErrorKind::Data, "the dependent column has a class value \"" + name + "\"",
                     "num_classes names the classes it adds \"<padding 1>\", \"<padding 2>\", ...",
                     "Leave out num_classes, or rename that class.");
            values.push_back(name);
        }
    }
    if (values.size() < 2)
        fail(ErrorKind::Data, "classification needs at least two classes",
             "The dependent column has only the value " + (values.empty() ? std::string("(none)") : values[0]) + ".",
             "Pass num_classes for classes still to come.");
    return values;
}

// Row identifiers in physical order.
std::vector<ItemPointerData> read_tids(Spi& spi, const TableName& rows, const std::string& row_filter,
                                       int64_t expected) {
    std::vector<ItemPointerData> tids;
    tids.reserve(std::size_t(expected));  // growing by doubling would hold up to three times as much
    spi.stream("SELECT ctid FROM " + rows.quoted() + row_filter, {},
               [&](TupleTableSlot* slot) { tids.push_back(*((ItemPointer)DatumGetPointer(slot->tts_values[0]))); });
    return tids;
}

FeatureStats read_feature_stats(Spi& spi, const Source& src, int x_dim) {
    FeatureStats stats(x_dim);
    std::vector<float> row;
    int64_t seen = 0;
    spi.stream("SELECT " + src.x_expr + " FROM " + src.table.quoted(), {}, [&](TupleTableSlot* slot) {
        row.clear();
        append_floats(slot->tts_values[0], row, "features", ++seen);
        int bad = first_non_finite(row.data(), x_dim);
        if (bad >= 0)
            fail(ErrorKind::Data, "features contain NaN or infinite values",
                 "Feature " + std::to_string(bad + 1) + " of a row is " + describe_float(row[bad]) + ".",
                 "Clean or impute the data before packing.");
        stats.add(row.data());
    });
    return stats;
}

// How many parallel workers read the source's rows while the backend writes buffers: as many as
// PostgreSQL would give a parallel scan of the source -- none below min_parallel_table_scan_size
// (counting its TOAST: out-of-line arrays are most of what is read), at most
// max_parallel_workers_per_gather -- but one core fewer than the machine has (the backend, which
// alone writes, is the one to keep busy: on 2 cores 4 workers packed Fashion-MNIST in 1.47 s where 1
// took 1.09 s), and no more than the memory budget holds (each reads a buffer of its own, the slots
// in shared memory hold several). None when the writer issues statements (a backend in parallel mode
// may not), or where workers may not read the source (a temporary table; row-level security, whose
// policies may call what a worker must not).
int packing_workers(Spi& spi, const TableName& source, const PackedWriter& writer, PackingShape shape,
                    std::size_t buffers) {
    if (!writer.writes_without_statements() || max_parallel_workers_per_gather <= 0 || buffers < 2) return 0;
    spi.execute(
        "SELECT c.relpersistence OPERATOR(pg_catalog.=) 'p' AND NOT c.relrowsecurity,"
        " pg_catalog.pg_total_relation_size(c.oid) FROM pg_catalog.pg_class c"
        " WHERE c.oid OPERATOR(pg_catalog.=) $1::pg_catalog.regclass",
        {SqlParam::text_copy(source.quoted())});
    if (spi.rows() != 1 || !spi.boolean(0, 0)) return 0;
    if (spi.integer(0, 1) < int64_t(min_parallel_table_scan_size) * BLCKSZ) return 0;
    const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
    const int most = std::min(max_parallel_workers_per_gather, cores - 1);
    for (int workers = int(std::min<std::size_t>(std::size_t(std::max(most, 0)), buffers - 1)); workers > 0;
         --workers) {
        shape.workers = workers;
        shape.slots = int(std::min<std::size_t>(pack_slots(workers), buffers));
        if (packing_bytes(shape) <= memory_budget_bytes()) return workers;
    }
    return 0;
}

struct PackResult {
    BufferPlan plan;
    int64_t rows = 0;
    float largest_feature = 0.0f;  // the largest magnitude packed (scaled)
};

// local: the packed table is a temporary table of this session (evaluate's scratch), one server's
// table on any engine; its rows are still read as the engine reads a source.
PackResult pack_rows(Spi& spi, const Source& src, const Layout& layout, const TableName& out, int64_t rows,
                     int buffer_size, int num_segments, uint64_t seed, const std::string& placement, BufferFill fill,
                     bool local = false) {
    PackResult result;
    result.plan = plan_buffers(rows, buffer_size, num_segments, fill);
    // A buffer is one array value: PostgreSQL stores at most 1 GB in one. Refuse before reading rows.
    const int widest = std::max(layout.x_dim, layout.y_dim);
    const std::size_t max_rows = std::size_t(*std::max_element(result.plan.rows.begin(), result.plan.rows.end()));
    const std::size_t limit_floats = (MaxAllocSize - 1024) / sizeof(float);
    if (max_rows * std::size_t(widest) > limit_floats)
        fail(ErrorKind::Limit, "packed buffers would be too large to store",
             "A buffer of " + std::to_string(max_rows) + " rows holds " +
                 std::to_string(max_rows * std::size_t(widest)) + " values of " +
                 (layout.x_dim >= layout.y_dim ? "features" : "one-hot classes") +
                 "; PostgreSQL stores at most 1 GB (" + std::to_string(limit_floats) + " floats) in one value.",
             "Use buffer_size => " + std::to_string(std::max<std::size_t>(1, limit_floats / std::size_t(widest))) +
                 " or less.");
    // What packing holds in memory at its peak (resources.h), and what the whole table will take on
    // disk: refused before anything is read or written.
    PackingShape shape;
    shape.rows = uint64_t(rows);
    shape.buffer_rows = int(max_rows);
    shape.x_dim = layout.x_dim;
    shape.y_dim = layout.y_dim;
    shape.row_id_bytes = sizeof(ItemPointerData) + sizeof(uint64_t);  // tids and their shuffled order
    shape.kept_row_id_bytes = sizeof(uint64_t);                       // then each tid's key, in packed order
    check_memory(packing_bytes(shape),
                 "packing " + std::to_string(rows) + " rows of " + std::to_string(layout.x_dim) + " features and " +
                     std::to_string(layout.y_dim) + " dependent values in buffers of " + std::to_string(max_rows) +
                     " rows",
                 "Use a smaller buffer_size.");
    check_packed_table_size(packed_table_bytes(uint64_t(rows), layout.x_dim, layout.y_dim, buffer_size),
                            "packing " + std::to_string(rows) + " rows of " + std::to_string(layout.x_dim) +
                                " features and " + std::to_string(layout.y_dim) +
                                (layout.response == Response::Classification ? " one-hot classes"
                                                                             : " dependent values"),
                            layout.response == Response::Classification && layout.y_dim > 1000
                                ? "Every row stores one float per class: " + std::to_string(layout.y_dim) +
                                      " classes is a lot; is the dependent column an identifier or a regression target?"
                                : "Pack fewer rows or features.");
    const std::unique_ptr<Engine> engine = detect_engine(spi);
    // Where rows are read by row identifier: the source, or a copy the engine makes (engine.h).
    std::vector<std::string> columns = src.independent;
    if (std::find(columns.begin(), columns.end(), src.dependent) == columns.end()) columns.push_back(src.dependent);
    const TableName source_rows = engine->packing_source(spi, src.table, columns);
    std::vector<uint64_t> keys;
    {
        std::vector<ItemPointerData> tids = read_tids(spi, source_rows, src.row_filter, rows);
        if (int64_t(tids.size()) != rows) fail(ErrorKind::Data, "the source table changed while it was being packed");
        // The rows in packed order, each as its identifier's key, in place of its position.
        keys = shuffled_order(tids.size(), seed);
        for (uint64_t& k : keys) k = row_key(tids[k]);
    }

    ReadPlan read;
    read.fetch_sql = "SELECT ctid, " + src.x_expr + ", " + src.y_expr + " FROM " + source_rows.quoted() +
                     " WHERE ctid OPERATOR(pg_catalog.=) ANY ($1)";
    read.recipe_json = src.recipe_json;
    read.dependent = src.dependent;
    read.classification = layout.response == Response::Classification;
    read.class_values = layout.class_values;
    read.x_dim = layout.x_dim;
    read.y_dim = layout.y_dim;
    read.scaling = layout.scaling;
    PackJob job;
    job.read = &read;
    job.plan = &result.plan;
    job.max_rows = int(max_rows);
    const std::unique_ptr<Engine> out_engine = local ? postgres_engine() : detect_engine(spi);
    job.dist_keys = out_engine->create_packed_table(spi, out, num_segments, placement);
    const std::unique_ptr<PackedWriter> writer = out_engine->packed_writer(spi, out, job.dist_keys);
    // The buffers go into the server's cache as they are written when all of them fit (more would
    // push out the first with the last); keep_packed_buffers below then finds them there.
    const uint64_t buffer_bytes = uint64_t(rows) * uint64_t(layout.x_dim + layout.y_dim) * sizeof(float) +
                                  uint64_t(result.plan.rows.size()) * 2 * 64;  // headers
    if (!local && engine->reads_buffers_locally() && shared_buffer_cache_enabled() &&
        buffer_bytes <= shared_buffer_cache_size())
        writer->keep_written_buffers();
    const int workers = packing_workers(spi, source_rows, *writer, shape, result.plan.rows.size());
    result.largest_feature = pack_buffers(spi, job, keys, *writer, workers);
    writer->finish();
    result.rows = rows;
    if (source_rows.quoted() != src.table.quoted()) spi.execute("DROP TABLE " + source_rows.quoted());
    // The buffers just written are what the next training call reads: the server's cache keeps them
    // (buffer_cache.h), so that call's first iteration does not fetch them from TOAST.
    if (!local && engine->reads_buffers_locally()) keep_packed_buffers(spi, out);
    return result;
}

void write_summary(Spi& spi, const TableName& summary, const std::string& out_display, const PackOptions& opt,
                   const Source& src, const Layout& layout, const PackResult& packed, int buffer_size, int num_segments,
                   const std::string& validation_of, int64_t skipped) {
    spi.execute(
        "CREATE TABLE " + summary.quoted() +
        " (source_table pg_catalog.text, output_table pg_catalog.text, dependent_varname pg_catalog.text,"
        " independent_varname pg_catalog.text, dependent_vartype pg_catalog.text, response_type pg_catalog.text,"
        " class_values pg_catalog.text[], num_classes pg_catalog.int4, buffer_size pg_catalog.int4,"
        " num_segments pg_catalog.int4, normalizing_const pg_catalog.float8, scale pg_catalog.text,"
        " feature_center pg_catalog.float4[], feature_spread pg_catalog.float4[], num_rows pg_catalog.int8,"
        " num_buffers pg_catalog.int4, rows_per_segment pg_catalog.int8[], buffers_per_segment pg_catalog.int4[],"
        " independent_dim pg_catalog.int4, dependent_dim pg_catalog.int4, seed pg_catalog.int8,"
        " training_preprocessed_table pg_catalog.text, hopper_version pg_catalog.text,"
        " created_at pg_catalog.timestamptz, feature_recipe pg_catalog.jsonb, skipped_rows pg_catalog.int8,"
        " target_mean pg_catalog.float8, target_stddev pg_catalog.float8)");
    std::vector<double> center(layout.scaling.center.begin(), layout.scaling.center.end());
    std::vector<double> spread(layout.scaling.spread.begin(), layout.scaling.spread.end());
    std::vector<int64_t> rows_per_segment = packed.plan.rows_per_segment;
    std::vector<int32_t> buffers_per_segment(packed.plan.buffers_per_segment.begin(),
                                             packed.plan.buffers_per_segment.end());
    const bool classification = layout.response == Response::Classification;
    spi.execute("INSERT INTO " + summary.quoted() +
                    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::pg_catalog.float4[],"
                    " $14::pg_catalog.float4[], $15, $16, $17, $18, $19, $20, $21, $22, $23, pg_catalog.now(),"
                    " $24::pg_catalog.jsonb, $25, $26, $27)",
                {SqlParam::text(src.table.display()),
                 SqlParam::text_copy(out_display),
                 SqlParam::text(src.dependent),
                 SqlParam::text_copy(opt.independent_varname),
                 SqlParam::text_copy(type_name(src.dependent_type)),
                 SqlParam::text(classification ? "classification" : "regression"),
                 classification ? SqlParam::text_array(layout.class_values) : SqlParam::null(TEXTARRAYOID),
                 classification ? SqlParam::int4(int(layout.class_values.size())) : SqlParam::null(INT4OID),
                 SqlParam::int4(buffer_size),
                 SqlParam::int4(num_segments),
                 SqlParam::float8(layout.scaling.normalizing_const),
                 SqlParam::text_copy(layout.scale_text.empty() ? to_string(layout.scale_kind) : layout.scale_text),
                 center.empty() ? SqlParam::null(FLOAT8ARRAYOID) : SqlParam::float8_array(center),
                 spread.empty() ? SqlParam::null(FLOAT8ARRAYOID) : SqlParam::float8_array(spread),
                 SqlParam::int8(packed.rows),
                 SqlParam::int4(int(packed.plan.rows.size())),
                 SqlParam::int8_array(rows_per_segment),
                 SqlParam::int4_array(buffers_per_segment),
                 SqlParam::int4(layout.x_dim),
                 SqlParam::int4(layout.y_dim),
                 SqlParam::int8(int64_t(opt.seed)),
                 validation_of.empty() ? SqlParam::null(TEXTOID) : SqlParam::text(validation_of),
                 SqlParam::text(HOPPER_VERSION),
                 src.recipe_json.empty() ? SqlParam::null(TEXTOID) : SqlParam::text(src.recipe_json),
                 SqlParam::int8(skipped),
                 layout.target ? SqlParam::float8(layout.target->mean) : SqlParam::null(FLOAT8OID),
                 layout.target ? SqlParam::float8(layout.target->stddev) : SqlParam::null(FLOAT8OID)});
}

}  // namespace

std::vector<std::string> parse_column_list(const std::string& text, const char* what) {
    return split_column_list(text, what);
}

FeatureColumns describe_features(const TableName& table, const std::string& independent_varname) {
    FeatureColumns f;
    f.columns = split_column_list(independent_varname, "independent_varname");
    std::vector<Oid> types;
    for (const auto& c : f.columns) types.push_back(require_column(table, c, "independent"));
    if (f.columns.size() == 1 && is_numeric_array_type(types[0])) {
        f.is_array = true;
        f.expression = quote_ident(f.columns[0]);
        return f;
    }
    for (std::size_t i = 0; i < types.size(); ++i)
        if (!is_numeric_scalar(types[i]))
            fail(ErrorKind::WrongType, "independent column \"" + f.columns[i] + "\" has type " + type_name(types[i]),
                 "Features must be one numeric array column or a list of numeric columns.",
                 types[i] == TEXTOID ? "Cast text features to a numeric type first." : "");
    f.expression = "ARRAY[";
    for (std::size_t i = 0; i < f.columns.size(); ++i)
        f.expression += (i ? ", " : "") + float8_sql(quote_ident(f.columns[i]), types[i]);
    f.expression += "]";
    return f;
}

std::string summary_text_column(const TableName& summary, const char* column) {
    const std::string hopper_column = std::string("hopper_") + column;
    if (column_type(summary, hopper_column) == TEXTOID) return quote_ident(hopper_column);
    const std::string c = quote_ident(column);
    return column_type(summary, column) == TEXTARRAYOID ? "pg_catalog.array_to_string(" + c + ", ', ')" : c;
}

std::string packing_difference(const PackedInfo& training, const PackedInfo& other) {
    if (other.response_type != training.response_type)
        return "Its response type is " + other.response_type + ", the training's " + training.response_type + ".";
    if (other.class_values != training.class_values) {
        const auto list = [](const std::vector<std::string>& v) {
            std::string s;
            for (std::size_t k = 0; k < v.size() && k < 10; ++k) s += (k ? ", " : "") + v[k];
            return (v.size() > 10 ? s + ", ..." : s);
        };
        return "Its class values are " + list(other.class_values) + "; the training's are " +
               list(training.class_values) + ".";
    }
    if (other.feature_recipe != training.feature_recipe)
        return training.feature_recipe.empty() || other.feature_recipe.empty()
                   ? "One was packed from a table's own columns (a feature recipe), the other from numbers."
                   : "Its feature recipe (categories, imputed values, scaling of each column) is another one.";
    if (other.normalizing_const != training.normalizing_const)
        return "Its normalizing_const is " + describe_double(other.normalizing_const) + ", the training's " +
               describe_double(training.normalizing_const) + ".";
    if (other.feature_center != training.feature_center || other.feature_spread != training.feature_spread)
        return "Its features were scaled with other statistics (scale " + other.scale + "; the training's " +
               training.scale + ").";
    return "";
}

PackedInfo read_packed_info(Spi& spi, const TableName& packed) {
    TableName summary = packed.with_suffix("_summary");
    if (!table_exists(summary))
        fail(ErrorKind::UndefinedTable, "summary table " + summary.display() + " does not exist",
             "hopper needs the summary that hopper.preprocess writes beside " + packed.display() + ".",
             "Pack the data with hopper.preprocess first.");
    require_builtin_columns(packed, "packed table");
    require_builtin_columns(summary, "summary table");
    spi.execute_reading("summary table " + summary.display(),
                        "SELECT response_type, class_values, num_segments, normalizing_const, scale,"
                        " feature_center::pg_catalog.float8[], feature_spread::pg_catalog.float8[], num_rows,"
                        " num_buffers, independent_dim, dependent_dim, buffer_size, " +
                            summary_text_column(summary, "dependent_varname") + ", " +
                            summary_text_column(summary, "independent_varname") + ", " +
                            summary_text_column(summary, "dependent_vartype") + " FROM " + summary.quoted());
    if (spi.rows() != 1) fail(ErrorKind::Data, "summary table " + summary.display() + " must have exactly one row");
    PackedInfo info;
    info.table = packed;
    info.response_type = spi.text(0, 0);
    info.class_values = spi.text_array(0, 1);
    info.num_segments = int(spi.integer(0, 2));
    info.normalizing_const = spi.number(0, 3);
    info.scale = spi.text(0, 4);
    for (double v : spi.float8_array(0, 5)) info.feature_center.push_back(float(v));
    for (double v : spi.float8_array(0, 6)) info.feature_spread.push_back(float(v));
    info.num_rows = spi.integer(0, 7);
    info.num_buffers = int(spi.integer(0, 8));
    info.independent_dim = int(spi.integer(0, 9));
    info.dependent_dim = int(spi.integer(0, 10));
    info.buffer_size = int(spi.integer(0, 11));
    info.dependent_varname = spi.text(0, 12);
    info.independent_varname = spi.text(0, 13);
    info.dependent_vartype = spi.text(0, 14);
    if (info.response_type == "classification")
        check_class_values(info.class_values, spi.is_null(0, 1), info.dependent_dim,
                           "summary table " + summary.display());
    // Tables packed before recipes existed have no feature_recipe column: their features are numbers.
    if (OidIsValid(column_type(summary, "feature_recipe"))) {
        spi.execute_reading("summary table " + summary.display(),
                            "SELECT feature_recipe::pg_catalog.text, coalesce(skipped_rows, 0) FROM " +
                                summary.quoted());
        if (!spi.is_null(0, 0)) info.feature_recipe = spi.text(0, 0);
        info.skipped_rows = spi.integer(0, 1);
    }
    // A regression target standardized for training; tables packed before it (no such columns)
    // train on the raw target, as they did.
    if (info.response_type == "regression" && column_type(summary, "target_mean") == FLOAT8OID &&
        column_type(summary, "target_stddev") == FLOAT8OID) {
        spi.execute_reading("summary table " + summary.display(),
                            "SELECT target_mean, target_stddev FROM " + summary.quoted());
        if (spi.is_null(0, 0) != spi.is_null(0, 1))
            fail(ErrorKind::NullValue,
                 "summary table " + summary.display() + " has a NULL " +
                     (spi.is_null(0, 0) ? "target_mean" : "target_stddev"),
                 "Both are given for a target standardized for training, or neither.",
                 "Restore the summary as hopper wrote it, or pack the data again.");
        if (!spi.is_null(0, 0)) {
            const TargetStats t{spi.number(0, 0), spi.number(0, 1)};
            if (!std::isfinite(float(t.mean)) || !std::isfinite(float(t.stddev)) ||
                !(float(t.stddev) >= std::numeric_limits<float>::min()) || info.dependent_dim != 1)
                fail(ErrorKind::InvalidParameter,
                     "summary table " + summary.display() + " has an invalid target standardization",
                     "target_mean " + describe_double(t.mean) + " and target_stddev " + describe_double(t.stddev) +
                         " must be finite in float32, the deviation a normal positive float32 (1.2e-38 or more), for"
                         " a target of one value per row.",
                     "Restore the summary as hopper wrote it, or pack the data again.");
            info.target = t;
        }
    }
    // The segments that actually hold data (a user may have deleted rows since packing), in segment
    // order: ascending dist_key on every engine (engine.h).
    spi.execute_reading("packed table " + packed.display(),
                        "SELECT DISTINCT dist_key FROM " + packed.quoted() + " ORDER BY 1");
    for (uint64_t r = 0; r < spi.rows(); ++r) info.dist_keys.push_back(int32_t(spi.integer(r, 0)));
    if (info.dist_keys.empty()) fail(ErrorKind::Data, "packed table " + packed.display() + " is empty");
    return info;
}

void check_class_values(const std::vector<std::string>& class_values, bool is_null, int outputs,
                        const std::string& source) {
    const std::string detail = "A classifier has one output per class (" + std::to_string(outputs) +
                               " here), and class_values names them in order.";
    const std::string hint = "Restore class_values as hopper wrote it, or pack the data and train the model again.";
    if (is_null) fail(ErrorKind::NullValue, source + " has a NULL class_values", detail, hint);
    if (class_values.size() != std::size_t(outputs))
        fail(ErrorKind::InvalidParameter,
             source + " has " + std::to_string(class_values.size()) + " class_values for " + std::to_string(outputs) +
                 " outputs",
             detail, hint);
}

namespace {
void record_packed(Spi& spi, const TableName& out, const TableName& summary, const char* what) {
    const std::string token = new_output_token(spi);
    record_output_table(spi, out, "packed", token, std::string("hopper packed ") + what + " data");
    record_output_table(spi, summary, "packed_summary", token,
                        std::string("hopper summary of packed ") + what + " data");
}
}  // namespace

void check_recipe_columns(const Recipe& recipe, const std::string& independent_varname) {
    if (independent_varname == "*") return;
    std::vector<std::string> given = split_column_list(independent_varname, "independent_varname");
    std::vector<std::string> expected = recipe.column_names();
    std::sort(given.begin(), given.end());
    std::sort(expected.begin(), expected.end());
    if (given != expected)
        fail(
            ErrorKind::InvalidParameter, "independent_varname does not name the columns the feature recipe reads",
            "The recipe reads " + std::to_string(expected.size()) + " columns: " +
                [&] {
                    std::string list;
                    for (const std::string& c : recipe.column_names()) list += (list.empty() ? "" : ", ") + c;
                    return list;
                }() +
                ".",
            "Pass '*' to read them.");
}

// The dependent column named among the features: a recipe dropped it without a word while the
// summary kept listing it, and numbers would have packed the answer into every row (a user sweep).
void refuse_dependent_as_feature(const std::string& independent_varname, const std::string& dependent) {
    if (independent_varname == "*") return;
    std::vector<std::string> columns;
    try {
        columns = split_column_list(independent_varname, "independent_varname");
    } catch (const Error&) {
        return;  // described, and refused, with the features
    }
    if (std::find(columns.begin(), columns.end(), dependent) != columns.end())
        fail(ErrorKind::InvalidParameter, "independent_varname names the dependent column \"" + dependent + "\"", "",
             "Leave it out of the features: a model that reads its answer learns nothing.");
}

// The summary's scale of a pack by a recipe: the scale its numeric, date and array columns were
// given (scale => 'auto' standardizes them), "none" without such columns, "per column (...)" when
// they differ. It read "none" for every recipe, which scaled nothing in packing but standardized
// every number column (a user trying hopper).
static std::string recipe_scale(const std::string& recipe_json) {
    const nlohmann::json r = nlohmann::json::parse(recipe_json, nullptr, false);
    std::vector<std::string> scales;
    if (r.is_object() && r.contains("columns") && r["columns"].is_array())
        for (const nlohmann::json& c : r["columns"]) {
            if (!c.is_object() || !c.contains("scale") || !c["scale"].is_string()) continue;
            if (c.contains("kind") && c["kind"] == "boolean") continue;
            const std::string scale = c["scale"].get<std::string>();
            if (std::find(scales.begin(), scales.end(), scale) == scales.end()) scales.push_back(scale);
        }
    if (scales.empty()) return "none";
    if (scales.size() == 1) return scales[0];
    std::string all;
    for (const std::string& v : scales) all += (all.empty() ? "" : ", ") + v;
    return "per column (" + all + ")";
}

PackedInfo pack_table(Spi& spi, const PackOptions& opt) {
    const bool validation = !opt.training_packed_table.empty() || opt.training_layout;
    refuse_on_worker_node(spi, validation ? "hopper.preprocess_validation" : "hopper.preprocess");
    Source src = describe_dependent(opt.source_table, opt.dependent_varname,
                                    validation ? "validation source table" : "source table");
    refuse_dependent_as_feature(opt.independent_varname, src.dependent);
    // Features as numbers are described first, as they always were (their errors come first); a
    // recipe's columns once the recipe (validation) or the options (training) are known.
    const bool auto_scale = opt.scale == "auto";
    const ScaleKind scale = auto_scale ? ScaleKind::None : parse_scale_kind(opt.scale);
    TabularRequest tabular{opt.independent_varname, src.dependent, opt.exclude_columns, opt.columns_json, scale};
    const bool recipe = needs_recipe(spi, src.table, tabular);
    // A table's own columns are standardized unless told otherwise: left raw, as numbers are, a
    // model on survival's lung table reached 0.627 training accuracy where the majority class has
    // 0.724, on attrition 0.750 against 0.839, with the defaults (0.741 and 0.870 standardized; a
    // user sweep of 12 new tables).
    if (auto_scale && recipe) tabular.default_scale = ScaleKind::Standardize;
    if (!recipe) src = describe_source(std::move(src), opt.independent_varname);
    TableName out = resolve_output_table(opt.output_table, "output table");
    TableName summary = out.with_suffix("_summary");
    require_absent(summary, "summary table");

    Layout layout;
    int buffer_size = opt.buffer_size;
    int num_segments = opt.num_segments;
    std::string training_display;
    if (validation) {
        const PackedInfo t =
            opt.training_layout
                ? *opt.training_layout
                : read_packed_info(spi, resolve_input_table(opt.training_packed_table, "training packed table"));
        training_display = t.table.display();
        if (t.feature_recipe.empty()) {
            if (recipe) src = describe_source(std::move(src), opt.independent_varname);
        } else {
            check_recipe_columns(Recipe::from_json(t.feature_recipe), opt.independent_varname);
            use_recipe(src, t.feature_recipe);
        }
        layout.response = t.response_type == "classification" ? Response::Classification : Response::Regression;
        layout.class_values = t.class_values;
        layout.scaling.normalizing_const = t.normalizing_const;
        layout.scaling.center = t.feature_center;
        layout.scaling.spread = t.feature_spread;
        // A recipe's packing scales nothing itself; its summary's scale says how the columns were.
        layout.scale_kind = t.feature_recipe.empty() ? parse_scale_kind(t.scale) : ScaleKind::None;
        layout.scale_text = t.scale;
        layout.target = t.target;  // the training rows' statistics
        if (buffer_size <= 0) buffer_size = t.buffer_size;
        if (num_segments <= 0) num_segments = t.num_segments;
        check_layout(PackingLayout{buffer_size, num_segments});
        // A dependent column one-hot encoded already (a numeric array as wide as the classes, as
        // MADlib's preprocessors take one) packs as its numbers under a classifier's layout: the
        // MADlib facade rewrote the user's training summary to regression for the length of the call
        // to get that (a review: it needed UPDATE on a table the call only reads).
        const bool one_hot_given =
            layout.response == Response::Classification && is_numeric_array_type(src.dependent_type);
        Counts c = count_and_check(spi, src, one_hot_given ? Response::Regression : layout.response,
                                   "validation source table");
        // As for training data: fewer rows than the training table's segments go on as many segments
        // (a validation table of one row); a number of segments asked for is kept.
        if (opt.num_segments == 0 && c.rows > 0 && c.rows < num_segments) num_segments = int(c.rows);
        layout.x_dim = src.recipe_json.empty() ? c.x_dim : t.independent_dim;
        layout.y_dim =
            layout.response == Response::Classification && !one_hot_given ? int(layout.class_values.size()) : c.y_dim;
        if (layout.x_dim != t.independent_dim)
            fail(ErrorKind::Data, "validation data has " + std::to_string(layout.x_dim) +
                                      " features but the training data has " + std::to_string(t.independent_dim));
        if (layout.y_dim != t.dependent_dim)
            fail(ErrorKind::Data, "validation data has " + std::to_string(layout.y_dim) +
                                      " dependent values per row but the training data has " +
                                      std::to_string(t.dependent_dim));
        if (c.skipped > 0) notice("skipped " + std::to_string(c.skipped) + " rows whose dependent value is NULL");
        return [&] {
            Layout as_numbers = layout;
            if (one_hot_given) as_numbers.response = Response::Regression;
            PackResult packed = pack_rows(spi, src, as_numbers, out, c.rows, buffer_size, num_segments, opt.seed, "",
                                          opt.buffer_fill, opt.training_layout != nullptr);
            write_summary(spi, summary, out.display(), opt, src, layout, packed, buffer_size, num_segments,
                          training_display, c.skipped);
            if (!opt.training_layout) record_packed(spi, out, summary, "validation");
            return read_packed_info(spi, out);
        }();
    }

    if (buffer_size == 0) buffer_size = kDefaultBufferSize;
    if (!opt.segment_placement.empty() && opt.segment_placement != "shard" && opt.segment_placement != "worker")
        fail(ErrorKind::InvalidParameter, "unknown segment_placement \"" + opt.segment_placement + "\"", "",
             "Valid values are shard (one segment per shard) and worker (one segment per worker node).");
    if (num_segments == 0) num_segments = detect_engine(spi)->default_num_segments(spi, opt.segment_placement);
    check_layout(PackingLayout{buffer_size, num_segments});
    if (!(opt.normalizing_const > 0) || !std::isfinite(opt.normalizing_const))
        fail(ErrorKind::InvalidParameter, "normalizing_const must be a positive finite number");
    std::optional<TabularColumns> columns;
    if (recipe) {
        // Everything about the columns is checked before a row is read.
        columns = describe_tabular(spi, src.table, tabular);
        src.row_filter = " WHERE " + src.y_expr + " IS NOT NULL";
        src.recipe_json = "{}";  // marks recipe packing for count_and_check until the recipe is fitted
    }
    // With a recipe, the columns scale themselves (the recipe's per-column scale); packing then only
    // divides by normalizing_const.
    // auto: columns named one by one are a table's own columns even when packed as numbers (no
    // NULLs, no options): standardized too, as '*' would have them -- named, HousePrices' five
    // columns went in raw where '*' standardized them (a user sweep). An array column stays as it is.
    layout.scale_kind = recipe                                    ? ScaleKind::None
                        : auto_scale && !src.independent_is_array ? ScaleKind::Standardize
                                                                  : scale;
    layout.response = choose_response(opt.response_type, src);
    if (opt.num_classes > 0 && layout.response != Response::Classification)
        fail(ErrorKind::InvalidParameter, "num_classes applies to classification only",
             "The dependent column \"" + src.dependent + "\" is packed for regression.",
             "Leave out num_classes, or pass response_type => 'classification' for integer labels.");
    Counts c = count_and_check(spi, src, layout.response, "source table");
    // Fewer rows than the default number of segments (a table of one row) go on as many segments;
    // a number of segments asked for is kept (plan_buffers refuses it).
    if (opt.num_segments == 0 && c.rows > 0 && c.rows < num_segments) num_segments = int(c.rows);
    if (layout.response == Response::Classification) {
        int64_t rare_classes = 0;
        layout.class_values = read_class_values(spi, src, opt.num_classes, rare_classes);
        layout.y_dim = int(layout.class_values.size());
        warn_integer_classes(src, opt.response_type, layout.class_values, c.rows, rare_classes);
    } else {
        layout.y_dim = c.y_dim;
        if (auto_scale || scale == ScaleKind::Standardize) layout.target = target_stats(c);
        if (layout.target) notice_standardized_target(src, *layout.target);
        else notice_unscaled_target(src, c);
        warn_target_resolution(src, c);
    }
    if (recipe) {
        // Stored as jsonb and read back as its text: packing reads exactly what prediction will.
        const std::string fitted = fit_recipe(spi, src.table, *columns, src.row_filter, c.rows);
        use_recipe(src, spi.scalar_text("SELECT $1::pg_catalog.jsonb::pg_catalog.text", {SqlParam::text(fitted)}));
        layout.x_dim = Recipe::from_json(src.recipe_json).width();
        layout.scale_text = recipe_scale(src.recipe_json);
        if (c.skipped > 0) notice("skipped " + std::to_string(c.skipped) + " rows whose dependent value is NULL");
    } else {
        layout.x_dim = c.x_dim;
    }
    if (layout.scale_kind != ScaleKind::None) {
        FeatureStats stats = read_feature_stats(spi, src, layout.x_dim);
        layout.scaling = FeatureScaling::from_stats(layout.scale_kind, opt.normalizing_const, stats);
    } else {
        layout.scaling.normalizing_const = opt.normalizing_const;
    }
    PackResult packed = pack_rows(spi, src, layout, out, c.rows, buffer_size, num_segments, opt.seed,
                                  opt.segment_placement, opt.buffer_fill);
    if (!recipe && layout.scale_kind == ScaleKind::None) notice_unscaled_features(opt, packed.largest_feature);
    if (packed.plan.adjusted_buffer_size < buffer_size && packed.plan.rows.size() == std::size_t(num_segments) &&
        c.rows < int64_t(buffer_size) * num_segments)
        notice("buffers hold " + std::to_string(packed.plan.adjusted_buffer_size) + " rows instead of " +
                   std::to_string(buffer_size),
               "Each of the " + std::to_string(num_segments) + " segments needs at least one buffer.");
    write_summary(spi, summary, out.display(), opt, src, layout, packed, buffer_size, num_segments, "", c.skipped);
    record_packed(spi, out, summary, "training");
    return read_packed_info(spi, out);
}

}  // namespace hopper::pg

using namespace hopper;
using namespace hopper::pg;

// hopper.preprocess(source_table, output_table, dependent_varname, independent_varname,
//                   buffer_size, num_segments, normalizing_const, scale, seed, response_type,
//                   segment_placement, exclude_columns, columns, num_classes, buffer_fill)
HOPPER_FUNCTION(preprocess) {
    PackOptions opt;
    opt.source_table = arg_text(fcinfo, 0, "source_table");
    opt.output_table = arg_text(fcinfo, 1, "output_table");
    opt.dependent_varname = arg_text(fcinfo, 2, "dependent_varname");
    opt.independent_varname = arg_text(fcinfo, 3, "independent_varname");
    const PackingLayout layout = make_packing_layout(arg_int_opt(fcinfo, 4), arg_int_opt(fcinfo, 5));
    opt.buffer_size = layout.buffer_size;
    opt.num_segments = layout.num_segments;
    opt.normalizing_const = arg_float8_or(fcinfo, 6, 1.0);
    opt.scale = arg_text_or(fcinfo, 7, "auto");
    opt.seed = uint64_t(arg_int_or(fcinfo, 8, 0));
    opt.response_type = arg_text_or(fcinfo, 9, "auto");
    opt.segment_placement = arg_text_or(fcinfo, 10, "");
    opt.exclude_columns = arg_text_or(fcinfo, 11, "");
    opt.columns_json = arg_jsonb_or(fcinfo, 12, "");
    if (std::optional<int64_t> n = arg_int_opt(fcinfo, 13)) {
        if (*n < 2 || *n > kMaxClasses)
            fail(ErrorKind::InvalidParameter, "num_classes must be between 2 and " + std::to_string(kMaxClasses),
                 "It is " + std::to_string(*n) + ".");
        opt.num_classes = int(*n);
    }
    opt.buffer_fill = parse_buffer_fill(arg_text_or(fcinfo, 14, "even"));
    Spi spi;
    PackedInfo info = pack_table(spi, opt);
    notice("packed " + std::to_string(info.num_rows) + " rows into " + std::to_string(info.num_buffers) +
           " buffers over " + std::to_string(info.num_segments) + " segments");
    PG_RETURN_VOID();
}

// hopper.preprocess_validation(source_table, output_table, dependent_varname, independent_varname,
//                              training_preprocessed_table, buffer_size, num_segments, buffer_fill)
HOPPER_FUNCTION(preprocess_validation) {
    PackOptions opt;
    opt.source_table = arg_text(fcinfo, 0, "source_table");
    opt.output_table = arg_text(fcinfo, 1, "output_table");
    opt.dependent_varname = arg_text(fcinfo, 2, "dependent_varname");
    opt.independent_varname = arg_text(fcinfo, 3, "independent_varname");
    opt.training_packed_table = arg_text(fcinfo, 4, "training_preprocessed_table");
    const PackingLayout layout = make_packing_layout(arg_int_opt(fcinfo, 5), arg_int_opt(fcinfo, 6));
    opt.buffer_size = layout.buffer_size;
    opt.num_segments = layout.num_segments;
    opt.buffer_fill = parse_buffer_fill(arg_text_or(fcinfo, 7, "even"));
    Spi spi;
    PackedInfo info = pack_table(spi, opt);
    notice("packed " + std::to_string(info.num_rows) + " validation rows into " + std::to_string(info.num_buffers) +
           " buffers");
    PG_RETURN_VOID();
}
