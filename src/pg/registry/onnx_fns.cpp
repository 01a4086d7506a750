// ONNX export of registered models and checkpoints, and import of ONNX files as architectures
// (issue 28; the conversion is the core's, hopper/onnx.h).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hopper/error.h"
#include "hopper/onnx.h"
#include "hopper/state_format.h"
#include "pg/common/datum.h"
#include "pg/common/resource_limits.h"
#include "pg/registry/checkpoint_store.h"
#include "pg/registry/model_versions.h"
#include "pg/training/preprocess.h"

extern "C" {
#include "catalog/pg_type.h"
#include "utils/lsyscache.h"
}

namespace hopper::pg {
namespace {

// What export needs besides the state: the facts of the data the checkpoint was trained on.
struct DataFacts {
    std::string response_type;
    std::vector<std::string> class_values;
    bool class_values_null = true;
    FeatureScaling scaling;
    std::string recipe;        // the feature recipe's JSON, empty without one
    std::string source_table;  // the packed table it was trained on
};

DataFacts read_facts(Spi& spi, int64_t checkpoint_id) {
    DataFacts f;
    spi.execute(
        "SELECT e.data ->> 'response_type',"
        " CASE WHEN pg_catalog.jsonb_typeof(e.data -> 'class_values') = 'array'"
        "  THEN ARRAY(SELECT pg_catalog.jsonb_array_elements_text(e.data -> 'class_values')) END,"
        " hopper.json_float8(e.data -> 'normalizing_const'),"
        " CASE WHEN pg_catalog.jsonb_typeof(e.data -> 'feature_center') = 'array'"
        "  THEN ARRAY(SELECT hopper.json_float4(pg_catalog.jsonb_array_elements(e.data -> 'feature_center'))) END"
        "  ::pg_catalog.float8[],"
        " CASE WHEN pg_catalog.jsonb_typeof(e.data -> 'feature_spread') = 'array'"
        "  THEN ARRAY(SELECT hopper.json_float4(pg_catalog.jsonb_array_elements(e.data -> 'feature_spread'))) END"
        "  ::pg_catalog.float8[],"
        " CASE WHEN pg_catalog.jsonb_typeof(e.data -> 'feature_recipe') = 'object'"
        "  THEN (e.data -> 'feature_recipe')::pg_catalog.text END,"
        " e.data ->> 'source_table'"
        " FROM hopper.checkpoints_expanded e WHERE e.checkpoint_id = $1",
        {SqlParam::int8(checkpoint_id)});
    if (spi.rows() != 1) return f;
    f.response_type = spi.is_null(0, 0) ? "" : spi.text(0, 0);
    f.class_values_null = spi.is_null(0, 1);
    if (!f.class_values_null) f.class_values = spi.text_array(0, 1);
    // As hopper.predict and the by-name functions take them: the float8 values as float32.
    if (!spi.is_null(0, 2)) f.scaling.normalizing_const = spi.number(0, 2);
    for (double c : spi.float8_array(0, 3)) f.scaling.center.push_back(float(c));
    for (double s : spi.float8_array(0, 4)) f.scaling.spread.push_back(float(s));
    if (!spi.is_null(0, 5)) f.recipe = spi.text(0, 5);
    if (!spi.is_null(0, 6)) f.source_table = spi.text(0, 6);
    return f;
}

// The table a packed table was packed from, as its summary names it ("" when the packed table, its
// summary (with a text column source_table) or the caller's right to read it is gone). Only a plain
// table of the caller's own roles is read: exporting another role's registered model must not run
// that role's row-level policy or anything else on its table as the caller.
std::string packed_from(Spi& spi, const std::string& packed) {
    spi.execute(
        "SELECT pg_catalog.quote_ident(n.nspname) OPERATOR(pg_catalog.||) '.' OPERATOR(pg_catalog.||)"
        " pg_catalog.quote_ident(s.relname) FROM pg_catalog.pg_class p"
        " JOIN pg_catalog.pg_class s ON s.relnamespace OPERATOR(pg_catalog.=) p.relnamespace"
        "  AND s.relname OPERATOR(pg_catalog.=) (p.relname OPERATOR(pg_catalog.||) '_summary')"
        " JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) s.relnamespace"
        " JOIN pg_catalog.pg_attribute a ON a.attrelid OPERATOR(pg_catalog.=) s.oid"
        "  AND a.attname OPERATOR(pg_catalog.=) 'source_table' AND NOT a.attisdropped"
        "  AND a.atttypid OPERATOR(pg_catalog.=) 'pg_catalog.text'::pg_catalog.regtype"
        " WHERE p.oid OPERATOR(pg_catalog.=) pg_catalog.to_regclass($1)"
        " AND s.relkind OPERATOR(pg_catalog.=) 'r' AND NOT s.relrowsecurity"
        " AND pg_catalog.pg_has_role(s.relowner, 'USAGE') AND pg_catalog.has_table_privilege(s.oid, 'SELECT')",
        {SqlParam::text_copy(packed)});
    if (spi.rows() != 1) return "";
    const std::string summary = spi.text(0, 0);
    spi.execute("SELECT source_table FROM " + summary + " LIMIT 1");
    return spi.rows() == 1 && !spi.is_null(0, 0) ? spi.text(0, 0) : "";
}

// The char(n) columns, with their n, that the recipe reads as categories: of the table the training
// data was packed from (while it exists). Their values come blank-padded from drivers and to_jsonb,
// the recipe's categories trimmed.
std::map<std::string, int> char_widths(Spi& spi, const DataFacts& f) {
    std::map<std::string, int> widths;
    if (f.recipe.empty() || f.source_table.empty()) return widths;
    const std::string source = packed_from(spi, f.source_table);
    if (source.empty()) return widths;
    spi.execute(
        "SELECT a.attname::pg_catalog.text, a.atttypmod OPERATOR(pg_catalog.-) 4 FROM pg_catalog.pg_attribute a"
        " JOIN pg_catalog.jsonb_array_elements($2::pg_catalog.jsonb -> 'columns') c"
        "  ON c OPERATOR(pg_catalog.->>) 'name' OPERATOR(pg_catalog.=) a.attname::pg_catalog.text"
        "  AND c OPERATOR(pg_catalog.->>) 'kind' OPERATOR(pg_catalog.=) 'categorical'"
        " WHERE a.attrelid OPERATOR(pg_catalog.=) pg_catalog.to_regclass($1)"
        " AND a.atttypid OPERATOR(pg_catalog.=) 'pg_catalog.bpchar'::pg_catalog.regtype"
        " AND a.atttypmod OPERATOR(pg_catalog.>) 4 AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped"
        " ORDER BY a.attnum",
        {SqlParam::text_copy(source), SqlParam::text_copy(f.recipe)});
    for (uint64_t r = 0; r < spi.rows(); ++r) widths[spi.text(r, 0)] = int(spi.integer(r, 1));
    return widths;
}

}  // namespace
}  // namespace hopper::pg

