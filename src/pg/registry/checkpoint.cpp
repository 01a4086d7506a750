// Checkpoints: storing and loading model states, the training-run observer that writes them,
// deletion, garbage collection, listing, and turning a checkpoint into a model table.
//
// Every statement here runs under SafeSearchPath (search_path pg_catalog, pg_temp) and names
// hopper's tables with their schema. Payloads are written in chunks (hopper::split_chunks) with
// their size and sha256, and checked against both (and against the model state's own CRC) when
// loaded.
#include <chrono>
#include <cmath>
#include <exception>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hopper/error.h"
#include "hopper/registry.h"
#include "hopper/state_format.h"
#include "pg/common/datum.h"
#include "pg/training/preprocess.h"
#include "pg/common/output_tables.h"
#include "pg/registry/registry.h"
#include "pg/training/run_lock.h"

extern "C" {
#include "access/detoast.h"
#include "common/cryptohash.h"
#include "common/sha2.h"
#include "utils/fmgrprotos.h"
#include "utils/uuid.h"
}

namespace hopper::pg {

using nlohmann::json;

// ---- helpers shared with registry.cpp --------------------------------------------------------

void SafeSearchPath::enter() {
    if (level_ >= 0) return;
    level_ = call([] { return NewGUCNestLevel(); });
    call([] {
        (void)set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0,
                                false);
    });
}

void SafeSearchPath::leave() {
    if (level_ < 0) return;
    int level = level_;
    level_ = -1;
    call([&] { AtEOXact_GUC(true, level); });
}

SafeSearchPath::~SafeSearchPath() {
    if (level_ >= 0 && std::uncaught_exceptions() == 0) {
        try {
            leave();
        } catch (...) {
        }
    }
}

std::string uuid_arg(FunctionCallInfo fcinfo, int i, const char* name) {
    require_not_null(fcinfo, i, name);
    Datum d = PG_GETARG_DATUM(i);
    return std::string(call([&] { return DatumGetCString(DirectFunctionCall1(uuid_out, d)); }));
}

Datum uuid_datum(const std::string& text) {
    return call([&] { return DirectFunctionCall1(uuid_in, CStringGetDatum(text.c_str())); });
}

std::string sha256_hex(std::string_view bytes) {
    uint8 digest[PG_SHA256_DIGEST_LENGTH];
    call([&] {
        pg_cryptohash_ctx* ctx = pg_cryptohash_create(PG_SHA256);
        if (pg_cryptohash_init(ctx) < 0 ||
            pg_cryptohash_update(ctx, reinterpret_cast<const uint8*>(bytes.data()), bytes.size()) < 0 ||
            pg_cryptohash_final(ctx, digest, sizeof digest) < 0) {
            pg_cryptohash_free(ctx);
            elog(ERROR, "could not compute sha256");
        }
        pg_cryptohash_free(ctx);
    });
    static const char* hex = "0123456789abcdef";
    std::string out = "sha256:";
    for (uint8 b : digest) {
        out += hex[b >> 4];
        out += hex[b & 15];
    }
    return out;
}

