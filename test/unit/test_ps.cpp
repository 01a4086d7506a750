// Parameter-server core: key validation, chunk arithmetic, consistency rules, layout, allocation and
// the checkpoint format.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "hopper/error.h"
#include "hopper/ps.h"

using namespace hopper;
using namespace hopper::ps;

namespace {

template <typename F>
Error error_of(F&& f) {
    try {
        f();
    } catch (const Error& e) { return e; }
    ADD_FAILURE() << "no hopper::Error thrown";
    return Error(ErrorKind::Internal, "none");
}

std::vector<int64_t> offsets(const KeySpace& ks, std::vector<int64_t> keys) {
    std::vector<int64_t> out(keys.size());
    ks.offsets(keys.data(), keys.size(), out.data());
    return out;
}

std::vector<Span> spans(const KeySpace& ks, int64_t cs, std::vector<int64_t> ids, int64_t* total) {
    return chunk_spans(ks, cs, ids.data(), ids.size(), total);
}

}  // namespace

TEST(PsConsistency, ParsesNamesInAnyCase) {
    EXPECT_EQ(parse_consistency("bsp"), Consistency::BSP);
    EXPECT_EQ(parse_consistency(" SSP "), Consistency::SSP);
    EXPECT_EQ(parse_consistency("Asp"), Consistency::ASP);
    Error e = error_of([] { parse_consistency("eventual"); });
    EXPECT_EQ(e.kind(), ErrorKind::InvalidParameter);
    EXPECT_EQ(e.message(), "unknown consistency \"eventual\"");
    EXPECT_FALSE(e.hint().empty());
    EXPECT_STREQ(consistency_name(Consistency::SSP), "ssp");
}

TEST(PsKeySpace, ContiguousMapsKeysToThemselves) {
    KeySpace ks = KeySpace::contiguous(10);
    EXPECT_EQ(ks.size(), 10);
    EXPECT_TRUE(ks.offsets_are_keys());
    EXPECT_EQ(offsets(ks, {0, 3, 9}), (std::vector<int64_t>{0, 3, 9}));
    EXPECT_EQ(offsets(ks, {}), (std::vector<int64_t>{}));
    EXPECT_EQ(ks.describe(), "[0,10)");
}

TEST(PsKeySpace, RejectsBadSizes) {
    EXPECT_EQ(error_of([] { KeySpace::contiguous(0); }).message(), "num_keys must be at least 1");
    EXPECT_EQ(error_of([] { KeySpace::contiguous(-5); }).kind(), ErrorKind::InvalidParameter);
    EXPECT_EQ(error_of([] { KeySpace::contiguous(int64_t(1) << 41); }).kind(), ErrorKind::InvalidParameter);
    EXPECT_EQ(error_of([] { KeySpace::from_ranges({}); }).message(), "key_ranges must contain at least one range");
    EXPECT_EQ(error_of([] { KeySpace::from_ranges({{5, 5}}); }).message(), "key ranges must not be empty");
    Error overlap = error_of([] { KeySpace::from_ranges({{0, 10}, {5, 20}}); });
    EXPECT_EQ(overlap.message(), "key ranges must not overlap");
    EXPECT_EQ(overlap.detail(), "[0,10) and [5,20) overlap.");
    // Absurdly wide ranges fail cleanly instead of overflowing.
    const int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
    EXPECT_EQ(error_of([&] { KeySpace::from_ranges({{lo, hi}}); }).kind(), ErrorKind::InvalidParameter);
    EXPECT_EQ(error_of([&] { KeySpace::from_ranges({{0, 1}, {1, hi}}); }).kind(), ErrorKind::InvalidParameter);
}

