// hopper_ps_tool: drives parameter tables from separate processes for the concurrency tests
// (test/scripts/ps_*.sh) and the throughput benchmark (bench/ps_throughput.sh).
//
//   hopper_ps_tool check CONNINFO TABLE WORKER ITERATIONS KEYS [SEED]
//       Each iteration: Get keys 0..KEYS-1 (alternately with Get and GetChunk), check the values
//       against the table's consistency, sleep 0-2 ms at random, Add 1 to every key (alternately
//       with Add and AddChunk), Clock. With N workers all doing this from clock 0, a Get at clock c
//       must see exactly N*c under BSP, between N*(c-s) and N*(c+s+1) under SSP(s), and anything from
//       c (this worker's own Adds) to N*ITERATIONS under ASP and SparseSSP (where a worker that has
//       not written yet is not waited for; test/scripts/ps_sparse_ssp.sh tests its waits).
//   hopper_ps_tool bench CONNINFO TABLE WORKER OP KEYS_PER_CALL SECONDS
//       OP: get, add, get_chunk or add_chunk over keys 0..KEYS_PER_CALL-1 (chunks: the first
//       KEYS_PER_CALL/chunk_size chunks). Prints "OP KEYS_PER_CALL CALLS SECONDS KEYS_PER_SECOND".
//   hopper_ps_tool expect-error CONNINFO TABLE WORKER SQLSTATE OP [KEYS...]
//       Runs one operation and succeeds only if it fails with SQLSTATE (client-side errors included).
//   hopper_ps_tool create-parts CONNINFOS TABLE NUM_KEYS CHUNK_SIZE CONSISTENCY STALENESS WORKERS
//       Creates a table split over the servers of CONNINFOS (conninfo strings separated by commas).
// check and bench take CONNINFOS too: with more than one server they drive the partitioned table
// (PartitionedKVTable; key operations only).
// Exit status 0 on success; 1 with a message on stderr otherwise.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "hopper/kvtable.h"

using hopper::ps::Consistency;
using hopper::ps::KVTable;
using hopper::ps::PartitionedKVTable;

