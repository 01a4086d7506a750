// Array columns of a recipe: a fixed number of floats passed through, optionally scaled per element
// (packing's FeatureStats / FeatureScaling, as preprocess scales feature arrays).
#include <algorithm>
#include <cmath>

#include "hopper/error.h"
#include "recipe_columns.h"

namespace hopper::recipe_detail {

namespace {

void check_array(const std::string& column, const Cell& value, int width) {
    if (value.is_null())
        fail(ErrorKind::Data, "array " + quoted_column(column) + " contains NULL", "",
             "Arrays are not imputed: filter such rows out, e.g. with a view.");
    if (value.type != Cell::Type::Floats) wrong_cell(column, "arrays");
    if (value.count != width)
        fail(ErrorKind::Data, "array " + quoted_column(column) + " has arrays of different lengths",
             "A row has " + std::to_string(value.count) + " elements; the recipe takes " + std::to_string(width) + ".");
    for (int i = 0; i < width; ++i)
        if (!std::isfinite(value.floats[i]))
            fail(ErrorKind::Data, quoted_column(column) + " contains NaN or infinite values",
                 "Element " + std::to_string(i + 1) + " of an array is not finite.", "Clean the data before packing.");
}

class ArrayEncoder final : public ColumnEncoder {
public:
    ArrayEncoder(std::string name, int width, ScaleKind scale, FeatureScaling scaling)
        : ColumnEncoder(std::move(name)), width_(width), scale_(scale), scaling_(std::move(scaling)) {}

    ColumnKind kind() const override { return ColumnKind::Array; }
    int width() const override { return width_; }

    void feature_names(std::vector<std::string>& out) const override {
        for (int i = 1; i <= width_; ++i) out.push_back(name() + "[" + std::to_string(i) + "]");
    }

    void apply(const Cell& value, float* out) const override {
        check_array(name(), value, width_);
        std::copy(value.floats, value.floats + width_, out);
        scaling_.apply(out, width_);
        if (!scaling_.is_identity()) check_scaled(name(), out, width_);
    }

    ojson to_json() const override {
        ojson j;
        j["name"] = name();
        j["kind"] = to_string(ColumnKind::Array);
        j["width"] = width_;
        write_scaling(j, scale_, scaling_);
        return j;
    }

private:
    int width_;
    ScaleKind scale_;
    FeatureScaling scaling_;
};

class ArrayFitter final : public ColumnFitter {
public:
    explicit ArrayFitter(const ColumnSpec& spec) : ColumnFitter(spec) {
        if (spec.width > 0) stats_.emplace(spec.width);
    }

    void add(const Cell& value) override {
        // The first array decides the width when the spec leaves it open.
        if (!stats_ && value.type == Cell::Type::Floats) {
            if (value.count < 1 || value.count > kMaxRecipeWidth)
                fail(ErrorKind::Data,
                     "array " + quoted_column(spec_.name) + " has arrays of " + std::to_string(value.count) +
                         " elements",
                     "Arrays need 1 to " + std::to_string(kMaxRecipeWidth) + " elements.");
            stats_.emplace(value.count);
        }
        check_array(spec_.name, value, stats_ ? stats_->num_features() : 0);
        stats_->add(value.floats);
    }

    uint64_t bytes_used() const override {
        return sizeof(*this) + (stats_ ? uint64_t(stats_->num_features()) * 4 * sizeof(double) : 0);
    }

    std::shared_ptr<const ColumnEncoder> finish() const override {
        // add() refuses NULL arrays, so a fitter with rows has its width.
        if (!stats_ || stats_->count() == 0)
            fail(ErrorKind::Data, "array " + quoted_column(spec_.name) + " has no rows");
        return std::make_shared<ArrayEncoder>(spec_.name, stats_->num_features(), spec_.scale,
                                              FeatureScaling::from_stats(spec_.scale, 1.0, *stats_));
    }

private:
    std::optional<FeatureStats> stats_;
};

}  // namespace

std::unique_ptr<ColumnFitter> make_array_fitter(const ColumnSpec& spec) { return std::make_unique<ArrayFitter>(spec); }

std::shared_ptr<const ColumnEncoder> read_array(const json& j, const std::string& name, const std::string& where) {
    ObjectReader r(j, where);
    (void)r.string("name");
    (void)r.string("kind");
    const int width = int(r.integer("width", 1, kMaxRecipeWidth));
    ScaleKind scale;
    try {
        scale = parse_scale_kind(r.string("scale"));
    } catch (const Error& e) { fail(ErrorKind::Data, "invalid recipe: " + e.message() + " in " + where, "", e.hint()); }
    FeatureScaling scaling = read_scaling(r, scale, width, where);
    r.done();
    return std::make_shared<ArrayEncoder>(name, width, scale, std::move(scaling));
}

}  // namespace hopper::recipe_detail
