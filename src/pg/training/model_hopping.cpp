// Model hopping (Cerebro; MADlib's fit_multiple): the strategy of hopper.fit and hopper.fit_multiple.
//
// Per iteration:
//   1. model_input is created, partitioned by dist_key like the packed table, and the models are
//      put at their ring positions (a model whose position is not a segment waits in the NULL
//      partition);
//   2. K hops of exactly two statements: the *training* statement
//        CREATE TABLE model_output AS SELECT ..., hopper.train_segment(...)
//        FROM packed JOIN model_input ... GROUP BY dist_key, mst_key
//      -- CREATE TABLE AS, because PostgreSQL 15 runs it in parallel (one worker per segment via
//      partitionwise join and aggregation) while INSERT ... SELECT always runs serially -- and the
//      *hop*, INSERT INTO model_input SELECT ... FROM model_output JOIN schedule, which moves every
//      model one ring position on (the first hop of an iteration is skipped: the next iteration
//      starts where the last one ended);
//   3. the models are read once and the working tables dropped before the commit, so an error, a
//      cancel or a crash never leaves a working table behind.
// The statements themselves are the engine's (engine/: plain PostgreSQL or Citus). On plain
// PostgreSQL they run only for hopper.debug_hops' record: otherwise one group of processes trains
// all the hops of an iteration, with no working table (hop_workers.h). The run
// (TrainingRun, run.cpp) does everything else, on its default schedule: num_iterations iterations of
// every model, each segment training one model at a time.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hopper/error.h"
#include "hopper/schedule.h"
#include "pg/common/settings.h"
#include "pg/engine/engine.h"
#include "pg/runtime/progress.h"
#include "pg/training/hop_workers.h"
#include "pg/training/run.h"

extern "C" {
#include "storage/lock.h"
}

namespace hopper::pg {
namespace {

class ModelHopping final : public TrainingStrategy {
public:
    const char* method() const override { return multiple_ ? "fit_multiple" : "fit"; }

    int hops_per_iteration(const RunPlan& plan) const override {
        return HopSchedule(int(plan.models->size()), plan.num_segments).hops_per_iteration();
    }

    void prepare(Spi& spi, const RunPlan& plan) override {
        multiple_ = plan.req->multiple;
        sched_ = std::make_unique<HopSchedule>(int(plan.models->size()), plan.num_segments);
        if (!plan.nonatomic)
            check_lock_budget(sched_->hops_per_iteration(), sched_->num_segments(), plan.req->num_iterations);
        const RunTables& t = *plan.tables;
        hopper_ = detect_engine(spi)->model_hopper(spi, t.packed, t.info.dist_keys, int(plan.models->size()),
                                                   t.output.schema);
    }

    // Every model trains in every iteration, and their states have been through as many: positions
    // repeat every K iterations (HopSchedule::position).
    IterationOutcome train_iteration(Spi&, const RunPlan&, Ring& ring) override {
        const int iteration = int(ring.iterations.at(0) % uint64_t(sched_->ring_size()));
        return train_ring(*hopper_, *sched_, iteration, ring.mst_keys, ring.states, ring.evaluation);
    }

    DivergenceText divergence(int32_t mst_key, int iteration) const override {
        return {"model mst_key " + std::to_string(mst_key) + " diverged in iteration " + std::to_string(iteration),
                "Its loss became NaN or infinite; training of this model stopped.",
                "Lower the learning rate of this configuration."};
    }

private:
    bool multiple_ = false;
    std::unique_ptr<HopSchedule> sched_;
    std::unique_ptr<ModelHopper> hopper_;
};

}  // namespace

// In one transaction (a CALL inside BEGIN ... COMMIT, or a call from a function), every working table
// hopper creates and drops keeps its lock until the end: a table, its TOAST table and TOAST index per
// training statement, and the partitions of model_input and the schedule per iteration. Refuse a run
// that would fill PostgreSQL's shared lock table (max_locks_per_transaction x max_connections, shared
// with every other session) before it starts, rather than failing with "out of shared memory" hours in.
void check_lock_budget(int64_t hops_per_iteration, int num_segments, int64_t num_iterations) {
    const int64_t per_iteration = hops_per_iteration * 3 + int64_t(num_segments + 2) * 3 + 3;
    const int64_t needed = per_iteration * num_iterations;
    const int64_t budget = int64_t(max_locks_per_xact) * MaxBackends / 2;
    if (needed > budget)
        fail(ErrorKind::Limit, "training run too long for one transaction",
             "In a transaction block it would hold about " + std::to_string(needed) +
                 " locks until it ends; half of PostgreSQL's lock table (max_locks_per_transaction x connections) is " +
                 std::to_string(budget) + ".",
             "CALL it outside a transaction block (it then commits after every iteration), run fewer iterations per "
             "call and continue with warm_start, or raise max_locks_per_transaction.");
}

IterationOutcome train_ring(ModelHopper& hopper, const HopSchedule& sched, int iteration,
                            const std::vector<int32_t>& mst_keys, std::vector<std::string>& states,
                            RingEvaluation& evaluation) {
    // Without the debug record (which the working tables give, hop by hop), an engine whose segments
    // are all here trains the iteration in one group of processes (hop_workers.h), which also
    // evaluates the models due. The statements leave the evaluation to the run.
    if (!setting_debug_hops)
        if (std::optional<LocalSegments> local = hopper.local_segments(states))
            if (std::optional<IterationOutcome> done =
                    train_ring_locally(*local, sched, iteration, mst_keys, states, evaluation))
                return std::move(*done);
    IterationOutcome out;
    hopper.begin_iteration(sched, iteration, mst_keys, states);
    for (int hop = 0; hop < sched.hops_per_iteration(); ++hop) {
        check_for_interrupts();
        progress_hop(hop + 1, sched.hops_per_iteration(), int(mst_keys.size()));
        if (hop > 0) {
            auto t = Clock::now();
            hopper.hop();
            const double dt = seconds_since(t);
            out.hop_seconds += dt;
            if (setting_debug_hops) out.hops.push_back({0, hop + 1, "hop", -1, std::nullopt, dt});
        }
        auto t = Clock::now();
        hopper.train();
        const double dt = seconds_since(t);
        out.train_seconds += dt;
        if (setting_debug_hops)
            for (auto& [key, dist] : hopper.placements())
                out.hops.push_back({0, hop + 1, dist ? "train" : "wait", key, dist, dt});
    }
    std::map<int32_t, std::string> trained = hopper.read_states();
    for (std::size_t i = 0; i < states.size(); ++i) {
        auto found = trained.find(mst_keys[i]);
        if (found == trained.end())
            fail(ErrorKind::Internal, "model mst_key " + std::to_string(mst_keys[i]) + " is missing after training");
        states[i] = std::move(found->second);
    }
    hopper.end_iteration();
    return out;
}

std::unique_ptr<TrainingStrategy> model_hopping_strategy() { return std::make_unique<ModelHopping>(); }

}  // namespace hopper::pg
