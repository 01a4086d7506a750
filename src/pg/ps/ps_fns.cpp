// SQL functions of parameter tables: ps_create, ps_drop, ps_get, ps_add, ps_clock, the chunked
// forms, the catalog (ps_tables, ps_workers, ps_memory) and checkpoints (ps_save, ps_restore).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hopper/error.h"
#include "hopper/ps.h"
#include "hopper/registry.h"
#include "pg/common/datum.h"
#include "pg/common/spi.h"
#include "pg/ps/ps_table.h"
#include "pg/registry/checkpoint_store.h"

extern "C" {
#include "utils/rangetypes.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"
#include "utils/typcache.h"
#include "utils/uuid.h"
}

using namespace hopper;
using namespace hopper::pg;
namespace pst = hopper::pg::ps_table;

namespace {

constexpr const char* kCheckpointFormat = "hopper_ps_v1";

// ---- array arguments, read in place ----

struct Int8Arg {
    const int64_t* data = nullptr;
    std::size_t n = 0;
};
struct Float4Arg {
    const float* data = nullptr;
    std::size_t n = 0;
};

ArrayType* array_arg(FunctionCallInfo fcinfo, int i, const char* name, Oid elemtype) {
    require_not_null(fcinfo, i, name);
    ArrayType* a = call([&] { return PG_GETARG_ARRAYTYPE_P(i); });
    if (ARR_ELEMTYPE(a) != elemtype) fail(ErrorKind::WrongType, std::string(name) + " has the wrong element type");
    if (ARR_NDIM(a) > 1)
        fail(ErrorKind::InvalidParameter, std::string(name) + " must be a one-dimensional array",
             "It has " + std::to_string(ARR_NDIM(a)) + " dimensions.");
    if (ARR_HASNULL(a)) {
        const bits8* bitmap = ARR_NULLBITMAP(a);
        const int n = ARR_NDIM(a) == 0 ? 0 : ARR_DIMS(a)[0];
        for (int k = 0; k < n; ++k)
            if (!(bitmap[k / 8] & (1 << (k % 8))))
                fail(ErrorKind::NullValue, std::string(name) + " must not contain NULL elements",
                     std::string(name) + "[" + std::to_string(k + 1) + "] is NULL.");
    }
    return a;
}

Int8Arg int8_arg(FunctionCallInfo fcinfo, int i, const char* name) {
    ArrayType* a = array_arg(fcinfo, i, name, INT8OID);
    Int8Arg out;
    out.n = ARR_NDIM(a) == 0 ? 0 : std::size_t(ARR_DIMS(a)[0]);
    out.data = reinterpret_cast<const int64_t*>(ARR_DATA_PTR(a));
    return out;
}

Float4Arg float4_arg(FunctionCallInfo fcinfo, int i, const char* name) {
    ArrayType* a = array_arg(fcinfo, i, name, FLOAT4OID);
    Float4Arg out;
    out.n = ARR_NDIM(a) == 0 ? 0 : std::size_t(ARR_DIMS(a)[0]);
    out.data = reinterpret_cast<const float*>(ARR_DATA_PTR(a));
    for (std::size_t k = 0; k < out.n; ++k)
        if (!std::isfinite(out.data[k]))
            fail(ErrorKind::InvalidParameter, std::string(name) + " must be finite numbers",
                 std::string(name) + "[" + std::to_string(k + 1) + "] is " +
                     (std::isnan(out.data[k]) ? "NaN" : "infinite") + ".");
    return out;
}

// A real[] of n elements, zero-filled; its data is written in place.
ArrayType* new_float4_array(std::size_t n) {
    if (n * sizeof(float) > MaxAllocSize - 64)
        fail(ErrorKind::Limit, "result is too large",
             "It would hold " + std::to_string(n) + " values; PostgreSQL returns at most 1 GB in one value.",
             "Get fewer keys at a time.");
    return call([&] {
        if (n == 0) return construct_empty_array(FLOAT4OID);
        const Size nbytes = ARR_OVERHEAD_NONULLS(1) + n * sizeof(float);
        ArrayType* a = static_cast<ArrayType*>(palloc0(nbytes));
        SET_VARSIZE(a, nbytes);
        a->ndim = 1;
        a->dataoffset = 0;
        a->elemtype = FLOAT4OID;
        ARR_DIMS(a)[0] = int(n);
        ARR_LBOUND(a)[0] = 1;
        return a;
    });
}

// Key and chunk errors name the table.
template <typename F>
void naming_table(const std::string& table, F&& f) {
    try {
        f();
    } catch (const Error& e) {
        const std::string& m = e.message();
        const std::string tail = "is out of range";
        if (m.size() >= tail.size() && m.compare(m.size() - tail.size(), tail.size(), tail) == 0)
            throw Error(e.kind(), m + " for parameter table \"" + table + "\"", e.detail(), e.hint());
        throw;
    }
}

int worker_arg(FunctionCallInfo fcinfo, const pst::Handle& h) {
    const int64_t w = arg_int(fcinfo, 1, "worker");
    pst::check_worker(h, w);
    return int(w);
}

// What an operation touches, and the storage its Access points into.
struct Touched {
    pst::Access access;
    std::vector<int64_t> offsets;  // when the keys are not their own offsets
    std::vector<ps::Span> spans;
    std::vector<int64_t> chunks;  // SparseSSP: dense chunk numbers
};

// Offsets of the keys in the table (the keys themselves for [0, num_keys) tables).
void key_access(const pst::Handle& h, const Int8Arg& keys, Touched* t) {
    pst::Access& a = t->access;
    a.n = keys.n;
    naming_table(h.settings.name, [&] {
        if (h.settings.keys.offsets_are_keys()) {
            h.settings.keys.validate(keys.data, keys.n, "keys");
            a.offsets = keys.data;
        } else {
            t->offsets.resize(keys.n);
            h.settings.keys.offsets(keys.data, keys.n, t->offsets.data(), "keys");
            a.offsets = t->offsets.data();
        }
    });
    if (h.rule.sparse()) {
        h.chunks.of_keys(keys.data, keys.n, &t->chunks);
        a.chunks = t->chunks.data();
        a.nchunks = t->chunks.size();
    }
}

void chunk_access(const pst::Handle& h, const Int8Arg& ids, Touched* t) {
    pst::Access& a = t->access;
    int64_t total = 0;
    naming_table(h.settings.name,
                 [&] { t->spans = ps::chunk_spans(h.settings.keys, h.settings.chunk_size, ids.data, ids.n, &total); });
    a.spans = t->spans.data();
    a.nspans = t->spans.size();
    if (h.rule.sparse()) {
        h.chunks.of_chunk_ids(ids.data, ids.n, &t->chunks);
        a.chunks = t->chunks.data();
        a.nchunks = t->chunks.size();
    }
}

void check_deltas(const Float4Arg& deltas, std::size_t expected, bool chunks) {
    if (deltas.n == expected) return;
    if (chunks)
        fail(ErrorKind::InvalidParameter, "deltas must have one value per key of the chunks",
             "The chunks hold " + std::to_string(expected) + " keys; deltas has " + std::to_string(deltas.n) +
                 " values.");
    fail(ErrorKind::InvalidParameter, "deltas must have one value per key",
         "keys has " + std::to_string(expected) + " elements; deltas has " + std::to_string(deltas.n) + ".");
}

std::optional<int64_t> optional_int(FunctionCallInfo fcinfo, int i) {
    if (PG_NARGS() <= i || PG_ARGISNULL(i)) return std::nullopt;
    return arg_int(fcinfo, i, "");
}

// The arguments (chunk_size, consistency, staleness, num_workers, init_value) from position `at` on.
struct CommonArgs {
    int64_t chunk_size = 1;
    std::string consistency;
    std::optional<int64_t> staleness;
    int64_t num_workers = 1;
    double init = 0;
};
CommonArgs common_args(FunctionCallInfo fcinfo, int at) {
    CommonArgs c;
    c.chunk_size = arg_int(fcinfo, at, "chunk_size");
    c.consistency = arg_text(fcinfo, at + 1, "consistency");
    c.staleness = optional_int(fcinfo, at + 2);
    c.num_workers = arg_int(fcinfo, at + 3, "num_workers");
    require_not_null(fcinfo, at + 4, "init_value");
    c.init = PG_GETARG_FLOAT4(at + 4);
    return c;
}

ps::TableSettings settings_args(FunctionCallInfo fcinfo, ps::KeySpace keys) {
    std::string name = arg_text(fcinfo, 0, "name");
    const CommonArgs c = common_args(fcinfo, 2);
    return ps::make_settings(std::move(name), std::move(keys), c.chunk_size, c.consistency, c.staleness, c.num_workers,
                             c.init);
}

}  // namespace

