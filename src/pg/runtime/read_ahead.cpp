// Reading a run's packed buffers ahead (see read_ahead.h).
#include "pg/runtime/read_ahead.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

#include "pg/common/guard.h"
#include "pg/common/settings.h"
#include "pg/runtime/buffer_cache.h"
#include "pg/runtime/run_area.h"
#include "pg/runtime/shared_buffer_cache.h"

extern "C" {
#include "miscadmin.h"
#include "access/detoast.h"
#include "access/xact.h"
#include "postmaster/bgworker.h"
#include "tcop/tcopprot.h"
#include "utils/snapmgr.h"
}

namespace hopper::pg {
namespace {

// What the backend hands its worker (bgw_extra): where to connect, as whom, and the run's area.
struct ReadAheadArgs {
    Oid database;
    Oid user;
    char area[96];  // run_area_setting(): "leader pid:control segment handle:tranche"
};
static_assert(sizeof(ReadAheadArgs) <= BGW_EXTRALEN, "bgw_extra holds the arguments");

long online_cores() {
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}

// The worker's work, in C++ frames that never see a longjmp: any error ends it quietly (the run's
// readers fetch whatever it did not keep).
void read_ahead(const ReadAheadArgs& args) noexcept {
    try {
        RunArea* run = attach_run_area_for_background(args.area);
        if (!run) return;  // the run ended before the worker started
        RunAreaControl& control = *run->control;
        call([] {
            SetCurrentStatementStartTimestamp();
            StartTransactionCommand();
            // Fetching TOAST values needs a snapshot to exist; which one does not matter (TOAST's
            // own visibility rules decide).
            PushActiveSnapshot(GetTransactionSnapshot());
        });
        const auto* list = static_cast<const varatt_external*>(
            call([&] { return dsa_get_address(run->area, control.read_ahead_list); }));
        if (shared_buffer_attach()) {
            // Into the server's cache: each TOAST relation in one sequential scan from its end, ~3x as
            // fast as fetching values one by one through its index (the backend's way, from the start).
            const std::vector<varatt_external> pointers(list, list + control.read_ahead_count);
            pg_atomic_fetch_add_u64(&control.read_ahead_kept,
                                    shared_buffer_scan(pointers, control.run_token | kReadAhead, true,
                                                       &control.read_ahead_stop));
        } else {
            for (uint32 i = 0; i < control.read_ahead_count; ++i) {
                if (pg_atomic_read_u32(&control.read_ahead_stop) != 0) break;
                call([] { CHECK_FOR_INTERRUPTS(); });
                if (!read_ahead_buffer(*run, list[i])) break;  // the cache is full
            }
        }
        call([] {
            PopActiveSnapshot();
            CommitTransactionCommand();
        });
    } catch (const std::exception& e) {
        // Nothing to report to anyone: the run did not depend on it. Visible at DEBUG1 in the log.
        elog(DEBUG1, "hopper read-ahead stopped: %s", e.what());
    } catch (...) { elog(DEBUG1, "hopper read-ahead stopped"); }
}

// A copy of `list` in the run's area (invalid if there is no room).
dsa_pointer store_list(RunArea& run, const std::vector<varatt_external>& list) {
    const std::size_t list_bytes = list.size() * sizeof(varatt_external);
    grow_run_area_limit(list_bytes);
    const dsa_pointer dp = call([&] { return dsa_allocate_extended(run.area, list_bytes, DSA_ALLOC_NO_OOM); });
    if (DsaPointerIsValid(dp))
        std::memcpy(call([&] { return dsa_get_address(run.area, dp); }), list.data(), list_bytes);
    return dp;
}

}  // namespace

void ReadAhead::start(Spi& spi, const std::vector<TableName>& tables, int busy_processes) {
    RunArea* run = own_run_area();
    if (!run || run->control->buffer_budget == 0 || tables.empty() || worker_ ||
        DsaPointerIsValid(run->control->run_list) || DsaPointerIsValid(run->control->read_ahead_list))
        return;
    const bool server_cache = shared_buffer_cache_enabled();
    const bool wanted = setting_read_ahead_min_mb >= 0 && busy_processes < online_cores();
    if (!server_cache && !wanted) return;
    uint64_t bytes = 0;
    std::vector<varatt_external> list = packed_buffer_pointers(spi, tables[0], bytes);
    const std::size_t training = list.size();
    for (std::size_t t = 1; t < tables.size(); ++t) {
        std::vector<varatt_external> more = packed_buffer_pointers(spi, tables[t], bytes);
        list.insert(list.end(), more.begin(), more.end());
    }
    if (server_cache) {
        // What the server's cache holds already (kept by preprocess or an earlier call) is not read
        // again; the rest the run's readers load by TOAST relation at their first miss in each, and the
        // worker from each relation's end.
        const std::vector<bool> held = shared_buffer_holds(list);
        std::size_t kept = 0;
        bytes = 0;
        for (std::size_t i = 0; i < list.size(); ++i)
            if (!held[i]) {
                bytes += uint64_t(list[i].va_rawsize);
                list[kept++] = list[i];
            }
        list.resize(kept);
        if (list.empty()) return;
        const dsa_pointer dp = store_list(*run, list);
        if (!DsaPointerIsValid(dp)) return;
        run->control->run_list = dp;
        run->control->run_list_count = uint32(list.size());
    } else {
        // The training table's buffers from the end backwards (the backend reads them from the start,
        // so the two meet halfway), then the others' (validation) in order: they are read after training.
        std::reverse(list.begin(), list.begin() + std::ptrdiff_t(training));
    }
    // Below this, starting a process costs more than reading the data: a fit of 2,000 rows of 10
    // features took 12.3 ms a call with a worker and 8.7 without (listing the pointers, registering the
    // worker, and its start on the other core); 16 MB take ~12 ms to fetch.
    if (!wanted || list.empty() || bytes < uint64_t(setting_read_ahead_min_mb) * 1024 * 1024) return;

    ReadAheadArgs args{};
    args.database = MyDatabaseId;
    // The role that logged in (a role set later may not be allowed to log in, which a worker's
    // connection checks); the worker runs no user code, it only copies the values listed here.
    args.user = GetAuthenticatedUserId();
    const std::string area = run_area_setting();
    if (area.empty() || area.size() >= sizeof args.area) return;
    std::memcpy(args.area, area.c_str(), area.size() + 1);

    const dsa_pointer dp = server_cache ? run->control->run_list : store_list(*run, list);
    if (!DsaPointerIsValid(dp)) return;
    run->control->read_ahead_list = dp;
    run->control->read_ahead_count = uint32(list.size());

    BackgroundWorker worker;
    std::memset(&worker, 0, sizeof worker);
    worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
    worker.bgw_start_time = BgWorkerStart_ConsistentState;
    worker.bgw_restart_time = BGW_NEVER_RESTART;
    std::snprintf(worker.bgw_library_name, BGW_MAXLEN, "hopper");
    std::snprintf(worker.bgw_function_name, BGW_MAXLEN, "hopper_read_ahead_main");
    std::snprintf(worker.bgw_name, BGW_MAXLEN, "hopper read-ahead for PID %d", MyProcPid);
    std::snprintf(worker.bgw_type, BGW_MAXLEN, "hopper read-ahead");
    std::memcpy(worker.bgw_extra, &args, sizeof args);
    worker.bgw_notify_pid = 0;
    // The handle outlives the run's transactions (it commits after every iteration). Reading ahead only
    // saves time: a registration that fails (every worker slot taken, or an error) leaves the run
    // reading as before, never failing it.
    bool started = false;
    const MemoryContext caller = CurrentMemoryContext;
    try {
        started = call([&] {
            MemoryContextSwitchTo(TopMemoryContext);
            return RegisterDynamicBackgroundWorker(&worker, &worker_);
        });
    } catch (const std::exception&) { started = false; }
    MemoryContextSwitchTo(caller);
    if (!started) {
        worker_ = nullptr;
        run->control->read_ahead_count = 0;
    }
}

ReadAhead::~ReadAhead() {
    if (!worker_) return;
    if (RunArea* run = own_run_area()) pg_atomic_write_u32(&run->control->read_ahead_stop, 1);
    try {
        call([&] {
            TerminateBackgroundWorker(worker_);
            pfree(worker_);
        });
    } catch (...) {  // a destructor raises nothing; the worker ends with its list anyway
    }
}

}  // namespace hopper::pg

// The worker's entry point (bgw_function_name).
extern "C" PGDLLEXPORT void hopper_read_ahead_main(Datum) {
    pqsignal(SIGTERM, die);
    BackgroundWorkerUnblockSignals();
    hopper::pg::ReadAheadArgs args;
    std::memcpy(&args, MyBgworkerEntry->bgw_extra, sizeof args);
    args.area[sizeof args.area - 1] = '\0';
    BackgroundWorkerInitializeConnectionByOid(args.database, args.user, 0);
    hopper::pg::read_ahead(args);
}
