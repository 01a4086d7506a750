// The run's cache of detoasted packed buffers (see buffer_cache.h).
#include "pg/runtime/buffer_cache.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "hopper/buffer_check.h"
#include "pg/common/datum.h"
#include "pg/common/settings.h"
#include "pg/runtime/run_area.h"
#include "pg/runtime/shared_buffer_cache.h"

extern "C" {
#include "access/detoast.h"
#include "access/table.h"
#include "access/tableam.h"
}

namespace hopper::pg {

namespace {

// One buffer the run has read. The key (TOAST relation OID << 32 | value OID) comes first, as
// dshash wants.
struct RunEntry {
    uint64 key;
    dsa_pointer value;  // CachedValueHeader, then the varlena: in the run's area, or in the server's cache
    int32 rawsize;      // the TOAST pointer's sizes: a second check that the pointer is the same value
    uint32 extinfo;
    bool in_server_cache;  // pinned there by this run until it ends
};

BufferCacheStats stats;  // the last run's, kept when its area goes

BufferCacheStats read_counters(const RunAreaControl& c) {
    BufferCacheStats s;
    auto& m = const_cast<RunAreaControl&>(c);
    s.hits = int64_t(pg_atomic_read_u64(&m.hits));
    s.misses = int64_t(pg_atomic_read_u64(&m.misses));
    s.not_kept = int64_t(pg_atomic_read_u64(&m.not_kept));
    s.bytes = int64_t(pg_atomic_read_u64(&m.buffer_bytes));
    s.budget = int64_t(c.buffer_budget);
    s.read_ahead_listed = int64_t(c.read_ahead_count);
    s.read_ahead_kept = int64_t(pg_atomic_read_u64(&m.read_ahead_kept));
    s.warm = int64_t(pg_atomic_read_u64(&m.warm));
    return s;
}

// The value's address in this process (mapping the run area's segment if needed, which may fail).
CachedValueHeader* header_of(const RunArea& run, const RunEntry& e) {
    if (e.in_server_cache) return shared_buffer_header(e.value);
    return static_cast<CachedValueHeader*>(call([&] { return dsa_get_address(run.area, e.value); }));
}

PackedBuffer buffer_of(CachedValueHeader* h) { return {PointerGetDatum(cached_varlena(h)), &h->finite_checked}; }

}  // namespace

dshash_parameters buffer_table_parameters(int tranche) {
    return bytes_keyed_table(sizeof(uint64), sizeof(RunEntry), tranche);
}

void remember_buffer_cache_stats(const RunAreaControl& control) { stats = read_counters(control); }

void release_run_buffers(RunArea& run) noexcept {
    if (!run.buffers || !shared_buffer_cache_enabled()) return;
    // From here on no process of the run records (and pins) another buffer: one that takes a
    // partition's lock after this sweep passed it sees the flag (cached_value).
    pg_atomic_write_u32(&run.control->closed, 1);
    try {
        call([&] {
            dshash_seq_status scan;
            dshash_seq_init(&scan, run.buffers, false);
            while (auto* e = static_cast<RunEntry*>(dshash_seq_next(&scan)))
                if (e->in_server_cache) shared_buffer_unpin(e->value);
            dshash_seq_term(&scan);
        });
    } catch (...) {  // cannot happen (no call above raises); a pin left would only keep a buffer cached
    }
}

namespace {

// A packed buffer read uncached: detoasted into the current memory context.
PackedBuffer detoasted(varlena* v) {
    return {PointerGetDatum(call([&] { return pg_detoast_datum(v); }))};
}

// The first process of a run to miss a buffer of a TOAST relation keeps all of the run's buffers of
// that relation the server's cache lacked when the run started, in one sequential scan
// (shared_buffer_scan), before it fetches the one it missed -- unless a read-ahead worker scans them
// from the relation's end: then readers fetch one by one from the start, as before, and the two meet
// where the worker (three times as fast) has reached. Claimed through a marker in the run's table: the
// key of value OID 0, which no TOAST value has.
void load_relation_once(RunArea* cache, Oid toastrel) {
    RunAreaControl* control = cache->control;
    if (!DsaPointerIsValid(control->run_list) || control->read_ahead_count != 0) return;
    const uint64 marker = uint64(toastrel) << 32;
    bool claimed = false;
    call([&] {
        bool found = false;
        auto* e = static_cast<RunEntry*>(dshash_find_or_insert(cache->buffers, &marker, &found));
        if (!found) {
            e->value = InvalidDsaPointer;
            e->rawsize = -1;
            e->extinfo = 0;
            e->in_server_cache = false;
            claimed = true;
        }
        dshash_release_lock(cache->buffers, e);
    });
    if (!claimed) return;
    const auto* list =
        static_cast<const varatt_external*>(call([&] { return dsa_get_address(cache->area, control->run_list); }));
    std::vector<varatt_external> relation;
    uint64 bytes = 0;
    for (uint32 i = 0; i < control->run_list_count; ++i)
        if (list[i].va_toastrelid == toastrel) {
            relation.push_back(list[i]);
            bytes += sizeof(CachedValueHeader) + detoasted_bytes(list[i]);
        }
    // Only what the run may hold (its readers pin each as they read it).
    if (pg_atomic_read_u64(&control->buffer_bytes) + bytes <= control->buffer_budget)
        shared_buffer_scan(relation, control->run_token, false, nullptr);
}

// The value `pointer` names through the server's cache (shared_buffer_cache.h), pinned for the run
// and recorded in its table. (The run's read-ahead worker fills the server's cache itself.)
PackedBuffer through_server_cache(RunArea* cache, varlena* v, const varatt_external& pointer, uint64 key) {
    RunAreaControl* control = cache->control;
    load_relation_once(cache, pointer.va_toastrelid);
    auto not_kept = [&]() -> PackedBuffer {
        pg_atomic_fetch_add_u64(&control->not_kept, 1);
        return detoasted(v);
    };
    // The run's budget counts the bytes it holds pinned.
    const uint64 size = sizeof(CachedValueHeader) + detoasted_bytes(pointer);
    if (pg_atomic_fetch_add_u64(&control->buffer_bytes, size) + size > control->buffer_budget) {
        pg_atomic_fetch_sub_u64(&control->buffer_bytes, size);
        return not_kept();
    }
    SharedAcquired got;
    try {
        got = shared_buffer_acquire(pointer, control->run_token);
    } catch (...) {
        pg_atomic_fetch_sub_u64(&control->buffer_bytes, size);
        throw;
    }
    if (!got.header) {
        pg_atomic_fetch_sub_u64(&control->buffer_bytes, size);
        return not_kept();
    }
    // Recorded in the run's table, unless another process of the run recorded it first (then its
    // entry, already pinned for the run, is used) or the run is ending.
    bool recorded = false, closed = false;
    CachedValueHeader* h = got.header;
    try {
        call([&] {
            bool found = false;
            auto* e = static_cast<RunEntry*>(dshash_find_or_insert(cache->buffers, &key, &found));
            if (found) {
                // Both in the server's cache (this process is attached): its address is computed here.
                h = e->rawsize == pointer.va_rawsize && e->extinfo == pointer.va_extinfo ? header_of(*cache, *e)
                                                                                         : nullptr;
            } else if (pg_atomic_read_u32(&control->closed) != 0) {
                dshash_delete_entry(cache->buffers, e);
                closed = true;
                return;
            } else {
                e->value = got.value;
                e->rawsize = pointer.va_rawsize;
                e->extinfo = pointer.va_extinfo;
                e->in_server_cache = true;
                recorded = true;
            }
            dshash_release_lock(cache->buffers, e);
        });
    } catch (...) {  // no room in the run's table: the pin is nobody's
        shared_buffer_unpin(got.value);
        pg_atomic_fetch_sub_u64(&control->buffer_bytes, size);
        throw;
    }
    if (!recorded) {
        shared_buffer_unpin(got.value);
        pg_atomic_fetch_sub_u64(&control->buffer_bytes, size);
        if (closed || !h) return not_kept();
        pg_atomic_fetch_add_u64(&control->hits, 1);
        return buffer_of(h);
    }
    // A miss: fetched by this read, or by a reader's scan of the run (load_relation_once). A hit: kept
    // by the run's read-ahead worker, or by an earlier call (warm).
    if (got.fetched || got.header->kept_by == control->run_token) {
        pg_atomic_fetch_add_u64(&control->misses, 1);
    } else {
        pg_atomic_fetch_add_u64(&control->hits, 1);
        if (got.header->kept_by != (control->run_token | kReadAhead)) {
            pg_atomic_fetch_add_u64(&control->warm, 1);
            shared_buffer_count_warm_read();
        }
    }
    return buffer_of(got.header);
}

// The TOAST value `v` points to (stored out of line), from `cache` or fetched and kept there. A
// read-ahead worker (by_read_ahead) only fills the cache: it counts what it keeps apart, and what
// it cannot keep it lets go (the reader will fetch it).
PackedBuffer cached_value(RunArea* cache, varlena* v, bool by_read_ahead) {
    varatt_external pointer;
    VARATT_EXTERNAL_GET_POINTER(pointer, v);
    const uint64 key = (uint64(pointer.va_toastrelid) << 32) | uint64(pointer.va_valueid);
    RunAreaControl* control = cache->control;
    // A process reads the server cache's values only once attached to it (a worker may find a value
    // the backend recorded).
    const bool server_cache = shared_buffer_attach();
    bool stale = false, found = false;
    RunEntry seen;
    call([&] {
        auto* e = static_cast<RunEntry*>(dshash_find(cache->buffers, &key, false));
        if (e) {
            found = true;
            seen = *e;
            dshash_release_lock(cache->buffers, e);
        }
    });
    if (found && seen.rawsize == pointer.va_rawsize && seen.extinfo == pointer.va_extinfo) {
        if (!by_read_ahead) pg_atomic_fetch_add_u64(&control->hits, 1);
        return buffer_of(header_of(*cache, seen));
    }
    stale = found;
    if (!stale && server_cache && !by_read_ahead) return through_server_cache(cache, v, pointer, key);
    // The run's own area. Packed float buffers are stored uncompressed (they hardly compress): those
    // are fetched from TOAST straight into the area, without a palloc'ed copy of the whole buffer
    // first -- its page faults and the second copy were most of the first epoch's cost after the
    // fetch itself. Others are detoasted here (no lock held: fetching can fail) and copied in if the
    // budget allows.
    const bool direct = !stale && !stored_compressed(pointer);
    varlena* local = direct ? nullptr : call([&] { return pg_detoast_datum(v); });
    const uint64 size = sizeof(CachedValueHeader) +
                        (direct ? uint64(VARATT_EXTERNAL_GET_EXTSIZE(pointer)) + VARHDRSZ : uint64(VARSIZE(local)));
    auto not_kept = [&]() -> PackedBuffer {
        if (by_read_ahead) return {};
        pg_atomic_fetch_add_u64(&control->not_kept, 1);
        if (!local) local = call([&] { return pg_detoast_datum(v); });
        return {PointerGetDatum(local)};
    };
    if (stale || pg_atomic_fetch_add_u64(&control->buffer_bytes, size) + size > control->buffer_budget) {
        if (!stale) pg_atomic_fetch_sub_u64(&control->buffer_bytes, size);
        return not_kept();
    }
    const dsa_pointer dp =
        call([&] { return dsa_allocate_extended(cache->area, size, DSA_ALLOC_HUGE | DSA_ALLOC_NO_OOM); });
    if (!DsaPointerIsValid(dp)) {
        pg_atomic_fetch_sub_u64(&control->buffer_bytes, size);
        return not_kept();
    }
    auto* header = static_cast<CachedValueHeader*>(dsa_get_address(cache->area, dp));
    pg_atomic_init_u32(&header->pins, 0);
    pg_atomic_init_u32(&header->finite_checked, 0);
    pg_atomic_init_u64(&header->last_used, 0);
    header->kept_by = 0;
    header->size = size - sizeof(CachedValueHeader);
    varlena* copy = cached_varlena(header);
    if (direct) {
        try {
            call([&] {
                SET_VARSIZE(copy, header->size);
                Relation toast = table_open(pointer.va_toastrelid, AccessShareLock);
                table_relation_fetch_toast_slice(toast, pointer.va_valueid, int32(header->size - VARHDRSZ), 0,
                                                 int32(header->size - VARHDRSZ), copy);
                table_close(toast, AccessShareLock);
            });
        } catch (...) {
            call([&] { dsa_free(cache->area, dp); });
            pg_atomic_fetch_sub_u64(&control->buffer_bytes, size);
            throw;
        }
    } else {
        std::memcpy(copy, local, header->size);
    }
    bool kept_by_other = false;
    CachedValueHeader* kept = nullptr;
    call([&] {
        bool found = false;
        auto* e = static_cast<RunEntry*>(dshash_find_or_insert(cache->buffers, &key, &found));
        if (found) {
            dsa_free(cache->area, dp);  // another process of the run kept it first
            kept_by_other = true;
        } else {
            e->value = dp;
            e->rawsize = pointer.va_rawsize;
            e->extinfo = pointer.va_extinfo;
            e->in_server_cache = false;
        }
        if (e->rawsize == pointer.va_rawsize && e->extinfo == pointer.va_extinfo) kept = header_of(*cache, *e);
        dshash_release_lock(cache->buffers, e);
    });
    if (kept && !kept_by_other) {
        pg_atomic_fetch_add_u64(by_read_ahead ? &control->read_ahead_kept : &control->misses, 1);
    } else if (kept) {
        pg_atomic_fetch_sub_u64(&control->buffer_bytes, size);
        if (!by_read_ahead) pg_atomic_fetch_add_u64(&control->hits, 1);
    } else {  // another process kept a different value under this key (it changed since): not ours
        pg_atomic_fetch_sub_u64(&control->buffer_bytes, size);
        return not_kept();
    }
    return buffer_of(kept);
}

}  // namespace

PackedBuffer detoast_buffer(Datum d) {
    varlena* v = reinterpret_cast<varlena*>(DatumGetPointer(d));
    RunArea* cache = VARATT_IS_EXTERNAL_ONDISK(v) ? active_run_area() : nullptr;
    if (cache && cache->control->buffer_budget == 0) cache = nullptr;  // hopper.buffer_cache_mb = 0: off
    if (!cache) return detoasted(v);
    return cached_value(cache, v, false);
}

bool read_ahead_buffer(RunArea& cache, const varatt_external& pointer) {
    // An out-of-line value's pointer, as a tuple holds it.
    alignas(8) char datum[VARHDRSZ_EXTERNAL + sizeof(varatt_external)];
    SET_VARTAG_EXTERNAL(datum, VARTAG_ONDISK);
    std::memcpy(VARDATA_EXTERNAL(datum), &pointer, sizeof(varatt_external));
    const PackedBuffer kept = cached_value(&cache, reinterpret_cast<varlena*>(datum), true);
    if (!kept.finite_checked) return false;
    // The first reader's check (check_finite_once) done here as well, so that the reader finds it
    // done: a pass over every value, ~30 ms of Fashion-MNIST's first iteration. A buffer that is not
    // a float array or holds a value that is not finite stays unchecked: its reader reports it.
    if (pg_atomic_read_u32(kept.finite_checked) == 0) {
        try {
            const Float4Matrix m = float4_matrix(kept.value, "buffer");
            check_finite_buffer(m.data, {m.rows, m.cols}, "buffer");
            pg_atomic_write_u32(kept.finite_checked, 1);
        } catch (const std::exception&) {}
    }
    return true;
}

void check_finite_once(const PackedBuffer& buffer, const Float4Matrix& m, const char* what) {
    if (buffer.finite_checked && pg_atomic_read_u32(buffer.finite_checked) != 0) return;
    check_finite_buffer(m.data, {m.rows, m.cols}, what);
    if (buffer.finite_checked) pg_atomic_write_u32(buffer.finite_checked, 1);
}

bool buffer_cache_attached() { return active_run_area() != nullptr; }

BufferCacheStats last_buffer_cache_stats() {
    const RunArea* own = own_run_area();
    return own ? read_counters(*own->control) : stats;
}

std::vector<varatt_external> packed_buffer_pointers(Spi& spi, const TableName& table, uint64_t& bytes) {
    std::vector<varatt_external> out;
    // A scan hands over the values as stored: TOAST pointers, nothing is fetched here.
    const PackedArrays arrays = packed_array_columns(table);
    spi.execute("SELECT d." + arrays.x + ", d." + arrays.y + " FROM " + table.quoted() +
                " AS d ORDER BY d.dist_key, d.buffer_id");
    for (uint64_t r = 0; r < spi.rows(); ++r)
        for (int c = 0; c < 2; ++c) {
            bool isnull = false;
            const Datum d = spi.datum(r, c, &isnull);
            if (isnull) continue;
            auto* v = reinterpret_cast<varlena*>(DatumGetPointer(d));
            if (!VARATT_IS_EXTERNAL_ONDISK(v)) continue;
            varatt_external p;
            VARATT_EXTERNAL_GET_POINTER(p, v);
            out.push_back(p);
            bytes += uint64_t(p.va_rawsize);
        }
    return out;
}

void keep_packed_buffers(Spi& spi, const TableName& table) {
    if (!shared_buffer_cache_enabled()) return;
    uint64_t bytes = 0;
    const std::vector<varatt_external> pointers = packed_buffer_pointers(spi, table, bytes);
    // A table larger than the cache would only push out what is there, its own first buffers included.
    if (bytes > shared_buffer_cache_size()) return;
    shared_buffer_keep(pointers);
}

}  // namespace hopper::pg