namespace {

// An int8range[] argument as [lo, hi) ranges, in the order given: bounded, non-empty, not NULL.
std::vector<ps::KeyRange> ranges_arg(FunctionCallInfo fcinfo, int i, const char* arg) {
    require_not_null(fcinfo, i, arg);
    std::vector<ps::KeyRange> ranges;
    struct Bound {
        int64_t lo, hi;
        bool empty, lo_inf, hi_inf, lo_inc, hi_inc, is_null;
    };
    std::vector<Bound> bounds;
    call([&] {
        ArrayType* a = PG_GETARG_ARRAYTYPE_P(i);
        Datum* values;
        bool* nulls;
        int n;
        int16 typlen;
        bool typbyval;
        char typalign;
        get_typlenbyvalalign(ARR_ELEMTYPE(a), &typlen, &typbyval, &typalign);
        deconstruct_array(a, ARR_ELEMTYPE(a), typlen, typbyval, typalign, &values, &nulls, &n);
        TypeCacheEntry* tc = lookup_type_cache(ARR_ELEMTYPE(a), TYPECACHE_RANGE_INFO);
        bounds.reserve(std::size_t(n));
        for (int k = 0; k < n; ++k) {
            Bound b{};
            b.is_null = nulls[k];
            if (!b.is_null) {
                RangeBound lower, upper;
                bool empty;
                range_deserialize(tc, DatumGetRangeTypeP(values[k]), &lower, &upper, &empty);
                b.empty = empty;
                if (!empty) {
                    b.lo_inf = lower.infinite;
                    b.hi_inf = upper.infinite;
                    b.lo_inc = lower.inclusive;
                    b.hi_inc = upper.inclusive;
                    if (!lower.infinite) b.lo = DatumGetInt64(lower.val);
                    if (!upper.infinite) b.hi = DatumGetInt64(upper.val);
                }
            }
            bounds.push_back(b);
        }
    });
    for (std::size_t k = 0; k < bounds.size(); ++k) {
        const Bound& b = bounds[k];
        const std::string where = std::string(arg) + "[" + std::to_string(k + 1) + "]";
        if (b.is_null)
            fail(ErrorKind::NullValue, std::string(arg) + " must not contain NULL elements", where + " is NULL.");
        if (b.empty) fail(ErrorKind::InvalidParameter, "key ranges must not be empty", where + " is empty.");
        if (b.lo_inf || b.hi_inf)
            fail(ErrorKind::InvalidParameter, "key ranges must be bounded",
                 where + " has no " + (b.lo_inf ? "lower" : "upper") + " bound.");
        // int8range is canonical: [lo, hi).
        ranges.push_back(ps::KeyRange{b.lo_inc ? b.lo : b.lo + 1, b.hi_inc ? b.hi + 1 : b.hi});
    }
    return ranges;
}

// The keys of ps_create(name, key_ranges int8range[], ...).
ps::KeySpace key_ranges_arg(FunctionCallInfo fcinfo) {
    return ps::KeySpace::from_ranges(ranges_arg(fcinfo, 1, "key_ranges"));
}

}  // namespace

