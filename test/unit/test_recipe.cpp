// Recipes (issue 27): fitting a table's own columns, applying the recipe, its JSON, the target.
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "error_helpers.h"
#include "hopper/error.h"
#include "hopper/recipe.h"

using namespace hopper;
using hopper::test::kind_of;
using hopper::test::message_of;

// Counts allocations while `counting` is set: Recipe::apply into a caller's buffer must not allocate
// (it runs per row at prediction time). Not under AddressSanitizer, whose own operator new checks
// every other test of this binary for mismatched new/delete.
#if defined(__SANITIZE_ADDRESS__)
#define HOPPER_COUNT_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HOPPER_COUNT_ALLOCATIONS 0
#endif
#endif
#ifndef HOPPER_COUNT_ALLOCATIONS
#define HOPPER_COUNT_ALLOCATIONS 1
#endif
static std::atomic<bool> counting{false};
static std::atomic<long> allocations{0};
#if HOPPER_COUNT_ALLOCATIONS
// Every allocating and releasing form, so that none of them mixes with the library's.
static void* counted_malloc(std::size_t n) noexcept {
    if (counting) ++allocations;
    return std::malloc(n ? n : 1);
}
void* operator new(std::size_t n) {
    if (void* p = counted_malloc(n)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return counted_malloc(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return counted_malloc(n); }
// GCC sees free() inlined where operator new's pointer is released; they do match (malloc above).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif  // HOPPER_COUNT_ALLOCATIONS

namespace {

ColumnSpec numeric(const std::string& name, Imputation impute = Imputation::Mean, ScaleKind scale = ScaleKind::None,
                   bool indicator = false) {
    ColumnSpec s;
    s.name = name;
    s.impute = impute;
    s.scale = scale;
    s.missing_indicator = indicator;
    return s;
}

ColumnSpec categorical(const std::string& name, int64_t min_frequency = 1, int64_t max_categories = 0,
                       CategoryEncoding encoding = CategoryEncoding::OneHot) {
    ColumnSpec s;
    s.name = name;
    s.kind = ColumnKind::Categorical;
    s.min_frequency = min_frequency;
    s.max_categories = max_categories;
    s.encoding = encoding;
    return s;
}

Recipe fit1(const ColumnSpec& spec, const std::vector<Cell>& values, FitLimits limits = {}) {
    RecipeFitter f({spec}, limits);
    for (const Cell& v : values) f.add({v});
    return f.finish();
}

std::vector<float> apply1(const Recipe& r, const Cell& v) { return r.apply(std::vector<Cell>{v}); }

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// A recipe of every kind, fitted on a few awkward rows.
Recipe mixed_recipe() {
    ColumnSpec depth = numeric("depth", Imputation::Median, ScaleKind::Standardize, true);
    ColumnSpec price = numeric("price", Imputation::Constant, ScaleKind::MinMax);
    price.impute_value = -0.1;
    ColumnSpec flag = numeric("flag");
    flag.kind = ColumnKind::Boolean;
    ColumnSpec day = numeric("day", Imputation::Mean, ScaleKind::Standardize);
    day.kind = ColumnKind::Date;
    ColumnSpec color = categorical("color", 2);
    ColumnSpec city = categorical("city", 1, 2, CategoryEncoding::Codes);
    ColumnSpec emb;
    emb.name = "emb";
    emb.kind = ColumnKind::Array;
    emb.scale = ScaleKind::Standardize;
    RecipeFitter f({depth, price, flag, day, color, city, emb});
    const float e[4][2] = {{0.1f, 1e-7f}, {0.2f, 3.0f}, {1.0f / 3, -2.5f}, {7.0f, 0.0f}};
    const char* colors[4] = {"red", "blue", "red", "green"};
    const char* cities[4] = {"Oslo", "Lyon", "Lyon", "Kyiv"};
    for (int i = 0; i < 4; ++i) {
        std::vector<Cell> row = {i == 1 ? Cell() : Cell(0.1 * (i + 1) + 1.0 / 3),
                                 i == 2 ? Cell() : Cell(1e6 / 3 * i),
                                 i == 3 ? Cell() : Cell(double(i % 2)),
                                 Cell(19000.5 + i * 0.25),
                                 i == 1 ? Cell() : Cell(colors[i]),
                                 Cell(cities[i]),
                                 Cell(e[i], 2)};
        f.add(row);
    }
    return f.finish();
}

std::vector<std::vector<Cell>> probe_rows() {
    static const float e[2] = {0.3f, -1e-3f};
    return {
        {Cell(2.5), Cell(0.0), Cell(1.0), Cell(19001.0), Cell("red"), Cell("Lyon"), Cell(e, 2)},
        {Cell(), Cell(), Cell(), Cell(), Cell(), Cell(), Cell(e, 2)},
        {Cell(-1e10), Cell(1e30), Cell(0.0), Cell(-3.0), Cell("violet"), Cell("Kyiv"), Cell(e, 2)},
        {Cell(0.1), Cell(0.2), Cell(1.0), Cell(0.3), Cell("green"), Cell("Oslo"), Cell(e, 2)},
    };
}

}  // namespace

// ---- numeric, boolean, date ----

TEST(Recipe, MeanImputationAndIndicator) {
    Recipe r =
        fit1(numeric("depth", Imputation::Mean, ScaleKind::None, true), {Cell(1.0), Cell(2.0), Cell(), Cell(5.0)});
    EXPECT_EQ(r.width(), 2);
    EXPECT_EQ(r.feature_names(), (std::vector<std::string>{"depth", "depth_missing"}));
    EXPECT_EQ(apply1(r, Cell()), (std::vector<float>{float(8.0 / 3), 1.0f}));
    EXPECT_EQ(apply1(r, Cell(4.0)), (std::vector<float>{4.0f, 0.0f}));
    EXPECT_EQ(apply1(r, Cell(std::optional<double>())), (std::vector<float>{float(8.0 / 3), 1.0f}));
}

TEST(Recipe, MedianImputationIsExact) {
    // Odd count: the middle value; even count: the mean of the middle two; NULLs are not values.
    Recipe odd =
        fit1(numeric("x", Imputation::Median), {Cell(9.0), Cell(), Cell(1.0), Cell(4.0), Cell(100.0), Cell(2.0)});
    EXPECT_EQ(apply1(odd, Cell())[0], 4.0f);
    Recipe even = fit1(numeric("x", Imputation::Median), {Cell(9.0), Cell(1.0), Cell(4.0), Cell(), Cell(2.0)});
    EXPECT_EQ(apply1(even, Cell())[0], 3.0f);
    Recipe one = fit1(numeric("x", Imputation::Median), {Cell(), Cell(-7.5)});
    EXPECT_EQ(apply1(one, Cell())[0], -7.5f);
}

TEST(Recipe, FinishLeavesTheFitterUsable) {
    // finish() reorders the median's values in place; later rows and a second finish still count.
    RecipeFitter f({numeric("x", Imputation::Median)});
    for (double v : {5.0, 1.0, 3.0}) f.add({Cell(v)});
    EXPECT_EQ(apply1(f.finish(), Cell())[0], 3.0f);
    for (double v : {0.0, -1.0}) f.add({Cell(v)});
    EXPECT_EQ(apply1(f.finish(), Cell())[0], 1.0f);
    EXPECT_EQ(f.finish().rows(), 5);
}

TEST(Recipe, ConstantImputation) {
    ColumnSpec s = numeric("x", Imputation::Constant);
    s.impute_value = -1.25;
    Recipe r = fit1(s, {Cell(3.0), Cell()});
    EXPECT_EQ(apply1(r, Cell())[0], -1.25f);
    s.impute_value = NAN;
    EXPECT_EQ(kind_of([&] { RecipeFitter f({s}); }), ErrorKind::InvalidParameter);
}

TEST(Recipe, ScalingSeesTheImputedColumn) {
    // 0, 2 and a NULL imputed with the mean 1: the scaler's statistics are those of {0, 2, 1}.
    Recipe r = fit1(numeric("x", Imputation::Mean, ScaleKind::Standardize), {Cell(0.0), Cell(2.0), Cell()});
    const float spread = float(std::sqrt(2.0 / 3.0));
    EXPECT_EQ(apply1(r, Cell(0.0))[0], (0.0f - 1.0f) / spread);
    EXPECT_EQ(apply1(r, Cell())[0], 0.0f);
    // A constant outside the values widens the min-max range.
    ColumnSpec m = numeric("x", Imputation::Constant, ScaleKind::MinMax);
    m.impute_value = 10.0;
    Recipe mm = fit1(m, {Cell(0.0), Cell(2.0), Cell()});
    EXPECT_EQ(apply1(mm, Cell())[0], 1.0f);
    EXPECT_EQ(apply1(mm, Cell(2.0))[0], 0.2f);
}

TEST(Recipe, ScalingIsPackingsScaling) {
    // The same values through packing's FeatureStats/FeatureScaling give the same floats.
    std::vector<float> v = {0.5f, 3.25f, -1.0f, 7.0f, 0.1f};
    FeatureStats stats(1);
    std::vector<Cell> cells;
    for (float x : v) {
        stats.add(&x);
        cells.emplace_back(double(x));
    }
    for (ScaleKind k : {ScaleKind::Standardize, ScaleKind::MinMax}) {
        FeatureScaling s = FeatureScaling::from_stats(k, 1.0, stats);
        Recipe r = fit1(numeric("x", Imputation::Mean, k), cells);
        for (float x : v) {
            float expect = x;
            s.apply(&expect, 1);
            EXPECT_EQ(apply1(r, Cell(double(x)))[0], expect);
        }
    }
}

TEST(Recipe, BooleansAndDates) {
    ColumnSpec b = numeric("flag");
    b.kind = ColumnKind::Boolean;
    Recipe r = fit1(b, {Cell(1.0), Cell(0.0), Cell(1.0), Cell(1.0), Cell()});
    EXPECT_EQ(apply1(r, Cell())[0], 0.75f);  // the share of true
    EXPECT_EQ(apply1(r, Cell(0.0))[0], 0.0f);
    EXPECT_EQ(kind_of([&] { fit1(b, {Cell(2.0)}); }), ErrorKind::Data);
    EXPECT_NE(message_of([&] { apply1(r, Cell(0.5)); }).find("\"flag\""), std::string::npos);

    ColumnSpec d = numeric("day");
    d.kind = ColumnKind::Date;
    Recipe days = fit1(d, {Cell(19000.0), Cell(19002.0), Cell()});
    EXPECT_EQ(apply1(days, Cell())[0], 19001.0f);
    EXPECT_NE(days.to_json().find("\"kind\":\"date\""), std::string::npos);
}

TEST(Recipe, NonFiniteValuesAreRefusedNamingTheColumn) {
    for (double bad : {double(NAN), double(INFINITY), -double(INFINITY), 1e300}) {
        EXPECT_EQ(kind_of([&] { fit1(numeric("depth"), {Cell(1.0), Cell(bad)}); }), ErrorKind::Data);
        EXPECT_NE(message_of([&] { fit1(numeric("depth"), {Cell(bad)}); }).find("\"depth\""), std::string::npos);
    }
    Recipe r = fit1(numeric("depth"), {Cell(1.0)});
    EXPECT_EQ(kind_of([&] { apply1(r, Cell(double(NAN))); }), ErrorKind::Data);
    // Finite in, infinite out: a value far beyond a tiny fitted range.
    Recipe tiny = fit1(numeric("depth", Imputation::Mean, ScaleKind::MinMax), {Cell(0.0), Cell(1e-6)});
    EXPECT_EQ(message_of([&] { apply1(tiny, Cell(3e38)); }),
              "a value of column \"depth\" is out of range after scaling");
}

TEST(Recipe, AllNullColumnIsRefused) {
    EXPECT_EQ(message_of([&] {
                  fit1(numeric("depth"), {Cell(), Cell()});
              }),
              "column \"depth\" is NULL in every row packed");
    EXPECT_EQ(message_of([&] {
                  fit1(categorical("color"), {Cell(), Cell()});
              }),
              "column \"color\" is NULL in every row packed");
    ColumnSpec c = numeric("depth", Imputation::Constant);
    EXPECT_EQ(kind_of([&] { fit1(c, {Cell()}); }), ErrorKind::Data);
}

// ---- categorical ----

TEST(Recipe, OneHotWithOtherNullAndUnknown) {
    // min_frequency 2: "green" (once) goes to <other>; NULL is its own category.
    Recipe r = fit1(categorical("color", 2),
                    {Cell("red"), Cell("blue"), Cell("red"), Cell("green"), Cell(), Cell("blue"), Cell("red")});
    EXPECT_EQ(r.feature_names(), (std::vector<std::string>{"color=blue", "color=red", "color=<other>", "color=<null>",
                                                           "color=<unknown>"}));
    EXPECT_EQ(r.categories("color"), (std::vector<std::string>{"blue", "red"}));
    EXPECT_EQ(apply1(r, Cell("red")), (std::vector<float>{0, 1, 0, 0, 0}));
    EXPECT_EQ(apply1(r, Cell("blue")), (std::vector<float>{1, 0, 0, 0, 0}));
    EXPECT_EQ(apply1(r, Cell("green")), (std::vector<float>{0, 0, 1, 0, 0}));  // rare: other
    EXPECT_EQ(apply1(r, Cell()), (std::vector<float>{0, 0, 0, 1, 0}));         // NULL
    // Never seen: no slot (handle_unknown='ignore'); "<unknown>" stays 0.
    EXPECT_EQ(apply1(r, Cell("violet")), (std::vector<float>{0, 0, 0, 0, 0}));
    EXPECT_EQ(apply1(r, Cell("Red")), (std::vector<float>{0, 0, 0, 0, 0}));  // bytes, not case
    EXPECT_EQ(apply1(r, Cell(std::optional<std::string>("red"))), (std::vector<float>{0, 1, 0, 0, 0}));
}

TEST(Recipe, WithoutNullsOrRareValuesThoseSlotsAreAbsent) {
    Recipe r = fit1(categorical("c"), {Cell("a"), Cell("b")});
    EXPECT_EQ(r.feature_names(), (std::vector<std::string>{"c=a", "c=b", "c=<unknown>"}));
    EXPECT_EQ(apply1(r, Cell()), (std::vector<float>{0, 0, 0}));  // NULL never seen: unknown, no slot
}

TEST(Recipe, MaxCategoriesBreaksTiesByValue) {
    // Counts: z 3, b 2, a 2, c 2, y 1. Two kept: z and then a (the first of the tied by value).
    std::vector<Cell> rows = {Cell("c"), Cell("z"), Cell("b"), Cell("a"), Cell("z"),
                              Cell("y"), Cell("c"), Cell("b"), Cell("a"), Cell("z")};
    Recipe r = fit1(categorical("k", 1, 2), rows);
    EXPECT_EQ(r.categories("k"), (std::vector<std::string>{"a", "z"}));
    EXPECT_EQ(apply1(r, Cell("b")), (std::vector<float>{0, 0, 1, 0}));  // dropped: other
    // Row order does not matter.
    std::vector<Cell> reversed(rows.rbegin(), rows.rend());
    EXPECT_EQ(fit1(categorical("k", 1, 2), reversed).to_json(), r.to_json());
}

TEST(Recipe, OneCategoryIsNotAnErrorForAFeature) {
    Recipe r = fit1(categorical("c"), {Cell("only"), Cell("only")});
    EXPECT_EQ(r.feature_names(), (std::vector<std::string>{"c=only", "c=<unknown>"}));
    // Everything rare: only <other> and <unknown>.
    Recipe rare = fit1(categorical("c", 5), {Cell("a"), Cell("b")});
    EXPECT_EQ(rare.feature_names(), (std::vector<std::string>{"c=<other>", "c=<unknown>"}));
}

TEST(Recipe, IntegerCodesForAnEmbedding) {
    ColumnSpec x = numeric("x");
    ColumnSpec c = categorical("city", 1, 2, CategoryEncoding::Codes);
    RecipeFitter f({x, c});
    const char* cities[] = {"Oslo", "Lyon", "Lyon", "Kyiv", "Oslo"};
    for (int i = 0; i < 5; ++i) f.add({Cell(double(i)), i == 4 ? Cell() : Cell(cities[i])});
    Recipe r = f.finish();
    EXPECT_EQ(r.width(), 2);
    EXPECT_EQ(r.feature_names(), (std::vector<std::string>{"x", "city"}));
    // Kept: Lyon (2) and Kyiv (1, before Oslo by value), in value order; then other, null, unknown.
    const std::vector<EmbeddingInput> e = r.embeddings();
    ASSERT_EQ(e.size(), 1u);
    EXPECT_EQ(e[0].column, "city");
    EXPECT_EQ(e[0].slot, 1);
    EXPECT_EQ(e[0].vocabulary, 5);
    EXPECT_EQ(r.apply({Cell(0.0), Cell("Kyiv")})[1], 0.0f);
    EXPECT_EQ(r.apply({Cell(0.0), Cell("Lyon")})[1], 1.0f);
    EXPECT_EQ(r.apply({Cell(0.0), Cell("Oslo")})[1], 2.0f);  // rare: other
    EXPECT_EQ(r.apply({Cell(0.0), Cell()})[1], 3.0f);
    EXPECT_EQ(r.apply({Cell(0.0), Cell("Rome")})[1], 4.0f);
}

TEST(Recipe, CategoricalOptionsAreChecked) {
    ColumnSpec c = categorical("c");
    c.scale = ScaleKind::Standardize;
    EXPECT_EQ(kind_of([&] { RecipeFitter f({c}); }), ErrorKind::InvalidParameter);
    c = categorical("c", 0);
    EXPECT_EQ(kind_of([&] { RecipeFitter f({c}); }), ErrorKind::InvalidParameter);
    c = categorical("c", 1, -1);
    EXPECT_EQ(kind_of([&] { RecipeFitter f({c}); }), ErrorKind::InvalidParameter);
    c = categorical("c");
    c.missing_indicator = true;
    EXPECT_EQ(kind_of([&] { RecipeFitter f({c}); }), ErrorKind::InvalidParameter);
    EXPECT_EQ(kind_of([&] { fit1(categorical("c"), {Cell(1.0)}); }), ErrorKind::Internal);  // the port's mistake
    EXPECT_EQ(kind_of([&] { fit1(categorical("c"), {Cell(std::string("a\xff"))}); }), ErrorKind::Data);
}

// ---- arrays ----

TEST(Recipe, ArraysPassThroughOrScale) {
    ColumnSpec a;
    a.name = "v";
    a.kind = ColumnKind::Array;
    const float r1[3] = {1, 2, 3}, r2[3] = {3, 2, 1};
    Recipe plain = fit1(a, {Cell(r1, 3), Cell(r2, 3)});
    EXPECT_EQ(plain.feature_names(), (std::vector<std::string>{"v[1]", "v[2]", "v[3]"}));
    EXPECT_EQ(apply1(plain, Cell(r2, 3)), (std::vector<float>{3, 2, 1}));
    a.scale = ScaleKind::MinMax;
    Recipe scaled = fit1(a, {Cell(r1, 3), Cell(r2, 3)});
    EXPECT_EQ(apply1(scaled, Cell(r2, 3)), (std::vector<float>{1, 0, 0}));  // constant element: centred
    const float short_row[2] = {1, 2};
    EXPECT_EQ(kind_of([&] { apply1(plain, Cell(short_row, 2)); }), ErrorKind::Data);
    EXPECT_EQ(kind_of([&] { apply1(plain, Cell()); }), ErrorKind::Data);
    EXPECT_EQ(kind_of([&] { fit1(a, {Cell(r1, 3), Cell(short_row, 2)}); }), ErrorKind::Data);
    a.width = 2;
    EXPECT_EQ(kind_of([&] { fit1(a, {Cell(r1, 3)}); }), ErrorKind::Data);
    const float nan_row[3] = {1, NAN, 3};
    EXPECT_EQ(kind_of([&] { apply1(plain, Cell(nan_row, 3)); }), ErrorKind::Data);
}

// ---- the whole row ----

TEST(Recipe, FitterRefusesBadSpecs) {
    EXPECT_EQ(message_of([&] { RecipeFitter f({}); }), "a recipe needs at least one column");
    EXPECT_EQ(kind_of([&] { RecipeFitter f({numeric("a"), numeric("a")}); }), ErrorKind::InvalidParameter);
    EXPECT_EQ(kind_of([&] { RecipeFitter f({numeric("")}); }), ErrorKind::InvalidParameter);
    RecipeFitter f({numeric("a")});
    EXPECT_EQ(message_of([&] { f.finish(); }), "no rows to fit a recipe on");
    EXPECT_EQ(kind_of([&] { f.add({Cell(1.0), Cell(2.0)}); }), ErrorKind::Internal);
}

TEST(Recipe, ApplyIsDeterministicAndDoesNotAllocate) {
    const Recipe r = mixed_recipe();
    std::vector<float> out(std::size_t(r.width())), again(std::size_t(r.width()));
    for (const auto& row : probe_rows()) {
        allocations = 0;
        counting = true;
        r.apply(row.data(), row.size(), out.data());
        r.apply(row.data(), row.size(), again.data());
        counting = false;
        if (HOPPER_COUNT_ALLOCATIONS) { EXPECT_EQ(allocations.load(), 0); }
        EXPECT_TRUE(same_bits(out, again));
    }
    // A second fit on the same rows gives the same recipe.
    EXPECT_EQ(mixed_recipe().to_json(), r.to_json());
}

TEST(Recipe, JsonRoundTripIsExact) {
    const Recipe r = mixed_recipe();
    const std::string text = r.to_json();
    const Recipe back = Recipe::from_json(text);
    EXPECT_EQ(back.to_json(), text);
    EXPECT_EQ(back.width(), r.width());
    EXPECT_EQ(back.rows(), 4);
    EXPECT_EQ(back.feature_names(), r.feature_names());
    EXPECT_EQ(back.column_names(), r.column_names());
    ASSERT_EQ(back.embeddings().size(), 1u);
    EXPECT_EQ(back.embeddings()[0].vocabulary, r.embeddings()[0].vocabulary);
    for (const auto& row : probe_rows()) EXPECT_TRUE(same_bits(back.apply(row), r.apply(row)));
}

TEST(Recipe, FloatsSurviveJsonBitForBit) {
    // Imputed values and scales that have no short decimal form.
    for (double v : {0.1, 1.0 / 3, 1e-7, 123456.789, -2.5e-38, 3.0e38}) {
        ColumnSpec s = numeric("x", Imputation::Constant, ScaleKind::Standardize);
        s.impute_value = v;
        Recipe r = fit1(s, {Cell(v * 0.7), Cell(), Cell(v * 0.9)});
        Recipe back = Recipe::from_json(r.to_json());
        for (double probe : {0.0, v, 0.8 * v, 1.0})
            EXPECT_TRUE(same_bits(apply1(back, Cell(probe)), apply1(r, Cell(probe)))) << v;
        EXPECT_TRUE(same_bits(apply1(back, Cell()), apply1(r, Cell())));
    }
}

// ---- memory ----

TEST(Recipe, VocabularyCapNamesTheColumn) {
    FitLimits limits;
    limits.max_distinct = 3;
    RecipeFitter f({numeric("x"), categorical("user_id")}, limits);
    for (int i = 0; i < 3; ++i) f.add({Cell(1.0), Cell(std::to_string(i))});
    f.add({Cell(1.0), Cell("0")});  // seen: no new value
    try {
        f.add({Cell(1.0), Cell("3")});
        ADD_FAILURE() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Limit);
        EXPECT_EQ(e.message(), "column \"user_id\" has more than 3 distinct values");
    }
}

TEST(Recipe, MemoryEstimateBoundsTheState) {
    std::vector<ColumnSpec> specs = {numeric("m", Imputation::Median), numeric("n"), categorical("c")};
    const int64_t rows = 5000, distinct = 700;
    RecipeFitter f(specs);
    for (int64_t i = 0; i < rows; ++i)
        f.add({Cell(double(i)), Cell(1.0), Cell("a fairly long category " + std::to_string(i % distinct))});
    const uint64_t estimate = RecipeFitter::estimate_bytes(specs, rows, {0, 0, distinct}, 28.0);
    EXPECT_GE(estimate, f.bytes_used());
    EXPECT_LE(estimate, 3 * f.bytes_used());  // an estimate, not a wild bound
    // The estimate of the cap's worth of values is what max_bytes must allow.
    EXPECT_GT(RecipeFitter::estimate_bytes({categorical("c")}, 1, {FitLimits{}.max_distinct}, 8.0), 50000000u);

    FitLimits limits;
    limits.max_bytes = 16384;
    RecipeFitter g({numeric("m", Imputation::Median)}, limits);
    try {
        for (int i = 0; i < 100000; ++i) g.add({Cell(double(i))});
        ADD_FAILURE() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Limit);
        EXPECT_NE(e.detail().find("\"m\""), std::string::npos);
    }
}