namespace {

bool is_json_object(const std::string& text) {
    for (char c : text) {
        if (c == ' ' || c == '\n' || c == '\t' || c == '\r') continue;
        return c == '{';
    }
    return false;
}

std::string object_arg(FunctionCallInfo fcinfo, int i, const char* name) {
    std::string s = arg_jsonb_or(fcinfo, i, "{}");
    if (!is_json_object(s))
        fail(ErrorKind::InvalidParameter, std::string(name) + " must be a JSON object", "It is " + s.substr(0, 80) + ".");
    return s;
}

struct CheckpointRow {
    int64_t id = 0;
    std::string uuid, state, storage, uri, format, checksum, owner;
    std::optional<int64_t> size;
    int64_t version_count = 0;
    bool may_modify = false;
};

const char* kCheckpointColumns =
    "c.checkpoint_id, c.uuid::text, c.state, c.storage, c.external_uri, c.format, c.checksum, c.owner::text,"
    " c.size_bytes, c.version_count, hopper.may_modify(c.owner)";

CheckpointRow read_checkpoint_row(Spi& spi, uint64_t r, int o = 0) {
    CheckpointRow c;
    c.id = spi.integer(r, o + 0);
    c.uuid = spi.text(r, o + 1);
    c.state = spi.text(r, o + 2);
    c.storage = spi.text(r, o + 3);
    if (!spi.is_null(r, o + 4)) c.uri = spi.text(r, o + 4);
    c.format = spi.text(r, o + 5);
    if (!spi.is_null(r, o + 6)) c.checksum = spi.text(r, o + 6);
    c.owner = spi.text(r, o + 7);
    if (!spi.is_null(r, o + 8)) c.size = spi.integer(r, o + 8);
    c.version_count = spi.integer(r, o + 9);
    c.may_modify = spi.boolean(r, o + 10);
    return c;
}

CheckpointRow find_checkpoint(Spi& spi, const std::string& uuid) {
    spi.execute(std::string("SELECT ") + kCheckpointColumns + " FROM hopper.checkpoints c WHERE c.uuid = $1::uuid",
                {SqlParam::text(uuid)});
    if (spi.rows() == 0) fail(ErrorKind::UndefinedObject, "checkpoint " + uuid + " does not exist");
    return read_checkpoint_row(spi, 0);
}

CheckpointRow find_checkpoint_by_id(Spi& spi, int64_t id) {
    spi.execute(std::string("SELECT ") + kCheckpointColumns + " FROM hopper.checkpoints c WHERE c.checkpoint_id = $1",
                {SqlParam::int8(id)});
    if (spi.rows() == 0) fail(ErrorKind::UndefinedObject, "checkpoint with id " + std::to_string(id) + " does not exist");
    return read_checkpoint_row(spi, 0);
}

void require_may_modify(const CheckpointRow& c) {
    if (!c.may_modify)
        fail(ErrorKind::Privilege, "permission denied for checkpoint " + c.uuid, "It belongs to role " + c.owner + ".",
             "Ask for membership in role " + c.owner + ".");
}

// The payload of a COMPLETED checkpoint stored in the database, checked.
std::string read_payload(Spi& spi, const CheckpointRow& c) {
    if (c.state != "COMPLETED")
        fail(ErrorKind::ObjectNotInPrerequisiteState, "checkpoint " + c.uuid + " is " + c.state,
                       "Only COMPLETED checkpoints can be loaded.");
    if (c.storage != "database")
        fail(ErrorKind::ObjectNotInPrerequisiteState, "checkpoint " + c.uuid + " is stored outside the database",
                       "It is at " + c.uri + " (format " + c.format + ").", "Load it from there.");
    spi.execute("SELECT pg_catalog.string_agg(data, ''::pg_catalog.bytea ORDER BY chunk_no), count(*), max(chunk_no)"
                " FROM hopper.checkpoint_chunks WHERE checkpoint_id = $1",
                {SqlParam::int8(c.id)});
    const int64_t chunks = spi.integer(0, 1);
    std::string payload = spi.is_null(0, 0) ? std::string() : spi.bytes(0, 0);
    const std::string corrupt = "checkpoint " + c.uuid + " is corrupt";
    if (chunks == 0) fail(ErrorKind::Data, corrupt, "Its payload is missing.");
    if (spi.integer(0, 2) != chunks - 1) fail(ErrorKind::Data, corrupt, "Chunks of its payload are missing.");
    if (c.size && int64_t(payload.size()) != *c.size)
        fail(ErrorKind::Data, corrupt,
             "Its payload has " + std::to_string(payload.size()) + " bytes; " + std::to_string(*c.size) + " were stored.");
    if (!c.checksum.empty() && sha256_hex(payload) != c.checksum)
        fail(ErrorKind::Data, corrupt, "Its payload does not match the stored checksum " + c.checksum + ".");
    if (c.format == kModelStateFormat) (void)inspect_state(payload);  // the state's own CRC and structure
    return payload;
}

struct Stored {
    int64_t id = 0;
    std::string uuid;
};

// Writes a model state as a COMPLETED checkpoint: ACTIVE while its chunks go in, then COMPLETED.
Stored store_checkpoint(Spi& spi, std::optional<int64_t> task_id, std::string_view payload, std::optional<int64_t> steps,
                        const std::string& metadata, const std::string& resources) {
    spi.execute("INSERT INTO hopper.checkpoints (task_id, state, steps_completed, format, storage, size_bytes, checksum,"
                " resources, metadata) VALUES ($1, 'ACTIVE', $2, $3, 'database', $4, $5, $6::pg_catalog.jsonb,"
                " $7::pg_catalog.jsonb) RETURNING checkpoint_id, uuid::pg_catalog.text",
                {task_id ? SqlParam::int8(*task_id) : SqlParam::null(INT8OID),
                 steps ? SqlParam::int8(*steps) : SqlParam::null(INT8OID), SqlParam::text(kModelStateFormat),
                 SqlParam::int8(int64_t(payload.size())), SqlParam::text_copy(sha256_hex(payload)), SqlParam::text(resources),
                 SqlParam::text(metadata)});
    Stored s{spi.integer(0, 0), spi.text(0, 1)};
    int32_t n = 0;
    for (std::string_view chunk : split_chunks(payload)) {
        spi.execute("INSERT INTO hopper.checkpoint_chunks (checkpoint_id, chunk_no, data) VALUES ($1, $2, $3)",
                    {SqlParam::int8(s.id), SqlParam::int4(n++), SqlParam::bytea(chunk)});
    }
    spi.execute("UPDATE hopper.checkpoints SET state = 'COMPLETED', report_time = pg_catalog.clock_timestamp()"
                " WHERE checkpoint_id = $1",
                {SqlParam::int8(s.id)});
    return s;
}

// Checkpoints -> DELETED (in the database) or DELETING (external), payload removed; returns the
// ids that changed. Only unregistered checkpoints change: the WHERE clause is re-checked on the
// newest row version when a registration committed meanwhile (READ COMMITTED), and under
// REPEATABLE READ such a concurrent change is a serialization failure.
std::vector<int64_t> delete_checkpoint_ids(Spi& spi, const std::vector<int64_t>& ids) {
    spi.execute("UPDATE hopper.checkpoints SET state = CASE storage WHEN 'database' THEN 'DELETED' ELSE 'DELETING' END"
                " WHERE checkpoint_id = ANY ($1) AND state NOT IN ('DELETING', 'DELETED') AND version_count = 0"
                " RETURNING checkpoint_id",
                {SqlParam::int8_array(ids)});
    std::vector<int64_t> changed;
    for (uint64_t r = 0; r < spi.rows(); ++r) changed.push_back(spi.integer(r, 0));
    if (!changed.empty())
        spi.execute("DELETE FROM hopper.checkpoint_chunks WHERE checkpoint_id = ANY ($1)", {SqlParam::int8_array(changed)});
    return changed;
}

std::string versions_using(Spi& spi, int64_t checkpoint_id) {
    spi.execute("SELECT pg_catalog.string_agg(pg_catalog.format('%s version %s', m.name, v.version), ', '"
                " ORDER BY m.name, v.version) FROM hopper.model_versions v JOIN hopper.models m USING (model_id)"
                " WHERE v.checkpoint_id = $1",
                {SqlParam::int8(checkpoint_id)});
    return spi.is_null(0, 0) ? std::string("a model version") : spi.text(0, 0);
}

[[noreturn]] void refuse_registered(Spi& spi, const CheckpointRow& c) {
    fail(ErrorKind::ObjectInUse, "checkpoint " + c.uuid + " is registered as a model version",
                   "It is " + versions_using(spi, c.id) + ".", "Delete those model versions first.");
}

// Copies the current SPI result into the function's result set (types must match its declaration).
void put_result_rows(Spi& spi, FunctionCallInfo fcinfo) {
    ReturnSetInfo* rsinfo = (ReturnSetInfo*)fcinfo->resultinfo;
    const int n = spi.columns();
    std::vector<Datum> values(n);
    std::vector<bool> nulls_v(n);
    bool* nulls = new bool[n];
    try {
        for (uint64_t r = 0; r < spi.rows(); ++r) {
            for (int c = 0; c < n; ++c) {
                bool isnull = false;
                values[c] = spi.datum(r, c, &isnull);
                nulls[c] = isnull;
                if (!isnull && TupleDescAttr(rsinfo->setDesc, c)->attlen == -1) {
                    Datum d = values[c];
                    values[c] = call([&] {
                        struct varlena* v = (struct varlena*)DatumGetPointer(d);
                        return VARATT_IS_EXTERNAL(v) ? PointerGetDatum(detoast_external_attr(v)) : d;
                    });
                }
            }
            call([&] { tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values.data(), nulls); });
        }
    } catch (...) {
        delete[] nulls;
        throw;
    }
    delete[] nulls;
}

// ---- the training-run observer --------------------------------------------------------------

std::string metrics_object(const Evaluation& e, const std::vector<Metric>& names) {
    json j = json::object();
    j["loss"] = std::isfinite(e.loss) ? json(e.loss) : json(nullptr);
    for (std::size_t k = 0; k < names.size() && k < e.metrics.size(); ++k)
        j[to_string(names[k])] = std::isfinite(e.metrics[k]) ? json(e.metrics[k]) : json(nullptr);
    return j.dump();
}

double pick_metric(const Evaluation& e, const std::vector<Metric>& names, const std::string& metric) {
    if (metric == "loss") return e.loss;
    for (std::size_t k = 0; k < names.size() && k < e.metrics.size(); ++k)
        if (metric == to_string(names[k])) return e.metrics[k];
    return std::nan("");
}

std::string data_facts(const PackedInfo& info) {
    json d = json::object();
    const bool classification = info.response_type == "classification";
    d["source_table"] = info.table.display();
    d["response_type"] = info.response_type;
    d["class_values"] = classification ? json(info.class_values) : json(nullptr);
    d["dependent_varname"] = info.dependent_varname;
    d["dependent_vartype"] = info.dependent_vartype;
    d["independent_varname"] = info.independent_varname;
    d["normalizing_const"] = info.normalizing_const;
    d["scale"] = info.scale;
    // float -> double is exact, and 17 significant digits bring the float4 back unchanged.
    std::vector<double> center(info.feature_center.begin(), info.feature_center.end());
    std::vector<double> spread(info.feature_spread.begin(), info.feature_spread.end());
    d["feature_center"] = center.empty() ? json(nullptr) : json(center);
    d["feature_spread"] = spread.empty() ? json(nullptr) : json(spread);
    d["num_rows"] = info.num_rows;
    return d.dump();
}