using namespace hopper::pg;

// buffer_cache_stats() -> (hits, misses, not_kept, kept_bytes, budget_bytes, attached,
// read_ahead_listed, read_ahead_kept, warm) of this backend's last (or current) run of fit,
// fit_multiple or fit_data_parallel, its parallel workers' reads included; attached: whether the
// backend holds a run's area now; read_ahead_*: what its read-ahead worker was given and kept; warm:
// buffers found in the server's cache at their first read, kept there by an earlier call.
HOPPER_FUNCTION(buffer_cache_stats) {
    const BufferCacheStats s = last_buffer_cache_stats();
    return make_record(fcinfo,
                       {Int64GetDatum(s.hits), Int64GetDatum(s.misses), Int64GetDatum(s.not_kept),
                        Int64GetDatum(s.bytes), Int64GetDatum(s.budget), BoolGetDatum(buffer_cache_attached()),
                        Int64GetDatum(s.read_ahead_listed), Int64GetDatum(s.read_ahead_kept), Int64GetDatum(s.warm)},
                       {});
}

// shared_buffer_cache_stats() -> the server's cache (shared_buffer_cache.h): whether there is one,
// its size, what it holds, and its counters since the server started.
HOPPER_FUNCTION(shared_buffer_cache_stats) {
    const SharedBufferCacheStats s = shared_buffer_cache_stats();
    return make_record(fcinfo,
                       {BoolGetDatum(s.enabled), Int64GetDatum(int64(s.size_bytes)), Int64GetDatum(int64(s.used_bytes)),
                        Int64GetDatum(int64(s.buffers)), Int64GetDatum(int64(s.pinned)), Int64GetDatum(int64(s.kept)),
                        Int64GetDatum(int64(s.warm_reads)), Int64GetDatum(int64(s.evicted)),
                        Int64GetDatum(int64(s.stale))},
                       {});
}

// shared_buffer_cache_reset() -> how many buffers the server's cache let go (all but those running
// calls hold).
HOPPER_FUNCTION(shared_buffer_cache_reset) { PG_RETURN_INT64(int64(shared_buffer_cache_reset())); }
