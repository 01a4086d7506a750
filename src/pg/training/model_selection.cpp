// Model selection tables, the input of hopper.fit_multiple:
//   hopper.load_model_arch / delete_model_arch: the model architecture table
//     (model_id, model_arch jsonb, model_weights bytea, name, description, created_at);
//   hopper.load_model_selection_table / generate_model_configs: the model selection table
//     (mst_key, model_id, compile_params, fit_params) and its _summary (model_arch_table, ...).
// What the configurations are is decided by the core (hopper/search.h); this file reads and writes
// the tables.
#include "pg/training/model_selection.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hopper/config.h"
#include "hopper/error.h"
#include "hopper/search.h"
#include "hopper/state_format.h"
#include "pg/common/datum.h"
#include "pg/common/names.h"
#include "pg/common/output_tables.h"
#include "pg/common/spi.h"
#include "pg/training/run.h"

extern "C" {
#include "storage/lmgr.h"
}

using namespace hopper;
using namespace hopper::pg;

namespace {

const char* const kArchWhat = "model architecture table";

std::vector<int32_t> int4_list(FunctionCallInfo fcinfo, int i, const char* name) {
    require_not_null(fcinfo, i, name);
    std::vector<int64_t> v = int_array_to_vector(PG_GETARG_DATUM(i), name);
    return std::vector<int32_t>(v.begin(), v.end());  // integer[]: every value fits
}

std::vector<std::string> text_list(FunctionCallInfo fcinfo, int i, const char* name) {
    require_not_null(fcinfo, i, name);
    return text_array_to_vector(PG_GETARG_DATUM(i), name);
}

std::string sentence(std::string s) {
    if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = char(s[0] - 'a' + 'A');
    return s + ".";
}

// Transfer-learning weights must be a hopper model state of this architecture (which may freeze
// layers the state's did not: transfer learning freezes the layers it keeps).
void check_weights(const std::string& weights, const Architecture& arch) {
    StateSummary st;
    try {
        st = inspect_state(weights);
    } catch (const Error& e) {
        fail(ErrorKind::Data, "model_weights is not a valid hopper model state", sentence(e.message()),
             "Pass a model state, e.g. (SELECT model_state FROM my_model WHERE mst_key = 1).");
    }
    if (!st.config.arch.same_layers(arch)) {
        const bool same_shape = st.config.arch.shape_string() == arch.shape_string();
        fail(ErrorKind::InvalidParameter, "model_weights do not match the architecture",
             "The weights are for architecture " + st.config.arch.shape_string() +
                 (same_shape ? " (" + st.config.arch.to_json() + ")" : "") + "; the architecture given is " +
                 arch.shape_string() + (same_shape ? " (" + arch.to_json() + ")" : "") + ".",
             arch.resolved()
                 ? "Transfer learning starts from weights of the same architecture."
                 : "The architecture leaves its input width to the packed table; give it as the weights' model "
                   "recorded it (model_config -> 'architecture' of its output table).");
    }
}

}  // namespace

namespace hopper::pg {

std::map<int32_t, Architecture> read_architectures(Spi& spi, const TableName& arch, const std::vector<int32_t>& ids) {
    require_column(arch, "model_id", kArchWhat);
    require_column(arch, "model_arch", kArchWhat);
    spi.execute("SELECT model_id, model_arch::pg_catalog.text FROM " + arch.quoted() +
                    " WHERE model_id OPERATOR(pg_catalog.=) ANY ($1) ORDER BY model_id",
                {SqlParam::int4_array(ids)});
    std::map<int32_t, std::string> texts;
    for (uint64_t r = 0; r < spi.rows(); ++r) {
        const int32_t id = int32_t(spi.integer(r, 0));
        if (spi.is_null(r, 1))
            fail(ErrorKind::NullValue,
                 "model_arch of model_id " + std::to_string(id) + " is NULL in " + kArchWhat + " " + arch.display());
        if (!texts.emplace(id, spi.text(r, 1)).second)
            fail(ErrorKind::InvalidParameter,
                 "model_id " + std::to_string(id) + " is not unique in " + kArchWhat + " " + arch.display(), {},
                 "Give every architecture its own model_id (hopper.load_model_arch does).");
    }
    std::map<int32_t, Architecture> out;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        auto t = texts.find(ids[i]);
        if (t == texts.end())
            fail(ErrorKind::InvalidParameter,
                 "model_id " + std::to_string(ids[i]) + " does not exist in " + kArchWhat + " " + arch.display(),
                 "It is element " + std::to_string(i + 1) + " of model_id_list.",
                 "Add the architecture with hopper.load_model_arch.");
        try {
            out.emplace(ids[i], parse_architecture(t->second));
        } catch (const Error& e) {
            throw Error(e.kind(), e.message(),
                        (e.detail().empty() ? "" : e.detail() + " ") + "In model_id " + std::to_string(ids[i]) +
                            " of " + arch.display() + ".",
                        e.hint());
        }
    }
    return out;
}

