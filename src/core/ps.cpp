// Parameter-server tables: key spaces, chunks, consistency rules, layout, allocation, snapshots.
#include "hopper/ps.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>

#include "hopper/error.h"
#include "hopper/state_format.h"

namespace hopper::ps {

namespace {

constexpr int64_t kMaxKeys = int64_t(1) << 40;
constexpr int64_t kMaxStaleness = 1000000;
constexpr char kMagic[8] = {'H', 'O', 'P', 'P', 'E', 'R', 'P', 'S'};
constexpr uint16_t kSnapshotVersion = 1;   // tables of their own under BSP, SSP, ASP
constexpr uint16_t kSnapshotVersion2 = 2;  // SparseSSP tables and parts of partitioned tables
constexpr std::size_t kSnapshotHeader = 56;

std::string range_text(const KeyRange& r) { return "[" + std::to_string(r.lo) + "," + std::to_string(r.hi) + ")"; }

uint64_t align_up(uint64_t x, uint64_t align) { return (x + align - 1) & ~(align - 1); }

template <typename T>
void put(std::string& out, std::size_t at, T v) {
    std::memcpy(&out[at], &v, sizeof v);
}
template <typename T>
T get(std::string_view in, std::size_t at) {
    T v;
    std::memcpy(&v, in.data() + at, sizeof v);
    return v;
}

[[noreturn]] void corrupt(const std::string& what) {
    fail(ErrorKind::Data, "parameter table checkpoint is corrupt: " + what);
}

}  // namespace

Consistency parse_consistency(std::string_view text) {
    std::string t;
    for (char c : text)
        if (!std::isspace(static_cast<unsigned char>(c))) t += char(std::tolower(static_cast<unsigned char>(c)));
    if (t == "bsp") return Consistency::BSP;
    if (t == "ssp") return Consistency::SSP;
    if (t == "asp") return Consistency::ASP;
    if (t == "sparse_ssp") return Consistency::SparseSSP;
    fail(ErrorKind::InvalidParameter, "unknown consistency \"" + std::string(text) + "\"", "",
         "Use 'bsp' (bulk synchronous), 'ssp' (stale synchronous, with a staleness), 'sparse_ssp' "
         "(stale synchronous per chunk, with a staleness) or 'asp' (asynchronous).");
}

const char* consistency_name(Consistency c) {
    switch (c) {
        case Consistency::BSP: return "bsp";
        case Consistency::SSP: return "ssp";
        case Consistency::ASP: return "asp";
        case Consistency::SparseSSP: return "sparse_ssp";
    }
    return "?";
}

// ---- key spaces ----

KeySpace KeySpace::contiguous(int64_t num_keys) {
    if (num_keys < 1)
        fail(ErrorKind::InvalidParameter, "num_keys must be at least 1", "It is " + std::to_string(num_keys) + ".");
    if (num_keys > kMaxKeys)
        fail(ErrorKind::InvalidParameter, "num_keys must be at most " + std::to_string(kMaxKeys),
             "It is " + std::to_string(num_keys) + ".");
    return from_ranges({KeyRange{0, num_keys}});
}

KeySpace KeySpace::from_ranges(std::vector<KeyRange> ranges) {
    if (ranges.empty()) fail(ErrorKind::InvalidParameter, "key_ranges must contain at least one range");
    if (int64_t(ranges.size()) > kMaxKeyRanges)
        fail(ErrorKind::InvalidParameter, "key_ranges may hold at most " + std::to_string(kMaxKeyRanges) + " ranges");
    for (std::size_t i = 0; i < ranges.size(); ++i)
        if (ranges[i].lo >= ranges[i].hi)
            fail(ErrorKind::InvalidParameter, "key ranges must not be empty",
                 "Range " + std::to_string(i + 1) + " is " + range_text(ranges[i]) + ".");
    std::sort(ranges.begin(), ranges.end(), [](const KeyRange& a, const KeyRange& b) { return a.lo < b.lo; });
    KeySpace ks;
    for (const KeyRange& r : ranges) {
        if (!ks.ranges_.empty()) {
            KeyRange& last = ks.ranges_.back();
            if (r.lo < last.hi)
                fail(ErrorKind::InvalidParameter, "key ranges must not overlap",
                     range_text(last) + " and " + range_text(r) + " overlap.");
            if (r.lo == last.hi) {  // touching: one range
                int64_t width = 0;
                if (__builtin_sub_overflow(r.hi, r.lo, &width) || width > kMaxKeys) {
                    ks.size_ = kMaxKeys + 1;
                    break;
                }
                ks.size_ += width;
                last.hi = r.hi;
                if (ks.size_ > kMaxKeys) break;
                continue;
            }
        }
        int64_t width = 0;
        if (__builtin_sub_overflow(r.hi, r.lo, &width) || width > kMaxKeys) {
            ks.size_ = kMaxKeys + 1;
            break;
        }
        ks.starts_.push_back(ks.size_);
        ks.ranges_.push_back(r);
        ks.size_ += width;
        if (ks.size_ > kMaxKeys) break;
    }
    if (ks.size_ > kMaxKeys)
        fail(ErrorKind::InvalidParameter, "a parameter table may have at most " + std::to_string(kMaxKeys) + " keys");
    return ks;
}

bool KeySpace::contains(int64_t key) const {
    auto it =
        std::upper_bound(ranges_.begin(), ranges_.end(), key, [](int64_t k, const KeyRange& r) { return k < r.hi; });
    return it != ranges_.end() && key >= it->lo;
}

std::string KeySpace::describe() const {
    std::string out;
    const std::size_t shown = std::min<std::size_t>(ranges_.size(), 4);
    for (std::size_t i = 0; i < shown; ++i) {
        if (i) out += " ";
        out += range_text(ranges_[i]);
    }
    if (shown < ranges_.size()) out += " ... (" + std::to_string(ranges_.size()) + " ranges)";
    return out;
}

static void check_order(const int64_t* keys, std::size_t i, const char* what) {
    if (i > 0 && keys[i] <= keys[i - 1])
        fail(ErrorKind::InvalidParameter, std::string(what) + " must be sorted in ascending order without duplicates",
             std::string(what) + "[" + std::to_string(i + 1) + "] = " + std::to_string(keys[i]) +
                 (keys[i] == keys[i - 1] ? " repeats " : " follows ") + std::string(what) + "[" + std::to_string(i) +
                 "] = " + std::to_string(keys[i - 1]) + ".");
}

void KeySpace::validate(const int64_t* keys, std::size_t n, const char* what) const {
    if (n == 0) return;
    // Sorted and unique, so only the ends can be out of range of a single range.
    for (std::size_t i = 1; i < n; ++i)
        if (keys[i] <= keys[i - 1]) check_order(keys, i, what);
    if (ranges_.size() == 1) {
        const KeyRange& r = ranges_[0];
        const std::size_t bad = keys[0] < r.lo ? 0 : keys[n - 1] >= r.hi ? n - 1 : n;
        if (bad < n)
            fail(ErrorKind::InvalidParameter, "key " + std::to_string(keys[bad]) + " is out of range",
                 std::string(what) + "[" + std::to_string(bad + 1) + "] is not in the table's keys " + describe() +
                     ".");
        return;
    }
    std::vector<int64_t> scratch(n);
    offsets(keys, n, scratch.data(), what);
}

void KeySpace::offsets(const int64_t* keys, std::size_t n, int64_t* out, const char* what) const {
    if (offsets_are_keys()) {
        validate(keys, n, what);
        if (n)
            std::memcpy(out, keys, n * sizeof(int64_t));  // memcpy from a null pointer is undefined, even for 0 bytes
        return;
    }
    std::size_t r = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const int64_t k = keys[i];
        check_order(keys, i, what);
        if (r < ranges_.size() && k >= ranges_[r].hi) {
            auto it = std::upper_bound(ranges_.begin() + long(r), ranges_.end(), k,
                                       [](int64_t key, const KeyRange& x) { return key < x.hi; });
            r = std::size_t(it - ranges_.begin());
        }
        if (r >= ranges_.size() || k < ranges_[r].lo)
            fail(ErrorKind::InvalidParameter, "key " + std::to_string(k) + " is out of range",
                 std::string(what) + "[" + std::to_string(i + 1) + "] is not in the table's keys " + describe() + ".");
        out[i] = starts_[r] + (k - ranges_[r].lo);
    }
}

