// Reading and writing a packed table's buffers (see pack_buffers.h).
//
// A buffer's rows are fetched with one TID scan, their features converted to float32 (and scaled)
// straight into the float4[] value the buffer is stored as, their labels one-hot encoded into the
// other. With parallel workers, each worker takes the next buffer to read, reads it into a slot of
// shared memory and goes on with the next; the backend writes the buffers out of their slots in
// buffer order, and a slot it wrote is free for the buffer `slots` further on. Writing (TOAST, WAL,
// the index) is about half of packing and only the backend may write; reading and converting is
// the other half, done meanwhile on the machine's other cores.
#include "pg/training/pack_buffers.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <unordered_map>
#include <vector>

#include "hopper/error.h"
#include "pg/common/datum.h"
#include "pg/common/guard.h"
#include "pg/runtime/worker_group.h"
#include "pg/training/tabular.h"

extern "C" {
#include "access/parallel.h"
#include "storage/condition_variable.h"
#include "storage/shm_toc.h"
#include "storage/spin.h"
#include "utils/wait_event.h"

// The entry point of preprocess's parallel workers (found by name: CreateParallelContext).
PGDLLEXPORT void hopper_pack_worker_main(dsm_segment* segment, shm_toc* toc);
}

namespace hopper::pg {

uint64_t row_key(const ItemPointerData& tid) {
    return (uint64_t(ItemPointerGetBlockNumberNoCheck(&tid)) << 16) | ItemPointerGetOffsetNumberNoCheck(&tid);
}

int pack_slots(int workers) { return workers > 0 ? 2 * workers + 2 : 0; }

namespace {

ItemPointerData row_tid(uint64_t key) {
    ItemPointerData tid;
    ItemPointerSet(&tid, BlockNumber(key >> 16), OffsetNumber(key & 0xffff));
    return tid;
}

// A float4[] value of rows x cols laid out in place: the bytes construct_md_array gives (and an
// INSERT of the values stored), followed by the floats packing fills in.
std::size_t matrix_bytes(int rows, int cols) {
    return ARR_OVERHEAD_NONULLS(2) + std::size_t(rows) * std::size_t(cols) * sizeof(float);
}

float* matrix_init(void* at, int rows, int cols) {
    ArrayType* a = static_cast<ArrayType*>(at);
    std::memset(at, 0, ARR_OVERHEAD_NONULLS(2));
    SET_VARSIZE(a, matrix_bytes(rows, cols));
    a->ndim = 2;
    a->dataoffset = 0;
    a->elemtype = FLOAT4OID;
    ARR_DIMS(a)[0] = rows;
    ARR_DIMS(a)[1] = cols;
    ARR_LBOUND(a)[0] = 1;
    ARR_LBOUND(a)[1] = 1;
    return reinterpret_cast<float*>(ARR_DATA_PTR(a));
}

// Reads buffers' rows: the fetch prepared once, what one buffer's reading allocates freed before
// the next (in SPI's memory it would pile up until the call ends).
class BufferReader {
public:
    BufferReader(Spi& spi, const ReadPlan& plan) : spi_(spi), plan_(plan) {
        // A generic plan: a custom one folds the identifier array into the plan and estimates the
        // selectivity of each of its elements, 250 bytes a row while a buffer's fetch is planned.
        fetch_ = plan.recipe_json.empty() ? spi.prepare(plan.fetch_sql, {TIDARRAYOID}, true)
                                          : spi.prepare(plan.fetch_sql, {TIDARRAYOID, TEXTOID}, true);
        for (std::size_t k = 0; k < plan.class_values.size(); ++k) class_index_[plan.class_values[k]] = int(k);
        memory_ = call([] {
            return AllocSetContextCreate(CurrentMemoryContext, "hopper packing buffer", ALLOCSET_DEFAULT_SIZES);
        });
    }
    ~BufferReader() {
        try {
            call([&] { MemoryContextDelete(memory_); });
        } catch (...) {  // deleting a context does not fail; the call's context frees it anyway
        }
    }
    BufferReader(const BufferReader&) = delete;
    BufferReader& operator=(const BufferReader&) = delete;

    // The largest magnitude of a feature this reader has packed (scaled), for preprocess's notice
    // on unscaled features.
    float largest() const { return largest_; }

