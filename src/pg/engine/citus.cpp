// Citus (distributed PostgreSQL): a segment is a shard of the packed table, on a worker node.
//
// Packing: the packed table is distributed by dist_key (hash), one segment per shard -- dist_key
// values are chosen so that each falls into a different shard (get_shard_id_for_distribution_column)
// -- or one segment per worker node (segment_placement => 'worker'). Segments are numbered node by
// node, and their dist_key values ascend with the segment index, as on plain PostgreSQL (where
// segment s has dist_key s): segment order is ascending dist_key on both engines, so a model visits
// the same buffers in the same order as on plain PostgreSQL with the same segments, and consecutive
// segments share a node wherever they can (fewer hops cross the network).
//
// Model hopping: model_input and model_output are distributed by dist_key and colocated with the
// packed table; per hop, exactly two statements that Citus runs without the coordinator in the
// data path:
//   training  INSERT INTO model_output SELECT ..., hopper.train_segment(...) FROM packed JOIN
//             model_input USING (dist_key) ... GROUP BY dist_key, mst_key, pos
//             -- pushed down whole: every shard runs its own aggregate, all shards at once (Citus
//             opens one connection per shard task, so the shards of one worker train in parallel
//             too); models waiting for a segment (M > S) pass through on their shard in the same
//             statement (UNION ALL);
//   hop       INSERT INTO model_input SELECT ..., s.next_dist_key, ... FROM model_output JOIN
//             (VALUES ...) AS schedule(pos, next_pos, next_dist_key, next_waiting) ON pos
//             -- a repartitioned INSERT ... SELECT: each worker partitions its model rows by their
//             next dist_key and the workers fetch them from each other directly; only the models
//             that change node cross the network, and nothing passes through the coordinator.
// The schedule is a VALUES list rather than a reference table: a reference table written in the
// run's transaction cannot be read by the per-shard tasks that run over several connections per
// worker ("placements that were modified over multiple connections"), and a permanent one would
// outlive an aborted run. Waiting models sit on the shard of segment 0, where they train next, so
// waiting never moves a model.
//
// Lifecycle: as on plain PostgreSQL, the working tables are created, distributed, used and dropped
// inside one iteration's transaction (Citus's distributed transaction: two-phase commit across
// the nodes). An error, a cancel or a crash rolls the DDL back on every node, so nothing is left
// behind, and a CALL outside a transaction block still commits after every iteration (checkpoints
// are as durable as on plain PostgreSQL). The cost is a few milliseconds of DDL per iteration.
//
// Evaluation: hopper.evaluate_models has an internal (pseudo-type) state, which Citus cannot
// combine across shards (it would pull every buffer to the coordinator), so each shard computes
// hopper.evaluate_models_sums over all models (GROUP BY dist_key: pushed down, one scan of the
// shard) and the coordinator adds the shards' exact sums in dist_key order (evaluate_by_segment,
// as plain PostgreSQL does with its partitions): the same losses and metrics, bit for bit.
//
// Hierarchical combine: partial states stay beside the source's segments, the intermediate level
// runs on the nodes, and the default topology is group = node (CitusCombineStore below).
//
// A distributed source table is packed through an ordered copy on the coordinator (packing_source).
// Packed tables that are not distributed by dist_key (packed before Citus was installed) are
// handled exactly as on plain PostgreSQL.
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "hopper/combine.h"
#include "hopper/error.h"
#include "pg/engine/engine.h"
#include "pg/runtime/scoped_settings.h"

extern "C" {
#include "utils/guc.h"
}

