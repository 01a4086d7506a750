// Parameter tables in shared memory: the operations the SQL functions (ps_fns.cpp) build on. Every
// function here may raise (as a C++ PgError or hopper::Error); none leaves a lock held.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hopper/ps.h"
#include "pg/common/guard.h"

namespace hopper::pg::ps_table {

// A table as this backend knows it: which slot, which incarnation of it, and its fixed settings.
struct Handle {
    int slot = -1;
    uint64_t generation = 0;
    Oid owner = InvalidOid;
    ps::TableSettings settings;
    ps::ClockRule rule;
    ps::ChunkIndex chunks;  // SparseSSP: dense chunk numbers (empty otherwise)
};

// Raises 55000 unless hopper was preloaded (shared memory exists).
void require_shared_memory();

// The table `name` of the current database (42704 if there is none). Cached per backend; the
// reference stays valid until the next open().
const Handle& open(const std::string& name);
// 22023 unless 0 <= worker < num_workers.
void check_worker(const Handle& h, int64_t worker);

// Which values an operation touches: `n` offsets, or `nspans` runs of offsets; under SparseSSP also
// the dense numbers of their chunks (ascending, each once).
struct Access {
    const int64_t* offsets = nullptr;
    std::size_t n = 0;
    const ps::Span* spans = nullptr;
    std::size_t nspans = 0;
    const int64_t* chunks = nullptr;
    std::size_t nchunks = 0;
    std::size_t count() const;
};

// The operations. Each binds `worker` to this session (55006 if another live session has it),
// waits as the table's consistency requires (interruptible; 55000 if a gone worker holds it back;
// 42704 if the table is dropped meanwhile) and then reads or updates the values. Under SparseSSP a
// Get first clocks if the worker's previous Get started an iteration (not again when retried after
// a cancelled wait), and an Add makes the worker a writer of the chunks it touches.
void get(const Handle& h, int worker, const Access& a, float* out);
void add(const Handle& h, int worker, const Access& a, const float* deltas);
int64_t clock(const Handle& h, int worker);

// Creates a table; with a snapshot, its clocks, values and pending buffer are the snapshot's.
// 42710 if the name is taken, 54000 if slots or memory run out.
void create(const ps::TableSettings& settings, const ps::SnapshotView* from = nullptr);
// Drops the table (owner or superuser: 42501 otherwise). Returns false if there is none and
// if_exists is set.
bool drop(const std::string& name, bool if_exists);

// A consistent snapshot (taken under the table's exclusive lock).
ps::SnapshotBuffer snapshot(const Handle& h);

struct TableInfo {
    std::string name;
    ps::TableSettings settings;
    Oid owner = InvalidOid;
    TimestampTz created_at = 0;
    int64_t min_clock = 0;
    int64_t max_clock = 0;
    uint64_t memory_bytes = 0;
    uint64_t get_calls = 0, get_keys = 0, add_calls = 0, add_keys = 0, clocks = 0, waits = 0, late_adds = 0;
};
std::vector<TableInfo> list_tables();  // of the current database, by name

struct WorkerInfo {
    std::string table;
    int32_t worker = 0;
    int64_t clock = 0;
    int32_t status = ps::kWorkerNotJoined;
    int32_t pid = 0;
};
std::vector<WorkerInfo> list_workers();

struct MemoryInfo {
    uint64_t arena_bytes = 0;
    uint64_t used_bytes = 0;
    uint64_t largest_free = 0;
    int max_tables = 0;
    int tables = 0;  // in all databases
};
MemoryInfo memory();

}  // namespace hopper::pg::ps_table