using namespace hopper;
using namespace hopper::pg;

// export_onnx(model_name, version, alias) -> bytea, or export_onnx(checkpoint uuid) -> bytea
HOPPER_FUNCTION(export_onnx) {
    // The uuid form has one argument; the name form three (defaults filled in).
    const bool by_uuid = PG_NARGS() == 1;
    std::string what, state;
    DataFacts facts;
    std::map<std::string, int> widths;
    {
        Spi spi;
        std::string uuid;
        if (by_uuid) {
            uuid = uuid_arg(fcinfo, 0, "checkpoint");
            what = "checkpoint " + uuid;
        } else {
            const std::string model_name = arg_text(fcinfo, 0, "model_name");
            std::optional<int32_t> version;
            if (PG_NARGS() > 1 && !PG_ARGISNULL(1)) version = PG_GETARG_INT32(1);
            std::optional<std::string> alias;
            if (PG_NARGS() > 2 && !PG_ARGISNULL(2)) alias = text_to_string(PG_GETARG_DATUM(2));
            SafeSearchPath path;
            path.enter();
            const ModelRow m = find_model(spi, model_name, false);
            const VersionRef v = resolve_version(spi, m, version, alias);
            uuid = spi.scalar_text("SELECT uuid::pg_catalog.text FROM hopper.checkpoints WHERE checkpoint_id = $1",
                                   {SqlParam::int8(v.checkpoint_id)});
            path.leave();
            what = "version " + std::to_string(v.version) + " of model \"" + m.name + "\"";
        }
        const LoadedCheckpoint c = load_checkpoint(spi, uuid);
        state = c.state;
        SafeSearchPath path;
        path.enter();
        facts = read_facts(spi, c.id);
        widths = char_widths(spi, facts);
        path.leave();
    }
    // The parameters, the graph holding them and its bytes are alive at once, beside the state.
    check_memory(uint64_t(state.size()) * 4, "exporting " + what + " as ONNX", "Export a smaller model.");
    const FrozenModel model = load_frozen_model(state);
    const Architecture& arch = model.config.arch;
    OnnxExportOptions options;
    options.scaling = facts.scaling;
    options.recipe_json = facts.recipe;
    options.char_widths = widths;
    if (facts.response_type == "classification") {
        check_class_values(facts.class_values, facts.class_values_null, arch.output_dim(), what);
        options.class_values = facts.class_values;
    }
    options.producer_version = HOPPER_VERSION;
    options.graph_name = what;
    if (!facts.response_type.empty()) options.metadata.emplace_back("response_type", facts.response_type);
    options.metadata.emplace_back("hopper_source", what);
    const std::string bytes = export_onnx(arch, model.params, options);
    const std::string output = onnx_output_name(options.recipe_json);
    if (output != "output")
        warning("the output of the ONNX graph of " + what + " is named \"" + output + "\"",
                "A feature column, one of the graph's inputs, is named \"output\".");
    const std::vector<std::string> ambiguous = onnx_empty_string_columns(options.recipe_json);
    if (!ambiguous.empty()) {
        std::string names;
        for (const std::string& n : ambiguous) names += (names.empty() ? "\"" : ", \"") + n + "\"";
        warning("in the ONNX graph of " + what + ", NULL cannot be told from the empty string in " +
                    (ambiguous.size() == 1 ? "column " : "columns ") + names,
                "String tensors have no NULL: the graph takes \"\" for NULL, and the empty string is a category of "
                "its own in the model's recipe, so a NULL fed as \"\" scores as that category where hopper "
                "scores it as NULL.",
                "Feed rows without NULLs in those columns, or train on the column with NULLIF(column, '') or "
                "another label for the empty string.");
    }
    if (!widths.empty()) {
        std::string names;
        for (const auto& [name, n] : widths)
            names += (names.empty() ? "\"" : ", \"") + name + "\" (char(" + std::to_string(n) + "))";
        notice("the ONNX graph of " + what + " reads " + (widths.size() == 1 ? "column " : "columns ") + names +
                   " trimmed or blank-padded to that width",
               "The recipe's categories are those values trimmed, as ::text gives them; drivers and to_jsonb hand "
               "char(n) values blank-padded, so the graph maps both forms. Other trailing blanks are other values: "
               "feed such columns trimmed or padded to their width.");
    }
    PG_RETURN_DATUM(bytes_to_bytea(bytes));
}

