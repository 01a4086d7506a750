// Reading a run's packed buffers ahead, in a background worker on a core the run leaves idle.
//
// A run's first pass fetches every packed buffer from TOAST into the run's buffer cache
// (buffer_cache.h); with fit_params shuffle (the default) a segment's rows are all fetched before
// its first minibatch trains, so the first iteration of fit on Fashion-MNIST took 0.345 s against
// 0.207 for a steady one (bench/, 2-core Xeon). When fewer segments train at once than the machine
// has cores (fit, whose one model trains on one segment at a time; fit_multiple on one segment), a
// background worker fetches the same buffers into the cache from the other end of the list while
// the backend fetches from its start, so the two meet halfway. The cache is keyed by TOAST pointer,
// so what the worker keeps is exactly what the readers would have fetched: results do not change,
// and whatever the worker has not kept yet is fetched by the reader as before.
//
// With the server's cache (shared_buffer_cache.h) only the buffers it lacks are listed; the list goes
// into the run's area, where the run's readers find it too. The worker keeps them by one sequential
// scan of each TOAST relation from its end (three times as fast as fetching them one by one); when no
// worker runs, the first reader to miss a buffer of a relation scans it so from its start.
//
// Only for engines whose buffers are read by this server's processes (Engine::reads_buffers_locally).
#pragma once

#include <vector>

#include "pg/common/names.h"
#include "pg/common/spi.h"

struct BackgroundWorkerHandle;

namespace hopper::pg {

class ReadAhead {
public:
    ReadAhead() = default;
    ~ReadAhead();  // asks the worker to stop (it exits on its own; nothing waits)
    ReadAhead(const ReadAhead&) = delete;
    ReadAhead& operator=(const ReadAhead&) = delete;

    // In the run's backend, inside its RunAreaScope: lists the TOAST values of `tables`' buffers (in
    // dist_key, buffer_id order, one table after the other; with the server's cache those it lacks,
    // kept in the run's area for the readers) and starts the worker, unless hopper.read_ahead_min_mb
    // says no (off, or less data than that), `busy_processes` (segments training at once) leave no
    // core idle, the run has no buffer cache, or no background worker slot is free (then the run
    // reads as before).
    void start(Spi& spi, const std::vector<TableName>& tables, int busy_processes);

private:
    BackgroundWorkerHandle* worker_ = nullptr;
};

}  // namespace hopper::pg