// ---- chunks ----

int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
}

ChunkRange chunk_range(const KeySpace& keys, int64_t chunk_size) {
    ChunkRange out;
    bool have_last = false;
    int64_t last = 0;
    for (const KeyRange& r : keys.ranges()) {
        int64_t a = floor_div(r.lo, chunk_size);
        const int64_t b = floor_div(r.hi - 1, chunk_size);
        if (have_last && a <= last) a = last + 1;
        if (a <= b) {
            if (!have_last) out.first = a;
            out.count += b - a + 1;
            last = b;
            have_last = true;
        }
    }
    out.last = last;
    return out;
}

std::vector<Span> chunk_spans(const KeySpace& keys, int64_t chunk_size, const int64_t* chunk_ids, std::size_t n,
                              int64_t* total) {
    std::vector<Span> spans;
    *total = 0;
    const auto& ranges = keys.ranges();
    // Offsets of range starts, recomputed here (KeySpace keeps them private to its key mapping).
    std::vector<int64_t> starts(ranges.size());
    int64_t acc = 0;
    for (std::size_t i = 0; i < ranges.size(); ++i) {
        starts[i] = acc;
        acc += ranges[i].hi - ranges[i].lo;
    }
    const ChunkRange cr = chunk_range(keys, chunk_size);
    auto out_of_range = [&](std::size_t i) {
        std::string detail = "chunk_ids[" + std::to_string(i + 1) + "] holds no key of the table; ";
        if (ranges.size() == 1 && ranges[0].lo == 0)
            detail +=
                "its chunks are 0 to " + std::to_string(cr.last) + " (chunk_size " + std::to_string(chunk_size) + ").";
        else detail += "its keys are " + keys.describe() + " (chunk_size " + std::to_string(chunk_size) + ").";
        fail(ErrorKind::InvalidParameter, "chunk " + std::to_string(chunk_ids[i]) + " is out of range", detail);
    };
    std::size_t r = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const int64_t c = chunk_ids[i];
        check_order(chunk_ids, i, "chunk_ids");
        if (c < cr.first || c > cr.last) out_of_range(i);
        // Between the first and last chunk ids, so c * chunk_size lies in
        // (the first key - chunk_size, max_key] and cannot overflow; the upper end is clamped to the last key.
        const int64_t lo = c * chunk_size;
        const int64_t hi = lo <= keys.max_key() - chunk_size ? lo + chunk_size : keys.max_key() + 1;
        while (r < ranges.size() && ranges[r].hi <= lo) ++r;
        bool any = false;
        for (std::size_t j = r; j < ranges.size() && ranges[j].lo < hi; ++j) {
            const int64_t a = std::max(lo, ranges[j].lo);
            const int64_t b = std::min(hi, ranges[j].hi);
            if (a >= b) continue;
            const Span s{starts[j] + (a - ranges[j].lo), b - a};
            if (!spans.empty() && spans.back().offset + spans.back().length == s.offset)
                spans.back().length += s.length;
            else spans.push_back(s);
            *total += s.length;
            any = true;
        }
        if (!any) out_of_range(i);
    }
    return spans;
}

