// A training run's dynamic shared memory area, shared by the backend that runs it (TrainingRun:
// fit, fit_multiple, fit_data_parallel, fit_automl) and the parallel workers of its statements. It
// holds what would otherwise go through tables or TOAST once per model and hop: the detoasted
// packed buffers (buffer_cache.h) and the model states passed between hops by reference
// (state_store.h).
//
// The area lives while a RunAreaScope (one run) does and is freed when the scope ends, normally or
// by an error. Workers find it through an internal setting that only the run's own statements carry
// (StatementSettings) and trust it only if it belongs to their own leader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "pg/common/pg_headers.h"

extern "C" {
#include "lib/dshash.h"
#include "port/atomics.h"
#include "storage/dsm.h"
#include "utils/dsa.h"
}

namespace hopper::pg {

// A dshash table keyed by plain bytes (compared and hashed as such): the run's buffer table and the
// server's buffer cache (shared_buffer_cache.cpp).
inline dshash_parameters bytes_keyed_table(std::size_t key_size, std::size_t entry_size, int tranche) {
    dshash_parameters p;
    p.key_size = key_size;
    p.entry_size = entry_size;
    p.compare_function = dshash_memcmp;
    p.hash_function = dshash_memhash;
    p.tranche_id = tranche;
    return p;
}

// Model-state stores a run can hold at once (a nested run gets its own).
constexpr int kMaxStateStores = 4;

// What a worker checks before it trusts the area, the buffer cache's table and counters, and the
// state stores. It lives in a small DSM segment of its own: a worker attaches it by handle, which
// fails softly (no segment) and has a known length, so not even a superuser's made-up setting can
// make a worker read outside mapped memory.
struct RunAreaControl {
    uint32 magic;
    int32 leader_pid;
    dsa_handle area;
    dshash_table_handle buffers;
    uint64 buffer_budget;
    pg_atomic_uint64 buffer_bytes, hits, misses, not_kept;
    // State stores: their slot arrays (InvalidDsaPointer when unused) and slot counts, written by
    // the leader before the statements that use them.
    dsa_pointer state_slots[kMaxStateStores];
    int32 state_slot_count[kMaxStateStores];
    // Reading ahead (read_ahead.h): the TOAST pointers to read, written by the leader before it
    // starts the worker; the leader's request to stop; the buffers the worker kept.
    dsa_pointer read_ahead_list;
    uint32 read_ahead_count;
    pg_atomic_uint32 read_ahead_stop;
    pg_atomic_uint64 read_ahead_kept;
    // The server's cache of buffers (shared_buffer_cache.h), when there is one: the run's name there,
    // set once the run lets go of its buffers, its first reads that found one kept before it, and the
    // run's buffers the cache lacked when it started (its readers load them by TOAST relation, at
    // their first miss in each; a read-ahead worker is given the same list).
    uint64 run_token;
    pg_atomic_uint32 closed;
    pg_atomic_uint64 warm;
    dsa_pointer run_list;
    uint32 run_list_count;
};

// This process's view of a run's area.
struct RunArea {
    dsm_segment* segment = nullptr;  // holds the RunAreaControl
    dsa_area* area = nullptr;
    dshash_table* buffers = nullptr;
    RunAreaControl* control = nullptr;
};

class RunAreaScope {
public:
    RunAreaScope();
    ~RunAreaScope();
    RunAreaScope(const RunAreaScope&) = delete;
    RunAreaScope& operator=(const RunAreaScope&) = delete;
};

// The run's area in this process: the backend's own during its run, or in a parallel worker its
// leader's (attached on first use, until the worker exits); nullptr otherwise.
RunArea* active_run_area();
// The backend's own area during its run (nullptr in workers and outside runs).
RunArea* own_run_area();
// In a background worker of the run (read_ahead.cpp): attaches the area `setting` (run_area_setting()
// of the leader) names, if it still exists and belongs to that leader; nullptr otherwise. Kept until
// the process exits.
RunArea* attach_run_area_for_background(const std::string& setting);

// With POSIX shared memory the area lives in /dev/shm, which containers often make small: how much
// of `wanted` bytes a run may take (half of the free room at most).
uint64 shm_room(uint64 wanted);

// Raises the area's size limit by `bytes` (the leader, before storing more).
void grow_run_area_limit(uint64 bytes);

// The value of the internal setting that lets the parallel workers of this backend's statements use
// the run's area ("" outside a run). StatementSettings sets it for the run's statements.
std::string run_area_setting();
extern const char* const run_area_setting_name;

}  // namespace hopper::pg