// ps_create(name, num_keys bigint | key_ranges int8range[], chunk_size, consistency, staleness,
//           num_workers, init_value) -> void: both SQL forms, told apart by the second argument's type.
HOPPER_FUNCTION(ps_create) {
    pst::require_shared_memory();
    const Oid keys_type = call([&] { return get_fn_expr_argtype(fcinfo->flinfo, 1); });
    ps::KeySpace keys =
        keys_type == INT8OID ? ps::KeySpace::contiguous(arg_int(fcinfo, 1, "num_keys")) : key_ranges_arg(fcinfo);
    pst::create(settings_args(fcinfo, std::move(keys)));
    PG_RETURN_VOID();
}

// ps_create_part(name, range_map int8range[], part, chunk_size, consistency, staleness, num_workers,
//                init_value) -> void: part `part` of a table split over servers by range_map.
HOPPER_FUNCTION(ps_create_part) {
    pst::require_shared_memory();
    std::string name = arg_text(fcinfo, 0, "name");
    const std::vector<ps::KeyRange> map = ranges_arg(fcinfo, 1, "range_map");
    const int64_t part = arg_int(fcinfo, 2, "part");
    const CommonArgs c = common_args(fcinfo, 3);
    pst::create(ps::make_part_settings(std::move(name), map, part, c.chunk_size, c.consistency, c.staleness,
                                       c.num_workers, c.init));
    PG_RETURN_VOID();
}