class RegistryObserver : public RunObserver {
public:
    explicit RegistryObserver(CheckpointOptions o) : opt_(std::move(o)) {}

    void on_start(Spi& spi, RunContext& run) override {
        started_ = std::chrono::steady_clock::now();
        const std::vector<ModelSpec>& models = *run.models;
        std::vector<std::vector<Metric>> metrics;
        for (const ModelSpec& m : models) metrics.push_back(m.config.compile.metrics);
        searcher_ = resolve_searcher_metric(opt_.searcher_metric, run.validation.has_value(), metrics);
        if (opt_.checkpoint_frequency < -1)
            fail(ErrorKind::InvalidParameter, "checkpoint_frequency must not be negative",
                 "It is " + std::to_string(opt_.checkpoint_frequency) + ".",
                 "0 writes a checkpoint only after the last iteration.");
        frequency_ = opt_.checkpoint_frequency < 0 ? opt_.metrics_frequency : opt_.checkpoint_frequency;
        const std::string data = data_facts(read_packed_info(spi, run.packed));

        SafeSearchPath path;
        path.enter();
        spi.execute("SELECT hopper.mark_interrupted_runs()");
        spi.execute("INSERT INTO hopper.run_records (method, name, description, source_table, validation_table,"
                    " model_output_table, model_selection_table, num_iterations, metrics_compute_frequency,"
                    " checkpoint_frequency, searcher_metric, smaller_is_better, data, start_time, backend_pid,"
                    " backend_start)"
                    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::pg_catalog.jsonb, $14::pg_catalog.timestamptz,"
                    " pg_catalog.pg_backend_pid(), (SELECT a.backend_start FROM pg_catalog.pg_stat_activity a"
                    " WHERE a.pid OPERATOR(pg_catalog.=) pg_catalog.pg_backend_pid()))"
                    " RETURNING run_id",
                    {SqlParam::text(run.method),
                     run.name.empty() ? SqlParam::null(TEXTOID) : SqlParam::text(run.name),
                     run.description.empty() ? SqlParam::null(TEXTOID) : SqlParam::text(run.description),
                     SqlParam::text_copy(run.packed.display()),
                     run.validation ? SqlParam::text_copy(run.validation->display()) : SqlParam::null(TEXTOID),
                     SqlParam::text_copy(run.output.display()),
                     opt_.mst_table_text.empty() ? SqlParam::null(TEXTOID) : SqlParam::text(opt_.mst_table_text),
                     SqlParam::int4(run.num_iterations), SqlParam::int4(opt_.metrics_frequency), SqlParam::int4(frequency_),
                     SqlParam::text(searcher_.name), SqlParam::boolean(searcher_.smaller_is_better), SqlParam::text(data),
                     SqlParam::text(run.started_at)});
        run_id_ = spi.integer(0, 0);
        run.run_id = run_id_;
        hold_run_lock(run_id_);  // the run reads as ACTIVE while this session runs it
        for (const ModelSpec& m : models) {
            json config = json::parse(m.config.to_json());
            json hparams = {{"compile", config["compile"]}, {"fit", config["fit"]}};
            auto ws = opt_.warm_start_checkpoints.find(m.mst_key);
            // Two statements: the trials row's security policy must see the task row.
            const int64_t task_id = spi.scalar_int(
                "INSERT INTO hopper.tasks (task_type, description, start_time)"
                " VALUES ('TRAINING', $1, $2::pg_catalog.timestamptz) RETURNING task_id",
                {SqlParam::text_copy(run.method + " run " + std::to_string(run_id_) +
                                     ", mst_key " + std::to_string(m.mst_key)),
                 SqlParam::text(run.started_at)});
            spi.execute(
                "INSERT INTO hopper.trials (trial_id, run_id, mst_key, model_id, model_arch, compile_params, fit_params,"
                " model_config, hparams, warm_start_checkpoint_id)"
                " VALUES ($1, $2, $3, $4, $5::pg_catalog.jsonb, $6, $7, $8::pg_catalog.jsonb, $9::pg_catalog.jsonb, $10)"
                " RETURNING trial_id",
                {SqlParam::int8(task_id), SqlParam::int8(run_id_), SqlParam::int4(m.mst_key),
                 m.model_id ? SqlParam::int4(*m.model_id) : SqlParam::null(INT4OID), SqlParam::text(m.arch_json),
                 SqlParam::text(m.compile_text), SqlParam::text(m.fit_text), SqlParam::text_copy(m.config.to_json()),
                 SqlParam::text_copy(hparams.dump()),
                 ws == opt_.warm_start_checkpoints.end() ? SqlParam::null(INT8OID) : SqlParam::int8(ws->second)});
            trial_ids_.push_back(spi.integer(0, 0));
            statuses_.push_back("training");
        }
        path.leave();
    }

    void on_iteration(Spi& spi, const RunContext& run, const IterationReport& report) override {
        const std::vector<ModelSpec>& models = *run.models;
        const std::vector<std::string>& states = *report.states;
        const bool due = report.last || (frequency_ > 0 && report.iteration % frequency_ == 0);
        if (!due && !report.evaluated) {
            SafeSearchPath path;
            path.enter();
            update_statuses(spi, *report.statuses, false);
            path.leave();
            return;
        }
        std::vector<int64_t> steps(models.size());
        for (std::size_t i = 0; i < models.size(); ++i) steps[i] = int64_t(inspect_state(states[i]).counters.steps);
        std::vector<std::optional<double>> searcher(models.size());

        SafeSearchPath path;
        path.enter();
        if (report.evaluated && report.training) {
            const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
            for (std::size_t i = 0; i < models.size(); ++i) {
                const auto& names = models[i].config.compile.metrics;
                const Evaluation& t = (*report.training)[i];
                const Evaluation* v = report.validation ? &(*report.validation)[i] : nullptr;
                double value = pick_metric(searcher_.validation && v ? *v : t, names, searcher_.metric);
                if (std::isfinite(value)) searcher[i] = value;
                spi.execute("INSERT INTO hopper.trial_metrics (trial_id, iteration, steps_completed, training_metrics,"
                            " validation_metrics, searcher_value, elapsed_seconds, report_time)"
                            " VALUES ($1, $2, $3, $4::pg_catalog.jsonb, $5::pg_catalog.jsonb, $6, $7,"
                            " pg_catalog.clock_timestamp())",
                            {SqlParam::int8(trial_ids_[i]), SqlParam::int4(report.iteration), SqlParam::int8(steps[i]),
                             SqlParam::text_copy(metrics_object(t, names)),
                             v ? SqlParam::text_copy(metrics_object(*v, names)) : SqlParam::null(TEXTOID),
                             searcher[i] ? SqlParam::float8(*searcher[i]) : SqlParam::null(FLOAT8OID),
                             SqlParam::float8(elapsed)});
            }
        }
        if (due) {
            const std::string metadata =
                json{{"hopper_version", HOPPER_VERSION}, {"iteration", report.iteration}}.dump();
            for (std::size_t i = 0; i < models.size(); ++i) {
                const std::string resources = json{{"model_state", states[i].size()}}.dump();
                Stored s = store_checkpoint(spi, trial_ids_[i], states[i], steps[i], metadata, resources);
                std::optional<double> signed_value;
                if (searcher[i]) signed_value = signed_searcher_value(*searcher[i], searcher_.smaller_is_better);
                spi.execute("INSERT INTO hopper.checkpoint_training (checkpoint_id, trial_id, iteration, searcher_value,"
                            " signed_searcher_value) VALUES ($1, $2, $3, $4, $5)",
                            {SqlParam::int8(s.id), SqlParam::int8(trial_ids_[i]), SqlParam::int4(report.iteration),
                             searcher[i] ? SqlParam::float8(*searcher[i]) : SqlParam::null(FLOAT8OID),
                             signed_value ? SqlParam::float8(*signed_value) : SqlParam::null(FLOAT8OID)});
            }
        }
        update_statuses(spi, *report.statuses, false);
        path.leave();
    }

