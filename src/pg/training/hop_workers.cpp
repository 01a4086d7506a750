// One iteration of model hopping trained by one group of processes (see hop_workers.h).
#include "pg/training/hop_workers.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "hopper/error.h"
#include "hopper/metrics.h"
#include "hopper/state_format.h"
#include "pg/common/guard.h"
#include "pg/common/settings.h"
#include "pg/common/spi.h"
#include "pg/runtime/progress.h"
#include "pg/runtime/scoped_settings.h"
#include "pg/runtime/state_store.h"
#include "pg/runtime/worker_group.h"
#include "pg/training/buffer_eval.h"
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
constexpr int kMaxTables = 2;    // evaluation: the training table (exact training metrics), the validation table

// Where the group's arrays start, in bytes from the start of GroupShared:
//   names[t]      what a table's reader selects, NUL-terminated ("d.<x>, d.<y> FROM <table>":
//                 reads_from): the packed table, then the evaluation tables
//   dist_keys     int32[S]: the packed table's segments
//   mst_keys      int32[M]
//   pairs, visit  int32[K S]: the model of each (hop, segment) pair in hop-major order (-1: the
//                 segment idles in that hop), and which of its model's visits in the iteration it is
//   visits        int32[M]: each model's visits in the iteration (its last done: it may be evaluated)
//   eval_keys     int32[]: the evaluation tables' segments, table after table
//   task_model, task_table, task_key   int32[E]: each evaluation task's model, table (1, 2: names'
//                 index) and segment (index into eval_keys), model by model, table by table
//   claimed       pg_atomic_uint32[K S]: each pair's claim
//   visits_done   pg_atomic_uint32[M]
//   task_claimed  pg_atomic_uint32[E]
//   results       double[E x (3 + max_metrics)]: each task's buffers read, rows, loss sum, metric sums
struct GroupOffsets {
    Size names[kMaxTables + 1];
    Size dist_keys, mst_keys, pairs, visit, visits, eval_keys, task_model, task_table, task_key;
    Size claimed, visits_done, task_claimed, results;
    Size total;
};

// What the group shares, followed by its arrays (GroupOffsets).
struct GroupShared {
    int32 segments, hops, models, store;
    int32 tables, max_metrics;  // evaluation tables; the most metrics of a model evaluated
    uint32 pairs_to_train;      // pairs that are not idle
    uint32 tasks;               // evaluation tasks
    GroupOffsets at;
    pg_atomic_uint32 finished;       // pairs trained and tasks evaluated
    pg_atomic_uint32 pairs_trained;  // pairs trained
    pg_atomic_uint32 open_from;      // no pair before this one is left to take (a hint: it only grows)
    pg_atomic_uint64 trained_at;     // when the last pair was trained (steady clock, ns)
    ConditionVariable done_cv;       // broadcast whenever a pair is trained or a task evaluated
    bool exited[kMaxWorkers];        // worker i ended its part without an error
};

struct Group {
    GroupShared* shared = nullptr;
    const char* names[kMaxTables + 1] = {};
    const int32* dist_keys = nullptr;
    const int32* mst_keys = nullptr;
    const int32* pairs = nullptr;
    const int32* visit = nullptr;
    const int32* visits = nullptr;
    const int32* eval_keys = nullptr;
    const int32* task_model = nullptr;
    const int32* task_table = nullptr;
    const int32* task_key = nullptr;
    pg_atomic_uint32* claimed = nullptr;
    pg_atomic_uint32* visits_done = nullptr;
    pg_atomic_uint32* task_claimed = nullptr;
    double* results = nullptr;
};

constexpr int kResultHead = 3;  // buffers read, rows, loss sum; then the metric sums

