// A table's row scored by a model trained on that table's columns, e.g.
// `SELECT hopper.predict_class('churn', c) FROM customers c`: the row's features come from the very
// expression hopper.predict builds for a source table (recipe_features_sql over the row's columns),
// parsed and compiled once per backend, row type and recipe (row_features_for) and evaluated per row by
// the executor's expression machinery, so a row encodes bit for bit as packing and predict encode it.
// (Running it through SPI cost 45 us a row, ten times the scoring itself; compiling it once per
// statement cost 17 us per column of every statement, 0.54 ms for a row of 30 columns, where
// scoring an array takes 0.02 ms.)
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pg/common/pg_headers.h"

struct ExprState;
struct ExprContext;
struct ParamListInfoData;
struct TupleDescData;

namespace hopper::pg {

// A row value's type: a composite type, or RECORDOID with the typmod of the row descriptor the
// executor registered for it (a subquery's or CTE's row; -1 for none).
struct RowType {
    Oid type = InvalidOid;
    int32 typmod = -1;
    bool operator==(const RowType& o) const { return type == o.type && typmod == o.typmod; }
    bool operator!=(const RowType& o) const { return !(*this == o); }
};

class RowFeatures {
public:
    // row_type: the type of the rows (a table's or a CREATE TYPE's composite type, or a record whose
    // descriptor names its columns: a subquery's or a CTE's row); recipe_json: the model's recipe as
    // stored with it. The compiled expression lives in a memory context of its own, deleted with the
    // object. Refuses a record without column names, and rows lacking a recipe column or whose column
    // cannot be read as the recipe reads it (recipe_features_sql's 42703, 42804).
    RowFeatures(RowType row_type, const std::string& recipe_json);
    ~RowFeatures();
    RowFeatures(const RowFeatures&) = delete;
    RowFeatures& operator=(const RowFeatures&) = delete;
    RowType row_type() const { return row_type_; }
    // The features of one row (a real[], never NULL), valid until the next call.
    Datum features(Datum row);

private:
    void compile_for(const std::string& recipe_json);

    RowType row_type_;
    MemoryContext context_ = nullptr;
    ExprState* expr_ = nullptr;
    ExprContext* econtext_ = nullptr;
    ParamListInfoData* params_ = nullptr;
    // The row's descriptor (a record's or a composite type's), and the attribute (0-based) each
    // parameter after the recipe's ($2, $3, ...) reads.
    TupleDescData* record_ = nullptr;
    std::vector<int> record_columns_;
    uint64 layout_id_ = 0;  // a composite type's columns when compiled (the type cache's identifier)
    std::vector<Datum> values_;
    std::unique_ptr<bool[]> nulls_;
};

// The type of a row value.
RowType row_type_of(Datum row);

// The compiled features of rows of `row_type` by `recipe_json`, kept for the backend's life: compiled
// at the first statement that needs them, dropped when the row's relation changes (relcache
// invalidation: ALTER TABLE, DROP) or any function does (the expression calls hopper's by OID), and
// beyond the 64 used last. A record's row type (a registered descriptor) never changes.
std::shared_ptr<RowFeatures> row_features_for(RowType row_type, const std::string& recipe_json);

}  // namespace hopper::pg
