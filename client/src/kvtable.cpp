// hopper parameter-server client over libpq: prepared statements, binary int8[]/float4[] arrays.
#include "hopper/kvtable.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <utility>

#include <libpq-fe.h>

namespace hopper::ps {

namespace {

constexpr unsigned kInt4Oid = 23, kTextOid = 25, kByteaOid = 17;

PGconn* pg(void* c) { return static_cast<PGconn*>(c); }

std::string field(const PGresult* r, int code) {
    const char* s = PQresultErrorField(r, code);
    return s ? s : "";
}

// Throws the error of a result (and frees it).
[[noreturn]] void throw_result(PGconn* conn, PGresult* r) {
    std::string state = r ? field(r, PG_DIAG_SQLSTATE) : "";
    std::string message = r ? field(r, PG_DIAG_MESSAGE_PRIMARY) : "";
    std::string detail = r ? field(r, PG_DIAG_MESSAGE_DETAIL) : "";
    std::string hint = r ? field(r, PG_DIAG_MESSAGE_HINT) : "";
    if (r) PQclear(r);
    if (message.empty()) {
        message = PQerrorMessage(conn);
        while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
    }
    // libpq's own errors carry no SQLSTATE; a connection lost in the middle of a query reads as
    // CONNECTION_OK until libpq notices, but its message says what happened.
    if (state.empty())
        state = PQstatus(conn) != CONNECTION_OK || message.find("connection") != std::string::npos ? "08006" : "XX000";
    throw Error(state, message, detail, hint);
}

// A result owned until the end of scope.
struct Result {
    PGresult* r = nullptr;
    explicit Result(PGresult* x) : r(x) {}
    ~Result() {
        if (r) PQclear(r);
    }
    Result(const Result&) = delete;
    Result& operator=(const Result&) = delete;
};

Result check(PGconn* conn, PGresult* r) {
    const ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) throw_result(conn, r);
    return Result(r);
}

void put32(std::string& out, uint32_t v) {
    const char b[4] = {char(v >> 24), char(v >> 16), char(v >> 8), char(v)};
    out.append(b, 4);
}
uint32_t get32(const char* p) {
    const auto* u = reinterpret_cast<const unsigned char*>(p);
    return (uint32_t(u[0]) << 24) | (uint32_t(u[1]) << 16) | (uint32_t(u[2]) << 8) | uint32_t(u[3]);
}

// Keys and values travel packed in bytea (binary format: the raw bytes), as the server's
// ps_*_bytes functions take them: 8-byte integers and 4-byte floats, little-endian.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the packed format is little-endian");

void pack(std::string& out, const void* data, std::size_t bytes) { out.assign(static_cast<const char*>(data), bytes); }

void unpack_floats(const char* p, int len, std::vector<float>* out) {
    if (len < 0 || len % 4 != 0) throw Error("XX000", "malformed values from the server");
    out->resize(std::size_t(len) / 4);
    if (len) std::memcpy(out->data(), p, std::size_t(len));
}

std::string float_text(float f) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", double(f));
    return buf;
}

const char* consistency_text(Consistency c) {
    switch (c) {
        case Consistency::BSP: return "bsp";
        case Consistency::SSP: return "ssp";
        case Consistency::ASP: return "asp";
        case Consistency::SparseSSP: return "sparse_ssp";
    }
    return "bsp";
}

// Integers separated by blanks (array_to_string of an int8[]).
std::vector<int64_t> numbers_of(const std::string& s) {
    std::vector<int64_t> v;
    std::size_t at = 0;
    while (at < s.size() && s[at] == ' ') ++at;
    while (at < s.size()) {
        std::size_t used = 0;
        v.push_back(std::stoll(s.substr(at), &used));
        at += used;
        while (at < s.size() && s[at] == ' ') ++at;
    }
    return v;
}

bool stale(Consistency c) { return c == Consistency::SSP || c == Consistency::SparseSSP; }

Consistency parse_consistency(const std::string& c) {
    return c == "ssp"          ? Consistency::SSP
           : c == "asp"        ? Consistency::ASP
           : c == "sparse_ssp" ? Consistency::SparseSSP
                               : Consistency::BSP;
}

}  // namespace