// import_onnx(model_arch_table, onnx, name) -> integer: the model_id hopper.load_model_arch gives it
HOPPER_FUNCTION(import_onnx) {
    const std::string table = arg_text(fcinfo, 0, "model_arch_table");
    require_not_null(fcinfo, 1, "onnx");
    const std::string bytes = bytea_to_string(PG_GETARG_DATUM(1));
    // The file, its parsed graph, the parameters, the weights and the model state load_model_arch
    // makes of them are alive at once: about five times the file.
    check_memory(uint64_t(bytes.size()) * 5, "importing an ONNX file of " + std::to_string(bytes.size()) + " bytes",
                 "Import a smaller model.");
    const OnnxImported im = import_onnx(bytes);
    // The weights as hopper.load_model_arch takes Keras' flat weights: float32, hopper's layout.
    const std::string weights(reinterpret_cast<const char*>(im.params.data()), im.params.size() * sizeof(float));
    const std::string description =
        "imported from ONNX" + (im.producer.empty() ? std::string() : " (" + im.producer + ")");
    const std::string arch_json = im.arch.to_json();
    const std::optional<std::string> name =
        PG_ARGISNULL(2) ? std::nullopt : std::optional<std::string>(text_to_string(PG_GETARG_DATUM(2)));
    int64_t model_id = 0;
    {
        // Not under SafeSearchPath: load_model_arch resolves the caller's table name as the caller
        // would; the statement itself names everything qualified.
        Spi spi;
        spi.execute("SELECT hopper.load_model_arch($1, $2, $3, $4, $5)",
                    {SqlParam::text(table), SqlParam::jsonb(arch_json),
                     name ? SqlParam::text(*name) : SqlParam::null(TEXTOID), SqlParam::text(description),
                     SqlParam::bytea(weights)});
        model_id = spi.integer(0, 0);
    }
    PG_RETURN_INT32(int32_t(model_id));
}
