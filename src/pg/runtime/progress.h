// Live progress of training runs, readable from any session (the view hopper.run_progress).
//
// A small area of shared memory (only when hopper is in shared_preload_libraries) holds one slot per
// running training run -- fit, fit_multiple, fit_data_parallel, fit_automl -- and in it one entry
// per segment. The backend running the run writes the run's fields (iteration, hop, models in the
// ring, model-iterations done, the best searcher value); whichever process trains a segment writes
// that segment's entry once per packed buffer (mst_key, buffers and rows done in the current visit,
// its pid). No transaction, no catalog access: a lock held for a few hundred nanoseconds per buffer
// (a buffer trains for milliseconds).
//
// The processes that train find the run through the setting hopper.progress_run, which the run's
// statement settings carry to PostgreSQL's parallel workers and Citus sends to the worker nodes
// (SET LOCAL). On plain PostgreSQL a process may write only into the slot of its own parallel group
// leader, so a session that sets hopper.progress_run by hand cannot write into another's run. On a
// Citus worker node there is no leader slot: the node's shard backends make a slot of their own,
// marked on_worker_node, which the node's hopper.run_progress shows (the coordinator's view has
// the run's iteration and hop; the workers' views the segments they train).
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace hopper::pg {

extern bool setting_track_progress;  // hopper.track_progress
extern int setting_progress_run;     // hopper.progress_run (internal)

// From _PG_init: the settings, and the shared area when preloading.
void progress_init();

// The run this backend drives, for the statement settings (0: none).
int64_t progress_run_id();

// The slot of the run this backend drives: taken by begin(), released by end() or the destructor
// (an error unwinds through it) and, for a backend that exits, by an exit callback.
class RunProgress {
public:
    RunProgress() = default;
    RunProgress(const RunProgress&) = delete;
    RunProgress& operator=(const RunProgress&) = delete;
    ~RunProgress() { end(); }
    // buffers: each segment's (dist_key) number of packed buffers; model_iterations: what the run
    // trains in all (models x iterations; an adaptive search's plan).
    void begin(int64_t run_id, const std::string& method, int num_iterations, int64_t model_iterations,
               const std::map<int32_t, int32_t>& buffers);
    void end();
};

// The run's fields (no-ops without a run slot).
void progress_iteration(int iteration);                    // 1-based, the one in progress
void progress_hop(int hop, int hops, int models_in_ring);  // 1-based
void progress_model_iterations_done(int64_t done);
void progress_best(double value, int32_t mst_key);  // a finite searcher value, better than before

// One packed buffer trained on segment dist_key by mst_key (first: the first buffer of a visit).
void progress_buffer(int32_t dist_key, int32_t mst_key, int rows, bool first);

}  // namespace hopper::pg