Error::Error(std::string sqlstate, std::string message, std::string detail, std::string hint)
    : std::runtime_error(message + (detail.empty() ? "" : " (" + detail + ")")),
      sqlstate_(std::move(sqlstate)),
      message_(std::move(message)),
      detail_(std::move(detail)),
      hint_(std::move(hint)) {}

// ---- Connection ----

Connection::Connection(const std::string& conninfo) {
    PGconn* c = PQconnectdb(conninfo.c_str());
    if (PQstatus(c) != CONNECTION_OK) {
        std::string m = PQerrorMessage(c);
        while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
        PQfinish(c);
        throw Error("08001", "could not connect to the database: " + m);
    }
    // A library does not write to the program's stderr: server notices are dropped.
    PQsetNoticeProcessor(
        c, [](void*, const char*) {}, nullptr);
    conn_ = c;
}

Connection::~Connection() {
    if (conn_) PQfinish(pg(conn_));
}

Connection::Connection(Connection&& o) noexcept : conn_(std::exchange(o.conn_, nullptr)) {}

Connection& Connection::operator=(Connection&& o) noexcept {
    if (this != &o) {
        if (conn_) PQfinish(pg(conn_));
        conn_ = std::exchange(o.conn_, nullptr);
    }
    return *this;
}

std::vector<std::string> Connection::query(const std::string& sql, const std::vector<std::string>& params) {
    std::vector<const char*> values;
    for (const auto& p : params) values.push_back(p.c_str());
    Result r = check(pg(conn_), PQexecParams(pg(conn_), sql.c_str(), int(values.size()), nullptr, values.data(),
                                             nullptr, nullptr, 0));
    std::vector<std::string> out;
    if (PQresultStatus(r.r) == PGRES_TUPLES_OK && PQnfields(r.r) > 0)
        for (int i = 0; i < PQntuples(r.r); ++i) out.emplace_back(PQgetisnull(r.r, i, 0) ? "" : PQgetvalue(r.r, i, 0));
    return out;
}

void CreateTable(Connection& conn, const std::string& name, const TableOptions& o) {
    conn.query("SELECT hopper.ps_create($1, $2::bigint, $3::integer, $4, $5::integer, $6::integer, $7::real)",
               {name, std::to_string(o.num_keys), std::to_string(o.chunk_size), consistency_text(o.consistency),
                std::to_string(stale(o.consistency) ? o.staleness : 0), std::to_string(o.num_workers),
                float_text(o.init_value)});
}

void CreateTable(const std::string& conninfo, const std::string& name, const TableOptions& options) {
    Connection c(conninfo);
    CreateTable(c, name, options);
}

bool DropTable(Connection& conn, const std::string& name, bool if_exists) {
    auto r = conn.query("SELECT hopper.ps_drop($1, $2::boolean)", {name, if_exists ? "true" : "false"});
    return !r.empty() && r[0] == "t";
}

bool DropTable(const std::string& conninfo, const std::string& name, bool if_exists) {
    Connection c(conninfo);
    return DropTable(c, name, if_exists);
}

// ---- KVTable<float> ----

struct KVTable<float>::Impl {
    Connection conn;
    std::string table;
    int worker = 0;
    std::string worker_bin;  // int4, big-endian
    int64_t clock = 0;
    int64_t num_keys = 0;
    int64_t chunk_size = 1;
    int num_workers = 1;
    Consistency consistency = Consistency::BSP;
    std::vector<std::pair<int64_t, int64_t>> ranges;  // [lo, hi)
    std::string keys_buf, vals_buf;
    std::vector<float> flat;

    explicit Impl(const std::string& conninfo) : conn(conninfo) {}

    PGconn* c() { return pg(conn.raw()); }

    void prepare(const char* name, const char* sql, std::vector<unsigned> types) {
        std::vector<Oid> oids(types.begin(), types.end());
        Result r = check(c(), PQprepare(c(), name, sql, int(oids.size()), oids.data()));
    }

    // What the operation sent last is waiting for (one at a time per connection).
    enum class Pending { None, Values, Done, Clock } pending = Pending::None;
    std::vector<float>* pending_out = nullptr;

