// The run's shared memory area (see run_area.h).
#include "pg/runtime/run_area.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include <sys/statvfs.h>

#include "pg/common/guard.h"
#include "pg/common/settings.h"
#include "pg/runtime/buffer_cache.h"
#include "pg/runtime/shared_buffer_cache.h"

extern "C" {
#include "access/parallel.h"
#include "storage/dsm_impl.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
}

namespace hopper::pg {

const char* const run_area_setting_name = "hopper.buffer_cache_area";

// The buffer cache's table parameters (buffer_cache.cpp): the area creates the table so that
// workers attach one thing.
dshash_parameters buffer_table_parameters(int tranche);

namespace {

constexpr uint32 control_magic = 0x68727561;  // "hrua"

int tranche_id = 0;
RunArea own;                // the backend running the run
RunArea in_worker;          // a parallel worker of such a backend
std::string in_worker_for;  // the setting value in_worker was attached for
std::string own_setting;    // "leader pid:control segment handle:tranche", published to workers
int scope_depth = 0;
uint64 own_limit = 0;  // the area's size limit

void register_tranche(int id) { LWLockRegisterTranche(id, "hopper_run_area"); }

// A backend that exits during its run (FATAL: terminated, or its client gone) unwinds no C++ frame:
// it lets go of the run's buffers in the server's cache here (a crash restarts the server anyway).
bool exit_callback_registered = false;
void release_on_exit(int, Datum) {
    if (own.control) release_run_buffers(own);
}

void detach(RunArea& a) {
    // Detaching the run's last process frees the area and the segment; none of these raises an error.
    if (a.buffers) dshash_detach(a.buffers);
    if (a.area) dsa_detach(a.area);
    if (a.segment) dsm_detach(a.segment);
    a = RunArea{};
}

// Attaches `into` to the area `setting` ("leader pid:control segment handle:tranche") names if it
// really is that leader's; false (nothing attached) otherwise.
bool attach_area(RunArea& into, const std::string& setting) {
    int pid = 0, tranche = 0;
    unsigned handle = 0;
    if (std::sscanf(setting.c_str(), "%d:%u:%d", &pid, &handle, &tranche) != 3) return false;
    const dshash_parameters params = buffer_table_parameters(tranche);
    bool ours = false;
    call([&] {
        // The handles are palloc'd: keep them for the process's life, and the mappings too (a
        // transaction's end would otherwise detach them, warning of a leak).
        MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
        into.segment = dsm_attach(dsm_handle(handle));  // NULL when there is no such segment
        if (into.segment && dsm_segment_map_length(into.segment) >= sizeof(RunAreaControl)) {
            dsm_pin_mapping(into.segment);
            into.control = static_cast<RunAreaControl*>(dsm_segment_address(into.segment));
            ours = into.control->magic == control_magic && into.control->leader_pid == pid;
        }
        if (ours) {
            register_tranche(tranche);
            into.area = dsa_attach(into.control->area);
            dsa_pin_mapping(into.area);
            into.buffers = dshash_attach(into.area, &params, into.control->buffers, nullptr);
        }
        MemoryContextSwitchTo(old);
    });
    if (!ours) detach(into);
    return ours;
}

// In a parallel worker: the leader's area named by the setting, if it really is our leader's.
RunArea* worker_area() {
    if (!IsParallelWorker() || MyProc->lockGroupLeader == nullptr) return nullptr;
    const char* setting = GetConfigOption(run_area_setting_name, true, false);
    if (setting == nullptr || *setting == '\0') return nullptr;
    if (in_worker.area && in_worker_for == setting) return &in_worker;
    int pid = 0;
    if (std::sscanf(setting, "%d:", &pid) != 1 || pid != MyProc->lockGroupLeader->pid) return nullptr;
    detach(in_worker);
    if (!attach_area(in_worker, setting)) return nullptr;
    in_worker_for = setting;
    return &in_worker;
}

}  // namespace

uint64 shm_room(uint64 wanted) {
    if (dynamic_shared_memory_type != DSM_IMPL_POSIX) return wanted;
    struct statvfs fs;
    if (statvfs("/dev/shm", &fs) != 0) return 0;
    return std::min<uint64>(wanted, uint64(fs.f_bavail) * uint64(fs.f_frsize) / 2);
}

RunAreaScope::RunAreaScope() {
    if (scope_depth++ > 0) return;  // a nested run shares the outer run's area
    // In the server's cache the budget bounds what the run holds there; in its own area, what it
    // allocates in /dev/shm.
    const uint64 wanted = uint64(setting_buffer_cache_mb) * 1024 * 1024;
    const bool server_cache = shared_buffer_cache_enabled();
    const uint64 budget = server_cache ? wanted : shm_room(wanted);
    try {
        call([&] {
            if (!exit_callback_registered) {
                before_shmem_exit(release_on_exit, 0);
                exit_callback_registered = true;
            }
            MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);  // the handles outlive transactions
            if (tranche_id == 0) tranche_id = LWLockNewTrancheId();
            register_tranche(tranche_id);
            own.area = dsa_create(tranche_id);
            dsa_pin_mapping(own.area);  // the run commits between iterations; the area must outlive them
            // The area's segments never exceed the buffer budget (plus room for the tables) and what
            // state stores add: an allocation beyond it fails softly (DSA_ALLOC_NO_OOM) and the
            // buffer or state simply goes the slow way.
            own_limit = budget + (uint64(2) << 20);
            dsa_set_size_limit(own.area, own_limit);
            own.segment = dsm_create(sizeof(RunAreaControl), 0);
            dsm_pin_mapping(own.segment);
            own.control = static_cast<RunAreaControl*>(dsm_segment_address(own.segment));
            std::memset(own.control, 0, sizeof(RunAreaControl));
            const dshash_parameters params = buffer_table_parameters(tranche_id);
            own.buffers = dshash_create(own.area, &params, nullptr);
            own.control->magic = control_magic;
            own.control->leader_pid = MyProcPid;
            own.control->area = dsa_get_handle(own.area);
            own.control->buffers = dshash_get_hash_table_handle(own.buffers);
            own.control->buffer_budget = budget;
            own.control->run_token = server_cache ? shared_buffer_cache_run_token() : 0;
            pg_atomic_init_u32(&own.control->closed, 0);
            pg_atomic_init_u64(&own.control->warm, 0);
            own.control->run_list = InvalidDsaPointer;
            pg_atomic_init_u64(&own.control->buffer_bytes, 0);
            pg_atomic_init_u64(&own.control->hits, 0);
            pg_atomic_init_u64(&own.control->misses, 0);
            pg_atomic_init_u64(&own.control->not_kept, 0);
            own.control->read_ahead_list = InvalidDsaPointer;
            pg_atomic_init_u32(&own.control->read_ahead_stop, 0);
            pg_atomic_init_u64(&own.control->read_ahead_kept, 0);
            for (int i = 0; i < kMaxStateStores; ++i) own.control->state_slots[i] = InvalidDsaPointer;
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

void remember_buffer_cache_stats(const RunAreaControl& control);  // buffer_cache.cpp

RunAreaScope::~RunAreaScope() {
    if (--scope_depth > 0) return;
    if (own.control) {
        release_run_buffers(own);
        remember_buffer_cache_stats(*own.control);
    }
    own_setting.clear();
    detach(own);
}

RunArea* own_run_area() { return own.area ? &own : nullptr; }

RunArea* attach_run_area_for_background(const std::string& setting) {
    if (own.area || in_worker.area) return nullptr;  // a run's backend or a parallel worker: not for them
    return attach_area(in_worker, setting) ? &in_worker : nullptr;
}

RunArea* active_run_area() {
    if (own.area) return &own;
    return worker_area();
}

void grow_run_area_limit(uint64 bytes) {
    if (!own.area) return;
    own_limit += bytes;
    call([&] { dsa_set_size_limit(own.area, own_limit); });
}

std::string run_area_setting() { return own_setting; }

}  // namespace hopper::pg