// ps_drop(name, if_exists) -> boolean
HOPPER_FUNCTION(ps_drop) {
    const std::string name = arg_text(fcinfo, 0, "name");
    const bool if_exists = arg_bool_or(fcinfo, 1, false);
    const bool dropped = pst::drop(name, if_exists);
    if (!dropped) notice("parameter table \"" + name + "\" does not exist, skipping");
    PG_RETURN_BOOL(dropped);
}

namespace {

// Keys, chunk ids and values travel as arrays (bigint[], real[]) or packed in bytea (8-byte and
// 4-byte little-endian numbers), which skips the per-element conversion of arrays: the C++ client
// uses the packed forms.
enum class Enc { Array, Bytes };

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "packed parameter-table values are little-endian");

std::string_view bytes_arg(FunctionCallInfo fcinfo, int i, const char* name) {
    require_not_null(fcinfo, i, name);
    bytea* b = call([&] { return PG_GETARG_BYTEA_PP(i); });
    return std::string_view(VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b));
}

Int8Arg ids_arg(FunctionCallInfo fcinfo, int i, const char* name, Enc enc, std::vector<int64_t>& copy) {
    if (enc == Enc::Array) return int8_arg(fcinfo, i, name);
    const std::string_view b = bytes_arg(fcinfo, i, name);
    if (b.size() % 8 != 0)
        fail(ErrorKind::InvalidParameter, std::string(name) + " must be packed 8-byte integers",
             "It has " + std::to_string(b.size()) + " bytes, not a multiple of 8.");
    copy.resize(b.size() / 8);
    if (!b.empty()) std::memcpy(copy.data(), b.data(), b.size());  // aligned copy
    return Int8Arg{copy.data(), copy.size()};
}

Float4Arg deltas_arg(FunctionCallInfo fcinfo, int i, Enc enc, std::vector<float>& copy) {
    if (enc == Enc::Array) return float4_arg(fcinfo, i, "deltas");
    const std::string_view b = bytes_arg(fcinfo, i, "deltas");
    if (b.size() % 4 != 0)
        fail(ErrorKind::InvalidParameter, "deltas must be packed 4-byte floats",
             "It has " + std::to_string(b.size()) + " bytes, not a multiple of 4.");
    copy.resize(b.size() / 4);
    if (!b.empty()) std::memcpy(copy.data(), b.data(), b.size());
    for (std::size_t k = 0; k < copy.size(); ++k)
        if (!std::isfinite(copy[k]))
            fail(ErrorKind::InvalidParameter, "deltas must be finite numbers",
                 "Value " + std::to_string(k + 1) + " is " + (std::isnan(copy[k]) ? "NaN" : "infinite") + ".");
    return Float4Arg{copy.data(), copy.size()};
}

// The result of a Get: real[] or bytea of n values; *data points at its (zeroed) values.
Datum values_out(std::size_t n, Enc enc, float** data) {
    if (enc == Enc::Array) {
        ArrayType* a = new_float4_array(n);
        *data = n ? reinterpret_cast<float*>(ARR_DATA_PTR(a)) : nullptr;
        return PointerGetDatum(a);
    }
    if (n * sizeof(float) > MaxAllocSize - VARHDRSZ)
        fail(ErrorKind::Limit, "result is too large",
             "It would hold " + std::to_string(n) + " values; PostgreSQL returns at most 1 GB in one value.",
             "Get fewer keys at a time.");
    bytea* b = call([&] {
        bytea* r = static_cast<bytea*>(palloc0(VARHDRSZ + n * sizeof(float)));
        SET_VARSIZE(r, VARHDRSZ + n * sizeof(float));
        return r;
    });
    *data = reinterpret_cast<float*>(VARDATA(b));
    return PointerGetDatum(b);
}