// The layout of a group of `segments` x `hops` pairs of `models` models, with `tasks` evaluation
// tasks over tables of `eval_keys` segments in all.
GroupOffsets lay_out(const std::vector<std::string>& names, int segments, int models, int hops, int eval_keys,
                     int tasks, int max_metrics) {
    GroupOffsets o{};
    Size at = MAXALIGN(sizeof(GroupShared));
    auto take = [&](Size& field, std::size_t count, std::size_t size) {
        field = at;
        at += MAXALIGN(count * size);
    };
    for (std::size_t t = 0; t < names.size(); ++t) take(o.names[t], names[t].size() + 1, 1);
    const std::size_t pairs = std::size_t(hops) * std::size_t(segments);
    take(o.dist_keys, segments, sizeof(int32));
    take(o.mst_keys, models, sizeof(int32));
    take(o.pairs, pairs, sizeof(int32));
    take(o.visit, pairs, sizeof(int32));
    take(o.visits, models, sizeof(int32));
    take(o.eval_keys, eval_keys, sizeof(int32));
    take(o.task_model, tasks, sizeof(int32));
    take(o.task_table, tasks, sizeof(int32));
    take(o.task_key, tasks, sizeof(int32));
    take(o.claimed, pairs, sizeof(pg_atomic_uint32));
    take(o.visits_done, models, sizeof(pg_atomic_uint32));
    take(o.task_claimed, tasks, sizeof(pg_atomic_uint32));
    take(o.results, std::size_t(tasks) * std::size_t(kResultHead + max_metrics), sizeof(double));
    o.total = at;
    return o;
}

Group view(GroupShared* g) {
    Group out;
    out.shared = g;
    char* base = reinterpret_cast<char*>(g);
    const GroupOffsets& o = g->at;
    for (int t = 0; t <= g->tables; ++t) out.names[t] = base + o.names[t];
    out.dist_keys = reinterpret_cast<const int32*>(base + o.dist_keys);
    out.mst_keys = reinterpret_cast<const int32*>(base + o.mst_keys);
    out.pairs = reinterpret_cast<const int32*>(base + o.pairs);
    out.visit = reinterpret_cast<const int32*>(base + o.visit);
    out.visits = reinterpret_cast<const int32*>(base + o.visits);
    out.eval_keys = reinterpret_cast<const int32*>(base + o.eval_keys);
    out.task_model = reinterpret_cast<const int32*>(base + o.task_model);
    out.task_table = reinterpret_cast<const int32*>(base + o.task_table);
    out.task_key = reinterpret_cast<const int32*>(base + o.task_key);
    out.claimed = reinterpret_cast<pg_atomic_uint32*>(base + o.claimed);
    out.visits_done = reinterpret_cast<pg_atomic_uint32*>(base + o.visits_done);
    out.task_claimed = reinterpret_cast<pg_atomic_uint32*>(base + o.task_claimed);
    out.results = reinterpret_cast<double*>(base + o.results);
    return out;
}

int64_t steady_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