void write_selection(Spi& spi, const TableName& mst, const TableName& summary, const TableName& arch,
                     const std::vector<SelectionEntry>& rows, const SummaryFacts& facts) {
    spi.execute("CREATE TABLE " + mst.quoted() +
                " (mst_key serial PRIMARY KEY, model_id pg_catalog.int4 NOT NULL,"
                " compile_params pg_catalog.text NOT NULL, fit_params pg_catalog.text NOT NULL)");
    std::vector<int32_t> keys, ids;
    std::vector<std::string> compiles, fits;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        keys.push_back(int32_t(i + 1));
        ids.push_back(rows[i].model_id);
        compiles.push_back(rows[i].compile_params);
        fits.push_back(rows[i].fit_params);
    }
    spi.execute(
        "INSERT INTO " + mst.quoted() +
            " (mst_key, model_id, compile_params, fit_params) SELECT k, i, c, f FROM ROWS FROM"
            " (pg_catalog.unnest($1::pg_catalog.int4[]), pg_catalog.unnest($2::pg_catalog.int4[]),"
            " pg_catalog.unnest($3::pg_catalog.text[]), pg_catalog.unnest($4::pg_catalog.text[])) AS t(k, i, c, f)",
        {SqlParam::int4_array(keys), SqlParam::int4_array(ids), SqlParam::text_array(compiles),
         SqlParam::text_array(fits)});
    // Rows added by hand later get the next mst_key.
    const std::string mst_quoted = mst.quoted();
    spi.execute("SELECT pg_catalog.setval(pg_catalog.pg_get_serial_sequence($1, 'mst_key'), $2)",
                {SqlParam::text(mst_quoted), SqlParam::int8(int64_t(rows.size()))});

    spi.execute("CREATE TABLE " + summary.quoted() +
                " (model_arch_table pg_catalog.text NOT NULL, search_type pg_catalog.text NOT NULL,"
                " compile_params_grid pg_catalog.jsonb, fit_params_grid pg_catalog.jsonb,"
                " num_configs pg_catalog.int4 NOT NULL, random_state pg_catalog.int8,"
                " created_at pg_catalog.timestamptz NOT NULL DEFAULT pg_catalog.now())");
    const std::string token = new_output_token(spi);
    record_output_table(spi, mst, "model_selection", token, "hopper model selection table");
    record_output_table(spi, summary, "model_selection_summary", token, "hopper summary of a model selection table");
    const std::string arch_display = arch.display();
    spi.execute("INSERT INTO " + summary.quoted() +
                    " (model_arch_table, search_type, compile_params_grid, fit_params_grid, num_configs, random_state)"
                    " VALUES ($1, $2, $3::pg_catalog.jsonb, $4::pg_catalog.jsonb, $5, $6)",
                {SqlParam::text(arch_display), SqlParam::text(facts.search_type),
                 facts.compile_grid ? SqlParam::text(*facts.compile_grid) : SqlParam::null(TEXTOID),
                 facts.fit_grid ? SqlParam::text(*facts.fit_grid) : SqlParam::null(TEXTOID),
                 SqlParam::int4(int32_t(rows.size())),
                 facts.random_state ? SqlParam::int8(*facts.random_state) : SqlParam::null(INT8OID)});
}

