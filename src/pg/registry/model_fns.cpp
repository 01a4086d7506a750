// The model registry's SQL functions: models, their numbered versions and aliases (tables in
// sql/ext/40_registry.sql).
//
// The functions check what they can up front, to give precise errors, and then make one change that
// the database checks again atomically: registration numbers the version and protects the checkpoint
// in a trigger that holds the model's and the checkpoint's row locks (so concurrent registrations,
// archiving and checkpoint deletion serialize there; see the trigger's comments).
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hopper/error.h"
#include "hopper/recipe.h"
#include "hopper/registry.h"
#include "pg/common/datum.h"
#include "pg/engine/engine.h"
#include "pg/registry/checkpoint_store.h"
#include "pg/registry/listing.h"
#include "pg/registry/model_versions.h"

namespace hopper::pg {

namespace {
// The registry lives on the coordinator. Citus runs a query over a distributed table on its shards,
// function calls in the select list included, so SELECT hopper.predict_class('m', t) FROM t looked
// the model up on a worker and said it did not exist (a Citus user sweep): say where it ran and how
// to score the rows instead. A worker's own registry tables are never read: any role that can log in
// there could create a model of the name, and the coordinator's rows were then scored by her model
// (a hostile Citus review: 864 of 3000 right where the model gets 2932).
void refuse_on_citus_worker(Spi& spi, const std::string& name) {
    if (!detect_engine(spi)->is_worker_node(spi)) return;
    fail(ErrorKind::FeatureNotSupported, "model \"" + name + "\" cannot be used on a Citus worker",
         "The call ran on a worker node (Citus runs a select list over a distributed table on its shards); "
         "hopper's model registry is the coordinator's, and a worker's own registry tables are not read.",
         "Score the rows on the coordinator: WITH r AS MATERIALIZED (SELECT * FROM the_table) SELECT "
         "hopper.predict_class(" +
             quote_literal(name) + ", r) FROM r; or hopper.predict into a table.");
}

// What a checkpoint's data facts (checkpoints_expanded.data) say a model reads and answers, as
// register_model_version compares a new version with the latest one.
struct VersionInputs {
    std::string inputs;        // the recipe's columns (name and kind) and width, or independent_varname
    std::string target;        // dependent_varname
    std::string response;      // response_type
    std::string class_values;  // as JSON ("null" for a regressor)
};

VersionInputs version_inputs(const std::string& data_text) {
    using json = nlohmann::json;
    VersionInputs v;
    const json d = json::parse(data_text, nullptr, false);
    if (!d.is_object()) return v;
    auto text = [&](const char* key) {
        auto it = d.find(key);
        return it != d.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    auto recipe = d.find("feature_recipe");
    if (recipe != d.end() && recipe->is_object()) {
        // Read as the core reads a recipe; one it refuses (a checkpoint made by hand) says nothing.
        try {
            const Recipe r = Recipe::from_json(recipe->dump());
            for (int c = 0; c < r.num_columns(); ++c)
                v.inputs += (c == 0 ? "columns " : ", ") + r.column_names()[std::size_t(c)] + " (" +
                            to_string(r.column_kind(c)) + ")";
            v.inputs += ", " + std::to_string(r.width()) + " features";
        } catch (const Error&) { v.inputs.clear(); }
    } else if (!text("independent_varname").empty()) {
        v.inputs = "independent_varname " + text("independent_varname");
    }
    v.target = text("dependent_varname");
    v.response = text("response_type");
    auto cv = d.find("class_values");
    v.class_values = cv == d.end() ? "null" : cv->dump();
    return v;
}

std::string shortened(const std::string& s) { return s.size() <= 200 ? s : s.substr(0, 197) + "..."; }

// A checkpoint registered again as a version of the same model makes an identical version: a
// WARNING names the version it already is (registered all the same, as concurrent registrations and
// scripts that register a run's checkpoint once per step rely on numbering).
bool warn_registered_again(Spi& spi, const ModelRow& m, int64_t version, int64_t checkpoint_id) {
    spi.execute(
        "SELECT version FROM hopper.model_versions WHERE model_id = $1 AND checkpoint_id = $2"
        " AND version < $3 ORDER BY version LIMIT 1",
        {SqlParam::int8(m.id), SqlParam::int8(checkpoint_id), SqlParam::int4(int32_t(version))});
    if (spi.rows() == 0) return false;
    const std::string v = std::to_string(spi.integer(0, 0)), n = std::to_string(version);
    warning("version " + n + " of model \"" + m.name + "\" is the checkpoint of version " + v + " again",
            "The two versions are identical.",
            "To make version " + v + " the one an alias names, use hopper.set_model_alias(" + quote_literal(m.name) +
                ", 'name', " + v + "); delete version " + n + " with hopper.delete_model_version(" +
                quote_literal(m.name) + ", " + n + ") if it was not meant.");
    return true;
}

// A new version whose data differs from the version before it (another table's checkpoint, other
// columns, classes or kind of answer) is what every call without version or alias now scores with:
// registered all the same (a model's inputs may change on purpose), with a WARNING saying what differs.
void warn_unlike_previous(Spi& spi, const ModelRow& m, int64_t version, int64_t checkpoint_id) {
    spi.execute(
        "SELECT v.version, p.data::pg_catalog.text, n.data::pg_catalog.text"
        " FROM hopper.model_versions v JOIN hopper.checkpoints_expanded p ON p.checkpoint_id = v.checkpoint_id,"
        " hopper.checkpoints_expanded n WHERE v.model_id = $1 AND v.version < $2 AND n.checkpoint_id = $3"
        " ORDER BY v.version DESC LIMIT 1",
        {SqlParam::int8(m.id), SqlParam::int4(int32_t(version)), SqlParam::int8(checkpoint_id)});
    if (spi.rows() == 0 || spi.is_null(0, 1) || spi.is_null(0, 2)) return;
    const std::string previous = "version " + spi.text(0, 0);
    const VersionInputs old_v = version_inputs(spi.text(0, 1)), new_v = version_inputs(spi.text(0, 2));
    std::vector<std::string> what;
    std::string details;
    // A fact one of them lacks (a checkpoint imported from ONNX or made by hand has none or some) is
    // no difference to speak of: only facts both have are compared.
    auto compare = [&](const std::string& a, const std::string& b, const char* name) {
        if (a == b || a.empty() || b.empty() || a == "null" || b == "null") return;
        what.push_back(name);
        details += std::string(details.empty() ? "" : " ") + "Its " + name + ": " + shortened(b) + "; " + previous +
                   "'s: " + shortened(a) + ".";
    };
    compare(old_v.inputs, new_v.inputs, "input columns");
    compare(old_v.target, new_v.target, "target column");
    compare(old_v.response, new_v.response, "response_type");
    compare(old_v.class_values, new_v.class_values, "class_values");
    if (what.empty()) return;
    std::string list;
    for (std::size_t i = 0; i < what.size(); ++i)
        list += (i == 0 ? "" : i + 1 == what.size() ? " and " : ", ") + what[i];
    warning("version " + std::to_string(version) + " of model \"" + m.name + "\" differs from " + previous +
                " in its " + list,
            details,
            "It is now the latest version, which calls without version or alias score with (hopper.predict_class(" +
                quote_literal(m.name) + ", ...)); if it is no successor of " + previous +
                ", delete it with hopper.delete_model_version and register it under a model of its own.");
}
}  // namespace

ModelRow find_model(Spi& spi, const std::string& name, bool for_change) {
    refuse_on_citus_worker(spi, name);
    spi.execute(
        "SELECT model_id, name, archived, owner::pg_catalog.text, hopper.may_modify(owner) FROM hopper.models"
        " WHERE pg_catalog.lower(name) = pg_catalog.lower($1)",
        {SqlParam::text(name)});
    if (spi.rows() == 0)
        fail(ErrorKind::UndefinedObject, "model \"" + name + "\" does not exist", "",
             "Create it with hopper.create_model.");
    ModelRow m{spi.integer(0, 0), spi.text(0, 1), spi.text(0, 3), spi.boolean(0, 2), spi.boolean(0, 4)};
    if (for_change && !m.may_modify)
        fail(ErrorKind::Privilege, "permission denied for model \"" + m.name + "\"",
             "It belongs to role " + m.owner + ".", "Ask for membership in role " + m.owner + ".");
    return m;
}

// The version named by number, by alias, or the latest.
VersionRef resolve_version(Spi& spi, const ModelRow& m, std::optional<int32_t> version,
                           std::optional<std::string> alias) {
    if (version && alias) fail(ErrorKind::InvalidParameter, "give a version or an alias, not both");
    if (alias) {
        spi.execute(
            "SELECT v.version, v.version_id, v.checkpoint_id FROM hopper.model_aliases a"
            " JOIN hopper.model_versions v ON v.version_id = a.version_id"
            " WHERE a.model_id = $1 AND pg_catalog.lower(a.alias) = pg_catalog.lower($2)",
            {SqlParam::int8(m.id), SqlParam::text(*alias)});
        if (spi.rows() == 0)
            fail(ErrorKind::UndefinedObject, "alias \"" + *alias + "\" of model \"" + m.name + "\" does not exist");
    } else if (version) {
        spi.execute(
            "SELECT version, version_id, checkpoint_id FROM hopper.model_versions WHERE model_id = $1 AND version = $2",
            {SqlParam::int8(m.id), SqlParam::int4(*version)});
        if (spi.rows() == 0)
            fail(ErrorKind::UndefinedObject,
                 "version " + std::to_string(*version) + " of model \"" + m.name + "\" does not exist");
    } else {
        spi.execute(
            "SELECT version, version_id, checkpoint_id FROM hopper.model_versions WHERE model_id = $1"
            " ORDER BY version DESC LIMIT 1",
            {SqlParam::int8(m.id)});
        if (spi.rows() == 0)
            fail(ErrorKind::UndefinedObject, "model \"" + m.name + "\" has no versions", "",
                 "Register one with hopper.register_model_version.");
    }
    return VersionRef{int32_t(spi.integer(0, 0)), spi.integer(0, 1), spi.integer(0, 2)};
}

namespace {

std::vector<std::string> labels_arg(FunctionCallInfo fcinfo, int i) {
    if (PG_NARGS() <= i || PG_ARGISNULL(i)) return {};
    return normalize_labels(text_array_to_vector(PG_GETARG_DATUM(i), "labels"));
}

std::optional<std::string> text_or_null(FunctionCallInfo fcinfo, int i) {
    if (PG_NARGS() <= i || PG_ARGISNULL(i)) return std::nullopt;
    return text_to_string(PG_GETARG_DATUM(i));
}

SqlParam nullable(const std::optional<std::string>& s) { return s ? SqlParam::text(*s) : SqlParam::null(TEXTOID); }

std::optional<int32_t> int4_or_null(FunctionCallInfo fcinfo, int i) {
    if (PG_NARGS() <= i || PG_ARGISNULL(i)) return std::nullopt;
    return PG_GETARG_INT32(i);
}

}  // namespace
}  // namespace hopper::pg

using namespace hopper;
using namespace hopper::pg;

// create_model(name, description, metadata, labels, notes) -> bigint
HOPPER_FUNCTION(create_model) {
    const std::string name = arg_text(fcinfo, 0, "name");
    check_registry_name(name, "model name");
    const std::optional<std::string> description = text_or_null(fcinfo, 1), notes = text_or_null(fcinfo, 4);
    const std::string metadata = arg_json_object(fcinfo, 2, "metadata");
    const std::vector<std::string> labels = labels_arg(fcinfo, 3);
    Spi spi;
    SafeSearchPath path;
    path.enter();
    refuse_on_citus_worker(spi, name);
    // ON CONFLICT waits for a concurrent creator of the same name and then reports it cleanly; only
    // the name's conflict (any other is an error of its own, not "already exists").
    spi.execute(
        "INSERT INTO hopper.models (name, description, metadata, labels, notes)"
        " VALUES ($1, $2, $3::pg_catalog.jsonb, $4, $5) ON CONFLICT ((pg_catalog.lower(name))) DO NOTHING"
        " RETURNING model_id",
        {SqlParam::text(name), nullable(description), SqlParam::text(metadata), SqlParam::text_array(labels),
         nullable(notes)});
    if (spi.rows() == 0) {
        spi.execute("SELECT name FROM hopper.models WHERE pg_catalog.lower(name) = pg_catalog.lower($1)",
                    {SqlParam::text(name)});
        const std::string existing = spi.rows() ? spi.text(0, 0) : name;
        fail(ErrorKind::DuplicateObject, "model \"" + name + "\" already exists",
             existing == name ? "" : "Model names are unique without regard to case; \"" + existing + "\" exists.");
    }
    const int64_t id = spi.integer(0, 0);
    path.leave();
    PG_RETURN_INT64(id);
}

namespace {

void set_archived(FunctionCallInfo fcinfo, bool archived) {
    const std::string name = arg_text(fcinfo, 0, "name");
    Spi spi;
    SafeSearchPath path;
    path.enter();
    ModelRow m = find_model(spi, name, true);
    if (m.archived != archived)
        explain_serialization_failure("model \"" + m.name + "\"", [&] {
            return spi.execute("UPDATE hopper.models SET archived = $2 WHERE model_id = $1",
                               {SqlParam::int8(m.id), SqlParam::boolean(archived)});
        });
    path.leave();
}

}  // namespace

// archive_model(name) -> void
HOPPER_FUNCTION(archive_model) {
    set_archived(fcinfo, true);
    PG_RETURN_VOID();
}

// unarchive_model(name) -> void
HOPPER_FUNCTION(unarchive_model) {
    set_archived(fcinfo, false);
    PG_RETURN_VOID();
}

// delete_model(name) -> void
HOPPER_FUNCTION(delete_model) {
    const std::string name = arg_text(fcinfo, 0, "name");
    Spi spi;
    SafeSearchPath path;
    path.enter();
    ModelRow m = find_model(spi, name, true);
    explain_serialization_failure("model \"" + m.name + "\"", [&] {
        return spi.execute("DELETE FROM hopper.models WHERE model_id = $1", {SqlParam::int8(m.id)});
    });
    path.leave();
    PG_RETURN_VOID();
}

// register_model_version(model_name, checkpoint, name, comment, metadata, labels, notes) -> integer
HOPPER_FUNCTION(register_model_version) {
    const std::string model_name = arg_text(fcinfo, 0, "model_name");
    const std::string uuid = uuid_arg(fcinfo, 1, "checkpoint");
    const std::optional<std::string> name = text_or_null(fcinfo, 2), comment = text_or_null(fcinfo, 3),
                                     notes = text_or_null(fcinfo, 6);
    const std::string metadata = arg_json_object(fcinfo, 4, "metadata");
    const std::vector<std::string> labels = labels_arg(fcinfo, 5);
    Spi spi;
    SafeSearchPath path;
    path.enter();
    ModelRow m = find_model(spi, model_name, true);
    if (m.archived)
        fail(ErrorKind::ObjectNotInPrerequisiteState, "model \"" + m.name + "\" is archived",
             "An archived model accepts no new versions.", "Unarchive it with hopper.unarchive_model first.");
    spi.execute("SELECT checkpoint_id, state FROM hopper.checkpoints WHERE uuid = $1::pg_catalog.uuid",
                {SqlParam::text(uuid)});
    if (spi.rows() == 0) fail(ErrorKind::UndefinedObject, "checkpoint " + uuid + " does not exist");
    const int64_t checkpoint_id = spi.integer(0, 0);
    const std::string state = spi.text(0, 1);
    if (state != "COMPLETED")
        fail(ErrorKind::ObjectNotInPrerequisiteState, "checkpoint " + uuid + " is " + state,
             "Only COMPLETED checkpoints can be registered as model versions.");
    // The trigger numbers the version and protects the checkpoint atomically (and re-checks both).
    const int64_t version = explain_serialization_failure("model \"" + m.name + "\" or checkpoint " + uuid, [&] {
        return spi.scalar_int(
            "INSERT INTO hopper.model_versions (model_id, checkpoint_id, name, comment, metadata, labels,"
            " notes) VALUES ($1, $2, $3, $4, $5::pg_catalog.jsonb, $6, $7) RETURNING version",
            {SqlParam::int8(m.id), SqlParam::int8(checkpoint_id), nullable(name), nullable(comment),
             SqlParam::text(metadata), SqlParam::text_array(labels), nullable(notes)});
    });
    if (!warn_registered_again(spi, m, version, checkpoint_id)) warn_unlike_previous(spi, m, version, checkpoint_id);
    path.leave();
    PG_RETURN_INT32(int32_t(version));
}

// delete_model_version(model_name, version) -> void
HOPPER_FUNCTION(delete_model_version) {
    const std::string model_name = arg_text(fcinfo, 0, "model_name");
    const int32_t version = int32_t(arg_int(fcinfo, 1, "version"));
    Spi spi;
    SafeSearchPath path;
    path.enter();
    ModelRow m = find_model(spi, model_name, true);
    uint64_t n = explain_serialization_failure("model \"" + m.name + "\"", [&] {
        return spi.execute("DELETE FROM hopper.model_versions WHERE model_id = $1 AND version = $2",
                           {SqlParam::int8(m.id), SqlParam::int4(version)});
    });
    if (n == 0)
        fail(ErrorKind::UndefinedObject,
             "version " + std::to_string(version) + " of model \"" + m.name + "\" does not exist");
    path.leave();
    PG_RETURN_VOID();
}

// set_model_alias(model_name, alias, version) -> void
HOPPER_FUNCTION(set_model_alias) {
    const std::string model_name = arg_text(fcinfo, 0, "model_name");
    const std::string alias = arg_text(fcinfo, 1, "alias");
    check_registry_name(alias, "alias");
    const int32_t version = int32_t(arg_int(fcinfo, 2, "version"));
    Spi spi;
    SafeSearchPath path;
    path.enter();
    ModelRow m = find_model(spi, model_name, true);
    VersionRef v = resolve_version(spi, m, version, std::nullopt);
    spi.execute(
        "INSERT INTO hopper.model_aliases (model_id, alias, version_id) VALUES ($1, $2, $3)"
        " ON CONFLICT (model_id, pg_catalog.lower(alias)) DO UPDATE SET version_id = EXCLUDED.version_id,"
        " alias = EXCLUDED.alias, last_updated_time = pg_catalog.now()",
        {SqlParam::int8(m.id), SqlParam::text(alias), SqlParam::int8(v.version_id)});
    path.leave();
    PG_RETURN_VOID();
}

// delete_model_alias(model_name, alias) -> void
HOPPER_FUNCTION(delete_model_alias) {
    const std::string model_name = arg_text(fcinfo, 0, "model_name");
    const std::string alias = arg_text(fcinfo, 1, "alias");
    Spi spi;
    SafeSearchPath path;
    path.enter();
    ModelRow m = find_model(spi, model_name, true);
    uint64_t n = spi.execute(
        "DELETE FROM hopper.model_aliases WHERE model_id = $1 AND pg_catalog.lower(alias) = pg_catalog.lower($2)",
        {SqlParam::int8(m.id), SqlParam::text(alias)});
    if (n == 0) fail(ErrorKind::UndefinedObject, "alias \"" + alias + "\" of model \"" + m.name + "\" does not exist");
    path.leave();
    PG_RETURN_VOID();
}

// model_version_state(model_name, version, alias) -> bytea
HOPPER_FUNCTION(model_version_state) {
    const std::string model_name = arg_text(fcinfo, 0, "model_name");
    const std::optional<int32_t> version = int4_or_null(fcinfo, 1);
    const std::optional<std::string> alias = text_or_null(fcinfo, 2);
    std::string payload;
    {
        Spi spi;
        SafeSearchPath path;
        path.enter();
        ModelRow m = find_model(spi, model_name, false);
        VersionRef v = resolve_version(spi, m, version, alias);
        std::string uuid =
            spi.scalar_text("SELECT uuid::pg_catalog.text FROM hopper.checkpoints WHERE checkpoint_id = $1",
                            {SqlParam::int8(v.checkpoint_id)});
        path.leave();
        payload = load_checkpoint(spi, uuid).state;
    }
    PG_RETURN_DATUM(bytes_to_bytea(payload));
}

// materialize_model_version(model_name, output_table, version, alias) -> void
HOPPER_FUNCTION(materialize_model_version) {
    const std::string model_name = arg_text(fcinfo, 0, "model_name");
    const TableName output = resolve_output_table(arg_text(fcinfo, 1, "output_table"), "output table");
    const std::optional<int32_t> version = int4_or_null(fcinfo, 2);
    const std::optional<std::string> alias = text_or_null(fcinfo, 3);
    Spi spi;
    ModelRow m;
    VersionRef v;
    {
        SafeSearchPath path;
        path.enter();
        m = find_model(spi, model_name, false);
        v = resolve_version(spi, m, version, alias);
        path.leave();
    }
    materialize_checkpoint_table(spi, v.checkpoint_id, output, m.name, v.version);
    notice("model \"" + m.name + "\" version " + std::to_string(v.version) + " written to " + output.display() +
           " and " + output.with_suffix("_summary").display());
    PG_RETURN_VOID();
}

// list_model_versions(model_name, order_by, descending, page_size, page_offset)
HOPPER_FUNCTION(list_model_versions) {
    const std::string model_name = arg_text(fcinfo, 0, "model_name");
    const SortKey key = parse_version_sort(arg_text_or(fcinfo, 1, "version"));
    const bool descending = arg_bool_or(fcinfo, 2, true);
    const int64_t page_size = arg_int_or(fcinfo, 3, 100);
    const int64_t page_offset = arg_int_or(fcinfo, 4, 0);
    check_page(page_size, page_offset);
    call([&] { InitMaterializedSRF(fcinfo, 0); });
    Spi spi;
    SafeSearchPath path;
    path.enter();
    ModelRow m = find_model(spi, model_name, false);
    // One statement: the page and the total come from the same snapshot.
    spi.execute(
        "SELECT e.version, e.version_id, e.name, e.checkpoint_uuid, e.aliases, e.labels, e.creation_time,"
        " e.steps_completed, e.searcher_metric, e.searcher_value, e.validation_metrics, count(*) OVER ()"
        " FROM hopper.model_versions_expanded e WHERE e.model_id = $1" +
            order_clause(key, descending, 4) + ", e.version" + (descending ? " DESC" : " ASC") + " LIMIT $2 OFFSET $3",
        {SqlParam::int8(m.id), SqlParam::int8(page_size), SqlParam::int8(page_offset), SqlParam::text(key.metric)});
    put_result_rows(spi, fcinfo);
    path.leave();
    return (Datum)0;
}
