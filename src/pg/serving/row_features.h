// A table's row scored by a model trained on that table's columns, e.g.
// `SELECT hopper.predict_class('churn', c) FROM customers c`: the row's features come from the very
// expression hopper.predict builds for a source table (recipe_features_sql over the row's columns),
// parsed and compiled once per call site and row type and evaluated per row by the executor's
// expression machinery, so a row encodes bit for bit as packing and predict encode it. (Running it
// through SPI cost 45 us a row, ten times the scoring itself.)
#pragma once

#include <string>

#include "pg/common/pg_headers.h"

struct ExprState;
struct ExprContext;
struct ParamListInfoData;

namespace hopper::pg {

class RowFeatures {
public:
    // row_type: the composite type of the rows (a table's or a CREATE TYPE's); recipe_json: the
    // model's recipe as stored with it; context: where the compiled expression lives (the call
    // site's, fn_mcxt). Refuses an anonymous record, and a row type lacking a recipe column or whose
    // column cannot be read as the recipe reads it (recipe_features_sql's 42703, 42804).
    RowFeatures(Oid row_type, const std::string& recipe_json, MemoryContext context);
    Oid row_type() const { return row_type_; }
    // The features of one row (a real[], never NULL), valid until the next call.
    Datum features(Datum row);

private:
    Oid row_type_;
    ExprState* expr_ = nullptr;
    ExprContext* econtext_ = nullptr;
    ParamListInfoData* params_ = nullptr;
};

// The composite type of a row value (RECORDOID for an anonymous record such as ROW(1, 'a')).
Oid row_type_of(Datum row);

}  // namespace hopper::pg