ChunkIndex::ChunkIndex(const KeySpace& keys, int64_t chunk_size) : chunk_size_(chunk_size), ranges_(keys.ranges()) {
    bool have_last = false;
    int64_t last = 0;
    for (const KeyRange& r : ranges_) {
        const int64_t a = floor_div(r.lo, chunk_size);
        const int64_t b = floor_div(r.hi - 1, chunk_size);
        first_chunk_.push_back(a);
        if (have_last && a == last) {  // the range starts in the chunk where the previous one ended
            base_.push_back(count_ - 1);
            count_ += b - a;
        } else {
            base_.push_back(count_);
            count_ += b - a + 1;
        }
        last = b;
        have_last = true;
    }
}

void ChunkIndex::of_keys(const int64_t* keys, std::size_t n, std::vector<int64_t>* out) const {
    out->clear();
    std::size_t r = 0;
    for (std::size_t i = 0; i < n; ++i) {
        while (r < ranges_.size() && keys[i] >= ranges_[r].hi) ++r;
        if (r == ranges_.size() || keys[i] < ranges_[r].lo)
            fail(ErrorKind::Internal, "ChunkIndex::of_keys: key " + std::to_string(keys[i]) + " is not in the table");
        const int64_t index = base_[r] + (floor_div(keys[i], chunk_size_) - first_chunk_[r]);
        if (out->empty() || out->back() != index) out->push_back(index);
    }
}

void ChunkIndex::of_chunk_ids(const int64_t* ids, std::size_t n, std::vector<int64_t>* out) const {
    out->clear();
    std::size_t r = 0;
    for (std::size_t i = 0; i < n; ++i) {
        while (r < ranges_.size() && floor_div(ranges_[r].hi - 1, chunk_size_) < ids[i]) ++r;
        if (r == ranges_.size() || first_chunk_[r] > ids[i])
            fail(ErrorKind::Internal, "ChunkIndex::of_chunk_ids: chunk " + std::to_string(ids[i]) + " holds no key");
        out->push_back(base_[r] + (ids[i] - first_chunk_[r]));
    }
}