// Reads the model selection table and the architectures it refers to.
// mst_text becomes the table's qualified name (what the summary records).
std::vector<ModelSpec> read_model_selection(Spi& spi, std::string& mst_text, std::string& arch_table_display) {
    TableName mst = resolve_input_table(mst_text, "model selection table");
    mst_text = mst.display();
    for (const char* col : {"mst_key", "model_id", "compile_params", "fit_params"})
        require_column(mst, col, "model selection table");
    TableName mst_summary = mst.with_suffix("_summary");
    if (!table_exists(mst_summary))
        fail(ErrorKind::UndefinedTable, "model selection summary table " + mst_summary.display() + " does not exist",
             "It names the model architecture table.",
             "Create model selection tables with hopper.load_model_selection_table or hopper.generate_model_configs.");
    require_builtin_columns(mst_summary, "model selection summary table");
    // hopper_madlib's summaries keep model_arch_table as the caller wrote it (MADlib's, found through
    // the caller's search_path) and the table hopper resolved then in hopper_model_arch_table.
    const char* arch_column = OidIsValid(column_type(mst_summary, "hopper_model_arch_table"))
                                  ? "hopper_model_arch_table"
                                  : "model_arch_table";
    spi.execute(std::string("SELECT ") + arch_column + " FROM " + mst_summary.quoted() + " LIMIT 1");
    if (spi.rows() == 0 || spi.is_null(0, 0))
        fail(ErrorKind::InvalidParameter,
             "model selection summary table " + mst_summary.display() +
                 (spi.rows() == 0 ? " is empty" : " has a NULL model_arch_table"),
             "It names the model architecture table.",
             "Create model selection tables with hopper.load_model_selection_table or hopper.generate_model_configs.");
    std::string arch_text = spi.text(0, 0);
    TableName arch = resolve_input_table(arch_text, "model architecture table");
    arch_table_display = arch.display();
    for (const char* col : {"model_id", "model_arch"}) require_column(arch, col, "model architecture table");
    const bool has_weights = OidIsValid(column_type(arch, "model_weights"));

    spi.execute("SELECT mst_key, model_id, compile_params, fit_params FROM " + mst.quoted() + " ORDER BY mst_key");
    if (spi.rows() == 0) fail(ErrorKind::InvalidParameter, "model selection table " + mst.display() + " is empty");
    std::vector<ModelSpec> models(spi.rows());
    for (uint64_t r = 0; r < spi.rows(); ++r) {
        if (spi.is_null(r, 0) || spi.is_null(r, 1))
            fail(ErrorKind::NullValue, "model selection table " + mst.display() + " has a NULL mst_key or model_id");
        models[r].mst_key = int32_t(spi.integer(r, 0));
        models[r].model_id = int32_t(spi.integer(r, 1));
        models[r].compile_text = spi.is_null(r, 2) ? "" : spi.text(r, 2);
        models[r].fit_text = spi.is_null(r, 3) ? "" : spi.text(r, 3);
    }
    for (ModelSpec& m : models) {
        spi.execute("SELECT model_arch::pg_catalog.text" + std::string(has_weights ? ", model_weights" : "") +
                        " FROM " + arch.quoted() + " WHERE model_id OPERATOR(pg_catalog.=) $1",
                    {SqlParam::int4(*m.model_id)});
        if (spi.rows() != 1)
            fail(ErrorKind::InvalidParameter,
                 "model_id " + std::to_string(*m.model_id) + " of mst_key " + std::to_string(m.mst_key) +
                     (spi.rows() == 0 ? " does not exist in " : " is not unique in ") + arch.display());
        if (spi.is_null(0, 0))
            fail(ErrorKind::NullValue, "model_arch of model_id " + std::to_string(*m.model_id) + " is NULL");
        m.arch_json = spi.text(0, 0);
        if (has_weights && !spi.is_null(0, 1)) {
            m.initial_state = spi.bytes(0, 1);
            m.initial_source = arch.display() + " (model_id " + std::to_string(*m.model_id) + ")";
        }
    }
    for (ModelSpec& m : models)
        m.config = resolve_model_spec(m.arch_json, m.compile_text, m.fit_text,
                                      "mst_key " + std::to_string(m.mst_key) + " (model_id " +
                                          std::to_string(*m.model_id) + ")");
    return models;
}

}  // namespace hopper::pg

