// The run's cache of detoasted packed buffers (see buffer_cache.h).
#include <sys/statvfs.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "hopper/buffer_check.h"
#include "pg/training/buffer_cache.h"
#include "pg/common/datum.h"
#include "pg/common/settings.h"

extern "C" {
#include "access/detoast.h"
#include "access/parallel.h"
#include "lib/dshash.h"
#include "storage/dsm.h"
#include "storage/dsm_impl.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "utils/dsa.h"
}

namespace hopper::pg {

const char* const buffer_cache_setting_name = "hopper.buffer_cache_area";

namespace {

constexpr uint32 control_magic = 0x68627563;  // "hbuc"

// One buffer in the area. The key (TOAST relation OID << 32 | value OID) comes first, as dshash wants.
struct SharedEntry {
    uint64 key;
    dsa_pointer value;  // the detoasted varlena
    int32 rawsize;      // the TOAST pointer's sizes: a second check that the pointer is the same value
    uint32 extinfo;
    pg_atomic_uint32 finite_checked;
};

// What a worker checks before it trusts the area, and the counters. It lives in a small DSM segment of
// its own: a worker attaches it by handle, which fails softly (no segment) and has a known length, so
// not even a superuser's made-up setting can make a worker read outside mapped memory.
struct SharedControl {
    uint32 magic;
    int32 leader_pid;
    dsa_handle area;
    dshash_table_handle table;
    uint64 budget;
    pg_atomic_uint64 bytes, hits, misses, not_kept;
};

// This process's view of a run's cache: the backend's own (while its scope lives) or, in a
// parallel worker, the leader's (attached on first use, until the worker exits).
struct Attached {
    dsm_segment* segment = nullptr;  // holds the SharedControl
    dsa_area* area = nullptr;
    dshash_table* table = nullptr;
    SharedControl* control = nullptr;
};

int tranche_id = 0;
Attached own;             // the backend running the run
Attached in_worker;       // a parallel worker of such a backend
std::string in_worker_for;  // the setting value in_worker was attached for
std::string own_setting;  // "leader pid:control segment handle:tranche", published to workers
int scope_depth = 0;
BufferCacheStats stats;

dshash_parameters table_parameters(int tranche) {
    dshash_parameters p;
    p.key_size = sizeof(uint64);
    p.entry_size = sizeof(SharedEntry);
    p.compare_function = dshash_memcmp;
    p.hash_function = dshash_memhash;
    p.tranche_id = tranche;
    return p;
}

void register_tranche(int id) {
    LWLockRegisterTranche(id, "hopper_buffer_cache");
}

// With POSIX shared memory the area lives in /dev/shm, which containers often make small: a run
// keeps to half of its free room, so the cache never makes training fail for want of space.
uint64 shm_room(uint64 wanted) {
    if (dynamic_shared_memory_type != DSM_IMPL_POSIX) return wanted;
    struct statvfs fs;
    if (statvfs("/dev/shm", &fs) != 0) return 0;
    return std::min<uint64>(wanted, uint64(fs.f_bavail) * uint64(fs.f_frsize) / 2);
}

BufferCacheStats read_counters(const SharedControl* c) {
    BufferCacheStats s;
    auto* m = const_cast<SharedControl*>(c);
    s.hits = int64_t(pg_atomic_read_u64(&m->hits));
    s.misses = int64_t(pg_atomic_read_u64(&m->misses));
    s.not_kept = int64_t(pg_atomic_read_u64(&m->not_kept));
    s.bytes = int64_t(pg_atomic_read_u64(&m->bytes));
    s.budget = int64_t(c->budget);
    return s;
}

void detach(Attached& a) {
    // Detaching the run's last process frees the area and the segment; none of these raises an error.
    if (a.table) dshash_detach(a.table);
    if (a.area) dsa_detach(a.area);
    if (a.segment) dsm_detach(a.segment);
    a = Attached{};
}

// In a parallel worker: the leader's cache named by the setting, if it really is our leader's.
Attached* worker_cache() {
    if (!IsParallelWorker() || MyProc->lockGroupLeader == nullptr) return nullptr;
    const char* setting = GetConfigOption(buffer_cache_setting_name, true, false);
    if (setting == nullptr || *setting == '\0') return nullptr;
    if (in_worker.area && in_worker_for == setting) return &in_worker;
    int pid = 0, tranche = 0;
    unsigned handle = 0;
    if (std::sscanf(setting, "%d:%u:%d", &pid, &handle, &tranche) != 3 || pid != MyProc->lockGroupLeader->pid)
        return nullptr;
    detach(in_worker);
    const dshash_parameters params = table_parameters(tranche);
    bool ours = false;
    call([&] {
        // The handles are palloc'd: keep them for the worker's life, and the mappings too (a worker's
        // transaction end would otherwise detach them, warning of a leak).
        MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
        in_worker.segment = dsm_attach(dsm_handle(handle));  // NULL when there is no such segment
        if (in_worker.segment && dsm_segment_map_length(in_worker.segment) >= sizeof(SharedControl)) {
            dsm_pin_mapping(in_worker.segment);
            in_worker.control = static_cast<SharedControl*>(dsm_segment_address(in_worker.segment));
            ours = in_worker.control->magic == control_magic && in_worker.control->leader_pid == pid;
        }
        if (ours) {
            register_tranche(tranche);
            in_worker.area = dsa_attach(in_worker.control->area);
            dsa_pin_mapping(in_worker.area);
            in_worker.table = dshash_attach(in_worker.area, &params, in_worker.control->table, nullptr);
        }
        MemoryContextSwitchTo(old);
    });
    if (!ours) {
        detach(in_worker);
        return nullptr;
    }
    in_worker_for = setting;
    return &in_worker;
}

Attached* active_cache() {
    if (own.area) return &own;
    return worker_cache();
}

}  // namespace

BufferCacheScope::BufferCacheScope() {
    if (scope_depth++ > 0) return;  // a nested run shares the outer run's cache
    stats = BufferCacheStats{};
    const uint64 budget = shm_room(uint64(setting_buffer_cache_mb) * 1024 * 1024);
    stats.budget = int64_t(budget);
    if (budget == 0) return;
    try {
        call([&] {
            MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);  // the handles outlive transactions
            if (tranche_id == 0) tranche_id = LWLockNewTrancheId();
            register_tranche(tranche_id);
            own.area = dsa_create(tranche_id);
            dsa_pin_mapping(own.area);  // the run commits between iterations; the area must outlive them
            // The area's segments never exceed the budget (plus room for the table): an allocation
            // beyond it fails softly (DSA_ALLOC_NO_OOM) and the buffer is simply not kept.
            dsa_set_size_limit(own.area, budget + (std::size_t(2) << 20));
            own.segment = dsm_create(sizeof(SharedControl), 0);
            dsm_pin_mapping(own.segment);
            own.control = static_cast<SharedControl*>(dsm_segment_address(own.segment));
            std::memset(own.control, 0, sizeof(SharedControl));
            const dshash_parameters params = table_parameters(tranche_id);
            own.table = dshash_create(own.area, &params, nullptr);
            own.control->magic = control_magic;
            own.control->leader_pid = MyProcPid;
            own.control->area = dsa_get_handle(own.area);
            own.control->table = dshash_get_hash_table_handle(own.table);
            own.control->budget = budget;
            pg_atomic_init_u64(&own.control->bytes, 0);
            pg_atomic_init_u64(&own.control->hits, 0);
            pg_atomic_init_u64(&own.control->misses, 0);
            pg_atomic_init_u64(&own.control->not_kept, 0);
            own_setting = std::to_string(MyProcPid) + ":" + std::to_string(dsm_segment_handle(own.segment)) + ":" +
                          std::to_string(tranche_id);
            MemoryContextSwitchTo(old);
        });
    } catch (...) {
        detach(own);
        own_setting.clear();
        --scope_depth;
        throw;
    }
}

