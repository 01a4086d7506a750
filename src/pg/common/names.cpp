#include "pg/common/names.h"

#include <string>

#include "hopper/error.h"
#include "pg/common/spi.h"

extern "C" {
#include "access/relation.h"
#include "access/transam.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "nodes/makefuncs.h"
#include "storage/lock.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/regproc.h"
#include "utils/rel.h"
#include "utils/syscache.h"
}

namespace hopper::pg {

std::string TableName::quoted() const { return quote_ident(schema) + "." + quote_ident(name); }

std::string TableName::display() const { return quote_ident(schema) + "." + quote_ident(name); }

TableName TableName::with_suffix(const std::string& suffix) const {
    TableName t{schema, name + suffix};
    if (t.name.size() >= NAMEDATALEN)
        fail(ErrorKind::NameTooLong, "table name \"" + t.name + "\" is too long",
             "PostgreSQL table names have at most " + std::to_string(NAMEDATALEN - 1) +
                 " bytes; hopper derives this name from \"" + name + "\".",
             "Use a shorter output table name.");
    return t;
}

namespace {

// Parses the text with PostgreSQL's qualified-name rules; never leaves a PostgreSQL error pending.
RangeVar* parse_name(const std::string& text, const char* what) {
    if (text.empty()) fail(ErrorKind::InvalidName, std::string(what) + " name must not be empty");
    RangeVar* rv = nullptr;
    try {
        rv = call([&] {
            List* names = stringToQualifiedNameList(text.c_str());
            return makeRangeVarFromNameList(names);
        });
    } catch (const PgError& e) {
        fail(
            ErrorKind::InvalidName, std::string("invalid ") + what + " name \"" + text + "\"",
            e.edata()->message ? "PostgreSQL could not parse it: " + std::string(e.edata()->message) + "." : "",
            "Pass a table name such as my_table, my_schema.my_table or \"My Table\"; quote names that contain special characters.");
    }
    if (rv->catalogname)
        fail(ErrorKind::InvalidName, std::string("invalid ") + what + " name \"" + text + "\"",
             "Cross-database references are not allowed.");
    if (std::string(rv->relname).size() >= NAMEDATALEN)
        fail(ErrorKind::NameTooLong, std::string(what) + " name \"" + text + "\" is too long");
    return rv;
}

}  // namespace

TableName resolve_input_table(const std::string& text, const char* what) {
    TableName t = resolve_source_table(text, what);
    require_builtin_columns(t, what);
    return t;
}

void require_builtin_columns(const TableName& t, const char* what) {
    const Oid relid = table_oid(t);
    if (!OidIsValid(relid)) return;
    std::string column, type;
    call([&] {
        Relation rel = relation_open(relid, AccessShareLock);
        const TupleDesc desc = RelationGetDescr(rel);
        for (int i = 0; i < desc->natts && column.empty(); ++i) {
            const Form_pg_attribute a = TupleDescAttr(desc, i);
            if (a->attisdropped || a->atttypid < FirstNormalObjectId) continue;
            column = NameStr(a->attname);
            type = format_type_be(a->atttypid);
        }
        // The lock is kept to the end of the transaction: released here, an ALTER TABLE queued
        // behind it retyped a column between this check and the statement reading it (hostile
        // review: a summary's feature_recipe retyped to a composite with a cast, in that window).
        relation_close(rel, NoLock);
    });
    if (column.empty()) return;
    fail(ErrorKind::WrongType, std::string(what) + " " + t.display() + " has column \"" + column + "\" of type " + type,
         "hopper reads the columns of its tables (packed, summary, model, architecture, selection and topology "
         "tables) only as PostgreSQL's built-in types: a type some role created can carry casts and operators "
         "that would run that role's code as the caller.",
         "Recreate the table with built-in column types, as hopper creates them.");
}

Oid find_relation_unlocked(const std::string& text, const char* what) {
    RangeVar* rv = parse_name(text, what);
    return call([&] { return RangeVarGetRelid(rv, NoLock, true); });
}

TableName resolve_source_table(const std::string& text, const char* what) {
    RangeVar* rv = parse_name(text, what);
    Oid relid = call([&] { return RangeVarGetRelid(rv, AccessShareLock, true); });
    if (!OidIsValid(relid)) fail(ErrorKind::UndefinedTable, std::string(what) + " \"" + text + "\" does not exist");
    char relkind = call([&] { return get_rel_relkind(relid); });
    if (relkind != RELKIND_RELATION && relkind != RELKIND_PARTITIONED_TABLE && relkind != RELKIND_VIEW &&
        relkind != RELKIND_MATVIEW && relkind != RELKIND_FOREIGN_TABLE)
        fail(ErrorKind::WrongType, std::string(what) + " \"" + text + "\" is not a table or view");
    AclResult acl = call([&] { return pg_class_aclcheck(relid, GetUserId(), ACL_SELECT); });
    if (acl != ACLCHECK_OK)
        fail(ErrorKind::Privilege, std::string("permission denied for ") + what + " \"" + text + "\"", "",
             "The caller needs SELECT privilege on it.");
    TableName t;
    t.name = call([&] { return get_rel_name(relid); });
    t.schema = call([&] { return get_namespace_name(get_rel_namespace(relid)); });
    return t;
}

TableName output_table_name(const std::string& text, const char* what) {
    RangeVar* rv = parse_name(text, what);
    Oid nsp = call([&] { return RangeVarGetCreationNamespace(rv); });
    TableName t;
    t.name = rv->relname;
    t.schema = call([&] { return get_namespace_name(nsp); });
    return t;
}

TableName resolve_output_table(const std::string& text, const char* what) {
    TableName t = output_table_name(text, what);
    require_absent(t, what);
    return t;
}

Oid table_oid(const TableName& t) {
    return call([&] {
        Oid nsp = get_namespace_oid(t.schema.c_str(), true);
        return OidIsValid(nsp) ? get_relname_relid(t.name.c_str(), nsp) : InvalidOid;
    });
}

Oid lock_table_for_reading(const TableName& t) {
    return call([&] {
        RangeVar* rv = makeRangeVar(pstrdup(t.schema.c_str()), pstrdup(t.name.c_str()), -1);
        return RangeVarGetRelid(rv, AccessShareLock, true);
    });
}

bool table_exists(const TableName& t) { return OidIsValid(table_oid(t)); }

Oid relation_owner(Oid relid) {
    return call([&] {
        HeapTuple tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
        if (!HeapTupleIsValid(tuple)) return InvalidOid;
        const Oid owner = reinterpret_cast<Form_pg_class>(GETSTRUCT(tuple))->relowner;
        ReleaseSysCache(tuple);
        return owner;
    });
}

std::string role_name(Oid role) {
    const char* name = call([&] { return GetUserNameFromId(role, true); });
    return name ? name : std::to_string(role);
}

OutputNameKey output_name_key(const TableName& t) {
    OutputNameKey k;
    call([&] {
        k.schema = uint32_t(get_namespace_oid(t.schema.c_str(), true));
        k.name = hash_bytes(reinterpret_cast<const unsigned char*>(t.name.data()), int(t.name.size()));
    });
    return k;
}

void fail_name_claimed(const TableName& t, const char* what) {
    std::string holder;
    {
        const OutputNameKey k = output_name_key(t);
        Spi spi;
        spi.execute(
            "SELECT pg_catalog.string_agg(l.pid::pg_catalog.text, ', ') FROM pg_catalog.pg_locks l"
            " WHERE l.locktype OPERATOR(pg_catalog.=) 'advisory' AND l.granted"
            " AND l.objsubid OPERATOR(pg_catalog.=) " +
                std::to_string(kHopperOutputClass) +
                " AND l.database OPERATOR(pg_catalog.=) $1::pg_catalog.oid"
                " AND l.classid OPERATOR(pg_catalog.=) $2::pg_catalog.oid AND l.objid OPERATOR(pg_catalog.=) $3::pg_catalog.oid"
                " AND l.pid OPERATOR(pg_catalog.<>) pg_catalog.pg_backend_pid()",
            {SqlParam::int8(int64_t(MyDatabaseId)), SqlParam::int8(int64_t(k.schema)),
             SqlParam::int8(int64_t(k.name))});
        if (spi.rows() == 1 && !spi.is_null(0, 0)) holder = spi.text(0, 0);
    }
    fail(ErrorKind::ObjectInUse, std::string(what) + " " + t.display() + " is being written by another session",
         holder.empty() ? "Another session is writing it."
                        : "The session with process id " + holder + " is writing it.",
         "Wait for that session to finish, or choose another name.");
}

namespace {
LOCKTAG hopper_lock_tag(uint32_t field2, uint32_t field3, uint16_t lock_class) {
    LOCKTAG tag;
    SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, field2, field3, lock_class);
    return tag;
}
}  // namespace

