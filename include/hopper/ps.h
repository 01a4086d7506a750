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
//   SparseSSP(s): SSP(s) per chunk: a Get from a worker at clock c of the chunks J proceeds once
//        every *writer* of J (a worker that has added to a chunk of J) has reached c - s; workers
//        that never wrote J do not hold it back. A Get also ends the worker's previous iteration
//        (Clock is folded into Get, as in FlexPS's SparseKVClientTable).
//
// Partitioned tables (FlexPS's range manager): one logical table split over several servers by a
// range map, part i holding the keys [map[i].lo, map[i].hi) on server i.
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
constexpr int32_t kMaxParts = 1024;

enum class Consistency : int32_t { BSP = 0, SSP = 1, ASP = 2, SparseSSP = 3 };

// 'bsp', 'ssp', 'asp' or 'sparse_ssp' (any case, blanks ignored); InvalidParameter otherwise.
Consistency parse_consistency(std::string_view text);
const char* consistency_name(Consistency c);  // "bsp", "ssp", "asp", "sparse_ssp"

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
std::vector<Span> chunk_spans(const KeySpace& keys, int64_t chunk_size, const int64_t* chunk_ids, std::size_t n,
                              int64_t* total);
// How many chunk ids have at least one key; the lowest and highest such id.
struct ChunkRange {
    int64_t count = 0;
    int64_t first = 0;
    int64_t last = 0;
};
ChunkRange chunk_range(const KeySpace& keys, int64_t chunk_size);

// Floor division for chunk arithmetic on negative keys.
int64_t floor_div(int64_t a, int64_t b);

// Dense numbers 0 .. count()-1 of the chunks that hold keys, in chunk order: where per-chunk state
// (SparseSSP's writers) lives.
class ChunkIndex {
public:
    ChunkIndex() = default;
    ChunkIndex(const KeySpace& keys, int64_t chunk_size);
    int64_t count() const { return count_; }
    // The chunks of `n` keys that are valid and strictly increasing (KeySpace::offsets checked
    // them): their dense numbers, ascending, each once.
    void of_keys(const int64_t* keys, std::size_t n, std::vector<int64_t>* out) const;
    // The dense numbers of chunk ids that chunk_spans accepted (strictly increasing, each with keys).
    void of_chunk_ids(const int64_t* ids, std::size_t n, std::vector<int64_t>* out) const;

private:
    int64_t chunk_size_ = 1;
    std::vector<KeyRange> ranges_;
    std::vector<int64_t> first_chunk_;  // per range: the chunk id of its first key
    std::vector<int64_t> base_;         // per range: the dense number of that chunk
    int64_t count_ = 0;
};

// 64-bit words of a per-chunk set of workers (one bit per worker).
inline int32_t worker_words(int32_t num_workers) { return (num_workers + 63) / 64; }

// Validated settings of a table.
struct TableSettings {
    std::string name;
    KeySpace keys;
    int64_t chunk_size = 1;
    Consistency consistency = Consistency::BSP;
    int32_t staleness = 0;  // SSP only; 0 otherwise
    int32_t num_workers = 1;
    float init_value = 0.0f;
    // A part of a partitioned table: its index in range_map, whose entry is `keys`. -1 and empty
    // for a table of its own.
    int32_t part = -1;
    std::vector<KeyRange> range_map;
};

// Table names: 1 to 63 bytes, no NUL (InvalidName / NameTooLong).
void validate_name(std::string_view name);
// Checks every setting (InvalidParameter with a message naming the setting). `staleness` is
// required for SSP and must be absent or 0 for BSP and ASP.
TableSettings make_settings(std::string name, KeySpace keys, int64_t chunk_size, std::string_view consistency,
                            std::optional<int64_t> staleness, int64_t num_workers, double init_value);

// A range map: parts in key order, each non-empty, following each other without gap or overlap
// (map[i].hi == map[i+1].lo), at most kMaxParts, and every inner boundary a multiple of chunk_size
// (so that a chunk lives whole on one server). InvalidParameter naming the parts otherwise.
void validate_range_map(const std::vector<KeyRange>& map, int64_t chunk_size);
// The settings of part `part` of a table split by `map` (validated; its keys are map[part]).
TableSettings make_part_settings(std::string name, const std::vector<KeyRange>& map, int64_t part, int64_t chunk_size,
                                 std::string_view consistency, std::optional<int64_t> staleness, int64_t num_workers,
                                 double init_value);

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
    // SparseSSP: Gets wait only for the writers of what they read, and a Get ends the worker's
    // previous iteration.
    bool sparse() const { return consistency == Consistency::SparseSSP; }
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
    int32_t in_iteration;  // SparseSSP: 1 after a Get, until the Clock that the next Get folds in
    int32_t reserved;
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
// `only` (SparseSSP): a set of workers (worker_words(n) words); the others never hold the caller back.
WaitCheck check_wait(std::optional<int64_t> needs, const WorkerState* workers, int32_t n,
                     const uint64_t* only = nullptr);