TEST(PsKeySpace, RangesAreSortedAndTouchingOnesMerged) {
    KeySpace ks = KeySpace::from_ranges({{100, 110}, {0, 5}, {5, 8}});
    ASSERT_EQ(ks.ranges().size(), 2u);
    EXPECT_EQ(ks.ranges()[0], (KeyRange{0, 8}));
    EXPECT_EQ(ks.ranges()[1], (KeyRange{100, 110}));
    EXPECT_EQ(ks.size(), 18);
    EXPECT_FALSE(ks.offsets_are_keys());
    EXPECT_EQ(offsets(ks, {0, 7, 100, 109}), (std::vector<int64_t>{0, 7, 8, 17}));
    EXPECT_TRUE(ks.contains(7));
    EXPECT_FALSE(ks.contains(8));
    EXPECT_FALSE(ks.contains(99));
    EXPECT_TRUE(ks.contains(100));
    EXPECT_FALSE(ks.contains(110));
    EXPECT_EQ(ks.describe(), "[0,8) [100,110)");
}

TEST(PsKeySpace, NegativeAndNonZeroBasedRanges) {
    KeySpace ks = KeySpace::from_ranges({{-10, -5}, {1000, 1002}});
    EXPECT_EQ(offsets(ks, {-10, -6, 1000, 1001}), (std::vector<int64_t>{0, 4, 5, 6}));
    KeySpace one = KeySpace::from_ranges({{50, 60}});
    EXPECT_EQ(offsets(one, {50, 59}), (std::vector<int64_t>{0, 9}));
    EXPECT_EQ(error_of([&] { offsets(one, {49}); }).message(), "key 49 is out of range");
}

TEST(PsKeySpace, ManyRangesAreAbbreviated) {
    std::vector<KeyRange> r;
    for (int i = 0; i < 10; ++i) r.push_back({i * 10, i * 10 + 2});
    EXPECT_EQ(KeySpace::from_ranges(r).describe(), "[0,2) [10,12) [20,22) [30,32) ... (10 ranges)");
}

TEST(PsKeys, UnsortedAndDuplicateKeysAreRejected) {
    KeySpace ks = KeySpace::contiguous(100);
    Error e = error_of([&] { offsets(ks, {1, 5, 3}); });
    EXPECT_EQ(e.kind(), ErrorKind::InvalidParameter);
    EXPECT_EQ(e.message(), "keys must be sorted in ascending order without duplicates");
    EXPECT_EQ(e.detail(), "keys[3] = 3 follows keys[2] = 5.");
    Error d = error_of([&] { offsets(ks, {1, 1}); });
    EXPECT_EQ(d.detail(), "keys[2] = 1 repeats keys[1] = 1.");
    // The same on a ranged key space.
    KeySpace rs = KeySpace::from_ranges({{0, 10}, {20, 30}});
    EXPECT_EQ(error_of([&] { offsets(rs, {21, 2}); }).detail(), "keys[2] = 2 follows keys[1] = 21.");
}

TEST(PsKeys, OutOfRangeKeysAreRejectedAtEitherEnd) {
    KeySpace ks = KeySpace::contiguous(100);
    Error hi = error_of([&] { offsets(ks, {1, 100}); });
    EXPECT_EQ(hi.message(), "key 100 is out of range");
    EXPECT_EQ(hi.detail(), "keys[2] is not in the table's keys [0,100).");
    Error lo = error_of([&] { offsets(ks, {-1, 5}); });
    EXPECT_EQ(lo.message(), "key -1 is out of range");
    EXPECT_EQ(lo.detail(), "keys[1] is not in the table's keys [0,100).");
    // Keys in a gap between ranges.
    KeySpace rs = KeySpace::from_ranges({{0, 10}, {20, 30}});
    Error gap = error_of([&] { offsets(rs, {5, 15, 25}); });
    EXPECT_EQ(gap.message(), "key 15 is out of range");
    EXPECT_EQ(gap.detail(), "keys[2] is not in the table's keys [0,10) [20,30).");
    EXPECT_EQ(error_of([&] { offsets(rs, {30}); }).message(), "key 30 is out of range");
    // validate() agrees with offsets().
    std::vector<int64_t> bad{3, 2};
    EXPECT_EQ(error_of([&] { rs.validate(bad.data(), bad.size()); }).kind(), ErrorKind::InvalidParameter);
    std::vector<int64_t> good{0, 29};
    EXPECT_NO_THROW(rs.validate(good.data(), good.size()));
    // The argument name appears in messages.
    std::vector<int64_t> dup{4, 4};
    EXPECT_EQ(error_of([&] { ks.validate(dup.data(), 2, "ids"); }).message(),
              "ids must be sorted in ascending order without duplicates");
}

