// A table's row scored by a model trained on that table's columns, e.g.
// `SELECT hopper.predict_class('churn', c) FROM customers c`: the row's features come from the very
// expression hopper.predict builds for a source table (recipe_features_sql over the row's columns),
// prepared once per call site and row type, so a row encodes bit for bit as packing and predict
// encode it.
#pragma once

#include <string>

#include "pg/common/spi.h"

namespace hopper::pg {

class RowFeatures {
public:
    // row_type: the composite type of the rows (a table's or a CREATE TYPE's); recipe_json: the
    // model's recipe as stored with it. Refuses a row type lacking a recipe column or whose column
    // cannot be read as the recipe reads it (recipe_features_sql's 42703, 42804).
    RowFeatures(Spi& spi, Oid row_type, std::string recipe_json);
    Oid row_type() const { return row_type_; }
    // Runs the expression for one row: the features are spi.datum(0, 0), a real[], until the next
    // statement of `spi`.
    void read(Spi& spi, Datum row) const;

private:
    Oid row_type_;
    std::string recipe_json_;
    Prepared plan_;
};

// The composite type of a row value (RECORDOID for an anonymous record such as ROW(1, 'a')).
Oid row_type_of(Datum row);

}  // namespace hopper::pg
