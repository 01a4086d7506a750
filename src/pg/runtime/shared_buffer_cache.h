// The server's cache of detoasted packed buffers, kept from one call to the next
// (hopper.shared_buffer_cache_mb).
//
// A run keeps each packed buffer it reads once detoasted for the rest of the run (buffer_cache.h).
// On its own that cache starts cold at every call: the first iteration fetched every buffer from
// TOAST into shared memory the kernel had to zero and map for the run (and unmap after it), and took
// 50-54% more CPU than a steady one on Fashion-MNIST (6% warm, 25% cold with this cache:
// bench/results/2026-11-28-vm-first-iteration.md). When hopper is in
// shared_preload_libraries and hopper.shared_buffer_cache_mb > 0, buffers are kept instead in a
// region of the server's shared memory reserved at start, for as long as room allows: a run pins the
// buffers it reads until it ends, and the least recently used buffers no run has pinned make room
// for new ones. preprocess keeps the buffers it has just written, so the call after it starts warm,
// as does any later call on the same packed table.
//
// The key names the bytes. A TOAST value is never changed: its pointer (TOAST relation, value OID)
// names it until it is deleted and vacuumed away and its OID is handed out again, which takes the
// server's OID counter going round (2^32 OIDs). The key adds the database, tablespace and file of
// the TOAST relation, so TRUNCATE, VACUUM FULL, CLUSTER, DROP and ALTER TABLE ... SET TABLESPACE (new
// files) leave old entries unreachable; a run checks an entry once, at its first read, against the
// value's first chunk (still the tuple it was fetched from, inserted by the same transaction, holding
// the same bytes), and an entry kept more than 2^31 transactions ago is fetched again. No role reads
// another's data through it: the cache is consulted only with a TOAST pointer the executor read from
// a row the role could read, and the pointer is part of the key.
//
// A crash (kill -9 of any backend) is the usual crash restart: the server's shared memory, this
// region included, is made anew. Without hopper in shared_preload_libraries there is no region and
// every run keeps its buffers in an area of its own, freed when it ends (run_area.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "pg/common/pg_headers.h"

extern "C" {
#include "port/atomics.h"
#include "utils/dsa.h"
#include "utils/relcache.h"
}

namespace hopper::pg {

// What every cached value starts with, in the server's cache and in a run's own area: 32 bytes,
// then the varlena (whose floats stay as aligned as the allocation).
struct CachedValueHeader {
    pg_atomic_uint32 pins;            // runs holding the value now (server's cache only)
    pg_atomic_uint32 finite_checked;  // check_finite_buffer passed on these bytes
    pg_atomic_uint64 last_used;       // the cache's clock when last pinned
    uint64 kept_by;                   // the run that fetched it (0: preprocess), to count warm reads
    uint64 size;                      // the varlena's bytes
};
static_assert(sizeof(CachedValueHeader) == 32, "the varlena follows at 32 bytes");

inline varlena* cached_varlena(CachedValueHeader* h) { return reinterpret_cast<varlena*>(h + 1); }

// Whether an out-of-line value is stored compressed (VARATT_EXTERNAL_IS_COMPRESSED, spelled out: the
// macro compares signed with unsigned), and the bytes of its varlena once detoasted.
inline bool stored_compressed(const varatt_external& p) {
    return uint32(VARATT_EXTERNAL_GET_EXTSIZE(p)) < uint32(p.va_rawsize - VARHDRSZ);
}
inline uint64 detoasted_bytes(const varatt_external& p) {
    return stored_compressed(p) ? uint64(p.va_rawsize) : uint64(VARATT_EXTERNAL_GET_EXTSIZE(p)) + VARHDRSZ;
}

// _PG_init: the setting, and the shared memory request when preloading.
void shared_buffer_cache_init();
// Whether this server has the cache (hopper preloaded, hopper.shared_buffer_cache_mb > 0).
bool shared_buffer_cache_enabled();
// Its size in bytes (0 without it).
uint64 shared_buffer_cache_size();
// Attaches this process to the cache (once; the first process creates it); false without it. Every
// process that reads a value through shared_buffer_header must have attached first.
bool shared_buffer_attach();
// A number naming one run (nonzero), for CachedValueHeader::kept_by; 0 without the cache.
uint64 shared_buffer_cache_run_token();

// The out-of-line value `pointer` names, pinned: found in the cache (and checked) or fetched from
// TOAST and kept there. `header` is null when it cannot be kept (no room even after evicting every
// unpinned value). Raises what detoasting raises.
struct SharedAcquired {
    CachedValueHeader* header = nullptr;
    dsa_pointer value = InvalidDsaPointer;
    bool fetched = false;  // fetched now (else found)
};
SharedAcquired shared_buffer_acquire(const varatt_external& pointer, uint64 run_token);
void shared_buffer_unpin(dsa_pointer value);
CachedValueHeader* shared_buffer_header(dsa_pointer value);

// For each pointer, whether the cache holds its value now (a quick look: nothing is checked or pinned).
std::vector<bool> shared_buffer_holds(const std::vector<varatt_external>& pointers);

// Keeps the out-of-line values `pointers` name (preprocess, after writing them), unpinned: those
// stored uncompressed by one sequential scan of each TOAST relation (about three times as fast as
// fetching them one by one through its index), others one by one. Stops at the first that finds no room.
void shared_buffer_keep(const std::vector<varatt_external>& pointers);

// Keeps `value`, the bytes this transaction just stored out of line in `toast` under `pointer`
// (preprocess, as it writes a buffer it still holds), unpinned: what shared_buffer_keep would fetch
// back from TOAST, without fetching it. Skipped when the cache has it, the relation is not a heap,
// the value is stored compressed or its size is not the pointer's; NoRoom when it does not fit.
enum class SharedPut { Kept, Skipped, NoRoom };
SharedPut shared_buffer_put(Relation toast, const varatt_external& pointer, const varlena* value);

// Keeps the values stored uncompressed among `pointers` that the cache lacks, unpinned, marked as
// kept by `kept_by`, each TOAST relation in one sequential scan (about three times as fast as fetching
// the values one by one through its index), from its end if `backward`; each value is there for
// readers as soon as its last chunk is read, and values readers keep meanwhile are skipped. Stops
// making room at the first value that finds none, and early once *stop (if given) is nonzero. How many
// it kept. A run's readers (forward) and its read-ahead worker (backward, kept_by | kReadAhead) use it.
std::size_t shared_buffer_scan(const std::vector<varatt_external>& pointers, uint64 kept_by, bool backward,
                               pg_atomic_uint32* stop);
// CachedValueHeader::kept_by of what a run's read-ahead worker kept: the run's token with this bit.
constexpr uint64 kReadAhead = uint64(1) << 63;

struct SharedBufferCacheStats {
    bool enabled = false;
    uint64 size_bytes = 0;  // the region reserved at start
    uint64 used_bytes = 0;  // values kept (headers included)
    uint64 buffers = 0;
    uint64 pinned = 0;      // buffers held by running calls
    uint64 kept = 0;        // fetched and kept since the server started
    uint64 warm_reads = 0;  // first reads of a run served by a buffer an earlier call kept
    uint64 evicted = 0;     // let go to make room (least recently used first)
    uint64 stale = 0;       // found but not the value the pointer names any more: fetched again
};
SharedBufferCacheStats shared_buffer_cache_stats();
void shared_buffer_count_warm_read();
// Lets go of every buffer no running call holds; how many.
uint64 shared_buffer_cache_reset();

}  // namespace hopper::pg