TEST(PsChunks, ContiguousChunksWithAShortLastChunk) {
    KeySpace ks = KeySpace::contiguous(10);
    ChunkRange cr = chunk_range(ks, 4);
    EXPECT_EQ(cr.count, 3);
    EXPECT_EQ(cr.first, 0);
    EXPECT_EQ(cr.last, 2);
    int64_t total = 0;
    EXPECT_EQ(spans(ks, 4, {0}, &total), (std::vector<Span>{{0, 4}}));
    EXPECT_EQ(total, 4);
    EXPECT_EQ(spans(ks, 4, {2}, &total), (std::vector<Span>{{8, 2}}));
    EXPECT_EQ(total, 2);
    // Adjacent chunks merge into one span; separated ones do not.
    EXPECT_EQ(spans(ks, 4, {0, 1, 2}, &total), (std::vector<Span>{{0, 10}}));
    EXPECT_EQ(total, 10);
    EXPECT_EQ(spans(ks, 4, {0, 2}, &total), (std::vector<Span>{{0, 4}, {8, 2}}));
    EXPECT_EQ(total, 6);
    EXPECT_EQ(spans(ks, 4, {}, &total), (std::vector<Span>{}));
    EXPECT_EQ(total, 0);
}

TEST(PsChunks, ErrorsNameTheChunk) {
    KeySpace ks = KeySpace::contiguous(10);
    int64_t total = 0;
    Error e = error_of([&] { spans(ks, 4, {3}, &total); });
    EXPECT_EQ(e.message(), "chunk 3 is out of range");
    EXPECT_EQ(e.detail(), "chunk_ids[1] holds no key of the table; its chunks are 0 to 2 (chunk_size 4).");
    EXPECT_EQ(error_of([&] { spans(ks, 4, {-1}, &total); }).message(), "chunk -1 is out of range");
    Error order = error_of([&] { spans(ks, 4, {1, 0}, &total); });
    EXPECT_EQ(order.message(), "chunk_ids must be sorted in ascending order without duplicates");
    EXPECT_EQ(error_of([&] { spans(ks, 4, {1, 1}, &total); }).detail(), "chunk_ids[2] = 1 repeats chunk_ids[1] = 1.");
    // Huge ids do not overflow.
    EXPECT_EQ(error_of([&] { spans(ks, 4, {std::numeric_limits<int64_t>::max()}, &total); }).kind(),
              ErrorKind::InvalidParameter);
    EXPECT_EQ(error_of([&] { spans(ks, 1 << 30, {std::numeric_limits<int64_t>::min()}, &total); }).kind(),
              ErrorKind::InvalidParameter);
}

