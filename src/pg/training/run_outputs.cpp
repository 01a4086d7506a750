#include "pg/training/run_outputs.h"

#include <cmath>
#include <set>

#include "hopper/error.h"
#include "hopper/state_format.h"
#include "pg/common/output_tables.h"
#include "pg/common/schema_version.h"
#include "pg/common/settings.h"

namespace hopper::pg {

namespace {

std::string json_array(const std::vector<double>& v) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) {
        s += i ? "," : "";
        s += std::isfinite(v[i]) ? format_number(v[i], 17) : "null";
    }
    return s + "]";
}

std::string metrics_json(const std::vector<Metric>& names, const std::vector<std::vector<double>>& values) {
    std::string s = "{";
    for (std::size_t k = 0; k < names.size(); ++k)
        s += (k ? ",\"" : "\"") + std::string(to_string(names[k])) + "\":" + json_array(values[k]);
    return s + "}";
}

std::vector<double> first_metric(const std::vector<std::vector<double>>& m) {
    return m.empty() ? std::vector<double>{} : m[0];
}

// The info table's model_type (MADlib's column): networks over image inputs are CNNs, the others
// dense networks, as in hopper 0.1.0.
const char* model_type(const Architecture& arch) { return arch.image_input() ? "hopper_cnn" : "hopper_mlp"; }

SqlParam final_or_null(const std::vector<double>& v) {
    return v.empty() || !std::isfinite(v.back()) ? SqlParam::null(FLOAT8OID) : SqlParam::float8(v.back());
}

// The summary's metrics_iters: the iterations at which any model was evaluated. fit's models share
// theirs, but fit_automl's trials stop at different rungs (the first trial's alone left out the
// longest trials' last iteration).
std::vector<int> evaluated_iterations(const std::vector<ModelHistory>& history) {
    std::set<int> all;
    for (const ModelHistory& h : history) all.insert(h.iterations.begin(), h.iterations.end());
    return {all.begin(), all.end()};
}

}  // namespace

std::string replaceable_outputs(Spi& spi, const TableName& output) {
    const std::optional<std::string> token = output_token(spi, output, "model");
    if (!token && !schema_features().output_tables)
        fail(ErrorKind::ObjectNotInPrerequisiteState, "warm start needs the hopper objects of this database updated",
             "hopper replaces only tables it can prove it created, and this database's hopper objects keep no record "
             "of them.",
             "Run ALTER EXTENSION hopper UPDATE (it marks the outputs of completed runs), or start from a checkpoint "
             "with warm_start_checkpoint or warm_start_run.");
    if (!token)
        fail(
            ErrorKind::ObjectNotInPrerequisiteState,
            "model output table " + output.display() + " was not created by hopper",
            "A warm start replaces the model output table and its _info, _summary and _hops tables, and hopper "
            "replaces only tables it created (they carry its mark in their comment and a row in hopper.output_tables).",
            "Warm start from a table written by fit, fit_multiple, fit_data_parallel or materialize_checkpoint, or "
            "start from a checkpoint with warm_start_checkpoint or warm_start_run.");
    require_droppable(output, "model output table");
    require_no_dependents(spi, output, "model output table");
    for (const CompanionTable& c : kCompanionTables) {
        require_replaceable(spi, output.with_suffix(c.suffix), c.kind, *token, c.what);
        require_no_dependents(spi, output.with_suffix(c.suffix), c.what);
    }
    return *token;
}

