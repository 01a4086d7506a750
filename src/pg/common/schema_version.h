// The SQL objects of hopper in this database can be older than the library: between installing a
// new package and ALTER EXTENSION hopper UPDATE, the previous release's functions and tables run on
// this library (and the update test fills an old release's tables through its API this way). The
// few places that depend on objects added since ask here, and skip or refuse what an old database
// cannot hold.
#pragma once

namespace hopper::pg {

struct SchemaFeatures {
    bool output_tables = true;         // hopper.output_tables (0.2.0): marks of the tables hopper created
    bool run_records = true;           // hopper.run_records + the hopper.runs view (0.2.0); before: a table hopper.runs
    bool evaluate_models_sums = true;  // the aggregate hopper.evaluate_models_sums (0.2.0)
};

// What this database's hopper objects have (catalog lookups, no statement). The first time a session
// finds an older schema it says so with a WARNING that names ALTER EXTENSION hopper UPDATE.
SchemaFeatures schema_features();

}  // namespace hopper::pg
