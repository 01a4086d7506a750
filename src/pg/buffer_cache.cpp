// The run's cache of detoasted packed buffers (see buffer_cache.h).
#include <cstdint>
#include <cstring>
#include <unordered_map>

#include "hopper/buffer_check.h"
#include "pg/buffer_cache.h"
#include "pg/datum.h"
#include "pg/settings.h"

extern "C" {
#include "access/detoast.h"
}

namespace hopper::pg {
namespace {

struct CachedBuffer {
    varlena* value;      // detoasted, in cache_context
    int32 rawsize;       // the TOAST pointer's sizes: a second check that the pointer is the same value
    uint32 extinfo;
    bool finite_checked;
};

MemoryContext cache_context = nullptr;
std::unordered_map<uint64_t, CachedBuffer>* entries = nullptr;  // key: toast relation OID << 32 | value OID
int scope_depth = 0;
BufferCacheStats stats;

}  // namespace

BufferCacheScope::BufferCacheScope() {
    if (scope_depth++ > 0) return;  // a nested run shares the outer run's cache
    stats = BufferCacheStats{};
    stats.budget = int64_t(setting_buffer_cache_mb) * 1024 * 1024;
    if (stats.budget == 0) return;
    entries = new std::unordered_map<uint64_t, CachedBuffer>();
    try {
        cache_context = call([] {
            return AllocSetContextCreate(TopMemoryContext, "hopper buffer cache", ALLOCSET_DEFAULT_SIZES);
        });
    } catch (...) {
        delete entries;
        entries = nullptr;
        --scope_depth;
        throw;
    }
}

BufferCacheScope::~BufferCacheScope() {
    if (--scope_depth > 0) return;
    delete entries;
    entries = nullptr;
    // Deleting a memory context frees its blocks and cannot raise an error.
    if (cache_context) MemoryContextDelete(cache_context);
    cache_context = nullptr;
}

PackedBuffer detoast_buffer(Datum d) {
    varlena* v = reinterpret_cast<varlena*>(DatumGetPointer(d));
    if (!cache_context || !VARATT_IS_EXTERNAL_ONDISK(v))
        return {PointerGetDatum(call([&] { return pg_detoast_datum(v); }))};

    varatt_external pointer;
    VARATT_EXTERNAL_GET_POINTER(pointer, v);
    const uint64_t key = (uint64_t(pointer.va_toastrelid) << 32) | uint64_t(pointer.va_valueid);
    auto found = entries->find(key);
    if (found != entries->end() && found->second.rawsize == pointer.va_rawsize &&
        found->second.extinfo == pointer.va_extinfo) {
        ++stats.hits;
        return {PointerGetDatum(found->second.value), &found->second.finite_checked};
    }
    // va_rawsize is the detoasted size, header included: decide before fetching.
    const std::size_t size = std::size_t(pointer.va_rawsize);
    if (found != entries->end() || std::size_t(stats.bytes) + size > std::size_t(stats.budget)) {
        ++stats.not_kept;
        return {PointerGetDatum(call([&] { return pg_detoast_datum(v); }))};
    }
    varlena* kept = call([&] {
        MemoryContext old = MemoryContextSwitchTo(cache_context);
        varlena* r = detoast_attr(v);
        MemoryContextSwitchTo(old);
        return r;
    });
    auto added = entries->emplace(key, CachedBuffer{kept, pointer.va_rawsize, pointer.va_extinfo, false}).first;
    ++stats.misses;
    stats.bytes += int64_t(VARSIZE(kept));
    return {PointerGetDatum(kept), &added->second.finite_checked};
}

void check_finite_once(const PackedBuffer& buffer, const Float4Matrix& m, const char* what) {
    if (buffer.finite_checked && *buffer.finite_checked) return;
    check_finite_buffer(m.data, {m.rows, m.cols}, what);
    if (buffer.finite_checked) *buffer.finite_checked = true;
}

BufferCacheStats last_buffer_cache_stats() { return stats; }

}  // namespace hopper::pg

using namespace hopper::pg;

// buffer_cache_stats() -> (hits, misses, not_kept, kept_bytes, budget_bytes) of this backend's last
// (or current) run of fit, fit_multiple or fit_data_parallel.
HOPPER_FUNCTION(buffer_cache_stats) {
    const BufferCacheStats s = last_buffer_cache_stats();
    return make_record(fcinfo,
                       {Int64GetDatum(s.hits), Int64GetDatum(s.misses), Int64GetDatum(s.not_kept),
                        Int64GetDatum(s.bytes), Int64GetDatum(s.budget)},
                       {});
}
