// Plain PostgreSQL: a segment is a partition of the packed table (partitioned by LIST (dist_key)),
// and the segments of a statement run in parallel workers.
#include <algorithm>
#include <climits>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "hopper/error.h"
#include "pg/engine/engine.h"
#include "pg/runtime/scoped_settings.h"
#include "pg/runtime/state_store.h"

extern "C" {
#include "executor/executor.h"
#include "utils/rel.h"
}

namespace hopper::pg {
namespace {

// Working tables and statements of one run on plain PostgreSQL.
class PostgresHopper final : public ModelHopper {
public:
    PostgresHopper(Spi& spi, const TableName& packed, const std::vector<int32_t>& dist_keys, int num_models,
                   const std::string& schema)
        : spi_(spi), packed_(packed), dist_keys_(dist_keys), models_(num_models) {
        const std::string stem = working_table_stem();
        input_ = TableName{schema, stem + "_model_input"};
        output_ = TableName{schema, stem + "_model_output"};
        // Qualified with pg_temp: an unqualified name could resolve to a same-named table in a schema
        // the caller put before pg_temp in the search_path.
        schedule_ = "pg_temp." + quote_ident(stem + "_schedule");
    }

    // Creates the working tables for one iteration and places the models.
    void begin_iteration(const HopSchedule& sched, int iteration, const std::vector<int32_t>& mst_keys,
                         const std::vector<std::string>& states) override {
        const int S = int(dist_keys_.size());
        spi_.execute("CREATE TABLE " + input_.quoted() +
                     " (mst_key pg_catalog.int4 NOT NULL, pos pg_catalog.int4 NOT NULL, dist_key pg_catalog.int4,"
                     " model_state pg_catalog.bytea NOT NULL) PARTITION BY LIST (dist_key)");
        for (int s = 0; s < S; ++s)
            spi_.execute(kCreateWorkingTable + input_.with_suffix("_p" + std::to_string(s)).quoted() +
                         " PARTITION OF " + input_.quoted() + " FOR VALUES IN (" + std::to_string(dist_keys_[s]) + ")");
        // Waiting models (when there are more models than segments) sit in the NULL partition. It
        // always exists and takes part in the training statement, because its parallel_workers
        // setting is how the Parallel Append gets one worker per segment (set_parallel_workers:
        // the leader only gathers): PostgreSQL 15 otherwise plans at most log2(S) + 1 workers, and
        // partitioned tables cannot set parallel_workers.
        spi_.execute(kCreateWorkingTable + input_.with_suffix("_waiting").quoted() + " PARTITION OF " +
                     input_.quoted() + " FOR VALUES IN (NULL) WITH (parallel_workers = " + std::to_string(S) + ")");
        // Model states are float data: compressing them on every hop costs time and saves nothing.
        spi_.execute("ALTER TABLE " + input_.quoted() + " ALTER COLUMN model_state SET STORAGE EXTERNAL");

        // The schedule: the fixed rotation of ring positions, and the segment of each position.
        spi_.execute("CREATE TEMP TABLE " + schedule_ +
                     " (pos pg_catalog.int4 PRIMARY KEY, next_pos pg_catalog.int4 NOT NULL,"
                     " next_dist_key pg_catalog.int4) ON COMMIT DROP");
        std::vector<int32_t> pos, next_pos, next_dist;
        for (int p = 0; p < sched.ring_size(); ++p) {
            pos.push_back(p);
            next_pos.push_back(sched.next_position(p));
            int seg = sched.segment_of_position(sched.next_position(p));
            next_dist.push_back(seg >= 0 ? dist_keys_[seg] : INT32_MIN);
        }
        spi_.execute("INSERT INTO " + schedule_ + " SELECT p, n, " + null_if("d", "-2147483648") + " FROM " +
                         rows_from({"int4", "int4", "int4"}) + " AS s(p, n, d)",
                     {SqlParam::int4_array(pos), SqlParam::int4_array(next_pos), SqlParam::int4_array(next_dist)});

        // The states go into the run's shared area and the table gets references (state_store.h).
        open_store(states);
        std::vector<std::string> placed;
        if (store_) {
            placed.reserve(states.size());
            for (std::size_t m = 0; m < states.size(); ++m) placed.push_back(store_->put(int(m), states[m]));
        }
        std::vector<int32_t> model_pos, model_dist;
        for (int m = 0; m < models_; ++m) {
            int p = sched.position(m, iteration, 0);
            model_pos.push_back(p);
            int seg = sched.segment_of_position(p);
            model_dist.push_back(seg >= 0 ? dist_keys_[seg] : INT32_MIN);
        }
        spi_.execute("INSERT INTO " + input_.quoted() + " SELECT k, p, " + null_if("d", "-2147483648") + ", s FROM " +
                         rows_from({"int4", "int4", "int4", "bytea"}) + " AS m(k, p, d, s)",
                     {SqlParam::int4_array(mst_keys), SqlParam::int4_array(model_pos), SqlParam::int4_array(model_dist),
                      SqlParam::bytea_array(store_ ? placed : states)});
        prepared_ = false;
    }