    void on_finish(Spi& spi, const RunContext& run, const std::vector<std::string>& states) override {
        SafeSearchPath path;
        path.enter();
        std::vector<std::string> final_statuses;
        for (const std::string& s : statuses_) final_statuses.push_back(s == "training" ? "completed" : s);
        update_statuses(spi, final_statuses, true);
        spi.execute("UPDATE hopper.tasks SET state = 'COMPLETED', end_time = pg_catalog.clock_timestamp()"
                    " WHERE task_id = ANY ($1)",
                    {SqlParam::int8_array(trial_ids_)});
        spi.execute("UPDATE hopper.run_records SET state = 'COMPLETED', end_time = pg_catalog.clock_timestamp() WHERE run_id = $1",
                    {SqlParam::int8(run_id_)});
        path.leave();
        notice("training run " + std::to_string(run_id_) + " recorded in hopper.runs",
               "Its checkpoints are in hopper.checkpoints_expanded WHERE run_id = " + std::to_string(run_id_) + ".");
    }

private:
    void update_statuses(Spi& spi, const std::vector<std::string>& now, bool final) {
        for (std::size_t i = 0; i < now.size() && i < statuses_.size(); ++i) {
            std::string s = now[i];
            if (!final && s == "completed") s = "training";  // still running
            if (s == statuses_[i]) continue;
            spi.execute("UPDATE hopper.trials SET status = $2 WHERE trial_id = $1",
                        {SqlParam::int8(trial_ids_[i]), SqlParam::text(s)});
            statuses_[i] = s;
        }
    }

    CheckpointOptions opt_;
    SearcherMetric searcher_;
    int frequency_ = 1;
    int64_t run_id_ = 0;
    std::vector<int64_t> trial_ids_;
    std::vector<std::string> statuses_;
    std::chrono::steady_clock::time_point started_;
};

}  // namespace

std::unique_ptr<RunObserver> make_registry_observer(CheckpointOptions options) {
    return std::make_unique<RegistryObserver>(std::move(options));
}

CheckpointOptions checkpoint_options(FunctionCallInfo fcinfo, int frequency_arg, int searcher_arg, int metrics_frequency) {
    CheckpointOptions o;
    o.metrics_frequency = metrics_frequency;
    if (PG_NARGS() > frequency_arg && !PG_ARGISNULL(frequency_arg)) {
        o.checkpoint_frequency = PG_GETARG_INT32(frequency_arg);
        if (o.checkpoint_frequency < 0)
            fail(ErrorKind::InvalidParameter, "checkpoint_frequency must not be negative",
                 "It is " + std::to_string(o.checkpoint_frequency) + ".", "0 writes a checkpoint only after the last iteration.");
    }
    o.searcher_metric = arg_text_or(fcinfo, searcher_arg, "");
    return o;
}

namespace {
void refuse_both_warm_starts(bool warm_start, const char* what) {
    if (warm_start)
        fail(ErrorKind::InvalidParameter, std::string("warm_start and ") + what + " cannot be used together",
             std::string("warm_start continues from the model output table, ") + what + " from the registry's checkpoints.");
}
}  // namespace

void warm_start_from_checkpoint(Spi& spi, const std::string& uuid, bool warm_start, ModelSpec& model,
                                CheckpointOptions& options) {
    refuse_both_warm_starts(warm_start, "warm_start_checkpoint");
    LoadedCheckpoint c = load_checkpoint(spi, uuid);
    model.initial_state = std::move(c.state);
    model.initial_source = "checkpoint " + c.uuid;
    options.warm_start_checkpoints[model.mst_key] = c.id;
}

void warm_start_from_run(Spi& spi, int64_t run_id, bool warm_start, std::vector<ModelSpec>& models,
                         CheckpointOptions& options) {
    refuse_both_warm_starts(warm_start, "warm_start_run");
    std::map<int32_t, LoadedCheckpoint> found = load_run_checkpoints(spi, run_id);
    for (ModelSpec& m : models) {
        auto it = found.find(m.mst_key);
        if (it == found.end()) {
            notice("mst_key " + std::to_string(m.mst_key) + " starts from fresh weights",
                   "Training run " + std::to_string(run_id) + " has no completed checkpoint for it.");
            continue;
        }
        m.initial_state = std::move(it->second.state);
        m.initial_source = "checkpoint " + it->second.uuid;
        options.warm_start_checkpoints[m.mst_key] = it->second.id;
    }
}

LoadedCheckpoint load_checkpoint(Spi& spi, const std::string& uuid) {
    SafeSearchPath path;
    path.enter();
    CheckpointRow c = find_checkpoint(spi, uuid);
    LoadedCheckpoint out{c.id, c.uuid, read_payload(spi, c)};
    path.leave();
    return out;
}

std::map<int32_t, LoadedCheckpoint> load_run_checkpoints(Spi& spi, int64_t run_id) {
    SafeSearchPath path;
    path.enter();
    spi.execute("SELECT 1 FROM hopper.runs WHERE run_id = $1", {SqlParam::int8(run_id)});
    if (spi.rows() == 0) fail(ErrorKind::UndefinedObject, "training run " + std::to_string(run_id) + " does not exist");
    spi.execute("SELECT mst_key, uuid::pg_catalog.text FROM hopper.latest_checkpoints WHERE run_id = $1",
                {SqlParam::int8(run_id)});
    std::vector<std::pair<int32_t, std::string>> found;
    for (uint64_t r = 0; r < spi.rows(); ++r) found.emplace_back(int32_t(spi.integer(r, 0)), spi.text(r, 1));
    std::map<int32_t, LoadedCheckpoint> out;
    for (auto& [key, uuid] : found) {
        CheckpointRow c = find_checkpoint(spi, uuid);
        out[key] = LoadedCheckpoint{c.id, c.uuid, read_payload(spi, c)};
    }
    path.leave();
    return out;
}

