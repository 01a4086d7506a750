// Planner settings for hopper's own statements, applied like a function's SET clause: undone when
// hopper is done with them, at a commit, or when the transaction aborts, so they never leak into the
// caller's later statements.
#pragma once

#include <string>

namespace hopper::pg {

class StatementSettings {
public:
    void enter();  // applies the settings (no-op if already applied)
    void leave();  // restores the caller's settings
    ~StatementSettings();

private:
    int level_ = -1;
};

// How many processes the next statements (inside enter/leave) may use, capped by the
// hopper.parallel_segments setting: 1 is a serial plan; n > 1 is n parallel workers, with
// parallel_leader_participation off (the leader only gathers).
void set_parallel_workers(int wanted);

}  // namespace hopper::pg
