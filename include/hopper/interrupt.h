// Cancel for the core's long loops. The core cannot call PostgreSQL, so the port installs a check
// (PostgreSQL's CHECK_FOR_INTERRUPTS, which raises query cancel, statement timeout and termination
// as an exception that unwinds the core's frames); without one, checking does nothing. Like
// liblwgeom's interrupt handler in PostGIS.
#pragma once

namespace hopper {

using InterruptCheck = void (*)();

// Installs the check (nullptr removes it). Called once, when the library is loaded.
void set_interrupt_check(InterruptCheck check);

// Runs the installed check. It may throw; callers hold no state that an exception would corrupt.
void check_interrupts();

// Calls check_interrupts() once every `period` calls of tick(): for loops whose iterations are too
// cheap to check each time.
class InterruptTicker {
public:
    explicit InterruptTicker(unsigned period = 4096) : period_(period) {}
    void tick() {
        if (++count_ >= period_) {
            count_ = 0;
            check_interrupts();
        }
    }

private:
    unsigned period_;
    unsigned count_ = 0;
};

}  // namespace hopper