// ---- hostile JSON ----

TEST(Recipe, HostileJsonIsRefusedClearly) {
    const std::string good = mixed_recipe().to_json();
    auto replaced = [&](const std::string& from, const std::string& to) {
        std::string s = good;
        auto p = s.find(from);
        EXPECT_NE(p, std::string::npos) << from;
        return s.replace(p, from.size(), to);
    };
    struct Case {
        std::string text;
        ErrorKind kind;
    };
    const std::vector<Case> cases = {
        {"", ErrorKind::Syntax},
        {"{", ErrorKind::Syntax},
        {"[]", ErrorKind::Data},
        {"null", ErrorKind::Data},
        {good.substr(0, good.size() / 2), ErrorKind::Syntax},
        {std::string(100, '[') + std::string(100, ']'), ErrorKind::Syntax},
        {replaced("\"version\":1", "\"version\":2"), ErrorKind::Data},
        {replaced("\"version\":1", "\"version\":\"1\""), ErrorKind::Data},
        {replaced("\"format\":\"hopper.recipe\"", "\"format\":\"hopper.model\""), ErrorKind::Data},
        {replaced("\"width\":", "\"extra\":1,\"width\":"), ErrorKind::Data},
        {replaced("\"width\":", "\"width\":1,\"width\":"), ErrorKind::InvalidParameter},  // duplicate key
        {replaced("\"rows\":4", "\"rows\":-4"), ErrorKind::Data},
        {replaced("\"rows\":4", "\"rows\":1e999"), ErrorKind::Syntax},
        {replaced("\"kind\":\"numeric\"", "\"kind\":\"complex\""), ErrorKind::Data},
        {replaced("\"name\":\"depth\"", "\"name\":\"price\""), ErrorKind::Data},  // a name twice
        {replaced("\"name\":\"depth\"", "\"name\":\"\""), ErrorKind::Data},
        {replaced("\"name\":\"depth\"", "\"name\":7"), ErrorKind::Data},
        {replaced("\"impute\":\"median\"", "\"impute\":\"mode\""), ErrorKind::Data},
        {replaced("\"missing_indicator\":true", "\"missing_indicator\":1"), ErrorKind::Data},
        {replaced("\"missing_indicator\":true", "\"missing_indicator\":false"), ErrorKind::Data},  // width differs
        {replaced("\"fill\":", "\"fill\":1e39,\"x\":"), ErrorKind::Data},
        {replaced("\"fill\":", "\"fill\":null,\"x\":"), ErrorKind::Data},
        {replaced("\"spread\":[", "\"spread\":[0,"), ErrorKind::Data},  // two spreads for one feature
        {replaced("\"categories\":[\"red\"]", "\"categories\":[\"red\",\"blue\"]"), ErrorKind::Data},  // unsorted
        {replaced("\"categories\":[\"red\"]", "\"categories\":[\"red\",\"red\"]"), ErrorKind::Data},
        {replaced("\"categories\":[\"red\"]", "\"categories\":[\"red\",3]"), ErrorKind::Data},
        {replaced("\"other_values\":[\"green\"]", "\"other_values\":[\"green\",\"red\"]"), ErrorKind::Data},
        {replaced("\"encoding\":\"codes\"", "\"encoding\":\"hash\""), ErrorKind::Data},
        {replaced("\"max_categories\":2", "\"max_categories\":1"), ErrorKind::Data},
        {replaced("\"kind\":\"array\",\"width\":2", "\"kind\":\"array\",\"width\":3"), ErrorKind::Data},
        {replaced("\"kind\":\"array\",\"width\":2", "\"kind\":\"array\",\"width\":2000000"), ErrorKind::Data},
        {replaced("\"columns\":[", "\"columns\":[[],"), ErrorKind::Data},
    };
    for (const Case& c : cases) {
        ErrorKind k = ErrorKind::Internal;
        try {
            Recipe::from_json(c.text);
            ADD_FAILURE() << "accepted: " << c.text;
        } catch (const Error& e) {
            k = e.kind();
            EXPECT_FALSE(e.message().empty());
        }
        EXPECT_EQ(int(k), int(c.kind)) << c.text;
    }
    EXPECT_EQ(kind_of([&] { Recipe::from_json(std::string(kMaxRecipeJsonBytes + 1, ' ')); }), ErrorKind::Limit);
}