// ---- settings ----

void validate_name(std::string_view name) {
    if (name.empty()) fail(ErrorKind::InvalidName, "parameter table name must not be empty");
    if (name.find('\0') != std::string_view::npos)
        fail(ErrorKind::InvalidName, "parameter table name must not contain a NUL byte");
    if (name.size() > kMaxNameBytes)
        fail(ErrorKind::NameTooLong, "parameter table name is too long",
             "It has " + std::to_string(name.size()) + " bytes; at most " + std::to_string(kMaxNameBytes) +
                 " are allowed.");
}

TableSettings make_settings(std::string name, KeySpace keys, int64_t chunk_size, std::string_view consistency,
                            std::optional<int64_t> staleness, int64_t num_workers, double init_value) {
    validate_name(name);
    TableSettings s;
    s.name = std::move(name);
    if (keys.size() < 1) fail(ErrorKind::InvalidParameter, "a parameter table needs at least one key");
    s.keys = std::move(keys);
    if (chunk_size < 1 || chunk_size > kMaxChunkSize)
        fail(ErrorKind::InvalidParameter, "chunk_size must be between 1 and " + std::to_string(kMaxChunkSize),
             "It is " + std::to_string(chunk_size) + ".");
    s.chunk_size = chunk_size;
    s.consistency = parse_consistency(consistency);
    if (s.consistency == Consistency::SSP || s.consistency == Consistency::SparseSSP) {
        if (!staleness)
            fail(ErrorKind::InvalidParameter,
                 std::string("consistency '") + consistency_name(s.consistency) + "' needs a staleness", "",
                 s.consistency == Consistency::SSP
                     ? "Pass staleness => s: a worker at clock c reads once every worker has reached c - s."
                     : "Pass staleness => s: a worker at clock c reads once every worker that wrote what it "
                       "reads has reached c - s.");
        if (*staleness < 0 || *staleness > kMaxStaleness)
            fail(ErrorKind::InvalidParameter, "staleness must be between 0 and " + std::to_string(kMaxStaleness),
                 "It is " + std::to_string(*staleness) + ".");
        s.staleness = int32_t(*staleness);
    } else if (staleness && *staleness != 0) {
        fail(ErrorKind::InvalidParameter,
             std::string("consistency '") + consistency_name(s.consistency) + "' takes no staleness",
             "Staleness " + std::to_string(*staleness) + " was given.",
             "Use consistency => 'ssp' or 'sparse_ssp' for bounded staleness.");
    }
    if (num_workers < 1 || num_workers > kMaxWorkers)
        fail(ErrorKind::InvalidParameter, "num_workers must be between 1 and " + std::to_string(kMaxWorkers),
             "It is " + std::to_string(num_workers) + ".");
    s.num_workers = int32_t(num_workers);
    if (!std::isfinite(init_value) || std::fabs(init_value) > std::numeric_limits<float>::max())
        fail(ErrorKind::InvalidParameter, "init_value must be a finite real number");
    s.init_value = float(init_value);
    return s;
}

void validate_range_map(const std::vector<KeyRange>& map, int64_t chunk_size) {
    if (map.empty()) fail(ErrorKind::InvalidParameter, "a range map needs at least one part");
    if (map.size() > std::size_t(kMaxParts))
        fail(ErrorKind::InvalidParameter, "a range map may have at most " + std::to_string(kMaxParts) + " parts",
             "It has " + std::to_string(map.size()) + ".");
    auto part = [&](std::size_t i) { return "part " + std::to_string(i) + " " + range_text(map[i]); };
    for (std::size_t i = 0; i < map.size(); ++i) {
        if (map[i].lo >= map[i].hi)
            fail(ErrorKind::InvalidParameter, "the parts of a range map must not be empty", part(i) + " is empty.");
        if (i == 0) continue;
        const KeyRange& prev = map[i - 1];
        if (map[i].lo < prev.lo)
            fail(ErrorKind::InvalidParameter, "the parts of a range map must be in key order",
                 part(i) + " starts before " + part(i - 1) + ".");
        if (map[i].lo < prev.hi)
            fail(ErrorKind::InvalidParameter, "the parts of a range map must not overlap",
                 part(i - 1) + " and " + part(i) + " overlap.");
        if (map[i].lo > prev.hi)
            fail(ErrorKind::InvalidParameter, "the parts of a range map must not leave gaps",
                 "Keys " + std::to_string(prev.hi) + " to " + std::to_string(map[i].lo - 1) + " between " +
                     part(i - 1) + " and " + part(i) + " belong to no part.");
        if (chunk_size > 0 && map[i].lo % chunk_size != 0)
            fail(ErrorKind::InvalidParameter, "the boundaries between parts must be multiples of chunk_size",
                 "Part " + std::to_string(i) + " starts at key " + std::to_string(map[i].lo) + "; chunk_size is " +
                     std::to_string(chunk_size) + ".",
                 "A chunk must lie whole on one server.");
    }
    KeySpace::from_ranges(map);  // the total number of keys
}