TEST(PsChunks, ChunksOverKeyRanges) {
    // keys [2,6) and [9,12), chunk_size 4: chunk 0 = {2,3}, chunk 1 = {4,5}, chunk 2 = {9,10,11}.
    KeySpace ks = KeySpace::from_ranges({{2, 6}, {9, 12}});
    ChunkRange cr = chunk_range(ks, 4);
    EXPECT_EQ(cr.count, 3);
    EXPECT_EQ(cr.first, 0);
    EXPECT_EQ(cr.last, 2);
    int64_t total = 0;
    EXPECT_EQ(spans(ks, 4, {0}, &total), (std::vector<Span>{{0, 2}}));
    EXPECT_EQ(spans(ks, 4, {0, 1}, &total), (std::vector<Span>{{0, 4}}));
    EXPECT_EQ(total, 4);
    EXPECT_EQ(spans(ks, 4, {2}, &total), (std::vector<Span>{{4, 3}}));
    // A chunk spanning a gap: chunk_size 8, chunk 0 = {2..5}, chunk 1 = {9,10,11}; one span in all.
    EXPECT_EQ(spans(ks, 8, {0, 1}, &total), (std::vector<Span>{{0, 7}}));
    EXPECT_EQ(total, 7);
    // A chunk id inside the id range but holding no key.
    KeySpace far = KeySpace::from_ranges({{0, 2}, {100, 102}});
    EXPECT_EQ(chunk_range(far, 10).count, 2);
    Error e = error_of([&] { spans(far, 10, {5}, &total); });
    EXPECT_EQ(e.message(), "chunk 5 is out of range");
    EXPECT_EQ(e.detail(), "chunk_ids[1] holds no key of the table; its keys are [0,2) [100,102) (chunk_size 10).");
    // Two ranges sharing one chunk count it once.
    EXPECT_EQ(chunk_range(KeySpace::from_ranges({{0, 2}, {3, 5}}), 10).count, 1);
}

TEST(PsChunks, NegativeKeysUseFloorDivision) {
    EXPECT_EQ(floor_div(-1, 4), -1);
    EXPECT_EQ(floor_div(-4, 4), -1);
    EXPECT_EQ(floor_div(-5, 4), -2);
    EXPECT_EQ(floor_div(7, 4), 1);
    KeySpace ks = KeySpace::from_ranges({{-6, 2}});
    ChunkRange cr = chunk_range(ks, 4);
    EXPECT_EQ(cr.first, -2);
    EXPECT_EQ(cr.last, 0);
    int64_t total = 0;
    EXPECT_EQ(spans(ks, 4, {-2}, &total), (std::vector<Span>{{0, 2}}));  // keys -6, -5
    EXPECT_EQ(spans(ks, 4, {-1, 0}, &total), (std::vector<Span>{{2, 6}}));
}

TEST(PsSettings, ValidatesEverySetting) {
    auto make = [](std::string name, int64_t keys, int64_t cs, std::string c, std::optional<int64_t> s, int64_t w,
                   double init = 0) {
        return make_settings(std::move(name), KeySpace::contiguous(keys), cs, c, s, w, init);
    };
    TableSettings ok = make("t", 10, 2, "ssp", 3, 4, 0.5);
    EXPECT_EQ(ok.consistency, Consistency::SSP);
    EXPECT_EQ(ok.staleness, 3);
    EXPECT_EQ(ok.num_workers, 4);
    EXPECT_FLOAT_EQ(ok.init_value, 0.5f);
    EXPECT_EQ(make("t", 10, 1, "bsp", std::nullopt, 1).staleness, 0);
    EXPECT_EQ(make("t", 10, 1, "asp", 0, 1).staleness, 0);

    EXPECT_EQ(error_of([&] { make("", 10, 1, "bsp", {}, 1); }).kind(), ErrorKind::InvalidName);
    EXPECT_EQ(error_of([&] { make(std::string(64, 'x'), 10, 1, "bsp", {}, 1); }).kind(), ErrorKind::NameTooLong);
    EXPECT_NO_THROW(make(std::string(63, 'x'), 10, 1, "bsp", {}, 1));
    EXPECT_EQ(error_of([&] { make(std::string("a\0b", 3), 10, 1, "bsp", {}, 1); }).kind(), ErrorKind::InvalidName);
    EXPECT_EQ(error_of([&] { make("t", 10, 0, "bsp", {}, 1); }).message(),
              "chunk_size must be between 1 and 1073741824");
    EXPECT_EQ(error_of([&] { make("t", 10, 1, "ssp", {}, 1); }).message(), "consistency 'ssp' needs a staleness");
    EXPECT_EQ(error_of([&] { make("t", 10, 1, "ssp", -1, 1); }).message(), "staleness must be between 0 and 1000000");
    EXPECT_EQ(error_of([&] { make("t", 10, 1, "bsp", 2, 1); }).message(), "consistency 'bsp' takes no staleness");
    EXPECT_EQ(error_of([&] { make("t", 10, 1, "asp", 1, 1); }).message(), "consistency 'asp' takes no staleness");
    EXPECT_EQ(error_of([&] { make("t", 10, 1, "bsp", {}, 0); }).message(), "num_workers must be between 1 and 4096");
    EXPECT_EQ(error_of([&] { make("t", 10, 1, "bsp", {}, 4097); }).kind(), ErrorKind::InvalidParameter);
    EXPECT_EQ(error_of([&] { make("t", 10, 1, "bsp", {}, 1, std::nan("")); }).message(),
              "init_value must be a finite real number");
    EXPECT_EQ(error_of([&] { make("t", 10, 1, "bsp", {}, 1, 1e300); }).kind(), ErrorKind::InvalidParameter);
    EXPECT_EQ(error_of([&] { make("t", 10, 1, "xsp", {}, 1); }).message(), "unknown consistency \"xsp\"");
}