    // Sends a prepared statement with binary parameters (table, worker, then extra), binary result.
    void send(const char* stmt, const std::string* a3, const std::string* a4, Pending kind, std::vector<float>* out) {
        if (pending != Pending::None)
            throw Error("55000", "an asynchronous operation on parameter table \"" + table + "\" is outstanding",
                        "One operation at a time per table and worker.", "Call Wait() before the next operation.");
        const char* values[4] = {table.data(), worker_bin.data(), a3 ? a3->data() : nullptr, a4 ? a4->data() : nullptr};
        int lengths[4] = {int(table.size()), 4, a3 ? int(a3->size()) : 0, a4 ? int(a4->size()) : 0};
        int formats[4] = {1, 1, 1, 1};
        const int n = a4 ? 4 : a3 ? 3 : 2;
        if (!PQsendQueryPrepared(c(), stmt, n, values, lengths, formats, 1)) throw_result(c(), nullptr);
        pending = kind;
        pending_out = out;
    }

    // Completes the outstanding operation: its values into the vector given to send, the clock.
    void wait() {
        if (pending == Pending::None) return;
        const Pending kind = std::exchange(pending, Pending::None);
        PGresult* ok = nullptr;
        PGresult* failed = nullptr;
        // Every result of the query must be read before the connection takes the next one.
        while (PGresult* r = PQgetResult(c())) {
            if (PQresultStatus(r) == PGRES_TUPLES_OK && !ok && !failed) ok = r;
            else if (PQresultStatus(r) != PGRES_TUPLES_OK && !failed) failed = r;
            else PQclear(r);
        }
        if (failed || !ok) {
            if (ok) PQclear(ok);
            throw_result(c(), failed);
        }
        Result r(ok);
        if (kind == Pending::Values) {
            if (PQntuples(r.r) != 1 || PQgetisnull(r.r, 0, 0))
                throw Error("XX000", "unexpected result from the server");
            unpack_floats(PQgetvalue(r.r, 0, 0), PQgetlength(r.r, 0, 0), pending_out);
        } else if (kind == Pending::Clock) {
            if (PQntuples(r.r) != 1 || PQgetlength(r.r, 0, 0) != 8)
                throw Error("XX000", "unexpected result from the server");
            const char* v = PQgetvalue(r.r, 0, 0);
            clock = int64_t((uint64_t(get32(v)) << 32) | get32(v + 4));
        }
    }

    void send_get(const char* stmt, const std::vector<int64_t>& ids, std::vector<float>* out) {
        pack(keys_buf, ids.data(), 8 * ids.size());
        send(stmt, &keys_buf, nullptr, Pending::Values, out);
    }

    void send_add(const char* stmt, const std::vector<int64_t>& ids, const float* v, std::size_t n) {
        pack(keys_buf, ids.data(), 8 * ids.size());
        pack(vals_buf, v, 4 * n);
        send(stmt, &keys_buf, &vals_buf, Pending::Done, nullptr);
    }

    int64_t chunk_length(int64_t id) const {
        // Keys of [id*chunk_size, (id+1)*chunk_size) inside the key ranges.
        int64_t lo = 0, hi = 0;
        if (__builtin_mul_overflow(id, chunk_size, &lo) || __builtin_add_overflow(lo, chunk_size, &hi)) return 0;
        int64_t n = 0;
        for (const auto& r : ranges) n += std::max<int64_t>(0, std::min(hi, r.second) - std::max(lo, r.first));
        return n;
    }
};

