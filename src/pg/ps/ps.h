// Parameter-server tables in PostgreSQL shared memory (see docs/parameter_server.md).
//
// Memory: a fixed area reserved at server start (hopper must be in shared_preload_libraries): a
// directory of hopper.ps_max_tables table slots, then an arena of hopper.ps_memory_mb megabytes in
// which each table owns one block (first fit): its worker states, key ranges, values and, for BSP,
// the pending buffer of the current iteration's Adds.
//
// Locks: one LWLock for the directory (create, drop, look-up by name) and one per table slot.
// Get and Add hold the table's lock shared (Adds update values with atomic compare-and-swap, so
// concurrent Adds never lose an update); Clock, worker (un)binding, BSP folding, save and drop hold
// it exclusive. Order: directory before table. No PostgreSQL call that can raise an error runs while
// a lock is held, and no C++ exception is thrown while one is held.
//
// Waits: a Get (or BSP Add) that may not proceed sleeps on the table's condition variable, which is
// broadcast when the slowest worker's clock advances, a worker's session ends, or the table is
// dropped. The sleep is interruptible (query cancel, statement_timeout, termination).
//
// Workers: a worker id is bound to the first session that uses it; the binding ends when that
// session ends (before_shmem_exit), which marks the worker gone and wakes the waiters; a wait that
// needs a gone worker to advance fails with a clear error instead of waiting forever. A later session
// may take a gone worker over and resume at its clock.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hopper/ps.h"

namespace hopper::pg {

extern int setting_ps_memory_mb;   // hopper.ps_memory_mb (PGC_POSTMASTER)
extern int setting_ps_max_tables;  // hopper.ps_max_tables (PGC_POSTMASTER)
extern int setting_ps_role_share;  // hopper.ps_role_share (PGC_SUSET): percent of the pool one role may hold

// Called from _PG_init: defines the GUCs, and when preloading, requests the shared memory and locks.
void ps_init();

}  // namespace hopper::pg
