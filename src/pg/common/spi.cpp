#include "pg/common/spi.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "hopper/error.h"
#include "pg/common/datum.h"

extern "C" {
#include "nodes/params.h"
}

#if defined(__SANITIZE_ADDRESS__)
#define HOPPER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HOPPER_ASAN 1
#endif
#endif

#ifdef HOPPER_ASAN
// AddressSanitizer builds only (test/sanitizers_extension.sh). SPI's procedure context hands
// out memory from large blocks, and SPI_finish gives its first block back to AllocSet's free list
// instead of to malloc: ASan would never see a value read after SPI_finish freed it (a result Datum
// palloc'd while the Spi was connected and returned to the executor). Here each chunk of that
// context is a malloc of its own, freed when the context is reset or deleted, so ASan's quarantine
// reports any later access, by hopper or by PostgreSQL (its memcpy and friends are intercepted).
namespace {

struct TrackedChunk {
    TrackedChunk* prev;
    TrackedChunk* next;
    Size size;
    MemoryContext context;  // last, right before the chunk: where pfree and repalloc look for it
};
static_assert(sizeof(TrackedChunk) % MAXIMUM_ALIGNOF == 0, "chunks must stay MAXALIGNed");

struct TrackedMethods {
    MemoryContextMethods methods;  // first: the context's methods pointer points here
    const MemoryContextMethods* original;
    TrackedChunk* chunks;
};

TrackedMethods* tracked(MemoryContext cxt) {
    return reinterpret_cast<TrackedMethods*>(const_cast<MemoryContextMethods*>(cxt->methods));
}

TrackedChunk* chunk_of(void* pointer) { return static_cast<TrackedChunk*>(pointer) - 1; }

void* tracked_alloc(MemoryContext cxt, Size size) {
    auto* c = static_cast<TrackedChunk*>(std::malloc(sizeof(TrackedChunk) + size));
    if (!c) return nullptr;
    TrackedMethods* t = tracked(cxt);
    *c = {nullptr, t->chunks, size, cxt};
    if (t->chunks) t->chunks->prev = c;
    t->chunks = c;
    cxt->mem_allocated += size;
    return c + 1;
}

void tracked_free(MemoryContext cxt, void* pointer) {
    TrackedChunk* c = chunk_of(pointer);
    TrackedMethods* t = tracked(cxt);
    if (c->prev) c->prev->next = c->next;
    else t->chunks = c->next;
    if (c->next) c->next->prev = c->prev;
    cxt->mem_allocated -= c->size;
    std::free(c);
}

// Always a new address, so that a pointer kept across repalloc is caught too.
void* tracked_realloc(MemoryContext cxt, void* pointer, Size size) {
    void* moved = tracked_alloc(cxt, size);
    if (!moved) return nullptr;
    std::memcpy(moved, pointer, std::min(size, chunk_of(pointer)->size));
    tracked_free(cxt, pointer);
    return moved;
}

void free_all(MemoryContext cxt) {
    while (TrackedChunk* c = tracked(cxt)->chunks) tracked_free(cxt, c + 1);
}

void tracked_reset(MemoryContext cxt) {
    free_all(cxt);
    tracked(cxt)->original->reset(cxt);
}

void tracked_delete(MemoryContext cxt) {
    TrackedMethods* t = tracked(cxt);
    free_all(cxt);
    cxt->methods = t->original;
    t->original->delete_context(cxt);
    std::free(t);
}

Size tracked_chunk_space(MemoryContext, void* pointer) { return sizeof(TrackedChunk) + chunk_of(pointer)->size; }

bool tracked_is_empty(MemoryContext cxt) { return !tracked(cxt)->chunks && tracked(cxt)->original->is_empty(cxt); }

void tracked_stats(MemoryContext cxt, MemoryStatsPrintFunc printfunc, void* passthru, MemoryContextCounters* totals,
                   bool print_to_stderr) {
    tracked(cxt)->original->stats(cxt, printfunc, passthru, totals, print_to_stderr);
}

// Called right after SPI_connect, before anything is allocated in the context.
void track_chunks(MemoryContext cxt) {
    auto* t = static_cast<TrackedMethods*>(std::malloc(sizeof(TrackedMethods)));
    if (!t) elog(ERROR, "out of memory");
    t->methods = *cxt->methods;
    t->methods.alloc = tracked_alloc;
    t->methods.free_p = tracked_free;
    t->methods.realloc = tracked_realloc;
    t->methods.reset = tracked_reset;
    t->methods.delete_context = tracked_delete;
    t->methods.get_chunk_space = tracked_chunk_space;
    t->methods.is_empty = tracked_is_empty;
    t->methods.stats = tracked_stats;
    t->original = cxt->methods;
    t->chunks = nullptr;
    cxt->methods = &t->methods;
}

}  // namespace
#endif

