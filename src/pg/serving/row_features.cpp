// Features of a table's row by a model's recipe (row_features.h).
#include "pg/serving/row_features.h"

#include <string>

#include "hopper/error.h"
#include "hopper/recipe.h"
#include "pg/common/guard.h"
#include "pg/common/names.h"
#include "pg/training/tabular.h"

extern "C" {
#include "funcapi.h"
#include "executor/executor.h"
#include "nodes/params.h"
#include "optimizer/optimizer.h"
#include "parser/analyze.h"
#include "parser/parser.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
}

namespace hopper::pg {

Oid row_type_of(Datum row) {
    return call([&] { return HeapTupleHeaderGetTypeId(DatumGetHeapTupleHeader(row)); });
}

RowFeatures::RowFeatures(Oid row_type, const std::string& recipe_json, MemoryContext context) : row_type_(row_type) {
    // Column names and types come from the relation behind the composite type; an anonymous record
    // has none.
    const Oid relid = call([&] { return get_typ_typrelid(row_type); });
    if (row_type == RECORDOID || !OidIsValid(relid))
        fail(ErrorKind::WrongType, "features must be a numeric array or a row of a table",
             "An anonymous record (such as ROW(1, 'a')) has no column names for the model's recipe to read.",
             "Pass the row of a table or view (SELECT hopper.predict_class('m', t) FROM t), or cast the record to "
             "a composite type.");
    TableName source;
    call([&] {
        source.name = get_rel_name(relid);
        source.schema = get_namespace_name(get_rel_namespace(relid));
    });
    // $1 is the row, $2 the recipe's text; every name in the expression is schema-qualified.
    const std::string sql =
        "SELECT " + recipe_features_sql(source, Recipe::from_json(recipe_json), "$2::pg_catalog.text", "($1).");
    call([&] {
        MemoryContext old = MemoryContextSwitchTo(context);
        List* raw = raw_parser(sql.c_str(), RAW_PARSE_DEFAULT);
        const Oid types[2] = {row_type, TEXTOID};
        Query* query = parse_analyze_fixedparams(linitial_node(RawStmt, raw), sql.c_str(), types, 2, nullptr);
        Expr* expr = expression_planner(linitial_node(TargetEntry, query->targetList)->expr);
        params_ = makeParamList(2);
        params_->numParams = 2;
        params_->params[0] = ParamExternData{(Datum)0, true, PARAM_FLAG_CONST, row_type};
        params_->params[1] =
            ParamExternData{PointerGetDatum(cstring_to_text(recipe_json.c_str())), false, PARAM_FLAG_CONST, TEXTOID};
        expr_ = ExecInitExprWithParams(expr, params_);
        econtext_ = CreateStandaloneExprContext();
        econtext_->ecxt_param_list_info = params_;
        MemoryContextSwitchTo(old);
    });
}

Datum RowFeatures::features(Datum row) {
    bool isnull = false;
    const Datum out = call([&] {
        ResetExprContext(econtext_);
        params_->params[0].value = row;
        params_->params[0].isnull = false;
        return ExecEvalExprSwitchContext(expr_, econtext_, &isnull);
    });
    if (isnull) fail(ErrorKind::Internal, "the feature recipe gave no features for a row");
    return out;
}

}  // namespace hopper::pg