KVTable<float>::KVTable(const std::string& conninfo, std::string table, int worker)
    : impl_(std::make_unique<Impl>(conninfo)) {
    Impl& m = *impl_;
    m.table = std::move(table);
    m.worker = worker;
    m.worker_bin.clear();
    put32(m.worker_bin, uint32_t(worker));
    {
        const std::string w = std::to_string(worker);
        const char* params[2] = {m.table.c_str(), w.c_str()};
        Result r = check(
            m.c(),
            PQexecParams(
                m.c(),
                "SELECT t.num_keys, t.chunk_size, t.num_workers, t.consistency, "
                "       array_to_string(t.key_lo, ' '), array_to_string(t.key_hi, ' '), "
                "       COALESCE((SELECT w.clock FROM hopper.ps_workers w WHERE w.table_name = t.name AND w.worker = $2::int), 0) "
                "FROM hopper.ps_tables_internal() t WHERE t.name = $1",
                2, nullptr, params, nullptr, nullptr, 0));
        if (PQntuples(r.r) != 1) throw Error("42704", "parameter table \"" + m.table + "\" does not exist");
        auto text = [&](int col) { return std::string(PQgetvalue(r.r, 0, col)); };
        m.num_keys = std::stoll(text(0));
        m.chunk_size = std::stoll(text(1));
        m.num_workers = std::stoi(text(2));
        const std::string c = text(3);
        m.consistency = parse_consistency(c);
        const std::vector<int64_t> lo = numbers_of(text(4)), hi = numbers_of(text(5));
        if (lo.size() != hi.size()) throw Error("XX000", "unexpected key ranges from the server");
        for (std::size_t i = 0; i < lo.size(); ++i) m.ranges.emplace_back(lo[i], hi[i]);
        m.clock = std::stoll(text(6));
    }
    if (worker < 0 || worker >= m.num_workers)
        throw Error("22023",
                    "worker " + std::to_string(worker) + " does not exist in parameter table \"" + m.table + "\"",
                    "Its workers are 0 to " + std::to_string(m.num_workers - 1) + ".");
    m.prepare("hopper_ps_get", "SELECT hopper.ps_get_bytes($1, $2, $3)", {kTextOid, kInt4Oid, kByteaOid});
    m.prepare("hopper_ps_add", "SELECT hopper.ps_add_bytes($1, $2, $3, $4)",
              {kTextOid, kInt4Oid, kByteaOid, kByteaOid});
    m.prepare("hopper_ps_clock", "SELECT hopper.ps_clock($1, $2)", {kTextOid, kInt4Oid});
    m.prepare("hopper_ps_get_chunk", "SELECT hopper.ps_get_chunk_bytes($1, $2, $3)", {kTextOid, kInt4Oid, kByteaOid});
    m.prepare("hopper_ps_add_chunk", "SELECT hopper.ps_add_chunk_bytes($1, $2, $3, $4)",
              {kTextOid, kInt4Oid, kByteaOid, kByteaOid});
}

KVTable<float>::~KVTable() = default;
KVTable<float>::KVTable(KVTable&&) noexcept = default;
KVTable<float>& KVTable<float>::operator=(KVTable&&) noexcept = default;

void KVTable<float>::GetAsync(const std::vector<int64_t>& keys, std::vector<float>* vals) {
    impl_->send_get("hopper_ps_get", keys, vals);
}

void KVTable<float>::GetChunkAsync(const std::vector<int64_t>& chunk_ids, std::vector<float>* flat) {
    impl_->send_get("hopper_ps_get_chunk", chunk_ids, flat);
}

void KVTable<float>::AddAsync(const std::vector<int64_t>& keys, const std::vector<float>& vals) {
    if (vals.size() != keys.size())
        throw Error("22023", "deltas must have one value per key",
                    "There are " + std::to_string(keys.size()) + " keys and " + std::to_string(vals.size()) +
                        " deltas.");
    impl_->send_add("hopper_ps_add", keys, vals.data(), vals.size());
}

void KVTable<float>::AddChunkAsync(const std::vector<int64_t>& chunk_ids, const std::vector<float>& flat) {
    impl_->send_add("hopper_ps_add_chunk", chunk_ids, flat.data(), flat.size());
}

void KVTable<float>::ClockAsync() { impl_->send("hopper_ps_clock", nullptr, nullptr, Impl::Pending::Clock, nullptr); }

void KVTable<float>::Wait() { impl_->wait(); }

bool KVTable<float>::Outstanding() const { return impl_->pending != Impl::Pending::None; }

void KVTable<float>::Get(const std::vector<int64_t>& keys, std::vector<float>* vals) {
    GetAsync(keys, vals);
    Wait();
}

void KVTable<float>::Add(const std::vector<int64_t>& keys, const std::vector<float>& vals) {
    AddAsync(keys, vals);
    Wait();
}

int64_t KVTable<float>::Clock() {
    ClockAsync();
    Wait();
    return impl_->clock;
}

void KVTable<float>::GetChunk(const std::vector<int64_t>& chunk_ids, std::vector<float>* flat) {
    GetChunkAsync(chunk_ids, flat);
    Wait();
}

void KVTable<float>::AddChunk(const std::vector<int64_t>& chunk_ids, const std::vector<float>& flat) {
    AddChunkAsync(chunk_ids, flat);
    Wait();
}