namespace {

// Output tables of a model selection call: the table and its summary must both be new.
std::pair<TableName, TableName> selection_outputs(const std::string& text) {
    TableName mst = resolve_output_table(text, "model selection table");
    TableName summary = mst.with_suffix("_summary");
    require_absent(summary, "model selection summary table");
    return {mst, summary};
}

}  // namespace

namespace {
// An architecture table that exists is written only if the caller owns it: another role's table may
// run that role's code as the caller (its triggers, rules, column defaults), and a superuser calling
// load_model_arch on a name another role took first would run it as a superuser. The table is locked
// first, so it stays the table that was checked until the transaction ends.
void refuse_unowned_arch_table(Oid relid, const char* call_name) {
    const Oid owner = relation_owner(relid);
    if (!OidIsValid(owner) || owner == GetUserId()) return;  // gone meanwhile: the statement says so
    // Unlocked, the table may be dropped between these lookups: both then give NULL, which
    // quote_identifier would dereference.
    const char* display = call([&]() -> const char* {
        const char* schema = get_namespace_name(get_rel_namespace(relid));
        const char* name = get_rel_name(relid);
        return schema && name ? quote_qualified_identifier(schema, name) : nullptr;
    });
    if (!display) return;  // gone meanwhile: the statement says so
    fail(ErrorKind::Privilege, std::string(call_name) + " changes only a " + kArchWhat + " the caller owns",
         std::string(kArchWhat) + " " + display + " belongs to role " + role_name(owner) +
             ", whose triggers, rules and defaults would run as the caller.",
         "Use a table of your own, or let hopper.load_model_arch create one.");
}

// Checked before anything locks the table (another role's table is not even queued for: its owner
// holding a lock made the call wait), and again once locked (ALTER TABLE ... OWNER TO waits for it).
void require_own_arch_table_unlocked(const std::string& table_text, const char* call_name) {
    const Oid relid = find_relation_unlocked(table_text, kArchWhat);
    if (OidIsValid(relid)) refuse_unowned_arch_table(relid, call_name);
}

void require_own_arch_table(const TableName& table, LOCKMODE lock, const char* call_name) {
    const Oid relid = table_oid(table);
    if (!OidIsValid(relid)) return;  // gone meanwhile: the statement says so
    refuse_unowned_arch_table(relid, call_name);
    call([&] { LockRelationOid(relid, lock); });
    refuse_unowned_arch_table(relid, call_name);
}
}  // namespace

