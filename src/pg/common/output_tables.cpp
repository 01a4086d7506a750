#include "pg/common/output_tables.h"

#include "hopper/error.h"
#include "pg/common/schema_version.h"

extern "C" {
#include "utils/acl.h"
}

namespace hopper::pg {

namespace {

constexpr const char* kTokenOpen = "[hopper:";

// The token in a comment, if it carries one.
std::optional<std::string> token_in(const std::string& comment) {
    const auto at = comment.rfind(kTokenOpen);
    if (at == std::string::npos) return std::nullopt;
    const auto start = at + std::string(kTokenOpen).size();
    const auto end = comment.find(']', start);
    if (end == std::string::npos || end - start != 36) return std::nullopt;
    return comment.substr(start, end - start);
}

}  // namespace

std::string new_output_token(Spi& spi) {
    return spi.scalar_text("SELECT pg_catalog.gen_random_uuid()::pg_catalog.text");
}

void record_output_table(Spi& spi, const TableName& table, const std::string& kind, const std::string& token,
                         const std::string& description, std::optional<int64_t> run_id) {
    if (!schema_features().output_tables) return;  // a database not yet updated keeps no marks
    spi.execute(
        "INSERT INTO hopper.output_tables (token, kind, schema_name, table_name, run_id)"
        " VALUES ($1::pg_catalog.uuid, $2, $3, $4, $5)",
        {SqlParam::text(token), SqlParam::text(kind), SqlParam::text(table.schema), SqlParam::text(table.name),
         run_id ? SqlParam::int8(*run_id) : SqlParam::null(INT8OID)});
    // COMMENT takes no parameters: the text is a quoted literal.
    spi.execute(
        "COMMENT ON TABLE " + table.quoted() + " IS " +
        quote_literal(description + " (hopper replaces it only while this mark stays) " + kTokenOpen + token + "]"));
}

std::optional<std::string> output_token(Spi& spi, const TableName& table, const std::string& kind) {
    if (!schema_features().output_tables) return std::nullopt;
    const Oid relid = table_oid(table);
    if (!OidIsValid(relid)) return std::nullopt;
    spi.execute("SELECT pg_catalog.obj_description($1::pg_catalog.oid, 'pg_class')", {SqlParam::int8(int64_t(relid))});
    if (spi.rows() == 0 || spi.is_null(0, 0)) return std::nullopt;
    const std::optional<std::string> token = token_in(spi.text(0, 0));
    if (!token) return std::nullopt;
    spi.execute(
        "SELECT 1 FROM hopper.output_tables WHERE token OPERATOR(pg_catalog.=) $1::pg_catalog.uuid"
        " AND kind OPERATOR(pg_catalog.=) $2",
        {SqlParam::text(*token), SqlParam::text(kind)});
    if (spi.rows() == 0) return std::nullopt;
    return token;
}

void forget_output_tables(Spi& spi, const std::string& token) {
    if (token.empty() || !schema_features().output_tables) return;
    spi.execute("DELETE FROM hopper.output_tables WHERE token OPERATOR(pg_catalog.=) $1::pg_catalog.uuid",
                {SqlParam::text(token)});
}

void require_droppable(const TableName& table, const char* what) {
    const Oid relid = table_oid(table);
    if (!OidIsValid(relid) || call([&] { return pg_class_ownercheck(relid, GetUserId()); })) return;
    fail(ErrorKind::Privilege,
         std::string(what) + " " + table.display() + " would be replaced, and the caller may not drop it",
         "It belongs to role " + role_name(relation_owner(relid)) + ".", "Write the model to another output table.");
}

void require_no_dependents(Spi& spi, const TableName& table, const char* what) {
    const Oid relid = table_oid(table);
    if (!OidIsValid(relid)) return;
    // Objects that depend on the table itself, not its own parts (indexes, TOAST, row type, triggers:
    // automatic or internal dependencies): other roles' views and foreign keys among them, which any
    // role may create without a privilege on the table.
    spi.execute_reading(
        "the dependencies of " + table.display(),
        "SELECT pg_catalog.pg_describe_object(d.classid, d.objid, d.objsubid) FROM pg_catalog.pg_depend d"
        " WHERE d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass"
        " AND d.refobjid OPERATOR(pg_catalog.=) $1 AND d.deptype OPERATOR(pg_catalog.=) 'n'"
        " ORDER BY 1 LIMIT 4",
        {SqlParam::datum(ObjectIdGetDatum(relid), OIDOID)});
    if (spi.rows() == 0) return;
    std::string objects;
    for (uint64_t r = 0; r < spi.rows() && r < 3; ++r) objects += (r ? ", " : "") + spi.text(r, 0);
    fail(ErrorKind::ObjectInUse,
         std::string(what) + " " + table.display() + " would be replaced, and other objects depend on it",
         "They are: " + objects + (spi.rows() > 3 ? ", ..." : "") + ".",
         "Drop them first, or write the model to another output table (warm_start_run starts from the run's "
         "checkpoints).");
}

void require_replaceable(Spi& spi, const TableName& table, const std::string& kind, const std::string& token,
                         const char* what) {
    if (!table_exists(table)) {
        require_no_type(table, what);  // a table of its name is created at the end
        return;
    }
    const std::optional<std::string> found = output_token(spi, table, kind);
    if (found && (token.empty() || *found == token)) {
        // Checked now, not when the table is dropped after training: another role's table carrying
        // this token's mark (which any role may record for itself) would make the run fail at its end.
        require_droppable(table, what);
        return;
    }
    fail(ErrorKind::DuplicateTable,
         std::string(what) + " " + table.display() + " already exists and hopper did not create it" +
             (found ? " with this model" : ""),
         "hopper replaces only tables it created, which carry its mark in their comment and a row in "
         "hopper.output_tables.",
         "Drop or rename the table, or write the model to another output table.");
}

}  // namespace hopper::pg
