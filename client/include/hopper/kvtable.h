// hopper parameter-server client: reach a hopper parameter table (hopper.ps_create) from a C++
// program over libpq, with a FlexPS-like API.
//
//   hopper::ps::TableOptions opt;
//   opt.num_keys = 7850; opt.chunk_size = 785; opt.consistency = hopper::ps::Consistency::SSP;
//   opt.staleness = 2; opt.num_workers = 4;
//   hopper::ps::CreateTable("dbname=postgres", "weights", opt);
//
//   hopper::ps::KVTable<float> table("dbname=postgres", "weights", /*worker=*/0);
//   std::vector<float> w;
//   table.Get(keys, &w);            // waits as the table's consistency requires
//   table.Add(keys, deltas);        // value += delta
//   table.Clock();                  // end of this worker's iteration
//
// Each KVTable holds its own connection (one database session = one worker; a worker id belongs to
// one session at a time). Keys and chunk ids must be sorted and unique. Keys and values travel
// packed in bytea (hopper.ps_*_bytes), so no per-element conversion happens on either side.
// Errors are thrown as hopper::ps::Error with the server's SQLSTATE.
// A KVTable is not thread-safe; use one per thread or process.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace hopper::ps {

// An error from the server (sqlstate as PostgreSQL reports it, e.g. "42704") or from the client
// ("08006" for a lost connection, "22023" for arguments the client rejects itself).
class Error : public std::runtime_error {
public:
    Error(std::string sqlstate, std::string message, std::string detail = {}, std::string hint = {});
    const std::string& sqlstate() const noexcept { return sqlstate_; }
    const std::string& message() const noexcept { return message_; }
    const std::string& detail() const noexcept { return detail_; }
    const std::string& hint() const noexcept { return hint_; }

private:
    std::string sqlstate_, message_, detail_, hint_;
};

enum class Consistency { BSP, SSP, ASP, SparseSSP };

struct TableOptions {
    int64_t num_keys = 0;    // keys 0 .. num_keys-1
    int64_t chunk_size = 1;  // chunk c = keys [c*chunk_size, (c+1)*chunk_size)
    Consistency consistency = Consistency::BSP;
    int staleness = 0;  // SSP and SparseSSP
    int num_workers = 1;
    float init_value = 0.0f;
};

// A libpq connection (opened with an ordinary connection string such as "host=/tmp dbname=x").
// Server notices (NOTICE, WARNING) are dropped rather than printed to stderr.
class Connection {
public:
    explicit Connection(const std::string& conninfo);
    ~Connection();
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;
    Connection(Connection&&) noexcept;
    Connection& operator=(Connection&&) noexcept;

    // Runs a statement with text parameters (NULL-free) and returns the first column of each row.
    std::vector<std::string> query(const std::string& sql, const std::vector<std::string>& params = {});
    void* raw() const { return conn_; }  // the PGconn*

private:
    void* conn_ = nullptr;
};

void CreateTable(Connection& conn, const std::string& name, const TableOptions& options);
void CreateTable(const std::string& conninfo, const std::string& name, const TableOptions& options);
// Returns false if the table did not exist and if_exists is set.
bool DropTable(Connection& conn, const std::string& name, bool if_exists = false);
bool DropTable(const std::string& conninfo, const std::string& name, bool if_exists = false);

template <typename Val>
class KVTable;

template <>
class KVTable<float> {
public:
    // Connects and reads the table's settings (Error 42704 if it does not exist, 22023 if worker
    // is not one of its workers). The worker is bound to this connection at its first operation.
    KVTable(const std::string& conninfo, std::string table, int worker);
    ~KVTable();
    KVTable(const KVTable&) = delete;
    KVTable& operator=(const KVTable&) = delete;
    KVTable(KVTable&&) noexcept;
    KVTable& operator=(KVTable&&) noexcept;

    // vals receives one value per key, in key order.
    void Get(const std::vector<int64_t>& keys, std::vector<float>* vals);
    // value += delta, one delta per key.
    void Add(const std::vector<int64_t>& keys, const std::vector<float>& vals);
    // Ends this worker's iteration; returns its new clock.
    int64_t Clock();