void KVTable<float>::GetChunk(const std::vector<int64_t>& chunk_ids, const std::vector<std::vector<float>*>& vals) {
    if (vals.size() != chunk_ids.size()) throw Error("22023", "GetChunk needs one output vector per chunk id");
    GetChunk(chunk_ids, &impl_->flat);
    std::size_t at = 0;
    for (std::size_t i = 0; i < chunk_ids.size(); ++i) {
        const std::size_t len = std::size_t(impl_->chunk_length(chunk_ids[i]));
        if (at + len > impl_->flat.size()) throw Error("XX000", "chunk lengths do not match the server's answer");
        vals[i]->assign(impl_->flat.begin() + long(at), impl_->flat.begin() + long(at + len));
        at += len;
    }
}

void KVTable<float>::AddChunk(const std::vector<int64_t>& chunk_ids, const std::vector<std::vector<float>*>& vals) {
    if (vals.size() != chunk_ids.size()) throw Error("22023", "AddChunk needs one value vector per chunk id");
    impl_->flat.clear();
    for (const auto* v : vals) impl_->flat.insert(impl_->flat.end(), v->begin(), v->end());
    AddChunk(chunk_ids, impl_->flat);
}

// ---- PartitionedKVTable ----

PartitionedKVTable::PartitionedKVTable(const std::vector<std::string>& conninfos, const std::string& table,
                                       int worker) {
    if (conninfos.empty()) throw Error("22023", "a partitioned table needs at least one server");
    std::vector<int64_t> map_lo, map_hi;
    for (std::size_t i = 0; i < conninfos.size(); ++i) {
        servers_.emplace_back(conninfos[i], table, worker);
        auto r = servers_.back().connection().query(
            "SELECT coalesce(part, -1) || ' ' || coalesce(array_to_string(map_lo, ' '), '') || ' ; ' ||"
            " coalesce(array_to_string(map_hi, ' '), '') FROM hopper.ps_tables_internal() WHERE name = $1",
            {table});
        const std::string row = r.empty() ? "" : r[0];
        const std::size_t semi = row.find(';');
        std::vector<int64_t> head = numbers_of(row.substr(0, semi == std::string::npos ? row.size() : semi));
        std::vector<int64_t> hi = semi == std::string::npos ? std::vector<int64_t>{} : numbers_of(row.substr(semi + 1));
        const int64_t part = head.empty() ? -1 : head[0];
        std::vector<int64_t> lo(head.begin() + (head.empty() ? 0 : 1), head.end());
        if (part != int64_t(i))
            throw Error("22023",
                        "server " + std::to_string(i + 1) + " does not hold part " + std::to_string(i) +
                            " of parameter table \"" + table + "\"",
                        part < 0 ? "Its table of that name is not a part of a partitioned table."
                                 : "It holds part " + std::to_string(part) + ".",
                        "List the servers in the order of the range map.");
        if (i == 0) {
            map_lo = lo;
            map_hi = hi;
        } else if (lo != map_lo || hi != map_hi) {
            throw Error("22023", "the servers of parameter table \"" + table + "\" disagree on its range map",
                        "Server " + std::to_string(i + 1) + " has another map than server 1.");
        }
        if (servers_.back().consistency() != servers_.front().consistency() ||
            servers_.back().num_workers() != servers_.front().num_workers())
            throw Error("22023", "the parts of parameter table \"" + table + "\" have different settings");
    }
    if (map_lo.size() != conninfos.size() || map_hi.size() != conninfos.size())
        throw Error("22023", "parameter table \"" + table + "\" has " + std::to_string(map_lo.size()) + " parts and " +
                                 std::to_string(conninfos.size()) + " servers were given");
    bounds_ = map_lo;
    bounds_.push_back(map_hi.back());
    keys_.resize(servers_.size());
    vals_.resize(servers_.size());
}

template <class Send>
void PartitionedKVTable::fan_out(Send send) {
    try {
        send();
    } catch (...) {
        // What was sent must still be answered before the connections take anything else.
        try {
            wait_all();
        } catch (...) {}
        throw;
    }
    wait_all();
}

void PartitionedKVTable::wait_all() {
    std::exception_ptr first;
    for (auto& s : servers_) {
        try {
            s.Wait();
        } catch (...) {
            if (!first) first = std::current_exception();
        }
    }
    if (first) std::rethrow_exception(first);
}