// ---- the target ----

TEST(RecipeTarget, ClassesSortedAsPreprocessSortsThem) {
    TargetFitter text("species", TargetKind::Classification);
    for (const char* v : {"versicolor", "setosa", "virginica", "setosa", "Zebra"}) EXPECT_TRUE(text.add(Cell(v)));
    EXPECT_FALSE(text.add(Cell()));
    Target t = text.finish();
    EXPECT_EQ(t.classes(), (std::vector<std::string>{"Zebra", "setosa", "versicolor", "virginica"}));  // bytes
    EXPECT_EQ(t.skipped(), 1);
    EXPECT_EQ(t.rows(), 5);

    TargetFitter num("digit", TargetKind::Classification, ClassOrder::Numeric);
    for (const char* v : {"10", "9", "-1", "2", "10"}) num.add(Cell(v));
    EXPECT_EQ(num.finish().classes(), (std::vector<std::string>{"-1", "2", "9", "10"}));  // ORDER BY of an integer
    EXPECT_EQ(kind_of([&] { num.add(Cell("ten")); }), ErrorKind::Data);

    TargetFitter b("ok", TargetKind::Classification);
    for (const char* v : {"t", "f"}) b.add(Cell(v));
    EXPECT_EQ(b.finish().classes(), (std::vector<std::string>{"f", "t"}));  // false before true
}

