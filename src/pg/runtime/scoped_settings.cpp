#include "pg/runtime/scoped_settings.h"

#include <algorithm>
#include <exception>

#include "pg/common/guard.h"
#include "pg/common/settings.h"
#include "pg/runtime/progress.h"
#include "pg/runtime/run_area.h"

extern "C" {
#include "optimizer/optimizer.h"
#include "utils/guc.h"
}

namespace hopper::pg {

void set_in_scope(const char* name, const std::string& value) {
    const TransientMemory transient;  // check hooks (search_path's) palloc a copy and a list
    call([&] {
        (void)set_config_option(name, value.c_str(), PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
    });
}

void ScopedSettings::enter() {
    if (level_ >= 0) return;
    level_ = call([] { return NewGUCNestLevel(); });
    apply_();
}

void ScopedSettings::leave() {
    if (level_ < 0) return;
    int level = level_;
    level_ = -1;
    call([&] { AtEOXact_GUC(true, level); });
}

ScopedSettings::~ScopedSettings() {
    // On an error the transaction's abort restores the settings; otherwise restore them here.
    if (level_ >= 0 && std::uncaught_exceptions() == 0) {
        try {
            leave();
        } catch (...) {}
    }
}

void apply_safe_search_path() { set_in_scope("search_path", "pg_catalog, pg_temp"); }

void apply_lz4_compression() {
#ifdef USE_LZ4
    set_in_scope("default_toast_compression", "lz4");
#endif
}

void apply_statement_settings() {
    // Segments run as partitions: partitionwise join + aggregation gives one aggregate per segment
    // under a Parallel Append.
    set_in_scope("enable_partitionwise_join", "on");
    set_in_scope("enable_partitionwise_aggregate", "on");
    // A segment's buffers must reach the aggregate in storage order, whatever the plan: hash and
    // merge joins could reorder them and change the training result.
    set_in_scope("enable_hashjoin", "off");
    set_in_scope("enable_mergejoin", "off");
    set_in_scope("synchronize_seqscans", "off");
    // Packed tables have few (large) rows: let the planner use workers for them anyway.
    set_in_scope("min_parallel_table_scan_size", "0");
    set_in_scope("parallel_setup_cost", "10");
    set_in_scope("parallel_tuple_cost", "0");
    // PostgreSQL sizes index builds with that setting too: the TOAST index of every table an iteration
    // creates (estimated at 10 pages before any statistics) was built with parallel maintenance
    // workers, each build starting them and waiting for them, ~40 ms an iteration on a busy 2-core
    // machine (bench/README.md, "Tables as they are"). These statements only build empty indexes.
    set_in_scope("max_parallel_maintenance_workers", "0");
    // hopper's functions are declared expensive (so segments run in parallel); JIT would then
    // compile every statement, in every worker, for nothing: the time is spent inside hopper.
    set_in_scope("jit", "off");
#ifdef USE_LZ4
    // The training statement is a CREATE TABLE AS, whose model_state column gets bytea's default
    // storage: every state passing through it (trained or waiting) is offered to the compressor.
    // Float weights do not compress, and pglz takes ~10 ms per 800 kB state to find that out
    // (bench/: ~15% of a fit_multiple iteration with 4 models on one segment); lz4 gives up ~8x sooner.
    set_in_scope("default_toast_compression", "lz4");
#endif
    // The run whose progress the processes training these statements report (progress.h).
    if (const int64_t run = progress_run_id(); run > 0) set_in_scope("hopper.progress_run", std::to_string(run));
    // The run's buffer cache, for the parallel workers of these statements (buffer_cache.h).
    const std::string cache = run_area_setting();
    if (!cache.empty()) {
        const TransientMemory transient;
        call([&] {
            (void)set_config_option(run_area_setting_name, cache.c_str(), PGC_SUSET, PGC_S_SESSION, GUC_ACTION_SAVE,
                                    true, 0, false);
        });
    }
}

void set_parallel_workers(int wanted) {
    int cap = setting_parallel_segments > 0 ? std::min(wanted, setting_parallel_segments) : wanted;
    // One process (cap 1) is a serial plan without a Gather.
    if (cap <= 1) {
        set_in_scope("max_parallel_workers_per_gather", "0");
        return;
    }
    // cap processes: planned as cap workers, run as cap - 1 workers and the leader. PostgreSQL's cost
    // model spreads a Parallel Append's whole (non-partial) subplans -- the per-segment aggregates --
    // over the planned workers and not over a participating leader, so a plan of cap - 1 workers
    // costs 2 segments as much as a serial plan and the planner ran them one after the other
    // (bench/: fit_multiple on 2 segments was no faster than on 1). So the plan has cap workers and
    // the launch is held to cap - 1 (max_parallel_workers counts the workers this backend may
    // launch): the leader, which the Parallel Append gives the last subplan, trains one segment
    // itself. That saves one worker's start and exit per statement, the largest fixed cost of a
    // hop (bench/: 2 segments, 4 models, ~5 ms of ~20 ms per hop), and the leader's caches are warm.
    set_in_scope("parallel_leader_participation", "on");
    set_in_scope("max_parallel_workers", std::to_string(cap - 1));
    set_in_scope("max_parallel_workers_per_gather", std::to_string(cap));
}

}  // namespace hopper::pg