bool try_hopper_lock(uint32_t field2, uint32_t field3, bool for_session, uint16_t lock_class) {
    LOCKTAG tag = hopper_lock_tag(field2, field3, lock_class);
    return LockAcquire(&tag, ExclusiveLock, for_session, true) != LOCKACQUIRE_NOT_AVAIL;
}

void release_hopper_session_lock(uint32_t field2, uint32_t field3, uint16_t lock_class) {
    LOCKTAG tag = hopper_lock_tag(field2, field3, lock_class);
    LockRelease(&tag, ExclusiveLock, true);
}

void require_absent(const TableName& t, const char* what) {
    const OutputNameKey key = output_name_key(t);
    const bool claimed = call([&] { return try_hopper_lock(key.schema, key.name, false, kHopperOutputClass); });
    if (!claimed) fail_name_claimed(t, what);
    if (table_exists(t))
        fail(ErrorKind::DuplicateTable, std::string(what) + " " + t.display() + " already exists", "",
             "Drop it first or choose another name.");
    require_no_type(t, what);
}

void require_no_type(const TableName& t, const char* what) {
    // CREATE TABLE also makes a row type of the table's name: a type of that name (which any role that
    // may create in the schema can make) failed the CREATE with 42710 only after the work, e.g. a fit's
    // every iteration.
    if (type_exists(t))
        fail(ErrorKind::DuplicateObject,
             std::string(what) + " " + t.display() + " cannot be created: a type of that name exists", "",
             "Drop the type or choose another name.");
}

