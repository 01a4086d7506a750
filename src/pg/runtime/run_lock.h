// Session-level advisory locks a training run holds while it runs, in hopper's own lock classes
// (names.h, which no SQL function takes):
//  * the run's lock (kHopperLockClass, key space 0x48505231, key = run id mod 2^31): "this run is
//    alive". hopper.runs reads an ACTIVE run whose lock nobody holds as INTERRUPTED
//    (hopper.run_is_live), so its state is truthful whether the session crashed, was cancelled, or
//    failed and went on;
//  * the claims of its output tables' names (kHopperOutputClass, keyed by the schema's OID and a hash
//    of the table's name): another session training into the same output table, or any hopper call
//    creating a table of that name, is refused at once (55006), instead of the run training every
//    iteration and failing at the end.
// Both are released when the run ends, and when the transaction or subtransaction running it
// aborts (an error or a cancel in any iteration), by a transaction callback.
#pragma once

#include <cstdint>

#include "pg/common/names.h"

namespace hopper::pg {

constexpr int32_t kRunLockSpace = 0x48505231;  // "HPR1"

// Claims an output table's name for this session until the run ends, or raises 55006 if another
// session holds its claim (what: "model output table", ... for the message).
void claim_output_table(const TableName& output, const char* what);
// Takes the run's lock (the run row was just inserted by this session).
void hold_run_lock(int64_t run_id);
// Takes the lock of an existing run that this session continues; false if another session holds it.
bool try_hold_run_lock(int64_t run_id);
// Releases every lock this session took for runs (at the end of a run).
void release_run_locks();

// Registers the transaction callbacks (from _PG_init).
void run_lock_init();

}  // namespace hopper::pg