// load_model_arch(model_arch_table, model_arch, name, description, model_weights) -> model_id
HOPPER_FUNCTION(load_model_arch) {
    const std::string table_text = arg_text(fcinfo, 0, "model_arch_table");
    require_not_null(fcinfo, 1, "model_arch");
    const std::string arch_json = jsonb_to_string(PG_GETARG_DATUM(1));
    const bool has_name = !PG_ARGISNULL(2), has_description = !PG_ARGISNULL(3), has_weights = !PG_ARGISNULL(4);
    const std::string name = has_name ? text_to_string(PG_GETARG_DATUM(2)) : "";
    const std::string description = has_description ? text_to_string(PG_GETARG_DATUM(3)) : "";
    const std::string given_weights = has_weights ? bytea_to_string(PG_GETARG_DATUM(4)) : "";

    const Architecture arch = parse_architecture(arch_json);
    // Keras' flat weights (MADlib's load_keras_model) are stored as a hopper model state of the
    // architecture, which every reader of model_weights takes.
    const std::string weights = has_weights ? state_from_weights(given_weights, resolve_config(arch, {}, {})) : "";
    if (has_weights) check_weights(weights, arch);

    Spi spi;
    TableName table;
    bool exists = true;
    require_own_arch_table_unlocked(table_text, "hopper.load_model_arch");
    try {
        table = resolve_input_table(table_text, kArchWhat);
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::UndefinedTable) throw;
        exists = false;
    }
    std::string arch_cast = "$1::pg_catalog.jsonb";
    if (!exists) {
        table = resolve_output_table(table_text, kArchWhat);
        spi.execute(
            "CREATE TABLE " + table.quoted() +
            " (model_id serial PRIMARY KEY, model_arch pg_catalog.jsonb NOT NULL, model_weights pg_catalog.bytea,"
            " name pg_catalog.text, description pg_catalog.text,"
            " created_at pg_catalog.timestamptz NOT NULL DEFAULT pg_catalog.now())");
        // Weights are float data: compressing them costs time and saves nothing.
        spi.execute("ALTER TABLE " + table.quoted() + " ALTER COLUMN model_weights SET STORAGE EXTERNAL");
        record_output_table(spi, table, "model_arch", new_output_token(spi), "hopper model architecture table");
        notice("created model architecture table " + table.display());
    } else {
        // An existing table (made here, by MADlib, or by hand) of the caller's: the columns this call fills.
        require_own_arch_table(table, RowExclusiveLock, "hopper.load_model_arch");
        require_column(table, "model_id", kArchWhat);
        const std::string table_quoted = table.quoted();
        if (!spi.scalar_bool(
                "SELECT a.atthasdef OR a.attidentity OPERATOR(pg_catalog.<>) '' FROM pg_catalog.pg_attribute a"
                " WHERE a.attrelid OPERATOR(pg_catalog.=) $1::pg_catalog.regclass"
                " AND a.attname OPERATOR(pg_catalog.=) 'model_id'",
                {SqlParam::text(table_quoted)}))
            fail(
                ErrorKind::WrongType,
                "column model_id of " + std::string(kArchWhat) + " " + table.display() + " has no default",
                "hopper.load_model_arch lets the table number the architectures.",
                "Give model_id a default (a serial or identity column), or let hopper.load_model_arch create the table.");
        const Oid arch_type = require_column(table, "model_arch", kArchWhat);
        if (arch_type == JSONOID) arch_cast += "::pg_catalog.json";
        else if (arch_type != JSONBOID)
            fail(ErrorKind::WrongType, "column model_arch of " + std::string(kArchWhat) + " " + table.display() +
                                           " must be of type jsonb or json");
        if (has_name) require_column(table, "name", kArchWhat);
        if (has_description) require_column(table, "description", kArchWhat);
        if (has_weights && require_column(table, "model_weights", kArchWhat) != BYTEAOID)
            fail(ErrorKind::WrongType, "column model_weights of " + std::string(kArchWhat) + " " + table.display() +
                                           " must be of type bytea");
    }

    std::string columns = "model_arch", values = arch_cast;
    std::vector<SqlParam> params = {SqlParam::text(arch_json)};
    auto add = [&](const char* column, SqlParam p, const char* type) {
        params.push_back(std::move(p));
        columns += std::string(", ") + column;
        values += ", $" + std::to_string(params.size()) + "::pg_catalog." + type;
    };
    if (has_name) add("name", SqlParam::text(name), "text");
    if (has_description) add("description", SqlParam::text(description), "text");
    if (has_weights) add("model_weights", SqlParam::bytea(weights), "bytea");
    spi.execute("INSERT INTO " + table.quoted() + " (" + columns + ") VALUES (" + values + ") RETURNING model_id",
                params);
    PG_RETURN_INT32(int32_t(spi.integer(0, 0)));
}

// delete_model_arch(model_arch_table, model_id)
HOPPER_FUNCTION(delete_model_arch) {
    const std::string table_text = arg_text(fcinfo, 0, "model_arch_table");
    const int32_t model_id = int32_t(arg_int(fcinfo, 1, "model_id"));
    Spi spi;
    require_own_arch_table_unlocked(table_text, "hopper.delete_model_arch");
    const TableName table = resolve_input_table(table_text, kArchWhat);
    require_own_arch_table(table, RowExclusiveLock, "hopper.delete_model_arch");
    require_column(table, "model_id", kArchWhat);
    if (spi.execute("DELETE FROM " + table.quoted() + " WHERE model_id OPERATOR(pg_catalog.=) $1",
                    {SqlParam::int4(model_id)}) == 0)
        fail(ErrorKind::UndefinedObject,
             "model_id " + std::to_string(model_id) + " does not exist in " + kArchWhat + " " + table.display());
    PG_RETURN_VOID();
}

