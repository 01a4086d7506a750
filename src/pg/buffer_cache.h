// A run's cache of detoasted packed buffers, kept by the backend that runs fit / fit_multiple.
//
// A packed buffer (~800 kB for 256 Fashion-MNIST images) is stored out of line in TOAST, in
// ~400 chunks of 2 kB; fetching them costs a fifth of an epoch when one process trains every
// segment's models (one segment, or hopper.parallel_segments = 1), and the run reads the same
// buffers once per model per iteration. Within one run, the backend keeps each buffer it detoasted,
// keyed by its TOAST pointer: a TOAST value is never changed in place (an UPDATE writes a new value
// with a new OID), so the pointer names the same bytes for the whole run. The cache is active only
// inside a BufferCacheScope (one run), is bounded by hopper.buffer_cache_mb (what does not fit is
// simply detoasted as before), and is freed when the scope ends, normally or by an error.
// Parallel workers are new processes per statement and detoast as before.
#pragma once

#include <cstdint>

#include "pg/datum.h"
#include "pg/guard.h"

namespace hopper::pg {

struct BufferCacheStats {
    int64_t hits = 0;
    int64_t misses = 0;        // detoasted and kept
    int64_t not_kept = 0;      // detoasted, not kept: the budget was full (or an OID was reused)
    int64_t bytes = 0;         // bytes kept
    int64_t budget = 0;        // hopper.buffer_cache_mb when the run started, in bytes
};

class BufferCacheScope {
public:
    BufferCacheScope();
    ~BufferCacheScope();
    BufferCacheScope(const BufferCacheScope&) = delete;
    BufferCacheScope& operator=(const BufferCacheScope&) = delete;
};

// A packed buffer as a plain (detoasted) varlena: from the cache when the run's scope is active
// and the value is stored out of line, else detoasted into the current memory context.
struct PackedBuffer {
    Datum value;
    bool* finite_checked = nullptr;  // the cache entry's flag; nullptr when not cached
};
PackedBuffer detoast_buffer(Datum d);

// check_finite_buffer, once per cached buffer and run: the cache keeps the bytes that passed.
void check_finite_once(const PackedBuffer& buffer, const Float4Matrix& m, const char* what);

// This backend's counters of its last (or current) run.
BufferCacheStats last_buffer_cache_stats();

}  // namespace hopper::pg