void materialize_checkpoint_table(Spi& spi, int64_t checkpoint_id, const TableName& output,
                                  const std::string& model_name, std::optional<int32_t> version) {
    const TableName summary = output.with_suffix("_summary");
    require_absent(summary, "summary table");
    SafeSearchPath path;
    path.enter();
    CheckpointRow c = find_checkpoint_by_id(spi, checkpoint_id);
    spi.execute("SELECT e.mst_key, e.model_id, e.model_arch::pg_catalog.text, e.compile_params, e.fit_params,"
                " e.data::pg_catalog.text, e.run_id, e.steps_completed FROM hopper.checkpoints_expanded e"
                " WHERE e.checkpoint_id = $1",
                {SqlParam::int8(checkpoint_id)});
    const bool training = !spi.is_null(0, 0);
    const int32_t mst_key = training ? int32_t(spi.integer(0, 0)) : 1;
    std::optional<int32_t> model_id;
    if (!spi.is_null(0, 1)) model_id = int32_t(spi.integer(0, 1));
    std::string arch = training ? spi.text(0, 2) : "", compile = training ? spi.text(0, 3) : "",
                fit = training ? spi.text(0, 4) : "";
    const std::string data = spi.is_null(0, 5) ? "" : spi.text(0, 5);
    std::optional<int64_t> run_id, steps;
    if (!spi.is_null(0, 6)) run_id = spi.integer(0, 6);
    if (!spi.is_null(0, 7)) steps = spi.integer(0, 7);

    json facts;
    if (!data.empty()) facts = json::parse(data);
    if (!facts.is_object() || !facts.contains("response_type") || !facts["response_type"].is_string() ||
        !facts.contains("dependent_varname") || !facts["dependent_varname"].is_string() ||
        !facts.contains("dependent_vartype") || !facts["dependent_vartype"].is_string())
        fail(ErrorKind::ObjectNotInPrerequisiteState,
                       "checkpoint " + c.uuid + " does not describe the data it was trained on",
                       "predict needs the response type, the dependent variable's name and type, and the scaling of the"
                       " features.",
                       "Checkpoints written by fit and fit_multiple have it; give hopper.create_checkpoint metadata"
                       " {\"data\": {\"response_type\": ..., \"dependent_varname\": ..., \"dependent_vartype\": ...,"
                       " \"class_values\": [...], \"normalizing_const\": ...}}.");
    const std::string response = facts["response_type"];
    if (response != "classification" && response != "regression")
        fail(ErrorKind::InvalidParameter, "checkpoint " + c.uuid + " has an unknown response_type \"" + response + "\"",
             "It must be classification or regression.");
    if (response == "classification" && (!facts.contains("class_values") || !facts["class_values"].is_array()))
        fail(ErrorKind::InvalidParameter, "checkpoint " + c.uuid + " is a classifier without class_values");
    // The dependent type names a column type of predict's output: it must be a plain type name,
    // which the catalog then normalizes.
    {
        const std::string t = facts["dependent_vartype"];
        bool plain = !t.empty() && t.size() <= 200;
        for (char ch : t)
            plain = plain && ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                              ch == '_' || ch == ' ' || ch == '.' || ch == '"' || ch == '(' || ch == ')' || ch == ',' ||
                              ch == '[' || ch == ']');
        if (!plain)
            fail(ErrorKind::InvalidParameter, "checkpoint " + c.uuid + " names an invalid dependent_vartype \"" + t + "\"",
                 "It must be a type name such as text, integer or character varying(10).");
    }
    spi.execute("SELECT pg_catalog.format_type(pg_catalog.to_regtype($1), NULL)",
                {SqlParam::text_copy(facts["dependent_vartype"].get<std::string>())});
    if (spi.is_null(0, 0))
        fail(ErrorKind::InvalidParameter,
             "checkpoint " + c.uuid + " names an unknown dependent_vartype \"" + facts["dependent_vartype"].get<std::string>() + "\"");
    facts["dependent_vartype"] = spi.text(0, 0);

    const std::string payload = read_payload(spi, c);
    StateSummary st = inspect_state(payload);
    if (arch.empty()) arch = st.config.arch.to_json();
    if (compile.empty()) compile = st.config.compile.to_json();
    if (fit.empty()) fit = st.config.fit.to_json();
    const std::string source = model_name.empty() ? "checkpoint " + c.uuid
                                                   : "model " + model_name + " version " + std::to_string(*version);

    spi.execute("CREATE TABLE " + output.quoted() +
                " (mst_key pg_catalog.int4 PRIMARY KEY, model_id pg_catalog.int4, model_state pg_catalog.bytea NOT NULL,"
                " model_arch pg_catalog.jsonb NOT NULL, compile_params pg_catalog.text NOT NULL,"
                " fit_params pg_catalog.text NOT NULL, model_config pg_catalog.jsonb NOT NULL)");
    spi.execute("ALTER TABLE " + output.quoted() + " ALTER COLUMN model_state SET STORAGE EXTERNAL");
    const std::string token = new_output_token(spi);
    record_output_table(spi, output, "model", token, "hopper model from " + source, run_id);
    spi.execute("INSERT INTO " + output.quoted() + " VALUES ($1, $2, $3, $4::pg_catalog.jsonb, $5, $6, $7::pg_catalog.jsonb)",
                {SqlParam::int4(mst_key), model_id ? SqlParam::int4(*model_id) : SqlParam::null(INT4OID),
                 SqlParam::bytea(payload), SqlParam::text(arch), SqlParam::text(compile), SqlParam::text(fit),
                 SqlParam::text_copy(st.config.to_json())});
    spi.execute("CREATE TABLE " + summary.quoted() +
                " (source_table pg_catalog.text, model_output_table pg_catalog.text, method pg_catalog.text,"
                " source pg_catalog.text, checkpoint_uuid pg_catalog.uuid, model_name pg_catalog.text,"
                " model_version pg_catalog.int4, run_id pg_catalog.int8, mst_key pg_catalog.int4,"
                " steps_completed pg_catalog.int8, dependent_varname pg_catalog.text, independent_varname pg_catalog.text,"
                " dependent_vartype pg_catalog.text, response_type pg_catalog.text, class_values pg_catalog.text[],"
                " normalizing_const pg_catalog.float8, scale pg_catalog.text, feature_center pg_catalog.float4[],"
                " feature_spread pg_catalog.float4[], num_rows pg_catalog.int8, hopper_version pg_catalog.text)");
    record_output_table(spi, summary, "model_summary", token, "hopper summary of a model from " + source, run_id);
    spi.execute(
        "INSERT INTO " + summary.quoted() +
            " SELECT d ->> 'source_table', $2, 'materialize', $3, $4::pg_catalog.uuid, $5, $6, $7, $8, $9,"
            " d ->> 'dependent_varname', d ->> 'independent_varname', d ->> 'dependent_vartype', d ->> 'response_type',"
            " CASE WHEN pg_catalog.jsonb_typeof(d -> 'class_values') = 'array'"
            "  THEN ARRAY(SELECT pg_catalog.jsonb_array_elements_text(d -> 'class_values')) END,"
            " coalesce((d ->> 'normalizing_const')::pg_catalog.float8, 1.0), coalesce(d ->> 'scale', 'none'),"
            " CASE WHEN pg_catalog.jsonb_typeof(d -> 'feature_center') = 'array'"
            "  THEN ARRAY(SELECT pg_catalog.jsonb_array_elements_text(d -> 'feature_center')::pg_catalog.float4) END,"
            " CASE WHEN pg_catalog.jsonb_typeof(d -> 'feature_spread') = 'array'"
            "  THEN ARRAY(SELECT pg_catalog.jsonb_array_elements_text(d -> 'feature_spread')::pg_catalog.float4) END,"
            " (d ->> 'num_rows')::pg_catalog.int8, $10 FROM (SELECT $1::pg_catalog.jsonb AS d) AS s",
        {SqlParam::text_copy(facts.dump()), SqlParam::text_copy(output.display()), SqlParam::text(source),
         SqlParam::text(c.uuid), model_name.empty() ? SqlParam::null(TEXTOID) : SqlParam::text(model_name),
         version ? SqlParam::int4(*version) : SqlParam::null(INT4OID),
         run_id ? SqlParam::int8(*run_id) : SqlParam::null(INT8OID), SqlParam::int4(mst_key),
         steps ? SqlParam::int8(*steps) : SqlParam::null(INT8OID), SqlParam::text(HOPPER_VERSION)});
    path.leave();
}

}  // namespace hopper::pg

