// What the backend does with the parallel workers of a group it started itself (training's hop
// group, preprocess's readers): watching them while it waits, and stopping them after an error.
#pragma once

#include <exception>

#include "pg/common/guard.h"

extern "C" {
#include "access/parallel.h"
#include "storage/shm_toc.h"
}

namespace hopper::pg {

// Whether a worker of `pcxt` stopped without ending its part (exited[i], set by worker i when it
// did, unset): one that raised an error sent it, and the interrupts checked here raise it in the
// backend; one that died did not. Calls PostgreSQL: inside pg::call.
bool lost_worker(ParallelContext* pcxt, const bool* exited);
// Whether every worker of `pcxt` that started has stopped. Inside pg::call.
bool workers_stopped(ParallelContext* pcxt);
// After an error in the backend: stops the workers and leaves parallel mode before the frames that
// own what they use unwind (the transaction's abort would stop them only later; a worker still
// running used freed memory). DestroyParallelContext terminates them and waits for their exit.
// Raises nothing: the abort finishes what this could not, and the first error is the one to report.
void stop_workers(ParallelContext* pcxt) noexcept;

// The body of a group's worker entry point: finds what the group shares under `key` in the worker's
// table of contents, runs `part` on it (which returns the group's exited flags) and then sets this
// worker's flag: its part ended normally. An error is raised as the worker's, which the backend
// receives. `part` must hold nothing with a destructor (a raise skips it).
template <typename Part>
void run_worker_part(shm_toc* toc, uint64 key, Part part) {
    CaughtError caught;
    caught.pending = false;
    try {
        void* shared = call([&] { return shm_toc_lookup(toc, key, false); });
        bool* exited = part(shared);
        pg_memory_barrier();
        exited[ParallelWorkerNumber] = true;
    } catch (...) { caught.capture(std::current_exception()); }
    if (caught.pending) caught.raise();
}

}  // namespace hopper::pg