    // The training statement as CREATE TABLE AS: PostgreSQL 15 runs it in parallel (Parallel Append
    // of per-segment aggregates, through partitionwise join and aggregation over model_input
    // partitioned like the packed table), while INSERT ... SELECT would always run serially.
    // ORDER BY buffer_id fixes the order in which a segment's buffers are trained, whatever plan
    // PostgreSQL picks (an incremental sort, for one, does not keep the scan order).
    void train() override {
        if (output_exists_) {
            spi_.execute("DROP TABLE " + output_.quoted());
            output_exists_ = false;
        }
        const PackedArrays arrays = packed_array_columns(packed_);
        std::string sql =
            kCreateWorkingTable + output_.quoted() +
            " AS SELECT mi.mst_key, mi.pos, d.dist_key, hopper.train_segment(mi.model_state, d." + arrays.x + ", d." +
            arrays.y + ", mi.mst_key, d.dist_key ORDER BY d.buffer_id) AS model_state FROM " + packed_.quoted() +
            " AS d JOIN " + input_.quoted() +
            " AS mi ON d.dist_key OPERATOR(pg_catalog.=) mi.dist_key GROUP BY d.dist_key, mi.mst_key, mi.pos";
        sql +=
            " UNION ALL SELECT mst_key, pos, dist_key, model_state FROM " + input_.quoted() + " WHERE dist_key IS NULL";
        set_parallel_workers(std::min<int>(models_, int(dist_keys_.size())));
        uint64_t rows = spi_.execute(sql);
        output_exists_ = true;
        check_trained_models(rows, models_);
    }

    // The hop: each model moves one ring position on.
    void hop() override {
        if (!prepared_) {
            truncate_ = "TRUNCATE " + input_.quoted();
            hop_ = spi_.prepare("INSERT INTO " + input_.quoted() +
                                    " SELECT mo.mst_key, s.next_pos, s.next_dist_key,"
                                    " mo.model_state FROM " +
                                    output_.quoted() + " AS mo JOIN " + schedule_ +
                                    " AS s ON s.pos OPERATOR(pg_catalog.=) mo.pos",
                                {});
            prepared_ = true;
        }
        spi_.execute(truncate_);
        uint64_t moved = spi_.execute(hop_, {});
        check_hopped_models(moved, models_);
    }

    // Where each model is now (for the debug record).
    std::vector<std::pair<int32_t, std::optional<int32_t>>> placements() override {
        spi_.execute("SELECT mst_key, dist_key FROM " + output_.quoted() + " ORDER BY mst_key");
        std::vector<std::pair<int32_t, std::optional<int32_t>>> out;
        for (uint64_t r = 0; r < spi_.rows(); ++r)
            out.emplace_back(int32_t(spi_.integer(r, 0)),
                             spi_.is_null(r, 1) ? std::nullopt : std::optional<int32_t>(int32_t(spi_.integer(r, 1))));
        return out;
    }

    std::map<int32_t, std::string> read_states() override {
        std::map<int32_t, std::string> states = read_model_states(spi_, output_);
        if (store_)
            for (auto& entry : states) entry.second = store_->get(entry.second);
        return states;
    }

    // Parallel workers cannot read a temporary table (its pages sit in the session's own buffers): a
    // temporary packed table keeps to the statements, which the planner then runs serially.
    std::optional<LocalSegments> local_segments(const std::vector<std::string>& states) override {
        if (!temporary_) temporary_ = is_temporary_table(spi_, packed_);
        open_store(states);
        if (!store_ || *temporary_) return std::nullopt;
        return LocalSegments{&spi_, packed_, dist_keys_, store_.get(), backend_only_};
    }

    void train_in_backend_only() override { backend_only_ = true; }

    void end_iteration() override {
        if (output_exists_) spi_.execute("DROP TABLE " + output_.quoted());
        output_exists_ = false;
        spi_.execute("DROP TABLE " + input_.quoted());
        spi_.execute("DROP TABLE " + schedule_);
        hop_.reset();
        prepared_ = false;
    }

private:
    void open_store(const std::vector<std::string>& states) {
        if (store_tried_) return;
        std::size_t largest = 0;
        for (const std::string& st : states) largest = std::max(largest, st.size());
        store_ = StateStore::open(models_, largest);
        store_tried_ = true;
    }