namespace hopper::pg {
namespace {

// Whether a table is hash-distributed by Citus on an int4 column `column` (dist_key by default).
bool distributed_by_dist_key(Spi& spi, const TableName& table, const std::string& column = "dist_key") {
    spi.execute(
        "SELECT pg_catalog.column_to_column_name(p.logicalrelid, p.partkey)::pg_catalog.text,"
        " pg_catalog.format_type(a.atttypid, NULL)"
        " FROM pg_catalog.pg_dist_partition p JOIN pg_catalog.pg_attribute a ON a.attrelid OPERATOR(pg_catalog.=) p.logicalrelid"
        " AND a.attname OPERATOR(pg_catalog.=) pg_catalog.column_to_column_name(p.logicalrelid, p.partkey)"
        " WHERE p.logicalrelid OPERATOR(pg_catalog.=) $1::pg_catalog.regclass AND p.partmethod OPERATOR(pg_catalog.=) 'h'",
        {SqlParam::text_copy(table.quoted())});
    return spi.rows() == 1 && !spi.is_null(0, 0) && spi.text(0, 0) == column && spi.text(0, 1) == "integer";
}

struct Shard {
    int64_t shardid = 0;
    std::string node;  // host:port of its (primary) placement
};

// The shards of a distributed table in shard order (by hash range).
std::vector<Shard> shards_in_order(Spi& spi, const TableName& table) {
    spi.execute(
        "SELECT s.shardid, n.nodename OPERATOR(pg_catalog.||) ':' OPERATOR(pg_catalog.||) n.nodeport::pg_catalog.text"
        " FROM pg_catalog.pg_dist_shard s"
        " JOIN pg_catalog.pg_dist_placement p ON p.shardid OPERATOR(pg_catalog.=) s.shardid"
        " JOIN pg_catalog.pg_dist_node n ON n.groupid OPERATOR(pg_catalog.=) p.groupid"
        " AND n.noderole OPERATOR(pg_catalog.=) 'primary'"
        " WHERE s.logicalrelid OPERATOR(pg_catalog.=) $1::pg_catalog.regclass"
        " ORDER BY s.shardminvalue::pg_catalog.int8, s.shardid",
        {SqlParam::text_copy(table.quoted())});
    std::vector<Shard> out;
    for (uint64_t r = 0; r < spi.rows(); ++r) {
        const int64_t id = spi.integer(r, 0);
        if (!out.empty() && out.back().shardid == id) continue;  // replicated shard: its first placement
        out.push_back({id, spi.text(r, 1)});
    }
    return out;
}

// Ascending dist_key values, one per shard of `shards` in that order: each the smallest value above
// the previous one that falls into its shard (get_shard_id_for_distribution_column). Ascending
// dist_key is segment order on every engine.
std::vector<int32_t> ascending_keys_for(Spi& spi, const TableName& table, const std::vector<int64_t>& shards) {
    std::vector<int32_t> keys;
    int64_t from = 0;
    for (int64_t block = std::max<int64_t>(256, 8 * int64_t(shards.size())); keys.size() < shards.size(); block *= 2) {
        if (from + block > int64_t(INT32_MAX))
            fail(ErrorKind::Internal, "no dist_key values found for the shards of " + table.display());
        spi.execute(
            "SELECT k, pg_catalog.get_shard_id_for_distribution_column($1::pg_catalog.regclass, k)"
            " FROM pg_catalog.generate_series($2::pg_catalog.int4, $3::pg_catalog.int4) AS k ORDER BY k",
            {SqlParam::text_copy(table.quoted()), SqlParam::int4(int32_t(from)),
             SqlParam::int4(int32_t(from + block - 1))});
        for (uint64_t r = 0; r < spi.rows() && keys.size() < shards.size(); ++r)
            if (spi.integer(r, 1) == shards[keys.size()]) keys.push_back(int32_t(spi.integer(r, 0)));
        from += block;
    }
    return keys;
}

// Settings for the statements' work on the workers, which runs in sessions that do not see the
// caller's settings (nor hopper's statement settings): JIT off (hopper's functions are declared
// expensive, so every shard query would be JIT-compiled, for nothing: 0.25 s per shard query), the
// settings the training aggregate reads, and the compression of stored states. Citus sends SET
// LOCAL to every node taking part in the transaction (citus.propagate_set_commands = local);
// leave() undoes them, like a function's SET.
class WorkerSettings : public ScopedSettings {
public:
    explicit WorkerSettings(Spi& spi)
        : ScopedSettings([&spi] {
              spi.execute(
                  "SELECT pg_catalog.current_setting('hopper.segment_cache_mb'),"
                  " pg_catalog.current_setting('default_toast_compression'),"
                  " pg_catalog.current_setting('hopper.progress_run'),"
                  " pg_catalog.current_setting('hopper.shuffle_window_mb')");
              const std::string cache = spi.text(0, 0), compression = spi.text(0, 1), progress = spi.text(0, 2),
                                window = spi.text(0, 3);
              spi.execute("SET LOCAL citus.propagate_set_commands = 'local'");
              spi.execute("SET LOCAL jit = off");
              spi.execute("SET LOCAL hopper.segment_cache_mb = " + quote_literal(cache));
              spi.execute("SET LOCAL hopper.shuffle_window_mb = " + quote_literal(window));
              spi.execute("SET LOCAL default_toast_compression = " + quote_literal(compression));
              // The shard backends report the segments they train in their node's hopper.run_progress.
              spi.execute("SET LOCAL hopper.progress_run = " + quote_literal(progress));
          }) {}
};

// Working tables and statements of one run on Citus.
class CitusHopper final : public ModelHopper {
public:
    CitusHopper(Spi& spi, const TableName& packed, const std::vector<int32_t>& dist_keys, int num_models,
                const std::string& schema)
        : spi_(spi), packed_(packed), dist_keys_(dist_keys), models_(num_models), worker_settings_(spi) {
        const std::string stem = working_table_stem();
        input_ = TableName{schema, stem + "_model_input"};
        output_ = TableName{schema, stem + "_model_output"};
    }