TableSettings make_part_settings(std::string name, const std::vector<KeyRange>& map, int64_t part, int64_t chunk_size,
                                 std::string_view consistency, std::optional<int64_t> staleness, int64_t num_workers,
                                 double init_value) {
    validate_name(name);
    if (chunk_size < 1 || chunk_size > kMaxChunkSize)
        fail(ErrorKind::InvalidParameter, "chunk_size must be between 1 and " + std::to_string(kMaxChunkSize),
             "It is " + std::to_string(chunk_size) + ".");
    validate_range_map(map, chunk_size);
    if (part < 0 || part >= int64_t(map.size()))
        fail(ErrorKind::InvalidParameter, "part " + std::to_string(part) + " is not in the range map",
             "Its parts are 0 to " + std::to_string(map.size() - 1) + ".");
    TableSettings s = make_settings(std::move(name), KeySpace::from_ranges({map[std::size_t(part)]}), chunk_size,
                                    consistency, staleness, num_workers, init_value);
    s.part = int32_t(part);
    s.range_map = map;
    return s;
}

// ---- consistency ----

std::optional<int64_t> ClockRule::get_needs(int64_t clock) const {
    switch (consistency) {
        case Consistency::ASP: return std::nullopt;
        case Consistency::SSP:
        case Consistency::SparseSSP: return clock - staleness;
        case Consistency::BSP: return clock;
    }
    return std::nullopt;
}

std::optional<int64_t> ClockRule::add_needs(int64_t clock) const {
    if (consistency == Consistency::BSP) return clock;
    return std::nullopt;
}

bool ClockRule::get_may_proceed(int64_t clock, int64_t min_clock) const {
    auto n = get_needs(clock);
    return !n || min_clock >= *n;
}

bool ClockRule::add_may_proceed(int64_t clock, int64_t min_clock) const {
    auto n = add_needs(clock);
    return !n || min_clock >= *n;
}

int64_t min_clock(const WorkerState* workers, int32_t n) {
    int64_t m = std::numeric_limits<int64_t>::max();
    for (int32_t i = 0; i < n; ++i) m = std::min(m, workers[i].clock);
    return m;
}

WaitCheck check_wait(std::optional<int64_t> needs, const WorkerState* workers, int32_t n, const uint64_t* only) {
    WaitCheck out;
    if (!needs) return out;
    out.needed = *needs;
    int32_t slowest = -1, slowest_gone = -1;
    for (int32_t i = 0; i < n; ++i) {
        if (workers[i].clock >= *needs) continue;
        if (only && !(only[i / 64] >> (i % 64) & 1)) continue;
        if (slowest < 0 || workers[i].clock < workers[slowest].clock) slowest = i;
        if (workers[i].status == kWorkerGone && (slowest_gone < 0 || workers[i].clock < workers[slowest_gone].clock))
            slowest_gone = i;
    }
    if (slowest < 0) return out;
    if (slowest_gone >= 0) {
        out.kind = WaitCheck::WorkerGone;
        out.blocker = slowest_gone;
    } else {
        out.kind = WaitCheck::Wait;
        out.blocker = slowest;
    }
    return out;
}

// ---- layout and allocation ----