namespace hopper::pg {

SqlParam SqlParam::null(Oid type) {
    SqlParam p;
    p.kind = Kind::Null;
    p.type = type;
    return p;
}
SqlParam SqlParam::text(std::string_view s) {
    SqlParam p;
    p.kind = Kind::Text;
    p.view = s;
    return p;
}
SqlParam SqlParam::text_copy(std::string s) {
    SqlParam p;
    p.kind = Kind::Text;
    p.owned = std::move(s);
    return p;
}
SqlParam SqlParam::int4(int32_t v) {
    SqlParam p;
    p.kind = Kind::Int4;
    p.i = v;
    return p;
}
SqlParam SqlParam::int8(int64_t v) {
    SqlParam p;
    p.kind = Kind::Int8;
    p.i = v;
    return p;
}
SqlParam SqlParam::float8(double v) {
    SqlParam p;
    p.kind = Kind::Float8;
    p.d = v;
    return p;
}
SqlParam SqlParam::boolean(bool v) {
    SqlParam p;
    p.kind = Kind::Bool;
    p.b = v;
    return p;
}
SqlParam SqlParam::bytea(std::string_view bytes) {
    SqlParam p;
    p.kind = Kind::Bytea;
    p.view = bytes;
    return p;
}
SqlParam SqlParam::jsonb(std::string_view json) {
    SqlParam p;
    p.kind = Kind::Jsonb;
    p.view = json;
    return p;
}
SqlParam SqlParam::float8_array(const std::vector<double>& v) {
    SqlParam p;
    p.kind = Kind::Float8Array;
    p.dv = &v;
    return p;
}
SqlParam SqlParam::int4_array(const std::vector<int32_t>& v) {
    SqlParam p;
    p.kind = Kind::Int4Array;
    p.i4v = &v;
    return p;
}
SqlParam SqlParam::int8_array(const std::vector<int64_t>& v) {
    SqlParam p;
    p.kind = Kind::Int8Array;
    p.i8v = &v;
    return p;
}
SqlParam SqlParam::text_array(const std::vector<std::string>& v) {
    SqlParam p;
    p.kind = Kind::TextArray;
    p.sv = &v;
    return p;
}
SqlParam SqlParam::bytea_array(const std::vector<std::string>& v) {
    SqlParam p;
    p.kind = Kind::ByteaArray;
    p.sv = &v;
    return p;
}
SqlParam SqlParam::float4_matrix(const float* data, int rows, int cols) {
    SqlParam p;
    p.kind = Kind::Float4Matrix;
    p.fp = data;
    p.rows = rows;
    p.cols = cols;
    return p;
}
SqlParam SqlParam::datum(::Datum value, Oid type) {
    SqlParam p;
    p.kind = Kind::Datum;
    p.raw = value;
    p.type = type;
    return p;
}

Spi::Spi(bool nonatomic) : nonatomic_(nonatomic), uncaught_at_start_(std::uncaught_exceptions()) {
    call([&] {
        int rc = SPI_connect_ext(nonatomic ? SPI_OPT_NONATOMIC : 0);
        if (rc != SPI_OK_CONNECT) elog(ERROR, "SPI_connect failed: %s", SPI_result_code_string(rc));
#ifdef HOPPER_ASAN
        track_chunks(CurrentMemoryContext);  // SPI's procedure context
#endif
        scratch_ = AllocSetContextCreate(CurrentMemoryContext, "hopper SPI parameters", ALLOCSET_DEFAULT_SIZES);
    });
    connected_ = true;
}

Spi::~Spi() {
    // While an exception unwinds, PostgreSQL's transaction abort cleans up SPI; calling into
    // PostgreSQL from here could raise a second error with nowhere to go.
    if (!connected_ || std::uncaught_exceptions() > uncaught_at_start_) return;
    try {
        call([&] { SPI_finish(); });
    } catch (...) {
        // Nothing sensible to do in a destructor; the transaction end reports leftover SPI state.
    }
}

void Spi::bind(const std::vector<SqlParam>& params, Datum* values, char* nulls, Oid* types) {
    for (std::size_t k = 0; k < params.size(); ++k) {
        const SqlParam& p = params[k];
        nulls[k] = ' ';
        std::string_view view = p.owned.empty() ? p.view : std::string_view(p.owned);
        switch (p.kind) {
            case SqlParam::Kind::Null:
                nulls[k] = 'n';
                values[k] = 0;
                types[k] = p.type;
                break;
            case SqlParam::Kind::Text:
                values[k] = string_to_text(view);
                types[k] = TEXTOID;
                break;
            case SqlParam::Kind::Int4:
                values[k] = Int32GetDatum((int32)p.i);
                types[k] = INT4OID;
                break;
            case SqlParam::Kind::Int8:
                values[k] = Int64GetDatum(p.i);
                types[k] = INT8OID;
                break;
            case SqlParam::Kind::Float8:
                values[k] = Float8GetDatum(p.d);
                types[k] = FLOAT8OID;
                break;
            case SqlParam::Kind::Bool:
                values[k] = BoolGetDatum(p.b);
                types[k] = BOOLOID;
                break;
            case SqlParam::Kind::Bytea:
                values[k] = bytes_to_bytea(view);
                types[k] = BYTEAOID;
                break;
            case SqlParam::Kind::Jsonb:
                values[k] = string_to_jsonb(view);
                types[k] = JSONBOID;
                break;
            case SqlParam::Kind::Float8Array:
                values[k] = make_float8_array(*p.dv);
                types[k] = FLOAT8ARRAYOID;
                break;
            case SqlParam::Kind::Int4Array:
                values[k] = make_int4_array(*p.i4v);
                types[k] = INT4ARRAYOID;
                break;
            case SqlParam::Kind::Int8Array:
                values[k] = make_int8_array(*p.i8v);
                types[k] = INT8ARRAYOID;
                break;
            case SqlParam::Kind::TextArray:
                values[k] = make_text_array(*p.sv);
                types[k] = TEXTARRAYOID;
                break;
            case SqlParam::Kind::ByteaArray:
                values[k] = make_bytea_array(*p.sv);
                types[k] = BYTEAARRAYOID;
                break;
            case SqlParam::Kind::Float4Matrix:
                values[k] = make_float4_array(p.fp, {p.rows, p.cols});
                types[k] = FLOAT4ARRAYOID;
                break;
            case SqlParam::Kind::Datum:
                values[k] = p.raw;
                types[k] = p.type;
                break;
        }
    }
}

// Frees the previous results and turns the parameters into Datums in the scratch context, which is
// reset per statement so that long loops of statements do not accumulate parameter memory.
Spi::Bound Spi::bind_for_statement(const std::vector<SqlParam>& params) {
    Bound b;
    b.values.resize(params.size() + 1);
    b.nulls.resize(params.size() + 1);
    b.types.resize(params.size() + 1);
    call([&] {
        if (SPI_tuptable) SPI_freetuptable(SPI_tuptable);
        MemoryContextReset(scratch_);
    });
    ValueContextScope in_scratch(scratch_);
    bind(params, b.values.data(), b.nulls.data(), b.types.data());
    return b;
}

uint64_t Spi::execute(const std::string& sql, const std::vector<SqlParam>& params) {
    source_.clear();
    Bound b = bind_for_statement(params);
    std::vector<Datum>& values = b.values;
    std::vector<char>& nulls = b.nulls;
    std::vector<Oid>& types = b.types;
    rows_ = call([&] {
        int rc = params.empty() ? SPI_execute(sql.c_str(), read_only_, 0)
                                : SPI_execute_with_args(sql.c_str(), (int)params.size(), types.data(), values.data(),
                                                        nulls.data(), read_only_, 0);
        if (rc < 0) elog(ERROR, "SPI_execute failed (%s): %s", SPI_result_code_string(rc), sql.c_str());
        return (uint64_t)SPI_processed;
    });
    return rows_;
}

namespace {

// The parameter list of a statement, or none for a statement without parameters: an empty list is
// not the same to every executor hook. Citus's adaptive executor copies a list without a fetch hook
// (copyParamList, which returns NULL for 0 parameters) and then reads the copy's length: a query of a
// distributed table run with an empty list crashed the backend (SIGSEGV in
// MarkUnreferencedExternParams, Citus 13.2.2), as preprocess's first read of a distributed source did.
ParamListInfo params_list(std::size_t count) { return count == 0 ? nullptr : makeParamList((int)count); }

}  // namespace

uint64_t Spi::execute_with_large_params(const std::string& sql, const std::vector<SqlParam>& params) {
    source_.clear();
    Bound b = bind_for_statement(params);
    rows_ = call([&] {
        // CURSOR_OPT_PARALLEL_OK, as SPI_execute gives its statements: SPI_prepare's plans are never
        // parallel, and evaluation (one aggregate per segment under a Parallel Append) ran serially.
        SPIPlanPtr plan = SPI_prepare_cursor(sql.c_str(), (int)params.size(), b.types.data(), CURSOR_OPT_PARALLEL_OK);
        if (!plan) elog(ERROR, "SPI_prepare failed (%s): %s", SPI_result_code_string(SPI_result), sql.c_str());
        ParamListInfo list = params_list(params.size());
        for (std::size_t i = 0; i < params.size(); ++i) {
            list->params[i].value = b.values[i];
            list->params[i].isnull = b.nulls[i] == 'n';
            list->params[i].pflags = 0;  // not PARAM_FLAG_CONST: the planner keeps a Param
            list->params[i].ptype = b.types[i];
        }
        int rc = SPI_execute_plan_with_paramlist(plan, list, read_only_, 0);
        if (rc < 0) elog(ERROR, "SPI_execute_plan failed (%s): %s", SPI_result_code_string(rc), sql.c_str());
        SPI_freeplan(plan);
        return (uint64_t)SPI_processed;
    });
    return rows_;
}

namespace {

// Where a streamed query's rows go: to the caller's function, with what it threw kept for after.
struct StreamReceiver {
    DestReceiver pub;  // first: PostgreSQL sees a DestReceiver
    const Spi::RowFn* row;
    uint64_t rows;
    std::exception_ptr error;
};

bool stream_receive(TupleTableSlot* slot, DestReceiver* self) {
    auto* r = reinterpret_cast<StreamReceiver*>(self);
    ErrorData* pg_error = nullptr;
    try {
        call([&] { slot_getallattrs(slot); });
        (*r->row)(slot);
        ++r->rows;
    } catch (const PgError& e) { pg_error = e.edata(); } catch (...) {
        r->error = std::current_exception();
        return false;  // stops the query; the exception is rethrown once it has ended
    }
    // PostgreSQL's own error goes back into PostgreSQL as it was (no C++ frame is alive here): the
    // query ends the way it would have, and the call around it catches the error.
    if (pg_error) ReThrowError(pg_error);
    return true;
}

void stream_startup(DestReceiver*, int, TupleDesc) {}
void stream_shutdown(DestReceiver*) {}
void stream_destroy(DestReceiver*) {}

}  // namespace

uint64_t Spi::stream(const std::string& sql, const std::vector<SqlParam>& params, const RowFn& row) {
    return stream(nullptr, sql, params, row);
}

uint64_t Spi::stream(const Prepared& stmt, const std::vector<SqlParam>& params, const RowFn& row) {
    return stream(&stmt, stmt.sql(), params, row);
}

uint64_t Spi::stream(const Prepared* stmt, const std::string& sql, const std::vector<SqlParam>& params,
                     const RowFn& row) {
    source_.clear();
    Bound b = bind_for_statement(params);
    rows_ = 0;
    StreamReceiver receiver{};
    receiver.pub.receiveSlot = stream_receive;
    receiver.pub.rStartup = stream_startup;
    receiver.pub.rShutdown = stream_shutdown;
    receiver.pub.rDestroy = stream_destroy;
    receiver.pub.mydest = DestNone;
    receiver.row = &row;
    call([&] {
        SPIExecuteOptions options;
        std::memset(&options, 0, sizeof options);
        options.read_only = read_only_;
        options.dest = &receiver.pub;
        options.params = params_list(params.size());
        for (std::size_t i = 0; i < params.size(); ++i) {
            options.params->params[i].value = b.values[i];
            options.params->params[i].isnull = b.nulls[i] == 'n';
            options.params->params[i].pflags = PARAM_FLAG_CONST;
            options.params->params[i].ptype = b.types[i];
        }
        // A one-shot statement with parameters is planned first: SPI_execute_extended would parse it
        // without them.
        SPIPlanPtr plan = stmt ? stmt->plan() : nullptr;
        if (!stmt && !params.empty()) {
            plan = SPI_prepare_cursor(sql.c_str(), (int)params.size(), b.types.data(), CURSOR_OPT_PARALLEL_OK);
            if (!plan) elog(ERROR, "SPI_prepare failed (%s): %s", SPI_result_code_string(SPI_result), sql.c_str());
        }
        int rc = plan ? SPI_execute_plan_extended(plan, &options) : SPI_execute_extended(sql.c_str(), &options);
        if (rc < 0) elog(ERROR, "SPI_execute failed (%s): %s", SPI_result_code_string(rc), sql.c_str());
        if (plan && !stmt) SPI_freeplan(plan);
    });
    if (receiver.error) std::rethrow_exception(receiver.error);
    return receiver.rows;
}

Prepared& Prepared::operator=(Prepared&& other) noexcept {
    if (this != &other) {
        reset();
        plan_ = other.plan_;
        sql_ = std::move(other.sql_);
        other.plan_ = nullptr;
    }
    return *this;
}

void Prepared::reset() noexcept {
    if (!plan_) return;
    SPIPlanPtr plan = plan_;
    plan_ = nullptr;
    try {
        call([&] { SPI_freeplan(plan); });
    } catch (...) {
        // Freeing a plan can only fail on a corrupted plan; leaking it is the lesser evil here.
    }
}

Prepared Spi::prepare(const std::string& sql, const std::vector<Oid>& types, bool large_params) {
    std::vector<Oid> t(types);
    SPIPlanPtr plan = call([&] {
        SPIPlanPtr plan = SPI_prepare_cursor(sql.c_str(), (int)t.size(), t.empty() ? nullptr : t.data(),
                                             large_params ? CURSOR_OPT_GENERIC_PLAN : 0);
        if (!plan) elog(ERROR, "SPI_prepare failed (%s): %s", SPI_result_code_string(SPI_result), sql.c_str());
        if (SPI_keepplan(plan) != 0) elog(ERROR, "SPI_keepplan failed");
        return plan;
    });
    return Prepared(plan, sql);
}

uint64_t Spi::execute(const Prepared& stmt, const std::vector<SqlParam>& params) {
    source_.clear();
    Bound b = bind_for_statement(params);
    rows_ = call([&] {
        int rc = SPI_execute_plan(stmt.plan(), b.values.data(), b.nulls.data(), read_only_, 0);
        if (rc < 0) elog(ERROR, "SPI_execute_plan failed (%s): %s", SPI_result_code_string(rc), stmt.sql().c_str());
        return (uint64_t)SPI_processed;
    });
    return rows_;
}

void Spi::free_results() {
    source_.clear();
    rows_ = 0;
    call([] {
        if (SPI_tuptable) SPI_freetuptable(SPI_tuptable);
    });
}

void Spi::open_cursor(const std::string& sql, const std::vector<SqlParam>& params) {
    if (cursor_) close_cursor();
    Bound b = bind_for_statement(params);
    std::vector<Datum>& values = b.values;
    std::vector<char>& nulls = b.nulls;
    std::vector<Oid>& types = b.types;
    // Not read-only (unless set_read_only): like execute(), the cursor sees what earlier statements of this call wrote
    // (a read-only cursor runs in the caller's snapshot, blind to a table the call itself filled).
    cursor_ = call([&] {
        Portal p = SPI_cursor_open_with_args(nullptr, sql.c_str(), (int)params.size(), types.data(), values.data(),
                                             nulls.data(), read_only_, 0);
        if (!p) elog(ERROR, "SPI_cursor_open failed: %s", sql.c_str());
        return p;
    });
    rows_ = 0;
}

uint64_t Spi::fetch(long count) {
    source_.clear();
    if (!cursor_) fail(ErrorKind::Internal, "fetch without an open cursor");
    rows_ = call([&] {
        if (SPI_tuptable) SPI_freetuptable(SPI_tuptable);
        SPI_cursor_fetch(cursor_, true, count);
        return (uint64_t)SPI_processed;
    });
    return rows_;
}

void Spi::close_cursor() {
    if (!cursor_) return;
    Portal p = cursor_;
    cursor_ = nullptr;
    call([&] { SPI_cursor_close(p); });
}

void Spi::check_row(uint64_t row, int col) const {
    if (!SPI_tuptable || row >= rows_ || col < 0 || col >= SPI_tuptable->tupdesc->natts)
        fail(ErrorKind::Internal, "SPI result access out of range",
             "row " + std::to_string(row) + ", column " + std::to_string(col));
}

void Spi::ensure_snapshot() const {
    // Detoasting needs an active snapshot; after a commit in a procedure there is none.
    call([] {
        if (!ActiveSnapshotSet()) PushActiveSnapshot(GetTransactionSnapshot());
    });
}

int Spi::columns() const { return SPI_tuptable ? SPI_tuptable->tupdesc->natts : 0; }

Datum Spi::datum(uint64_t row, int col, bool* isnull) const {
    check_row(row, col);
    return call([&] { return SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, col + 1, isnull); });
}