using namespace hopper;
using namespace hopper::pg;

// ---- SQL-callable functions -------------------------------------------------------------------

// create_task(task_type text, description text, metadata jsonb) -> bigint
HOPPER_FUNCTION(create_task) {
    const std::string type = arg_text(fcinfo, 0, "task_type");
    check_task_type(type);
    if (type == "TRAINING")
        fail(ErrorKind::InvalidParameter, "task type TRAINING is reserved for fit and fit_multiple",
             "", "Use another type, such as IMPORT or FINE_TUNE.");
    const std::string description = arg_text_or(fcinfo, 1, "");
    const std::string metadata = object_arg(fcinfo, 2, "metadata");
    Spi spi;
    SafeSearchPath path;
    path.enter();
    int64_t id = spi.scalar_int("INSERT INTO hopper.tasks (task_type, description, metadata) VALUES ($1, $2,"
                                " $3::pg_catalog.jsonb) RETURNING task_id",
                                {SqlParam::text(type), description.empty() ? SqlParam::null(TEXTOID) : SqlParam::text(description),
                                 SqlParam::text(metadata)});
    path.leave();
    PG_RETURN_INT64(id);
}

namespace {

struct TaskRow {
    int64_t id;
    std::string type, state, owner;
    bool may_modify;
};

TaskRow find_task(Spi& spi, int64_t id) {
    spi.execute("SELECT task_type, state, owner::pg_catalog.text, hopper.may_modify(owner) FROM hopper.tasks WHERE task_id = $1",
                {SqlParam::int8(id)});
    if (spi.rows() == 0) fail(ErrorKind::UndefinedObject, "task " + std::to_string(id) + " does not exist");
    return TaskRow{id, spi.text(0, 0), spi.text(0, 1), spi.text(0, 2), spi.boolean(0, 3)};
}

void require_task_writable(const TaskRow& t) {
    if (!t.may_modify)
        fail(ErrorKind::Privilege, "permission denied for task " + std::to_string(t.id), "It belongs to role " + t.owner + ".");
}

}  // namespace

// end_task(task_id bigint, state text) -> void
HOPPER_FUNCTION(end_task) {
    const int64_t id = arg_int(fcinfo, 0, "task_id");
    const std::string state = arg_text(fcinfo, 1, "state");
    if (state != "COMPLETED" && state != "ERROR" && state != "CANCELED")
        fail(ErrorKind::InvalidParameter, "a task ends COMPLETED, ERROR or CANCELED", "\"" + state + "\" was given.");
    Spi spi;
    SafeSearchPath path;
    path.enter();
    TaskRow t = find_task(spi, id);
    require_task_writable(t);
    if (t.type == "TRAINING")
        fail(ErrorKind::InvalidParameter, "task " + std::to_string(id) + " is a training task", "fit and fit_multiple end it.");
    if (t.state != "ACTIVE")
        fail(ErrorKind::ObjectNotInPrerequisiteState, "task " + std::to_string(id) + " has already ended",
                       "It is " + t.state + ".");
    spi.execute("UPDATE hopper.tasks SET state = $2, end_time = pg_catalog.clock_timestamp() WHERE task_id = $1",
                {SqlParam::int8(id), SqlParam::text(state)});
    path.leave();
    PG_RETURN_VOID();
}

namespace {

std::optional<int64_t> checked_task(Spi& spi, FunctionCallInfo fcinfo, int i) {
    if (PG_ARGISNULL(i)) return std::nullopt;
    const int64_t id = PG_GETARG_INT64(i);
    TaskRow t = find_task(spi, id);
    require_task_writable(t);
    if (t.type == "TRAINING")
        fail(ErrorKind::InvalidParameter, "task " + std::to_string(id) + " is a training task",
             "Checkpoints of training tasks are written by fit and fit_multiple.", "Create a task with hopper.create_task.");
    return id;
}

}  // namespace

// create_checkpoint(model_state bytea, task_id bigint, steps_completed bigint, metadata jsonb,
//                   resources jsonb) -> uuid
HOPPER_FUNCTION(create_checkpoint) {
    require_not_null(fcinfo, 0, "model_state");
    const std::string payload = bytea_to_string(PG_GETARG_DATUM(0));
    StateSummary st = inspect_state(payload);
    std::optional<int64_t> steps = int64_t(st.counters.steps);
    if (!PG_ARGISNULL(2)) steps = PG_GETARG_INT64(2);
    if (*steps < 0) fail(ErrorKind::InvalidParameter, "steps_completed must not be negative", "It is " + std::to_string(*steps) + ".");
    const std::string metadata = object_arg(fcinfo, 3, "metadata");
    const std::string resources = object_arg(fcinfo, 4, "resources");
    std::string uuid;
    {
        Spi spi;
        SafeSearchPath path;
        path.enter();
        std::optional<int64_t> task = checked_task(spi, fcinfo, 1);
        const std::string res = resources == "{}" ? json{{"model_state", payload.size()}}.dump() : resources;
        uuid = store_checkpoint(spi, task, payload, steps, metadata, res).uuid;
        path.leave();
    }
    PG_RETURN_DATUM(uuid_datum(uuid));
}