Datum get_keys(FunctionCallInfo fcinfo, Enc enc) {
    const pst::Handle& h = pst::open(arg_text(fcinfo, 0, "name"));
    const int worker = worker_arg(fcinfo, h);
    std::vector<int64_t> copy;
    const Int8Arg keys = ids_arg(fcinfo, 2, "keys", enc, copy);
    Touched t;
    key_access(h, keys, &t);
    float* data = nullptr;
    const Datum out = values_out(keys.n, enc, &data);
    pst::get(h, worker, t.access, data);
    return out;
}

Datum add_keys(FunctionCallInfo fcinfo, Enc enc) {
    const pst::Handle& h = pst::open(arg_text(fcinfo, 0, "name"));
    const int worker = worker_arg(fcinfo, h);
    std::vector<int64_t> copy;
    std::vector<float> delta_copy;
    const Int8Arg keys = ids_arg(fcinfo, 2, "keys", enc, copy);
    const Float4Arg deltas = deltas_arg(fcinfo, 3, enc, delta_copy);
    Touched t;
    key_access(h, keys, &t);
    check_deltas(deltas, keys.n, false);
    pst::add(h, worker, t.access, deltas.data);
    PG_RETURN_VOID();
}

Datum get_chunks(FunctionCallInfo fcinfo, Enc enc) {
    const pst::Handle& h = pst::open(arg_text(fcinfo, 0, "name"));
    const int worker = worker_arg(fcinfo, h);
    std::vector<int64_t> copy;
    const Int8Arg ids = ids_arg(fcinfo, 2, "chunk_ids", enc, copy);
    Touched t;
    chunk_access(h, ids, &t);
    float* data = nullptr;
    const Datum out = values_out(t.access.count(), enc, &data);
    pst::get(h, worker, t.access, data);
    return out;
}

Datum add_chunks(FunctionCallInfo fcinfo, Enc enc) {
    const pst::Handle& h = pst::open(arg_text(fcinfo, 0, "name"));
    const int worker = worker_arg(fcinfo, h);
    std::vector<int64_t> copy;
    std::vector<float> delta_copy;
    const Int8Arg ids = ids_arg(fcinfo, 2, "chunk_ids", enc, copy);
    const Float4Arg deltas = deltas_arg(fcinfo, 3, enc, delta_copy);
    Touched t;
    chunk_access(h, ids, &t);
    check_deltas(deltas, t.access.count(), true);
    pst::add(h, worker, t.access, deltas.data);
    PG_RETURN_VOID();
}

}  // namespace

// ps_get(name, worker, keys bigint[]) -> real[]
HOPPER_FUNCTION(ps_get) { return get_keys(fcinfo, Enc::Array); }
// ps_get_bytes(name, worker, keys bytea) -> bytea
HOPPER_FUNCTION(ps_get_bytes) { return get_keys(fcinfo, Enc::Bytes); }
// ps_add(name, worker, keys bigint[], deltas real[]) -> void
HOPPER_FUNCTION(ps_add) { return add_keys(fcinfo, Enc::Array); }
// ps_add_bytes(name, worker, keys bytea, deltas bytea) -> void
HOPPER_FUNCTION(ps_add_bytes) { return add_keys(fcinfo, Enc::Bytes); }
// ps_get_chunk(name, worker, chunk_ids bigint[]) -> real[]
HOPPER_FUNCTION(ps_get_chunk) { return get_chunks(fcinfo, Enc::Array); }
// ps_get_chunk_bytes(name, worker, chunk_ids bytea) -> bytea
HOPPER_FUNCTION(ps_get_chunk_bytes) { return get_chunks(fcinfo, Enc::Bytes); }
// ps_add_chunk(name, worker, chunk_ids bigint[], deltas real[]) -> void
HOPPER_FUNCTION(ps_add_chunk) { return add_chunks(fcinfo, Enc::Array); }
// ps_add_chunk_bytes(name, worker, chunk_ids bytea, deltas bytea) -> void
HOPPER_FUNCTION(ps_add_chunk_bytes) { return add_chunks(fcinfo, Enc::Bytes); }

// ps_clock(name, worker) -> bigint (the worker's new clock)
HOPPER_FUNCTION(ps_clock) {
    const pst::Handle& h = pst::open(arg_text(fcinfo, 0, "name"));
    const int worker = worker_arg(fcinfo, h);
    PG_RETURN_INT64(pst::clock(h, worker));
}

