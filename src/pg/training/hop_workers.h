// One iteration of model hopping trained by one group of processes on plain PostgreSQL: the
// backend and up to min(M, S) - 1 parallel workers of one ParallelContext train every (hop,
// segment) pair of the iteration's schedule, the models handed on through their slots in the run's
// state store (state_store.h). A pair starts once its model's previous visit is done, so every
// model visits the segments in the schedule's order, one at a time -- all its training depends
// on -- while a process that finished early goes on with any model that is ready rather than
// waiting for the slowest pair of its hop.
//
// The statement per hop path (ModelHopper: CREATE TABLE AS model_output ..., INSERT INTO
// model_input ...) started fresh parallel workers at every hop and created, filled and dropped the
// working tables: 9-14 ms a hop and 47-68 ms an iteration on 300 rows on 2 segments (a busy 2-core
// machine), against 1.5 and 7 ms here. Here the workers start once per iteration and no working
// table exists; a model's visit is the same SegmentVisit the train_segment aggregate runs over the
// same buffers in buffer_id order, so both paths train bit for bit alike. The statements remain for
// what must see the working tables -- hopper.debug_hops' record, hop by hop -- and for engines whose
// segments are elsewhere (Citus).
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