TableLayout table_layout(const TableShape& shape) {
    if (shape.num_workers < 1 || shape.num_workers > kMaxWorkers || shape.num_keys < 1 || shape.num_keys > kMaxKeys ||
        int64_t(shape.num_ranges) > kMaxKeyRanges || shape.num_ranges < 1 || shape.sparse_chunks < 0 ||
        shape.sparse_chunks > kMaxKeys || shape.map_parts > std::size_t(kMaxParts))
        fail(ErrorKind::Internal, "table_layout: settings out of range");
    TableLayout l;
    uint64_t at = 0;
    l.workers = at;
    at = align_up(at + uint64_t(shape.num_workers) * sizeof(WorkerState), 64);
    l.ranges = at;
    at = align_up(at + uint64_t(shape.num_ranges) * sizeof(KeyRange), 64);
    l.values = at;
    at = align_up(at + uint64_t(shape.num_keys) * 4, 64);
    if (shape.pending) {
        l.pending = at;
        at = align_up(at + uint64_t(shape.num_keys) * 4, 64);
    }
    if (shape.sparse_chunks > 0) {
        l.writers = at;
        at = align_up(at + uint64_t(shape.sparse_chunks) * uint64_t(worker_words(shape.num_workers)) * 8, 64);
        l.read_marks = at;
        at = align_up(at + uint64_t(shape.sparse_chunks) * 8, 64);
    }
    if (shape.map_parts > 0) {
        l.range_map = at;
        at = align_up(at + uint64_t(shape.map_parts) * sizeof(KeyRange), 64);
    }
    l.bytes = at;
    return l;
}

std::optional<uint64_t> first_fit(std::vector<Block> used, uint64_t size, uint64_t arena_size, uint64_t align) {
    if (size == 0 || size > arena_size || align == 0 || (align & (align - 1)) != 0) return std::nullopt;
    std::sort(used.begin(), used.end(), [](const Block& a, const Block& b) { return a.offset < b.offset; });
    uint64_t cursor = 0;
    for (const Block& b : used) {
        const uint64_t at = align_up(cursor, align);
        if (at <= b.offset && b.offset - at >= size) return at;
        cursor = std::max(cursor, b.offset + b.size);
    }
    const uint64_t at = align_up(cursor, align);
    if (at <= arena_size && arena_size - at >= size) return at;
    return std::nullopt;
}

// ---- snapshots ----

int64_t SnapshotMeta::num_keys() const {
    int64_t n = 0;
    for (const KeyRange& r : ranges) n += r.hi - r.lo;
    return n;
}

SnapshotBuffer start_snapshot(const SnapshotMeta& meta) {
    validate_name(meta.name);
    const int64_t k = meta.num_keys();
    const bool v2 = meta.version2();
    SnapshotBuffer b;
    std::size_t at = kSnapshotHeader + meta.name.size() + 16 * meta.ranges.size();
    b.clocks_at = at;
    at += 8 * std::size_t(meta.num_workers);
    b.values_at = at;
    at += 4 * std::size_t(k);
    if (meta.has_pending) {
        b.pending_at = at;
        at += 4 * std::size_t(k);
    }
    std::size_t map_at = 0, chunks_at = 0;
    if (v2) {
        map_at = at;
        at += 8 + 16 * meta.range_map.size();
        b.in_iteration_at = at;
        at += std::size_t(meta.num_workers);
        chunks_at = at;
        at += 8;
        if (meta.sparse_chunks > 0) {
            b.writers_at = at;
            at += std::size_t(meta.sparse_chunks) * std::size_t(worker_words(meta.num_workers)) * 8;
            b.read_marks_at = at;
            at += std::size_t(meta.sparse_chunks) * 8;
        }
    }
    b.bytes.assign(at + 4, '\0');
    std::string& out = b.bytes;
    std::memcpy(&out[0], kMagic, sizeof kMagic);
    put<uint16_t>(out, 8, v2 ? kSnapshotVersion2 : kSnapshotVersion);
    put<uint16_t>(out, 10, uint16_t(meta.consistency));
    put<int32_t>(out, 12, meta.staleness);
    put<int32_t>(out, 16, meta.num_workers);
    put<uint32_t>(out, 20, uint32_t(meta.name.size()));
    put<int64_t>(out, 24, meta.chunk_size);
    put<uint64_t>(out, 32, uint64_t(meta.ranges.size()));
    put<int64_t>(out, 40, k);
    out[48] = meta.has_pending ? 1 : 0;
    std::memcpy(&out[kSnapshotHeader], meta.name.data(), meta.name.size());
    std::size_t r_at = kSnapshotHeader + meta.name.size();
    for (const KeyRange& r : meta.ranges) {
        put<int64_t>(out, r_at, r.lo);
        put<int64_t>(out, r_at + 8, r.hi);
        r_at += 16;
    }
    if (v2) {
        put<int32_t>(out, map_at, meta.part);
        put<uint32_t>(out, map_at + 4, uint32_t(meta.range_map.size()));
        std::size_t m_at = map_at + 8;
        for (const KeyRange& r : meta.range_map) {
            put<int64_t>(out, m_at, r.lo);
            put<int64_t>(out, m_at + 8, r.hi);
            m_at += 16;
        }
        put<int64_t>(out, chunks_at, meta.sparse_chunks);
    }
    return b;
}

