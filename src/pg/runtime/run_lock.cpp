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
    int32_t space, key;
    int nest_level;  // transaction nesting level that took it
};

// At most one run per session at a time: its lock and its output tables' claims. Plain storage, so
// the C callbacks can use it.
HeldLock held[kMaxHeld];
int held_count = 0;

void release(const HeldLock& l) { release_hopper_session_lock(l.space, l.key); }

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

bool take(int32_t space, int32_t key) {
    if (held_count >= kMaxHeld) fail(ErrorKind::Internal, "a training run is already running in this session");
    const bool got = call([&] { return try_hopper_lock(space, key, true); });
    if (got) held[held_count++] = HeldLock{space, key, call([] { return GetCurrentTransactionNestLevel(); })};
    return got;
}

}  // namespace

void claim_output_table(const TableName& output, const char* what) {
    if (!take(kOutputLockSpace, output_name_key(output))) fail_name_claimed(output, what);
}

void hold_run_lock(int64_t run_id) {
    if (!take(kRunLockSpace, int32_t(run_id % 2147483648LL)))
        fail(ErrorKind::Internal, "training run " + std::to_string(run_id) + " is already held by another session");
}

bool try_hold_run_lock(int64_t run_id) { return take(kRunLockSpace, int32_t(run_id % 2147483648LL)); }

void release_run_locks() {
    call([] { release_from(1); });
}

void run_lock_init() {
    RegisterXactCallback(on_xact, nullptr);
    RegisterSubXactCallback(on_subxact, nullptr);
}

}  // namespace hopper::pg