// ps_tables_internal() -> setof record (see the view hopper.ps_tables). Release 0.1.0 declared the
// first 20 columns only; until its update runs, rows are cut to what the declaration has.
HOPPER_FUNCTION(ps_tables_internal) {
    const std::vector<pst::TableInfo> tables = pst::list_tables();
    std::vector<std::vector<Datum>> rows;
    std::vector<std::vector<bool>> row_nulls;
    auto bounds = [](const std::vector<ps::KeyRange>& ranges, std::vector<int64_t>* lo, std::vector<int64_t>* hi) {
        for (const ps::KeyRange& r : ranges) {
            lo->push_back(r.lo);
            hi->push_back(r.hi);
        }
    };
    for (const pst::TableInfo& t : tables) {
        std::vector<int64_t> lo, hi, map_lo, map_hi;
        bounds(t.settings.keys.ranges(), &lo, &hi);
        bounds(t.settings.range_map, &map_lo, &map_hi);
        const bool part = t.settings.part >= 0;
        const ps::ChunkRange cr = ps::chunk_range(t.settings.keys, t.settings.chunk_size);
        rows.push_back({string_to_text(t.name),
                        Int64GetDatum(t.settings.keys.size()),
                        make_int8_array(lo),
                        make_int8_array(hi),
                        Int32GetDatum(int32_t(t.settings.chunk_size)),
                        Int64GetDatum(cr.count),
                        string_to_text(ps::consistency_name(t.settings.consistency)),
                        Int32GetDatum(t.settings.staleness),
                        Int32GetDatum(t.settings.num_workers),
                        Int64GetDatum(t.min_clock),
                        Int64GetDatum(t.max_clock),
                        Int64GetDatum(int64_t(t.memory_bytes)),
                        ObjectIdGetDatum(t.owner),
                        TimestampTzGetDatum(t.created_at),
                        Int64GetDatum(int64_t(t.get_calls)),
                        Int64GetDatum(int64_t(t.get_keys)),
                        Int64GetDatum(int64_t(t.add_calls)),
                        Int64GetDatum(int64_t(t.add_keys)),
                        Int64GetDatum(int64_t(t.clocks)),
                        Int64GetDatum(int64_t(t.waits)),
                        Int64GetDatum(int64_t(t.late_adds)),
                        Int32GetDatum(t.settings.part),
                        part ? make_int8_array(map_lo) : Datum(0),
                        part ? make_int8_array(map_hi) : Datum(0)});
        std::vector<bool> nulls(rows.back().size(), false);
        nulls[21] = nulls[22] = nulls[23] = !part;
        row_nulls.push_back(std::move(nulls));
    }
    call([&] {
        InitMaterializedSRF(fcinfo, 0);
        ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
        const std::size_t columns = std::size_t(rsinfo->setDesc->natts);
        if (columns != 20 && columns != 24) elog(ERROR, "ps_tables_internal: unexpected result type");
        for (std::size_t k = 0; k < rows.size(); ++k) {
            bool nulls[24];
            for (std::size_t c = 0; c < 24; ++c) nulls[c] = row_nulls[k][c];
            tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, rows[k].data(), nulls);
        }
    });
    return (Datum)0;
}

// ps_workers_internal() -> setof record (see the view hopper.ps_workers)
HOPPER_FUNCTION(ps_workers_internal) {
    const std::vector<pst::WorkerInfo> workers = pst::list_workers();
    std::vector<Datum> names;
    for (const auto& w : workers) names.push_back(string_to_text(w.table));
    call([&] {
        InitMaterializedSRF(fcinfo, 0);
        ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
        for (std::size_t k = 0; k < workers.size(); ++k) {
            const auto& w = workers[k];
            const char* status = w.status == ps::kWorkerActive ? "active"
                                 : w.status == ps::kWorkerGone ? "gone"
                                                               : "not joined";
            Datum values[5] = {names[k], Int32GetDatum(w.worker), Int64GetDatum(w.clock), CStringGetTextDatum(status),
                               Int32GetDatum(w.pid)};
            bool nulls[5] = {false, false, false, false, w.status != ps::kWorkerActive};
            tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
        }
    });
    return (Datum)0;
}

