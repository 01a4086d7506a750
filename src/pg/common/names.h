// Table names that users pass as text: parsed with PostgreSQL's own identifier rules ('t',
// 's.t', '"My Table"'), resolved to a schema once, and quoted everywhere hopper builds SQL.
#pragma once

#include <cstdint>
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

// An existing table of the user's data the caller must be able to read (what: "source table", ...
// for messages). Errors: 42602 bad syntax, 42P01 missing, 42501 no SELECT privilege.
TableName resolve_source_table(const std::string& text, const char* what);
// An existing table shaped like one of hopper's (packed, summary, model, architecture, selection,
// topology tables): as resolve_source_table, and every column of a built-in type
// (require_builtin_columns).
TableName resolve_input_table(const std::string& text, const char* what);
// The OID of the existing relation `text` names, found without locking it (InvalidOid if none): to
// refuse another role's table before waiting on a lock of its owner's.
Oid find_relation_unlocked(const std::string& text, const char* what);
// Refuses (42804) a table or view with a column of a type not built into PostgreSQL (an enum,
// composite or domain some role created). hopper reads its own tables' columns with casts and
// operators; on a type of its own, a role can define those (CREATE CAST needs only the type), and
// they would run as whoever calls hopper -- a superuser included.
void require_builtin_columns(const TableName& t, const char* what);
// A table to be created: the schema is the one CREATE TABLE would use; 42P07 if it exists.
TableName resolve_output_table(const std::string& text, const char* what);
// The same name, whether or not the table exists.
TableName output_table_name(const std::string& text, const char* what);
bool table_exists(const TableName& t);
// Whether a type of the name exists in the schema (a table's row type, or any other).
bool type_exists(const TableName& t);
// The table's OID, or InvalidOid if it does not exist.
Oid table_oid(const TableName& t);
// The same, locked ACCESS SHARE until the transaction ends (as reading it would), so that it stays
// the table found.
Oid lock_table_for_reading(const TableName& t);
// The role that owns relation `relid` (InvalidOid if there is none), and its name for messages.
Oid relation_owner(Oid relid);
std::string role_name(Oid role);
// Raises 42P07 if the table exists. Claims its name first, until the transaction ends: a hopper call
// about to create it in another session is refused at once (55006, require_absent there), so that
// neither fails on PostgreSQL's catalog (23505) once the first commits.
void require_absent(const TableName& t, const char* what);
// 42710 if a type of the table's name exists (CREATE TABLE would fail on it, after the work).
void require_no_type(const TableName& t, const char* what);

// hopper's advisory locks are of their own classes (LOCKTAG field4, pg_locks.objsubid):
// pg_advisory_lock and its kin take only classes 1 (one bigint key) and 2 (two int4 keys), so no
// role can take, and so block or fake, the locks hopper's claims and runs hold (with class 2, any
// role could). kHopperLockClass: (space, key) locks such as a run's (run_lock.h).
constexpr uint16_t kHopperLockClass = 0x4850;  // "HP"
// The claim of a table name hopper is about to create: in class kHopperOutputClass, keyed by the
// schema's OID and a hash of the table's name, taken without waiting. A training run holds its
// outputs' claims for as long as it runs (run_lock.h), other calls until their transaction ends.
// The schema is part of the key, not of the hash: a 32-bit hash of "schema.name" let a role find,
// in a minute, a name of its own schema whose claim blocked another role's table in a schema it
// cannot write to. Within one schema a colliding name is no more than the name itself, which a role
// that can create there could take anyway.
constexpr uint16_t kHopperOutputClass = 0x4851;  // "HQ"
struct OutputNameKey {
    uint32_t schema = 0;  // the schema's OID (0 if it does not exist: nothing can be created there)
    uint32_t name = 0;    // hash of the table's name
};
// hopper's advisory lock (field2, field3) of this database in class `lock_class`, taken without
// waiting (for the session, or until the transaction ends): whether it was got. Plain C calls: the
// caller runs them inside call(), or from a transaction callback.
bool try_hopper_lock(uint32_t field2, uint32_t field3, bool for_session, uint16_t lock_class = kHopperLockClass);
void release_hopper_session_lock(uint32_t field2, uint32_t field3, uint16_t lock_class = kHopperLockClass);
OutputNameKey output_name_key(const TableName& t);
// Raises 55006: the name's claim is held by another session (named by its process id when found).
[[noreturn]] void fail_name_claimed(const TableName& t, const char* what);
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
