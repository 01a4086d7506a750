// Parameter tables in shared memory: the fixed area, locking, waits, worker binding, operations.
// Design notes are in ps.h. Code between LWLockAcquire and LWLockRelease is plain C-like code that
// neither raises a PostgreSQL error nor throws (it runs inside pg::call and allocates nothing).
#include "pg/ps/ps_table.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "pg/common/names.h"
#include "pg/ps/ps.h"

extern "C" {
#include "miscadmin.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/acl.h"
#include "utils/timestamp.h"
}

namespace hopper::pg {

int setting_ps_memory_mb = 64;
int setting_ps_max_tables = 32;
int setting_ps_role_share = 50;

namespace {

using ps::WorkerState;

constexpr const char* kTranche = "hopper_ps";
constexpr uint32_t kMagic = 0x48505331;  // "HPS1"

// One table slot. Directory fields (in_use, generation, dboid, owner, name and the settings) change
// only while both the directory lock and this table's lock are held exclusively, so either lock
// gives a stable view of them. min_clock and the block's contents are protected by the table lock.
struct PsTable {
    bool in_use;
    uint64 generation;
    Oid dboid;
    Oid owner;
    char name[NAMEDATALEN];
    TimestampTz created_at;
    int64 num_keys;
    int64 chunk_size;
    int32 consistency;
    int32 staleness;
    int32 num_workers;
    int32 num_ranges;
    uint64 block_offset;  // in the arena
    uint64 block_bytes;
    uint64 workers_at;  // absolute offsets in the arena
    uint64 ranges_at;
    uint64 values_at;
    uint64 pending_at;  // 0: none
    uint64 writers_at;  // SparseSSP: num_chunks x worker_words bit sets (0: none)
    uint64 read_marks_at;
    int64 num_chunks;  // SparseSSP: chunks with writers and read marks (0 otherwise)
    int32 worker_words;
    int32 part;  // a part of a partitioned table: its index in the range map (-1: none)
    int32 num_parts;
    uint64 map_at;  // the range map (0: none)
    int64 min_clock;
    LWLock* lock;
    ConditionVariable cv;
    pg_atomic_uint64 get_calls, get_keys, add_calls, add_keys, clocks, waits, late_adds;
};

// Writer sets and read marks are updated with 64-bit atomics in place (and copied with memcpy).
static_assert(sizeof(pg_atomic_uint64) == 8, "pg_atomic_uint64 must be a plain 64-bit word");

struct PsShared {
    uint32 magic;
    int max_tables;
    uint64 arena_bytes;
    uint64 arena_offset;  // from the start of this struct
    uint64 next_generation;
    LWLock* directory_lock;
    PsTable tables[FLEXIBLE_ARRAY_MEMBER];
};

PsShared* shared = nullptr;
shmem_request_hook_type prev_shmem_request_hook = nullptr;
shmem_startup_hook_type prev_shmem_startup_hook = nullptr;

Size header_bytes(int max_tables) {
    return TYPEALIGN(64, offsetof(PsShared, tables) + sizeof(PsTable) * Size(max_tables));
}
Size arena_bytes() { return Size(setting_ps_memory_mb) * 1024 * 1024; }

char* arena() { return reinterpret_cast<char*>(shared) + shared->arena_offset; }
PsTable* slot(int i) { return &shared->tables[i]; }
WorkerState* workers_of(PsTable* t) { return reinterpret_cast<WorkerState*>(arena() + t->workers_at); }
ps::KeyRange* ranges_of(PsTable* t) { return reinterpret_cast<ps::KeyRange*>(arena() + t->ranges_at); }
pg_atomic_uint32* values_of(PsTable* t) { return reinterpret_cast<pg_atomic_uint32*>(arena() + t->values_at); }
pg_atomic_uint32* pending_of(PsTable* t) {
    return t->pending_at ? reinterpret_cast<pg_atomic_uint32*>(arena() + t->pending_at) : nullptr;
}
pg_atomic_uint64* writers_of(PsTable* t) { return reinterpret_cast<pg_atomic_uint64*>(arena() + t->writers_at); }
pg_atomic_uint64* read_marks_of(PsTable* t) { return reinterpret_cast<pg_atomic_uint64*>(arena() + t->read_marks_at); }
ps::KeyRange* map_of(PsTable* t) { return reinterpret_cast<ps::KeyRange*>(arena() + t->map_at); }

void ps_shmem_request() {
    if (prev_shmem_request_hook) prev_shmem_request_hook();
    RequestAddinShmemSpace(add_size(header_bytes(setting_ps_max_tables), arena_bytes()));
    RequestNamedLWLockTranche(kTranche, setting_ps_max_tables + 1);
}

void ps_shmem_startup() {
    if (prev_shmem_startup_hook) prev_shmem_startup_hook();
    LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
    bool found = false;
    const Size header = header_bytes(setting_ps_max_tables);
    shared =
        static_cast<PsShared*>(ShmemInitStruct("hopper parameter tables", add_size(header, arena_bytes()), &found));
    if (!found) {
        std::memset(shared, 0, header);
        shared->magic = kMagic;
        shared->max_tables = setting_ps_max_tables;
        shared->arena_bytes = arena_bytes();
        shared->arena_offset = header;
        shared->next_generation = 1;
        LWLockPadded* locks = GetNamedLWLockTranche(kTranche);
        shared->directory_lock = &locks[0].lock;
        for (int i = 0; i < shared->max_tables; ++i) {
            PsTable* t = slot(i);
            t->lock = &locks[i + 1].lock;
            ConditionVariableInit(&t->cv);
            pg_atomic_init_u64(&t->get_calls, 0);
            pg_atomic_init_u64(&t->get_keys, 0);
            pg_atomic_init_u64(&t->add_calls, 0);
            pg_atomic_init_u64(&t->add_keys, 0);
            pg_atomic_init_u64(&t->clocks, 0);
            pg_atomic_init_u64(&t->waits, 0);
            pg_atomic_init_u64(&t->late_adds, 0);
        }
    }
    LWLockRelease(AddinShmemInitLock);
}

std::string quoted(const std::string& name) { return "\"" + name + "\""; }

// ---- worker binding and session exit ----

bool exit_callback_registered = false;

void on_backend_exit(int, Datum) {
    if (!shared) return;
    ConditionVariableCancelSleep();
    for (int i = 0; i < shared->max_tables; ++i) {
        PsTable* t = slot(i);
        if (LWLockHeldByMe(t->lock)) LWLockRelease(t->lock);
        LWLockAcquire(t->lock, LW_EXCLUSIVE);
        bool changed = false;
        if (t->in_use) {
            WorkerState* w = workers_of(t);
            for (int32 k = 0; k < t->num_workers; ++k)
                if (w[k].status == ps::kWorkerActive && w[k].pid == MyProcPid) {
                    w[k].status = ps::kWorkerGone;
                    w[k].pid = 0;
                    changed = true;
                }
        }
        LWLockRelease(t->lock);
        if (changed) ConditionVariableBroadcast(&t->cv);
    }
}

void ensure_exit_callback() {
    if (exit_callback_registered) return;
    call([] { before_shmem_exit(on_backend_exit, 0); });
    exit_callback_registered = true;
}

// ---- backend-local cache of handles ----

std::unordered_map<std::string, ps_table::Handle>& cache() {
    static std::unordered_map<std::string, ps_table::Handle> c;
    return c;
}

// The fixed part of a slot, copied out under a lock.
struct SlotCopy {
    int slot = -1;
    uint64 generation = 0;
    Oid owner = InvalidOid;
    int64 chunk_size = 0;
    int32 consistency = 0, staleness = 0, num_workers = 0, num_ranges = 0, part = -1, num_parts = 0;
};

void copy_slot(int i, SlotCopy* out) {
    PsTable* t = slot(i);
    out->slot = i;
    out->generation = t->generation;
    out->owner = t->owner;
    out->chunk_size = t->chunk_size;
    out->consistency = t->consistency;
    out->staleness = t->staleness;
    out->num_workers = t->num_workers;
    out->num_ranges = t->num_ranges;
    out->part = t->part;
    out->num_parts = t->num_parts;
}

int find_slot_locked(const char* name) {
    for (int i = 0; i < shared->max_tables; ++i) {
        PsTable* t = slot(i);
        if (t->in_use && t->dboid == MyDatabaseId && std::strcmp(t->name, name) == 0) return i;
    }
    return -1;
}

// Looks the table up in the directory; false if there is none.
bool lookup(const std::string& name, ps_table::Handle* h) {
    for (;;) {
        SlotCopy sc;
        call([&] {
            LWLockAcquire(shared->directory_lock, LW_SHARED);
            const int i = find_slot_locked(name.c_str());
            if (i >= 0) copy_slot(i, &sc);
            LWLockRelease(shared->directory_lock);
        });
        if (sc.slot < 0) return false;
        std::vector<ps::KeyRange> ranges(std::size_t(sc.num_ranges)), map(std::size_t(sc.num_parts));
        bool same = false;
        call([&] {
            LWLockAcquire(shared->directory_lock, LW_SHARED);
            PsTable* t = slot(sc.slot);
            same = t->in_use && t->generation == sc.generation;
            if (same) {
                std::memcpy(ranges.data(), ranges_of(t), sizeof(ps::KeyRange) * ranges.size());
                if (!map.empty()) std::memcpy(map.data(), map_of(t), sizeof(ps::KeyRange) * map.size());
            }
            LWLockRelease(shared->directory_lock);
        });
        if (!same) continue;  // dropped (and maybe re-created) meanwhile: look again
        h->slot = sc.slot;
        h->generation = sc.generation;
        h->owner = sc.owner;
        ps::TableSettings& s = h->settings;
        s.name = name;
        s.keys = ps::KeySpace::from_ranges(std::move(ranges));
        s.chunk_size = sc.chunk_size;
        s.consistency = ps::Consistency(sc.consistency);
        s.staleness = sc.staleness;
        s.num_workers = sc.num_workers;
        s.part = sc.part;
        s.range_map = std::move(map);
        h->rule = ps::ClockRule{s.consistency, s.staleness};
        h->chunks = h->rule.sparse() ? ps::ChunkIndex(s.keys, s.chunk_size) : ps::ChunkIndex();
        return true;
    }
}

[[noreturn]] void no_such_table(const std::string& name) {
    fail(ErrorKind::UndefinedObject, "parameter table " + quoted(name) + " does not exist", "",
         "hopper.ps_tables lists the parameter tables of this database.");
}

// ---- one attempt at an operation, under the table lock ----

// FoldClock: the Clock a SparseSSP Get does first, if the worker's previous Get started an iteration.
enum class OpKind { Get, Add, Clock, FoldClock };
enum class Step { Done, Wait, Dropped, Busy, Gone };

struct StepResult {
    Step step = Step::Done;
    int32 blocker = -1;
    int64 blocker_clock = 0;
    int64 needed = 0;
    int64 my_clock = 0;
    int32 busy_pid = 0;
    bool broadcast = false;
    uint64 overflowed = 0;  // Adds (or folded BSP Adds) left out: they would have made a value infinite
    uint64 late = 0;        // SparseSSP: chunks this Add wrote for the first time after a Get too far ahead read them
};

inline float load_float(pg_atomic_uint32* p) {
    uint32 bits = pg_atomic_read_u32(p);
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

// Adds delta atomically unless the sum would not be finite (it leaves the value as it is then, and
// returns false): a parameter server whose values overflow to infinity poisons every worker that
// reads them, so the overflowing delta is dropped, element by element, and counted.
inline bool add_float(pg_atomic_uint32* p, float delta) {
    uint32 old = pg_atomic_read_u32(p);
    for (;;) {
        float f;
        std::memcpy(&f, &old, 4);
        f += delta;
        if (!std::isfinite(f)) return false;
        uint32 bits;
        std::memcpy(&bits, &f, 4);
        if (pg_atomic_compare_exchange_u32(p, &old, bits)) return true;
    }
}

void do_get(PsTable* t, const ps_table::Access& a, float* out) noexcept {
    pg_atomic_uint32* v = values_of(t);
    // Under BSP the values change only under the exclusive lock: copy runs of them directly.
    const bool stable = t->consistency == int32(ps::Consistency::BSP);
    if (a.offsets) {
        for (std::size_t i = 0; i < a.n; ++i) out[i] = load_float(&v[a.offsets[i]]);
        return;
    }
    std::size_t at = 0;
    for (std::size_t s = 0; s < a.nspans; ++s) {
        const ps::Span sp = a.spans[s];
        if (stable) {
            std::memcpy(out + at, &v[sp.offset], sizeof(float) * std::size_t(sp.length));
        } else {
            for (int64 k = 0; k < sp.length; ++k) out[at + std::size_t(k)] = load_float(&v[sp.offset + k]);
        }
        at += std::size_t(sp.length);
    }
}

// Returns how many deltas were left out because they would have overflowed.
uint64 do_add(PsTable* t, const ps_table::Access& a, const float* deltas) noexcept {
    pg_atomic_uint32* v = t->pending_at ? pending_of(t) : values_of(t);
    uint64 overflowed = 0;
    if (a.offsets) {
        for (std::size_t i = 0; i < a.n; ++i)
            if (deltas[i] != 0.0f && !add_float(&v[a.offsets[i]], deltas[i])) ++overflowed;
        return overflowed;
    }
    std::size_t at = 0;
    for (std::size_t s = 0; s < a.nspans; ++s) {
        const ps::Span sp = a.spans[s];
        for (int64 k = 0; k < sp.length; ++k)
            if (deltas[at + std::size_t(k)] != 0.0f && !add_float(&v[sp.offset + k], deltas[at + std::size_t(k)]))
                ++overflowed;
        at += std::size_t(sp.length);
    }
    return overflowed;
}

// Folds the pending buffer into the values (BSP, table lock held exclusively); returns how many
// pending sums were left out because they would have overflowed.
uint64 fold_pending(PsTable* t) noexcept {
    pg_atomic_uint32* v = values_of(t);
    pg_atomic_uint32* p = pending_of(t);
    uint64 overflowed = 0;
    for (int64 i = 0; i < t->num_keys; ++i) {
        const uint32 bits = pg_atomic_read_u32(&p[i]);
        if (bits == 0) continue;  // +0.0f
        float f;
        std::memcpy(&f, &bits, 4);
        const float sum = load_float(&v[i]) + f;
        pg_atomic_write_u32(&p[i], 0);
        if (!std::isfinite(sum)) {
            ++overflowed;
            continue;
        }
        uint32 out;
        std::memcpy(&out, &sum, 4);
        pg_atomic_write_u32(&v[i], out);
    }
    return overflowed;
}

// SparseSSP: the union of the writer sets of the chunks `a` touches (table lock held).
void writers_of_access(PsTable* t, const ps_table::Access& a, uint64* out) noexcept {
    const int32 words = t->worker_words;
    std::memset(out, 0, sizeof(uint64) * std::size_t(words));
    pg_atomic_uint64* w = writers_of(t);
    for (std::size_t i = 0; i < a.nchunks; ++i)
        for (int32 k = 0; k < words; ++k) out[k] |= pg_atomic_read_u64(&w[a.chunks[i] * words + k]);
}

// SparseSSP: whether `worker` already is a writer of every chunk `a` touches.
bool writes_all(PsTable* t, const ps_table::Access& a, int worker) noexcept {
    pg_atomic_uint64* w = writers_of(t);
    const uint64 bit = uint64(1) << (worker % 64);
    for (std::size_t i = 0; i < a.nchunks; ++i)
        if (!(pg_atomic_read_u64(&w[a.chunks[i] * t->worker_words + worker / 64]) & bit)) return false;
    return true;
}

// SparseSSP, under the exclusive lock (so that no Get is between its wait check and its read):
// makes `worker` a writer of the chunks of `a` and returns how many it was not a writer of already
// although a Get from a clock beyond `clock + staleness` had read them. Those Gets did not wait for
// this worker, so this Add reaches them later than the staleness allows.
uint64 become_writer(PsTable* t, const ps_table::Access& a, int worker, int64 clock) noexcept {
    pg_atomic_uint64* w = writers_of(t);
    pg_atomic_uint64* marks = read_marks_of(t);
    const uint64 bit = uint64(1) << (worker % 64);
    uint64 late = 0;
    for (std::size_t i = 0; i < a.nchunks; ++i) {
        const int64 c = a.chunks[i];
        if (pg_atomic_fetch_or_u64(&w[c * t->worker_words + worker / 64], bit) & bit) continue;
        // A read mark is 1 + the highest clock of a Get that read the chunk (0: none).
        if (int64(pg_atomic_read_u64(&marks[c])) > clock + t->staleness + 1) ++late;
    }
    return late;
}

// SparseSSP: records that a Get from `clock` read the chunks of `a` (table lock held).
void mark_read(PsTable* t, const ps_table::Access& a, int64 clock) noexcept {
    pg_atomic_uint64* marks = read_marks_of(t);
    const uint64 mark = uint64(clock) + 1;
    for (std::size_t i = 0; i < a.nchunks; ++i) {
        pg_atomic_uint64* m = &marks[a.chunks[i]];
        uint64 old = pg_atomic_read_u64(m);
        while (old < mark && !pg_atomic_compare_exchange_u64(m, &old, mark)) {}
    }
}

void attempt(PsTable* t, uint64 generation, const ps::ClockRule& rule, int worker, OpKind kind,
             const ps_table::Access* a, float* out, const float* deltas, StepResult* r) noexcept {
    LWLockMode mode = kind == OpKind::Clock || kind == OpKind::FoldClock ? LW_EXCLUSIVE : LW_SHARED;
    for (;;) {
        LWLockAcquire(t->lock, mode);
        if (!t->in_use || t->generation != generation) {
            LWLockRelease(t->lock);
            r->step = Step::Dropped;
            return;
        }
        WorkerState* ws = workers_of(t);
        WorkerState& me = ws[worker];
        if (me.status != ps::kWorkerActive || me.pid != MyProcPid) {
            if (me.status == ps::kWorkerActive) {
                r->step = Step::Busy;
                r->busy_pid = me.pid;
                LWLockRelease(t->lock);
                return;
            }
            if (mode == LW_SHARED) {  // binding needs the exclusive lock
                LWLockRelease(t->lock);
                mode = LW_EXCLUSIVE;
                continue;
            }
            me.status = ps::kWorkerActive;
            me.pid = MyProcPid;
        }
        r->my_clock = me.clock;
        if (kind == OpKind::Clock || (kind == OpKind::FoldClock && me.in_iteration)) {
            me.clock += 1;
            me.in_iteration = 0;  // a retried Get (after a cancelled wait) must not clock again
            r->my_clock = me.clock;
            const int64 m = ps::min_clock(ws, t->num_workers);
            if (m > t->min_clock) {
                if (t->pending_at) r->overflowed = fold_pending(t);  // BSP: iteration min_clock is complete
                t->min_clock = m;
                r->broadcast = true;
            }
            // SparseSSP: a waiter may wait for this worker alone, slowest or not.
            if (rule.sparse()) r->broadcast = true;
            pg_atomic_fetch_add_u64(&t->clocks, 1);
            LWLockRelease(t->lock);
            r->step = Step::Done;
            return;
        }
        if (kind == OpKind::FoldClock) {  // the worker's previous iteration has been clocked already
            LWLockRelease(t->lock);
            r->step = Step::Done;
            return;
        }
        if (kind == OpKind::Add && rule.sparse() && mode == LW_SHARED && !writes_all(t, *a, worker)) {
            LWLockRelease(t->lock);  // becoming a writer needs the exclusive lock
            mode = LW_EXCLUSIVE;
            continue;
        }
        const std::optional<int64_t> needs = kind == OpKind::Get ? rule.get_needs(me.clock) : rule.add_needs(me.clock);
        if (needs && t->min_clock < *needs) {
            uint64 only[ps::kMaxWorkers / 64];
            const bool sparse_get = kind == OpKind::Get && rule.sparse();
            if (sparse_get) writers_of_access(t, *a, only);
            const ps::WaitCheck c = ps::check_wait(needs, ws, t->num_workers, sparse_get ? only : nullptr);
            if (c.kind != ps::WaitCheck::Proceed) {
                r->step = c.kind == ps::WaitCheck::WorkerGone ? Step::Gone : Step::Wait;
                r->blocker = c.blocker;
                r->blocker_clock = ws[c.blocker].clock;
                r->needed = c.needed;
                LWLockRelease(t->lock);
                return;
            }
        }
        const uint64 keys = a->count();
        if (kind == OpKind::Get) {
            do_get(t, *a, out);
            if (rule.sparse()) {
                mark_read(t, *a, me.clock);
                me.in_iteration = 1;  // only this backend writes its own worker's flag
            }
            pg_atomic_fetch_add_u64(&t->get_calls, 1);
            pg_atomic_fetch_add_u64(&t->get_keys, keys);
        } else {
            if (rule.sparse() && mode == LW_EXCLUSIVE) {
                r->late = become_writer(t, *a, worker, me.clock);
                if (r->late) pg_atomic_fetch_add_u64(&t->late_adds, r->late);
            }
            r->overflowed = do_add(t, *a, deltas);
            pg_atomic_fetch_add_u64(&t->add_calls, 1);
            pg_atomic_fetch_add_u64(&t->add_keys, keys);
        }
        LWLockRelease(t->lock);
        r->step = Step::Done;
        return;
    }
}

std::string rule_text(const ps::ClockRule& rule) {
    switch (rule.consistency) {
        case ps::Consistency::BSP: return "BSP";
        case ps::Consistency::SSP: return "SSP with staleness " + std::to_string(rule.staleness);
        case ps::Consistency::ASP: return "ASP";
        case ps::Consistency::SparseSSP: return "SparseSSP with staleness " + std::to_string(rule.staleness);
    }
    return "";
}

constexpr long kTakeoverGraceMs = 2000;

// Runs an operation, waiting as needed. Returns the worker's clock after it.
int64_t run(const ps_table::Handle& h, int worker, OpKind kind, const ps_table::Access* a, float* out,
            const float* deltas) {
    ensure_exit_callback();
    PsTable* t = slot(h.slot);
    bool sleeping = false;
    bool counted_wait = false;
    TimestampTz busy_since = 0;
    StepResult r;
    try {
        for (;;) {
            r = StepResult{};
            call([&] { attempt(t, h.generation, h.rule, worker, kind, a, out, deltas, &r); });
            if (r.step == Step::Done) break;
            const std::string table = quoted(h.settings.name);
            const std::string who = "worker " + std::to_string(worker);
            switch (r.step) {
                case Step::Dropped:
                    fail(ErrorKind::UndefinedObject,
                         "parameter table " + table +
                             (sleeping ? " was dropped while " + who + " waited" : " was dropped"));
                case Step::Gone:
                    fail(ErrorKind::ObjectNotInPrerequisiteState,
                         "worker " + std::to_string(r.blocker) + " of parameter table " + table + " is gone",
                         "Its session ended at clock " + std::to_string(r.blocker_clock) + "; " + who + " at clock " +
                             std::to_string(r.my_clock) + " needs every worker" +
                             (h.rule.sparse() ? " that wrote what it reads" : "") + " at clock " +
                             std::to_string(r.needed) + " or later (" + rule_text(h.rule) + ").",
                         "Run worker " + std::to_string(r.blocker) + " again in a new session (it resumes at clock " +
                             std::to_string(r.blocker_clock) + "), or drop the table.");
                case Step::Busy: {
                    // The other session may be ending right now (its exit wakes us): wait briefly.
                    const TimestampTz now = call([] { return GetCurrentTimestamp(); });
                    if (busy_since == 0) busy_since = now;
                    const long waited_ms = long((now - busy_since) / 1000);
                    if (waited_ms >= kTakeoverGraceMs)
                        fail(ErrorKind::ObjectInUse,
                             who + " of parameter table " + table + " is in use by another session",
                             "Process " + std::to_string(r.busy_pid) + " is " + who + ".",
                             "A worker belongs to one session at a time; it is released when that session ends.");
                    call([&] { ConditionVariableTimedSleep(&t->cv, kTakeoverGraceMs - waited_ms, PG_WAIT_EXTENSION); });
                    sleeping = true;
                    break;
                }
                case Step::Wait:
                    if (!counted_wait) {
                        pg_atomic_fetch_add_u64(&t->waits, 1);
                        counted_wait = true;
                    }
                    // The first call only prepares the sleep (then the state is checked again).
                    call([&] { ConditionVariableSleep(&t->cv, PG_WAIT_EXTENSION); });
                    sleeping = true;
                    break;
                case Step::Done: break;
            }
        }
    } catch (...) {
        if (sleeping) call([] { ConditionVariableCancelSleep(); });
        throw;
    }
    call([&] {
        if (sleeping) ConditionVariableCancelSleep();
        if (r.broadcast) ConditionVariableBroadcast(&t->cv);
    });
    if (r.overflowed > 0)
        warning(std::to_string(r.overflowed) + " value" + (r.overflowed == 1 ? "" : "s") + " of parameter table " +
                    quoted(h.settings.name) + " left unchanged: adding would have made " +
                    (r.overflowed == 1 ? "it" : "them") + " infinite",
                kind == OpKind::Clock ? "The Adds of the iteration this Clock completed (BSP) were summed first."
                                      : "Each delta that would overflow float32 is dropped; the others were added.",
                "Scale the updates down (a lower learning rate), or check the workers for diverging gradients.");
    if (r.late > 0)
        warning("worker " + std::to_string(worker) + " wrote " + std::to_string(r.late) + " chunk" +
                    (r.late == 1 ? "" : "s") + " of parameter table " + quoted(h.settings.name) +
                    " for the first time after workers more than " + std::to_string(h.rule.staleness) +
                    " clocks ahead had read " + (r.late == 1 ? "it" : "them"),
                "Worker " + std::to_string(worker) + " is at clock " + std::to_string(r.my_clock) +
                    ". Under SparseSSP a Get waits only for the workers that wrote its chunks before, so those Gets "
                    "did not wait for this Add.",
                "Let each worker add (zeros will do) to every chunk it is going to update before the others run "
                "ahead, for instance at clock 0.");
    return r.my_clock;
}

void wipe_slot(PsTable* t) {
    t->in_use = false;
    t->generation = 0;
    t->dboid = InvalidOid;
    t->name[0] = '\0';
}

}  // namespace

namespace ps_table {

void require_shared_memory() {
    if (shared && shared->magic == kMagic) return;
    fail(ErrorKind::ObjectNotInPrerequisiteState, "parameter tables need hopper in shared_preload_libraries",
         "Parameter tables live in shared memory that is reserved when the server starts.",
         "Add hopper to shared_preload_libraries in postgresql.conf and restart the server.");
}

std::size_t Access::count() const {
    if (offsets) return n;
    std::size_t c = 0;
    for (std::size_t i = 0; i < nspans; ++i) c += std::size_t(spans[i].length);
    return c;
}

const Handle& open(const std::string& name) {
    require_shared_memory();
    auto& c = cache();
    auto it = c.find(name);
    if (it != c.end()) {
        // A hint read without the lock; operations check the generation again under it.
        PsTable* t = slot(it->second.slot);
        if (t->in_use && t->generation == it->second.generation) return it->second;
        c.erase(it);
    }
    Handle h;
    if (!lookup(name, &h)) no_such_table(name);
    if (c.size() > 256) c.clear();
    return c[name] = std::move(h);
}

void check_worker(const Handle& h, int64_t worker) {
    if (worker < 0 || worker >= h.settings.num_workers)
        fail(ErrorKind::InvalidParameter,
             "worker " + std::to_string(worker) + " does not exist in parameter table " + quoted(h.settings.name),
             "Its workers are 0 to " + std::to_string(h.settings.num_workers - 1) + ".");
}

void get(const Handle& h, int worker, const Access& a, float* out) {
    // SparseSSP folds the Clock that ends the previous iteration into the Get (FlexPS's SparseKVClientTable).
    if (h.rule.sparse()) run(h, worker, OpKind::FoldClock, nullptr, nullptr, nullptr);
    run(h, worker, OpKind::Get, &a, out, nullptr);
}

void add(const Handle& h, int worker, const Access& a, const float* deltas) {
    run(h, worker, OpKind::Add, &a, nullptr, deltas);
}

int64_t clock(const Handle& h, int worker) { return run(h, worker, OpKind::Clock, nullptr, nullptr, nullptr); }

void create(const ps::TableSettings& s, const ps::SnapshotView* from) {
    require_shared_memory();
    const auto& ranges = s.keys.ranges();
    const bool pending = s.consistency == ps::Consistency::BSP;
    const int64 sparse_chunks =
        s.consistency == ps::Consistency::SparseSSP ? ps::ChunkIndex(s.keys, s.chunk_size).count() : 0;
    const int32 words = ps::worker_words(s.num_workers);
    const ps::TableLayout layout = ps::table_layout(
        ps::TableShape{s.num_workers, ranges.size(), s.keys.size(), pending, sparse_chunks, s.range_map.size()});
    if (from && from->meta.sparse_chunks != sparse_chunks)
        fail(ErrorKind::Internal, "parameter table checkpoint: SparseSSP state does not match the table");
    const Oid owner = call([] { return GetUserId(); });
    const bool unlimited = setting_ps_role_share >= 100 || call([] { return superuser(); });
    const TimestampTz now = call([] { return GetCurrentTimestamp(); });
    std::vector<ps::Block> used;
    used.reserve(std::size_t(shared->max_tables));
    enum { Ok, Duplicate, NoSlot, NoMemory, RoleSlots, RoleMemory } outcome = Ok;
    uint64 used_bytes = 0, largest_free = 0;
    // What the role holds already, in all databases (roles are the cluster's), and its share: one
    // role filled every slot and no other could create a parameter table until it dropped them.
    int role_tables = 0;
    uint64 role_bytes = 0;
    const int role_max_tables = std::max(1, int(int64(shared->max_tables) * setting_ps_role_share / 100));
    const uint64 role_max_bytes = shared->arena_bytes / 100 * uint64(setting_ps_role_share);
    call([&] {
        LWLockAcquire(shared->directory_lock, LW_EXCLUSIVE);
        int free_slot = -1;
        for (int i = 0; i < shared->max_tables; ++i) {
            PsTable* t = slot(i);
            if (t->in_use) {
                if (t->dboid == MyDatabaseId && std::strcmp(t->name, s.name.c_str()) == 0) outcome = Duplicate;
                used.push_back(ps::Block{t->block_offset, t->block_bytes});
                used_bytes += t->block_bytes;
                if (t->owner == owner) {
                    ++role_tables;
                    role_bytes += t->block_bytes;
                }
            } else if (free_slot < 0) {
                free_slot = i;
            }
        }
        if (outcome == Ok && !unlimited && role_tables >= role_max_tables) outcome = RoleSlots;
        if (outcome == Ok && !unlimited && role_bytes + layout.bytes > role_max_bytes) outcome = RoleMemory;
        if (outcome == Ok && free_slot < 0) outcome = NoSlot;
        std::optional<uint64_t> at;
        if (outcome == Ok) {
            // Largest free block, for the message if this does not fit.
            std::sort(used.begin(), used.end(),
                      [](const ps::Block& x, const ps::Block& y) { return x.offset < y.offset; });
            uint64 cursor = 0;
            for (const ps::Block& b : used) {
                if (b.offset > cursor) largest_free = std::max<uint64>(largest_free, b.offset - cursor);
                cursor = std::max<uint64>(cursor, b.offset + b.size);
            }
            if (shared->arena_bytes > cursor)
                largest_free = std::max<uint64>(largest_free, shared->arena_bytes - cursor);
            at = ps::first_fit(std::move(used), layout.bytes, shared->arena_bytes);
            if (!at) outcome = NoMemory;
        }
        if (outcome == Ok) {
            PsTable* t = slot(free_slot);
            LWLockAcquire(t->lock, LW_EXCLUSIVE);
            t->dboid = MyDatabaseId;
            t->owner = owner;
            std::memset(t->name, 0, NAMEDATALEN);
            std::memcpy(t->name, s.name.data(), s.name.size());
            t->created_at = now;
            t->num_keys = s.keys.size();
            t->chunk_size = s.chunk_size;
            t->consistency = int32(s.consistency);
            t->staleness = s.staleness;
            t->num_workers = s.num_workers;
            t->num_ranges = int32(ranges.size());
            t->block_offset = *at;
            t->block_bytes = layout.bytes;
            t->workers_at = *at + layout.workers;
            t->ranges_at = *at + layout.ranges;
            t->values_at = *at + layout.values;
            t->pending_at = pending ? *at + layout.pending : 0;
            t->num_chunks = sparse_chunks;
            t->worker_words = words;
            t->writers_at = sparse_chunks ? *at + layout.writers : 0;
            t->read_marks_at = sparse_chunks ? *at + layout.read_marks : 0;
            t->part = s.part;
            t->num_parts = int32(s.range_map.size());
            t->map_at = s.range_map.empty() ? 0 : *at + layout.range_map;
            WorkerState* w = workers_of(t);
            for (int32 k = 0; k < s.num_workers; ++k)
                w[k] = WorkerState{from ? from->clocks[std::size_t(k)] : 0, 0, ps::kWorkerNotJoined,
                                   from ? from->in_iteration[std::size_t(k)] : 0, 0};
            if (sparse_chunks) {
                const std::size_t writer_bytes = std::size_t(sparse_chunks) * std::size_t(words) * 8;
                if (from) {
                    std::memcpy(static_cast<void*>(writers_of(t)), from->writers, writer_bytes);
                    std::memcpy(static_cast<void*>(read_marks_of(t)), from->read_marks, std::size_t(sparse_chunks) * 8);
                } else {
                    std::memset(static_cast<void*>(writers_of(t)), 0, writer_bytes);
                    std::memset(static_cast<void*>(read_marks_of(t)), 0, std::size_t(sparse_chunks) * 8);
                }
            }
            if (!s.range_map.empty())
                std::memcpy(map_of(t), s.range_map.data(), sizeof(ps::KeyRange) * s.range_map.size());
            t->min_clock = ps::min_clock(w, s.num_workers);
            std::memcpy(ranges_of(t), ranges.data(), sizeof(ps::KeyRange) * ranges.size());
            pg_atomic_uint32* v = values_of(t);
            if (from) {
                std::memcpy(static_cast<void*>(v), from->values, 4 * std::size_t(t->num_keys));
            } else {
                uint32 bits;
                std::memcpy(&bits, &s.init_value, 4);
                for (int64 k = 0; k < t->num_keys; ++k) pg_atomic_init_u32(&v[k], bits);
            }
            if (pending) {
                if (from && from->pending)
                    std::memcpy(static_cast<void*>(pending_of(t)), from->pending, 4 * std::size_t(t->num_keys));
                else std::memset(static_cast<void*>(pending_of(t)), 0, 4 * std::size_t(t->num_keys));
            }
            pg_atomic_write_u64(&t->get_calls, 0);
            pg_atomic_write_u64(&t->get_keys, 0);
            pg_atomic_write_u64(&t->add_calls, 0);
            pg_atomic_write_u64(&t->add_keys, 0);
            pg_atomic_write_u64(&t->clocks, 0);
            pg_atomic_write_u64(&t->waits, 0);
            pg_atomic_write_u64(&t->late_adds, 0);
            t->generation = shared->next_generation++;
            t->in_use = true;
            LWLockRelease(t->lock);
        }
        LWLockRelease(shared->directory_lock);
    });
    const std::string table = quoted(s.name);
    auto mb = [](uint64 bytes) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.1f MB", double(bytes) / (1024.0 * 1024.0));
        return std::string(buf);
    };
    switch (outcome) {
        case Ok: cache().erase(s.name); return;
        case Duplicate:
            fail(ErrorKind::DuplicateObject, "parameter table " + table + " already exists", "",
                 "Drop it first with hopper.ps_drop, or choose another name.");
        case NoSlot:
            fail(ErrorKind::Limit, "too many parameter tables",
                 "hopper.ps_max_tables is " + std::to_string(shared->max_tables) + " (for all databases together).",
                 "Drop a parameter table, or raise hopper.ps_max_tables (takes effect after a server restart).");
        case RoleSlots:
            fail(ErrorKind::Limit, "role " + quoted(role_name(owner)) + " holds too many parameter tables",
                 "It holds " + std::to_string(role_tables) + " of the " + std::to_string(shared->max_tables) +
                     " slots (in all databases); hopper.ps_role_share lets one role hold " +
                     std::to_string(setting_ps_role_share) + "%, " + std::to_string(role_max_tables) + " tables.",
                 "Drop one of its parameter tables, or have a superuser raise hopper.ps_role_share.");
        case RoleMemory:
            fail(ErrorKind::Limit, "role " + quoted(role_name(owner)) + " holds too much parameter-table memory",
                 "Parameter table " + table + " needs " + mb(layout.bytes) + " and the role holds " + mb(role_bytes) +
                     " (in all databases); hopper.ps_role_share lets one role hold " +
                     std::to_string(setting_ps_role_share) + "% of hopper.ps_memory_mb, " + mb(role_max_bytes) + ".",
                 "Drop one of its parameter tables, or have a superuser raise hopper.ps_role_share.");
        case NoMemory:
            fail(ErrorKind::Limit, "not enough shared memory for parameter table " + table,
                 "It needs " + mb(layout.bytes) + "; " + mb(shared->arena_bytes - used_bytes) + " of the " +
                     mb(shared->arena_bytes) + " in hopper.ps_memory_mb are free (largest free block " +
                     mb(largest_free) + ").",
                 "Drop parameter tables, or raise hopper.ps_memory_mb (takes effect after a server restart).");
    }
}

bool drop(const std::string& name, bool if_exists) {
    require_shared_memory();
    for (;;) {
        Handle h;
        if (!lookup(name, &h)) {
            if (if_exists) return false;
            no_such_table(name);
        }
        const bool allowed = call([&] { return has_privs_of_role(GetUserId(), h.owner); });
        if (!allowed) fail(ErrorKind::Privilege, "must be owner of parameter table " + quoted(name));
        PsTable* t = slot(h.slot);
        bool dropped = false;
        call([&] {
            LWLockAcquire(shared->directory_lock, LW_EXCLUSIVE);
            LWLockAcquire(t->lock, LW_EXCLUSIVE);
            if (t->in_use && t->generation == h.generation) {
                wipe_slot(t);
                dropped = true;
            }
            LWLockRelease(t->lock);
            LWLockRelease(shared->directory_lock);
            if (dropped) ConditionVariableBroadcast(&t->cv);
        });
        cache().erase(name);
        if (dropped) return true;
        // Dropped or replaced by someone else between look-up and lock: look again.
    }
}

ps::SnapshotBuffer snapshot(const Handle& h) {
    ps::SnapshotMeta meta;
    meta.name = h.settings.name;
    meta.ranges = h.settings.keys.ranges();
    meta.chunk_size = h.settings.chunk_size;
    meta.consistency = h.settings.consistency;
    meta.staleness = h.settings.staleness;
    meta.num_workers = h.settings.num_workers;
    meta.has_pending = h.rule.buffers_adds();
    meta.part = h.settings.part;
    meta.range_map = h.settings.range_map;
    meta.sparse_chunks = h.chunks.count();
    ps::SnapshotBuffer b = ps::start_snapshot(meta);
    PsTable* t = slot(h.slot);
    bool same = false;
    call([&] {
        LWLockAcquire(t->lock, LW_EXCLUSIVE);
        same = t->in_use && t->generation == h.generation;
        if (same) {
            const WorkerState* w = workers_of(t);
            for (int32 k = 0; k < t->num_workers; ++k)
                std::memcpy(&b.bytes[b.clocks_at + 8 * std::size_t(k)], &w[k].clock, 8);
            std::memcpy(&b.bytes[b.values_at], static_cast<const void*>(values_of(t)), 4 * std::size_t(t->num_keys));
            if (b.pending_at)
                std::memcpy(&b.bytes[b.pending_at], static_cast<const void*>(pending_of(t)),
                            4 * std::size_t(t->num_keys));
            if (b.in_iteration_at)
                for (int32 k = 0; k < t->num_workers; ++k)
                    b.bytes[b.in_iteration_at + std::size_t(k)] = char(w[k].in_iteration);
            if (b.writers_at) {
                std::memcpy(&b.bytes[b.writers_at], static_cast<const void*>(writers_of(t)),
                            std::size_t(t->num_chunks) * std::size_t(t->worker_words) * 8);
                std::memcpy(&b.bytes[b.read_marks_at], static_cast<const void*>(read_marks_of(t)),
                            std::size_t(t->num_chunks) * 8);
            }
        }
        LWLockRelease(t->lock);
    });
    if (!same) fail(ErrorKind::UndefinedObject, "parameter table " + quoted(h.settings.name) + " was dropped");
    ps::seal_snapshot(b);
    return b;
}

std::vector<TableInfo> list_tables() {
    require_shared_memory();
    std::vector<TableInfo> out;
    std::vector<std::pair<int, uint64_t>> slots;
    slots.reserve(std::size_t(shared->max_tables));
    call([&] {
        LWLockAcquire(shared->directory_lock, LW_SHARED);
        for (int i = 0; i < shared->max_tables; ++i)
            if (slot(i)->in_use && slot(i)->dboid == MyDatabaseId) slots.emplace_back(i, slot(i)->generation);
        LWLockRelease(shared->directory_lock);
    });
    for (auto [i, generation] : slots) {
        // Settings and ranges through the cache-independent look-up; counters and clocks below.
        PsTable* t = slot(i);
        char name[NAMEDATALEN];
        bool same = false;
        call([&] {
            LWLockAcquire(t->lock, LW_SHARED);
            same = t->in_use && t->generation == generation;
            if (same) std::memcpy(name, t->name, NAMEDATALEN);
            LWLockRelease(t->lock);
        });
        if (!same) continue;
        Handle h;
        if (!lookup(name, &h) || h.generation != generation) continue;
        TableInfo info;
        info.name = name;
        info.settings = h.settings;
        info.owner = h.owner;
        call([&] {
            LWLockAcquire(t->lock, LW_SHARED);
            same = t->in_use && t->generation == generation;
            if (same) {
                info.created_at = t->created_at;
                info.min_clock = t->min_clock;
                info.max_clock = 0;
                const WorkerState* w = workers_of(t);
                for (int32 k = 0; k < t->num_workers; ++k)
                    info.max_clock = std::max<int64_t>(info.max_clock, w[k].clock);
                info.memory_bytes = t->block_bytes;
                info.get_calls = pg_atomic_read_u64(&t->get_calls);
                info.get_keys = pg_atomic_read_u64(&t->get_keys);
                info.add_calls = pg_atomic_read_u64(&t->add_calls);
                info.add_keys = pg_atomic_read_u64(&t->add_keys);
                info.clocks = pg_atomic_read_u64(&t->clocks);
                info.waits = pg_atomic_read_u64(&t->waits);
                info.late_adds = pg_atomic_read_u64(&t->late_adds);
            }
            LWLockRelease(t->lock);
        });
        if (same) out.push_back(std::move(info));
    }
    std::sort(out.begin(), out.end(), [](const TableInfo& a, const TableInfo& b) { return a.name < b.name; });
    return out;
}

std::vector<WorkerInfo> list_workers() {
    std::vector<WorkerInfo> out;
    for (const TableInfo& info : list_tables()) {
        Handle h;
        if (!lookup(info.name, &h)) continue;
        PsTable* t = slot(h.slot);
        std::vector<WorkerState> w(std::size_t(h.settings.num_workers));
        bool same = false;
        call([&] {
            LWLockAcquire(t->lock, LW_SHARED);
            same = t->in_use && t->generation == h.generation;
            if (same) std::memcpy(w.data(), workers_of(t), sizeof(WorkerState) * w.size());
            LWLockRelease(t->lock);
        });
        if (!same) continue;
        for (std::size_t k = 0; k < w.size(); ++k)
            out.push_back(WorkerInfo{info.name, int32_t(k), w[k].clock, w[k].status, w[k].pid});
    }
    return out;
}

MemoryInfo memory() {
    require_shared_memory();
    MemoryInfo m;
    std::vector<ps::Block> used;
    used.reserve(std::size_t(shared->max_tables));
    call([&] {
        LWLockAcquire(shared->directory_lock, LW_SHARED);
        for (int i = 0; i < shared->max_tables; ++i)
            if (slot(i)->in_use) used.push_back(ps::Block{slot(i)->block_offset, slot(i)->block_bytes});
        LWLockRelease(shared->directory_lock);
    });
    m.arena_bytes = shared->arena_bytes;
    m.max_tables = shared->max_tables;
    m.tables = int(used.size());
    std::sort(used.begin(), used.end(), [](const ps::Block& x, const ps::Block& y) { return x.offset < y.offset; });
    uint64_t cursor = 0;
    for (const ps::Block& b : used) {
        m.used_bytes += b.size;
        if (b.offset > cursor) m.largest_free = std::max<uint64_t>(m.largest_free, b.offset - cursor);
        cursor = std::max<uint64_t>(cursor, b.offset + b.size);
    }
    if (m.arena_bytes > cursor) m.largest_free = std::max<uint64_t>(m.largest_free, m.arena_bytes - cursor);
    return m;
}

}  // namespace ps_table

void ps_init() {
    // PostgreSQL allows PGC_POSTMASTER settings only while preloading (it raises FATAL otherwise);
    // when hopper is loaded on demand the settings are shown read-only, and parameter tables are
    // unavailable anyway.
    const GucContext context = process_shared_preload_libraries_in_progress ? PGC_POSTMASTER : PGC_INTERNAL;
    DefineCustomIntVariable(
        "hopper.ps_memory_mb",
        "Shared memory for parameter tables (values, BSP pending buffers, worker states), in megabytes.",
        "Reserved at server start when hopper is in shared_preload_libraries.", &setting_ps_memory_mb, 64, 1,
        INT_MAX / 2, context, GUC_UNIT_MB, nullptr, nullptr, nullptr);
    DefineCustomIntVariable("hopper.ps_max_tables",
                            "Most parameter tables that can exist at the same time (in all databases together).",
                            "Each slot costs a few hundred bytes of shared memory and one lock.",
                            &setting_ps_max_tables, 32, 1, 4096, context, 0, nullptr, nullptr, nullptr);
    DefineCustomIntVariable(
        "hopper.ps_role_share",
        "Most of the parameter-table slots and memory, in percent, that one role other than a superuser may hold.",
        "Counted over all databases; 100 lets one role take the whole pool, and so keep every other role from "
        "creating parameter tables.",
        &setting_ps_role_share, 50, 1, 100, PGC_SUSET, 0, nullptr, nullptr, nullptr);
    if (!process_shared_preload_libraries_in_progress) return;
    prev_shmem_request_hook = shmem_request_hook;
    shmem_request_hook = ps_shmem_request;
    prev_shmem_startup_hook = shmem_startup_hook;
    shmem_startup_hook = ps_shmem_startup;
}

}  // namespace hopper::pg