    void begin_iteration(const HopSchedule& sched, int iteration, const std::vector<int32_t>& mst_keys,
                         const std::vector<std::string>& states) override {
        worker_settings_.enter();
        // Distributed by dist_key like the packed table and colocated with it: the training join and
        // the aggregate run inside each shard.
        for (const TableName* t : {&input_, &output_}) {
            spi_.execute(kCreateWorkingTable + t->quoted() +
                         " (mst_key pg_catalog.int4 NOT NULL, pos pg_catalog.int4 NOT NULL,"
                         " dist_key pg_catalog.int4 NOT NULL, waiting pg_catalog.bool NOT NULL,"
                         " model_state pg_catalog.bytea NOT NULL)");
            // Model states are float data: compressing them on every hop costs time and saves nothing.
            spi_.execute("ALTER TABLE " + t->quoted() + " ALTER COLUMN model_state SET STORAGE EXTERNAL");
            spi_.execute(
                "SELECT pg_catalog.create_distributed_table($1::pg_catalog.regclass, 'dist_key',"
                " colocate_with => $2)",
                {SqlParam::text_copy(t->quoted()), SqlParam::text_copy(packed_.quoted())});
        }
        tables_exist_ = true;
        output_filled_ = false;

        // The schedule as a VALUES list: ring position -> next position, its segment's dist_key, and
        // whether a model waits there.
        schedule_ = "(VALUES ";
        for (int p = 0; p < sched.ring_size(); ++p) {
            const int next = sched.next_position(p);
            schedule_ += (p ? ", (" : "(") + std::to_string(p) + ", " + std::to_string(next) + ", " +
                         std::to_string(dist_key_of(sched, next)) + ", " +
                         (sched.segment_of_position(next) < 0 ? "true" : "false") + ")";
        }
        schedule_ += ") AS s(pos, next_pos, next_dist_key, next_waiting)";

        next_position_.clear();
        position_dist_key_.clear();
        for (int p = 0; p < sched.ring_size(); ++p) {
            next_position_.push_back(sched.next_position(p));
            position_dist_key_.push_back(dist_key_of(sched, p));
        }
        std::vector<int32_t> pos, dist, waiting;
        positions_.clear();
        for (int m = 0; m < models_; ++m) {
            const int p = sched.position(m, iteration, 0);
            positions_.push_back(p);
            pos.push_back(p);
            dist.push_back(dist_key_of(sched, p));
            waiting.push_back(sched.segment_of_position(p) < 0 ? 1 : 0);
        }
        spi_.execute(
            "INSERT INTO " + input_.quoted() +
                " (mst_key, pos, dist_key, waiting, model_state) SELECT k, p, d, w OPERATOR(pg_catalog.<>) 0, s FROM " +
                rows_from({"int4", "int4", "int4", "int4", "bytea"}) + " AS m(k, p, d, w, s)",
            {SqlParam::int4_array(mst_keys), SqlParam::int4_array(pos), SqlParam::int4_array(dist),
             SqlParam::int4_array(waiting), SqlParam::bytea_array(states)});
        // Models wait whenever the ring has more positions than segments (more models than segments,
        // or a phased ring whose models queue for the same first segment).
        waiting_models_ = sched.ring_size() > int(dist_keys_.size());
    }

