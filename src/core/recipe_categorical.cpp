// Categorical columns of a recipe: value counts while fitting; one-hot or integer codes, with
// "<other>" (values too rare or beyond max_categories), "<null>" and "<unknown>" (never seen).
#include <algorithm>
#include <map>

#include "hopper/error.h"
#include "hopper/interrupt.h"
#include "recipe_columns.h"

namespace hopper::recipe_detail {

namespace {

// Stored "other" values of one column, bounded only by the recipe text's own size.
constexpr std::size_t kMaxStoredValues = std::size_t(1) << 26;

// The position of v in sorted `values`, or -1. No allocation: rows are encoded at query speed.
int find_sorted(const std::vector<std::string>& values, std::string_view v) {
    auto it = std::lower_bound(values.begin(), values.end(), v,
                               [](const std::string& a, std::string_view b) { return std::string_view(a) < b; });
    return it != values.end() && std::string_view(*it) == v ? int(it - values.begin()) : -1;
}

class CategoricalEncoder final : public ColumnEncoder {
public:
    CategoricalEncoder(std::string name, CategoryEncoding encoding, int64_t min_frequency, int64_t max_categories,
                       std::vector<std::string> categories, std::vector<std::string> other, bool has_null)
        : ColumnEncoder(std::move(name)),
          encoding_(encoding),
          min_frequency_(min_frequency),
          max_categories_(max_categories),
          categories_(std::move(categories)),
          other_(std::move(other)),
          has_null_(has_null) {
        const int k = int(categories_.size());
        other_slot_ = other_.empty() ? -1 : k;
        null_slot_ = has_null_ ? k + (other_.empty() ? 0 : 1) : -1;
        unknown_slot_ = k + (other_.empty() ? 0 : 1) + (has_null_ ? 1 : 0);
    }

    ColumnKind kind() const override { return ColumnKind::Categorical; }
    int width() const override { return encoding_ == CategoryEncoding::Codes ? 1 : unknown_slot_ + 1; }
    int vocabulary() const override { return encoding_ == CategoryEncoding::Codes ? unknown_slot_ + 1 : 0; }
    std::vector<std::string> categories() const override { return categories_; }

    void feature_names(std::vector<std::string>& out) const override {
        if (encoding_ == CategoryEncoding::Codes) {
            out.push_back(name());
            return;
        }
        for (const std::string& c : categories_) out.push_back(name() + "=" + c);
        if (other_slot_ >= 0) out.push_back(name() + "=<other>");
        if (null_slot_ >= 0) out.push_back(name() + "=<null>");
        out.push_back(name() + "=<unknown>");
    }

    void apply(const Cell& value, float* out) const override {
        const int code = code_of(value);
        if (encoding_ == CategoryEncoding::Codes) {
            out[0] = float(code);  // exact: codes stay below 2^24
            return;
        }
        std::fill(out, out + unknown_slot_ + 1, 0.0f);
        // A value never seen while fitting sets no slot, as scikit-learn's handle_unknown='ignore':
        // training never sets "<unknown>", so its weights stayed as initialised, and such rows were
        // scored by random weights (P(survived) 0.18 to 0.73 over four seeds of one model, a user
        // sweep). The slot stays, always 0, so the layout of older recipes and models holds.
        if (code != unknown_slot_) out[code] = 1.0f;
    }

    ojson to_json() const override {
        ojson j;
        j["name"] = name();
        j["kind"] = to_string(ColumnKind::Categorical);
        j["encoding"] = to_string(encoding_);
        j["min_frequency"] = min_frequency_;
        j["max_categories"] = max_categories_;
        j["categories"] = categories_;
        j["other_values"] = other_;
        j["null"] = has_null_;
        return j;
    }

private:
    int code_of(const Cell& value) const {
        if (value.is_null()) return null_slot_ >= 0 ? null_slot_ : unknown_slot_;
        if (value.type != Cell::Type::Text) wrong_cell(name(), "text");
        const int i = find_sorted(categories_, value.text);
        if (i >= 0) return i;
        if (other_slot_ >= 0 && find_sorted(other_, value.text) >= 0) return other_slot_;
        return unknown_slot_;
    }

    CategoryEncoding encoding_;
    int64_t min_frequency_, max_categories_;  // how categories_ were chosen (for the record)
    std::vector<std::string> categories_;     // kept values, sorted by bytes: slots 0..k-1
    std::vector<std::string> other_;          // values seen but not kept, sorted by bytes
    bool has_null_;
    int other_slot_, null_slot_, unknown_slot_;
};

class CategoricalFitter final : public ColumnFitter {
public:
    CategoricalFitter(const ColumnSpec& spec, const FitLimits& limits) : ColumnFitter(spec), limits_(limits) {}

