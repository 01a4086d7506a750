#include "hopper/interrupt.h"

namespace hopper {

namespace {
InterruptCheck installed = nullptr;
}

void set_interrupt_check(InterruptCheck check) { installed = check; }

void check_interrupts() {
    if (installed) installed();
}

}  // namespace hopper
