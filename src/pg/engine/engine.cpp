// What is the same on every engine: choosing the engine, and the checks and reads of the working
// tables that both engines' ModelHoppers share.
#include "pg/engine/engine.h"

#include <cstdio>

#include "hopper/error.h"
#include "hopper/metrics.h"
#include "hopper/state_format.h"
#include "pg/common/schema_version.h"

namespace hopper::pg {

std::unique_ptr<Engine> detect_engine(Spi& spi) {
    if (spi.scalar_bool(
            "SELECT EXISTS (SELECT FROM pg_catalog.pg_extension WHERE extname OPERATOR(pg_catalog.=) 'citus')"))
        return citus_engine();
    return postgres_engine();
}

void refuse_on_worker_node(Spi& spi, const std::string& call) {
    if (!detect_engine(spi)->is_worker_node(spi)) return;
    fail(ErrorKind::FeatureNotSupported, call + " cannot run on a Citus worker node",
         "This session is connected to a worker of a Citus cluster; hopper packs, trains and keeps its registry "
         "on the coordinator.",
         "Connect to the coordinator and call it there.");
}

std::string working_table_stem() {
    static int counter = 0;
    uint32 salt = 0;
    if (!call([&] { return pg_strong_random(&salt, sizeof salt); }))
        fail(ErrorKind::Internal, "could not generate a random working-table name");
    char hex[9];
    std::snprintf(hex, sizeof hex, "%08x", unsigned(salt));
    return "__hopper_" + std::to_string(MyProcPid) + "_" + std::to_string(++counter) + "_" + hex;
}

void check_trained_models(uint64_t came_back, int models) {
    if (came_back != uint64_t(models))
        fail(ErrorKind::Data, "a model did not come back from training",
             std::to_string(models) + " models went into the training statement and " + std::to_string(came_back) +
                 " came back.",
             "A segment of the packed table may have lost all its rows since it was packed; pack it again.");
}

void check_hopped_models(uint64_t moved, int models) {
    if (moved != uint64_t(models))
        fail(ErrorKind::Internal,
             "the hop moved " + std::to_string(moved) + " of " + std::to_string(models) + " models");
}

std::vector<double> evaluate_by_segment(Spi& spi, const TableName& packed, const std::vector<std::string>& states) {
    const std::size_t M = states.size();
    std::vector<EvalTotals> totals(M);
    for (std::size_t i = 0; i < M; ++i)
        totals[i].metric_sums.assign(inspect_state(states[i]).config.compile.metrics.size(), 0.0);
    // evaluate_models_sums has no serial functions, so no partial aggregation across processes:
    // each segment is one whole aggregate in one process (20_training.sql says why). A database not
    // yet updated from 0.1.0 lacks it: evaluate_models per segment then gives means, which are
    // weighted back into sums (exact to the last bit or two, until ALTER EXTENSION hopper UPDATE).
    const bool sums = schema_features().evaluate_models_sums;
    const PackedArrays arrays = packed_array_columns(packed);
    spi.execute_with_large_params(std::string("SELECT d.dist_key, hopper.") +
                                      (sums ? "evaluate_models_sums" : "evaluate_models") + "($1, d." + arrays.x +
                                      ", d." + arrays.y + ") FROM " + packed.quoted() +
                                      " AS d GROUP BY d.dist_key ORDER BY d.dist_key",
                                  {SqlParam::bytea_array(states)});
    for (uint64_t r = 0; r < spi.rows(); ++r) {
        if (spi.is_null(r, 1)) continue;
        const std::vector<double> flat = spi.float8_array(r, 1);
        std::size_t at = 0;
        for (std::size_t i = 0; i < M; ++i) {
            const std::size_t k = totals[i].metric_sums.size();
            EvalTotals segment;
            if (sums) {
                if (at + 3 > flat.size() || std::size_t(flat[at]) != k || at + 3 + k > flat.size())
                    fail(ErrorKind::Internal, "evaluation returned sums that do not match the models");
                segment.count = flat[at + 1];
                segment.loss_sum = flat[at + 2];
                segment.metric_sums.assign(flat.begin() + long(at) + 3, flat.begin() + long(at + 3 + k));
                at += 3 + k;
            } else {
                if (at + 2 + k > flat.size()) fail(ErrorKind::Internal, "evaluation returned too few values");
                segment.count = flat[at];
                segment.loss_sum = segment.count > 0 ? flat[at + 1] * segment.count : 0.0;
                for (std::size_t m = 0; m < k; ++m)
                    segment.metric_sums.push_back(segment.count > 0 ? flat[at + 2 + m] * segment.count : 0.0);
                at += 2 + k;
            }
            totals[i].merge(segment);
        }
    }
    std::vector<double> out;
    for (const EvalTotals& t : totals) {
        out.push_back(t.count);
        out.push_back(t.loss());
        for (std::size_t k = 0; k < t.metric_sums.size(); ++k) out.push_back(t.metric(k));
    }
    return out;
}

bool rows_have_ctids(Spi& spi, const TableName& table) {
    // Heap storage only: another table access method (Citus's columnar) has no TID scans, and
    // SELECT ctid failed with "UPDATE and CTID scans not supported for ColumnarScan" (a Citus sweep).
    return spi.scalar_bool(
        "SELECT c.relkind OPERATOR(pg_catalog.=) ANY ('{r,m}'::pg_catalog.\"char\"[]) AND NOT c.relhassubclass"
        " AND COALESCE(a.amname OPERATOR(pg_catalog.=) 'heap', false)"
        " FROM pg_catalog.pg_class c LEFT JOIN pg_catalog.pg_am a ON a.oid OPERATOR(pg_catalog.=) c.relam"
        " WHERE c.oid OPERATOR(pg_catalog.=) $1::pg_catalog.regclass",
        {SqlParam::text_copy(table.quoted())});
}

bool is_temporary_table(Spi& spi, const TableName& table) {
    return spi.scalar_bool(
        "SELECT c.relpersistence OPERATOR(pg_catalog.=) 't' FROM pg_catalog.pg_class AS c WHERE c.oid "
        "OPERATOR(pg_catalog.=) $1::pg_catalog.regclass",
        {SqlParam::text_copy(table.quoted())});
}

const char* const kPackedColumnsDdl =
    "dist_key pg_catalog.int4 NOT NULL, buffer_id pg_catalog.int4 NOT NULL,"
    " independent_var pg_catalog.float4[] NOT NULL, dependent_var pg_catalog.float4[] NOT NULL,"
    " independent_var_shape pg_catalog.int4[] NOT NULL, dependent_var_shape pg_catalog.int4[] NOT NULL";

std::string store_arrays_uncompressed(const TableName& table) {
    return "ALTER TABLE " + table.quoted() +
           " ALTER COLUMN independent_var SET STORAGE EXTERNAL, ALTER COLUMN dependent_var SET STORAGE EXTERNAL";
}

TableName packing_copy(Spi& spi, const TableName& table, const std::vector<std::string>& columns) {
    const TableName copy{"pg_temp", "__hopper_pack_source"};
    std::string list, order;
    for (std::size_t i = 0; i < columns.size(); ++i) {
        list += (i ? ", " : "") + quote_ident(columns[i]);
        order += (i ? ", " : "") + std::to_string(i + 1);
    }
    spi.execute("CREATE TEMP TABLE " + copy.quoted() + " ON COMMIT DROP AS SELECT " + list + " FROM " + table.quoted() +
                " ORDER BY " + order);
    return copy;
}

std::map<int32_t, std::string> read_model_states(Spi& spi, const TableName& model_output) {
    spi.execute("SELECT mst_key, model_state FROM " + model_output.quoted());
    std::map<int32_t, std::string> out;
    for (uint64_t r = 0; r < spi.rows(); ++r) out[int32_t(spi.integer(r, 0))] = spi.bytes(r, 1);
    return out;
}

}  // namespace hopper::pg
