// Parameter-server tables, the database-independent part: settings and their validation, key spaces
// (which keys a table has and where each key's value lives), chunk arithmetic, the consistency rules
// that decide when a Get or an Add may proceed, the layout of a table in shared memory, the
// first-fit allocator of the shared arena, and the checkpoint (snapshot) format.
//
// A table holds one float value per key. Its key space is [0, num_keys) or a union of disjoint key
// ranges [lo, hi); the values of all keys are stored contiguously in key order, so a key has an
// offset in 0 .. size()-1. Chunk c covers the keys [c*chunk_size, (c+1)*chunk_size) that are in the
// key space.
//
// Consistency (FlexPS): each worker's progress is its clock, the number of Clock calls it made.
//   ASP: nothing waits.
//   SSP(s): a Get from a worker at clock c proceeds once the slowest worker's clock is >= c - s;
//           Adds are applied at once, so the Get sees at least every Add made before those clocks.
//   BSP: the Adds of iteration c are buffered and become visible together when the last worker
//        clocks past c; a Get (and an Add) from a worker at clock c proceeds once the slowest worker
//        has reached c, so a Get in iteration c sees exactly the sum of all Adds of iterations < c.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hopper::ps {

constexpr int32_t kMaxWorkers = 4096;
constexpr std::size_t kMaxNameBytes = 63;  // PostgreSQL's NAMEDATALEN - 1
constexpr int64_t kMaxChunkSize = int64_t(1) << 30;
constexpr int64_t kMaxKeyRanges = 1 << 20;

enum class Consistency : int32_t { BSP = 0, SSP = 1, ASP = 2 };

// 'bsp', 'ssp' or 'asp' (any case, surrounding blanks ignored); InvalidParameter otherwise.
Consistency parse_consistency(std::string_view text);
const char* consistency_name(Consistency c);  // "bsp", "ssp", "asp"

// The keys [lo, hi).
struct KeyRange {
    int64_t lo = 0;
    int64_t hi = 0;
    bool operator==(const KeyRange& o) const { return lo == o.lo && hi == o.hi; }
};

class KeySpace {
public:
    KeySpace() = default;
    // [0, num_keys); num_keys >= 1.
    static KeySpace contiguous(int64_t num_keys);
    // A union of non-empty, pairwise disjoint ranges (any order; touching ranges are merged).
    static KeySpace from_ranges(std::vector<KeyRange> ranges);

    int64_t size() const { return size_; }
    const std::vector<KeyRange>& ranges() const { return ranges_; }
    int64_t min_key() const { return ranges_.front().lo; }
    int64_t max_key() const { return ranges_.back().hi - 1; }
    bool contains(int64_t key) const;

    // Offsets of `n` keys, which must be strictly increasing and all in the key space
    // (InvalidParameter naming the first offending position otherwise). `what` names the argument.
    void offsets(const int64_t* keys, std::size_t n, int64_t* out, const char* what = "keys") const;
    // Validation alone, for keys whose offset equals the key ([0, num_keys) spaces).
    bool offsets_are_keys() const { return ranges_.size() == 1 && ranges_[0].lo == 0; }
    void validate(const int64_t* keys, std::size_t n, const char* what = "keys") const;

    // "[0,100)" or "[0,10) [50,60)", for messages.
    std::string describe() const;

private:
    std::vector<KeyRange> ranges_;  // sorted, disjoint, not touching
    std::vector<int64_t> starts_;   // starts_[i]: offset of ranges_[i].lo
    int64_t size_ = 0;
};

// A run of values: `length` values from `offset`.
struct Span {
    int64_t offset = 0;
    int64_t length = 0;
    bool operator==(const Span& o) const { return offset == o.offset && length == o.length; }
};

// The spans holding chunks `chunk_ids` (strictly increasing; each must contain at least one key),
// in order; adjacent spans are merged. `total` receives the number of values.
std::vector<Span> chunk_spans(const KeySpace& keys, int64_t chunk_size, const int64_t* chunk_ids,
                              std::size_t n, int64_t* total);
// How many chunk ids have at least one key; the lowest and highest such id.
struct ChunkRange {
    int64_t count = 0;
    int64_t first = 0;
    int64_t last = 0;
};
ChunkRange chunk_range(const KeySpace& keys, int64_t chunk_size);

// Floor division for chunk arithmetic on negative keys.
int64_t floor_div(int64_t a, int64_t b);

// Validated settings of a table.
struct TableSettings {
    std::string name;
    KeySpace keys;
    int64_t chunk_size = 1;
    Consistency consistency = Consistency::BSP;
    int32_t staleness = 0;  // SSP only; 0 otherwise
    int32_t num_workers = 1;
    float init_value = 0.0f;
};

