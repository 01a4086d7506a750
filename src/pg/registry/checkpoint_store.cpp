#include "pg/registry/checkpoint_store.h"

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hopper/error.h"
#include "hopper/state_format.h"
#include "pg/common/datum.h"
#include "pg/common/output_tables.h"
#include "pg/training/preprocess.h"

extern "C" {
#include "common/cryptohash.h"
#include "common/sha2.h"
#include "utils/fmgrprotos.h"
#include "utils/uuid.h"
}

namespace hopper::pg {

using nlohmann::json;

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

const char* const kCheckpointColumns =
    "c.checkpoint_id, c.uuid::text, c.state, c.storage, c.external_uri, c.format, c.checksum, c.owner::text,"
    " c.size_bytes, (SELECT pg_catalog.count(*) FROM hopper.model_versions v WHERE v.checkpoint_id = c.checkpoint_id),"
    " hopper.may_modify(c.owner)";

CheckpointRow read_checkpoint_row(Spi& spi, uint64_t r, int o) {
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
    if (spi.rows() == 0)
        fail(ErrorKind::UndefinedObject, "checkpoint with id " + std::to_string(id) + " does not exist");
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
    spi.execute(
        "SELECT pg_catalog.string_agg(data, ''::pg_catalog.bytea ORDER BY chunk_no), count(*), max(chunk_no)"
        " FROM hopper.checkpoint_chunks WHERE checkpoint_id = $1",
        {SqlParam::int8(c.id)});
    const int64_t chunks = spi.integer(0, 1);
    std::string payload = spi.is_null(0, 0) ? std::string() : spi.bytes(0, 0);
    const std::string corrupt = "checkpoint " + c.uuid + " is corrupt";
    if (chunks == 0) fail(ErrorKind::Data, corrupt, "Its payload is missing.");
    if (spi.integer(0, 2) != chunks - 1) fail(ErrorKind::Data, corrupt, "Chunks of its payload are missing.");
    if (c.size && int64_t(payload.size()) != *c.size)
        fail(ErrorKind::Data, corrupt,
             "Its payload has " + std::to_string(payload.size()) + " bytes; " + std::to_string(*c.size) +
                 " were stored.");
    if (!c.checksum.empty() && sha256_hex(payload) != c.checksum)
        fail(ErrorKind::Data, corrupt, "Its payload does not match the stored checksum " + c.checksum + ".");
    if (c.format == kModelStateFormat) (void)inspect_state(payload);  // the state's own CRC and structure
    return payload;
}

// Writes a model state as a COMPLETED checkpoint: ACTIVE while its chunks go in, then COMPLETED.
Stored store_checkpoint(Spi& spi, std::optional<int64_t> task_id, std::string_view payload,
                        std::optional<int64_t> steps, const std::string& metadata, const std::string& resources,
                        const std::string& format) {
    spi.execute(
        "INSERT INTO hopper.checkpoints (task_id, state, steps_completed, format, storage, size_bytes, checksum,"
        " resources, metadata) VALUES ($1, 'ACTIVE', $2, $3, 'database', $4, $5, $6::pg_catalog.jsonb,"
        " $7::pg_catalog.jsonb) RETURNING checkpoint_id, uuid::pg_catalog.text",
        {task_id ? SqlParam::int8(*task_id) : SqlParam::null(INT8OID),
         steps ? SqlParam::int8(*steps) : SqlParam::null(INT8OID), SqlParam::text(format),
         SqlParam::int8(int64_t(payload.size())), SqlParam::text_copy(sha256_hex(payload)), SqlParam::text(resources),
         SqlParam::text(metadata)});
    Stored s{spi.integer(0, 0), spi.text(0, 1)};
    int32_t n = 0;
    for (std::string_view chunk : split_chunks(payload)) {
        spi.execute("INSERT INTO hopper.checkpoint_chunks (checkpoint_id, chunk_no, data) VALUES ($1, $2, $3)",
                    {SqlParam::int8(s.id), SqlParam::int4(n++), SqlParam::bytea(chunk)});
    }
    spi.execute(
        "UPDATE hopper.checkpoints SET state = 'COMPLETED', report_time = pg_catalog.clock_timestamp()"
        " WHERE checkpoint_id = $1",
        {SqlParam::int8(s.id)});
    return s;
}

// Checkpoints -> DELETED (in the database) or DELETING (external), payload removed; returns the
// ids that changed. Only unregistered checkpoints change, as hopper.model_versions says: the rows
// are locked first (a registration rewrites its checkpoint's row, so one in progress is waited
// for, and under REPEATABLE READ one committed meanwhile is a serialization failure), then the
// versions are looked up by a statement whose snapshot sees every registration committed before.
std::vector<int64_t> delete_checkpoint_ids(Spi& spi, const std::vector<int64_t>& ids) {
    spi.execute(
        "SELECT 1 FROM hopper.checkpoints WHERE checkpoint_id = ANY ($1) ORDER BY checkpoint_id FOR NO KEY UPDATE",
        {SqlParam::int8_array(ids)});
    spi.execute(
        "UPDATE hopper.checkpoints c SET state = CASE storage WHEN 'database' THEN 'DELETED' ELSE 'DELETING' END"
        " WHERE c.checkpoint_id = ANY ($1) AND c.state NOT IN ('DELETING', 'DELETED')"
        " AND NOT EXISTS (SELECT 1 FROM hopper.model_versions v WHERE v.checkpoint_id = c.checkpoint_id)"
        " RETURNING c.checkpoint_id",
        {SqlParam::int8_array(ids)});
    std::vector<int64_t> changed;
    for (uint64_t r = 0; r < spi.rows(); ++r) changed.push_back(spi.integer(r, 0));
    if (!changed.empty())
        spi.execute("DELETE FROM hopper.checkpoint_chunks WHERE checkpoint_id = ANY ($1)",
                    {SqlParam::int8_array(changed)});
    return changed;
}

namespace {
std::string versions_using(Spi& spi, int64_t checkpoint_id) {
    spi.execute(
        "SELECT pg_catalog.string_agg(pg_catalog.format('%s version %s', m.name, v.version), ', '"
        " ORDER BY m.name, v.version) FROM hopper.model_versions v JOIN hopper.models m USING (model_id)"
        " WHERE v.checkpoint_id = $1",
        {SqlParam::int8(checkpoint_id)});
    return spi.is_null(0, 0) ? std::string("a model version") : spi.text(0, 0);
}

}  // namespace

void refuse_registered(Spi& spi, const CheckpointRow& c) {
    fail(ErrorKind::ObjectInUse, "checkpoint " + c.uuid + " is registered as a model version",
         "It is " + versions_using(spi, c.id) + ".", "Delete those model versions first.");
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
    spi.execute(
        "SELECT e.mst_key, e.model_id, e.model_arch::pg_catalog.text, e.compile_params, e.fit_params,"
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
    // jsonb holds numbers beyond double's range, which the parser refuses (an internal error before).
    if (!data.empty()) {
        try {
            facts = json::parse(data);
        } catch (const json::exception&) {
            fail(ErrorKind::Data, "checkpoint " + c.uuid + " describes its data with values hopper cannot read",
                 "A number in its data facts is beyond double precision's range.");
        }
    }
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
            fail(ErrorKind::InvalidParameter,
                 "checkpoint " + c.uuid + " names an invalid dependent_vartype \"" + t + "\"",
                 "It must be a type name such as text, integer or character varying(10).");
    }
    spi.execute("SELECT pg_catalog.format_type(pg_catalog.to_regtype($1), NULL)",
                {SqlParam::text_copy(facts["dependent_vartype"].get<std::string>())});
    if (spi.is_null(0, 0))
        fail(ErrorKind::InvalidParameter, "checkpoint " + c.uuid + " names an unknown dependent_vartype \"" +
                                              facts["dependent_vartype"].get<std::string>() + "\"");
    facts["dependent_vartype"] = spi.text(0, 0);

    const std::string payload = read_payload(spi, c);
    StateSummary st = inspect_state(payload);
    // predict names each output by its class: a checkpoint whose facts name too few or too many
    // classes would give a model table that cannot be scored.
    if (response == "classification")
        check_class_values(std::vector<std::string>(facts["class_values"].size()), false, st.config.arch.output_dim(),
                           "checkpoint " + c.uuid);
    if (arch.empty()) arch = st.config.arch.to_json();
    if (compile.empty()) compile = st.config.compile.to_json();
    if (fit.empty()) fit = st.config.fit.to_json();
    const std::string source =
        model_name.empty() ? "checkpoint " + c.uuid : "model " + model_name + " version " + std::to_string(*version);

    spi.execute(
        "CREATE TABLE " + output.quoted() +
        " (mst_key pg_catalog.int4 PRIMARY KEY, model_id pg_catalog.int4, model_state pg_catalog.bytea NOT NULL,"
        " model_arch pg_catalog.jsonb NOT NULL, compile_params pg_catalog.text NOT NULL,"
        " fit_params pg_catalog.text NOT NULL, model_config pg_catalog.jsonb NOT NULL)");
    spi.execute("ALTER TABLE " + output.quoted() + " ALTER COLUMN model_state SET STORAGE EXTERNAL");
    const std::string token = new_output_token(spi);
    record_output_table(spi, output, "model", token, "hopper model from " + source, run_id);
    spi.execute("INSERT INTO " + output.quoted() +
                    " VALUES ($1, $2, $3, $4::pg_catalog.jsonb, $5, $6, $7::pg_catalog.jsonb)",
                {SqlParam::int4(mst_key), model_id ? SqlParam::int4(*model_id) : SqlParam::null(INT4OID),
                 SqlParam::bytea(payload), SqlParam::text(arch), SqlParam::text(compile), SqlParam::text(fit),
                 SqlParam::text_copy(st.config.to_json())});
    spi.execute(
        "CREATE TABLE " + summary.quoted() +
        " (source_table pg_catalog.text, model_output_table pg_catalog.text, method pg_catalog.text,"
        " source pg_catalog.text, checkpoint_uuid pg_catalog.uuid, model_name pg_catalog.text,"
        " model_version pg_catalog.int4, run_id pg_catalog.int8, mst_key pg_catalog.int4,"
        " steps_completed pg_catalog.int8, dependent_varname pg_catalog.text, independent_varname pg_catalog.text,"
        " dependent_vartype pg_catalog.text, response_type pg_catalog.text, class_values pg_catalog.text[],"
        " normalizing_const pg_catalog.float8, scale pg_catalog.text, feature_center pg_catalog.float4[],"
        " feature_spread pg_catalog.float4[], num_rows pg_catalog.int8, hopper_version pg_catalog.text,"
        " feature_recipe pg_catalog.jsonb)");
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
            " (d ->> 'num_rows')::pg_catalog.int8, $10,"
            " CASE WHEN pg_catalog.jsonb_typeof(d -> 'feature_recipe') = 'object' THEN d -> 'feature_recipe' END"
            " FROM (SELECT $1::pg_catalog.jsonb AS d) AS s",
        {SqlParam::text_copy(facts.dump()), SqlParam::text_copy(output.display()), SqlParam::text(source),
         SqlParam::text(c.uuid), model_name.empty() ? SqlParam::null(TEXTOID) : SqlParam::text(model_name),
         version ? SqlParam::int4(*version) : SqlParam::null(INT4OID),
         run_id ? SqlParam::int8(*run_id) : SqlParam::null(INT8OID), SqlParam::int4(mst_key),
         steps ? SqlParam::int8(*steps) : SqlParam::null(INT8OID), SqlParam::text(HOPPER_VERSION)});
    path.leave();
}

}  // namespace hopper::pg