TEST(RecipeTarget, EncodeOneHotAndRegression) {
    TargetFitter f("y", TargetKind::Classification, ClassOrder::Numeric);
    for (const char* v : {"3", "1", "2"}) f.add(Cell(v));
    Target t = f.finish();
    float out[3];
    ASSERT_TRUE(t.encode(Cell("2"), out));
    EXPECT_EQ(std::vector<float>(out, out + 3), (std::vector<float>{0, 1, 0}));
    EXPECT_EQ(t.class_index("3"), 2);
    EXPECT_EQ(t.class_index("4"), -1);
    EXPECT_FALSE(t.encode(Cell(), out));
    EXPECT_EQ(kind_of([&] { t.encode(Cell("4"), out); }), ErrorKind::Data);

    TargetFitter g("price", TargetKind::Regression);
    g.add(Cell(2.5));
    g.add(Cell());
    Target r = g.finish();
    EXPECT_EQ(r.width(), 1);
    ASSERT_TRUE(r.encode(Cell(0.1), out));
    EXPECT_EQ(out[0], 0.1f);
    EXPECT_EQ(kind_of([&] { g.add(Cell(double(INFINITY))); }), ErrorKind::Data);
    EXPECT_EQ(kind_of([&] { g.add(Cell(1e39)); }), ErrorKind::Data);
    EXPECT_EQ(kind_of([&] { r.encode(Cell(-1e39), out); }), ErrorKind::Data);
}

