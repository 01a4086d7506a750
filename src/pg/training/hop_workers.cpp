// One iteration of model hopping trained by one group of processes (see hop_workers.h).
#include "pg/training/hop_workers.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "hopper/error.h"
#include "pg/common/guard.h"
#include "pg/common/settings.h"
#include "pg/common/spi.h"
#include "pg/runtime/progress.h"
#include "pg/runtime/scoped_settings.h"
#include "pg/runtime/state_store.h"
#include "pg/runtime/worker_group.h"
#include "pg/training/segment_visit.h"

extern "C" {
#include "miscadmin.h"
#include "access/parallel.h"  // and postmaster/bgworker.h
#include "access/xact.h"
#include "storage/condition_variable.h"
#include "storage/shm_toc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/wait_event.h"

// The entry point of the group's parallel workers (found by name: CreateParallelContext).
PGDLLEXPORT void hopper_hop_worker_main(dsm_segment* segment, shm_toc* toc);
}

namespace hopper::pg {
namespace {

constexpr uint64 kGroupKey = UINT64CONST(0x484F505045520001);
constexpr int kMaxWorkers = 64;  // PostgreSQL's packed tables have at most 64 segments by default

// What the group shares, followed by the packed table's quoted name (NUL-terminated), four int32
// arrays -- the segments' dist_keys, the models' mst_keys, the model of each (hop, segment) pair in
// hop-major order (-1: the segment idles in that hop) and which of its model's visits in the
// iteration the pair is (0, 1, ...) -- and two arrays of counters: each pair's claim and each
// model's visits done.
struct GroupShared {
    int32 segments, hops, models, store;
    uint32 name_bytes;
    uint32 pairs_to_train;       // pairs that are not idle
    pg_atomic_uint32 finished;   // pairs trained
    pg_atomic_uint32 open_from;  // no pair before this one is left to take (a hint: it only grows)
    ConditionVariable done_cv;   // broadcast whenever a pair is trained
    bool exited[kMaxWorkers];    // worker i ended its part without an error
};

struct Group {
    GroupShared* shared = nullptr;
    const char* packed = nullptr;
    const int32* dist_keys = nullptr;
    const int32* mst_keys = nullptr;
    const int32* pairs = nullptr;
    const int32* visit = nullptr;
    pg_atomic_uint32* claimed = nullptr;
    pg_atomic_uint32* visits_done = nullptr;
};

Size group_bytes(int segments, int models, int hops, std::size_t name_bytes) {
    const std::size_t pairs = std::size_t(hops) * std::size_t(segments);
    return MAXALIGN(sizeof(GroupShared)) + MAXALIGN(name_bytes) +
           sizeof(int32) * (std::size_t(segments) + std::size_t(models) + 2 * pairs) +
           sizeof(pg_atomic_uint32) * (pairs + std::size_t(models));
}

Group view(GroupShared* g) {
    Group out;
    out.shared = g;
    char* p = reinterpret_cast<char*>(g) + MAXALIGN(sizeof(GroupShared));
    out.packed = p;
    const int32* a = reinterpret_cast<const int32*>(p + MAXALIGN(g->name_bytes));
    const std::size_t pairs = std::size_t(g->hops) * std::size_t(g->segments);
    out.dist_keys = a;
    out.mst_keys = a + g->segments;
    out.pairs = out.mst_keys + g->models;
    out.visit = out.pairs + pairs;
    out.claimed = reinterpret_cast<pg_atomic_uint32*>(const_cast<int32*>(out.visit + pairs));
    out.visits_done = out.claimed + pairs;
    return out;
}

// Waits until more than `seen` pairs are trained. The backend (`pcxt` set) also watches its
// workers: one that stopped without ending its part normally raised an error, which arrives with
// the interrupts checked here, or died without one.
void wait_trained(const Group& g, uint32 seen, ParallelContext* pcxt) {
    GroupShared* s = g.shared;
    bool lost = false;
    try {
        call([&] {
            ConditionVariablePrepareToSleep(&s->done_cv);
            while (pg_atomic_read_u32(&s->finished) <= seen && !lost) {
                if (!pcxt) {
                    ConditionVariableSleep(&s->done_cv, PG_WAIT_EXTENSION);
                    continue;
                }
                if (!ConditionVariableTimedSleep(&s->done_cv, 100, PG_WAIT_EXTENSION)) continue;
                lost = lost_worker(pcxt, s->exited);
            }
            ConditionVariableCancelSleep();
        });
    } catch (...) {
        ConditionVariableCancelSleep();
        throw;
    }
    if (lost)
        fail(ErrorKind::ObjectNotInPrerequisiteState,
             "a parallel worker of the training run exited before its hops were done", "",
             "More details may be available in the server log.");
}

// The statement that reads a segment's buffers in buffer_id order, as the training statement's
// ORDER BY gives them to the aggregate (its rows hold the arrays' TOAST pointers, detoasted one by one).
Prepared prepare_buffers(Spi& spi, const Group& g) {
    return spi.prepare(std::string("SELECT d.independent_var, d.dependent_var FROM ") + g.packed +
                           " AS d WHERE d.dist_key OPERATOR(pg_catalog.=) $1 ORDER BY d.buffer_id",
                       {INT4OID});
}

// Trains model `model` on segment `segment`, each buffer in a memory context reset after it, as the
// aggregate's per-row context is.
void train_pair(Spi& spi, const Prepared& buffers, const Group& g, int segment, int model, MemoryContext per_buffer) {
    const int32 dist_key = g.dist_keys[segment];
    const uint64_t n = spi.execute(buffers, {SqlParam::int4(dist_key)});
    // The training statement would have brought back one model fewer.
    if (n == 0) check_trained_models(uint64_t(g.shared->models - 1), g.shared->models);
    SegmentVisit visit(current_state_reference(g.shared->store, model), g.mst_keys[model], dist_key);
    for (uint64_t r = 0; r < n; ++r) {
        bool x_null = false, y_null = false;
        const Datum x = spi.datum(r, 0, &x_null), y = spi.datum(r, 1, &y_null);
        if (x_null || y_null) fail(ErrorKind::NullValue, "packed buffers must not be NULL", visit.where());
        MemoryContext caller = MemoryContextSwitchTo(per_buffer);
        try {
            visit.add(x, y);
        } catch (...) {
            MemoryContextSwitchTo(caller);
            throw;
        }
        MemoryContextSwitchTo(caller);
        MemoryContextReset(per_buffer);
    }
    visit.finish();
}

// Trains pairs until none is left: the backend (`leader`, which reports the hop in progress) and
// each worker alike. A pair may start as soon as its model's previous visit is done -- a model's
// visits keep the schedule's order, which is all its training depends on -- not only once the
// whole hop before it is: a process that finished a quick model goes on with a model that is
// ready (one that waited, say) instead of idling until the slowest pair of the hop is done.
void run_pairs(const Group& g, Spi& spi, bool leader, ParallelContext* pcxt) {
    GroupShared* s = g.shared;
    const int pairs = s->hops * s->segments;
    MemoryContext per_buffer = call(
        [] { return AllocSetContextCreate(CurrentMemoryContext, "hopper segment buffer", ALLOCSET_DEFAULT_SIZES); });
    const Prepared buffers = prepare_buffers(spi, g);
    int reported = -1;
    for (;;) {
        check_for_interrupts();
        const uint32 seen = pg_atomic_read_u32(&s->finished);
        if (seen >= s->pairs_to_train) break;
        // The first pair left to take is ready whenever nothing is being trained (its model's
        // previous visit comes before it), so taking the first ready pair among those of its hop
        // and the next always makes progress, in a scan of at most 2 S pairs however long the
        // schedule is.
        uint32 from = pg_atomic_read_u32(&s->open_from);
        while (int(from) < pairs && (g.pairs[from] < 0 || pg_atomic_read_u32(&g.claimed[from]) != 0)) ++from;
        for (uint32 hint = pg_atomic_read_u32(&s->open_from);
             hint < from && !pg_atomic_compare_exchange_u32(&s->open_from, &hint, from);)
            ;
        if (int(from) >= pairs) break;  // every pair is taken
        const int window = std::min(pairs, (int(from) / s->segments + 2) * s->segments);
        int picked = -1;
        for (int t = int(from); t < window && picked < 0; ++t) {
            const int model = g.pairs[t];
            if (model < 0 || pg_atomic_read_u32(&g.claimed[t]) != 0 ||
                pg_atomic_read_u32(&g.visits_done[model]) != uint32(g.visit[t]))
                continue;
            uint32 unclaimed = 0;
            if (pg_atomic_compare_exchange_u32(&g.claimed[t], &unclaimed, 1)) picked = t;
        }
        if (picked < 0) {
            // The pairs in reach wait for their models: wait for a pair to be trained.
            wait_trained(g, seen, pcxt);
            continue;
        }
        const int hop = picked / s->segments, model = g.pairs[picked];
        if (leader && hop > reported) {
            progress_hop(hop + 1, s->hops, s->models);
            reported = hop;
        }
        train_pair(spi, buffers, g, picked % s->segments, model, per_buffer);
        pg_atomic_fetch_add_u32(&g.visits_done[model], 1);
        pg_atomic_fetch_add_u32(&s->finished, 1);
        call([&] { ConditionVariableBroadcast(&s->done_cv); });
    }
    call([&] { MemoryContextDelete(per_buffer); });
}

}  // namespace

std::optional<IterationOutcome> train_ring_locally(const LocalSegments& local, const HopSchedule& sched, int iteration,
                                                   const std::vector<int32_t>& mst_keys,
                                                   std::vector<std::string>& states) {
    const int S = int(local.dist_keys.size()), K = sched.hops_per_iteration(), M = int(mst_keys.size());
    // The states into their slots; a store without room for one leaves the iteration to the statements.
    for (int m = 0; m < M; ++m)
        if (!is_state_reference(local.store->put(m, states[std::size_t(m)]))) return std::nullopt;
    IterationOutcome out;
    const auto started = Clock::now();

    // As many processes as the training statement would use (set_parallel_workers): the backend
    // trains too.
    const int wanted = std::min(M, S);
    const int processes = setting_parallel_segments > 0 ? std::min(wanted, setting_parallel_segments) : wanted;
    const int workers = IsInParallelMode() ? 0 : std::clamp(processes - 1, 0, kMaxWorkers);
    if (workers > 0) set_parallel_workers(wanted);  // max_parallel_workers: room for them

    const std::string name = local.packed.quoted();
    const Size bytes = group_bytes(S, M, K, name.size() + 1);
    ParallelContext* pcxt = nullptr;
    std::vector<uint64_t> private_group;  // the backend alone: no shared memory needed
    GroupShared* shared = nullptr;
    // The snapshot the packed table is read in, by the backend's read-only statements and the workers.
    call([] { PushActiveSnapshot(GetTransactionSnapshot()); });
    if (workers > 0) {
        call([&] {
            EnterParallelMode();
            pcxt = CreateParallelContext("hopper", "hopper_hop_worker_main", workers);
            shm_toc_estimate_chunk(&pcxt->estimator, bytes);
            shm_toc_estimate_keys(&pcxt->estimator, 1);
            InitializeParallelDSM(pcxt);
            shared = static_cast<GroupShared*>(shm_toc_allocate(pcxt->toc, bytes));
        });
    } else {
        private_group.assign(bytes / sizeof(uint64_t) + 1, 0);
        shared = reinterpret_cast<GroupShared*>(private_group.data());
    }
    std::memset(static_cast<void*>(shared), 0, bytes);
    shared->segments = S;
    shared->hops = K;
    shared->models = M;
    shared->store = local.store->index();
    shared->name_bytes = uint32(name.size() + 1);
    pg_atomic_init_u32(&shared->finished, 0);
    pg_atomic_init_u32(&shared->open_from, 0);
    call([&] { ConditionVariableInit(&shared->done_cv); });
    Group g = view(shared);
    std::memcpy(const_cast<char*>(g.packed), name.c_str(), name.size() + 1);
    int32* arrays = const_cast<int32*>(g.dist_keys);
    for (int s = 0; s < S; ++s) arrays[s] = local.dist_keys[std::size_t(s)];
    for (int m = 0; m < M; ++m) arrays[S + m] = mst_keys[std::size_t(m)];
    int32* pairs = arrays + S + M;
    int32* visit = pairs + K * S;
    for (int i = 0; i < K * S; ++i) {
        pairs[i] = -1;
        visit[i] = -1;
        pg_atomic_init_u32(&g.claimed[i], 0);
    }
    std::vector<int32> visits(std::size_t(M), 0);
    for (int hop = 0; hop < K; ++hop)
        for (int m = 0; m < M; ++m) {
            const int seg = sched.segment(m, iteration, hop);
            if (seg < 0) continue;
            pairs[hop * S + seg] = m;
            visit[hop * S + seg] = visits[std::size_t(m)]++;
            ++shared->pairs_to_train;
        }
    for (int m = 0; m < M; ++m) pg_atomic_init_u32(&g.visits_done[m], 0);
    if (pcxt)
        call([&] {
            shm_toc_insert(pcxt->toc, kGroupKey, shared);
            LaunchParallelWorkers(pcxt);
        });

    Spi& spi = *local.spi;
    spi.set_read_only(true);  // in parallel mode the backend may start no command
    try {
        run_pairs(g, spi, true, pcxt);
        for (uint32 seen; (seen = pg_atomic_read_u32(&shared->finished)) < shared->pairs_to_train;)
            wait_trained(g, seen, pcxt);
    } catch (...) {
        spi.set_read_only(false);
        // The workers stop before the frames that own what they use unwind: the run's state store
        // frees its slots in its destructor, long before the transaction's abort would stop them, and
        // a worker still training used the freed shared memory (one died of SIGSEGV when run_progress.sh
        // cancelled a fit_automl in CI).
        stop_workers(pcxt);
        throw;
    }
    spi.set_read_only(false);
    call([&] {
        if (pcxt) {
            WaitForParallelWorkersToFinish(pcxt);
            DestroyParallelContext(pcxt);
            ExitParallelMode();
        }
        PopActiveSnapshot();
    });
    for (int m = 0; m < M; ++m)
        states[std::size_t(m)] = local.store->get(current_state_reference(local.store->index(), m));
    out.train_seconds = seconds_since(started);
    return out;
}

}  // namespace hopper::pg

void hopper_hop_worker_main(dsm_segment*, shm_toc* toc) {
    hopper::pg::run_worker_part(toc, hopper::pg::kGroupKey, [](void* shared) {
        auto* group = static_cast<hopper::pg::GroupShared*>(shared);
        hopper::pg::Spi spi;
        spi.set_read_only(true);
        hopper::pg::run_pairs(hopper::pg::view(group), spi, false, nullptr);
        return group->exited;
    });
}
