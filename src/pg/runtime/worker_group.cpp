// The backend and the parallel workers of its groups (see worker_group.h).
#include "pg/runtime/worker_group.h"

extern "C" {
#include "postmaster/bgworker.h"
}

namespace hopper::pg {

bool lost_worker(ParallelContext* pcxt, const bool* exited) {
    for (int i = 0; i < pcxt->nworkers_launched; ++i) {
        pid_t pid;
        if (GetBackgroundWorkerPid(pcxt->worker[i].bgwhandle, &pid) != BGWH_STOPPED) continue;
        pg_memory_barrier();
        if (exited[i]) continue;
        CHECK_FOR_INTERRUPTS();  // raises the worker's error, when it sent one
        return true;
    }
    return false;
}

bool workers_stopped(ParallelContext* pcxt) {
    for (int i = 0; i < pcxt->nworkers_launched; ++i) {
        pid_t pid;
        if (GetBackgroundWorkerPid(pcxt->worker[i].bgwhandle, &pid) != BGWH_STOPPED) return false;
    }
    return true;
}

void stop_workers(ParallelContext* pcxt) noexcept {
    if (!pcxt) return;
    try {
        call([&] {
            DestroyParallelContext(pcxt);
            ExitParallelMode();
        });
    } catch (...) {  // the abort finishes what this could not; the first error is the one to report
    }
}

}  // namespace hopper::pg
