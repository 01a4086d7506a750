// The dependent column of a recipe: class values (sorted as preprocess sorts them) or a numeric
// regression target; NULL targets are skipped and counted.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>

#include "hopper/error.h"
#include "hopper/interrupt.h"
#include "recipe_columns.h"

namespace hopper {

using recipe_detail::ObjectReader;
using recipe_detail::quoted_column;

namespace {

const char* to_string(TargetKind k) { return k == TargetKind::Regression ? "regression" : "classification"; }
const char* to_string(ClassOrder o) { return o == ClassOrder::Numeric ? "numeric" : "text"; }

// A class value of a numeric label as a number; false if it is not a finite number.
bool class_number(std::string_view s, double& out) {
    const char* end = s.data() + s.size();
    auto [p, ec] = std::from_chars(s.data(), end, out);
    return ec == std::errc() && p == end && std::isfinite(out);
}

// ORDER BY of a numeric label: by value, equal values ("1" and "1.0") by text. Both parse: the
// fitter and the reader check that first.
bool numeric_less(const std::string& a, const std::string& b) {
    double x = 0, y = 0;
    class_number(a, x);
    class_number(b, y);
    return x != y ? x < y : a < b;
}

// A regression target as the packed table stores it: a finite float4.
float regression_value(const std::string& column, double v) {
    recipe_detail::check_finite(column, v);
    const float f = float(v);
    if (!std::isfinite(f))
        fail(ErrorKind::Data, "dependent " + quoted_column(column) + " has a value beyond the float4 range",
             "The value " + cfg::fmt_double(v) + " cannot be a target.", "Scale the column first, e.g. in a view.");
    return f;
}

void sort_classes(std::vector<std::string>& classes, ClassOrder order) {
    if (order == ClassOrder::Numeric) std::sort(classes.begin(), classes.end(), numeric_less);
    else std::sort(classes.begin(), classes.end());
}

}  // namespace

void Target::index_classes() {
    by_bytes_.resize(classes_.size());
    std::iota(by_bytes_.begin(), by_bytes_.end(), 0);
    std::sort(by_bytes_.begin(), by_bytes_.end(), [&](int a, int b) { return classes_[a] < classes_[b]; });
}

int Target::class_index(std::string_view value) const {
    auto it = std::lower_bound(by_bytes_.begin(), by_bytes_.end(), value,
                               [&](int i, std::string_view v) { return std::string_view(classes_[i]) < v; });
    return it != by_bytes_.end() && std::string_view(classes_[*it]) == value ? *it : -1;
}

bool Target::encode(const Cell& value, float* out) const {
    if (value.is_null()) return false;
    if (kind_ == TargetKind::Regression) {
        if (value.type != Cell::Type::Number) recipe_detail::wrong_cell(column_, "numbers");
        out[0] = regression_value(column_, value.number);
        return true;
    }
    if (value.type != Cell::Type::Text) recipe_detail::wrong_cell(column_, "text");
    const int k = class_index(value.text);
    if (k < 0)
        fail(ErrorKind::Data, "dependent " + quoted_column(column_) + " has a class the model does not know",
             "The classes are those of the training data (" + std::to_string(classes_.size()) + ").");
    std::fill(out, out + classes_.size(), 0.0f);
    out[k] = 1.0f;
    return true;
}

std::string Target::to_json() const {
    cfg::ojson j;
    j["format"] = "hopper.target";
    j["version"] = 1;
    j["column"] = column_;
    j["kind"] = to_string(kind_);
    if (kind_ == TargetKind::Classification) {
        j["order"] = to_string(order_);
        j["classes"] = classes_;
    }
    j["rows"] = rows_;
    j["skipped"] = skipped_;
    return j.dump();
}

Target Target::from_json(std::string_view text) {
    if (text.size() > kMaxRecipeJsonBytes)
        fail(ErrorKind::Limit, "target description is too large",
             "It has " + std::to_string(text.size()) + " bytes; hopper reads at most " +
                 std::to_string(kMaxRecipeJsonBytes >> 20) + " MB.");
    const cfg::json j = cfg::parse_json_text(text, "target");
    ObjectReader r(j, "the target");
    if (r.string("format") != "hopper.target") r.bad("format", "It must be \"hopper.target\".");
    const int64_t version = r.integer("version", 0, INT32_MAX);
    if (version != 1)
        fail(ErrorKind::Data, "target version " + std::to_string(version) + " is not supported",
             "This hopper reads target version 1.", "Was it written by a newer hopper?");
    Target t;
    t.column_ = r.string("column");
    if (t.column_.empty()) r.bad("column", "It must name a column.");
    const std::string kind = r.string("kind");
    if (kind == "regression") t.kind_ = TargetKind::Regression;
    else if (kind != "classification") r.bad("kind", "It must be \"classification\" or \"regression\".");
    if (t.kind_ == TargetKind::Classification) {
        const std::string order = r.string("order");
        if (order == "numeric") t.order_ = ClassOrder::Numeric;
        else if (order != "text") r.bad("order", "It must be \"text\" or \"numeric\".");
        t.classes_ = r.strings("classes", std::size_t(kMaxTargetClasses));
        if (t.classes_.size() < 2) r.bad("classes", "A classification has at least two classes.");
        double unused = 0;
        for (const std::string& c : t.classes_)
            if (t.order_ == ClassOrder::Numeric && !class_number(c, unused))
                r.bad("classes", "Numeric classes must be numbers; " + cfg::show(cfg::json(c)) + " is not.");
        for (std::size_t i = 1; i < t.classes_.size(); ++i) {
            const std::string &a = t.classes_[i - 1], &b = t.classes_[i];
            if (!(t.order_ == ClassOrder::Numeric ? numeric_less(a, b) : a < b))
                r.bad("classes", "They must be distinct and sorted; " + cfg::show(cfg::json(b)) + " is out of place.");
        }
        t.index_classes();
    }
    t.rows_ = r.integer("rows", 1, INT64_MAX);
    t.skipped_ = r.integer("skipped", 0, INT64_MAX);
    r.done();
    return t;
}

TargetFitter::TargetFitter(std::string column, TargetKind kind, ClassOrder order, int max_classes)
    : max_classes_(max_classes) {
    if (column.empty()) fail(ErrorKind::InvalidParameter, "the dependent column needs a name");
    recipe_detail::check_utf8(column, column);
    if (max_classes < 2 || max_classes > kMaxTargetClasses)
        fail(ErrorKind::InvalidParameter, "max_classes must be between 2 and " + std::to_string(kMaxTargetClasses));
    t_.column_ = std::move(column);
    t_.kind_ = kind;
    t_.order_ = order;
}

bool TargetFitter::add(const Cell& value) {
    if (value.is_null()) {
        ++skipped_;
        return false;
    }
    const std::string& col = t_.column_;
    if (t_.kind_ == TargetKind::Regression) {
        if (value.type != Cell::Type::Number) recipe_detail::wrong_cell(col, "numbers");
        (void)regression_value(col, value.number);
    } else {
        if (value.type != Cell::Type::Text) recipe_detail::wrong_cell(col, "text");
        if (seen_.find(value.text) == seen_.end()) {
            if (int64_t(seen_.size()) >= max_classes_)
                fail(ErrorKind::Limit, "too many distinct class values",
                     "Dependent " + quoted_column(col) + " has more than " + std::to_string(max_classes_) +
                         " distinct values.",
                     "Is it a regression target? Pass response_type => 'regression'.");
            double unused = 0;
            if (t_.order_ == ClassOrder::Numeric && !class_number(value.text, unused))
                fail(ErrorKind::Data, "dependent " + quoted_column(col) + " has a class that is not a finite number",
                     "Numeric labels are sorted by value.");
            recipe_detail::check_utf8(col, value.text);
            seen_.emplace(value.text);
        }
    }
    ++rows_;
    return true;
}

Target TargetFitter::finish() const {
    if (rows_ == 0)
        fail(ErrorKind::Data, "dependent " + quoted_column(t_.column_) + " is NULL in every row",
             std::to_string(skipped_) + " rows were read.");
    Target t = t_;
    t.rows_ = rows_;
    t.skipped_ = skipped_;
    if (t.kind_ == TargetKind::Classification) {
        t.classes_.assign(seen_.begin(), seen_.end());
        if (t.classes_.size() < 2)
            fail(ErrorKind::Data, "classification needs at least two classes",
                 "Dependent " + quoted_column(t_.column_) + " has only the value " + t.classes_[0] + ".");
        sort_classes(t.classes_, t.order_);
        t.index_classes();
    }
    return t;
}

}  // namespace hopper