// Waits until more than `seen` pairs and tasks are done. The backend (`pcxt` set) also watches its
// workers: one that stopped without ending its part normally raised an error, which arrives with
// the interrupts checked here, or died without one.
void wait_done(const Group& g, uint32 seen, ParallelContext* pcxt) {
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

// What a reader of packed table `t` selects: its arrays (packed_array_columns) from the table.
std::string reads_from(const TableName& t) {
    const PackedArrays arrays = packed_array_columns(t);
    return "d." + arrays.x + ", d." + arrays.y + " FROM " + t.quoted();
}

// The statement that reads a segment's buffers (`source`: reads_from) in buffer_id order, as the
// training statement's ORDER BY gives them to the aggregate (its rows hold the arrays' TOAST
// pointers, detoasted one by one).
Prepared prepare_buffers(Spi& spi, const char* source) {
    return spi.prepare(std::string("SELECT ") + source +
                           " AS d WHERE d.dist_key OPERATOR(pg_catalog.=) $1 ORDER BY d.buffer_id",
                       {INT4OID});
}

// Hands the `n` buffers the last statement of `spi` read to `add` (x, y), each in a memory context
// reset after it, as an aggregate's per-row context is. `where`: the detail of the error for a NULL.
template <typename Add>
void add_buffers(Spi& spi, uint64_t n, MemoryContext per_buffer, const std::string& where, Add&& add) {
    for (uint64_t r = 0; r < n; ++r) {
        bool x_null = false, y_null = false;
        const Datum x = spi.datum(r, 0, &x_null), y = spi.datum(r, 1, &y_null);
        if (x_null || y_null) fail(ErrorKind::NullValue, "packed buffers must not be NULL", where);
        MemoryContext caller = MemoryContextSwitchTo(per_buffer);
        try {
            add(x, y);
        } catch (...) {
            MemoryContextSwitchTo(caller);
            throw;
        }
        MemoryContextSwitchTo(caller);
        MemoryContextReset(per_buffer);
    }
}

// Trains model `model` on segment `segment`.
void train_pair(Spi& spi, const Prepared& buffers, const Group& g, int segment, int model, MemoryContext per_buffer) {
    const int32 dist_key = g.dist_keys[segment];
    const uint64_t n = spi.execute(buffers, {SqlParam::int4(dist_key)});
    // The training statement would have brought back one model fewer.
    if (n == 0) check_trained_models(uint64_t(g.shared->models - 1), g.shared->models);
    SegmentVisit visit(current_state_reference(g.shared->store, model), g.mst_keys[model], dist_key);
    add_buffers(spi, n, per_buffer, visit.where(), [&](Datum x, Datum y) { visit.add(x, y); });
    visit.finish();
}

// Evaluates task `task`'s model, done with the iteration, on its segment of its table, and keeps the
// segment's sums in the task's results.
void evaluate_task(Spi& spi, const Prepared& buffers, const Group& g, int task, MemoryContext per_buffer) {
    GroupShared* s = g.shared;
    const ReferencedState state = resolve_state_reference(current_state_reference(s->store, g.task_model[task]));
    std::vector<EvaluatedModel> model;
    model.push_back(load_for_evaluation(state.bytes));
    std::vector<EvalTotals> totals{empty_totals(model[0])};
    if (totals[0].metric_sums.size() > std::size_t(s->max_metrics))
        fail(ErrorKind::Internal, "a model has more metrics than its evaluation has room for");
    MatrixF scratch;
    const uint64_t n = spi.execute(buffers, {SqlParam::int4(g.eval_keys[g.task_key[task]])});
    add_buffers(spi, n, per_buffer, "", [&](Datum x, Datum y) { evaluate_buffer(x, y, model, totals, scratch); });
    double* r = g.results + std::size_t(task) * std::size_t(kResultHead + s->max_metrics);
    r[0] = double(n);
    r[1] = totals[0].count;
    r[2] = totals[0].loss_sum;
    std::copy(totals[0].metric_sums.begin(), totals[0].metric_sums.end(), r + kResultHead);
}

// Claims the first evaluation task whose model has done its visits of the iteration: its index, or
// -1 when none is ready; `left` tells whether any task is still unclaimed.
int claim_task(const Group& g, bool& left) {
    left = false;
    for (uint32 e = 0; e < g.shared->tasks; ++e) {
        if (pg_atomic_read_u32(&g.task_claimed[e]) != 0) continue;
        left = true;
        const int model = g.task_model[e];
        if (pg_atomic_read_u32(&g.visits_done[model]) != uint32(g.visits[model])) continue;
        uint32 unclaimed = 0;
        if (pg_atomic_compare_exchange_u32(&g.task_claimed[e], &unclaimed, 1)) return int(e);
    }
    return -1;
}

// Claims a pair that is ready to train: its index, or -1; `left` tells whether any pair is still
// unclaimed. A pair may start as soon as its model's previous visit is done -- a model's visits
// keep the schedule's order, which is all its training depends on -- not only once the whole hop
// before it is: a process that finished a quick model goes on with a model that is ready (one that
// waited, say) instead of idling until the slowest pair of the hop is done.
int claim_pair(const Group& g, bool& left) {
    GroupShared* s = g.shared;
    const int pairs = s->hops * s->segments;
    // The first pair left to take is ready whenever nothing is being trained (its model's previous
    // visit comes before it), so taking the first ready pair among those of its hop and the next
    // always makes progress, in a scan of at most 2 S pairs however long the schedule is.
    uint32 from = pg_atomic_read_u32(&s->open_from);
    while (int(from) < pairs && (g.pairs[from] < 0 || pg_atomic_read_u32(&g.claimed[from]) != 0)) ++from;
    for (uint32 hint = pg_atomic_read_u32(&s->open_from);
         hint < from && !pg_atomic_compare_exchange_u32(&s->open_from, &hint, from);)
        ;
    left = int(from) < pairs;
    const int window = std::min(pairs, (int(from) / s->segments + 2) * s->segments);
    for (int t = int(from); t < window; ++t) {
        const int model = g.pairs[t];
        if (model < 0 || pg_atomic_read_u32(&g.claimed[t]) != 0 ||
            pg_atomic_read_u32(&g.visits_done[model]) != uint32(g.visit[t]))
            continue;
        uint32 unclaimed = 0;
        if (pg_atomic_compare_exchange_u32(&g.claimed[t], &unclaimed, 1)) return t;
    }
    return -1;
}

// Trains pairs and evaluates tasks until none is left to take: the backend (`leader`, which
// reports the hop in progress) and each worker alike. A pair ready to train comes first (the
// models' training is the iteration's critical path); a process with none evaluates a model that is
// done while the others train. Returns the CPU seconds this process spent evaluating (the timing
// line tells them from training's: bench/ compares training with the core alone).
double run_part(const Group& g, Spi& spi, bool leader, ParallelContext* pcxt) {
    double eval_cpu = 0;
    GroupShared* s = g.shared;
    const uint32 total = s->pairs_to_train + s->tasks;
    MemoryContext per_buffer = call(
        [] { return AllocSetContextCreate(CurrentMemoryContext, "hopper segment buffer", ALLOCSET_DEFAULT_SIZES); });
    // The packed table's reader, then each evaluation table's (prepared when first needed).
    std::vector<Prepared> readers(std::size_t(kMaxTables + 1));
    auto reader = [&](int table) -> const Prepared& {
        Prepared& p = readers[std::size_t(table)];
        if (!p) p = prepare_buffers(spi, g.names[table]);
        return p;
    };
    int reported = -1;
    for (;;) {
        check_for_interrupts();
        const uint32 seen = pg_atomic_read_u32(&s->finished);
        if (seen >= total) break;
        bool pairs_left = false, tasks_left = false;
        if (const int picked = claim_pair(g, pairs_left); picked >= 0) {
            const int hop = picked / s->segments, model = g.pairs[picked];
            if (leader && hop > reported) {
                progress_hop(hop + 1, s->hops, s->models);
                reported = hop;
            }
            train_pair(spi, reader(0), g, picked % s->segments, model, per_buffer);
            pg_atomic_fetch_add_u32(&g.visits_done[model], 1);
            if (pg_atomic_add_fetch_u32(&s->pairs_trained, 1) == s->pairs_to_train)
                pg_atomic_write_u64(&s->trained_at, uint64(steady_ns()));
        } else if (const int task = claim_task(g, tasks_left); task >= 0) {
            const double before = process_cpu_seconds();
            evaluate_task(spi, reader(g.task_table[task]), g, task, per_buffer);
            eval_cpu += process_cpu_seconds() - before;
        } else if (!pairs_left && !tasks_left) {
            break;  // everything is taken
        } else {
            // What is left waits for models still training: wait for a pair to be trained.
            wait_done(g, seen, pcxt);
            continue;
        }
        pg_atomic_fetch_add_u32(&s->finished, 1);
        call([&] { ConditionVariableBroadcast(&s->done_cv); });
    }
    call([&] { MemoryContextDelete(per_buffer); });
    return eval_cpu;
}

// The evaluations of the models due on each table the group evaluated (`evaluated`: their indices
// in evaluation.tables), into evaluation.results: each model's sums, segment by segment in dist_key
// order, as evaluate_by_segment adds up the statement's (a segment without buffers gives it no row).
void collect_evaluations(const Group& g, const std::vector<std::size_t>& evaluated,
                         const std::vector<ModelConfig>& configs, RingEvaluation& evaluation) {
    evaluation.results.assign(evaluation.tables.size(), {});
    const std::size_t stride = std::size_t(kResultHead + g.shared->max_metrics);
    std::size_t task = 0;  // the tasks' order: model by model, table by table, segment by segment
    for (std::size_t k : evaluation.due)
        for (std::size_t t : evaluated) {
            const ModelConfig& config = configs[k];
            const std::size_t metrics = config.compile.metrics.size();
            EvalTotals total;
            total.metric_sums.assign(metrics, 0.0);
            for (std::size_t e = 0; e < evaluation.tables[t].dist_keys.size(); ++e, ++task) {
                const double* r = g.results + task * stride;
                if (r[0] == 0) continue;
                EvalTotals segment;
                segment.count = r[1];
                segment.loss_sum = r[2];
                segment.metric_sums.assign(r + kResultHead, r + kResultHead + metrics);
                total.merge(segment);
            }
            evaluation.results[t].push_back(running_evaluation(total, config));
        }
}

}  // namespace

