// Features of a table's row by a model's recipe (row_features.h).
#include "pg/serving/row_features.h"

#include <list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hopper/error.h"
#include "hopper/recipe.h"
#include "pg/common/guard.h"
#include "pg/common/names.h"
#include "pg/training/tabular.h"

extern "C" {
#include "funcapi.h"
#include "access/htup_details.h"
#include "executor/executor.h"
#include "nodes/params.h"
#include "optimizer/optimizer.h"
#include "parser/analyze.h"
#include "parser/parser.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
#include "utils/typcache.h"
}

namespace hopper::pg {

RowType row_type_of(Datum row) {
    RowType t;
    call([&] {
        const HeapTupleHeader h = DatumGetHeapTupleHeader(row);
        t.type = HeapTupleHeaderGetTypeId(h);
        t.typmod = HeapTupleHeaderGetTypMod(h);
    });
    return t;
}

namespace {

// The identity of a composite type's current columns (the type cache gives a new one whenever they
// change).
uint64 current_layout_id(Oid type) {
    return call([&] { return lookup_type_cache(type, TYPECACHE_TUPDESC)->tupDesc_identifier; });
}

// The statement `sql` with parameters of `types` compiled into an expression over `params`, in
// `context`.
void compile(const std::string& sql, const std::vector<Oid>& types, MemoryContext context, ExprState*& expr_state,
             ExprContext*& econtext, ParamListInfoData*& params) {
    call([&] {
        MemoryContext old = MemoryContextSwitchTo(context);
        List* raw = raw_parser(sql.c_str(), RAW_PARSE_DEFAULT);
        Query* query = parse_analyze_fixedparams(linitial_node(RawStmt, raw), sql.c_str(), types.data(),
                                                 int(types.size()), nullptr);
        Expr* expr = expression_planner(linitial_node(TargetEntry, query->targetList)->expr);
        params = makeParamList(int(types.size()));
        params->numParams = int(types.size());
        for (std::size_t k = 0; k < types.size(); ++k)
            params->params[k] = ParamExternData{(Datum)0, true, PARAM_FLAG_CONST, types[k]};
        expr_state = ExecInitExprWithParams(expr, params);
        econtext = CreateStandaloneExprContext();
        econtext->ecxt_param_list_info = params;
        MemoryContextSwitchTo(old);
    });
}

}  // namespace

RowFeatures::RowFeatures(RowType row_type, const std::string& recipe_json) : row_type_(row_type) {
    context_ =
        call([&] { return AllocSetContextCreate(TopMemoryContext, "hopper row features", ALLOCSET_SMALL_SIZES); });
    try {
        compile_for(recipe_json);
    } catch (...) {
        call([&] { MemoryContextDelete(context_); });
        throw;
    }
}

RowFeatures::~RowFeatures() {
    // Never raises (a destructor, also run from an invalidation callback).
    MemoryContextDelete(context_);
}

void RowFeatures::compile_for(const std::string& recipe_json) {
    const RowType row_type = row_type_;
    const MemoryContext context = context_;
    const Recipe recipe = Recipe::from_json(recipe_json);
    const Datum recipe_text = call([&] {
        MemoryContext old = MemoryContextSwitchTo(context);
        const Datum d = PointerGetDatum(cstring_to_text(recipe_json.c_str()));
        MemoryContextSwitchTo(old);
        return d;
    });
    // A table's, subquery's or CTE's row: its descriptor names its columns. The row is deformed once
    // and each recipe column is a parameter of its own ($2, ...), read by position. (A table's row
    // read as ($1).col per column deformed it again for every column: 7.8 ms a row at 751 columns
    // where the same row through a subquery took 0.78: a user sweep.)
    const bool composite = row_type.type != RECORDOID;
    TableName source;
    if (composite) {
        // Column names and types come from the relation behind the composite type.
        const Oid relid = call([&] { return get_typ_typrelid(row_type.type); });
        if (!OidIsValid(relid))
            fail(ErrorKind::WrongType, "features must be a numeric array or a row with named columns",
                 "Type " + std::string(call([&] { return format_type_be(row_type.type); })) + " is not a row type.",
                 "Pass the row of a table, view, subquery or CTE (SELECT hopper.predict_class('m', t) FROM t).");
        // A standalone composite type is not locked by the query: dropped meanwhile, both lookups give NULL.
        const char* name = call([&] { return get_rel_name(relid); });
        const char* schema = call([&] { return get_namespace_name(get_rel_namespace(relid)); });
        if (!name || !schema)
            fail(ErrorKind::UndefinedTable, "the row type of features was dropped during the statement");
        source.name = name;
        source.schema = schema;
    } else if (row_type.typmod < 0) {
        fail(ErrorKind::WrongType, "features must be a numeric array or a row with named columns",
             "This record has no column names for the model's recipe to read.",
             "Pass the row of a table, view, subquery or CTE (SELECT hopper.predict_class('m', t) FROM t), or "
             "cast the record to a composite type.");
    }
    record_ = call([&] {
        MemoryContext old = MemoryContextSwitchTo(context);
        TupleDesc d = lookup_rowtype_tupdesc_copy(row_type.type, composite ? -1 : row_type.typmod);
        MemoryContextSwitchTo(old);
        return d;
    });
    if (composite) layout_id_ = current_layout_id(row_type.type);
    std::vector<Oid> types = {TEXTOID};
    const std::string sql =
        "SELECT " +
        recipe_features_sql(
            recipe, "$1::pg_catalog.text",
            [&](const std::string& name) -> std::optional<RecipeColumn> {
                int found = -1;
                for (int a = 0; a < record_->natts; ++a) {
                    const FormData_pg_attribute* att = TupleDescAttr(record_, a);
                    if (att->attisdropped || name != NameStr(att->attname)) continue;
                    // A join's row (SELECT ... FROM a JOIN b) can name a column twice: the
                    // first one was scored without a word (a user sweep).
                    if (found >= 0)
                        fail(ErrorKind::AmbiguousColumn,
                             "the row has two columns named \"" + name + "\", which the model's recipe reads", "",
                             "Select the model's feature columns once each, under their names.");
                    found = a;
                }
                if (found < 0) return std::nullopt;
                record_columns_.push_back(found);
                types.push_back(TupleDescAttr(record_, found)->atttypid);
                return RecipeColumn{"$" + std::to_string(types.size()), TupleDescAttr(record_, found)->atttypid};
            },
            [&](const std::vector<std::string>& names) {
                // A table's row: the message that names the table (and a column's case).
                if (composite) refuse_missing_recipe_columns(source, recipe, names);
                std::string columns, lacking;
                for (int a = 0; a < record_->natts; ++a)
                    if (!TupleDescAttr(record_, a)->attisdropped)
                        columns +=
                            (columns.empty() ? "" : ", ") + quote_ident(NameStr(TupleDescAttr(record_, a)->attname));
                for (const std::string& n : names) lacking += (lacking.empty() ? "\"" : ", \"") + n + "\"";
                fail(ErrorKind::UndefinedColumn,
                     std::string(names.size() == 1 ? "the row has no column " : "the row has no columns ") + lacking +
                         ", which the model's recipe reads",
                     "The row's columns are " + (columns.empty() ? std::string("none") : columns) + ".",
                     "Select the model's feature columns under their names in the training table.");
            });
    compile(sql, types, context, expr_, econtext_, params_);
    params_->params[0].value = recipe_text;
    params_->params[0].isnull = false;
    values_.resize(std::size_t(record_->natts));
    nulls_ = std::make_unique<bool[]>(std::size_t(record_->natts));
}

Datum RowFeatures::features(Datum row) {
    // A composite type's columns can change between two rows of one statement (a function that
    // returns the rows runs ALTER TYPE): rows of the new layout read with the old one made a varlena
    // of an int8 and crashed the server (a hostile review). Its layout is checked at every row.
    // (The identifier also changes when the type cache merely reloads the same columns, e.g. after
    // an ANALYZE of the table: then the columns are compared.)
    if (row_type_.type != RECORDOID && current_layout_id(row_type_.type) != layout_id_) {
        const bool same = call([&] {
            const TupleDesc now = lookup_type_cache(row_type_.type, TYPECACHE_TUPDESC)->tupDesc;
            if (!now || now->natts != record_->natts) return false;
            for (int a = 0; a < now->natts; ++a) {
                const FormData_pg_attribute* x = TupleDescAttr(now, a);
                const FormData_pg_attribute* y = TupleDescAttr(record_, a);
                if (x->atttypid != y->atttypid || x->atttypmod != y->atttypmod || x->attlen != y->attlen ||
                    x->attbyval != y->attbyval || x->attalign != y->attalign || x->attisdropped != y->attisdropped)
                    return false;
            }
            return true;
        });
        if (!same)
            fail(ErrorKind::ObjectNotInPrerequisiteState, "the row type of features changed during the statement",
                 "Type " + std::string(call([&] { return format_type_be(row_type_.type); })) +
                     " was altered after the statement read its first row.",
                 "Run the statement again.");
        layout_id_ = current_layout_id(row_type_.type);
    }
    bool isnull = false;
    const Datum out = call([&] {
        ResetExprContext(econtext_);
        const HeapTupleHeader h = DatumGetHeapTupleHeader(row);
        HeapTupleData tuple;
        tuple.t_len = HeapTupleHeaderGetDatumLength(h);
        ItemPointerSetInvalid(&tuple.t_self);
        tuple.t_tableOid = InvalidOid;
        tuple.t_data = h;
        heap_deform_tuple(&tuple, record_, values_.data(), nulls_.get());
        for (std::size_t k = 0; k < record_columns_.size(); ++k) {
            params_->params[k + 1].value = values_[std::size_t(record_columns_[k])];
            params_->params[k + 1].isnull = nulls_[std::size_t(record_columns_[k])];
        }
        return ExecEvalExprSwitchContext(expr_, econtext_, &isnull);
    });
    if (isnull) fail(ErrorKind::Internal, "the feature recipe gave no features for a row");
    return out;
}

namespace {

struct KeptRowFeatures {
    RowType row_type;
    Oid relid;  // the composite type's relation (InvalidOid for a record's row)
    std::string recipe_json;
    std::shared_ptr<RowFeatures> features;
};

constexpr std::size_t kKeptRowFeatures = 64;

// Most recently used first. A call site holding an entry dropped here keeps it until it ends.
std::list<KeptRowFeatures>& kept_row_features() {
    static std::list<KeptRowFeatures> kept;
    return kept;
}

// Invalidation callbacks: PostgreSQL calls them while processing invalidations; they only drop
// entries (a destructor that deletes a memory context), never raise.
void forget_relation(Datum, Oid relid) {
    kept_row_features().remove_if(
        [&](const KeptRowFeatures& k) { return !OidIsValid(relid) || (OidIsValid(k.relid) && k.relid == relid); });
}
void forget_all(Datum, int, uint32) { kept_row_features().clear(); }

}  // namespace

std::shared_ptr<RowFeatures> row_features_for(RowType row_type, const std::string& recipe_json) {
    static bool registered = false;
    if (!registered) {
        call([] {
            CacheRegisterRelcacheCallback(forget_relation, (Datum)0);
            CacheRegisterSyscacheCallback(PROCOID, forget_all, (Datum)0);
        });
        registered = true;
    }
    std::list<KeptRowFeatures>& kept = kept_row_features();
    for (auto it = kept.begin(); it != kept.end(); ++it)
        if (it->row_type == row_type && it->recipe_json == recipe_json) {
            kept.splice(kept.begin(), kept, it);
            return it->features;
        }
    const Oid relid = row_type.type == RECORDOID ? InvalidOid : call([&] { return get_typ_typrelid(row_type.type); });
    auto features = std::make_shared<RowFeatures>(row_type, recipe_json);
    kept.push_front(KeptRowFeatures{row_type, relid, recipe_json, features});
    if (kept.size() > kKeptRowFeatures) kept.pop_back();
    return features;
}

}  // namespace hopper::pg