    void add(const Cell& value) override {
        if (value.is_null()) {
            ++nulls_;
            return;
        }
        if (value.type != Cell::Type::Text) wrong_cell(spec_.name, "text");
        auto it = counts_.find(value.text);
        if (it != counts_.end()) {
            ++it->second;
            return;
        }
        if (int64_t(counts_.size()) >= limits_.max_distinct)
            fail(ErrorKind::Limit,
                 quoted_column(spec_.name) + " has more than " + std::to_string(limits_.max_distinct) +
                     " distinct values",
                 "A categorical column counts every distinct value while the recipe is fitted.",
                 "Is it an identifier? Leave it out, or declare it numeric.");
        check_utf8(spec_.name, value.text);
        counts_.emplace(std::string(value.text), 1);
        bytes_ += category_entry_bytes(double(value.text.size()));
    }

    uint64_t bytes_used() const override { return sizeof(*this) + bytes_; }

    std::shared_ptr<const ColumnEncoder> finish() const override {
        if (counts_.empty())
            fail(ErrorKind::Data, quoted_column(spec_.name) + " is NULL in every row packed",
                 "Rows whose dependent value is NULL are not packed.",
                 "A column without values carries no information: leave it out (with '*', exclude_columns).");
        // Most frequent first; equal counts by value, so the choice never depends on row order.
        std::vector<std::pair<const std::string*, int64_t>> byfreq;
        byfreq.reserve(counts_.size());
        for (const auto& [value, count] : counts_) byfreq.emplace_back(&value, count);
        std::stable_sort(byfreq.begin(), byfreq.end(),
                         [](const auto& a, const auto& b) { return a.second > b.second; });  // map order: by value
        std::vector<std::string> kept, other;
        for (const auto& [value, count] : byfreq) {
            const bool room = spec_.max_categories == 0 || int64_t(kept.size()) < spec_.max_categories;
            (count >= spec_.min_frequency && room ? kept : other).push_back(*value);
        }
        if (kept.size() > std::size_t(kMaxRecipeWidth))
            fail(ErrorKind::Limit,
                 quoted_column(spec_.name) + " would keep more than " + std::to_string(kMaxRecipeWidth) + " categories",
                 "It has " + std::to_string(kept.size()) + ".", "Bound it with max_categories or min_frequency.");
        std::sort(kept.begin(), kept.end());
        std::sort(other.begin(), other.end());
        return std::make_shared<CategoricalEncoder>(spec_.name, spec_.encoding, spec_.min_frequency,
                                                    spec_.max_categories, std::move(kept), std::move(other),
                                                    nulls_ > 0);
    }

private:
    FitLimits limits_;
    std::map<std::string, int64_t, std::less<>> counts_;  // transparent: looked up by string_view
    int64_t nulls_ = 0;
    uint64_t bytes_ = 0;
};

}  // namespace

uint64_t category_entry_bytes(double text_bytes) { return 80 + (text_bytes > 15 ? uint64_t(text_bytes) + 1 : 0); }

std::unique_ptr<ColumnFitter> make_categorical_fitter(const ColumnSpec& spec, const FitLimits& limits) {
    return std::make_unique<CategoricalFitter>(spec, limits);
}

std::shared_ptr<const ColumnEncoder> read_categorical(const json& j, const std::string& name,
                                                      const std::string& where) {
    ObjectReader r(j, where);
    (void)r.string("name");
    (void)r.string("kind");
    CategoryEncoding encoding;
    try {
        encoding = parse_category_encoding(r.string("encoding"));
    } catch (const Error& e) { fail(ErrorKind::Data, "invalid recipe: " + e.message() + " in " + where, "", e.hint()); }
    const int64_t min_frequency = r.integer("min_frequency", 1, INT64_MAX);
    const int64_t max_categories = r.integer("max_categories", 0, kMaxRecipeWidth);
    std::vector<std::string> categories = r.strings("categories", std::size_t(kMaxRecipeWidth));
    std::vector<std::string> other = r.strings("other_values", kMaxStoredValues);
    const bool has_null = r.boolean("null");
    r.done();
    check_sorted(categories, "categories", where);
    check_sorted(other, "other_values", where);
    if (max_categories > 0 && int64_t(categories.size()) > max_categories)
        r.bad("categories", "There are more than max_categories.");
    for (std::size_t a = 0, b = 0; a < categories.size() && b < other.size();) {
        if (categories[a] == other[b]) r.bad("other_values", "A kept category cannot be an other value too.");
        (categories[a] < other[b] ? a : b) += 1;
    }
    return std::make_shared<CategoricalEncoder>(name, encoding, min_frequency, max_categories, std::move(categories),
                                                std::move(other), has_null);
}

}  // namespace hopper::recipe_detail