TEST(PsRules, AspNeverWaits) {
    ClockRule r{Consistency::ASP, 0};
    EXPECT_FALSE(r.get_needs(100).has_value());
    EXPECT_FALSE(r.add_needs(100).has_value());
    EXPECT_TRUE(r.get_may_proceed(100, 0));
    EXPECT_TRUE(r.add_may_proceed(100, 0));
    EXPECT_FALSE(r.buffers_adds());
}

TEST(PsRules, SspWaitsForTheSlowestWithinStaleness) {
    ClockRule r{Consistency::SSP, 1};
    EXPECT_EQ(r.get_needs(5), 4);
    EXPECT_TRUE(r.get_may_proceed(0, 0));
    EXPECT_TRUE(r.get_may_proceed(1, 0));   // one clock ahead: within staleness 1
    EXPECT_FALSE(r.get_may_proceed(2, 0));  // two clocks ahead: waits
    EXPECT_TRUE(r.get_may_proceed(2, 1));
    EXPECT_TRUE(r.add_may_proceed(1000, 0));  // Adds never wait under SSP
    EXPECT_FALSE(r.buffers_adds());
    ClockRule zero{Consistency::SSP, 0};
    EXPECT_FALSE(zero.get_may_proceed(1, 0));
    EXPECT_TRUE(zero.get_may_proceed(1, 1));
}

TEST(PsRules, BspWaitsForEveryWorkerToFinishThePreviousIteration) {
    ClockRule r{Consistency::BSP, 0};
    EXPECT_TRUE(r.get_may_proceed(0, 0));
    EXPECT_FALSE(r.get_may_proceed(1, 0));
    EXPECT_TRUE(r.get_may_proceed(1, 1));
    EXPECT_FALSE(r.add_may_proceed(1, 0));
    EXPECT_TRUE(r.add_may_proceed(3, 3));
    EXPECT_TRUE(r.buffers_adds());
}

TEST(PsRules, CheckWaitReportsTheSlowestAndGoneWorkers) {
    std::vector<WorkerState> w = {{3, 10, kWorkerActive, 0, 0},
                                  {1, 11, kWorkerActive, 0, 0},
                                  {2, 0, kWorkerNotJoined, 0, 0}};
    EXPECT_EQ(min_clock(w.data(), 3), 1);
    EXPECT_EQ(check_wait(std::nullopt, w.data(), 3).kind, WaitCheck::Proceed);
    EXPECT_EQ(check_wait(1, w.data(), 3).kind, WaitCheck::Proceed);
    WaitCheck c = check_wait(3, w.data(), 3);
    EXPECT_EQ(c.kind, WaitCheck::Wait);
    EXPECT_EQ(c.blocker, 1);
    EXPECT_EQ(c.needed, 3);
    // A gone worker below the needed clock is reported, even if a live one is slower.
    w[2].status = kWorkerGone;
    c = check_wait(3, w.data(), 3);
    EXPECT_EQ(c.kind, WaitCheck::WorkerGone);
    EXPECT_EQ(c.blocker, 2);
    // A gone worker that is far enough along does not matter.
    c = check_wait(2, w.data(), 3);
    EXPECT_EQ(c.kind, WaitCheck::Wait);
    EXPECT_EQ(c.blocker, 1);
    // Not-joined workers are waited for.
    w[1].status = kWorkerNotJoined;
    w[2].status = kWorkerActive;
    EXPECT_EQ(check_wait(3, w.data(), 3).kind, WaitCheck::Wait);
}

