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
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "commands/extension.h"
#include "nodes/parsenodes.h"
#include "storage/lockdefs.h"
#include "tcop/utility.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
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

// Raises 42501 when `lock` asks for more than ROW EXCLUSIVE on a relation of the extension hopper
// that the current user does not own. Only PostgreSQL calls and trivially destructible locals: an
// ERROR's longjmp skips nothing.
void refuse_strong_locks(const LockStmt* lock) {
    if (lock->mode <= RowExclusiveLock) return;
    const Oid extension = get_extension_oid("hopper", true);
    if (!OidIsValid(extension)) return;
    ListCell* cell;
    foreach (cell, lock->relations) {
        RangeVar* relation = lfirst_node(RangeVar, cell);
        const Oid relid = RangeVarGetRelid(relation, NoLock, true);
        if (!OidIsValid(relid) || getExtensionOfObject(RelationRelationId, relid) != extension ||
            pg_class_ownercheck(relid, GetUserId()))
            continue;
        ereport(ERROR,
                (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                 errmsg("permission denied to lock %s.%s in %s mode", get_namespace_name(get_rel_namespace(relid)),
                        get_rel_name(relid), lock_mode_sql(lock->mode)),
                 errdetail("Every role writes hopper's tables; a lock stronger than ROW EXCLUSIVE would stop "
                           "them all."),
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