    bool backend_only_ = false;
    Spi& spi_;
    TableName packed_;
    std::vector<int32_t> dist_keys_;
    int models_;
    TableName input_, output_;
    std::string schedule_;
    bool output_exists_ = false;
    bool prepared_ = false;
    std::string truncate_;
    Prepared hop_;
    std::unique_ptr<StateStore> store_;
    bool store_tried_ = false;
    std::optional<bool> temporary_;
};

// The hierarchical combine on one server: partial states in a temporary table, every level here.
class TempCombineStore final : public CombineStore {
public:
    TempCombineStore(Spi& spi, const std::string& stem) : spi_(spi), name_("pg_temp." + quote_ident(stem)) {}

    std::string create(const std::string& partial_sql, const std::vector<SqlParam>& params) override {
        // The parameters may carry a model state (data-parallel training): keep it out of the plan.
        spi_.execute_with_large_params("CREATE TEMP TABLE " + name_ + " ON COMMIT DROP AS " + partial_sql, params);
        return name_;
    }

    std::string intermediate(const std::string& kind, const std::vector<int32_t>&,
                             const std::vector<int32_t>&) override {
        return "(SELECT g.grp, hopper." + kind + "_intermediate(p.state ORDER BY p.dist_key) AS state FROM " + name_ +
               " AS p JOIN ROWS FROM (pg_catalog.unnest($1::pg_catalog.int4[]), pg_catalog.unnest($2::pg_catalog.int4[]))"
               " AS g(dist_key, grp) ON g.dist_key OPERATOR(pg_catalog.=) p.dist_key GROUP BY g.grp)";
    }

    void drop() override { spi_.execute("DROP TABLE " + name_); }

private:
    Spi& spi_;
    std::string name_;
};

// Segment s of a packed table is its partition <table>_p<s>, holding dist_key s.
TableName partition_of(const TableName& packed, int segment) {
    return packed.with_suffix("_p" + std::to_string(segment));
}

class PostgresEngine final : public Engine {
public:
    const char* name() const override { return "postgresql"; }
    bool reads_buffers_locally() const override { return true; }

    // One segment per CPU: segments train in parallel workers. (All segments sit on this one
    // server, so segment_placement changes nothing here.)
    int default_num_segments(Spi&, const std::string&) override {
        unsigned n = std::thread::hardware_concurrency();
        return int(std::clamp(n == 0 ? 1u : n, 1u, 64u));
    }

    std::vector<int32_t> create_packed_table(Spi& spi, const TableName& out, int num_segments,
                                             const std::string&) override {
        spi.execute("CREATE TABLE " + out.quoted() + " (" + kPackedColumnsDdl +
                    ", PRIMARY KEY (dist_key, buffer_id)) PARTITION BY LIST (dist_key)");
        std::vector<int32_t> dist_keys;
        for (int s = 0; s < num_segments; ++s) {
            TableName part = partition_of(out, s);
            require_absent(part, "partition");
            spi.execute("CREATE TABLE " + part.quoted() + " PARTITION OF " + out.quoted() + " FOR VALUES IN (" +
                        std::to_string(s) + ")");
            dist_keys.push_back(s);
        }
        spi.execute(store_arrays_uncompressed(out));
        return dist_keys;
    }

    std::unique_ptr<PackedWriter> packed_writer(Spi&, const TableName& table,
                                                const std::vector<int32_t>& dist_keys) override {
        std::vector<TableName> parts;
        for (std::size_t seg = 0; seg < dist_keys.size(); ++seg) parts.push_back(partition_of(table, int(seg)));
        return heap_packed_writer(parts, dist_keys, table);
    }

    TableName packing_source(Spi& spi, const TableName& table, const std::vector<std::string>& columns) override {
        return rows_have_ctids(spi, table) ? table : packing_copy(spi, table, columns);
    }

    std::unique_ptr<ModelHopper> model_hopper(Spi& spi, const TableName& packed, const std::vector<int32_t>& dist_keys,
                                              int num_models, const std::string& schema) override {
        return std::make_unique<PostgresHopper>(spi, packed, dist_keys, num_models, schema);
    }

    // One segment per process, like training (evaluate_by_segment): a parallel scan shared the
    // buffers of a segment between processes unevenly (a packed partition holds its ~120 buffers in
    // one or two heap pages), 59 + 176 of 235 buffers on Fashion-MNIST, so two segments evaluated
    // hardly faster than one.
    std::vector<double> evaluate(Spi& spi, const TableName& packed, const std::vector<std::string>& states,
                                 int workers) override {
        set_parallel_workers(workers);
        return evaluate_by_segment(spi, packed, states);
    }

    std::unique_ptr<CombineStore> combine_store(Spi& spi, const std::optional<TableName>&, const std::string&,
                                                const std::string& stem) override {
        return std::make_unique<TempCombineStore>(spi, stem);
    }

    std::vector<SegmentPlacement> default_topology(Spi&, const TableName&, const std::string&) override { return {}; }
};

}  // namespace

std::unique_ptr<Engine> postgres_engine() { return std::make_unique<PostgresEngine>(); }

}  // namespace hopper::pg