// create_checkpoint_reference(uri, format, size_bytes, checksum, task_id, steps_completed, metadata,
//                             resources, state) -> uuid
HOPPER_FUNCTION(create_checkpoint_reference) {
    const std::string uri = arg_text(fcinfo, 0, "uri");
    const std::string format = arg_text(fcinfo, 1, "format");
    if (uri.empty()) fail(ErrorKind::InvalidParameter, "uri must not be empty");
    if (format.empty()) fail(ErrorKind::InvalidParameter, "format must not be empty");
    std::optional<int64_t> size, steps;
    if (!PG_ARGISNULL(2)) size = PG_GETARG_INT64(2);
    if (size && *size < 0) fail(ErrorKind::InvalidParameter, "size_bytes must not be negative");
    const std::string checksum = arg_text_or(fcinfo, 3, "");
    if (!PG_ARGISNULL(5)) steps = PG_GETARG_INT64(5);
    if (steps && *steps < 0) fail(ErrorKind::InvalidParameter, "steps_completed must not be negative");
    const std::string metadata = object_arg(fcinfo, 6, "metadata");
    const std::string resources = object_arg(fcinfo, 7, "resources");
    const CheckpointState state = parse_checkpoint_state(arg_text_or(fcinfo, 8, "COMPLETED"));
    if (state != CheckpointState::Active && state != CheckpointState::Completed && state != CheckpointState::Error)
        fail(ErrorKind::InvalidParameter, "a checkpoint reference starts ACTIVE, COMPLETED or ERROR",
             std::string(to_string(state)) + " was given.");
    std::string uuid;
    {
        Spi spi;
        SafeSearchPath path;
        path.enter();
        std::optional<int64_t> task = checked_task(spi, fcinfo, 4);
        uuid = spi.scalar_text(
            "INSERT INTO hopper.checkpoints (task_id, state, steps_completed, format, storage, external_uri, size_bytes,"
            " checksum, resources, metadata, report_time) VALUES ($1, $2, $3, $4, 'external', $5, $6, $7,"
            " $8::pg_catalog.jsonb, $9::pg_catalog.jsonb, pg_catalog.clock_timestamp()) RETURNING uuid::pg_catalog.text",
            {task ? SqlParam::int8(*task) : SqlParam::null(INT8OID), SqlParam::text(to_string(state)),
             steps ? SqlParam::int8(*steps) : SqlParam::null(INT8OID), SqlParam::text(format), SqlParam::text(uri),
             size ? SqlParam::int8(*size) : SqlParam::null(INT8OID),
             checksum.empty() ? SqlParam::null(TEXTOID) : SqlParam::text(checksum), SqlParam::text(resources),
             SqlParam::text(metadata)});
        path.leave();
    }
    PG_RETURN_DATUM(uuid_datum(uuid));
}

// set_checkpoint_state(checkpoint uuid, state text) -> void
HOPPER_FUNCTION(set_checkpoint_state) {
    const std::string uuid = uuid_arg(fcinfo, 0, "checkpoint");
    const CheckpointState to = parse_checkpoint_state(arg_text(fcinfo, 1, "state"));
    Spi spi;
    SafeSearchPath path;
    path.enter();
    CheckpointRow c = find_checkpoint(spi, uuid);
    require_may_modify(c);
    const CheckpointState from = parse_checkpoint_state(c.state);
    if (from == to) PG_RETURN_VOID();
    if (!checkpoint_transition_allowed(from, to))
        fail(ErrorKind::ObjectNotInPrerequisiteState,
                       "checkpoint " + uuid + " cannot go from " + c.state + " to " + to_string(to),
                       "Allowed: ACTIVE to COMPLETED or ERROR, COMPLETED to ERROR, DELETING to DELETED or PARTIALLY_DELETED,"
                       " PARTIALLY_DELETED to DELETED.",
                       is_deleted_state(to) ? "Delete checkpoints with hopper.delete_checkpoints." : "");
    if (c.version_count > 0) refuse_registered(spi, c);
    if (to == CheckpointState::Completed && c.storage == "database") {
        c.state = "COMPLETED";
        (void)read_payload(spi, c);  // a stored payload must be whole before it counts as completed
    }
    uint64_t n = spi.execute("UPDATE hopper.checkpoints SET state = $2, report_time = CASE WHEN $2 = 'COMPLETED'"
                             " THEN pg_catalog.clock_timestamp() ELSE report_time END WHERE checkpoint_id = $1 AND state = $3",
                             {SqlParam::int8(c.id), SqlParam::text(to_string(to)), SqlParam::text(to_string(from))});
    if (n == 0)
        fail(ErrorKind::SerializationFailure, "checkpoint " + uuid + " was changed by another transaction",
                       "", "Retry.");
    path.leave();
    PG_RETURN_VOID();
}

// checkpoint_state(checkpoint uuid) -> bytea
HOPPER_FUNCTION(checkpoint_state) {
    const std::string uuid = uuid_arg(fcinfo, 0, "checkpoint");
    std::string payload;
    {
        Spi spi;
        payload = load_checkpoint(spi, uuid).state;
    }
    PG_RETURN_DATUM(bytes_to_bytea(payload));
}

// materialize_checkpoint(checkpoint uuid, output_table text) -> void
HOPPER_FUNCTION(materialize_checkpoint) {
    const std::string uuid = uuid_arg(fcinfo, 0, "checkpoint");
    const TableName output = resolve_output_table(arg_text(fcinfo, 1, "output_table"), "output table");
    Spi spi;
    int64_t id;
    {
        SafeSearchPath path;
        path.enter();
        id = find_checkpoint(spi, uuid).id;
        path.leave();
    }
    materialize_checkpoint_table(spi, id, output, "", std::nullopt);
    notice("checkpoint " + uuid + " written to " + output.display() + " and " + output.with_suffix("_summary").display());
    PG_RETURN_VOID();
}

// delete_checkpoints(checkpoints uuid[]) -> bigint: all or none.
HOPPER_FUNCTION(delete_checkpoints) {
    require_not_null(fcinfo, 0, "checkpoints");
    Datum arr = PG_GETARG_DATUM(0);
    Spi spi;
    SafeSearchPath path;
    path.enter();
    spi.execute(std::string("SELECT u.u::pg_catalog.text, ") + kCheckpointColumns +
                    " FROM pg_catalog.unnest($1::pg_catalog.uuid[]) AS u(u) LEFT JOIN hopper.checkpoints c ON c.uuid = u.u",
                {SqlParam::datum(arr, UUIDARRAYOID)});
    std::vector<CheckpointRow> rows;
    for (uint64_t r = 0; r < spi.rows(); ++r) {
        if (spi.is_null(r, 0)) fail(ErrorKind::NullValue, "checkpoints must not contain NULL");
        if (spi.is_null(r, 1)) fail(ErrorKind::UndefinedObject, "checkpoint " + spi.text(r, 0) + " does not exist");
        rows.push_back(read_checkpoint_row(spi, r, 1));
    }
    std::vector<int64_t> ids;
    std::set<int64_t> seen;
    for (const CheckpointRow& c : rows) {
        require_may_modify(c);
        if (c.version_count > 0) refuse_registered(spi, c);
        if (c.state != "DELETING" && c.state != "DELETED" && seen.insert(c.id).second) ids.push_back(c.id);
    }
    std::vector<int64_t> changed = explain_serialization_failure(
        rows.size() == 1 ? "checkpoint " + rows[0].uuid : std::string("these checkpoints"),
        [&] { return delete_checkpoint_ids(spi, ids); });
    if (changed.size() < ids.size()) {
        // Something changed since the checks above: a concurrent registration (refused here) or a
        // concurrent deletion (nothing left to do).
        std::set<int64_t> done(changed.begin(), changed.end());
        for (int64_t id : ids) {
            if (done.count(id)) continue;
            CheckpointRow now = find_checkpoint_by_id(spi, id);
            if (now.version_count > 0) refuse_registered(spi, now);
        }
    }
    path.leave();
    PG_RETURN_INT64(int64_t(changed.size()));
}

