// Scoring: hopper.model_forward (one row, usable in any query), hopper.predict (a table) and
// hopper.evaluate (loss and metrics of stored models on packed data).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hopper/error.h"
#include "hopper/network.h"
#include "hopper/packing.h"
#include "hopper/resources.h"
#include "hopper/state_format.h"
#include "pg/common/datum.h"
#include "pg/common/names.h"
#include "pg/common/output_tables.h"
#include "pg/common/owned.h"
#include "pg/common/resource_limits.h"
#include "pg/common/spi.h"
#include "pg/runtime/scoped_settings.h"
#include "pg/serving/scoring.h"
#include "pg/training/preprocess.h"
#include "pg/training/run.h"
#include "pg/training/tabular.h"

extern "C" {
#include "access/detoast.h"
#include "utils/lsyscache.h"
}

namespace hopper::pg {
namespace {

// A model loaded once per query and process: fn_extra keeps it while the same state comes in.
struct CachedModel {
    // Identity of the state datum: its TOAST pointer when stored out of line (so rows of a join
    // never detoast it again), else its checksum and length.
    Oid toast_rel = InvalidOid;
    Oid toast_value = InvalidOid;
    uint32_t checksum = 0;
    std::size_t bytes = 0;
    std::unique_ptr<RowScorer> scorer;
};

bool same_state(const CachedModel& c, Datum d, std::size_t* len_out, uint32_t* crc_out) {
    struct varlena* v = (struct varlena*)DatumGetPointer(d);
    if (VARATT_IS_EXTERNAL_ONDISK(v)) {
        struct varatt_external ext;
        VARATT_EXTERNAL_GET_POINTER(ext, v);
        return OidIsValid(c.toast_rel) && c.toast_rel == ext.va_toastrelid && c.toast_value == ext.va_valueid;
    }
    return false;
}

CachedModel& cached_model(FunctionCallInfo fcinfo, Datum state) {
    auto* cache = static_cast<CachedModel*>(fcinfo->flinfo->fn_extra);
    std::size_t len = 0;
    uint32_t crc = 0;
    if (cache && same_state(*cache, state, &len, &crc)) return *cache;
    struct varlena* v = (struct varlena*)DatumGetPointer(state);
    Oid toast_rel = InvalidOid, toast_value = InvalidOid;
    if (VARATT_IS_EXTERNAL_ONDISK(v)) {
        struct varatt_external ext;
        VARATT_EXTERNAL_GET_POINTER(ext, v);
        toast_rel = ext.va_toastrelid;
        toast_value = ext.va_valueid;
    } else if (cache) {
        // In memory already: compare checksum (its last 4 bytes) and length without copying.
        bytea* b = call([&] { return DatumGetByteaPP(state); });
        std::size_t n = VARSIZE_ANY_EXHDR(b);
        if (n >= 4 && n == cache->bytes) {
            uint32_t tail;
            std::memcpy(&tail, VARDATA_ANY(b) + n - 4, 4);
            if (tail == cache->checksum) return *cache;
        }
    }
    auto fresh = std::make_unique<CachedModel>();
    std::string bytes = bytea_to_string(state);
    fresh->scorer = std::make_unique<RowScorer>(load_frozen_model(bytes));
    fresh->toast_rel = toast_rel;
    fresh->toast_value = toast_value;
    fresh->checksum = fresh->scorer->model.checksum;
    fresh->bytes = bytes.size();
    // The old cache entry stays owned by the context until it is reset; a query switching models
    // row by row would accumulate them, so replace it in place instead.
    if (cache) {
        *cache = std::move(*fresh);
        return *cache;
    }
    CachedModel* owned = own_in_context(fcinfo->flinfo->fn_mcxt, std::move(fresh));
    fcinfo->flinfo->fn_extra = owned;
    return *owned;
}

}  // namespace

RowScorer::RowScorer(FrozenModel m) : model(std::move(m)), network(std::make_unique<Network>(model.config.arch)) {}

std::size_t RowScorer::memory_bytes() const {
    // Parameters, plus the network's activations of one row (about the parameters' width per
    // layer; bounded well by the parameters themselves for dense layers) and the row buffers.
    return sizeof(RowScorer) + model.params.size() * sizeof(float) * 2 +
           std::size_t(model.config.arch.input_dim) * sizeof(float) * 3;
}

bool score_row(RowScorer& m, Datum features, const FeatureScaling& scaling, ErrorKind width_error) {
    const Architecture& arch = m.model.config.arch;
    std::vector<float>& x = m.input_row;
    x.clear();
    const int n = append_floats(features, x, "features", 1);
    if (n != arch.input_dim)
        fail(width_error,
             "row has " + std::to_string(n) + " features but the model expects " + std::to_string(arch.input_dim),
             "Architecture " + arch.shape_string() + ".");
    // The features go through exactly what training did to them (preprocess: float32, then
    // FeatureScaling::apply), so a row scores bit for bit as it trained.
    m.input.resize(arch.input_dim, 1);
    std::copy(x.begin(), x.end(), m.input.data());
    scaling.apply(m.input.data(), n);
    // A NaN or infinite feature (or one that overflows float32 or its scaling) would come out as NaN
    // probabilities, which an argmax would turn into the first class: refuse it, as preprocess does.
    const int bad = first_non_finite(m.input.data(), n);
    if (bad >= 0)
        fail(ErrorKind::Data, "features contain values that are not finite in float32",
             "Feature " + std::to_string(bad + 1) + " is " + describe_float(x[bad]) +
                 (std::isfinite(x[bad]) ? ", and " + describe_float(m.input(bad, 0)) + " once scaled."
                                        : " as float32."),
             "Clean or impute the data before scoring it, and check normalizing_const and the scaling.");
    ConstMatrixMap in(m.input.data(), arch.input_dim, 1);
    m.network->predict(m.model.params.data(), in, m.output);
    return m.output.allFinite();
}

int argmax_index(const float* v, int n) {
    if (n == 0 || std::any_of(v, v + n, [](float x) { return std::isnan(x); })) return -1;
    int best = 0;
    for (int i = 1; i < n; ++i)
        if (v[i] > v[best]) best = i;
    return best;
}

}  // namespace hopper::pg