namespace {

int usage() {
    std::fprintf(
        stderr,
        "usage: hopper_ps_tool check CONNINFO TABLE WORKER ITERATIONS KEYS [SEED]\n"
        "       hopper_ps_tool bench CONNINFO TABLE WORKER OP KEYS_PER_CALL SECONDS\n"
        "       hopper_ps_tool expect-error CONNINFO TABLE WORKER SQLSTATE OP [KEYS...]\n"
        "       hopper_ps_tool create-parts CONNINFOS TABLE NUM_KEYS CHUNK_SIZE CONSISTENCY STALENESS WORKERS\n");
    return 2;
}

std::vector<std::string> split_servers(const std::string& s) {
    std::vector<std::string> out;
    std::size_t at = 0;
    for (;;) {
        const std::size_t comma = s.find(',', at);
        out.push_back(s.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
        if (comma == std::string::npos) return out;
        at = comma + 1;
    }
}

// Chunk operations exist on a table of one server only.
void get_chunks(KVTable<float>& t, const std::vector<int64_t>& ids, std::vector<float>* v) { t.GetChunk(ids, v); }
void add_chunks(KVTable<float>& t, const std::vector<int64_t>& ids, const std::vector<float>& v) { t.AddChunk(ids, v); }
void get_chunks(PartitionedKVTable&, const std::vector<int64_t>&, std::vector<float>*) {}
void add_chunks(PartitionedKVTable&, const std::vector<int64_t>&, const std::vector<float>&) {}
std::string staleness_of(KVTable<float>& t) {
    auto r = t.connection().query("SELECT staleness FROM hopper.ps_tables WHERE name = $1", {t.table()});
    return r.empty() ? "0" : r[0];
}
std::string staleness_of(PartitionedKVTable& t) { return staleness_of(t.server(0)); }

template <class Table>
int check_table(Table& t, int worker, int iterations, int64_t keys, unsigned seed, bool chunked) {
    const int n = t.num_workers();
    std::vector<int64_t> key_ids(static_cast<std::size_t>(keys));
    for (int64_t k = 0; k < keys; ++k) key_ids[std::size_t(k)] = k;
    std::vector<int64_t> chunk_ids;
    for (int64_t c = 0; c * t.chunk_size() < keys; ++c) chunk_ids.push_back(c);
    const bool chunks_cover = chunked && int64_t(chunk_ids.size()) * t.chunk_size() == keys;
    std::mt19937 rng(seed * 7919u + unsigned(worker));
    std::uniform_int_distribution<int> sleep_us(0, 2000);
    const std::vector<float> ones(static_cast<std::size_t>(keys), 1.0f);
    int64_t staleness = 0;
    if (t.consistency() == Consistency::SSP || t.consistency() == Consistency::SparseSSP)
        staleness = std::atoll(staleness_of(t).c_str());
    std::vector<float> vals;
    for (int it = 0; it < iterations; ++it) {
        const int64_t c = t.clock();
        if (chunks_cover && it % 2 == 1) get_chunks(t, chunk_ids, &vals);
        else t.Get(key_ids, &vals);
        if (int64_t(vals.size()) != keys) {
            std::fprintf(stderr, "worker %d: got %zu values for %lld keys\n", worker, vals.size(), (long long)keys);
            return 1;
        }
        for (int64_t k = 0; k < keys; ++k) {
            const double v = vals[std::size_t(k)];
            double lo = 0, hi = 0;
            switch (t.consistency()) {
                case Consistency::BSP: lo = hi = double(n) * double(c); break;
                case Consistency::SSP:
                    lo = double(n) * double(std::max<int64_t>(0, c - staleness));
                    hi = double(n) * double(c + staleness + 1);
                    break;
                case Consistency::SparseSSP:
                    // A Get waits only for the workers that had written the keys' chunks when it
                    // read; one that had not started yet is neither waited for nor waits, so any
                    // worker may be far ahead or behind: ASP's bounds (docs/parameter_server.md).
                    lo = double(c);
                    hi = double(n) * double(iterations);
                    break;
                case Consistency::ASP:
                    lo = double(c);
                    hi = double(n) * double(iterations);
                    break;
            }
            if (v < lo || v > hi) {
                if (lo == hi)
                    std::fprintf(stderr, "worker %d at clock %lld: key %lld is %g, expected %g\n", worker, (long long)c,
                                 (long long)k, v, lo);
                else
                    std::fprintf(stderr, "worker %d at clock %lld: key %lld is %g, expected between %g and %g\n",
                                 worker, (long long)c, (long long)k, v, lo, hi);
                return 1;
            }
        }
        std::this_thread::sleep_for(std::chrono::microseconds(sleep_us(rng)));
        if (chunks_cover && it % 2 == 0) add_chunks(t, chunk_ids, ones);
        else t.Add(key_ids, ones);
        const int64_t next = t.Clock();
        if (next != c + 1) {
            std::fprintf(stderr, "worker %d: Clock returned %lld after clock %lld\n", worker, (long long)next,
                         (long long)c);
            return 1;
        }
    }
    std::printf("worker %d: %d iterations ok\n", worker, iterations);
    return 0;
}

int check(int argc, char** argv) {
    if (argc < 7) return usage();
    const int worker = std::atoi(argv[4]);
    const int iterations = std::atoi(argv[5]);
    const int64_t keys = std::atoll(argv[6]);
    const unsigned seed = argc > 7 ? unsigned(std::atoi(argv[7])) : 1u;
    const std::vector<std::string> servers = split_servers(argv[2]);
    if (servers.size() > 1) {
        PartitionedKVTable t(servers, argv[3], worker);
        return check_table(t, worker, iterations, keys, seed, false);
    }
    KVTable<float> t(argv[2], argv[3], worker);
    return check_table(t, worker, iterations, keys, seed, true);
}

template <class Table>
int bench_table(Table& t, const std::string& op, int64_t per_call, double seconds) {
    std::vector<int64_t> ids;
    const bool chunked = op == "get_chunk" || op == "add_chunk";
    if (chunked) {
        for (int64_t c = 0; c < std::max<int64_t>(1, per_call / t.chunk_size()); ++c) ids.push_back(c);
    } else {
        for (int64_t k = 0; k < per_call; ++k) ids.push_back(k);
    }
    int64_t keys_per_call = chunked ? int64_t(ids.size()) * t.chunk_size() : per_call;
    std::vector<float> vals, deltas(static_cast<std::size_t>(keys_per_call), 0.001f);
    const auto start = std::chrono::steady_clock::now();
    int64_t calls = 0;
    double elapsed = 0;
    do {
        for (int i = 0; i < 16; ++i, ++calls) {
            if (op == "get") t.Get(ids, &vals);
            else if (op == "add") t.Add(ids, deltas);
            else if (op == "get_chunk") get_chunks(t, ids, &vals);
            else if (op == "add_chunk") add_chunks(t, ids, deltas);
            else return usage();
        }
        elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    } while (elapsed < seconds);
    std::printf("%s %lld %lld %.3f %.0f\n", op.c_str(), (long long)keys_per_call, (long long)calls, elapsed,
                double(calls) * double(keys_per_call) / elapsed);
    return 0;
}

int bench(int argc, char** argv) {
    if (argc < 8) return usage();
    const std::string op = argv[5];
    const std::vector<std::string> servers = split_servers(argv[2]);
    if (servers.size() > 1) {
        if (op == "get_chunk" || op == "add_chunk") return usage();
        PartitionedKVTable t(servers, argv[3], std::atoi(argv[4]));
        return bench_table(t, op, std::atoll(argv[6]), std::atof(argv[7]));
    }
    KVTable<float> t(argv[2], argv[3], std::atoi(argv[4]));
    return bench_table(t, op, std::atoll(argv[6]), std::atof(argv[7]));
}

int create_parts(int argc, char** argv) {
    if (argc < 9) return usage();
    hopper::ps::TableOptions o;
    o.num_keys = std::atoll(argv[4]);
    o.chunk_size = std::atoll(argv[5]);
    const std::string c = argv[6];
    o.consistency = c == "ssp"          ? Consistency::SSP
                    : c == "asp"        ? Consistency::ASP
                    : c == "sparse_ssp" ? Consistency::SparseSSP
                                        : Consistency::BSP;
    o.staleness = std::atoi(argv[7]);
    o.num_workers = std::atoi(argv[8]);
    hopper::ps::CreatePartitionedTable(split_servers(argv[2]), argv[3], o);
    return 0;
}

int expect_error(int argc, char** argv) {
    if (argc < 7) return usage();
    const std::string want = argv[5], op = argv[6];
    std::vector<int64_t> ids;
    for (int i = 7; i < argc; ++i) ids.push_back(std::atoll(argv[i]));
    try {
        KVTable<float> t(argv[2], argv[3], std::atoi(argv[4]));
        std::vector<float> vals;
        if (op == "get") t.Get(ids, &vals);
        else if (op == "add") t.Add(ids, std::vector<float>(ids.size(), 1.0f));
        else if (op == "add_short") t.Add(ids, std::vector<float>(ids.size() + 1, 1.0f));
        else if (op == "get_chunk") t.GetChunk(ids, &vals);
        else if (op == "clock") t.Clock();
        else return usage();
    } catch (const hopper::ps::Error& e) {
        if (e.sqlstate() == want) {
            std::printf("%s: %s\n", e.sqlstate().c_str(), e.message().c_str());
            return 0;
        }
        std::fprintf(stderr, "expected SQLSTATE %s, got %s: %s\n", want.c_str(), e.sqlstate().c_str(), e.what());
        return 1;
    }
    std::fprintf(stderr, "expected SQLSTATE %s, but %s succeeded\n", want.c_str(), op.c_str());
    return 1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) return usage();
    const std::string cmd = argv[1];
    try {
        if (cmd == "check") return check(argc, argv);
        if (cmd == "bench") return bench(argc, argv);
        if (cmd == "expect-error") return expect_error(argc, argv);
        if (cmd == "create-parts") return create_parts(argc, argv);
    } catch (const hopper::ps::Error& e) {
        std::fprintf(stderr, "error %s: %s\n", e.sqlstate().c_str(), e.what());
        return 1;
    }
    return usage();
}