TEST(RecipeTarget, RefusesOneClassNoRowsAndTooManyClasses) {
    TargetFitter one("y", TargetKind::Classification);
    one.add(Cell("a"));
    one.add(Cell("a"));
    EXPECT_EQ(message_of([&] { one.finish(); }), "classification needs at least two classes");
    TargetFitter none("y", TargetKind::Regression);
    none.add(Cell());
    EXPECT_EQ(message_of([&] { none.finish(); }), "dependent column \"y\" is NULL in every row");
    TargetFitter many("y", TargetKind::Classification, ClassOrder::Text, 3);
    for (const char* v : {"a", "b", "c", "a"}) many.add(Cell(v));
    EXPECT_EQ(kind_of([&] { many.add(Cell("d")); }), ErrorKind::Limit);
}

TEST(RecipeTarget, JsonRoundTripAndHostileJson) {
    TargetFitter f("y", TargetKind::Classification, ClassOrder::Numeric);
    for (const char* v : {"10", "9", "1.5"}) f.add(Cell(v));
    f.add(Cell());
    const Target t = f.finish();
    const std::string text = t.to_json();
    const Target back = Target::from_json(text);
    EXPECT_EQ(back.to_json(), text);
    EXPECT_EQ(back.classes(), t.classes());
    EXPECT_EQ(back.class_index("10"), 2);
    EXPECT_EQ(back.skipped(), 1);

    TargetFitter g("v", TargetKind::Regression);
    g.add(Cell(1.0));
    EXPECT_EQ(Target::from_json(g.finish().to_json()).kind(), TargetKind::Regression);

    auto replaced = [&](const std::string& from, const std::string& to) {
        std::string s = text;
        auto p = s.find(from);
        EXPECT_NE(p, std::string::npos) << from;
        return s.replace(p, from.size(), to);
    };
    for (const std::string& bad :
         {replaced("[\"1.5\",\"9\",\"10\"]", "[\"9\",\"1.5\",\"10\"]"), replaced("[\"1.5\",\"9\",\"10\"]", "[\"1.5\"]"),
          replaced("[\"1.5\",\"9\",\"10\"]", "[\"1.5\",\"x\"]"),
          replaced("\"kind\":\"classification\"", "\"kind\":\"ranking\""),
          replaced("\"order\":\"numeric\"", "\"order\":\"text\""), replaced("\"version\":1", "\"version\":7"),
          replaced("\"skipped\":1", "\"skipped\":1,\"more\":2"), std::string("{\"format\":\"hopper.target\"}")})
        EXPECT_EQ(kind_of([&] { Target::from_json(bad); }), ErrorKind::Data) << bad;
}