Oid Spi::column_type(int col) const {
    check_row(0, col);
    return SPI_gettypeid(SPI_tuptable->tupdesc, col + 1);
}

bool Spi::is_null(uint64_t row, int col) const {
    bool isnull;
    datum(row, col, &isnull);
    return isnull;
}

uint64_t Spi::execute_reading(const std::string& source, const std::string& sql, const std::vector<SqlParam>& params) {
    const uint64_t n = execute(sql, params);
    source_ = source;
    return n;
}

void Spi::null_result(int col) const {
    if (source_.empty())
        fail(ErrorKind::Internal, "unexpected NULL in an internal query result", "column " + std::to_string(col + 1));
    char* name = call([&] { return SPI_fname(SPI_tuptable->tupdesc, col + 1); });
    const std::string column = name ? std::string(name) : "value";
    if (name) call([&] { pfree(name); });
    fail(ErrorKind::NullValue, source_ + " has a NULL " + column + " where hopper needs a value", "",
         "Delete or repair that row.");
}

std::string Spi::text(uint64_t row, int col) const {
    check_row(row, col);
    ensure_snapshot();
    char* s = call([&] { return SPI_getvalue(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, col + 1); });
    if (!s) null_result(col);
    // SPI_getvalue pallocs in the procedure's context, which lives as long as the CALL: freed here,
    // or a fit of many short iterations grew by 1 MB a second (a hostile review).
    std::string out(s);
    call([&] { pfree(s); });
    return out;
}