void PartitionedKVTable::Get(const std::vector<int64_t>& keys, std::vector<float>* vals) {
    const bool every_server = consistency() == Consistency::SparseSSP;
    for (auto& k : keys_) k.clear();
    std::size_t part = 0;
    for (int64_t key : keys) {
        while (part + 1 < servers_.size() && key >= bounds_[part + 1]) ++part;
        keys_[part].push_back(key);  // keys outside the map: the owning server (or the last) refuses them
    }
    fan_out([&] {
        for (std::size_t i = 0; i < servers_.size(); ++i)
            if (every_server || !keys_[i].empty()) servers_[i].GetAsync(keys_[i], &vals_[i]);
    });
    vals->clear();
    for (std::size_t i = 0; i < servers_.size(); ++i)
        if (!keys_[i].empty()) vals->insert(vals->end(), vals_[i].begin(), vals_[i].end());
}

void PartitionedKVTable::Add(const std::vector<int64_t>& keys, const std::vector<float>& vals) {
    if (vals.size() != keys.size())
        throw Error("22023", "deltas must have one value per key",
                    "There are " + std::to_string(keys.size()) + " keys and " + std::to_string(vals.size()) +
                        " deltas.");
    for (std::size_t i = 0; i < servers_.size(); ++i) {
        keys_[i].clear();
        vals_[i].clear();
    }
    std::size_t part = 0;
    for (std::size_t j = 0; j < keys.size(); ++j) {
        while (part + 1 < servers_.size() && keys[j] >= bounds_[part + 1]) ++part;
        keys_[part].push_back(keys[j]);
        vals_[part].push_back(vals[j]);
    }
    fan_out([&] {
        for (std::size_t i = 0; i < servers_.size(); ++i)
            if (!keys_[i].empty()) servers_[i].AddAsync(keys_[i], vals_[i]);
    });
}

int64_t PartitionedKVTable::Clock() {
    fan_out([&] {
        for (auto& s : servers_) s.ClockAsync();
    });
    return clock();
}

void CreatePartitionedTable(const std::vector<std::string>& conninfos, const std::string& name, const TableOptions& o) {
    if (conninfos.empty()) throw Error("22023", "a partitioned table needs at least one server");
    const int64_t n = int64_t(conninfos.size());
    const int64_t chunks = (o.num_keys + o.chunk_size - 1) / std::max<int64_t>(1, o.chunk_size);
    std::string map = "{";
    int64_t lo = 0;
    for (int64_t i = 0; i < n; ++i) {
        const int64_t hi = i + 1 == n ? o.num_keys : std::min(o.num_keys, (chunks * (i + 1) / n) * o.chunk_size);
        map += (i ? ",\"[" : "\"[") + std::to_string(lo) + "," + std::to_string(hi) + ")\"";
        lo = hi;
    }
    map += "}";
    for (int64_t i = 0; i < n; ++i) {
        Connection c(conninfos[std::size_t(i)]);
        c.query(
            "SELECT hopper.ps_create_part($1, $2::int8range[], $3::integer, $4::integer, $5, $6::integer,"
            " $7::integer, $8::real)",
            {name, map, std::to_string(i), std::to_string(o.chunk_size), consistency_text(o.consistency),
             std::to_string(stale(o.consistency) ? o.staleness : 0), std::to_string(o.num_workers),
             float_text(o.init_value)});
    }
}

bool DropPartitionedTable(const std::vector<std::string>& conninfos, const std::string& name, bool if_exists) {
    bool any = false;
    for (const auto& c : conninfos) any = DropTable(c, name, if_exists) || any;
    return any;
}

const std::string& KVTable<float>::table() const { return impl_->table; }
int KVTable<float>::worker() const { return impl_->worker; }
int64_t KVTable<float>::clock() const { return impl_->clock; }
int64_t KVTable<float>::num_keys() const { return impl_->num_keys; }
int64_t KVTable<float>::chunk_size() const { return impl_->chunk_size; }
int KVTable<float>::num_workers() const { return impl_->num_workers; }
Consistency KVTable<float>::consistency() const { return impl_->consistency; }
int64_t KVTable<float>::chunk_length(int64_t chunk_id) const { return impl_->chunk_length(chunk_id); }
Connection& KVTable<float>::connection() { return impl_->conn; }

}  // namespace hopper::ps
