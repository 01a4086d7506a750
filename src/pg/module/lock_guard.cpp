// LOCK TABLE on hopper's own tables, in a mode that stops their writers, is their owner's alone.
// Every role writes them (row-level security keeps each to its rows), and PostgreSQL lets a role that
// may UPDATE or DELETE a table LOCK it even in ACCESS EXCLUSIVE mode: one open transaction holding
// such a lock hung every role's hopper calls -- fit, predict by name, the registry's functions -- and
// pg_dump (a hostile review). ROW EXCLUSIVE, what plain INSERT, UPDATE and DELETE take, stays anyone's.
// The hook is installed when hopper is loaded: in every session with shared_preload_libraries (as
// the README sets hopper up), in those that used hopper otherwise.
#include "pg/module/lock_guard.h"

extern "C" {
#include "postgres.h"

#include "miscadmin.h"
#include "access/genam.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_depend.h"
#include "catalog/pg_rewrite.h"
#include "commands/extension.h"
#include "nodes/parsenodes.h"
#include "rewrite/rewriteSupport.h"
#include "storage/lockdefs.h"
#include "tcop/utility.h"
#include "utils/acl.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
}

namespace {

ProcessUtility_hook_type previous_utility_hook = nullptr;

// A lock mode as LOCK TABLE writes it (lockdefs.h's numbering).
const char* lock_mode_sql(LOCKMODE mode) {
    static const char* const names[] = {
        "",      "ACCESS SHARE",        "ROW SHARE", "ROW EXCLUSIVE",   "SHARE UPDATE EXCLUSIVE",
        "SHARE", "SHARE ROW EXCLUSIVE", "EXCLUSIVE", "ACCESS EXCLUSIVE"};
    return mode >= 1 && mode <= AccessExclusiveLock ? names[mode] : "another";
}

// The relations the view `view` reads: what its query's rule depends on (LOCK TABLE on a view locks
// those in the same mode, with the view owner's rights).
List* relations_read_by_view(Oid view) {
    const Oid rule = get_rewrite_oid(view, "_RETURN", true);
    if (!OidIsValid(rule)) return NIL;
    List* read = NIL;
    Relation depend = table_open(DependRelationId, AccessShareLock);
    ScanKeyData key[2];
    ScanKeyInit(&key[0], Anum_pg_depend_classid, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(RewriteRelationId));
    ScanKeyInit(&key[1], Anum_pg_depend_objid, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(rule));
    SysScanDesc scan = systable_beginscan(depend, DependDependerIndexId, true, nullptr, 2, key);
    HeapTuple tuple;
    while (HeapTupleIsValid(tuple = systable_getnext(scan))) {
        const Form_pg_depend d = reinterpret_cast<Form_pg_depend>(GETSTRUCT(tuple));
        if (d->refclassid == RelationRelationId && d->refobjid != view)
            read = list_append_unique_oid(read, d->refobjid);
    }
    systable_endscan(scan);
    table_close(depend, AccessShareLock);
    return read;
}

// The relation of the extension `extension` that locking `relid` would lock, itself or through the
// views it reads, however deeply they nest (LOCK TABLE follows every level; a limit of 32 here let
// 33 stacked views lock hopper.models: hostile review), and that the current user does not own;
// InvalidOid if none. A list of relations to look at, each looked at once, in place of recursion.
Oid unowned_hopper_relation(Oid relid, Oid extension) {
    List* pending = list_make1_oid(relid);
    List* seen = list_make1_oid(relid);
    while (pending != NIL) {
        CHECK_FOR_INTERRUPTS();
        const Oid r = linitial_oid(pending);
        pending = list_delete_first(pending);
        if (getExtensionOfObject(RelationRelationId, r) == extension) {
            if (!pg_class_ownercheck(r, GetUserId())) return r;
            continue;
        }
        if (get_rel_relkind(r) != RELKIND_VIEW) continue;
        ListCell* cell;
        foreach (cell, relations_read_by_view(r)) {
            if (list_member_oid(seen, lfirst_oid(cell))) continue;
            seen = lappend_oid(seen, lfirst_oid(cell));
            pending = lappend_oid(pending, lfirst_oid(cell));
        }
    }
    return InvalidOid;
}

// Raises 42501 when `lock` asks for more than ROW EXCLUSIVE on a relation of the extension hopper
// that the current user does not own, named or read by a view named (a view of one's own over
// hopper.models locked it as well). Only PostgreSQL calls and trivially destructible locals: an
// ERROR's longjmp skips nothing.
void refuse_strong_locks(const LockStmt* lock) {
    if (lock->mode <= RowExclusiveLock) return;
    const Oid extension = get_extension_oid("hopper", true);
    if (!OidIsValid(extension)) return;
    ListCell* cell;
    foreach (cell, lock->relations) {
        RangeVar* relation = lfirst_node(RangeVar, cell);
        const Oid relid = RangeVarGetRelid(relation, NoLock, true);
        if (!OidIsValid(relid)) continue;
        const Oid locked = unowned_hopper_relation(relid, extension);
        if (!OidIsValid(locked)) continue;
        ereport(ERROR,
                (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                 errmsg("permission denied to lock %s.%s in %s mode", get_namespace_name(get_rel_namespace(locked)),
                        get_rel_name(locked), lock_mode_sql(lock->mode)),
                 locked == relid ? errdetail("Every role writes hopper's tables; a lock stronger than ROW "
                                             "EXCLUSIVE would stop them all.")
                                 : errdetail("View %s.%s reads it, and LOCK TABLE locks what a view reads; every "
                                             "role writes hopper's tables, and a lock stronger than ROW EXCLUSIVE "
                                             "would stop them all.",
                                             get_namespace_name(get_rel_namespace(relid)), get_rel_name(relid)),
                 errhint("Only the table's owner may take such a lock.")));
    }
}

void hopper_process_utility(PlannedStmt* statement, const char* query, bool read_only_tree,
                            ProcessUtilityContext context, ParamListInfo params, QueryEnvironment* environment,
                            DestReceiver* destination, QueryCompletion* completion) {
    if (IsA(statement->utilityStmt, LockStmt)) refuse_strong_locks(castNode(LockStmt, statement->utilityStmt));
    if (previous_utility_hook)
        previous_utility_hook(statement, query, read_only_tree, context, params, environment, destination, completion);
    else
        standard_ProcessUtility(statement, query, read_only_tree, context, params, environment, destination,
                                completion);
}

}  // namespace

namespace hopper::pg {

void lock_guard_init() {
    previous_utility_hook = ProcessUtility_hook;
    ProcessUtility_hook = hopper_process_utility;
}

}  // namespace hopper::pg
