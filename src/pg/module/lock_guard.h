// LOCK TABLE on hopper's tables in a mode that stops their writers is their owner's alone
// (lock_guard.cpp: a ProcessUtility hook).
#pragma once

namespace hopper::pg {

// Installs the hook (from _PG_init).
void lock_guard_init();

}  // namespace hopper::pg
