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

enum class Consistency { BSP, SSP, ASP };

struct TableOptions {
    int64_t num_keys = 0;                     // keys 0 .. num_keys-1
    int64_t chunk_size = 1;                   // chunk c = keys [c*chunk_size, (c+1)*chunk_size)
    Consistency consistency = Consistency::BSP;
    int staleness = 0;                        // SSP only
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

}  // namespace hopper::ps
