#include "pg/runtime/run_lock.h"

#include <string>

#include "hopper/error.h"
#include "pg/common/spi.h"

extern "C" {
#include "access/xact.h"
#include "common/hashfn.h"
#include "storage/lock.h"
}

namespace hopper::pg {

namespace {

struct HeldLock {
    int32_t space, key;
    int nest_level;  // transaction nesting level that took it
};

// At most one run per session at a time: two locks. Plain storage, so the C callbacks can use it.
HeldLock held[2];
int held_count = 0;

LOCKTAG tag_of(int32_t space, int32_t key) {
    LOCKTAG tag;
    SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, uint32(space), uint32(key), 2);
    return tag;
}

void release(const HeldLock& l) {
    LOCKTAG tag = tag_of(l.space, l.key);
    LockRelease(&tag, ExclusiveLock, true);
}

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
    if (held_count >= 2) fail(ErrorKind::Internal, "a training run is already running in this session");
    const bool got = call([&] {
        LOCKTAG tag = tag_of(space, key);
        return LockAcquire(&tag, ExclusiveLock, true, true) != LOCKACQUIRE_NOT_AVAIL;
    });
    if (got) held[held_count++] = HeldLock{space, key, call([] { return GetCurrentTransactionNestLevel(); })};
    return got;
}

}  // namespace

void claim_output_table(const TableName& output) {
    const std::string name = output.quoted();
    const int32_t key = int32_t(
        call([&] { return hash_bytes(reinterpret_cast<const unsigned char*>(name.data()), int(name.size())); }));
    if (take(kOutputLockSpace, key)) return;
    std::string holder;
    {
        Spi spi;
        spi.execute(
            "SELECT pg_catalog.string_agg(l.pid::pg_catalog.text, ', ') FROM pg_catalog.pg_locks l"
            " WHERE l.locktype OPERATOR(pg_catalog.=) 'advisory' AND l.granted"
            " AND l.objsubid OPERATOR(pg_catalog.=) 2 AND l.database OPERATOR(pg_catalog.=) $1::pg_catalog.oid"
            " AND l.classid OPERATOR(pg_catalog.=) $2::pg_catalog.oid AND l.objid OPERATOR(pg_catalog.=) $3::pg_catalog.oid",
            {SqlParam::int8(int64_t(MyDatabaseId)), SqlParam::int8(int64_t(uint32_t(kOutputLockSpace))),
             SqlParam::int8(int64_t(uint32_t(key)))});
        if (spi.rows() == 1 && !spi.is_null(0, 0)) holder = spi.text(0, 0);
    }
    fail(ErrorKind::ObjectInUse, "model output table " + output.display() + " is being written by another training run",
         holder.empty() ? "Another session is training into it."
                        : "The session with process id " + holder + " is training into it.",
         "Wait for that run to end, or write to another output table.");
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
