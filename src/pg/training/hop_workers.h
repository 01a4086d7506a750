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
//
// The group also evaluates the models due after the iteration (RingEvaluation): a model whose last
// visit of the iteration is done is evaluated on each segment of each table, one (model, table,
// segment) task at a time, by whichever process has no pair ready to train -- while other models
// still train -- with the aggregates' own code (buffer_eval.h). Each task's sums are kept apart and
// added up in dist_key order as Engine::evaluate's statement adds its segments' sums, so the
// metrics are bit for bit the statement's. The statement after the iteration (one worker per
// segment, started afresh, the states passed as a parameter) cost fit_multiple of 4 models on 2
// segments of Fashion-MNIST 12.1% of an iteration in wall time and 10.5% in CPU for validating on
// the 10,000 test images; the group 8.4% and 8.4% (bench/results/2026-11-28-vm-eval.md; a forward
// pass over a sixth of the rows is some 8% of a training pass, so little is left to gain but by
// cores the iteration leaves idle). What the group cannot read is left to the run's statement: a
// temporary table when parallel workers are in the group (they cannot read the backend's temporary
// buffers).
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
// trained states out (by model index, as mst_keys); evaluates the models `evaluation` names on its
// tables, filling its results. Returns the iteration's timings, or nullopt when the store has no
// room for the states (the statements then pass them by value).
std::optional<IterationOutcome> train_ring_locally(const LocalSegments& local, const HopSchedule& sched, int iteration,
                                                   const std::vector<int32_t>& mst_keys,
                                                   std::vector<std::string>& states, RingEvaluation& evaluation);

}  // namespace hopper::pg