void write_run_outputs(Spi& spi, const RunOutputs& outputs) {
    const RunRequest& req = *outputs.req;
    const TableName& packed = outputs.packed;
    const TableName& output = outputs.output;
    const TableName info_table = output.with_suffix("_info");
    const TableName summary_table = output.with_suffix("_summary");
    const TableName hops_table = output.with_suffix("_hops");
    const PackedInfo& info = *outputs.info;
    const std::optional<PackedInfo>& vinfo = *outputs.validation;
    const std::vector<ModelSpec>& models = *outputs.models;
    const std::vector<int32_t>& mst_keys = *outputs.mst_keys;
    const std::vector<std::string>& states = *outputs.states;
    const std::vector<ModelHistory>& history = *outputs.history;
    const int M = int(models.size());
    const int S = int(info.dist_keys.size());
    const double train_seconds = outputs.train_seconds, hop_seconds = outputs.hop_seconds,
                 eval_seconds = outputs.eval_seconds;
    const std::string& started_at = outputs.started_at;
    if (req.warm_start) {
        // Checked again: the tables may have changed while the run trained.
        if (replaceable_outputs(spi, output) != outputs.replaced_token)
            fail(ErrorKind::ObjectNotInPrerequisiteState,
                 "model output table " + output.display() + " was replaced while the warm start trained",
                 "It is not the table the run started from.", "Run the warm start again.");
        spi.execute("DROP TABLE " + output.quoted());
        for (const CompanionTable& c : kCompanionTables)
            if (table_exists(output.with_suffix(c.suffix)))
                spi.execute("DROP TABLE " + output.with_suffix(c.suffix).quoted());
        forget_output_tables(spi, outputs.replaced_token);
    } else {
        // Claimed against hopper's other calls when the run started (run_lock.h), but a plain CREATE
        // TABLE may have taken a name since.
        std::vector<std::pair<TableName, const char*>> written = {{output, "model output table"}};
        for (const CompanionTable& c : kCompanionTables) written.emplace_back(output.with_suffix(c.suffix), c.what);
        for (const auto& [table, what] : written)
            if (table_exists(table) || type_exists(table))
                fail(ErrorKind::DuplicateTable,
                     std::string(what) + " " + table.display() + " was created while the run trained",
                     outputs.run_id ? "The checkpoints of training run " + std::to_string(outputs.run_id) + " are kept."
                                    : "",
                     outputs.run_id ? "Its models are in hopper.checkpoints_expanded WHERE run_id = " +
                                          std::to_string(outputs.run_id) +
                                          " (hopper.materialize_checkpoint writes one as a model table)."
                                    : "Drop it, or choose another name.");
    }
    const std::string token = new_output_token(spi);
    const std::string run_text = outputs.run_id ? " of training run " + std::to_string(outputs.run_id) : "";
    spi.execute(
        "CREATE TABLE " + output.quoted() +
        " (mst_key pg_catalog.int4 PRIMARY KEY, model_id pg_catalog.int4, model_state pg_catalog.bytea NOT NULL,"
        " model_arch pg_catalog.jsonb NOT NULL, compile_params pg_catalog.text NOT NULL,"
        " fit_params pg_catalog.text NOT NULL, model_config pg_catalog.jsonb NOT NULL)");
    spi.execute("ALTER TABLE " + output.quoted() + " ALTER COLUMN model_state SET STORAGE EXTERNAL");
    const std::optional<int64_t> run_id = outputs.run_id ? std::optional<int64_t>(outputs.run_id) : std::nullopt;
    record_output_table(spi, output, "model", token, "hopper model output" + run_text, run_id);
    {
        std::vector<int32_t> model_ids;
        std::vector<std::string> archs, compiles, fits, configs;
        std::vector<int32_t> has_id;
        for (const ModelSpec& m : models) {
            model_ids.push_back(m.model_id.value_or(INT32_MIN));
            archs.push_back(m.arch_json);
            compiles.push_back(m.compile_text);
            fits.push_back(m.fit_text);
            configs.push_back(m.config.to_json());
        }
        spi.execute("INSERT INTO " + output.quoted() + " SELECT k, " + null_if("i", "-2147483648") +
                        ", s, a::pg_catalog.jsonb, c, f, g::pg_catalog.jsonb"
                        " FROM " +
                        rows_from({"int4", "int4", "bytea", "text", "text", "text", "text"}) +
                        " AS t(k, i, s, a, c, f, g)",
                    {SqlParam::int4_array(mst_keys), SqlParam::int4_array(model_ids), SqlParam::bytea_array(states),
                     SqlParam::text_array(archs), SqlParam::text_array(compiles), SqlParam::text_array(fits),
                     SqlParam::text_array(configs)});
    }

    spi.execute("CREATE TABLE " + info_table.quoted() +
                " (mst_key pg_catalog.int4 PRIMARY KEY, model_id pg_catalog.int4, compile_params pg_catalog.text,"
                " fit_params pg_catalog.text, model_type pg_catalog.text, model_size pg_catalog.float8,"
                " num_params pg_catalog.int8, metrics_elapsed_time pg_catalog.float8[], metrics_type pg_catalog.text[],"
                " loss_type pg_catalog.text, training_metrics_final pg_catalog.float8,"
                " training_loss_final pg_catalog.float8, training_metrics pg_catalog.float8[],"
                " training_loss pg_catalog.float8[], validation_metrics_final pg_catalog.float8,"
                " validation_loss_final pg_catalog.float8, validation_metrics pg_catalog.float8[],"
                " validation_loss pg_catalog.float8[], metrics_iters pg_catalog.int4[],"
                " training_metrics_all pg_catalog.jsonb, validation_metrics_all pg_catalog.jsonb,"
                " status pg_catalog.text NOT NULL, steps pg_catalog.int8, samples_seen pg_catalog.int8)");
    record_output_table(spi, info_table, "model_info", token, "hopper learning curves" + run_text, run_id);
    Prepared insert_info =
        spi.prepare("INSERT INTO " + info_table.quoted() +
                        " VALUES ($1, $2, $3, $4, $24, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,"
                        " $19::pg_catalog.jsonb, $20::pg_catalog.jsonb, $21, $22, $23)",
                    {INT4OID,        INT4OID,      TEXTOID,   TEXTOID,        FLOAT8OID,      INT8OID,
                     FLOAT8ARRAYOID, TEXTARRAYOID, TEXTOID,   FLOAT8OID,      FLOAT8OID,      FLOAT8ARRAYOID,
                     FLOAT8ARRAYOID, FLOAT8OID,    FLOAT8OID, FLOAT8ARRAYOID, FLOAT8ARRAYOID, INT4ARRAYOID,
                     TEXTOID,        TEXTOID,      TEXTOID,   INT8OID,        INT8OID,        TEXTOID});
    for (int i = 0; i < M; ++i) {
        const ModelSpec& m = models[i];
        const ModelHistory& h = history[i];
        const StateSummary st = inspect_state(states[i]);
        std::vector<std::string> metric_names;
        for (Metric x : m.config.compile.metrics) metric_names.push_back(to_string(x));
        const std::vector<double> tm = first_metric(h.training_metrics), vm = first_metric(h.validation_metrics);
        spi.execute(insert_info,
                    {SqlParam::int4(m.mst_key),
                     m.model_id ? SqlParam::int4(*m.model_id) : SqlParam::null(INT4OID),
                     SqlParam::text(m.compile_text),
                     SqlParam::text(m.fit_text),
                     SqlParam::float8(double(st.bytes) / 1024.0),
                     SqlParam::int8(int64_t(st.num_params)),
                     SqlParam::float8_array(h.elapsed),
                     SqlParam::text_array(metric_names),
                     SqlParam::text(to_string(m.config.compile.loss)),
                     final_or_null(tm),
                     final_or_null(h.training_loss),
                     SqlParam::float8_array(tm),
                     SqlParam::float8_array(h.training_loss),
                     vinfo ? final_or_null(vm) : SqlParam::null(FLOAT8OID),
                     vinfo ? final_or_null(h.validation_loss) : SqlParam::null(FLOAT8OID),
                     vinfo ? SqlParam::float8_array(vm) : SqlParam::null(FLOAT8ARRAYOID),
                     vinfo ? SqlParam::float8_array(h.validation_loss) : SqlParam::null(FLOAT8ARRAYOID),
                     SqlParam::int4_array(h.iterations),
                     SqlParam::text_copy(metrics_json(m.config.compile.metrics, h.training_metrics)),
                     vinfo ? SqlParam::text_copy(metrics_json(m.config.compile.metrics, h.validation_metrics))
                           : SqlParam::null(TEXTOID),
                     SqlParam::text(h.status),
                     SqlParam::int8(int64_t(st.counters.steps)),
                     SqlParam::int8(int64_t(st.counters.samples_seen)),
                     SqlParam::text(model_type(m.config.arch))});
    }

    spi.execute(
        "CREATE TABLE " + summary_table.quoted() +
        " (source_table pg_catalog.text, validation_table pg_catalog.text, model_output_table pg_catalog.text,"
        " model_selection_table pg_catalog.text, model_arch_table pg_catalog.text, method pg_catalog.text,"
        " num_iterations pg_catalog.int4, metrics_compute_frequency pg_catalog.int4, training_metrics pg_catalog.text,"
        " warm_start pg_catalog.bool,"
        " name pg_catalog.text, description pg_catalog.text, num_models pg_catalog.int4,"
        " num_segments pg_catalog.int4, dist_keys pg_catalog.int4[], hops_per_iteration pg_catalog.int4,"
        " dependent_varname pg_catalog.text, independent_varname pg_catalog.text,"
        " dependent_vartype pg_catalog.text, response_type pg_catalog.text, class_values pg_catalog.text[],"
        " normalizing_const pg_catalog.float8, scale pg_catalog.text, feature_center pg_catalog.float4[],"
        " feature_spread pg_catalog.float4[], num_rows pg_catalog.int8, metrics_iters pg_catalog.int4[],"
        " training_seconds pg_catalog.float8, hop_seconds pg_catalog.float8, evaluation_seconds pg_catalog.float8,"
        " start_training_time pg_catalog.timestamptz, end_training_time pg_catalog.timestamptz,"
        " hopper_version pg_catalog.text, feature_recipe pg_catalog.jsonb)");
    record_output_table(spi, summary_table, "model_summary", token, "hopper training summary" + run_text, run_id);
    {
        std::vector<double> center(info.feature_center.begin(), info.feature_center.end());
        std::vector<double> spread(info.feature_spread.begin(), info.feature_spread.end());
        std::vector<int32_t> dist_keys(info.dist_keys.begin(), info.dist_keys.end());
        const bool classification = info.response_type == "classification";
        // 0: no fixed number (fit_automl's ring iterations train as many trials as are in a rung).
        const SqlParam hops =
            outputs.hops_per_iteration > 0 ? SqlParam::int4(outputs.hops_per_iteration) : SqlParam::null(INT4OID);
        spi.execute(
            "INSERT INTO " + summary_table.quoted() +
                " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,"
                " $21, $22, $23, $24::pg_catalog.float4[], $25::pg_catalog.float4[], $26, $27, $28, $29, $30,"
                " $31::pg_catalog.timestamptz, pg_catalog.clock_timestamp(), $32, $33::pg_catalog.jsonb)",
            {SqlParam::text(packed.display()),
             vinfo ? SqlParam::text_copy(vinfo->table.display()) : SqlParam::null(TEXTOID),
             SqlParam::text_copy(output.display()),
             req.mst_table_text.empty() ? SqlParam::null(TEXTOID) : SqlParam::text(req.mst_table_text),
             req.arch_table_text.empty() ? SqlParam::null(TEXTOID) : SqlParam::text(req.arch_table_text),
             SqlParam::text(outputs.method),
             SqlParam::int4(req.num_iterations),
             SqlParam::int4(outputs.recorded_metrics_frequency.value_or(req.metrics_frequency)),
             SqlParam::text(req.exact_training_metrics ? "exact" : "running"),
             SqlParam::boolean(req.warm_start),
             req.name.empty() ? SqlParam::null(TEXTOID) : SqlParam::text(req.name),
             req.description.empty() ? SqlParam::null(TEXTOID) : SqlParam::text(req.description),
             SqlParam::int4(M),
             SqlParam::int4(S),
             SqlParam::int4_array(dist_keys),
             hops,
             SqlParam::text(info.dependent_varname),
             SqlParam::text(info.independent_varname),
             SqlParam::text(info.dependent_vartype),
             SqlParam::text(info.response_type),
             classification ? SqlParam::text_array(info.class_values) : SqlParam::null(TEXTARRAYOID),
             SqlParam::float8(info.normalizing_const),
             SqlParam::text(info.scale),
             center.empty() ? SqlParam::null(FLOAT8ARRAYOID) : SqlParam::float8_array(center),
             spread.empty() ? SqlParam::null(FLOAT8ARRAYOID) : SqlParam::float8_array(spread),
             SqlParam::int8(info.num_rows),
             SqlParam::int4_array(evaluated_iterations(history)),
             SqlParam::float8(train_seconds),
             SqlParam::float8(hop_seconds),
             SqlParam::float8(eval_seconds),
             SqlParam::text(started_at),
             SqlParam::text(HOPPER_VERSION),
             info.feature_recipe.empty() ? SqlParam::null(TEXTOID) : SqlParam::text(info.feature_recipe)});
    }

    if (setting_debug_hops && outputs.hop_log) {
        spi.execute("CREATE TABLE " + hops_table.quoted() +
                    " (iteration pg_catalog.int4, hop pg_catalog.int4, statement pg_catalog.text,"
                    " mst_key pg_catalog.int4, dist_key pg_catalog.int4, seconds pg_catalog.float8)");
        record_output_table(spi, hops_table, "model_hops", token, "hopper record of hops" + run_text, run_id);
        std::vector<int32_t> its, hops, keys, dists;
        std::vector<std::string> stmts;
        std::vector<double> secs;
        for (const HopLogRow& r : *outputs.hop_log) {
            its.push_back(r.iteration);
            hops.push_back(r.hop);
            stmts.push_back(r.statement);
            keys.push_back(r.mst_key);
            dists.push_back(r.dist_key.value_or(INT32_MIN));
            secs.push_back(r.seconds);
        }
        spi.execute("INSERT INTO " + hops_table.quoted() + " SELECT i, h, s, " + null_if("k", "-1") + ", " +
                        null_if("d", "-2147483648") + ", t FROM " +
                        rows_from({"int4", "int4", "text", "int4", "int4", "float8"}) + " AS r(i, h, s, k, d, t)",
                    {SqlParam::int4_array(its), SqlParam::int4_array(hops), SqlParam::text_array(stmts),
                     SqlParam::int4_array(keys), SqlParam::int4_array(dists), SqlParam::float8_array(secs)});
    }
}

}  // namespace hopper::pg
