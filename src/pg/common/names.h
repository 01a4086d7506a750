// Table names that users pass as text: parsed with PostgreSQL's own identifier rules ('t',
// 's.t', '"My Table"'), resolved to a schema once, and quoted everywhere hopper builds SQL.
#pragma once

#include <string>

#include "pg/common/guard.h"

namespace hopper::pg {

struct TableName {
    std::string schema;  // resolved, never empty after resolve_*()
    std::string name;

    std::string quoted() const;   // "schema"."name", safe to paste into SQL
    std::string display() const;  // schema.name as a user would write it (for messages)
    // The same schema with `name + suffix`; NameTooLong error if PostgreSQL would truncate it.
    TableName with_suffix(const std::string& suffix) const;
};

// An existing table the caller must be able to read (what: "training table", ... for messages).
// Errors: 42602 bad syntax, 42P01 missing, 42501 no SELECT privilege.
TableName resolve_input_table(const std::string& text, const char* what);
// A table to be created: the schema is the one CREATE TABLE would use; 42P07 if it exists.
TableName resolve_output_table(const std::string& text, const char* what);
bool table_exists(const TableName& t);
// The table's OID, or InvalidOid if it does not exist.
Oid table_oid(const TableName& t);
// Raises 42P07 if the table exists.
void require_absent(const TableName& t, const char* what);
// Column of an existing table: type OID, or InvalidOid if missing (no error).
Oid column_type(const TableName& t, const std::string& column);
// Raises 42703 naming the table if the column is missing; returns its type.
Oid require_column(const TableName& t, const std::string& column, const char* what);
// The column of a model table that holds the model states: model_state, or model_weights in the
// MADlib shape the hopper_madlib compatibility schema gives output tables (42703 if neither).
std::string model_state_column(const TableName& t, const char* what);
// The columns of a packed table that hold its buffers, as SQL identifiers: independent_var and
// dependent_var, or hopper_independent_var and hopper_dependent_var where the table has those: the
// MADlib shape the hopper_madlib compatibility schema gives packed tables (where MADlib's own
// columns sit beside them, and MADlib's scripts rename those to any name, hopper's included).
struct PackedArrays {
    std::string x, y;
};
PackedArrays packed_array_columns(const TableName& t);

}  // namespace hopper::pg