// load_model_selection_table(model_arch_table, model_selection_table, model_id_list,
//                            compile_params_list, fit_params_list)
HOPPER_FUNCTION(load_model_selection_table) {
    const std::string arch_text = arg_text(fcinfo, 0, "model_arch_table");
    const std::string mst_text = arg_text(fcinfo, 1, "model_selection_table");
    const std::vector<int32_t> ids = int4_list(fcinfo, 2, "model_id_list");
    const std::vector<std::string> compiles = text_list(fcinfo, 3, "compile_params_list");
    const std::vector<std::string> fits = text_list(fcinfo, 4, "fit_params_list");
    Spi spi;
    const TableName arch = resolve_input_table(arch_text, kArchWhat);
    const auto [mst, summary] = selection_outputs(mst_text);
    const std::vector<SelectionEntry> rows = selection_cross_product(ids, compiles, fits);
    check_against_architectures(rows, read_architectures(spi, arch, ids));
    SummaryFacts facts;
    facts.search_type = "manual";
    write_selection(spi, mst, summary, arch, rows, facts);
    notice("created " + std::to_string(rows.size()) + " model configurations in " + mst.display());
    PG_RETURN_VOID();
}

// generate_model_configs(model_arch_table, model_selection_table, model_id_list, compile_params_grid,
//                        fit_params_grid, search_type, num_configs, random_state)
HOPPER_FUNCTION(generate_model_configs) {
    const std::string arch_text = arg_text(fcinfo, 0, "model_arch_table");
    const std::string mst_text = arg_text(fcinfo, 1, "model_selection_table");
    SearchSpec spec;
    spec.model_ids = int4_list(fcinfo, 2, "model_id_list");
    require_not_null(fcinfo, 3, "compile_params_grid");
    require_not_null(fcinfo, 4, "fit_params_grid");
    spec.compile_space = jsonb_to_string(PG_GETARG_DATUM(3));
    spec.fit_space = jsonb_to_string(PG_GETARG_DATUM(4));
    spec.type = parse_search_type(arg_text_or(fcinfo, 5, "grid"));
    if (!PG_ARGISNULL(6)) spec.num_configs = arg_int(fcinfo, 6, "num_configs");
    std::optional<int64_t> random_state;
    if (!PG_ARGISNULL(7)) random_state = arg_int(fcinfo, 7, "random_state");

    Spi spi;
    const TableName arch = resolve_input_table(arch_text, kArchWhat);
    const auto [mst, summary] = selection_outputs(mst_text);
    if (random_state) {
        spec.seed = uint64_t(*random_state);
    } else if (spec.type == SearchType::Random && spec.num_configs) {
        // No seed given: draw one (reproducible with setseed), and record it in the summary.
        random_state =
            spi.scalar_int("SELECT (pg_catalog.random() OPERATOR(pg_catalog.*) 9007199254740991)::pg_catalog.int8");
        spec.seed = uint64_t(*random_state);
        notice("random search with random_state " + std::to_string(*random_state),
               "Pass random_state => " + std::to_string(*random_state) + " to draw the same configurations again.");
    }
    const std::vector<SelectionEntry> rows = generate_model_configs(spec);
    check_against_architectures(rows, read_architectures(spi, arch, spec.model_ids));
    SummaryFacts facts;
    facts.search_type = to_string(spec.type);
    facts.compile_grid = spec.compile_space;
    facts.fit_grid = spec.fit_space;
    facts.random_state = spec.type == SearchType::Random ? random_state : std::nullopt;
    write_selection(spi, mst, summary, arch, rows, facts);
    notice("created " + std::to_string(rows.size()) + " model configurations in " + mst.display());
    PG_RETURN_VOID();
}

// canonical_compile_params(text) -> jsonb: compile parameters (MADlib's Keras text or JSON) as the
// canonical JSON hopper stores and compares them by (two texts of the same meaning give the same).
HOPPER_FUNCTION(canonical_compile_params) {
    PG_RETURN_DATUM(string_to_jsonb(parse_compile_params(text_to_string(PG_GETARG_DATUM(0))).to_json()));
}

// canonical_fit_params(text) -> jsonb: the same for fit parameters.
HOPPER_FUNCTION(canonical_fit_params) {
    PG_RETURN_DATUM(string_to_jsonb(parse_fit_params(text_to_string(PG_GETARG_DATUM(0))).to_json()));
}
