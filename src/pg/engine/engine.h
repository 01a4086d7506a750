// Where segments live and which statements hopper issues for them. One implementation per engine
// -- plain PostgreSQL (segments are partitions, trained by parallel workers), Citus (segments are
// shards on worker nodes) -- chosen once per call by detect_engine(); nothing else in hopper asks
// which engine it runs on.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hopper/combine.h"
#include "hopper/schedule.h"
#include "pg/common/names.h"
#include "pg/common/spi.h"

namespace hopper::pg {

class StateStore;

// What a ModelHopper offers when all its segments are partitions on this server and the run's states
// can live in its shared area: then one group of processes can train every hop of an iteration, the
// models handed from process to process in shared memory (training/hop_workers.h), instead of two
// statements per hop starting fresh parallel workers and passing the models through tables.
struct LocalSegments {
    Spi* spi = nullptr;
    TableName packed;
    std::vector<int32_t> dist_keys;
    StateStore* store = nullptr;  // one slot per model, in the order of the run's states
    // The backend trains every segment itself: parallel workers cannot read the packed table (a
    // table Citus manages but does not distribute by dist_key: "cannot use 2PC in transactions
    // involving multiple servers", a Citus sweep).
    bool backend_only = false;
};

// The working tables (model_input, model_output) and the two statements per hop of one run.
class ModelHopper {
public:
    virtual ~ModelHopper() = default;
    // Creates the working tables for an iteration and places every model at its ring position.
    virtual void begin_iteration(const HopSchedule& schedule, int iteration, const std::vector<int32_t>& mst_keys,
                                 const std::vector<std::string>& states) = 0;
    // The training statement: each model on a segment trains on that segment's buffers (in
    // buffer_id order); waiting models pass through. Raises if a model did not come back.
    virtual void train() = 0;
    // The hop: every model moves one ring position on.
    virtual void hop() = 0;
    // (mst_key, dist_key or nullopt while waiting) after the last training statement.
    virtual std::vector<std::pair<int32_t, std::optional<int32_t>>> placements() = 0;
    // The models after the last training statement, by mst_key.
    virtual std::map<int32_t, std::string> read_states() = 0;
    // Drops the working tables.
    virtual void end_iteration() = 0;
    // The segments and state store for training an iteration without the statements (`states`: the
    // iteration's, to size the store), or nullopt: on Citus, where a hop crosses machines, and where
    // the run's area has no room for the states.
    // Segments that only the backend can read (LocalSegments::backend_only).
    virtual void train_in_backend_only() {}
    virtual std::optional<LocalSegments> local_segments(const std::vector<std::string>& states) {
        (void)states;
        return std::nullopt;
    }
};

// Where the hierarchical combine (combine.cpp) keeps a run's partial states, and how its
// intermediate level runs.
class CombineStore {
public:
    virtual ~CombineStore() = default;
    // Creates the relation of partial states (dist_key int4, state bytea) from `partial_sql`, a
    // SELECT of those two columns (one row per producing segment) using `params`; returns its name.
    virtual std::string create(const std::string& partial_sql, const std::vector<SqlParam>& params) = 0;
    // A FROM item (grp int4, state bytea): the intermediate level, one state per group, made by
    // hopper.<kind>_intermediate over the group's partial states in dist_key order. `keys` and
    // `groups` give every producer's dist_key and its group's index; the statement the FROM item
    // goes into passes the same two arrays as $1 and $2.
    virtual std::string intermediate(const std::string& kind, const std::vector<int32_t>& keys,
                                     const std::vector<int32_t>& groups) = 0;
    // Drops what create and intermediate made.
    virtual void drop() = 0;
};

// Writes the buffers of a packed table that Engine::create_packed_table made (hopper.preprocess).
class PackedWriter {
public:
    virtual ~PackedWriter() = default;
    // Whether it writes without SQL statements: only then may preprocess read rows in parallel
    // workers meanwhile (a backend in parallel mode may start no command).
    virtual bool writes_without_statements() const = 0;
    // One buffer of `rows` rows: `x` and `y` are float4[] values of rows x x_dim and rows x y_dim,
    // stored as they are; its shapes are {rows, x_dim} and {rows, y_dim}.
    virtual void write(int32_t dist_key, int32_t buffer_id, Datum x, Datum y, int rows, int x_dim, int y_dim) = 0;
    // Also keep each buffer it writes in the server's cache of detoasted buffers
    // (shared_buffer_cache.h) while the buffer is at hand. Writers whose buffers end up elsewhere
    // (another node's shards) ignore it.
    virtual void keep_written_buffers() {}
    // After the last buffer: later statements see the rows. Nothing to undo on an error (the
    // transaction's abort closes what the writer opened).
    virtual void finish() = 0;
};

class Engine {
public:
    virtual ~Engine() = default;
    virtual const char* name() const = 0;
    // Whether this server's own processes read the packed buffers a run trains on (plain
    // PostgreSQL's partitions), so that the run may read them ahead into its cache (read_ahead.h);
    // not where segments are shards read on other nodes.
    virtual bool reads_buffers_locally() const = 0;
    // Whether this server runs parts of queries a coordinator sent (a Citus worker): hopper's
    // registry, on the coordinator, is not here.
    virtual bool is_worker_node(Spi&) const { return false; }
    // Whether the engine spreads `table` over other nodes (a Citus distributed or reference table):
    // parallel workers cannot read it (Citus refuses them), so a group of processes training a
    // local table leaves its evaluation to statements.
    virtual bool spreads_table(Spi&, const TableName&) const { return false; }
    // Segments of a new packed table when hopper.preprocess is not told how many. `placement` is
    // preprocess's segment_placement: "" (the engine's default), "shard" or "worker".
    virtual int default_num_segments(Spi& spi, const std::string& placement) = 0;
    // Creates an empty packed table for num_segments segments (columns dist_key, buffer_id,
    // independent_var, dependent_var, independent_var_shape, dependent_var_shape) and returns the
    // dist_key value of each segment, in segment order. On every engine the values ascend with the
    // segment index, so ascending dist_key is segment order -- the order models visit segments in --
    // whatever values an engine picks.
    virtual std::vector<int32_t> create_packed_table(Spi& spi, const TableName& table, int num_segments,
                                                     const std::string& placement) = 0;
    // The writer of the buffers of `table`, just made by create_packed_table (`dist_keys`: its result).
    virtual std::unique_ptr<PackedWriter> packed_writer(Spi& spi, const TableName& table,
                                                        const std::vector<int32_t>& dist_keys) = 0;
    // Where hopper.preprocess reads a source table's rows by row identifier (ctid): the table itself,
    // or a temporary copy of `columns` (packing_copy: a partitioned table, a view or a foreign table;
    // on Citus, a table spread over shards, whose ctids repeat from shard to shard), made in an order
    // that does not depend on where rows sit, so that the same seed packs the same buffers. The
    // caller drops a copy when done.
    virtual TableName packing_source(Spi& spi, const TableName& table, const std::vector<std::string>& columns) = 0;
    virtual std::unique_ptr<ModelHopper> model_hopper(Spi& spi, const TableName& packed,
                                                      const std::vector<int32_t>& dist_keys, int num_models,
                                                      const std::string& schema) = 0;
    // Evaluates every model over a packed table in one scan and returns hopper.evaluate_models'
    // result: per model, the row count, the loss and the metrics. `workers` is the number of
    // segments worth scanning at once.
    virtual std::vector<double> evaluate(Spi& spi, const TableName& packed, const std::vector<std::string>& states,
                                         int workers) = 0;
    // The hierarchical combine's storage for one combine. `source` is the table whose segments
    // produce the partial states (none: rows from elsewhere), distributed by `dist_key_column`;
    // `stem` names the relations (unique among the session's combines in progress).
    virtual std::unique_ptr<CombineStore> combine_store(Spi& spi, const std::optional<TableName>& source,
                                                        const std::string& dist_key_column,
                                                        const std::string& stem) = 0;
    // Where the segments of a table sit, as the hierarchical combine's topology when none is given:
    // on Citus every segment's node, each node its own group; empty on plain PostgreSQL (one
    // server: one group).
    virtual std::vector<SegmentPlacement> default_topology(Spi& spi, const TableName& table,
                                                           const std::string& dist_key_column) = 0;
};

// The stem of a run's working tables (model_input, model_output, ...), which live in the output's
// schema: the backend's pid and a counter, and 8 random hex digits, so that no other role can create
// an object of the name in advance (pid and counter are visible in pg_stat_activity; a composite type
// of the name made the run fail with 42P07 -- a hostile review).
std::string working_table_stem();

// What every engine checks after its statements: every model came back from the training statement
// (a segment that lost all its rows since it was packed trains nothing), and the hop moved every
// model (anything else is a bug).
void check_trained_models(uint64_t came_back, int models);
void check_hopped_models(uint64_t moved, int models);

// Evaluates every model over a packed table one segment per process (both engines: GROUP BY
// dist_key, so a segment's aggregate runs whole where its rows are) with hopper.evaluate_models_sums,
// and adds the segments' exact sums up in dist_key order: per model, the row count, the loss and the
// metrics (Engine::evaluate's result), the same whatever ran where. The caller sets up the plan.
std::vector<double> evaluate_by_segment(Spi& spi, const TableName& packed, const std::vector<std::string>& states);

// The states in a model_output working table, by mst_key (both engines' ModelHopper::read_states).
std::map<int32_t, std::string> read_model_states(Spi& spi, const TableName& model_output);

// A packed table's columns as CREATE TABLE declares them (both engines, and Citus's staging table),
// and the statement that stores its arrays out of line, uncompressed (float data hardly compresses;
// uncompressed out-of-line storage reads several times faster). Even where it compresses, writing
// costs more: Fashion-MNIST's packed buffers (pixels / 255, half zeros) take 2.6x less room with lz4,
// but an INSERT of the 235 buffers took 0.63 s against 0.53 s uncompressed, and reading them back
// 140 ms against 97 ms (2026-11-29, AMD EPYC family 25).
extern const char* const kPackedColumnsDdl;

// How every working table (model_input/model_output and their partitions or shards, combine's
// partials) is created: logged. PostgreSQL 15's crash recovery can fail to start the server after a
// crash while unlogged relations are created or truncated (BUG #17731: "could not create file ...:
// File exists"), and working tables were created every iteration and truncated every hop: a kill -9
// of a Citus worker's backend during fit_multiple left that worker down in 2 kills of 4.
inline const std::string kCreateWorkingTable = "CREATE TABLE ";
std::string store_arrays_uncompressed(const TableName& table);

// Writes a packed table's buffers straight into its partitions, one per dist_key (packed_writers.cpp).
std::unique_ptr<PackedWriter> heap_packed_writer(const std::vector<TableName>& partitions,
                                                 const std::vector<int32_t>& dist_keys, const TableName& parent);
// Writes them into a temporary table, then into `table` with one INSERT ... SELECT (an engine whose
// tables SQL alone writes: Citus routes the rows to their shards).
std::unique_ptr<PackedWriter> staged_packed_writer(Spi& spi, const TableName& table,
                                                   const std::vector<int32_t>& dist_keys);

// Whether ctids identify a table's rows, so that hopper.preprocess can read them by ctid: a plain
// table or materialized view stored as heap; not a partitioned table (its partitions repeat ctids), a
// view, a foreign table or another table access method (no TID scans).
bool rows_have_ctids(Spi& spi, const TableName& table);
// Whether a table is temporary: its pages sit in the session's own buffers, which parallel workers
// cannot read.
bool is_temporary_table(Spi& spi, const TableName& table);
// A temporary copy (ON COMMIT DROP) of `columns` of `table` to pack from, ordered by their values so
// that the same seed packs the same buffers wherever the rows sit (Engine::packing_source).
TableName packing_copy(Spi& spi, const TableName& table, const std::vector<std::string>& columns);

// The engine of the current database: Citus when the citus extension is installed in it, else plain
// PostgreSQL.
std::unique_ptr<Engine> detect_engine(Spi& spi);
// Refuses (0A000) packing or training in a session on a Citus worker node (Citus MX): hopper creates
// its distributed tables and keeps its summaries and registry on the coordinator, and a worker
// refused them halfway with Citus's own XX000 or looked for a summary it cannot see (a Citus sweep).
// `call` names the function, e.g. "hopper.fit".
void refuse_on_worker_node(Spi& spi, const std::string& call);
// The engines themselves (postgres.cpp, citus.cpp). Citus uses plain PostgreSQL's for
// packed tables it does not distribute (tables packed before Citus was installed).
std::unique_ptr<Engine> postgres_engine();
std::unique_ptr<Engine> citus_engine();

}  // namespace hopper::pg