    // The training statement, pushed down to every shard: the join and the aggregate run where the
    // segment's buffers are, ORDER BY buffer_id fixing the order in which they are trained.
    // Emptying the working tables deletes from the occupied shards only (a TRUNCATE goes to all 32 of
    // the default shards every hop).
    void train() override {
        if (output_filled_) spi_.execute("DELETE FROM " + output_.quoted() + " WHERE dist_key " + output_shards_);
        uint64_t rows = spi_.execute(training_sql());
        output_filled_ = true;
        output_shards_ = occupied_shards();
        check_trained_models(rows, models_);
    }

    // The hop: a repartitioned INSERT ... SELECT (workers exchange the model rows directly).
    void hop() override {
        spi_.execute("DELETE FROM " + input_.quoted() + " WHERE dist_key " + occupied_shards());
        uint64_t moved = spi_.execute(hop_sql());
        check_hopped_models(moved, models_);
        for (int& p : positions_) p = next_position_[std::size_t(p)];
    }

    std::vector<std::pair<int32_t, std::optional<int32_t>>> placements() override {
        spi_.execute("SELECT mst_key, dist_key, waiting FROM " + output_.quoted() + " ORDER BY mst_key");
        std::vector<std::pair<int32_t, std::optional<int32_t>>> out;
        for (uint64_t r = 0; r < spi_.rows(); ++r)
            out.emplace_back(int32_t(spi_.integer(r, 0)),
                             spi_.boolean(r, 2) ? std::nullopt : std::optional<int32_t>(int32_t(spi_.integer(r, 1))));
        return out;
    }

    std::map<int32_t, std::string> read_states() override { return read_model_states(spi_, output_); }

    void end_iteration() override {
        if (tables_exist_) spi_.execute("DROP TABLE " + output_.quoted() + ", " + input_.quoted());
        tables_exist_ = false;
        output_filled_ = false;
        worker_settings_.leave();
    }

    std::string training_sql() const {
        const std::string mi = input_.quoted();
        const PackedArrays arrays = packed_array_columns(packed_);
        std::string select =
            "SELECT mi.mst_key, mi.pos, d.dist_key, false AS waiting, hopper.train_segment(mi.model_state, d." +
            arrays.x + ", d." + arrays.y + ", mi.mst_key, d.dist_key ORDER BY d.buffer_id) AS model_state FROM " +
            packed_.quoted() + " AS d JOIN " + mi +
            " AS mi ON d.dist_key OPERATOR(pg_catalog.=) mi.dist_key WHERE NOT mi.waiting AND d.dist_key " +
            occupied_shards() + " GROUP BY d.dist_key, mi.mst_key, mi.pos";
        // Waiting models pass through on their shard. (Citus pushes a UNION ALL down only as a
        // subquery in FROM.)
        if (waiting_models_)
            select = "SELECT t.mst_key, t.pos, t.dist_key, t.waiting, t.model_state FROM (" + select +
                     " UNION ALL SELECT w.mst_key, w.pos, w.dist_key, w.waiting, w.model_state FROM " + mi +
                     " AS w WHERE w.waiting AND w.dist_key " + occupied_shards() + ") AS t";
        return "INSERT INTO " + output_.quoted() + " (mst_key, pos, dist_key, waiting, model_state) " + select;
    }