BufferCacheScope::~BufferCacheScope() {
    if (--scope_depth > 0) return;
    if (own.control) stats = read_counters(own.control);
    own_setting.clear();
    detach(own);
}

std::string buffer_cache_setting() { return own_setting; }

bool buffer_cache_attached() { return own.area != nullptr || in_worker.area != nullptr; }

PackedBuffer detoast_buffer(Datum d) {
    varlena* v = reinterpret_cast<varlena*>(DatumGetPointer(d));
    Attached* cache = VARATT_IS_EXTERNAL_ONDISK(v) ? active_cache() : nullptr;
    if (!cache) return {PointerGetDatum(call([&] { return pg_detoast_datum(v); }))};

    varatt_external pointer;
    VARATT_EXTERNAL_GET_POINTER(pointer, v);
    const uint64 key = (uint64(pointer.va_toastrelid) << 32) | uint64(pointer.va_valueid);
    SharedControl* control = cache->control;
    bool stale = false;
    PackedBuffer hit{};
    call([&] {
        PackedBuffer& r = hit;
        auto* e = static_cast<SharedEntry*>(dshash_find(cache->table, &key, false));
        if (e) {
            if (e->rawsize == pointer.va_rawsize && e->extinfo == pointer.va_extinfo) {
                r.value = PointerGetDatum(dsa_get_address(cache->area, e->value));
                r.finite_checked = &e->finite_checked;
            } else {
                stale = true;
            }
            dshash_release_lock(cache->table, e);
        }
    });
    if (hit.finite_checked) {
        pg_atomic_fetch_add_u64(&control->hits, 1);
        return hit;
    }
    // Detoast here (no lock held: fetching can fail), then copy into the area if the budget allows.
    varlena* local = call([&] { return pg_detoast_datum(v); });
    const uint64 size = VARSIZE(local);
    if (stale || pg_atomic_fetch_add_u64(&control->bytes, size) + size > control->budget) {
        if (!stale) pg_atomic_fetch_sub_u64(&control->bytes, size);
        pg_atomic_fetch_add_u64(&control->not_kept, 1);
        return {PointerGetDatum(local)};
    }
    bool kept_by_other = false;
    PackedBuffer kept{PointerGetDatum(local)};
    call([&] {
        PackedBuffer& r = kept;
        const dsa_pointer dp = dsa_allocate_extended(cache->area, size, DSA_ALLOC_HUGE | DSA_ALLOC_NO_OOM);
        if (!DsaPointerIsValid(dp)) return;
        void* copy = dsa_get_address(cache->area, dp);
        std::memcpy(copy, local, size);
        bool found = false;
        auto* e = static_cast<SharedEntry*>(dshash_find_or_insert(cache->table, &key, &found));
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
        dshash_release_lock(cache->table, e);
    });
    if (kept.finite_checked && !kept_by_other) {
        pg_atomic_fetch_add_u64(&control->misses, 1);
    } else if (kept.finite_checked) {
        pg_atomic_fetch_sub_u64(&control->bytes, size);
        pg_atomic_fetch_add_u64(&control->hits, 1);
    } else {
        pg_atomic_fetch_sub_u64(&control->bytes, size);
        pg_atomic_fetch_add_u64(&control->not_kept, 1);
    }
    return kept;
}

void check_finite_once(const PackedBuffer& buffer, const Float4Matrix& m, const char* what) {
    if (buffer.finite_checked && pg_atomic_read_u32(buffer.finite_checked) != 0) return;
    check_finite_buffer(m.data, {m.rows, m.cols}, what);
    if (buffer.finite_checked) pg_atomic_write_u32(buffer.finite_checked, 1);
}

BufferCacheStats last_buffer_cache_stats() { return own.control ? read_counters(own.control) : stats; }

}  // namespace hopper::pg

using namespace hopper::pg;

// buffer_cache_stats() -> (hits, misses, not_kept, kept_bytes, budget_bytes, attached) of this
// backend's last (or current) run of fit, fit_multiple or fit_data_parallel, its parallel workers'
// reads included; attached: whether the backend holds a run's area now.
HOPPER_FUNCTION(buffer_cache_stats) {
    const BufferCacheStats s = last_buffer_cache_stats();
    return make_record(fcinfo,
                       {Int64GetDatum(s.hits), Int64GetDatum(s.misses), Int64GetDatum(s.not_kept),
                        Int64GetDatum(s.bytes), Int64GetDatum(s.budget), BoolGetDatum(buffer_cache_attached())},
                       {});
}
