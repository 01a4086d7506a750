// Live progress of training runs in shared memory (progress.h). Code between LWLockAcquire and
// LWLockRelease is plain C-like code that neither raises a PostgreSQL error nor throws.
#include "pg/runtime/progress.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

#include "pg/common/datum.h"
#include "pg/common/guard.h"

extern "C" {
#include "funcapi.h"
#include "miscadmin.h"
#include "access/xact.h"
#include "commands/extension.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/timestamp.h"
}

namespace hopper::pg {

bool setting_track_progress = true;
int setting_progress_run = 0;

namespace {

constexpr int kMaxRuns = 64;
constexpr int kMaxSegments = 64;  // per run; more segments are not shown
constexpr const char* kTranche = "hopper_progress";

struct SegmentSlot {
    int32 dist_key;
    int32 mst_key;
    int32 pid;
    int32 buffers_done;   // in the current visit
    int32 buffers_total;  // the segment's buffers (0: unknown, on a Citus worker node)
    int64 rows_done;      // in the current visit
    TimestampTz visit_start;
    TimestampTz updated;
};

struct RunSlot {
    bool in_use;
    bool on_worker_node;  // made by a shard backend of a Citus worker node
    int64 run_id;
    Oid database;
    int32 leader_pid;  // the backend driving the run (on a worker node: the shard backend)
    char method[24];
    int32 iteration, num_iterations, hop, hops_per_iteration, models_in_ring;
    int64 model_iterations_done, model_iterations_total;
    bool has_best;
    double best_value;
    int32 best_mst_key;
    TimestampTz start_time, hop_start, updated;
    int32 num_segments;
    SegmentSlot segments[kMaxSegments];
};

struct ProgressShared {
    LWLock* lock;
    RunSlot runs[kMaxRuns];
};

ProgressShared* shared = nullptr;
shmem_request_hook_type prev_shmem_request_hook = nullptr;
shmem_startup_hook_type prev_shmem_startup_hook = nullptr;
int my_slot = -1;  // the run this backend drives
int64_t my_run_id = 0;
bool exit_callback_registered = false;
bool xact_callback_registered = false;

void progress_shmem_request() {
    if (prev_shmem_request_hook) prev_shmem_request_hook();
    RequestAddinShmemSpace(sizeof(ProgressShared));
    RequestNamedLWLockTranche(kTranche, 1);
}

void progress_shmem_startup() {
    if (prev_shmem_startup_hook) prev_shmem_startup_hook();
    LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
    bool found = false;
    shared = static_cast<ProgressShared*>(ShmemInitStruct("hopper run progress", sizeof(ProgressShared), &found));
    if (!found) {
        std::memset(shared, 0, sizeof(ProgressShared));
        shared->lock = &GetNamedLWLockTranche(kTranche)[0].lock;
    }
    LWLockRelease(AddinShmemInitLock);
}

// Frees every slot a process made (its own run, or a worker node's slots). Lock held by the caller.
void release_slots_of(int pid) {
    for (RunSlot& r : shared->runs)
        if (r.in_use && r.leader_pid == pid) r.in_use = false;
}

void on_exit_release(int, Datum) {
    if (!shared) return;
    if (LWLockHeldByMe(shared->lock)) LWLockRelease(shared->lock);
    LWLockAcquire(shared->lock, LW_EXCLUSIVE);
    release_slots_of(MyProcPid);
    LWLockRelease(shared->lock);
}

// A worker node's slots last as long as the transaction that trained (Citus keeps its connections).
void on_xact_end(XactEvent event, void*) {
    if (!shared || (event != XACT_EVENT_COMMIT && event != XACT_EVENT_ABORT && event != XACT_EVENT_PARALLEL_COMMIT &&
                    event != XACT_EVENT_PARALLEL_ABORT))
        return;
    LWLockAcquire(shared->lock, LW_EXCLUSIVE);
    for (RunSlot& r : shared->runs)
        if (r.in_use && r.on_worker_node && r.leader_pid == MyProcPid) r.in_use = false;
    LWLockRelease(shared->lock);
}

// A slot whose backend is gone (killed between a begin and its exit callback) is free.
bool slot_free(const RunSlot& r) { return !r.in_use || BackendPidGetProc(r.leader_pid) == nullptr; }

void progress_buffer_locked(int32_t dist_key, int32_t mst_key, int rows, bool first);

RunSlot* current() { return shared && my_slot >= 0 ? &shared->runs[my_slot] : nullptr; }

template <class F>
void update_run(F f) {
    RunSlot* r = current();
    if (!r) return;
    call([&] {
        LWLockAcquire(shared->lock, LW_EXCLUSIVE);
        if (r->in_use && r->run_id == my_run_id && r->leader_pid == MyProcPid) {
            f(*r);
            r->updated = GetCurrentTimestamp();
        }
        LWLockRelease(shared->lock);
    });
}

}  // namespace

void progress_init() {
    DefineCustomBoolVariable(
        "hopper.track_progress",
        "Show running fit, fit_multiple, fit_data_parallel and fit_automl calls in hopper.run_progress.",
        "Needs hopper in shared_preload_libraries. Costs a lock of a few hundred nanoseconds per packed buffer trained.",
        &setting_track_progress, true, PGC_USERSET, 0, nullptr, nullptr, nullptr);
    // Internal: which run the processes training a statement's segments report to. Set by hopper for
    // its training statements (and sent to Citus worker nodes); a process writes only into its own
    // parallel group leader's run, so setting it by hand reaches no other session's run.
    DefineCustomIntVariable("hopper.progress_run", "Internal: the training run whose progress this statement reports.",
                            nullptr, &setting_progress_run, 0, 0, INT_MAX, PGC_USERSET,
                            GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE | GUC_DISALLOW_IN_FILE, nullptr, nullptr, nullptr);
    if (!process_shared_preload_libraries_in_progress) return;
    prev_shmem_request_hook = shmem_request_hook;
    shmem_request_hook = progress_shmem_request;
    prev_shmem_startup_hook = shmem_startup_hook;
    shmem_startup_hook = progress_shmem_startup;
}

int64_t progress_run_id() { return my_slot >= 0 ? my_run_id : 0; }

void RunProgress::begin(int64_t run_id, const std::string& method, int num_iterations, int64_t model_iterations,
                        const std::map<int32_t, int32_t>& buffers) {
    end();
    if (!shared || !setting_track_progress || run_id <= 0 || run_id > INT_MAX) return;
    if (!exit_callback_registered) {
        call([] { before_shmem_exit(on_exit_release, 0); });
        exit_callback_registered = true;
    }
    call([&] {
        LWLockAcquire(shared->lock, LW_EXCLUSIVE);
        int found = -1;
        for (int i = 0; i < kMaxRuns && found < 0; ++i)
            if (slot_free(shared->runs[i])) found = i;
        if (found >= 0) {
            RunSlot& r = shared->runs[found];
            std::memset(&r, 0, sizeof(RunSlot));
            r.in_use = true;
            r.run_id = run_id;
            r.database = MyDatabaseId;
            r.leader_pid = MyProcPid;
            strlcpy(r.method, method.c_str(), sizeof(r.method));
            r.num_iterations = num_iterations;
            r.model_iterations_total = model_iterations;
            r.start_time = r.updated = GetCurrentTimestamp();
            for (const auto& [key, count] : buffers) {
                if (r.num_segments == kMaxSegments) break;
                SegmentSlot& s = r.segments[r.num_segments++];
                s.dist_key = key;
                s.buffers_total = count;
                s.mst_key = -1;
            }
        }
        LWLockRelease(shared->lock);
        my_slot = found;
        my_run_id = run_id;
    });
}

void RunProgress::end() {
    if (!shared || my_slot < 0) return;
    const int slot = my_slot;
    my_slot = -1;
    call([slot] {
        LWLockAcquire(shared->lock, LW_EXCLUSIVE);
        RunSlot& r = shared->runs[slot];
        if (r.in_use && r.leader_pid == MyProcPid) r.in_use = false;
        LWLockRelease(shared->lock);
    });
}

void progress_iteration(int iteration) {
    update_run([&](RunSlot& r) {
        r.iteration = iteration;
        r.hop = 0;
    });
}

void progress_hop(int hop, int hops, int models_in_ring) {
    update_run([&](RunSlot& r) {
        r.hop = hop;
        r.hops_per_iteration = hops;
        r.models_in_ring = models_in_ring;
        r.hop_start = GetCurrentTimestamp();
    });
}

void progress_model_iterations_done(int64_t done) {
    update_run([&](RunSlot& r) { r.model_iterations_done = done; });
}

void progress_best(double value, int32_t mst_key) {
    update_run([&](RunSlot& r) {
        r.has_best = true;
        r.best_value = value;
        r.best_mst_key = mst_key;
    });
}

void progress_buffer(int32_t dist_key, int32_t mst_key, int rows, bool first) {
    if (!shared || setting_progress_run <= 0) return;
    call([&] { progress_buffer_locked(dist_key, mst_key, rows, first); });
}

namespace {
void progress_buffer_locked(int32_t dist_key, int32_t mst_key, int rows, bool first) {
    // Only a Citus node makes slots for shard backends; on plain PostgreSQL a process without its
    // leader's slot (a statement run by hand with hopper.progress_run set) reports nothing.
    static int citus_loaded = -1;
    if (citus_loaded < 0) citus_loaded = OidIsValid(get_extension_oid("citus", true)) ? 1 : 0;
    // The run's leader: this backend, or the leader of its parallel group.
    const int leader = MyProc && MyProc->lockGroupLeader ? MyProc->lockGroupLeader->pid : MyProcPid;
    const TimestampTz now = GetCurrentTimestamp();
    bool made_slot = false;
    LWLockAcquire(shared->lock, LW_EXCLUSIVE);
    RunSlot* run = nullptr;
    for (RunSlot& r : shared->runs)
        if (r.in_use && r.run_id == setting_progress_run && r.database == MyDatabaseId && r.leader_pid == leader) {
            run = &r;
            break;
        }
    if (!run && citus_loaded) {
        // No leader here: a Citus worker node's shard backend (or a statement run by hand). Its own
        // slot, freed at the end of its transaction.
        for (RunSlot& r : shared->runs)
            if (slot_free(r)) {
                std::memset(&r, 0, sizeof(RunSlot));
                r.in_use = true;
                r.on_worker_node = true;
                r.run_id = setting_progress_run;
                r.database = MyDatabaseId;
                r.leader_pid = MyProcPid;
                strlcpy(r.method, "shard", sizeof(r.method));
                r.start_time = now;
                run = &r;
                made_slot = true;
                break;
            }
    }
    if (run) {
        SegmentSlot* seg = nullptr;
        for (int i = 0; i < run->num_segments; ++i)
            if (run->segments[i].dist_key == dist_key) seg = &run->segments[i];
        if (!seg && run->num_segments < kMaxSegments) {
            seg = &run->segments[run->num_segments++];
            std::memset(seg, 0, sizeof(SegmentSlot));
            seg->dist_key = dist_key;
        }
        if (seg) {
            if (first || seg->mst_key != mst_key || seg->pid != MyProcPid) {
                seg->buffers_done = 0;
                seg->rows_done = 0;
                seg->visit_start = now;
            }
            seg->mst_key = mst_key;
            seg->pid = MyProcPid;
            seg->buffers_done += 1;
            seg->rows_done += rows;
            seg->updated = now;
        }
        run->updated = now;
    }
    LWLockRelease(shared->lock);
    if (made_slot && !xact_callback_registered) {
        RegisterXactCallback(on_xact_end, nullptr);
        xact_callback_registered = true;
    }
}
}  // namespace

}  // namespace hopper::pg