    std::string hop_sql() const {
        return "INSERT INTO " + input_.quoted() +
               " (mst_key, pos, dist_key, waiting, model_state) SELECT mo.mst_key, s.next_pos, s.next_dist_key,"
               " s.next_waiting, mo.model_state FROM " +
               output_.quoted() + " AS mo JOIN " + schedule_ +
               " ON s.pos OPERATOR(pg_catalog.=) mo.pos WHERE mo.dist_key " + occupied_shards();
    }

    // "= ANY ('{...}')" of the dist_keys where models sit this hop (waiting ones on segment 0's):
    // Citus then sends the training and hop statements to those shards only. Sent to every shard, a
    // hop of one model on the default 32 shards cost 55 ms, and fit 150-200 times what it costs on
    // plain PostgreSQL (a Citus user sweep).
    std::string occupied_shards() const {
        std::set<int32_t> keys;
        for (int p : positions_) keys.insert(position_dist_key_[std::size_t(p)]);
        std::string list;
        for (int32_t k : keys) list += (list.empty() ? "" : ",") + std::to_string(k);
        return "OPERATOR(pg_catalog.=) ANY ('{" + list + "}'::pg_catalog.int4[])";
    }

private:
    // The dist_key a model at ring position p sits on: its segment's, or (waiting) segment 0's,
    // where it trains next.
    int32_t dist_key_of(const HopSchedule& sched, int p) const {
        const int seg = sched.segment_of_position(p);
        return dist_keys_[seg >= 0 ? seg : 0];
    }

    Spi& spi_;
    TableName packed_;
    std::vector<int32_t> dist_keys_;
    int models_;
    TableName input_, output_;
    std::string schedule_;
    std::vector<int> next_position_;          // ring position -> the next (the schedule's rotation)
    std::vector<int32_t> position_dist_key_;  // ring position -> the dist_key of its shard
    std::vector<int> positions_;              // each model's ring position in the hop under way
    std::string output_shards_;               // occupied_shards() of the rows in output_
    bool tables_exist_ = false;
    bool output_filled_ = false;
    bool waiting_models_ = false;
    WorkerSettings worker_settings_;
};

// The hierarchical combine on Citus, for a source distributed by dist_key: the partial states stay
// on the workers, in a table colocated with the source (the partial level is pushed down to every
// shard); the intermediate level first moves each group's states to the shard of the group's
// smallest dist_key (a repartitioned INSERT ... SELECT: with the default topology, group = node,
// they move within their node) and merges them there, one intermediate aggregate per group, pushed
// down (GROUP BY dist_key); only the intermediate states travel to the coordinator for the final
// level. With 2 levels every partial state goes to the coordinator, as on one server.
class CitusCombineStore final : public CombineStore {
public:
    CitusCombineStore(Spi& spi, const TableName& source, const std::string& stem) : spi_(spi), source_(source) {
        // Where CREATE TABLE would put a table (the source's schema when the search path has none).
        const std::string schema = spi.scalar_text("SELECT COALESCE(pg_catalog.current_schema()::pg_catalog.text, $1)",
                                                   {SqlParam::text_copy(source.schema)});
        const std::string unique = working_table_stem() + stem.substr(std::string("__hopper").size());
        partials_ = TableName{schema, unique + "_partials"};
        intermediate_ = TableName{schema, unique + "_intermediate"};
    }

