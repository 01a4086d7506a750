// Private to the recipe module (recipe*.cpp): one fitter and one encoder per column kind, and the
// strict JSON reading they share. Not installed.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "config_json.h"
#include "hopper/recipe.h"

namespace hopper::recipe_detail {

using cfg::json;
using cfg::ojson;

// A fitted column: immutable, shared by copies of a Recipe.
class ColumnEncoder {
public:
    explicit ColumnEncoder(std::string name) : name_(std::move(name)) {}
    virtual ~ColumnEncoder() = default;
    const std::string& name() const { return name_; }
    virtual ColumnKind kind() const = 0;
    virtual int width() const = 0;
    virtual void feature_names(std::vector<std::string>& out) const = 0;
    // Writes width() floats; no allocation.
    virtual void apply(const Cell& value, float* out) const = 0;
    virtual int vocabulary() const { return 0; }  // codes of an embedding input, else 0
    virtual std::vector<std::string> categories() const { return {}; }
    virtual ojson to_json() const = 0;

private:
    std::string name_;
};

// The state of one column while rows stream in.
class ColumnFitter {
public:
    explicit ColumnFitter(const ColumnSpec& spec) : spec_(spec) {}
    virtual ~ColumnFitter() = default;
    const ColumnSpec& spec() const { return spec_; }
    virtual void add(const Cell& value) = 0;
    virtual uint64_t bytes_used() const = 0;
    virtual std::shared_ptr<const ColumnEncoder> finish() const = 0;

protected:
    ColumnSpec spec_;
};

// Checks a spec's options for its kind (InvalidParameter naming the column).
void check_spec(const ColumnSpec& spec);
std::unique_ptr<ColumnFitter> make_fitter(const ColumnSpec& spec, const FitLimits& limits);
// What a fitter of this spec holds after `rows` rows with `distinct` values of `mean_text_bytes`.
uint64_t estimate_fitter_bytes(const ColumnSpec& spec, int64_t rows, int64_t distinct, double mean_text_bytes);
std::shared_ptr<const ColumnEncoder> read_encoder(const json& j, const std::string& where);

// Fitters and encoders of each kind (recipe_numeric.cpp, recipe_categorical.cpp, recipe_array.cpp).
std::unique_ptr<ColumnFitter> make_numeric_fitter(const ColumnSpec& spec);
std::unique_ptr<ColumnFitter> make_categorical_fitter(const ColumnSpec& spec, const FitLimits& limits);
std::unique_ptr<ColumnFitter> make_array_fitter(const ColumnSpec& spec);
// Heap bytes of one counted category: a map node (tree links, the string, the count) and the text
// where it does not fit the string's own buffer.
uint64_t category_entry_bytes(double text_bytes);
std::shared_ptr<const ColumnEncoder> read_numeric(const json& j, ColumnKind kind, const std::string& name,
                                                  const std::string& where);
std::shared_ptr<const ColumnEncoder> read_categorical(const json& j, const std::string& name, const std::string& where);
std::shared_ptr<const ColumnEncoder> read_array(const json& j, const std::string& name, const std::string& where);

// ---- shared checks ----

// `column "name"` for messages.
std::string quoted_column(const std::string& name);
// The port handed a cell of a type the column never takes: a bug, not bad data.
[[noreturn]] void wrong_cell(const std::string& column, const char* expected);
// Refuses a non-finite number (Data).
void check_finite(const std::string& column, double v);
// Refuses a feature that scaling took beyond float4's range (Data): a value far outside the
// fitted range over a tiny spread.
void check_scaled(const std::string& column, const float* v, int n);
// Refuses text that is not UTF-8 (Data): JSON holds only UTF-8.
void check_utf8(const std::string& column, std::string_view s);

// Reads the members of a JSON object, refusing (Data) a missing or mistyped key, and, at done(),
// any key it did not read: a stored recipe has exactly the keys hopper writes.
class ObjectReader {
public:
    ObjectReader(const json& j, std::string where);
    const json& at(const std::string& key);
    bool has(const std::string& key) const { return j_.contains(key); }
    std::string string(const std::string& key);
    bool boolean(const std::string& key);
    int64_t integer(const std::string& key, int64_t lo, int64_t hi);
    double number(const std::string& key);  // finite
    float single(const std::string& key);   // finite as float
    std::vector<std::string> strings(const std::string& key, std::size_t max_size);
    std::vector<float> singles(const std::string& key, std::size_t size);
    void done();
    [[noreturn]] void bad(const std::string& key, const std::string& detail) const;

private:
    const json& j_;
    std::string where_;
    std::set<std::string> read_;
};

// Strictly increasing by bytes (so unique, and canonical); Data otherwise.
void check_sorted(const std::vector<std::string>& values, const std::string& key, const std::string& where);
// A float scaling from stored center/spread; validated as packing does.
FeatureScaling read_scaling(ObjectReader& r, ScaleKind kind, int n, const std::string& where);
void write_scaling(ojson& j, ScaleKind kind, const FeatureScaling& s);

}  // namespace hopper::recipe_detail
