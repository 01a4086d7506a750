#include "pg/runtime/run_lock.h"

#include <string>

#include "hopper/error.h"
#include "pg/common/spi.h"

extern "C" {
#include "access/xact.h"
}

namespace hopper::pg {

namespace {

constexpr int kMaxHeld = 8;

struct HeldLock {
    uint32_t field2, field3;
    uint16_t lock_class;
    int nest_level;  // transaction nesting level that took it
};

// At most one run per session at a time: its lock and its output tables' claims. Plain storage, so
// the C callbacks can use it.
HeldLock held[kMaxHeld];
int held_count = 0;

void release(const HeldLock& l) { release_hopper_session_lock(l.field2, l.field3, l.lock_class); }

// Releases the locks taken at nesting level `level` or deeper (all of them for level 1).
void release_from(int level) {
    int kept = 0;
    for (int i = 0; i < held_count; ++i) {
        if (held[i].nest_level >= level) release(held[i]);
        else held[kept++] = held[i];
    }
    held_count = kept;
}

void on_xact(XactEvent event, void*) {
    if (held_count > 0 && (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)) release_from(1);
}

void on_subxact(SubXactEvent event, SubTransactionId, SubTransactionId, void*) {
    if (held_count > 0 && event == SUBXACT_EVENT_ABORT_SUB) release_from(GetCurrentTransactionNestLevel());
}

bool take(uint32_t field2, uint32_t field3, uint16_t lock_class = kHopperLockClass) {
    if (held_count >= kMaxHeld) fail(ErrorKind::Internal, "a training run is already running in this session");
    const bool got = call([&] { return try_hopper_lock(field2, field3, true, lock_class); });
    if (got)
        held[held_count++] =
            HeldLock{field2, field3, lock_class, call([] { return GetCurrentTransactionNestLevel(); })};
    return got;
}

}  // namespace

void claim_output_table(const TableName& output, const char* what) {
    const OutputNameKey key = output_name_key(output);
    if (!take(key.schema, key.name, kHopperOutputClass)) fail_name_claimed(output, what);
}

void hold_run_lock(int64_t run_id) {
    if (!take(uint32_t(kRunLockSpace), uint32_t(run_id % 2147483648LL)))
        fail(ErrorKind::Internal, "training run " + std::to_string(run_id) + " is already held by another session");
}

bool try_hold_run_lock(int64_t run_id) { return take(uint32_t(kRunLockSpace), uint32_t(run_id % 2147483648LL)); }

void release_run_locks() {
    call([] { release_from(1); });
}

void run_lock_init() {
    RegisterXactCallback(on_xact, nullptr);
    RegisterSubXactCallback(on_subxact, nullptr);
}

}  // namespace hopper::pg