    std::string create(const std::string& partial_sql, const std::vector<SqlParam>& params) override {
        spi_.execute(kCreateWorkingTable + partials_.quoted() +
                     " (dist_key pg_catalog.int4 NOT NULL, state pg_catalog.bytea)");
        distribute(partials_);
        created_partials_ = true;
        WorkerSettings settings(spi_);
        settings.enter();
        spi_.execute("INSERT INTO " + partials_.quoted() + " (dist_key, state) " + partial_sql, params);
        settings.leave();
        return partials_.quoted();
    }

    std::string intermediate(const std::string& kind, const std::vector<int32_t>& keys,
                             const std::vector<int32_t>& groups) override {
        std::map<int32_t, int32_t> representative;  // group -> its smallest dist_key
        for (std::size_t i = 0; i < keys.size(); ++i) {
            auto it = representative.find(groups[i]);
            if (it == representative.end() || keys[i] < it->second) representative[groups[i]] = keys[i];
        }
        // Each producer's group and representative as a VALUES list (as the hop's schedule: Citus
        // plans a repartitioned INSERT ... SELECT with array parameters only outside EXPLAIN).
        std::string moves = "(VALUES ";
        for (std::size_t i = 0; i < keys.size(); ++i)
            moves += (i ? ", (" : "(") + std::to_string(keys[i]) + ", " + std::to_string(groups[i]) + ", " +
                     std::to_string(representative.at(groups[i])) + ")";
        moves += ") AS r(dist_key, grp, rep)";
        spi_.execute(
            kCreateWorkingTable + intermediate_.quoted() +
            " (dist_key pg_catalog.int4 NOT NULL, grp pg_catalog.int4 NOT NULL, member pg_catalog.int4 NOT NULL,"
            " state pg_catalog.bytea)");
        distribute(intermediate_);
        created_intermediate_ = true;
        spi_.execute("INSERT INTO " + intermediate_.quoted() +
                     " (dist_key, grp, member, state) SELECT r.rep, r.grp, p.dist_key, p.state FROM " +
                     partials_.quoted() + " AS p JOIN " + moves + " ON r.dist_key OPERATOR(pg_catalog.=) p.dist_key");
        return "(SELECT m.grp, hopper." + kind + "_intermediate(m.state ORDER BY m.member) AS state FROM " +
               intermediate_.quoted() + " AS m GROUP BY m.dist_key, m.grp)";
    }

    void drop() override {
        if (created_intermediate_) spi_.execute("DROP TABLE " + intermediate_.quoted());
        if (created_partials_) spi_.execute("DROP TABLE " + partials_.quoted());
        created_intermediate_ = created_partials_ = false;
    }

private:
    void distribute(const TableName& t) {
        spi_.execute(
            "SELECT pg_catalog.create_distributed_table($1::pg_catalog.regclass, 'dist_key', colocate_with => $2)",
            {SqlParam::text_copy(t.quoted()), SqlParam::text_copy(source_.quoted())});
    }

    Spi& spi_;
    TableName source_, partials_, intermediate_;
    bool created_partials_ = false, created_intermediate_ = false;
};

class CitusEngine final : public Engine {
public:
    const char* name() const override { return "citus"; }
    bool reads_buffers_locally() const override { return false; }
    bool is_worker_node(Spi& spi) const override {
        return spi.scalar_bool(
            "SELECT COALESCE((SELECT groupid OPERATOR(pg_catalog.>) 0 FROM pg_catalog.pg_dist_local_group), false)");
    }

    // One segment per shard: Citus's shard count (citus.shard_count); one per worker node: the
    // number of nodes that hold shards.
    int default_num_segments(Spi& spi, const std::string& placement) override {
        if (placement == "worker") return std::max(1, shard_nodes(spi));
        return int(spi.scalar_int("SELECT pg_catalog.current_setting('citus.shard_count')::pg_catalog.int4"));
    }

