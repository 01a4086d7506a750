// Numeric, boolean and date columns of a recipe: imputation, an optional missing indicator, and
// scaling through packing's FeatureStats / FeatureScaling (one feature).
#include <algorithm>
#include <cmath>

#include "hopper/error.h"
#include "hopper/interrupt.h"
#include "recipe_columns.h"

namespace hopper::recipe_detail {

namespace {

// What the model sees of a value: a float32 (the packed table's type), checked.
float checked_value(const std::string& column, ColumnKind kind, double v) {
    check_finite(column, v);
    if (kind == ColumnKind::Boolean && v != 0.0 && v != 1.0)
        fail(ErrorKind::Data, "boolean " + quoted_column(column) + " has the value " + cfg::fmt_double(v),
             "A boolean column holds 0 (false) and 1 (true) only.", "Declare the column numeric or categorical.");
    const float f = float(v);
    if (!std::isfinite(f))
        fail(ErrorKind::Data, quoted_column(column) + " has a value beyond the float4 range",
             beyond_float8_range(v).empty() ? "The value " + cfg::fmt_double(v) + " cannot be a feature."
                                            : "A value is " + beyond_float8_range(v) + ": it cannot be a feature.",
             "Scale the column first, e.g. in a view.");
    return f;
}

class NumericEncoder final : public ColumnEncoder {
public:
    NumericEncoder(std::string name, ColumnKind kind, Imputation impute, float fill, bool indicator, ScaleKind scale,
                   FeatureScaling scaling)
        : ColumnEncoder(std::move(name)),
          kind_(kind),
          impute_(impute),
          fill_(fill),
          indicator_(indicator),
          scale_(scale),
          scaling_(std::move(scaling)) {}

    ColumnKind kind() const override { return kind_; }
    int width() const override { return indicator_ ? 2 : 1; }

    void feature_names(std::vector<std::string>& out) const override {
        out.push_back(name());
        if (indicator_) out.push_back(name() + "_missing");
    }

    void apply(const Cell& value, float* out) const override {
        float v = fill_;
        if (value.type == Cell::Type::Number) v = checked_value(name(), kind_, value.number);
        else if (value.type != Cell::Type::Null) wrong_cell(name(), "numbers");
        scaling_.apply(&v, 1);
        check_scaled(name(), &v, 1);
        out[0] = v;
        if (indicator_) out[1] = value.is_null() ? 1.0f : 0.0f;
    }

    ojson to_json() const override {
        ojson j;
        j["name"] = name();
        j["kind"] = to_string(kind_);
        j["impute"] = to_string(impute_);
        j["fill"] = cfg::float_for_json(fill_);
        j["missing_indicator"] = indicator_;
        write_scaling(j, scale_, scaling_);
        return j;
    }

private:
    ColumnKind kind_;
    Imputation impute_;  // how fill_ was found (for the record)
    float fill_;         // the value a NULL becomes, before scaling
    bool indicator_;
    ScaleKind scale_;
    FeatureScaling scaling_;  // one feature
};

class NumericFitter final : public ColumnFitter {
public:
    explicit NumericFitter(const ColumnSpec& spec) : ColumnFitter(spec), stats_(1) {}

    void add(const Cell& value) override {
        if (value.is_null()) {
            ++nulls_;
            return;
        }
        if (value.type != Cell::Type::Number) wrong_cell(spec_.name, "numbers");
        const float f = checked_value(spec_.name, spec_.kind, value.number);
        stats_.add(&f);
        if (spec_.impute == Imputation::Median) values_.push_back(f);
    }

    uint64_t bytes_used() const override { return sizeof(*this) + values_.capacity() * sizeof(float); }

    std::shared_ptr<const ColumnEncoder> finish() const override {
        if (stats_.count() == 0)
            fail(ErrorKind::Data, quoted_column(spec_.name) + " is NULL in every row packed",
                 "Rows whose dependent value is NULL are not packed.",
                 "A column without values carries no information: leave it out (with '*', exclude_columns).");
        const float fill = this->fill();
        // Scaling sees the column as the model does, NULLs imputed (as an imputer-then-scaler
        // pipeline would). Fill values are added one at a time so the statistics stay Welford's.
        FeatureStats imputed = stats_;
        InterruptTicker ticker;
        for (int64_t i = 0; i < nulls_; ++i) {
            ticker.tick();
            imputed.add(&fill);
        }
        FeatureScaling scaling = FeatureScaling::from_stats(spec_.scale, 1.0, imputed);
        return std::make_shared<NumericEncoder>(spec_.name, spec_.kind, spec_.impute, fill, spec_.missing_indicator,
                                                spec_.scale, std::move(scaling));
    }

private:
    float fill() const {
        switch (spec_.impute) {
            case Imputation::Mean: return float(stats_.mean()[0]);
            case Imputation::Constant: return checked_value(spec_.name, ColumnKind::Numeric, spec_.impute_value);
            case Imputation::Median: break;
        }
        // The exact median of the values as floats; of an even count, the mean of the middle two.
        std::vector<float>& v = values_;  // reordered in place: a copy would double the largest state
        const std::size_t n = v.size(), mid = n / 2;
        std::nth_element(v.begin(), v.begin() + mid, v.end());
        const double upper = v[mid];
        if (n % 2) return float(upper);
        const double lower = *std::max_element(v.begin(), v.begin() + mid);
        return float((lower + upper) / 2.0);
    }

    FeatureStats stats_;  // of the non-NULL values
    int64_t nulls_ = 0;
    // For the median only. finish() reorders it (the values stay the same), hence mutable.
    mutable std::vector<float> values_;
};

}  // namespace

std::unique_ptr<ColumnFitter> make_numeric_fitter(const ColumnSpec& spec) {
    return std::make_unique<NumericFitter>(spec);
}

std::shared_ptr<const ColumnEncoder> read_numeric(const json& j, ColumnKind kind, const std::string& name,
                                                  const std::string& where) {
    ObjectReader r(j, where);
    (void)r.string("name");
    (void)r.string("kind");
    Imputation impute;
    ScaleKind scale;
    try {
        impute = parse_imputation(r.string("impute"));
        scale = parse_scale_kind(r.string("scale"));
    } catch (const Error& e) { fail(ErrorKind::Data, "invalid recipe: " + e.message() + " in " + where, "", e.hint()); }
    const float fill = r.single("fill");
    const bool indicator = r.boolean("missing_indicator");
    FeatureScaling scaling = read_scaling(r, scale, 1, where);
    r.done();
    return std::make_shared<NumericEncoder>(name, kind, impute, fill, indicator, scale, std::move(scaling));
}

}  // namespace hopper::recipe_detail