TEST(PsLayout, PartsAreAlignedAndSized) {
    TableLayout l = table_layout(TableShape{3, 2, 10, true});
    EXPECT_EQ(l.workers, 0u);
    EXPECT_EQ(l.ranges, 128u);  // 3 x 24 bytes rounded up
    EXPECT_EQ(l.values, 192u);
    EXPECT_EQ(l.pending, 256u);
    EXPECT_EQ(l.writers, 0u);
    EXPECT_EQ(l.range_map, 0u);
    EXPECT_EQ(l.bytes, 320u);
    TableLayout n = table_layout(TableShape{1, 1, 1000, false});
    EXPECT_EQ(n.pending, 0u);
    EXPECT_EQ(n.bytes, 128u + 4032u);  // 4000 bytes of values rounded up to 64
    for (uint64_t x : {l.ranges, l.values, l.pending, l.bytes, n.values, n.bytes}) EXPECT_EQ(x % 64, 0u);
    EXPECT_THROW(table_layout(TableShape{0, 1, 1, false}), Error);
    // SparseSSP: 70 workers need 2 words per chunk; 5 chunks of writers and read marks. A part: its map.
    TableLayout s = table_layout(TableShape{70, 1, 10, false, 5, 3});
    EXPECT_EQ(s.ranges, 1728u);                  // 70 workers x 24 bytes = 1680 -> 1728
    EXPECT_EQ(s.values, 1792u);                  // one range: 16 -> 64
    EXPECT_EQ(s.writers, 1792u + 64u);           // 40 bytes of values
    EXPECT_EQ(s.read_marks, s.writers + 128u);   // 5 x 2 x 8 = 80 -> 128
    EXPECT_EQ(s.range_map, s.read_marks + 64u);  // 40 -> 64
    EXPECT_EQ(s.bytes, s.range_map + 64u);       // 3 x 16 = 48 -> 64
    EXPECT_THROW(table_layout(TableShape{1, 1, 1, false, 0, std::size_t(kMaxParts) + 1}), Error);
}

TEST(PsArena, FirstFitFillsGapsAndRespectsAlignment) {
    EXPECT_EQ(first_fit({}, 100, 1000), std::optional<uint64_t>(0));
    EXPECT_EQ(first_fit({{0, 100}}, 100, 1000), std::optional<uint64_t>(128));
    EXPECT_EQ(first_fit({{0, 128}, {512, 100}}, 384, 1000), std::optional<uint64_t>(128));
    EXPECT_EQ(first_fit({{512, 100}, {0, 128}}, 385, 1100), std::optional<uint64_t>(640));
    EXPECT_EQ(first_fit({{0, 128}, {512, 100}}, 400, 1000), std::nullopt);  // 640 + 400 > 1000
    EXPECT_EQ(first_fit({}, 1001, 1000), std::nullopt);
    EXPECT_EQ(first_fit({}, 0, 1000), std::nullopt);
    EXPECT_EQ(first_fit({{0, 1000}}, 1, 1000), std::nullopt);
    EXPECT_EQ(first_fit({}, 1000, 1000), std::optional<uint64_t>(0));
    EXPECT_EQ(first_fit({}, UINT64_MAX, 1000), std::nullopt);
}