using namespace hopper::pg;

// run_progress_segments(): one row per (run, segment) of the slots in shared memory whose backend is
// alive, a run without segment entries yet as one row with NULL segment columns. The view
// hopper.run_progress adds the run's name and owner and computes rates and the time left.
HOPPER_FUNCTION(run_progress_segments) {
    ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
    call([&] { InitMaterializedSRF(fcinfo, 0); });
    if (!shared) PG_RETURN_NULL();
    // Copied under the lock, turned into tuples after it.
    std::vector<RunSlot> runs;
    call([&] {
        LWLockAcquire(shared->lock, LW_SHARED);
        for (const RunSlot& r : shared->runs)
            if (r.in_use && r.database == MyDatabaseId) runs.push_back(r);
        LWLockRelease(shared->lock);
    });
    call([&] {
        for (const RunSlot& r : runs) {
            if (BackendPidGetProc(r.leader_pid) == nullptr) continue;
            const int n = std::max<int>(r.num_segments, 1);
            for (int i = 0; i < n; ++i) {
                Datum v[24];
                bool nulls[24] = {false};
                v[0] = Int64GetDatum(r.run_id);
                v[1] = CStringGetTextDatum(r.method);
                v[2] = BoolGetDatum(r.on_worker_node);
                v[3] = Int32GetDatum(r.leader_pid);
                v[4] = Int32GetDatum(r.iteration);
                v[5] = Int32GetDatum(r.num_iterations);
                v[6] = Int32GetDatum(r.hop);
                v[7] = Int32GetDatum(r.hops_per_iteration);
                v[8] = Int32GetDatum(r.models_in_ring);
                v[9] = Int64GetDatum(r.model_iterations_done);
                v[10] = Int64GetDatum(r.model_iterations_total);
                v[11] = Float8GetDatum(r.best_value);
                v[12] = Int32GetDatum(r.best_mst_key);
                nulls[11] = nulls[12] = !r.has_best;
                v[13] = TimestampTzGetDatum(r.start_time);
                v[14] = TimestampTzGetDatum(r.updated);
                if (i < r.num_segments) {
                    const SegmentSlot& s = r.segments[i];
                    v[15] = Int32GetDatum(s.dist_key);
                    v[16] = Int32GetDatum(s.mst_key);
                    v[17] = Int32GetDatum(s.pid);
                    v[18] = Int32GetDatum(s.buffers_done);
                    v[19] = Int32GetDatum(s.buffers_total);
                    v[20] = Int64GetDatum(s.rows_done);
                    v[21] = TimestampTzGetDatum(s.visit_start);
                    v[23] = TimestampTzGetDatum(s.updated);
                    nulls[16] = nulls[17] = nulls[21] = nulls[23] = s.pid == 0;
                    nulls[19] = s.buffers_total == 0;
                } else {
                    for (int k = 15; k < 22; ++k) nulls[k] = true;
                    nulls[23] = true;
                }
                v[22] = TimestampTzGetDatum(r.hop_start);
                nulls[22] = r.hop == 0;
                tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, nulls);
            }
        }
    });
    PG_RETURN_NULL();
}
