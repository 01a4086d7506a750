// The registry's SQL functions for tasks and checkpoints: create_task, end_task, create_checkpoint,
// create_checkpoint_reference, set_checkpoint_state, checkpoint_state, materialize_checkpoint,
// delete_checkpoints, gc_checkpoints, list_checkpoints.
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hopper/error.h"
#include "hopper/registry.h"
#include "hopper/state_format.h"
#include "pg/common/datum.h"
#include "pg/registry/checkpoint_store.h"
#include "pg/registry/listing.h"

using namespace hopper;
using namespace hopper::pg;
using nlohmann::json;

// create_task(task_type text, description text, metadata jsonb) -> bigint
HOPPER_FUNCTION(create_task) {
    const std::string type = arg_text(fcinfo, 0, "task_type");
    check_task_type(type);
    if (type == "TRAINING")
        fail(ErrorKind::InvalidParameter, "task type TRAINING is reserved for fit and fit_multiple", "",
             "Use another type, such as IMPORT or FINE_TUNE.");
    const std::string description = arg_text_or(fcinfo, 1, "");
    const std::string metadata = arg_json_object(fcinfo, 2, "metadata");
    Spi spi;
    SafeSearchPath path;
    path.enter();
    int64_t id = spi.scalar_int(
        "INSERT INTO hopper.tasks (task_type, description, metadata) VALUES ($1, $2,"
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
    spi.execute(
        "SELECT task_type, state, owner::pg_catalog.text, hopper.may_modify(owner) FROM hopper.tasks WHERE task_id = $1",
        {SqlParam::int8(id)});
    if (spi.rows() == 0) fail(ErrorKind::UndefinedObject, "task " + std::to_string(id) + " does not exist");
    return TaskRow{id, spi.text(0, 0), spi.text(0, 1), spi.text(0, 2), spi.boolean(0, 3)};
}

void require_task_writable(const TaskRow& t) {
    if (!t.may_modify)
        fail(ErrorKind::Privilege, "permission denied for task " + std::to_string(t.id),
             "It belongs to role " + t.owner + ".");
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
        fail(ErrorKind::InvalidParameter, "task " + std::to_string(id) + " is a training task",
             "fit and fit_multiple end it.");
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
             "Checkpoints of training tasks are written by fit and fit_multiple.",
             "Create a task with hopper.create_task.");
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
    if (*steps < 0)
        fail(ErrorKind::InvalidParameter, "steps_completed must not be negative",
             "It is " + std::to_string(*steps) + ".");
    const std::string metadata = arg_json_object(fcinfo, 3, "metadata");
    const std::string resources = arg_json_object(fcinfo, 4, "resources");
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
    const std::string metadata = arg_json_object(fcinfo, 6, "metadata");
    const std::string resources = arg_json_object(fcinfo, 7, "resources");
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
    uint64_t n = spi.execute(
        "UPDATE hopper.checkpoints SET state = $2, report_time = CASE WHEN $2 = 'COMPLETED'"
        " THEN pg_catalog.clock_timestamp() ELSE report_time END WHERE checkpoint_id = $1 AND state = $3",
        {SqlParam::int8(c.id), SqlParam::text(to_string(to)), SqlParam::text(to_string(from))});
    if (n == 0)
        fail(ErrorKind::SerializationFailure, "checkpoint " + uuid + " was changed by another transaction", "",
             "Retry.");
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
    notice("checkpoint " + uuid + " written to " + output.display() + " and " +
           output.with_suffix("_summary").display());
    PG_RETURN_VOID();
}

// delete_checkpoints(checkpoints uuid[]) -> bigint: all or none.
HOPPER_FUNCTION(delete_checkpoints) {
    require_not_null(fcinfo, 0, "checkpoints");
    Datum arr = PG_GETARG_DATUM(0);
    Spi spi;
    SafeSearchPath path;
    path.enter();
    spi.execute(
        std::string("SELECT u.u::pg_catalog.text, ") + kCheckpointColumns +
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
    std::vector<int64_t> changed = explain_serialization_failure(rows.size() == 1 ? "checkpoint " + rows[0].uuid
                                                                                  : std::string("these checkpoints"),
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
        if (spi.rows() == 0)
            fail(ErrorKind::UndefinedObject, "training run " + std::to_string(*run_id) + " does not exist");
    }
    // Candidates: the caller's COMPLETED training checkpoints (of the run). Kept: those registered
    // (as hopper.model_versions says) and the sources of the caller's own warm starts -- another
    // role's trial naming one (a row anyone can write for itself) does not pin the caller's data.
    spi.execute(
        "SELECT c.checkpoint_id, tr.run_id, ct.trial_id, ct.signed_searcher_value,"
        " EXISTS (SELECT 1 FROM hopper.model_versions v WHERE v.checkpoint_id = c.checkpoint_id)"
        " OR EXISTS (SELECT 1 FROM hopper.trials w JOIN hopper.tasks wt ON wt.task_id = w.trial_id"
        "            WHERE w.warm_start_checkpoint_id = c.checkpoint_id AND hopper.may_modify(wt.owner))"
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
    spi.execute(
        "SELECT e.uuid, e.run_id, e.mst_key, e.iteration, e.steps_completed, e.searcher_value"
        " FROM hopper.checkpoints_expanded e WHERE e.checkpoint_id = ANY ($1) ORDER BY e.checkpoint_id",
        {SqlParam::int8_array(remove)});
    put_result_rows(spi, fcinfo);
    path.leave();
    return (Datum)0;
}

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
        order_clause(key, descending, 6) + ", e.checkpoint_id" + (descending ? " DESC" : " ASC") +
        " LIMIT $4 OFFSET $5";
    spi.execute(sql, {run_id ? SqlParam::int8(*run_id) : SqlParam::null(INT8OID),
                      mst_key ? SqlParam::int4(*mst_key) : SqlParam::null(INT4OID),
                      states ? SqlParam::text_array(*states) : SqlParam::null(TEXTARRAYOID), SqlParam::int8(page_size),
                      SqlParam::int8(page_offset), SqlParam::text(key.metric)});
    put_result_rows(spi, fcinfo);
    path.leave();
    return (Datum)0;
}
