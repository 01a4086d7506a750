// Features of a table's row by a model's recipe (row_features.h).
#include "pg/serving/row_features.h"

#include <string>
#include <utility>

#include "hopper/error.h"
#include "hopper/recipe.h"
#include "pg/common/guard.h"
#include "pg/common/names.h"
#include "pg/training/tabular.h"

extern "C" {
#include "funcapi.h"
#include "utils/lsyscache.h"
}

namespace hopper::pg {

Oid row_type_of(Datum row) {
    return call([&] { return HeapTupleHeaderGetTypeId(DatumGetHeapTupleHeader(row)); });
}

RowFeatures::RowFeatures(Spi& spi, Oid row_type, std::string recipe_json)
    : row_type_(row_type), recipe_json_(std::move(recipe_json)) {
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
    const Recipe recipe = Recipe::from_json(recipe_json_);
    const std::string sql = "SELECT " + recipe_features_sql(source, recipe, "$2::pg_catalog.text", "($1).");
    plan_ = spi.prepare(sql, {row_type, TEXTOID});
}

void RowFeatures::read(Spi& spi, Datum row) const {
    spi.execute(plan_, {SqlParam::datum(row, row_type_), SqlParam::text(recipe_json_)});
}

}  // namespace hopper::pg