    std::vector<int32_t> create_packed_table(Spi& spi, const TableName& out, int num_segments,
                                             const std::string& placement) override {
        const bool per_worker = placement == "worker";
        int shard_count = num_segments;
        if (per_worker) {
            const int nodes = shard_nodes(spi);
            if (num_segments > nodes)
                fail(ErrorKind::InvalidParameter,
                     "segment_placement 'worker' places at most one segment per worker node",
                     "num_segments is " + std::to_string(num_segments) + " and the cluster has " +
                         std::to_string(nodes) + " node" + (nodes == 1 ? "" : "s") + " that hold shards.",
                     "Use fewer segments, or segment_placement => 'shard' (one segment per shard).");
            shard_count = nodes;  // one shard per node
        }
        spi.execute("CREATE TABLE " + out.quoted() + " (" + kPackedColumnsDdl + ", PRIMARY KEY (dist_key, buffer_id))");
        // The arrays' storage is set before distributing: the shards are created with it. Citus's
        // default colocation puts packed tables with the same number of shards in one colocation
        // group, so they can be joined on dist_key shard by shard (a validation table with its
        // training table, say).
        spi.execute(store_arrays_uncompressed(out));
        spi.execute(
            "SELECT pg_catalog.create_distributed_table($1::pg_catalog.regclass, 'dist_key',"
            " shard_count => $2)",
            {SqlParam::text_copy(out.quoted()), SqlParam::int4(shard_count)});

        // The shards that hold segments: all of them, or the first on each node. Segments are then
        // numbered node by node (nodes in the order of their first shard), so that consecutive
        // segments share a node wherever they can: a hop moves a model from segment s to s + 1, and
        // then only the moves across a node boundary cross the network (W of S per hop, not S).
        std::vector<Shard> shards = shards_in_order(spi, out);
        std::vector<std::string> node_order;
        std::map<std::string, std::vector<int64_t>> on_node;
        int taken = 0;
        for (const Shard& s : shards) {
            if (taken == num_segments) break;
            auto& list = on_node[s.node];
            if (per_worker && !list.empty()) continue;
            if (list.empty()) node_order.push_back(s.node);
            list.push_back(s.shardid);
            ++taken;
        }
        if (taken != num_segments)
            fail(ErrorKind::Internal, "Citus placed " + std::to_string(shards.size()) + " shards of " + out.display() +
                                          " on too few nodes for " + std::to_string(num_segments) + " segments");
        std::vector<int64_t> segment_shards;
        for (const std::string& node : node_order)
            for (int64_t id : on_node[node]) segment_shards.push_back(id);
        return ascending_keys_for(spi, out, segment_shards);
    }

    // Rows go to their shards through Citus's INSERT ... SELECT from a staging table.
    std::unique_ptr<PackedWriter> packed_writer(Spi& spi, const TableName& table,
                                                const std::vector<int32_t>& dist_keys) override {
        return staged_packed_writer(spi, table, dist_keys);
    }

    // A table Citus manages (distributed, reference) is read through a temporary copy on the
    // coordinator, ordered by the columns' values: shard scans come back in any order and ctids repeat
    // from shard to shard. (Packing reads every row on the coordinator anyway.) Other tables as on
    // plain PostgreSQL.
    TableName packing_source(Spi& spi, const TableName& table, const std::vector<std::string>& columns) override {
        if (!spreads_table(spi, table)) return postgres_engine()->packing_source(spi, table, columns);
        return packing_copy(spi, table, columns);
    }

    bool spreads_table(Spi& spi, const TableName& table) const override {
        return spi.scalar_int(
                   "SELECT pg_catalog.count(*) FROM pg_catalog.pg_dist_partition"
                   " WHERE logicalrelid OPERATOR(pg_catalog.=) $1::pg_catalog.regclass",
                   {SqlParam::text_copy(table.quoted())}) > 0;
    }

    std::unique_ptr<ModelHopper> model_hopper(Spi& spi, const TableName& packed, const std::vector<int32_t>& dist_keys,
                                              int num_models, const std::string& schema) override {
        if (!distributed_by_dist_key(spi, packed)) {
            // A coordinator table trains as on one server; one Citus manages otherwise (a reference
            // table, one distributed by another column) in the backend alone: its parallel workers
            // cannot read it. The same models either way.
            std::unique_ptr<ModelHopper> local =
                postgres_engine()->model_hopper(spi, packed, dist_keys, num_models, schema);
            if (spreads_table(spi, packed)) local->train_in_backend_only();
            return local;
        }
        return std::make_unique<CitusHopper>(spi, packed, dist_keys, num_models, schema);
    }

