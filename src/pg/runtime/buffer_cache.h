// A run's cache of detoasted packed buffers, shared by the backend that runs a training run (fit,
// fit_multiple, fit_data_parallel, fit_automl) and the parallel workers of its statements.
//
// A packed buffer (~800 kB for 256 Fashion-MNIST images) is stored out of line in TOAST, in
// ~400 chunks of 2 kB; fetching them cost a fifth of an epoch (bench/), and a run reads every buffer
// once per model and iteration, in the backend (one segment) or in parallel workers that PostgreSQL
// starts anew for every statement. So the run keeps each buffer once detoasted in its shared area
// (run_area.h), keyed by its TOAST pointer: a TOAST value is never changed in place (an UPDATE writes
// a new value with a new OID), so within one run the pointer names the same bytes. The cache is
// bounded by hopper.buffer_cache_mb (what does not fit is detoasted as before).
//
// Where the server has its cache of buffers kept between calls (shared_buffer_cache.h), the run
// keeps its buffers there, pinned until it ends, and its table only records which it holds;
// otherwise they live in the run's area and go with it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pg/common/datum.h"
#include "pg/common/guard.h"
#include "pg/common/names.h"
#include "pg/common/spi.h"

extern "C" {
#include "port/atomics.h"
#include "utils/dsa.h"
}

namespace hopper::pg {

struct BufferCacheStats {
    int64_t hits = 0;
    int64_t misses = 0;             // detoasted and kept
    int64_t not_kept = 0;           // detoasted, not kept: the budget was full (or an OID was reused)
    int64_t bytes = 0;              // bytes kept
    int64_t budget = 0;             // the run's budget in bytes: hopper.buffer_cache_mb, or less if
                                    // /dev/shm has less room
    int64_t read_ahead_listed = 0;  // buffers given to a read-ahead worker (read_ahead.h)
    int64_t read_ahead_kept = 0;    // of those, kept by it before any reader asked for them
    int64_t warm = 0;               // buffers found in the server's cache at their first read, kept
                                    // there by an earlier call (preprocess, a previous run)
};

// A packed buffer as a plain (detoasted) varlena: from the run's cache when there is one and the
// value is stored out of line, else detoasted into the current memory context.
struct PackedBuffer {
    Datum value;
    pg_atomic_uint32* finite_checked = nullptr;  // the cache entry's flag; nullptr when not cached
};
PackedBuffer detoast_buffer(Datum d);

struct RunArea;
// At the end of a run (or of its backend): lets go of the buffers it holds in the server's cache.
void release_run_buffers(RunArea& run) noexcept;
// In a read-ahead worker, without the server's cache: keeps the TOAST value `pointer` names in the
// run's area unless it is there already or the budget is full; whether the area holds it now.
bool read_ahead_buffer(RunArea& cache, const varatt_external& pointer);

// check_finite_buffer, once per cached buffer and run: the cache keeps the bytes that passed.
void check_finite_once(const PackedBuffer& buffer, const Float4Matrix& m, const char* what);

// Whether this process holds a run's area now (the backend during its run, a worker of it).
bool buffer_cache_attached();

// This backend's counters of its last (or current) run, workers' reads included.
BufferCacheStats last_buffer_cache_stats();

// The out-of-line values of a packed table's buffers, in dist_key, buffer_id order (independent
// then dependent of each row); `bytes` adds their sizes. Nothing is fetched.
std::vector<varatt_external> packed_buffer_pointers(Spi& spi, const TableName& table, uint64_t& bytes);

// preprocess, once the table is written: keeps its buffers in the server's cache (when there is one
// and they fit), so that the call after it starts warm.
void keep_packed_buffers(Spi& spi, const TableName& table);

}  // namespace hopper::pg