// Table names: 1 to 63 bytes, no NUL (InvalidName / NameTooLong).
void validate_name(std::string_view name);
// Checks every setting (InvalidParameter with a message naming the setting). `staleness` is
// required for SSP and must be absent or 0 for BSP and ASP.
TableSettings make_settings(std::string name, KeySpace keys, int64_t chunk_size, std::string_view consistency,
                            std::optional<int64_t> staleness, int64_t num_workers, double init_value);

// The consistency rule of one table.
struct ClockRule {
    Consistency consistency = Consistency::BSP;
    int32_t staleness = 0;

    // The clock the slowest worker must have reached before a Get (or Add) from a worker at
    // `clock` may proceed; nullopt: it never waits.
    std::optional<int64_t> get_needs(int64_t clock) const;
    std::optional<int64_t> add_needs(int64_t clock) const;
    bool get_may_proceed(int64_t clock, int64_t min_clock) const;
    bool add_may_proceed(int64_t clock, int64_t min_clock) const;
    // Adds go to a pending buffer, folded into the values when the slowest worker clocks (BSP).
    bool buffers_adds() const { return consistency == Consistency::BSP; }
};

// One worker as the shared table records it (plain data: lives in shared memory).
enum WorkerStatus : int32_t {
    kWorkerNotJoined = 0,  // no session has used this worker yet
    kWorkerActive = 1,     // bound to a live session (pid)
    kWorkerGone = 2,       // its session ended; a new session may take it over at its clock
};
struct WorkerState {
    int64_t clock;
    int32_t pid;
    int32_t status;
};

int64_t min_clock(const WorkerState* workers, int32_t n);

// What a waiting operation should do now.
struct WaitCheck {
    enum Kind { Proceed, Wait, WorkerGone } kind = Proceed;
    int32_t blocker = -1;  // the slowest worker below `needed` (a gone one if kind == WorkerGone)
    int64_t needed = 0;    // the clock the slowest worker must reach
};
// `needs`: the rule's get_needs/add_needs for the caller's clock. A gone worker that holds the
// caller back is reported (it would otherwise be waited for forever); not-joined workers are waited for.
WaitCheck check_wait(std::optional<int64_t> needs, const WorkerState* workers, int32_t n);

// Where a table's parts lie in its block of the shared arena (byte offsets from the block start,
// each 64-byte aligned): worker states, key ranges, values and (BSP) the pending buffer.
struct TableLayout {
    uint64_t workers = 0;
    uint64_t ranges = 0;
    uint64_t values = 0;
    uint64_t pending = 0;  // 0: no pending buffer
    uint64_t bytes = 0;
};
TableLayout table_layout(int32_t num_workers, std::size_t num_ranges, int64_t num_keys, bool pending);

// First-fit allocation in an arena of `arena_size` bytes holding the blocks `used`: the lowest
// offset (a multiple of `align`, a power of two) where `size` bytes fit, or nullopt.
struct Block {
    uint64_t offset = 0;
    uint64_t size = 0;
};
std::optional<uint64_t> first_fit(std::vector<Block> used, uint64_t size, uint64_t arena_size, uint64_t align = 64);

// Checkpoint format of one table, version 1, little-endian:
//    0 magic "HOPPERPS"    8 u16 version   10 u16 consistency   12 i32 staleness
//   16 i32 num_workers    20 u32 name length   24 i64 chunk_size   32 u64 number of ranges R
//   40 i64 number of keys K   48 u8 has pending buffer, 7 bytes 0
//   56 name, R x (i64 lo, i64 hi), num_workers x i64 clock, K x f32 values, [K x f32 pending],
//      u32 CRC-32 of every byte before it.
struct SnapshotMeta {
    std::string name;
    std::vector<KeyRange> ranges;
    int64_t chunk_size = 1;
    Consistency consistency = Consistency::BSP;
    int32_t staleness = 0;
    int32_t num_workers = 1;
    bool has_pending = false;
    int64_t num_keys() const;
};
// A buffer with the header, name and ranges written and room for clocks, values and pending; the
// caller copies those at the offsets given, then calls seal_snapshot.
struct SnapshotBuffer {
    std::string bytes;
    std::size_t clocks_at = 0;
    std::size_t values_at = 0;
    std::size_t pending_at = 0;  // 0 without pending buffer
};
SnapshotBuffer start_snapshot(const SnapshotMeta& meta);
void seal_snapshot(SnapshotBuffer& buffer);
// A validated view of a snapshot (Error(Data) if malformed, truncated or corrupted). The pointers
// point into `bytes` (unaligned: copy with memcpy).
struct SnapshotView {
    SnapshotMeta meta;
    std::vector<int64_t> clocks;
    const char* values = nullptr;
    const char* pending = nullptr;
};
SnapshotView read_snapshot(std::string_view bytes);
// The settings a snapshot describes (validated like make_settings).
TableSettings snapshot_settings(const SnapshotMeta& meta, const std::string& name);

}  // namespace hopper::ps
