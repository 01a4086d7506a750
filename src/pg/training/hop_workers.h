// One iteration of model hopping trained by one group of processes on plain PostgreSQL: the
// backend and up to min(M, S) - 1 parallel workers of one ParallelContext train every hop of the
// iteration, each taking the next (hop, segment) pair in order, the models handed on between
// hops through their slots in the run's state store (state_store.h). A pair of hop h waits until
// every pair of hop h - 1 is done, so no model trains on two segments at once and each segment's
// visits keep the schedule's order.
//
// The statement per hop path (ModelHopper: CREATE TABLE AS model_output ..., INSERT INTO
// model_input ...) started fresh parallel workers at every hop and created, filled and dropped the
// working tables: ~7-10 ms a hop on tiny data on a 2-core machine, ~25 ms an iteration more. Here
// the workers start once per iteration and no working table exists; a model's visit is the same
// SegmentVisit the train_segment aggregate runs over the same buffers in buffer_id order, so both
// paths train bit for bit alike. The statements remain for what must see the working tables --
// hopper.debug_hops' record -- and for engines whose segments are elsewhere (Citus).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hopper/schedule.h"
#include "pg/engine/engine.h"
#include "pg/training/run.h"

namespace hopper::pg {

// Trains iteration `iteration` of `sched` (every hop) on `local`'s segments; `states` in, the
// trained states out (by model index, as mst_keys). Returns the iteration's timings, or nullopt
// when the store has no room for the states (the statements then pass them by value).
std::optional<IterationOutcome> train_ring_locally(const LocalSegments& local, const HopSchedule& sched, int iteration,
                                                   const std::vector<int32_t>& mst_keys,
                                                   std::vector<std::string>& states);

}  // namespace hopper::pg
