// Refusing work that would take absurd memory or disk, before it starts: the plans come from the
// core (hopper/resources.h), the budgets from settings tied to the machine.
//   hopper.max_memory_mb  (0: a quarter of the machine's physical memory) -- memory one call may
//                          plan to use across its backend and parallel workers; 53200 beyond it
//   hopper.max_packed_table_mb (0: a quarter of the free space of the data directory's file system)
//                          -- the size of a packed table preprocess may write; 53100 beyond it
#pragma once

#include <cstdint>
#include <string>

namespace hopper::pg {

// Raises 53200 if `bytes` exceed the memory budget; `what` says what needs them ("training 4
// configurations on 2 segments"), `hint` how to need less.
void check_memory(uint64_t bytes, const std::string& what, const std::string& hint);

// Raises 53100 if a table of `bytes` exceeds the packed-table budget.
void check_packed_table_size(uint64_t bytes, const std::string& what, const std::string& hint);

// The budgets now (for messages and tests).
uint64_t memory_budget_bytes();
uint64_t packed_table_budget_bytes();

}  // namespace hopper::pg