int64_t Spi::integer(uint64_t row, int col) const {
    bool isnull;
    Datum d = datum(row, col, &isnull);
    if (isnull) null_result(col);
    switch (SPI_gettypeid(SPI_tuptable->tupdesc, col + 1)) {
        case INT2OID: return DatumGetInt16(d);
        case INT4OID: return DatumGetInt32(d);
        case INT8OID: return DatumGetInt64(d);
        default: return std::stoll(text(row, col));
    }
}

double Spi::number(uint64_t row, int col) const {
    bool isnull;
    Datum d = datum(row, col, &isnull);
    if (isnull) null_result(col);
    switch (SPI_gettypeid(SPI_tuptable->tupdesc, col + 1)) {
        case FLOAT8OID: return DatumGetFloat8(d);
        case FLOAT4OID: return DatumGetFloat4(d);
        case INT2OID: return DatumGetInt16(d);
        case INT4OID: return DatumGetInt32(d);
        case INT8OID: return (double)DatumGetInt64(d);
        default: return std::stod(text(row, col));
    }
}

bool Spi::boolean(uint64_t row, int col) const {
    bool isnull;
    Datum d = datum(row, col, &isnull);
    if (isnull) null_result(col);
    return DatumGetBool(d);
}

std::string Spi::bytes(uint64_t row, int col) const {
    bool isnull;
    Datum d = datum(row, col, &isnull);
    if (isnull) null_result(col);
    ensure_snapshot();
    return bytea_to_string(d);
}