using namespace hopper;
using namespace hopper::pg;

// model_forward(model_state bytea, features float8[], normalizing_const float8,
//               feature_center real[], feature_spread real[]) -> real[]
HOPPER_FUNCTION(model_forward) {
    require_not_null(fcinfo, 0, "model_state");
    if (PG_ARGISNULL(1)) PG_RETURN_NULL();
    RowScorer& m = *cached_model(fcinfo, PG_GETARG_DATUM(0)).scorer;
    FeatureScaling scaling;
    scaling.normalizing_const = PG_ARGISNULL(2) ? 1.0 : PG_GETARG_FLOAT8(2);
    if (!PG_ARGISNULL(3)) append_floats(PG_GETARG_DATUM(3), scaling.center, "feature_center", 1);
    if (!PG_ARGISNULL(4)) append_floats(PG_GETARG_DATUM(4), scaling.spread, "feature_spread", 1);
    scaling.validate(m.model.config.arch.input_dim);
    if (!score_row(m, PG_GETARG_DATUM(1), scaling, ErrorKind::Data)) PG_RETURN_NULL();
    PG_RETURN_DATUM(make_float4_array(m.output.data(), {int(m.output.rows())}));
}

namespace hopper::pg {
namespace {

struct StoredModels {
    TableName table;
    std::vector<int32_t> mst_keys;
    std::vector<std::string> states;
    std::vector<ModelConfig> configs;
};

// The SQL for a label type named in a summary table (format_type_be's spelling, e.g. "text",
// "character varying", "integer"), schema-qualified. The summary is data anyone who can write it
// controls: pasting its text into SQL would let it inject SQL or resolve to a look-alike type in the
// caller's search_path, so only the types preprocess accepts as labels are recognised.
// An enum's classes come back as text: the stored name is matched against the enum types' names as
// format_type spells them (no parsing, no search_path lookup), and the column is text either way.
// A label type's SQL, without a length: format_type spells bpchar "character", which SQL reads as
// character(1), so a char(10) target's labels came back cut to their first character.
std::string label_type_qualified(Oid t) {
    if (t == BPCHAROID) return "pg_catalog.bpchar";
    return call([&] { return format_type_be_qualified(t); });
}

std::string label_type_sql(Spi& spi, const std::string& stored, const TableName& summary) {
    static const Oid label_types[] = {TEXTOID, VARCHAROID, BPCHAROID, BOOLOID,   INT2OID,   INT4OID,
                                      INT8OID, CHAROID,    NAMEOID,   FLOAT4OID, FLOAT8OID, NUMERICOID};
    for (Oid t : label_types)
        if (stored == call([&] { return format_type_be(t); })) return label_type_qualified(t);
    spi.execute(
        "SELECT 1 FROM pg_catalog.pg_type t WHERE t.typtype OPERATOR(pg_catalog.=) 'e' AND "
        "pg_catalog.format_type(t.oid, NULL) OPERATOR(pg_catalog.=) $1 LIMIT 1",
        {SqlParam::text_copy(stored)});
    if (spi.rows() > 0) return "pg_catalog.text";
    fail(ErrorKind::Data, "summary table " + summary.display() + " names an unknown dependent_vartype",
         "It is \"" + stored + "\".", "Train the model again with hopper.fit or hopper.fit_multiple.");
}

// hopper's names of classes that are no value of the labels: <padding k> and <NULL>.
bool placeholder_class(const std::string& name) {
    if (name == "<NULL>") return true;
    const std::string prefix = "<padding ";
    if (name.size() <= prefix.size() + 1 || name.compare(0, prefix.size(), prefix) != 0 || name.back() != '>')
        return false;
    return std::all_of(name.begin() + long(prefix.size()), name.end() - 1, [](char c) { return c >= '0' && c <= '9'; });
}

// Whether a label type from label_type_sql holds any text (so hopper's placeholder names too).
bool string_label_type(const std::string& type_sql) {
    static const Oid string_types[] = {TEXTOID, VARCHAROID, BPCHAROID, CHAROID, NAMEOID};
    for (Oid t : string_types)
        if (type_sql == label_type_qualified(t)) return true;
    return false;
}

// hopper.evaluate and hopper.predict read a model table, not the registry: a registered model's name
// where no model table of that name is (none, or a data table of the same name) is refused saying
// so, with the call that writes one of its versions as a model table.
void refuse_registered_model_name(Spi& spi, const std::string& table_text) {
    const Oid relid = find_relation_unlocked(table_text, "model table");
    if (OidIsValid(relid) && call([&] { return get_attnum(relid, "mst_key"); }) != InvalidAttrNumber) return;
    // Names are unique without case, as create_model has them; the registry's policies show the
    // models the caller may read.
    spi.execute(
        "SELECT m.name, (SELECT pg_catalog.max(v.version) FROM hopper.model_versions v"
        " WHERE v.model_id OPERATOR(pg_catalog.=) m.model_id) FROM hopper.models m"
        " WHERE pg_catalog.lower(m.name) OPERATOR(pg_catalog.=) pg_catalog.lower($1)",
        {SqlParam::text_copy(table_text)});
    if (spi.rows() == 0) return;
    const std::string name = spi.text(0, 0);
    const std::string versions = spi.is_null(0, 1) ? "no versions yet" : "latest version " + spi.text(0, 1);
    std::string table = name;
    for (char& c : table)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
            c = (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : '_';
    table += "_model";
    fail(OidIsValid(relid) ? ErrorKind::WrongType : ErrorKind::UndefinedTable,
         OidIsValid(relid)
             ? "table \"" + table_text + "\" is not a model table, and \"" + name + "\" is a registered model"
             : "model table \"" + table_text + "\" does not exist, but \"" + name + "\" is a registered model",
         "hopper.evaluate and hopper.predict read a model table (what fit writes), not a model of the registry; "
         "model \"" +
             name + "\" has " + versions + ".",
         "Write a version as a model table and pass that table, e.g. SELECT hopper.materialize_model_version(" +
             quote_literal(name) + ", " + quote_literal(table) +
             ") (its latest version; version => n or alias => 'name' for another), or score rows by the model's "
             "name with "
             "hopper.predict_class(" +
             quote_literal(name) + ", t) FROM t.");
}

// Models of an output table written by fit or fit_multiple (one, or the one with mst_key).
StoredModels read_models(Spi& spi, const std::string& table_text, std::optional<int32_t> mst_key, bool only_one) {
    StoredModels s;
    refuse_registered_model_name(spi, table_text);
    s.table = resolve_input_table(table_text, "model table");
    require_column(s.table, "mst_key", "model table");
    const std::string state = model_state_column(s.table, "model table");
    const std::string source = "model table " + s.table.display();
    if (mst_key)
        spi.execute_reading(source,
                            "SELECT mst_key, " + state + " FROM " + s.table.quoted() +
                                " WHERE mst_key OPERATOR(pg_catalog.=) $1",
                            {SqlParam::int4(*mst_key)});
    else spi.execute_reading(source, "SELECT mst_key, " + state + " FROM " + s.table.quoted() + " ORDER BY mst_key");
    if (spi.rows() == 0)
        fail(ErrorKind::InvalidParameter,
             mst_key ? "mst_key " + std::to_string(*mst_key) + " does not exist in model table " + s.table.display()
                     : "model table " + s.table.display() + " is empty");
    if (only_one && spi.rows() > 1)
        fail(ErrorKind::InvalidParameter,
             "model table " + s.table.display() + " holds " + std::to_string(spi.rows()) + " models", "",
             "Pass mst_key to choose one.");
    for (uint64_t r = 0; r < spi.rows(); ++r) {
        s.mst_keys.push_back(int32_t(spi.integer(r, 0)));
        s.states.push_back(spi.bytes(r, 1));
    }
    for (std::size_t i = 0; i < s.states.size(); ++i) {
        StateSummary summary = inspect_state(s.states[i]);
        s.configs.push_back(std::move(summary.config));
        // Its weights are the last finite ones it had, not a trained model: say so.
        if (summary.counters.diverged)
            warning("model mst_key " + std::to_string(s.mst_keys[i]) + " of " + s.table.display() +
                        " diverged while training",
                    "Its weights are the last finite ones before its loss became NaN or infinite.",
                    "Train it again with a lower learning rate.");
    }
    return s;
}

}  // namespace
}  // namespace hopper::pg

// evaluate(model_table, packed_table, mst_key) -> setof (mst_key, loss, metrics jsonb, count)
namespace hopper::pg {
namespace {

// What fit and fit_multiple wrote about a model table's training data (its _summary row), as
// predict and evaluate on raw rows read it; class_values checked against the model's outputs.
struct ModelSummary {
    TableName table;
    std::string response, dependent, dependent_type, scale;
    std::vector<std::string> class_values;
    double normalizing_const = 1.0;
    std::vector<double> center, spread;
    std::string recipe_json;  // "" for models trained on numbers (and from before recipes)
};

ModelSummary read_model_summary(Spi& spi, const StoredModels& models) {
    ModelSummary m;
    m.table = models.table.with_suffix("_summary");
    const std::string what = "summary table " + m.table.display();
    if (!table_exists(m.table))
        fail(ErrorKind::UndefinedTable, what + " does not exist",
             "hopper.predict and hopper.evaluate need the summary that fit and fit_multiple write beside the "
             "model table.");
    require_builtin_columns(m.table, "summary table");
    // Models from before recipes have no feature_recipe column.
    const bool has_recipe = OidIsValid(column_type(m.table, "feature_recipe"));
    spi.execute_reading(what,
                        "SELECT response_type, class_values, " + summary_text_column(m.table, "dependent_varname") +
                            ", " + summary_text_column(m.table, "dependent_vartype") +
                            ", normalizing_const, feature_center::pg_catalog.float8[],"
                            " feature_spread::pg_catalog.float8[], scale, " +
                            std::string(has_recipe ? "feature_recipe::pg_catalog.text" : "NULL::pg_catalog.text") +
                            " FROM " + m.table.quoted());
    if (spi.rows() != 1) fail(ErrorKind::Data, what + " must have exactly one row");
    m.response = spi.text(0, 0);
    m.class_values = spi.text_array(0, 1);
    m.dependent = spi.text(0, 2);
    m.dependent_type = spi.text(0, 3);
    m.normalizing_const = spi.number(0, 4);
    m.center = spi.float8_array(0, 5);
    m.spread = spi.float8_array(0, 6);
    m.scale = spi.is_null(0, 7) ? "none" : spi.text(0, 7);
    if (!spi.is_null(0, 8)) m.recipe_json = spi.text(0, 8);
    // Each output of a classifier is named by its class: without a name for every output, rows whose
    // argmax has none would silently get a NULL label. The summary is the model table's, so say so
    // before anything is written.
    if (m.response == "classification")
        check_class_values(m.class_values, spi.is_null(0, 1), models.configs[0].arch.output_dim(), what);
    return m;
}

// How the model's training data was packed, as its summary says.
PackedInfo training_layout(const ModelSummary& m, const StoredModels& models) {
    PackedInfo layout;
    layout.table = models.table;
    layout.feature_recipe = m.recipe_json;
    layout.response_type = m.response;
    layout.class_values = m.class_values;
    layout.dependent_varname = m.dependent;
    layout.normalizing_const = m.normalizing_const;
    layout.scale = m.scale;
    for (double v : m.center) layout.feature_center.push_back(float(v));
    for (double v : m.spread) layout.feature_spread.push_back(float(v));
    return layout;
}

// A packed table evaluated must have been packed as the model's training data was (by
// preprocess_validation against it): packed on its own, its rows mean other classes, categories or
// scales, and the metrics are wrong without a sign. Model tables without hopper's summary (none, or
// MADlib's) are not checked.
void check_packed_like_training(Spi& spi, const StoredModels& models, const PackedInfo& packed) {
    const TableName summary = models.table.with_suffix("_summary");
    if (!table_exists(summary) || !OidIsValid(column_type(summary, "response_type")) ||
        !OidIsValid(column_type(summary, "feature_spread")))
        return;
    const ModelSummary m = read_model_summary(spi, models);
    const std::string difference = packing_difference(training_layout(m, models), packed);
    if (!difference.empty())
        fail(ErrorKind::InvalidParameter,
             "packed table " + packed.table.display() + " was not packed like the training data of " +
                 models.table.display(),
             difference,
             "Pack the rows with hopper.preprocess_validation(<source>, <output>, <dependent>, <independent>, <the "
             "training's packed table>)" +
                 std::string(m.recipe_json.empty() ? "."
                                                   : ", or evaluate the raw table: hopper.evaluate packs it "
                                                     "for the model."));
}

// hopper.evaluate on a table's raw rows, for a model trained on a table's own columns: the rows are
// packed into a scratch table of the session (temporary, dropped after evaluating; gone with the
// transaction if it fails) exactly as preprocess_validation would pack them for this model: the
// model summary's recipe, classes and scaling. A table without a packed summary and a model
// without a recipe give preprocess's usual "summary table ... does not exist".
std::optional<PackedInfo> pack_raw_rows(Spi& spi, const StoredModels& models, const TableName& source) {
    if (table_exists(source.with_suffix("_summary")) || !table_exists(models.table.with_suffix("_summary")))
        return std::nullopt;
    const ModelSummary m = read_model_summary(spi, models);
    if (m.recipe_json.empty())
        fail(ErrorKind::UndefinedTable, "table " + source.display() + " is not a packed table",
             "It has no summary table beside it, and the model in " + models.table.display() +
                 " was trained on packed arrays without a feature recipe, so its raw rows cannot be read for it.",
             "Pack the rows with hopper.preprocess_validation(" + quote_literal(source.display()) +
                 ", <output>, ..., <the training's packed table>) and evaluate on that.");
    PackedInfo layout = training_layout(m, models);
    layout.num_segments = 1;  // a temporary table is read by this backend alone
    layout.buffer_size = kDefaultBufferSize;
    layout.independent_dim = models.configs[0].arch.input_dim;
    layout.dependent_dim = models.configs[0].arch.output_dim();
    static int scratch_tables = 0;
    PackOptions opt;
    opt.source_table = source.quoted();
    opt.output_table = "pg_temp.hopper_evaluate_rows_" + std::to_string(++scratch_tables);
    opt.dependent_varname = quote_ident(layout.dependent_varname);
    opt.independent_varname = "*";
    opt.normalizing_const = layout.normalizing_const;
    opt.training_layout = &layout;
    return pack_table(spi, opt);
}

}  // namespace
}  // namespace hopper::pg

HOPPER_FUNCTION(evaluate) {
    std::string model_text = arg_text(fcinfo, 0, "model_table");
    std::string packed_text = arg_text(fcinfo, 1, "packed_table");
    std::optional<int32_t> mst_key;
    if (PG_NARGS() > 2 && !PG_ARGISNULL(2)) mst_key = PG_GETARG_INT32(2);
    struct ResultRow {
        int32_t mst_key;
        double loss;
        std::string metrics_json;
        int64_t count;
    };
    std::vector<ResultRow> results;
    {
        Spi spi;
        StoredModels models = read_models(spi, model_text, mst_key, false);
        // Raw rows or a packed table: a packed one's columns are checked as it is read (read_packed_info).
        TableName packed = resolve_source_table(packed_text, "packed table");
        const std::optional<PackedInfo> scratch = pack_raw_rows(spi, models, packed);
        if (scratch) packed = scratch->table;
        PackedInfo info = scratch ? *scratch : read_packed_info(spi, packed);
        if (!scratch) check_packed_like_training(spi, models, info);
        for (std::size_t i = 0; i < models.configs.size(); ++i) {
            const Architecture& a = models.configs[i].arch;
            if (a.input_dim != info.independent_dim || a.output_dim() != info.dependent_dim)
                fail(ErrorKind::InvalidParameter,
                     "model mst_key " + std::to_string(models.mst_keys[i]) + " (" + a.shape_string() +
                         ") does not fit packed table " + packed.display(),
                     "The packed table has " + std::to_string(info.independent_dim) + " features and " +
                         std::to_string(info.dependent_dim) + " dependent values per row.");
        }
        uint64_t held = 0;
        for (const std::string& st : models.states) held += 2 * uint64_t(st.size());
        check_memory(held + uint64_t(info.dist_keys.size()) *
                                evaluation_bytes(models.configs, std::max(1, info.buffer_size)),
                     "evaluating " + std::to_string(models.states.size()) + " model" +
                         (models.states.size() == 1 ? "" : "s") + " on " + std::to_string(info.dist_keys.size()) +
                         " segments",
                     "Evaluate fewer models at once (mst_key), or pack the data with a smaller buffer_size.");
        std::vector<Evaluation> ev =
            evaluate_states(spi, packed, models.states, models.configs, int(info.dist_keys.size()));
        for (std::size_t i = 0; i < ev.size(); ++i) {
            std::string json = "{";
            const auto& names = models.configs[i].compile.metrics;
            for (std::size_t k = 0; k < names.size(); ++k) {
                char buf[64];
                std::snprintf(buf, sizeof buf, "%.17g", ev[i].metrics[k]);
                json += (k ? ",\"" : "\"") + std::string(to_string(names[k])) +
                        "\":" + (std::isfinite(ev[i].metrics[k]) ? std::string(buf) : "null");
            }
            results.push_back({models.mst_keys[i], ev[i].loss, json + "}", int64_t(ev[i].count)});
        }
        if (scratch) spi.execute("DROP TABLE " + packed.quoted() + ", " + packed.with_suffix("_summary").quoted());
    }
    // The result set lives in the query's memory, so it is built after SPI has finished.
    call([&] { InitMaterializedSRF(fcinfo, 0); });
    ReturnSetInfo* rsinfo = (ReturnSetInfo*)fcinfo->resultinfo;
    for (const ResultRow& r : results) {
        Datum values[4] = {Int32GetDatum(r.mst_key), Float8GetDatum(r.loss), string_to_jsonb(r.metrics_json),
                           Int64GetDatum(r.count)};
        bool isnull[4] = {false, !std::isfinite(r.loss), false, false};
        call([&] { tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, isnull); });
    }
    return (Datum)0;
}