bool type_exists(const TableName& t) {
    return call([&] {
        const Oid nsp = get_namespace_oid(t.schema.c_str(), true);
        return OidIsValid(nsp) && OidIsValid(GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
                                                             CStringGetDatum(t.name.c_str()), ObjectIdGetDatum(nsp)));
    });
}

Oid column_type(const TableName& t, const std::string& column) {
    return call([&] {
        Oid nsp = get_namespace_oid(t.schema.c_str(), true);
        Oid relid = OidIsValid(nsp) ? get_relname_relid(t.name.c_str(), nsp) : InvalidOid;
        if (!OidIsValid(relid)) return InvalidOid;
        AttrNumber att = get_attnum(relid, column.c_str());
        if (att == InvalidAttrNumber) return InvalidOid;
        return get_atttype(relid, att);
    });
}

Oid require_column(const TableName& t, const std::string& column, const char* what) {
    Oid type = column_type(t, column);
    if (OidIsValid(type)) return type;
    // A name written unquoted is folded to lower case: say so when the table has it in other case
    // ("Type" for 'Type', which became type).
    const char* other_case = call([&]() -> const char* {
        Oid nsp = get_namespace_oid(t.schema.c_str(), true);
        Oid relid = OidIsValid(nsp) ? get_relname_relid(t.name.c_str(), nsp) : InvalidOid;
        if (!OidIsValid(relid)) return nullptr;
        for (AttrNumber a = 1; a <= MaxHeapAttributeNumber; ++a) {
            char* name = get_attname(relid, a, true);
            if (!name) break;  // past the last column
            if (pg_strcasecmp(name, column.c_str()) == 0) return name;
        }
        return nullptr;
    });
    fail(ErrorKind::UndefinedColumn,
         std::string(what) + " column \"" + column + "\" does not exist in table " + t.display(), "",
         other_case ? "The table has a column \"" + std::string(other_case) +
                          "\": quote it to keep its case, e.g. '\"" + other_case + "\"'."
                    : "");
}

PackedArrays packed_array_columns(const TableName& t) {
    // (hopper's own packed tables never have the first; hopper_madlib's may have MADlib's bytes of a
    // variable named independent_var beside them.)
    if (OidIsValid(column_type(t, "hopper_independent_var"))) return {"hopper_independent_var", "hopper_dependent_var"};
    return {"independent_var", "dependent_var"};
}

std::string model_state_column(const TableName& t, const char* what) {
    if (OidIsValid(column_type(t, "model_state"))) return "model_state";
    if (OidIsValid(column_type(t, "model_weights"))) return "model_weights";
    require_column(t, "model_state", what);
    return "model_state";
}

}  // namespace hopper::pg