// What a table's block holds.
struct TableShape {
    int32_t num_workers = 1;
    std::size_t num_ranges = 1;
    int64_t num_keys = 1;
    bool pending = false;       // BSP
    int64_t sparse_chunks = 0;  // SparseSSP: chunks with writer sets and read marks (0: none)
    std::size_t map_parts = 0;  // a part of a partitioned table: entries of its range map (0: none)
};
// Where a table's parts lie in its block of the shared arena (byte offsets from the block start,
// each 64-byte aligned): worker states, key ranges, values, (BSP) the pending buffer, (SparseSSP)
// each chunk's writers (worker_words x u64) and read mark (u64: 1 + the highest clock of a Get
// that read it, 0 if none), (parts) the range map.
struct TableLayout {
    uint64_t workers = 0;
    uint64_t ranges = 0;
    uint64_t values = 0;
    uint64_t pending = 0;  // 0: no pending buffer
    uint64_t writers = 0;  // 0: not SparseSSP
    uint64_t read_marks = 0;
    uint64_t range_map = 0;  // 0: not a part
    uint64_t bytes = 0;
};
TableLayout table_layout(const TableShape& shape);

// First-fit allocation in an arena of `arena_size` bytes holding the blocks `used`: the lowest
// offset (a multiple of `align`, a power of two) where `size` bytes fit, or nullopt.
struct Block {
    uint64_t offset = 0;
    uint64_t size = 0;
};
std::optional<uint64_t> first_fit(std::vector<Block> used, uint64_t size, uint64_t arena_size, uint64_t align = 64);

// Checkpoint format of one table, little-endian:
//    0 magic "HOPPERPS"    8 u16 version   10 u16 consistency   12 i32 staleness
//   16 i32 num_workers    20 u32 name length   24 i64 chunk_size   32 u64 number of ranges R
//   40 i64 number of keys K   48 u8 has pending buffer, 7 bytes 0
//   56 name, R x (i64 lo, i64 hi), num_workers x i64 clock, K x f32 values, [K x f32 pending],
//   version 2 only (written for SparseSSP tables and parts of partitioned tables; version 1 otherwise):
//      i32 part (-1: none), u32 number of map parts M, M x (i64 lo, i64 hi), num_workers x u8
//      in_iteration, i64 number of chunks C with SparseSSP state (0 unless SparseSSP),
//      C x worker_words x u64 writers, C x u64 read marks,
//   u32 CRC-32 of every byte before it.
struct SnapshotMeta {
    std::string name;
    std::vector<KeyRange> ranges;
    int64_t chunk_size = 1;
    Consistency consistency = Consistency::BSP;
    int32_t staleness = 0;
    int32_t num_workers = 1;
    bool has_pending = false;
    int32_t part = -1;
    std::vector<KeyRange> range_map;
    int64_t sparse_chunks = 0;
    int64_t num_keys() const;
    bool version2() const { return part >= 0 || consistency == Consistency::SparseSSP; }
};
// A buffer with the header, name, ranges and range map written and room for the rest; the caller
// copies clocks, values, pending, in_iteration flags, writers and read marks at the offsets given,
// then calls seal_snapshot.
struct SnapshotBuffer {
    std::string bytes;
    std::size_t clocks_at = 0;
    std::size_t values_at = 0;
    std::size_t pending_at = 0;       // 0 without pending buffer
    std::size_t in_iteration_at = 0;  // 0 in version 1
    std::size_t writers_at = 0;       // 0 without SparseSSP state
    std::size_t read_marks_at = 0;
};
SnapshotBuffer start_snapshot(const SnapshotMeta& meta);
void seal_snapshot(SnapshotBuffer& buffer);
// A validated view of a snapshot (Error(Data) if malformed, truncated or corrupted). The pointers
// point into `bytes` (unaligned: copy with memcpy).
struct SnapshotView {
    SnapshotMeta meta;
    std::vector<int64_t> clocks;
    std::vector<int32_t> in_iteration;  // one per worker (all 0 in version 1)
    const char* values = nullptr;
    const char* pending = nullptr;
    const char* writers = nullptr;     // SparseSSP: sparse_chunks x worker_words x u64
    const char* read_marks = nullptr;  // SparseSSP: sparse_chunks x u64
};
SnapshotView read_snapshot(std::string_view bytes);
// The settings a snapshot describes (validated like make_settings).
TableSettings snapshot_settings(const SnapshotMeta& meta, const std::string& name);

}  // namespace hopper::ps