std::optional<IterationOutcome> train_ring_locally(const LocalSegments& local, const HopSchedule& sched, int iteration,
                                                   const std::vector<int32_t>& mst_keys,
                                                   std::vector<std::string>& states, RingEvaluation& evaluation) {
    const int S = int(local.dist_keys.size()), K = sched.hops_per_iteration(), M = int(mst_keys.size());
    // The states into their slots; a store without room for one leaves the iteration to the statements.
    for (int m = 0; m < M; ++m)
        if (!is_state_reference(local.store->put(m, states[std::size_t(m)]))) return std::nullopt;
    IterationOutcome out;
    const auto started = Clock::now();
    const int64_t start_ns = steady_ns();

    // As many processes as the training statement would use (set_parallel_workers): the backend
    // trains too.
    const int wanted = std::min(M, S);
    const int processes = setting_parallel_segments > 0 ? std::min(wanted, setting_parallel_segments) : wanted;
    const int workers = IsInParallelMode() || local.backend_only ? 0 : std::clamp(processes - 1, 0, kMaxWorkers);
    if (workers > 0) set_parallel_workers(wanted);  // max_parallel_workers: room for them

    // The tables the group evaluates the models due on (by their index in evaluation.tables), and
    // each model's number of metrics.
    Spi& spi = *local.spi;
    std::vector<std::string> names = {reads_from(local.packed)};
    std::vector<std::size_t> evaluated;
    int eval_keys = 0, max_metrics = 0;
    if (!evaluation.due.empty())
        for (std::size_t t = 0; t < evaluation.tables.size() && int(evaluated.size()) < kMaxTables; ++t) {
            const EvaluationTable& table = evaluation.tables[t];
            if (workers > 0 && is_temporary_table(spi, table.table)) continue;
            evaluated.push_back(t);
            names.push_back(reads_from(table.table));
            eval_keys += int(table.dist_keys.size());
        }
    std::vector<ModelConfig> configs(static_cast<std::size_t>(M));
    if (!evaluated.empty())
        for (std::size_t k : evaluation.due) {
            configs[k] = inspect_state(states[k]).config;
            max_metrics = std::max(max_metrics, int(configs[k].compile.metrics.size()));
        }
    const int tasks = int(evaluation.due.size()) * eval_keys;
    const GroupOffsets at = lay_out(names, S, M, K, eval_keys, tasks, max_metrics);

    ParallelContext* pcxt = nullptr;
    std::vector<uint64_t> private_group;  // the backend alone: no shared memory needed
    GroupShared* shared = nullptr;
    // The snapshot the packed table is read in, by the backend's read-only statements and the workers.
    call([] { PushActiveSnapshot(GetTransactionSnapshot()); });
    if (workers > 0) {
        call([&] {
            EnterParallelMode();
            pcxt = CreateParallelContext("hopper", "hopper_hop_worker_main", workers);
            shm_toc_estimate_chunk(&pcxt->estimator, at.total);
            shm_toc_estimate_keys(&pcxt->estimator, 1);
            InitializeParallelDSM(pcxt);
            shared = static_cast<GroupShared*>(shm_toc_allocate(pcxt->toc, at.total));
        });
    } else {
        private_group.assign(at.total / sizeof(uint64_t) + 1, 0);
        shared = reinterpret_cast<GroupShared*>(private_group.data());
    }
    std::memset(static_cast<void*>(shared), 0, at.total);
    shared->segments = S;
    shared->hops = K;
    shared->models = M;
    shared->store = local.store->index();
    shared->tables = int32(evaluated.size());
    shared->max_metrics = max_metrics;
    shared->tasks = uint32(tasks);
    shared->at = at;
    pg_atomic_init_u32(&shared->finished, 0);
    pg_atomic_init_u32(&shared->pairs_trained, 0);
    pg_atomic_init_u32(&shared->open_from, 0);
    pg_atomic_init_u64(&shared->trained_at, 0);
    call([&] { ConditionVariableInit(&shared->done_cv); });
    Group g = view(shared);
    for (std::size_t t = 0; t < names.size(); ++t)
        std::memcpy(const_cast<char*>(g.names[t]), names[t].c_str(), names[t].size() + 1);
    auto writable = [](const int32* p) { return const_cast<int32*>(p); };
    for (int s = 0; s < S; ++s) writable(g.dist_keys)[s] = local.dist_keys[std::size_t(s)];
    for (int m = 0; m < M; ++m) writable(g.mst_keys)[m] = mst_keys[std::size_t(m)];
    for (int i = 0; i < K * S; ++i) {
        writable(g.pairs)[i] = -1;
        writable(g.visit)[i] = -1;
        pg_atomic_init_u32(&g.claimed[i], 0);
    }
    for (int hop = 0; hop < K; ++hop)
        for (int m = 0; m < M; ++m) {
            const int seg = sched.segment(m, iteration, hop);
            if (seg < 0) continue;
            writable(g.pairs)[hop * S + seg] = m;
            writable(g.visit)[hop * S + seg] = g.visits[m];
            writable(g.visits)[m] += 1;
            ++shared->pairs_to_train;
        }
    for (int m = 0; m < M; ++m) pg_atomic_init_u32(&g.visits_done[m], 0);
    // The tasks, model by model: a model done early is evaluated on all its segments first.
    int32 first_key = 0;
    std::vector<int32> table_first;
    for (std::size_t t = 0; t < evaluated.size(); ++t) {
        table_first.push_back(first_key);
        for (int32_t key : evaluation.tables[evaluated[t]].dist_keys) writable(g.eval_keys)[first_key++] = key;
    }
    int task = 0;
    for (std::size_t k : evaluation.due)
        for (std::size_t t = 0; t < evaluated.size(); ++t)
            for (std::size_t e = 0; e < evaluation.tables[evaluated[t]].dist_keys.size(); ++e, ++task) {
                writable(g.task_model)[task] = int32(k);
                writable(g.task_table)[task] = int32(t + 1);
                writable(g.task_key)[task] = table_first[t] + int32(e);
                pg_atomic_init_u32(&g.task_claimed[task], 0);
            }
    if (pcxt)
        call([&] {
            shm_toc_insert(pcxt->toc, kGroupKey, shared);
            LaunchParallelWorkers(pcxt);
        });

    const uint32 total = shared->pairs_to_train + shared->tasks;
    spi.set_read_only(true);  // in parallel mode the backend may start no command
    try {
        out.eval_cpu_seconds = run_part(g, spi, true, pcxt);
        for (uint32 seen; (seen = pg_atomic_read_u32(&shared->finished)) < total;) wait_done(g, seen, pcxt);
        // Read before the shared memory goes with the parallel context.
        collect_evaluations(g, evaluated, configs, evaluation);
        const uint64 trained_at = pg_atomic_read_u64(&shared->trained_at);
        if (tasks > 0 && trained_at != 0) {
            out.train_seconds = double(int64_t(trained_at) - start_ns) * 1e-9;
            out.eval_seconds = std::max(0.0, seconds_since(started) - out.train_seconds);
        }
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
    if (out.eval_seconds == 0) out.train_seconds = seconds_since(started);
    return out;
}

}  // namespace hopper::pg

void hopper_hop_worker_main(dsm_segment*, shm_toc* toc) {
    hopper::pg::run_worker_part(toc, hopper::pg::kGroupKey, [](void* shared) {
        auto* group = static_cast<hopper::pg::GroupShared*>(shared);
        hopper::pg::Spi spi;
        spi.set_read_only(true);
        (void)hopper::pg::run_part(hopper::pg::view(group), spi, false, nullptr);
        return group->exited;
    });
}