    // The rows `tids` (in buffer order) into x (n x x_dim) and y (n x y_dim); `before` rows were
    // packed before them (rows are numbered from there in messages). The results are freed.
    void read(const ItemPointerData* tids, int n, int64_t before, float* x, float* y) {
        const ReadPlan& p = plan_;
        call([&] { MemoryContextReset(memory_); });
        slot_.clear();
        for (int i = 0; i < n; ++i) slot_[row_key(tids[i])] = i;
        Datum tid_array = call([&] {
            MemoryContext caller = MemoryContextSwitchTo(memory_);
            Datum* elems = (Datum*)palloc(sizeof(Datum) * std::max(n, 1));
            for (int i = 0; i < n; ++i) elems[i] = PointerGetDatum(&tids[i]);
            Datum a =
                PointerGetDatum(construct_array(elems, n, TIDOID, sizeof(ItemPointerData), false, TYPALIGN_SHORT));
            MemoryContextSwitchTo(caller);
            return a;
        });
        std::fill(y, y + std::size_t(n) * std::size_t(p.y_dim), 0.0f);
        // Each row converted as the fetch makes it, its values read where they lie.
        const auto row = [&](TupleTableSlot* slot) {
            if (slot->tts_isnull[0] || slot->tts_isnull[1] || slot->tts_isnull[2])
                fail(ErrorKind::Data, "the source table changed while it was being packed");
            const int i = slot_.at(row_key(*reinterpret_cast<ItemPointer>(DatumGetPointer(slot->tts_values[0]))));
            const int64_t row = before + i + 1;
            float* xrow = x + std::size_t(i) * std::size_t(p.x_dim);
            const int len = floats_into(slot->tts_values[1], xrow, p.x_dim, "features", row);
            if (len != p.x_dim)
                fail(ErrorKind::Data, "feature arrays have different lengths",
                     "Expected " + std::to_string(p.x_dim) + " features, found " + std::to_string(len) + ".");
            const int bad = first_non_finite(xrow, len);
            if (bad >= 0)
                fail(ErrorKind::Data, "features contain NaN or infinite values",
                     "Feature " + std::to_string(bad + 1) + " of a row is " + describe_float(xrow[bad]) + ".",
                     "Clean or impute the data before packing.");
            p.scaling.apply(xrow, len);
            const int overflow = first_non_finite(xrow, len);
            if (overflow < 0) largest_ = std::max(largest_, largest_magnitude(xrow, len));
            if (overflow >= 0)
                fail(ErrorKind::Data, "scaled features are not finite in float32",
                     "Feature " + std::to_string(overflow + 1) + " of a row becomes " + describe_float(xrow[overflow]) +
                         " once divided by normalizing_const " + std::to_string(p.scaling.normalizing_const) +
                         (p.scaling.center.empty() ? "" : " and scaled") + ".",
                     "Use a normalizing_const that keeps features within float32's range (about 3.4e38).");
            float* yrow = y + std::size_t(i) * std::size_t(p.y_dim);
            const Datum yv = slot->tts_values[2];
            const Oid y_type = TupleDescAttr(slot->tts_tupleDescriptor, 2)->atttypid;
            if (p.classification) {
                const std::string label = value_text(yv, y_type);
                auto it = class_index_.find(label);
                if (it == class_index_.end())
                    fail(
                        ErrorKind::Data, "class value \"" + label + "\" does not occur in the training data",
                        "The training data has classes: " +
                            [&] {
                                std::string s;
                                for (std::size_t k = 0; k < p.class_values.size() && k < 20; ++k)
                                    s += (k ? ", " : "") + p.class_values[k];
                                return s + (p.class_values.size() > 20 ? ", ..." : "");
                            }() +
                            ".",
                        // num_classes pads the training's classes with "<padding k>" slots that no label
                        // fills, so it is no way out here (a user sweep followed that hint in vain).
                        "Leave its rows out (e.g. in a view), or pack the training table from rows that include "
                        "that class; a quantity (a count, an amount) is packed with response_type => "
                        "'regression'.");
                yrow[it->second] = 1.0f;
            } else {
                values_.clear();
                if (is_numeric_array_type(y_type)) {
                    if (append_floats(yv, values_, "dependent values", row) != p.y_dim)
                        fail(ErrorKind::Data, "dependent arrays have different lengths");
                } else {
                    const double v = value_number(yv, y_type);
                    if (std::isfinite(v) && !std::isfinite(float(v)))
                        fail(ErrorKind::Data,
                             "dependent column \"" + p.dependent + "\" has a value beyond float32's range",
                             "A row's value is " + describe_double(v) +
                                 "; hopper trains in float32 (up to about 3.4e38).",
                             "Rescale the target before packing, e.g. divide it by a constant or take its logarithm.");
                    values_.push_back(float(v));
                }
                if (const int bad = first_non_finite(values_.data(), p.y_dim); bad >= 0)
                    fail(ErrorKind::Data, "dependent column \"" + p.dependent + "\" contains NaN or infinite values",
                         "A row's value is " + describe_float(values_[std::size_t(bad)]) + ".",
                         "Filter those rows out or replace the values before packing.");
                std::memcpy(yrow, values_.data(), sizeof(float) * std::size_t(p.y_dim));
            }
        };
        const uint64_t rows =
            p.recipe_json.empty()
                ? spi_.stream(fetch_, {SqlParam::datum(tid_array, TIDARRAYOID)}, row)
                : spi_.stream(fetch_, {SqlParam::datum(tid_array, TIDARRAYOID), SqlParam::text(p.recipe_json)}, row);
        if (int64_t(rows) != n) fail(ErrorKind::Data, "the source table changed while it was being packed");
    }

private:
    // A value as its type's output function writes it (SPI_getvalue's text).
    std::string value_text(Datum d, Oid type) {
        if (type != output_type_) {
            call([&] {
                bool varlena;
                getTypeOutputInfo(type, &output_fn_, &varlena);
            });
            output_type_ = type;
        }
        char* text = call([&] { return OidOutputFunctionCall(output_fn_, d); });
        std::string out(text);
        call([&] { pfree(text); });
        return out;
    }

