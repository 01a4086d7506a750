// The run's cache of detoasted packed buffers (see buffer_cache.h).
#include "pg/runtime/buffer_cache.h"

#include <cstdint>
#include <cstring>
#include <string>

#include "hopper/buffer_check.h"
#include "pg/common/datum.h"
#include "pg/common/settings.h"
#include "pg/runtime/run_area.h"

extern "C" {
#include "access/detoast.h"
#include "access/table.h"
#include "access/tableam.h"
}

namespace hopper::pg {

namespace {

// One buffer in the area. The key (TOAST relation OID << 32 | value OID) comes first, as dshash wants.
struct SharedEntry {
    uint64 key;
    dsa_pointer value;  // the detoasted varlena
    int32 rawsize;      // the TOAST pointer's sizes: a second check that the pointer is the same value
    uint32 extinfo;
    pg_atomic_uint32 finite_checked;
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
    return s;
}

}  // namespace

dshash_parameters buffer_table_parameters(int tranche) {
    dshash_parameters p;
    p.key_size = sizeof(uint64);
    p.entry_size = sizeof(SharedEntry);
    p.compare_function = dshash_memcmp;
    p.hash_function = dshash_memhash;
    p.tranche_id = tranche;
    return p;
}

void remember_buffer_cache_stats(const RunAreaControl& control) { stats = read_counters(control); }

namespace {

// The TOAST value `v` points to (stored out of line), from `cache` or fetched and kept there. A
// read-ahead worker (by_read_ahead) only fills the cache: it counts what it keeps apart, and what
// it cannot keep it lets go (the reader will fetch it).
PackedBuffer cached_value(RunArea* cache, varlena* v, bool by_read_ahead) {
    varatt_external pointer;
    VARATT_EXTERNAL_GET_POINTER(pointer, v);
    const uint64 key = (uint64(pointer.va_toastrelid) << 32) | uint64(pointer.va_valueid);
    RunAreaControl* control = cache->control;
    bool stale = false;
    PackedBuffer hit{};
    call([&] {
        PackedBuffer& r = hit;
        auto* e = static_cast<SharedEntry*>(dshash_find(cache->buffers, &key, false));
        if (e) {
            if (e->rawsize == pointer.va_rawsize && e->extinfo == pointer.va_extinfo) {
                r.value = PointerGetDatum(dsa_get_address(cache->area, e->value));
                r.finite_checked = &e->finite_checked;
            } else {
                stale = true;
            }
            dshash_release_lock(cache->buffers, e);
        }
    });
    if (hit.finite_checked) {
        if (!by_read_ahead) pg_atomic_fetch_add_u64(&control->hits, 1);
        return hit;
    }
    // Packed float buffers are stored uncompressed (they hardly compress): those are fetched from
    // TOAST straight into the area, without a palloc'ed copy of the whole buffer first -- its page
    // faults and the second copy were most of the first epoch's cost after the fetch itself. Others
    // are detoasted here (no lock held: fetching can fail) and copied in if the budget allows.
    // (VARATT_EXTERNAL_IS_COMPRESSED, spelled out: the macro compares signed with unsigned.)
    const bool compressed = uint32(VARATT_EXTERNAL_GET_EXTSIZE(pointer)) < uint32(pointer.va_rawsize - VARHDRSZ);
    const bool direct = !stale && !compressed;
    varlena* local = direct ? nullptr : call([&] { return pg_detoast_datum(v); });
    const uint64 size = direct ? uint64(VARATT_EXTERNAL_GET_EXTSIZE(pointer)) + VARHDRSZ : uint64(VARSIZE(local));
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
    auto* copy = static_cast<varlena*>(dsa_get_address(cache->area, dp));
    if (direct) {
        try {
            call([&] {
                SET_VARSIZE(copy, size);
                Relation toast = table_open(pointer.va_toastrelid, AccessShareLock);
                table_relation_fetch_toast_slice(toast, pointer.va_valueid, int32(size - VARHDRSZ), 0,
                                                 int32(size - VARHDRSZ), copy);
                table_close(toast, AccessShareLock);
            });
        } catch (...) {
            call([&] { dsa_free(cache->area, dp); });
            pg_atomic_fetch_sub_u64(&control->buffer_bytes, size);
            throw;
        }
    } else {
        std::memcpy(copy, local, size);
    }
    bool kept_by_other = false;
    PackedBuffer kept{};
    call([&] {
        PackedBuffer& r = kept;
        bool found = false;
        auto* e = static_cast<SharedEntry*>(dshash_find_or_insert(cache->buffers, &key, &found));
        if (found) {
            dsa_free(cache->area, dp);  // another process of the run kept it first
            kept_by_other = true;
        } else {
            e->value = dp;
            e->rawsize = pointer.va_rawsize;
            e->extinfo = pointer.va_extinfo;
            pg_atomic_init_u32(&e->finite_checked, 0);
        }
        if (e->rawsize == pointer.va_rawsize && e->extinfo == pointer.va_extinfo) {
            r.value = PointerGetDatum(dsa_get_address(cache->area, e->value));
            r.finite_checked = &e->finite_checked;
        }
        dshash_release_lock(cache->buffers, e);
    });
    if (kept.finite_checked && !kept_by_other) {
        pg_atomic_fetch_add_u64(by_read_ahead ? &control->read_ahead_kept : &control->misses, 1);
    } else if (kept.finite_checked) {
        pg_atomic_fetch_sub_u64(&control->buffer_bytes, size);
        if (!by_read_ahead) pg_atomic_fetch_add_u64(&control->hits, 1);
    } else {  // another process kept a different value under this key (it changed since): not ours
        pg_atomic_fetch_sub_u64(&control->buffer_bytes, size);
        return not_kept();
    }
    return kept;
}

}  // namespace

PackedBuffer detoast_buffer(Datum d) {
    varlena* v = reinterpret_cast<varlena*>(DatumGetPointer(d));
    RunArea* cache = VARATT_IS_EXTERNAL_ONDISK(v) ? active_run_area() : nullptr;
    if (cache && cache->control->buffer_budget == 0) cache = nullptr;  // hopper.buffer_cache_mb = 0: off
    if (!cache) return {PointerGetDatum(call([&] { return pg_detoast_datum(v); }))};
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

}  // namespace hopper::pg

using namespace hopper::pg;

// buffer_cache_stats() -> (hits, misses, not_kept, kept_bytes, budget_bytes, attached,
// read_ahead_listed, read_ahead_kept) of this backend's last (or current) run of fit, fit_multiple
// or fit_data_parallel, its parallel workers' reads included; attached: whether the backend holds a
// run's area now; read_ahead_*: what its read-ahead worker was given and kept.
HOPPER_FUNCTION(buffer_cache_stats) {
    const BufferCacheStats s = last_buffer_cache_stats();
    return make_record(fcinfo,
                       {Int64GetDatum(s.hits), Int64GetDatum(s.misses), Int64GetDatum(s.not_kept),
                        Int64GetDatum(s.bytes), Int64GetDatum(s.budget), BoolGetDatum(buffer_cache_attached()),
                        Int64GetDatum(s.read_ahead_listed), Int64GetDatum(s.read_ahead_kept)},
                       {});
}
