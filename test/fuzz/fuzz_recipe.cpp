// Recipe::from_json and Target::from_json (stored with packed tables and models, so a corrupted
// or hostile text must be refused with hopper::Error). What they accept must survive its canonical
// JSON unchanged, have one name per feature, and encode rows (all NULL, and every kept category)
// without anything but a hopper::Error.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_common.h"
#include "hopper/recipe.h"

namespace {

void check_recipe(std::string_view text) {
    using namespace hopper;
    std::optional<Recipe> r;
    if (!hopper_fuzz::accepts([&] { r.emplace(Recipe::from_json(text)); })) return;
    const std::string canonical = r->to_json();
    std::optional<Recipe> again;
    hopper_fuzz::require(hopper_fuzz::accepts([&] { again.emplace(Recipe::from_json(canonical)); }),
                         "canonical recipe is refused:", canonical);
    hopper_fuzz::require(again->to_json() == canonical, "recipe changes through canonical JSON:", canonical);
    hopper_fuzz::require(int(r->feature_names().size()) == r->width(), "recipe width and feature names differ",
                         canonical);
    hopper_fuzz::require(int(r->column_names().size()) == r->num_columns(), "recipe columns and names differ",
                         canonical);
    // Two rows of the types each column takes: NULLs (arrays: zeros), then the first kept
    // category of categorical columns, 1.0 for the others.
    std::vector<float> zeros(std::size_t(r->width()), 0.0f), out(std::size_t(r->width()));
    int slots = 0;
    for (int c = 0; c < r->num_columns(); ++c) {
        hopper_fuzz::require(r->column_offset(c) == slots, "column offsets are not contiguous", canonical);
        slots += r->column_width(c);
    }
    hopper_fuzz::require(slots == r->width(), "column widths do not add up", canonical);
    std::vector<std::vector<std::string>> cats;
    for (const std::string& c : r->column_names()) cats.push_back(r->categories(c));
    for (int pass = 0; pass < 2; ++pass) {
        std::vector<hopper::Cell> row(std::size_t(r->num_columns()));
        for (int c = 0; c < r->num_columns(); ++c) {
            const hopper::ColumnKind k = r->column_kind(c);
            if (k == hopper::ColumnKind::Array) row[c] = hopper::Cell(zeros.data(), r->column_width(c));
            else if (k == hopper::ColumnKind::Categorical)
                row[c] = pass && !cats[c].empty() ? hopper::Cell(cats[c][0]) : hopper::Cell();
            else if (pass) row[c] = hopper::Cell(1.0);
        }
        hopper_fuzz::accepts([&] { r->apply(row.data(), row.size(), out.data()); });
        const std::vector<float> first = out;
        hopper_fuzz::accepts([&] { r->apply(row.data(), row.size(), out.data()); });
        hopper_fuzz::require(std::memcmp(first.data(), out.data(), out.size() * sizeof(float)) == 0,
                             "apply is not deterministic", canonical);
    }
}

void check_target(std::string_view text) {
    using namespace hopper;
    std::optional<Target> t;
    if (!hopper_fuzz::accepts([&] { t.emplace(Target::from_json(text)); })) return;
    const std::string canonical = t->to_json();
    std::optional<Target> again;
    hopper_fuzz::require(hopper_fuzz::accepts([&] { again.emplace(Target::from_json(canonical)); }),
                         "canonical target is refused:", canonical);
    hopper_fuzz::require(again->to_json() == canonical, "target changes through canonical JSON:", canonical);
    std::vector<float> out(std::size_t(t->width()));
    for (std::size_t i = 0; i < t->classes().size(); ++i)
        hopper_fuzz::require(t->class_index(t->classes()[i]) == int(i), "class_index disagrees with classes",
                             canonical);
    hopper_fuzz::accepts([&] { t->encode(hopper::Cell(1.0), out.data()); });
    if (!t->classes().empty()) hopper_fuzz::accepts([&] { t->encode(hopper::Cell(t->classes().back()), out.data()); });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    check_recipe(text);
    check_target(text);
    return 0;
}