    // A number as Spi::number reads it.
    double value_number(Datum d, Oid type) {
        switch (type) {
            case FLOAT8OID: return DatumGetFloat8(d);
            case FLOAT4OID: return DatumGetFloat4(d);
            case INT2OID: return DatumGetInt16(d);
            case INT4OID: return DatumGetInt32(d);
            case INT8OID: return double(DatumGetInt64(d));
            default: {
                // numeric (and the rest) by its text: strtod gives +-HUGE_VAL beyond double's range,
                // where std::stod threw, and 'NaN' as NaN.
                const std::string text = value_text(d, type);
                errno = 0;
                const double v = std::strtod(text.c_str(), nullptr);
                if (errno == ERANGE && std::isinf(v))
                    fail(ErrorKind::Data,
                         "dependent column \"" + plan_.dependent + "\" has a value beyond float32's range",
                         "A row's value is " + (text.size() > 40 ? text.substr(0, 40) + "..." : text) +
                             "; hopper trains in float32 (up to about 3.4e38).",
                         "Rescale the target before packing, e.g. divide it by a constant or take its logarithm.");
                return v;
            }
        }
    }

    Spi& spi_;
    const ReadPlan& plan_;
    Oid output_type_ = InvalidOid;
    Oid output_fn_ = InvalidOid;
    Prepared fetch_;
    std::unordered_map<std::string, int> class_index_;
    std::unordered_map<uint64_t, int> slot_;
    std::vector<float> values_;
    MemoryContext memory_ = nullptr;
    float largest_ = 0.0f;
};

// The rows packed before each buffer.
std::vector<int64_t> first_rows(const BufferPlan& plan) {
    std::vector<int64_t> first(plan.rows.size() + 1, 0);
    for (std::size_t b = 0; b < plan.rows.size(); ++b) first[b + 1] = first[b] + plan.rows[b];
    return first;
}

float pack_serially(Spi& spi, const PackJob& job, std::vector<uint64_t>& keys, PackedWriter& writer) {
    const ReadPlan& read = *job.read;
    const BufferPlan& plan = *job.plan;
    BufferReader reader(spi, read);
    // The two values of a buffer, 8-byte aligned as palloc's.
    std::vector<uint64_t> xs(matrix_bytes(job.max_rows, read.x_dim) / 8 + 1);
    std::vector<uint64_t> ys(matrix_bytes(job.max_rows, read.y_dim) / 8 + 1);
    std::vector<ItemPointerData> tids;
    int64_t next = 0;
    for (std::size_t b = 0; b < plan.rows.size(); ++b) {
        check_for_interrupts();
        const int n = plan.rows[b];
        tids.resize(std::size_t(n));
        for (int i = 0; i < n; ++i) tids[std::size_t(i)] = row_tid(keys[std::size_t(next + i)]);
        float* x = matrix_init(xs.data(), n, read.x_dim);
        float* y = matrix_init(ys.data(), n, read.y_dim);
        reader.read(tids.data(), n, next, x, y);
        writer.write(job.dist_keys[std::size_t(plan.segment[b])], int32_t(b), PointerGetDatum(xs.data()),
                     PointerGetDatum(ys.data()), n, read.x_dim, read.y_dim);
        next += n;
    }
    std::vector<uint64_t>().swap(keys);
    return reader.largest();
}

// ---- Parallel reading ------------------------------------------------------------------------

constexpr uint64 kPackKey = UINT64CONST(0x484F505045520002);
constexpr int kMaxPackWorkers = 64;

// What the backend and its workers share, followed by each slot's state, the read plan
// (serialized) and the slots. A slot holds one buffer: its rows' identifiers, which the backend
// puts there, then the buffer's two values (x's, y's), which a worker reads the rows into.
struct PackShared {
    int32 buffers, slots, x_dim, y_dim;
    uint32 plan_bytes;
    uint64 slot_bytes;  // one slot: its SlotHead, the identifiers at tids_at, x's value at x_at, y's at y_at
    uint64 tids_at, x_at, y_at;
    pg_atomic_uint32 next;  // the next buffer a worker takes
    ConditionVariable cv;   // broadcast whenever a slot's state changes
    slock_t error_lock;
    int32 error_buffer;  // the first buffer a worker failed in (INT_MAX: none), and its error
    int32 error_kind;
    char message[1024];
    char detail[4096];
    char hint[1024];
    bool exited[kMaxPackWorkers];  // worker i ended its part without raising an error
};

struct SlotHead {
    int32 rows;
    int64 first;    // rows packed before this buffer
    float largest;  // once read: the largest feature magnitude its worker has packed so far
};

// A slot's state: 4 b + 1 when it holds buffer b's row identifiers to read, 4 b + 2 when buffer b
// is read, 4 b + 3 when reading it failed (the error is the shared one).
enum SlotPhase : uint64 { kToRead = 1, kRead = 2, kFailed = 3 };
uint64 slot_state(int b, SlotPhase phase) { return 4 * uint64(b) + phase; }

struct PackView {
    PackShared* shared = nullptr;
    pg_atomic_uint64* state = nullptr;
    char* plan = nullptr;
    char* slots = nullptr;