    // Asynchronous forms: send the operation and return at once, so that the program computes while
    // the server answers (and, under BSP/SSP, while it waits for slower workers); Wait() completes
    // it -- vals receives the values of a Get then -- and throws its error. One operation at a time:
    // any other call while one is outstanding throws 55000. The synchronous calls are these plus Wait().
    void GetAsync(const std::vector<int64_t>& keys, std::vector<float>* vals);
    void GetChunkAsync(const std::vector<int64_t>& chunk_ids, std::vector<float>* flat);
    void AddAsync(const std::vector<int64_t>& keys, const std::vector<float>& vals);
    void AddChunkAsync(const std::vector<int64_t>& chunk_ids, const std::vector<float>& flat);
    void ClockAsync();
    void Wait();
    bool Outstanding() const;

    // Chunk form: vals[i] receives (or holds) the values of chunk chunk_ids[i] (chunk_size values,
    // fewer for a chunk at the end of a key range).
    void GetChunk(const std::vector<int64_t>& chunk_ids, const std::vector<std::vector<float>*>& vals);
    void AddChunk(const std::vector<int64_t>& chunk_ids, const std::vector<std::vector<float>*>& vals);
    // Flat chunk form: all chunks' values one after another.
    void GetChunk(const std::vector<int64_t>& chunk_ids, std::vector<float>* flat);
    void AddChunk(const std::vector<int64_t>& chunk_ids, const std::vector<float>& flat);

    const std::string& table() const;
    int worker() const;
    int64_t clock() const;  // this worker's clock as of its last Clock (or the table's at connect)
    int64_t num_keys() const;
    int64_t chunk_size() const;
    int num_workers() const;
    Consistency consistency() const;
    // Number of keys in chunk `chunk_id` (0 if it holds none).
    int64_t chunk_length(int64_t chunk_id) const;
    Connection& connection();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

using KVClientTable = KVTable<float>;

// One logical table whose keys are split over several PostgreSQL servers (FlexPS's range manager):
// server i holds part i of the range map (hopper.ps_create_part; CreatePartitionedTable makes them).
// Get and Add go, all at once, to the servers owning the keys (values come back in key order); Clock
// goes to every server. Under SparseSSP a Get goes to every server (with no keys where it reads
// none), since it also ends the worker's previous iteration there. The constructor checks that
// server i holds part i of one and the same map (22023 otherwise). An error on any server is thrown
// once every server has answered; a server that is gone throws 08006 at once, and a worker gone from
// a server makes the others' waits there end with 55000 -- never a wait past statement_timeout.
class PartitionedKVTable {
public:
    PartitionedKVTable(const std::vector<std::string>& conninfos, const std::string& table, int worker);
    void Get(const std::vector<int64_t>& keys, std::vector<float>* vals);
    void Add(const std::vector<int64_t>& keys, const std::vector<float>& vals);
    int64_t Clock();

    int num_servers() const { return int(servers_.size()); }
    KVTable<float>& server(int i) { return servers_.at(std::size_t(i)); }
    int64_t clock() const { return servers_.front().clock(); }
    int num_workers() const { return servers_.front().num_workers(); }
    Consistency consistency() const { return servers_.front().consistency(); }
    int64_t chunk_size() const { return servers_.front().chunk_size(); }
    // The first key of each part, then the end of the last.
    const std::vector<int64_t>& boundaries() const { return bounds_; }

private:
    // Sends with `send` (asynchronous calls to some servers), then waits for every answer; the first
    // error is thrown once every server has answered.
    template <class Send>
    void fan_out(Send send);
    // Waits for every server that has an operation outstanding; rethrows the first error.
    void wait_all();
    std::vector<KVTable<float>> servers_;
    std::vector<int64_t> bounds_;
    std::vector<std::vector<int64_t>> keys_;
    std::vector<std::vector<float>> vals_;
};

// Creates the parts of table `name` on the servers: keys 0 .. num_keys-1 split into as many ranges
// as servers, of equal size rounded to whole chunks.
void CreatePartitionedTable(const std::vector<std::string>& conninfos, const std::string& name,
                            const TableOptions& options);
bool DropPartitionedTable(const std::vector<std::string>& conninfos, const std::string& name, bool if_exists = false);

}  // namespace hopper::ps