// ps_memory() -> (memory_bytes, used_bytes, largest_free_bytes, max_tables, tables)
HOPPER_FUNCTION(ps_memory) {
    const pst::MemoryInfo m = pst::memory();
    return make_record(fcinfo,
                       {Int64GetDatum(int64_t(m.arena_bytes)), Int64GetDatum(int64_t(m.used_bytes)),
                        Int64GetDatum(int64_t(m.largest_free)), Int32GetDatum(m.max_tables), Int32GetDatum(m.tables)},
                       {});
}

// ps_save(name, metadata jsonb) -> uuid: a generic checkpoint in hopper.checkpoints (the registry's
// tables, sql/ext/40_registry.sql) with format hopper_ps_v1, stored in hopper.checkpoint_chunks.
HOPPER_FUNCTION(ps_save) {
    const pst::Handle& h = pst::open(arg_text(fcinfo, 0, "name"));
    const std::string metadata = arg_json_object(fcinfo, 1, "metadata");
    const ps::TableSettings settings = h.settings;
    ps::SnapshotBuffer b = pst::snapshot(h);
    const std::string_view payload(b.bytes);
    std::vector<int64_t> clocks(std::size_t(settings.num_workers));
    std::memcpy(clocks.data(), b.bytes.data() + b.clocks_at, 8 * clocks.size());
    const int64_t min_clock = *std::min_element(clocks.begin(), clocks.end());
    nlohmann::json facts = {{"name", settings.name},
                            {"consistency", ps::consistency_name(settings.consistency)},
                            {"staleness", settings.staleness},
                            {"num_keys", settings.keys.size()},
                            {"key_ranges", nlohmann::json::array()},
                            {"chunk_size", settings.chunk_size},
                            {"num_workers", settings.num_workers},
                            {"clocks", clocks}};
    for (const ps::KeyRange& r : settings.keys.ranges()) facts["key_ranges"].push_back({r.lo, r.hi});
    if (settings.part >= 0) {
        facts["part"] = settings.part;
        facts["range_map"] = nlohmann::json::array();
        for (const ps::KeyRange& r : settings.range_map) facts["range_map"].push_back({r.lo, r.hi});
    }
    // The caller's metadata with the table's facts under "parameter_table" (replacing a key of that name).
    nlohmann::json meta = nlohmann::json::parse(metadata, nullptr, false);
    if (meta.is_discarded())
        fail(ErrorKind::InvalidParameter, "metadata holds a value hopper cannot read",
             "A number in it is beyond double precision's range.");
    meta["parameter_table"] = facts;
    const std::string resources = nlohmann::json{{"parameter_table", payload.size()}}.dump();
    std::string uuid;
    {
        Spi spi;
        SafeSearchPath path;
        path.enter();
        uuid = store_checkpoint(spi, std::nullopt, payload, min_clock, meta.dump(), resources, kCheckpointFormat).uuid;
        path.leave();
    }
    PG_RETURN_DATUM(uuid_datum(uuid));
}

// ps_restore(checkpoint uuid, name text) -> text: re-creates a table from a checkpoint of ps_save.
HOPPER_FUNCTION(ps_restore) {
    pst::require_shared_memory();
    const std::string uuid = uuid_arg(fcinfo, 0, "checkpoint");
    std::string payload;
    {
        Spi spi;
        {
            SafeSearchPath path;
            path.enter();
            spi.execute("SELECT format FROM hopper.checkpoints WHERE uuid = $1::pg_catalog.uuid",
                        {SqlParam::text(uuid)});
            path.leave();
        }
        if (spi.rows() == 0)
            fail(ErrorKind::UndefinedObject, "checkpoint " + uuid + " does not exist", "",
                 "hopper.checkpoints lists the checkpoints; parameter tables are saved with format " +
                     std::string(kCheckpointFormat) + ".");
        const std::string format = spi.text(0, 0);
        if (format != kCheckpointFormat)
            fail(ErrorKind::InvalidParameter, "checkpoint " + uuid + " does not hold a parameter table",
                 "Its format is " + format + "; hopper.ps_save writes " + kCheckpointFormat + ".");
        payload = load_checkpoint(spi, uuid).state;  // COMPLETED, whole, size and sha256 checked
    }
    const ps::SnapshotView view = ps::read_snapshot(payload);
    const std::string name = arg_text_or(fcinfo, 1, view.meta.name);
    pst::create(ps::snapshot_settings(view.meta, name), &view);
    PG_RETURN_DATUM(string_to_text(name));
}