// argmax(values real[]) -> int: 1-based index of the largest value (first one on ties).
HOPPER_FUNCTION(argmax) {
    Float4Matrix v = float4_matrix(PG_GETARG_DATUM(0), "values");
    // No largest value among NaNs: NULL, never a made-up position.
    const int best = argmax_index(v.data, v.rows * v.cols);
    if (best < 0) PG_RETURN_NULL();
    PG_RETURN_INT32(best + 1);
}

// predict(model_table, source_table, id_column, independent_varname, output_table, pred_type, mst_key)
HOPPER_FUNCTION(predict) {
    const std::string model_text = arg_text(fcinfo, 0, "model_table");
    const std::string source_text = arg_text(fcinfo, 1, "source_table");
    const std::string id_text = arg_text(fcinfo, 2, "id_column");
    const std::string indep_text = arg_text(fcinfo, 3, "independent_varname");
    const std::string output_text = arg_text(fcinfo, 4, "output_table");
    const std::string pred_type = arg_text_or(fcinfo, 5, "response");
    std::optional<int32_t> mst_key;
    if (PG_NARGS() > 6 && !PG_ARGISNULL(6)) mst_key = PG_GETARG_INT32(6);
    if (pred_type != "response" && pred_type != "prob")
        fail(ErrorKind::InvalidParameter, "unknown pred_type \"" + pred_type + "\"", "",
             "Valid values are response and prob.");

    Spi spi;
    StoredModels models = read_models(spi, model_text, mst_key, true);
    const ModelSummary facts = read_model_summary(spi, models);
    const TableName& summary = facts.table;
    const std::string& response = facts.response;
    const std::vector<std::string>& class_values = facts.class_values;
    const std::string& dependent = facts.dependent;
    const std::string& dependent_type = facts.dependent_type;
    const double normalizing_const = facts.normalizing_const;
    const std::vector<double>& center = facts.center;
    const std::vector<double>& spread = facts.spread;
    const std::string& recipe_json = facts.recipe_json;
    const Architecture& arch = models.configs[0].arch;
    // A regression model has no class probabilities: prob silently gave the values (user sweep).
    if (pred_type == "prob" && response != "classification")
        fail(ErrorKind::InvalidParameter, "pred_type prob needs a classifier",
             "The model in " + models.table.display() + " is a " + response + " model; it predicts values.",
             "Leave out pred_type (response).");

    TableName source = resolve_source_table(source_text, "source table");
    std::vector<std::string> id = parse_column_list(id_text, "id_column");
    if (id.size() != 1) fail(ErrorKind::InvalidParameter, "id_column must name exactly one column");
    require_column(source, id[0], "id");
    FeatureColumns features;
    if (recipe_json.empty()) {
        features = describe_features(source, indep_text);
    } else {
        const Recipe recipe = Recipe::from_json(recipe_json);
        check_recipe_columns(recipe, indep_text);
        features.expression = recipe_features_sql(source, recipe, "$6::pg_catalog.text", "s.");
    }
    TableName output = resolve_output_table(output_text, "output table");

    check_memory(inference_bytes(models.configs[0], 1) + 2 * uint64_t(models.states[0].size()),
                 "scoring with this model", "Use a smaller architecture.");
    const std::string forward = "hopper.model_forward($1, (" + features.expression +
                                ")::pg_catalog.float8[], $2, $3::pg_catalog.float4[], $4::pg_catalog.float4[])";
    const std::string estimated = quote_ident("estimated_" + dependent);
    std::string select;
    // A NULL label means no prediction, unless a class predicts NULL: then the probabilities say which
    // rows had none (kept until counted).
    bool null_classes = false;
    if (response == "classification") {
        std::string label = "($5::pg_catalog.text[])[hopper.argmax(f.v)]";
        // Labels go back to the dependent column's own type. The names hopper gives classes that are
        // no value of it -- <padding k> (preprocess's num_classes) and <NULL> (the class of NULL
        // labels hopper_madlib packs) -- are NULL in a column of numbers or booleans.
        const std::string type = label_type_sql(spi, dependent_type, summary);
        null_classes =
            !string_label_type(type) && std::any_of(class_values.begin(), class_values.end(),
                                                    [](const std::string& c) { return placeholder_class(c); });
        if (null_classes)
            label = "(CASE WHEN " + label + " OPERATOR(pg_catalog.~) '^<(NULL|padding [0-9]+)>$' THEN NULL ELSE " +
                    label + " END)";
        select = label + "::" + type + " AS " + estimated;
        if (pred_type == "prob" || null_classes) select += ", f.v AS prob";
    } else {
        select = arch.output_dim() == 1 ? "(f.v)[1]::pg_catalog.float8 AS " + estimated : "f.v AS " + estimated;
    }
    const std::string sql = "CREATE TABLE " + output.quoted() + " AS SELECT s." + quote_ident(id[0]) + ", " + select +
                            " FROM " + source.quoted() + " AS s CROSS JOIN LATERAL (SELECT " + forward + " AS v) AS f";
    std::vector<SqlParam> params = {SqlParam::bytea(models.states[0]), SqlParam::float8(normalizing_const),
                                    center.empty() ? SqlParam::null(FLOAT8ARRAYOID) : SqlParam::float8_array(center),
                                    spread.empty() ? SqlParam::null(FLOAT8ARRAYOID) : SqlParam::float8_array(spread),
                                    SqlParam::text_array(class_values)};
    if (!recipe_json.empty()) params.push_back(SqlParam::text(recipe_json));
    StatementSettings settings;
    settings.enter();
    uint64_t rows = spi.execute_with_large_params(sql, params);
    settings.leave();
    // Rows without a prediction: NULL features, or outputs that are not finite (model_forward gives
    // NULL for them rather than a made-up class).
    const int64_t unscored = spi.scalar_int("SELECT pg_catalog.count(*) FROM " + output.quoted() + " WHERE " +
                                            (null_classes ? std::string("prob") : estimated) + " IS NULL");
    if (null_classes && pred_type != "prob") spi.execute("ALTER TABLE " + output.quoted() + " DROP COLUMN prob");
    if (unscored > 0)
        warning(std::to_string(unscored) + " of " + std::to_string(rows) + " rows have no prediction",
                "Their features are NULL, or the model's outputs for them are not finite numbers; their " + estimated +
                    " is NULL.",
                "Check those rows' features; a model whose outputs overflow needs training again.");
    record_output_table(spi, output, "predictions", new_output_token(spi), "hopper predictions");
    notice("predicted " + std::to_string(rows) + " rows into " + output.display());
    PG_RETURN_VOID();
}