void seal_snapshot(SnapshotBuffer& buffer) {
    std::string& out = buffer.bytes;
    const std::size_t at = out.size() - 4;
    put<uint32_t>(out, at, crc32_of(std::string_view(out).substr(0, at)));
}

SnapshotView read_snapshot(std::string_view bytes) {
    if (bytes.size() < kSnapshotHeader + 4) corrupt("it is too short (" + std::to_string(bytes.size()) + " bytes)");
    if (std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) corrupt("it does not start with HOPPERPS");
    const uint16_t version = get<uint16_t>(bytes, 8);
    if (version != kSnapshotVersion && version != kSnapshotVersion2)
        fail(ErrorKind::Data, "parameter table checkpoint has format version " + std::to_string(version),
             "This hopper reads versions " + std::to_string(kSnapshotVersion) + " and " +
                 std::to_string(kSnapshotVersion2) + ".");
    const uint32_t stored_crc = get<uint32_t>(bytes, bytes.size() - 4);
    if (crc32_of(bytes.substr(0, bytes.size() - 4)) != stored_crc) corrupt("checksum mismatch");
    const std::size_t body = bytes.size() - 4;
    SnapshotView v;
    SnapshotMeta& m = v.meta;
    const uint16_t consistency = get<uint16_t>(bytes, 10);
    if (consistency > 3 || (version == kSnapshotVersion && consistency > 2))
        corrupt("unknown consistency " + std::to_string(consistency));
    m.consistency = Consistency(consistency);
    m.staleness = get<int32_t>(bytes, 12);
    m.num_workers = get<int32_t>(bytes, 16);
    const uint32_t name_len = get<uint32_t>(bytes, 20);
    m.chunk_size = get<int64_t>(bytes, 24);
    const uint64_t num_ranges = get<uint64_t>(bytes, 32);
    const int64_t k = get<int64_t>(bytes, 40);
    m.has_pending = bytes[48] != 0;
    if (m.num_workers < 1 || m.num_workers > kMaxWorkers) corrupt("bad number of workers");
    if (name_len < 1 || name_len > kMaxNameBytes) corrupt("bad name length");
    if (num_ranges < 1 || num_ranges > uint64_t(kMaxKeyRanges)) corrupt("bad number of key ranges");
    if (k < 1 || k > kMaxKeys) corrupt("bad number of keys");
    if (m.chunk_size < 1 || m.chunk_size > kMaxChunkSize) corrupt("bad chunk size");
    const std::size_t fixed = kSnapshotHeader + name_len + 16 * num_ranges + 8 * std::size_t(m.num_workers) +
                              4 * std::size_t(k) * (m.has_pending ? 2 : 1);
    if (version == kSnapshotVersion && body != fixed)
        corrupt("its size is " + std::to_string(bytes.size()) + " bytes, its header implies " +
                std::to_string(fixed + 4));
    if (version == kSnapshotVersion2 && body < fixed + 8)
        corrupt("its size is " + std::to_string(bytes.size()) + " bytes, its header implies at least " +
                std::to_string(fixed + 12));
    m.name.assign(bytes.data() + kSnapshotHeader, name_len);
    std::size_t at = kSnapshotHeader + name_len;
    for (uint64_t i = 0; i < num_ranges; ++i, at += 16)
        m.ranges.push_back(KeyRange{get<int64_t>(bytes, at), get<int64_t>(bytes, at + 8)});
    KeySpace ks;
    try {
        ks = KeySpace::from_ranges(m.ranges);
        if (ks.size() != k) corrupt("its key ranges do not hold its number of keys");
    } catch (const Error& e) {
        if (e.kind() == ErrorKind::Data) throw;
        corrupt("its key ranges are invalid (" + e.message() + ")");
    }
    v.clocks.resize(std::size_t(m.num_workers));
    for (int32_t i = 0; i < m.num_workers; ++i, at += 8) v.clocks[std::size_t(i)] = get<int64_t>(bytes, at);
    // Clocks count iterations: one beyond 2^53 is no count a run reaches, and near 2^63 the next
    // clock overflowed (a crafted snapshot read min and max clock 0 after it, and could not be saved).
    for (int64_t c : v.clocks) {
        if (c < 0) corrupt("a worker clock is negative");
        if (c > (int64_t(1) << 53)) corrupt("a worker clock is beyond 2^53");
    }
    v.values = bytes.data() + at;
    at += 4 * std::size_t(k);
    if (m.has_pending) {
        v.pending = bytes.data() + at;
        at += 4 * std::size_t(k);
    }
    if (m.has_pending != (m.consistency == Consistency::BSP)) corrupt("pending buffer does not match consistency");
    v.in_iteration.assign(std::size_t(m.num_workers), 0);
    if (version == kSnapshotVersion) return v;

    // Version 2: the range map, in_iteration flags and SparseSSP state, each bounded by what is left.
    auto need = [&](std::size_t n, const char* what) {
        if (body - at < n) corrupt(std::string("it ends inside its ") + what);
    };
    m.part = get<int32_t>(bytes, at);
    const uint32_t parts = get<uint32_t>(bytes, at + 4);
    at += 8;
    if (parts > uint32_t(kMaxParts)) corrupt("bad number of range map parts");
    need(16 * std::size_t(parts), "range map");
    for (uint32_t i = 0; i < parts; ++i, at += 16)
        m.range_map.push_back(KeyRange{get<int64_t>(bytes, at), get<int64_t>(bytes, at + 8)});
    if ((m.part < 0) != m.range_map.empty() || m.part < -1) corrupt("its part does not match its range map");
    if (m.part >= 0) {
        try {
            validate_range_map(m.range_map, m.chunk_size);
        } catch (const Error& e) { corrupt("its range map is invalid (" + e.message() + ")"); }
        if (m.part >= int32_t(m.range_map.size()) || m.ranges.size() != 1 ||
            !(m.ranges[0] == m.range_map[std::size_t(m.part)]))
            corrupt("its keys are not its part of its range map");
    }
    need(std::size_t(m.num_workers) + 8, "worker flags");
    for (int32_t i = 0; i < m.num_workers; ++i, ++at) {
        const uint8_t flag = uint8_t(bytes[at]);
        if (flag > 1) corrupt("a worker's in_iteration flag is " + std::to_string(flag));
        v.in_iteration[std::size_t(i)] = flag;
    }
    m.sparse_chunks = get<int64_t>(bytes, at);
    at += 8;
    const int64_t expected_chunks = m.consistency == Consistency::SparseSSP ? ChunkIndex(ks, m.chunk_size).count() : 0;
    if (m.sparse_chunks != expected_chunks) corrupt("its number of chunks with SparseSSP state is wrong");
    if (m.sparse_chunks > 0) {
        const std::size_t words = std::size_t(worker_words(m.num_workers));
        const std::size_t c = std::size_t(m.sparse_chunks);
        need(c * words * 8 + c * 8, "SparseSSP state");
        v.writers = bytes.data() + at;
        // Bits beyond the last worker are never set.
        if (m.num_workers % 64 != 0) {
            const uint64_t beyond = ~uint64_t(0) << (m.num_workers % 64);
            for (std::size_t j = 0; j < c; ++j)
                if (get<uint64_t>(bytes, at + (j * words + words - 1) * 8) & beyond)
                    corrupt("a chunk is written by a worker that does not exist");
        }
        at += c * words * 8;
        v.read_marks = bytes.data() + at;
        at += c * 8;
    }
    if (at != body) corrupt("it has " + std::to_string(body - at) + " bytes more than its header implies");
    return v;
}

TableSettings snapshot_settings(const SnapshotMeta& meta, const std::string& name) {
    std::optional<int64_t> staleness;
    if (meta.consistency == Consistency::SSP || meta.consistency == Consistency::SparseSSP || meta.staleness != 0)
        staleness = meta.staleness;
    try {
        if (meta.part >= 0)
            return make_part_settings(name, meta.range_map, meta.part, meta.chunk_size,
                                      consistency_name(meta.consistency), staleness, meta.num_workers, 0.0);
        return make_settings(name, KeySpace::from_ranges(meta.ranges), meta.chunk_size,
                             consistency_name(meta.consistency), staleness, meta.num_workers, 0.0);
    } catch (const Error& e) {
        if (e.kind() == ErrorKind::InvalidName || e.kind() == ErrorKind::NameTooLong) throw;
        corrupt("its settings are invalid (" + e.message() + ")");
    }
}

}  // namespace hopper::ps