    char* slot(int b) const { return slots + std::size_t(b % shared->slots) * shared->slot_bytes; }
};

Size pack_bytes(int slots, uint64 slot_bytes, uint32 plan_bytes) {
    return MAXALIGN(sizeof(PackShared)) + MAXALIGN(sizeof(pg_atomic_uint64) * std::size_t(slots)) +
           MAXALIGN(plan_bytes) + std::size_t(slots) * slot_bytes;
}

PackView view(PackShared* s) {
    PackView v;
    v.shared = s;
    char* p = reinterpret_cast<char*>(s) + MAXALIGN(sizeof(PackShared));
    v.state = reinterpret_cast<pg_atomic_uint64*>(p);
    p += MAXALIGN(sizeof(pg_atomic_uint64) * std::size_t(s->slots));
    v.plan = p;
    p += MAXALIGN(s->plan_bytes);
    v.slots = p;
    return v;
}

// The read plan as bytes, for the workers.
void put_text(std::string& out, const std::string& s) {
    const uint32 n = uint32(s.size());
    out.append(reinterpret_cast<const char*>(&n), sizeof n);
    out.append(s);
}

std::string serialize(const ReadPlan& p) {
    std::string out;
    put_text(out, p.fetch_sql);
    put_text(out, p.recipe_json);
    put_text(out, p.dependent);
    const int32 numbers[] = {
        p.classification ? 1 : 0,      p.x_dim, p.y_dim, int32(p.class_values.size()), int32(p.scaling.center.size()),
        int32(p.scaling.spread.size())};
    out.append(reinterpret_cast<const char*>(numbers), sizeof numbers);
    out.append(reinterpret_cast<const char*>(&p.scaling.normalizing_const), sizeof(double));
    for (const std::string& c : p.class_values) put_text(out, c);
    out.append(reinterpret_cast<const char*>(p.scaling.center.data()), sizeof(float) * p.scaling.center.size());
    out.append(reinterpret_cast<const char*>(p.scaling.spread.data()), sizeof(float) * p.scaling.spread.size());
    return out;
}

class PlanReader {
public:
    explicit PlanReader(const char* at) : at_(at) {}
    template <typename T>
    T get() {
        T v;
        std::memcpy(&v, at_, sizeof v);
        at_ += sizeof v;
        return v;
    }
    std::string text() {
        const uint32 n = get<uint32>();
        std::string s(at_, n);
        at_ += n;
        return s;
    }
    std::vector<float> floats(int n) {
        std::vector<float> v(std::size_t(std::max(n, 0)));
        if (!v.empty()) std::memcpy(v.data(), at_, sizeof(float) * v.size());
        at_ += sizeof(float) * v.size();
        return v;
    }

private:
    const char* at_;
};

ReadPlan deserialize(const char* bytes) {
    PlanReader in(bytes);
    ReadPlan p;
    p.fetch_sql = in.text();
    p.recipe_json = in.text();
    p.dependent = in.text();
    p.classification = in.get<int32>() != 0;
    p.x_dim = in.get<int32>();
    p.y_dim = in.get<int32>();
    const int32 classes = in.get<int32>(), centers = in.get<int32>(), spreads = in.get<int32>();
    p.scaling.normalizing_const = in.get<double>();
    for (int32 k = 0; k < classes; ++k) p.class_values.push_back(in.text());
    p.scaling.center = in.floats(centers);
    p.scaling.spread = in.floats(spreads);
    return p;
}

// Waits until `done` holds, on the shared condition variable. The backend (`pcxt` set) also watches
// its workers: one that stopped without ending its part raised an error (which arrives with the
// interrupts checked here) or died; returns false then, or when every worker has stopped.
template <typename Done>
bool wait_for(PackShared* s, ParallelContext* pcxt, Done&& done) {
    bool ok = true;
    // An error while asleep (a cancel, a worker's error) leaves the process registered on the
    // condition variable, which lives in the shared memory the error path detaches: the
    // transaction's abort would then touch it there (a SIGSEGV in a cancelled preprocess).
    struct CancelSleep {
        ~CancelSleep() { ConditionVariableCancelSleep(); }
    } cancel_sleep;
    call([&] {
        ConditionVariablePrepareToSleep(&s->cv);
        while (!done()) {
            if (!pcxt) {
                ConditionVariableSleep(&s->cv, PG_WAIT_EXTENSION);
                continue;
            }
            if (!ConditionVariableTimedSleep(&s->cv, 100, PG_WAIT_EXTENSION)) continue;
            if (lost_worker(pcxt, s->exited) || workers_stopped(pcxt)) {
                ok = done();
                break;
            }
        }
    });
    return ok;
}

void set_state(const PackView& v, int b, SlotPhase phase) {
    pg_write_barrier();
    pg_atomic_write_u64(&v.state[b % v.shared->slots], slot_state(b, phase));
    call([&] { ConditionVariableBroadcast(&v.shared->cv); });
}

// A worker's part: the next buffer not taken, read once the backend put its row identifiers in its
// slot, until none is left or reading one fails.
void read_in_worker(const PackView& v) {
    PackShared* s = v.shared;
    const ReadPlan plan = deserialize(v.plan);
    Spi spi;
    spi.set_read_only(true);  // in the backend's snapshot; a worker may start no command
    BufferReader reader(spi, plan);
    for (;;) {
        check_for_interrupts();
        const uint32 next = pg_atomic_fetch_add_u32(&s->next, 1);
        if (next >= uint32(s->buffers)) break;
        const int b = int(next);
        pg_atomic_uint64* state = &v.state[b % s->slots];
        wait_for(s, nullptr, [&] { return pg_atomic_read_u64(state) == slot_state(b, kToRead); });
        pg_read_barrier();
        char* at = v.slot(b);
        const SlotHead head = *reinterpret_cast<const SlotHead*>(at);
        float* x = matrix_init(at + s->x_at, head.rows, s->x_dim);
        float* y = matrix_init(at + s->y_at, head.rows, s->y_dim);
        try {
            reader.read(reinterpret_cast<const ItemPointerData*>(at + s->tids_at), head.rows, head.first, x, y);
            reinterpret_cast<SlotHead*>(at)->largest = reader.largest();
        } catch (const Error& e) {
            // The backend raises it when it comes to this buffer: the same error, in the same
            // buffer, as reading alone would raise. Nothing of PostgreSQL's is left half done (an
            // error of PostgreSQL's propagates instead).
            SpinLockAcquire(&s->error_lock);
            if (b < s->error_buffer) {
                s->error_buffer = b;
                s->error_kind = int32(e.kind());
                strlcpy(s->message, e.message().c_str(), sizeof s->message);
                strlcpy(s->detail, e.detail().c_str(), sizeof s->detail);
                strlcpy(s->hint, e.hint().c_str(), sizeof s->hint);
            }
            SpinLockRelease(&s->error_lock);
            set_state(v, b, kFailed);
            break;
        }
        set_state(v, b, kRead);
    }
}

// Puts buffer b's row identifiers in its slot.
void give_rows(const PackView& v, const BufferPlan& plan, const std::vector<uint64_t>& keys,
               const std::vector<int64_t>& first, int b) {
    char* at = v.slot(b);
    SlotHead* head = reinterpret_cast<SlotHead*>(at);
    head->rows = plan.rows[std::size_t(b)];
    head->first = first[std::size_t(b)];
    ItemPointerData* tids = reinterpret_cast<ItemPointerData*>(at + v.shared->tids_at);
    for (int i = 0; i < head->rows; ++i) tids[i] = row_tid(keys[std::size_t(head->first + i)]);
    set_state(v, b, kToRead);
}

// The backend's part: every buffer in order, written out of its slot once a worker read it; the slot
// then takes the rows of the buffer `slots` further on. Returns the largest feature magnitude.
float write_in_backend(const PackView& v, const PackJob& job, const std::vector<uint64_t>& keys, PackedWriter& writer,
                       ParallelContext* pcxt) {
    PackShared* s = v.shared;
    const BufferPlan& plan = *job.plan;
    const std::vector<int64_t> first = first_rows(plan);
    float largest = 0.0f;
    for (int b = 0; b < s->buffers; ++b) {
        check_for_interrupts();
        pg_atomic_uint64* state = &v.state[b % s->slots];
        uint64 seen = 0;
        const bool ok = wait_for(s, pcxt, [&] {
            seen = pg_atomic_read_u64(state);
            return seen == slot_state(b, kRead) || seen == slot_state(b, kFailed);
        });
        if (!ok)
            fail(ErrorKind::ObjectNotInPrerequisiteState,
                 "a parallel worker of preprocess exited before the rows it took were read", "",
                 "More details may be available in the server log.");
        pg_read_barrier();
        if (seen == slot_state(b, kFailed)) {
            SpinLockAcquire(&s->error_lock);
            Error e(ErrorKind(s->error_kind), s->message, s->detail, s->hint);
            SpinLockRelease(&s->error_lock);
            throw e;
        }
        char* at = v.slot(b);
        largest = std::max(largest, reinterpret_cast<const SlotHead*>(at)->largest);
        writer.write(job.dist_keys[std::size_t(plan.segment[std::size_t(b)])], int32_t(b),
                     PointerGetDatum(at + s->x_at), PointerGetDatum(at + s->y_at), plan.rows[std::size_t(b)], s->x_dim,
                     s->y_dim);
        if (b + s->slots < s->buffers) give_rows(v, plan, keys, first, b + s->slots);
    }
    return largest;
}

// Starts the workers with the first buffers' rows in their slots; nullptr when none could start
// (the caller reads alone then).
ParallelContext* start_workers(const PackJob& job, const std::vector<uint64_t>& keys, int workers, PackView& v) {
    const ReadPlan& read = *job.read;
    const std::string plan_bytes = serialize(read);
    const int buffers = int(job.plan->rows.size());
    const int slots = std::min(pack_slots(workers), buffers);
    const uint64 tids_at = MAXALIGN(sizeof(SlotHead));
    const uint64 x_at = tids_at + MAXALIGN(sizeof(ItemPointerData) * std::size_t(job.max_rows));
    const uint64 y_at = x_at + MAXALIGN(matrix_bytes(job.max_rows, read.x_dim));
    const uint64 slot_bytes = y_at + MAXALIGN(matrix_bytes(job.max_rows, read.y_dim));
    const Size bytes = pack_bytes(slots, slot_bytes, uint32(plan_bytes.size()));
    ParallelContext* pcxt = call([&] {
        EnterParallelMode();
        ParallelContext* p = CreateParallelContext("hopper", "hopper_pack_worker_main", workers);
        shm_toc_estimate_chunk(&p->estimator, bytes);
        shm_toc_estimate_keys(&p->estimator, 1);
        InitializeParallelDSM(p);
        return p;
    });
    try {
        PackShared* s = static_cast<PackShared*>(call([&] { return shm_toc_allocate(pcxt->toc, bytes); }));
        std::memset(static_cast<void*>(s), 0, sizeof(PackShared));
        s->buffers = buffers;
        s->slots = slots;
        s->x_dim = read.x_dim;
        s->y_dim = read.y_dim;
        s->plan_bytes = uint32(plan_bytes.size());
        s->slot_bytes = slot_bytes;
        s->tids_at = tids_at;
        s->x_at = x_at;
        s->y_at = y_at;
        s->error_buffer = INT_MAX;
        pg_atomic_init_u32(&s->next, 0);
        call([&] { ConditionVariableInit(&s->cv); });
        SpinLockInit(&s->error_lock);
        v = view(s);
        for (int i = 0; i < slots; ++i) pg_atomic_init_u64(&v.state[i], 0);
        std::memcpy(v.plan, plan_bytes.data(), plan_bytes.size());
        const std::vector<int64_t> first = first_rows(*job.plan);
        for (int b = 0; b < slots; ++b) give_rows(v, *job.plan, keys, first, b);
        call([&] {
            shm_toc_insert(pcxt->toc, kPackKey, s);
            LaunchParallelWorkers(pcxt);
        });
        if (pcxt->nworkers_launched > 0) return pcxt;
        // No worker started (max_worker_processes or max_parallel_workers taken).
        call([&] {
            DestroyParallelContext(pcxt);
            ExitParallelMode();
        });
        return nullptr;
    } catch (...) {
        stop_workers(pcxt);
        throw;
    }
}

}  // namespace

float pack_buffers(Spi& spi, const PackJob& job, std::vector<uint64_t>& keys, PackedWriter& writer, int workers) {
    workers = std::clamp(workers, 0, kMaxPackWorkers);
    if (workers == 0 || job.plan->rows.size() < 2 || !writer.writes_without_statements() || IsInParallelMode())
        return pack_serially(spi, job, keys, writer);
    // The snapshot the workers read in: the backend's, as its own statements would.
    call([] { PushActiveSnapshot(GetTransactionSnapshot()); });
    PackView v;
    ParallelContext* pcxt = start_workers(job, keys, workers, v);
    if (!pcxt) {
        call([] { PopActiveSnapshot(); });
        return pack_serially(spi, job, keys, writer);
    }
    call([&] {
        elog(DEBUG1, "hopper.preprocess: %d parallel workers read the rows of %d buffers", pcxt->nworkers_launched,
             v.shared->buffers);
    });
    float largest = 0.0f;
    try {
        largest = write_in_backend(v, job, keys, writer, pcxt);
    } catch (...) {
        stop_workers(pcxt);
        throw;
    }
    call([&] {
        WaitForParallelWorkersToFinish(pcxt);
        DestroyParallelContext(pcxt);
        ExitParallelMode();
        PopActiveSnapshot();
    });
    std::vector<uint64_t>().swap(keys);
    return largest;
}

}  // namespace hopper::pg

void hopper_pack_worker_main(dsm_segment*, shm_toc* toc) {
    hopper::pg::run_worker_part(toc, hopper::pg::kPackKey, [](void* shared) {
        auto* s = static_cast<hopper::pg::PackShared*>(shared);
        hopper::pg::read_in_worker(hopper::pg::view(s));
        return s->exited;
    });
}