    // Per shard, hopper.evaluate_models_sums over all models (pushed down: GROUP BY dist_key, one
    // scan of the shard's buffers); the coordinator adds the shards' exact sums in dist_key order
    // (evaluate_by_segment), as on plain PostgreSQL.
    std::vector<double> evaluate(Spi& spi, const TableName& packed, const std::vector<std::string>& states,
                                 int workers) override {
        if (!distributed_by_dist_key(spi, packed)) return postgres_engine()->evaluate(spi, packed, states, workers);
        WorkerSettings settings(spi);
        settings.enter();
        std::vector<double> out = evaluate_by_segment(spi, packed, states);
        settings.leave();
        return out;
    }

    // Partial states beside the source's segments when the source is distributed by an int4 dist_key;
    // otherwise (a coordinator table, rows from elsewhere) as on one server.
    std::unique_ptr<CombineStore> combine_store(Spi& spi, const std::optional<TableName>& source,
                                                const std::string& dist_key_column, const std::string& stem) override {
        if (!source || !distributed_by_dist_key(spi, *source, dist_key_column))
            return postgres_engine()->combine_store(spi, source, dist_key_column, stem);
        return std::make_unique<CitusCombineStore>(spi, *source, stem);
    }

    // Group = node: each segment's group is the worker node holding its shard.
    std::vector<SegmentPlacement> default_topology(Spi& spi, const TableName& table,
                                                   const std::string& dist_key_column) override {
        if (!distributed_by_dist_key(spi, table, dist_key_column)) return {};
        spi.execute("SELECT DISTINCT " + quote_ident(dist_key_column) + " FROM " + table.quoted() + " WHERE " +
                    quote_ident(dist_key_column) + " IS NOT NULL");
        std::vector<int32_t> keys;
        for (uint64_t r = 0; r < spi.rows(); ++r) keys.push_back(int32_t(spi.integer(r, 0)));
        spi.execute(
            "SELECT k, n.nodename OPERATOR(pg_catalog.||) ':' OPERATOR(pg_catalog.||) n.nodeport::pg_catalog.text"
            " FROM pg_catalog.unnest($2::pg_catalog.int4[]) AS k"
            " JOIN pg_catalog.pg_dist_placement p"
            " ON p.shardid OPERATOR(pg_catalog.=) pg_catalog.get_shard_id_for_distribution_column($1::pg_catalog.regclass, k)"
            " JOIN pg_catalog.pg_dist_node n ON n.groupid OPERATOR(pg_catalog.=) p.groupid"
            " AND n.noderole OPERATOR(pg_catalog.=) 'primary' ORDER BY k",
            {SqlParam::text_copy(table.quoted()), SqlParam::int4_array(keys)});
        std::vector<SegmentPlacement> out;
        for (uint64_t r = 0; r < spi.rows(); ++r) {
            const int32_t k = int32_t(spi.integer(r, 0));
            if (!out.empty() && out.back().dist_key == k) continue;  // replicated shard: its first placement
            const std::string node = spi.text(r, 1);
            out.push_back({k, node, node});
        }
        return out;
    }

private:
    // Nodes that hold shards of new distributed tables.
    static int shard_nodes(Spi& spi) {
        return int(
            spi.scalar_int("SELECT pg_catalog.count(*) FROM pg_catalog.pg_dist_node WHERE isactive"
                           " AND noderole OPERATOR(pg_catalog.=) 'primary' AND shouldhaveshards"));
    }
};

}  // namespace

std::unique_ptr<Engine> citus_engine() { return std::make_unique<CitusEngine>(); }

}  // namespace hopper::pg