// gc_checkpoints(run_id, keep_best_per_run, keep_best_overall, keep_latest_per_run,
//                keep_latest_per_configuration, dry_run) -> setof (checkpoint_uuid, run_id, mst_key,
//                iteration, steps_completed, searcher_value)
HOPPER_FUNCTION(gc_checkpoints) {
    std::optional<int64_t> run_id;
    if (!PG_ARGISNULL(0)) run_id = PG_GETARG_INT64(0);
    GcPolicy policy;
    policy.keep_best_per_run = arg_int_or(fcinfo, 1, 1);
    policy.keep_best_overall = arg_int_or(fcinfo, 2, 0);
    policy.keep_latest_per_run = arg_int_or(fcinfo, 3, 0);
    policy.keep_latest_per_configuration = arg_int_or(fcinfo, 4, 1);
    const bool dry_run = arg_bool_or(fcinfo, 5, false);
    check_gc_policy(policy);
    call([&] { InitMaterializedSRF(fcinfo, 0); });
    Spi spi;
    SafeSearchPath path;
    path.enter();
    if (run_id) {
        spi.execute("SELECT 1 FROM hopper.runs WHERE run_id = $1", {SqlParam::int8(*run_id)});
        if (spi.rows() == 0) fail(ErrorKind::UndefinedObject, "training run " + std::to_string(*run_id) + " does not exist");
    }
    // Candidates: the caller's COMPLETED training checkpoints (of the run).
    spi.execute("SELECT c.checkpoint_id, tr.run_id, ct.trial_id, ct.signed_searcher_value,"
                " c.version_count > 0 OR EXISTS (SELECT 1 FROM hopper.trials w WHERE w.warm_start_checkpoint_id = c.checkpoint_id)"
                " FROM hopper.checkpoints c"
                " JOIN hopper.checkpoint_training ct ON ct.checkpoint_id = c.checkpoint_id AND ct.trial_id = c.task_id"
                " JOIN hopper.trials tr ON tr.trial_id = ct.trial_id"
                " WHERE c.state = 'COMPLETED' AND hopper.may_modify(c.owner) AND ($1::pg_catalog.int8 IS NULL OR tr.run_id = $1)",
                {run_id ? SqlParam::int8(*run_id) : SqlParam::null(INT8OID)});
    std::vector<GcCandidate> candidates;
    for (uint64_t r = 0; r < spi.rows(); ++r) {
        GcCandidate c;
        c.id = spi.integer(r, 0);
        c.run = spi.integer(r, 1);
        c.configuration = spi.integer(r, 2);
        if (!spi.is_null(r, 3)) c.signed_value = spi.number(r, 3);
        c.is_protected = spi.boolean(r, 4);
        candidates.push_back(c);
    }
    std::vector<int64_t> remove = select_checkpoints_to_remove(candidates, policy);
    // A checkpoint registered meanwhile is skipped by the deletion's own re-check.
    if (!dry_run)
        remove = explain_serialization_failure("these checkpoints", [&] { return delete_checkpoint_ids(spi, remove); });
    spi.execute("SELECT e.uuid, e.run_id, e.mst_key, e.iteration, e.steps_completed, e.searcher_value"
                " FROM hopper.checkpoints_expanded e WHERE e.checkpoint_id = ANY ($1) ORDER BY e.checkpoint_id",
                {SqlParam::int8_array(remove)});
    put_result_rows(spi, fcinfo);
    path.leave();
    return (Datum)0;
}

namespace {

// ORDER BY for a sort key over hopper.checkpoints_expanded-like columns (alias e); the metric name,
// if any, is bound as parameter `metric_param`.
std::string order_clause(const SortKey& key, bool descending, int metric_param) {
    std::string expr;
    switch (key.kind) {
        case SortKey::Steps: expr = "e.steps_completed"; break;
        case SortKey::ReportTime: expr = "e.report_time"; break;
        case SortKey::SearcherMetric: expr = "e.signed_searcher_value"; break;
        case SortKey::TrainingMetric:
            expr = "(e.training_metrics ->> $" + std::to_string(metric_param) + ")::pg_catalog.float8";
            break;
        case SortKey::ValidationMetric:
            expr = "(e.validation_metrics ->> $" + std::to_string(metric_param) + ")::pg_catalog.float8";
            break;
        case SortKey::Version: expr = "e.version"; break;
        case SortKey::CreationTime: expr = "e.creation_time"; break;
    }
    const char* dir = descending ? " DESC" : " ASC";
    return " ORDER BY " + expr + dir + " NULLS LAST";
}

}  // namespace

// list_checkpoints(run_id, mst_key, states, order_by, descending, page_size, page_offset)
HOPPER_FUNCTION(list_checkpoints) {
    std::optional<int64_t> run_id;
    std::optional<int32_t> mst_key;
    if (!PG_ARGISNULL(0)) run_id = PG_GETARG_INT64(0);
    if (!PG_ARGISNULL(1)) mst_key = PG_GETARG_INT32(1);
    std::optional<std::vector<std::string>> states;
    if (!PG_ARGISNULL(2)) {
        states = text_array_to_vector(PG_GETARG_DATUM(2), "states");
        for (std::string& s : *states) s = to_string(parse_checkpoint_state(s));
    }
    const SortKey key = parse_checkpoint_sort(arg_text_or(fcinfo, 3, "report_time"));
    const bool descending = arg_bool_or(fcinfo, 4, true);
    const int64_t page_size = arg_int_or(fcinfo, 5, 100);
    const int64_t page_offset = arg_int_or(fcinfo, 6, 0);
    check_page(page_size, page_offset);
    call([&] { InitMaterializedSRF(fcinfo, 0); });
    Spi spi;
    SafeSearchPath path;
    path.enter();
    // One statement: the page and the total come from the same snapshot.
    std::string sql =
        "SELECT e.uuid, e.run_id, e.mst_key, e.iteration, e.state, e.steps_completed, e.report_time, e.searcher_metric,"
        " e.searcher_value, e.training_metrics, e.validation_metrics, e.size_bytes, count(*) OVER () AS total_count"
        " FROM hopper.checkpoints_expanded e"
        " WHERE ($1::pg_catalog.int8 IS NULL OR e.run_id = $1) AND ($2::pg_catalog.int4 IS NULL OR e.mst_key = $2)"
        " AND ($3::pg_catalog.text[] IS NULL OR e.state = ANY ($3))" +
        order_clause(key, descending, 6) + ", e.checkpoint_id" + (descending ? " DESC" : " ASC") + " LIMIT $4 OFFSET $5";
    spi.execute(sql, {run_id ? SqlParam::int8(*run_id) : SqlParam::null(INT8OID),
                      mst_key ? SqlParam::int4(*mst_key) : SqlParam::null(INT4OID),
                      states ? SqlParam::text_array(*states) : SqlParam::null(TEXTARRAYOID), SqlParam::int8(page_size),
                      SqlParam::int8(page_offset), SqlParam::text(key.metric)});
    put_result_rows(spi, fcinfo);
    path.leave();
    return (Datum)0;
}

namespace hopper::pg {
// Used by registry.cpp for list_model_versions.
std::string registry_order_clause(const SortKey& key, bool descending, int metric_param) {
    return order_clause(key, descending, metric_param);
}
void registry_put_result_rows(Spi& spi, FunctionCallInfo fcinfo) { put_result_rows(spi, fcinfo); }
}  // namespace hopper::pg