std::vector<double> Spi::float8_array(uint64_t row, int col, const std::string& what) const {
    bool isnull;
    Datum d = datum(row, col, &isnull);
    if (isnull) return {};
    ensure_snapshot();
    return float_array_to_vector(d, what.c_str());
}

std::vector<int64_t> Spi::int_array(uint64_t row, int col) const {
    bool isnull;
    Datum d = datum(row, col, &isnull);
    if (isnull) return {};
    ensure_snapshot();
    return int_array_to_vector(d, "array");
}

std::vector<std::string> Spi::text_array(uint64_t row, int col) const {
    bool isnull;
    Datum d = datum(row, col, &isnull);
    if (isnull) return {};
    ensure_snapshot();
    return text_array_to_vector(d, "array");
}

std::string Spi::scalar_text(const std::string& sql, const std::vector<SqlParam>& params) {
    execute(sql, params);
    if (rows_ == 0) fail(ErrorKind::Internal, "internal query returned no row", sql);
    return is_null(0, 0) ? std::string() : text(0, 0);
}

int64_t Spi::scalar_int(const std::string& sql, const std::vector<SqlParam>& params) {
    execute(sql, params);
    if (rows_ == 0) fail(ErrorKind::Internal, "internal query returned no row", sql);
    return integer(0, 0);
}

bool Spi::scalar_bool(const std::string& sql, const std::vector<SqlParam>& params) {
    execute(sql, params);
    if (rows_ == 0) fail(ErrorKind::Internal, "internal query returned no row", sql);
    return boolean(0, 0);
}

void Spi::commit() {
    if (!nonatomic_) return;
    call([] { SPI_commit(); });
    rows_ = 0;
}

std::string quote_ident(std::string_view name) {
    std::string copy(name);
    return std::string(call([&] { return quote_identifier(copy.c_str()); }));
}

std::string quote_literal(std::string_view value) {
    std::string copy(value);
    return std::string(call([&] { return quote_literal_cstr(copy.c_str()); }));
}

std::string rows_from(std::initializer_list<const char*> types) {
    std::string s = "ROWS FROM (";
    int i = 0;
    for (const char* t : types) {
        s += (i ? ", " : "") + std::string("pg_catalog.unnest($") + std::to_string(i + 1) + "::pg_catalog." + t + "[])";
        ++i;
    }
    return s + ")";
}

std::string null_if(const char* column, const char* value) {
    return std::string("CASE WHEN ") + column + " OPERATOR(pg_catalog.=) " + value + " THEN NULL ELSE " + column +
           " END";
}

}  // namespace hopper::pg