namespace {

SnapshotBuffer sample_snapshot(Consistency c = Consistency::BSP) {
    SnapshotMeta m;
    m.name = "weights";
    m.ranges = {{0, 3}, {10, 12}};
    m.chunk_size = 2;
    m.consistency = c;
    m.staleness = c == Consistency::SSP ? 2 : 0;
    m.num_workers = 2;
    m.has_pending = c == Consistency::BSP;
    SnapshotBuffer b = start_snapshot(m);
    const int64_t clocks[2] = {4, 5};
    const float values[5] = {1, 2, 3, 4, 5};
    const float pending[5] = {0.5f, 0, 0, 0, -0.5f};
    std::memcpy(&b.bytes[b.clocks_at], clocks, sizeof clocks);
    std::memcpy(&b.bytes[b.values_at], values, sizeof values);
    if (b.pending_at) std::memcpy(&b.bytes[b.pending_at], pending, sizeof pending);
    seal_snapshot(b);
    return b;
}

}  // namespace

TEST(PsSnapshot, RoundTrips) {
    SnapshotBuffer b = sample_snapshot();
    SnapshotView v = read_snapshot(b.bytes);
    EXPECT_EQ(v.meta.name, "weights");
    EXPECT_EQ(v.meta.ranges, (std::vector<KeyRange>{{0, 3}, {10, 12}}));
    EXPECT_EQ(v.meta.chunk_size, 2);
    EXPECT_EQ(v.meta.consistency, Consistency::BSP);
    EXPECT_EQ(v.meta.num_workers, 2);
    EXPECT_EQ(v.clocks, (std::vector<int64_t>{4, 5}));
    float values[5], pending[5];
    std::memcpy(values, v.values, sizeof values);
    std::memcpy(pending, v.pending, sizeof pending);
    EXPECT_EQ(values[4], 5.0f);
    EXPECT_EQ(pending[0], 0.5f);
    EXPECT_EQ(pending[4], -0.5f);
    TableSettings s = snapshot_settings(v.meta, "copy");
    EXPECT_EQ(s.name, "copy");
    EXPECT_EQ(s.keys.size(), 5);

    SnapshotView ssp = read_snapshot(sample_snapshot(Consistency::SSP).bytes);
    EXPECT_EQ(ssp.meta.staleness, 2);
    EXPECT_EQ(ssp.pending, nullptr);
    EXPECT_EQ(snapshot_settings(ssp.meta, "x").staleness, 2);
    EXPECT_EQ(read_snapshot(sample_snapshot(Consistency::ASP).bytes).meta.consistency, Consistency::ASP);
}

TEST(PsSnapshot, CorruptionIsDetected) {
    const std::string good = sample_snapshot().bytes;
    EXPECT_EQ(error_of([&] { read_snapshot(good.substr(0, 20)); }).kind(), ErrorKind::Data);
    EXPECT_EQ(error_of([&] { read_snapshot(good.substr(0, good.size() - 1)); }).kind(), ErrorKind::Data);
    for (std::size_t at : {std::size_t(0), std::size_t(30), good.size() / 2, good.size() - 1}) {
        std::string bad = good;
        bad[at] ^= 0x20;
        Error e = error_of([&] { read_snapshot(bad); });
        EXPECT_EQ(e.kind(), ErrorKind::Data) << "byte " << at;
    }
    std::string bad_version = good;
    bad_version[8] = 9;
    EXPECT_EQ(error_of([&] { read_snapshot(bad_version); }).message(),
              "parameter table checkpoint has format version 9");
    EXPECT_EQ(error_of([&] { read_snapshot(good + "x"); }).message(),
              "parameter table checkpoint is corrupt: checksum mismatch");
    // A worker clock near 2^63 (the next Clock overflowed): refused like a negative one.
    SnapshotBuffer huge = sample_snapshot();
    const int64_t clocks[2] = {4, std::numeric_limits<int64_t>::max()};
    std::memcpy(&huge.bytes[huge.clocks_at], clocks, sizeof clocks);
    seal_snapshot(huge);
    EXPECT_EQ(error_of([&] { read_snapshot(huge.bytes); }).message(),
              "parameter table checkpoint is corrupt: a worker clock is beyond 2^53");
}
