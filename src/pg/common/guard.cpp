#include "pg/common/guard.h"

#include <cstdio>
#include <cstring>
#include <string>

namespace hopper::pg {

namespace {
MemoryContext current_value_context = nullptr;  // a backend runs one thread of PostgreSQL calls
}  // namespace

MemoryContext value_context() noexcept { return current_value_context; }

MemoryContext exchange_value_context(MemoryContext context) noexcept {
    MemoryContext outer = current_value_context;
    current_value_context = context;
    return outer;
}

const char* PgError::what() const noexcept { return edata_ && edata_->message ? edata_->message : "PostgreSQL error"; }

TransientMemory::TransientMemory()
    : context_(
          call([] { return AllocSetContextCreate(CurrentMemoryContext, "hopper transient", ALLOCSET_SMALL_SIZES); })),
      outer_(MemoryContextSwitchTo(context_)) {}

TransientMemory::~TransientMemory() {
    MemoryContextSwitchTo(outer_);
    MemoryContextDelete(context_);
}

void check_for_interrupts() {
    call([] { CHECK_FOR_INTERRUPTS(); });
}

void notice(const std::string& message, const std::string& detail) {
    call([&] {
        ereport(NOTICE, (errmsg("%s", message.c_str()), detail.empty() ? 0 : errdetail("%s", detail.c_str())));
    });
}

void warning(const std::string& message, const std::string& detail, const std::string& hint) {
    call([&] {
        ereport(WARNING, (errmsg("%s", message.c_str()), detail.empty() ? 0 : errdetail("%s", detail.c_str()),
                          hint.empty() ? 0 : errhint("%s", hint.c_str())));
    });
}

static int sqlstate_for(ErrorKind kind) {
    switch (kind) {
        case ErrorKind::InvalidParameter: return ERRCODE_INVALID_PARAMETER_VALUE;  // 22023
        case ErrorKind::Syntax: return ERRCODE_INVALID_TEXT_REPRESENTATION;        // 22P02
        case ErrorKind::Data: return ERRCODE_DATA_EXCEPTION;                       // 22000
        case ErrorKind::Limit: return ERRCODE_PROGRAM_LIMIT_EXCEEDED;              // 54000
        case ErrorKind::OutOfMemory: return ERRCODE_OUT_OF_MEMORY;                 // 53200
        case ErrorKind::Internal: return ERRCODE_INTERNAL_ERROR;                   // XX000
        case ErrorKind::NullValue: return ERRCODE_NULL_VALUE_NOT_ALLOWED;
        case ErrorKind::UndefinedTable: return ERRCODE_UNDEFINED_TABLE;
        case ErrorKind::UndefinedColumn: return ERRCODE_UNDEFINED_COLUMN;
        case ErrorKind::DuplicateTable: return ERRCODE_DUPLICATE_TABLE;
        case ErrorKind::WrongType: return ERRCODE_DATATYPE_MISMATCH;
        case ErrorKind::InvalidName: return ERRCODE_INVALID_NAME;
        case ErrorKind::NameTooLong: return ERRCODE_NAME_TOO_LONG;
        case ErrorKind::Privilege: return ERRCODE_INSUFFICIENT_PRIVILEGE;
        case ErrorKind::ObjectInUse: return ERRCODE_OBJECT_IN_USE;
        case ErrorKind::UndefinedObject: return ERRCODE_UNDEFINED_OBJECT;
        case ErrorKind::DuplicateObject: return ERRCODE_DUPLICATE_OBJECT;
        case ErrorKind::ObjectNotInPrerequisiteState: return ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE;
        case ErrorKind::SerializationFailure: return ERRCODE_T_R_SERIALIZATION_FAILURE;
        case ErrorKind::DiskFull: return ERRCODE_DISK_FULL;
        case ErrorKind::AmbiguousColumn: return ERRCODE_AMBIGUOUS_COLUMN;
        case ErrorKind::FeatureNotSupported: return ERRCODE_FEATURE_NOT_SUPPORTED;
    }
    return ERRCODE_INTERNAL_ERROR;
}

static void copy_text(char* dst, std::size_t size, const char* src) { std::snprintf(dst, size, "%s", src ? src : ""); }

void CaughtError::capture(std::exception_ptr e) noexcept {
    pending = true;
    pg_error = nullptr;
    sqlstate = ERRCODE_INTERNAL_ERROR;
    message[0] = detail[0] = hint[0] = '\0';
    try {
        std::rethrow_exception(e);
    } catch (const PgError& pe) { pg_error = pe.edata(); } catch (const Error& he) {
        sqlstate = sqlstate_for(he.kind());
        copy_text(message, sizeof message, he.message().c_str());
        copy_text(detail, sizeof detail, he.detail().c_str());
        copy_text(hint, sizeof hint, he.hint().c_str());
    } catch (const std::bad_alloc&) {
        sqlstate = ERRCODE_OUT_OF_MEMORY;
        copy_text(message, sizeof message, "out of memory");
        copy_text(detail, sizeof detail, "hopper could not allocate memory for its C++ data.");
    } catch (const std::exception& se) {
        copy_text(message, sizeof message, "internal error in hopper");
        copy_text(detail, sizeof detail, se.what());
    } catch (...) {
        copy_text(message, sizeof message, "internal error in hopper");
        copy_text(detail, sizeof detail, "An unknown C++ exception was caught.");
    }
}

// Errors about the user's input and data are user-facing messages (errmsg: translatable, shown at
// any log_error_verbosity); an internal error (XX000: a bug in hopper) is errmsg_internal.
void CaughtError::raise() {
    pending = false;
    if (pg_error) ReThrowError(pg_error);
    if (sqlstate == ERRCODE_INTERNAL_ERROR)
        ereport(ERROR, (errcode(sqlstate), errmsg_internal("%s", message),
                        detail[0] ? errdetail_internal("%s", detail) : 0, hint[0] ? errhint("%s", hint) : 0));
    ereport(ERROR, (errcode(sqlstate), errmsg("%s", message), detail[0] ? errdetail("%s", detail) : 0,
                    hint[0] ? errhint("%s", hint) : 0));
    pg_unreachable();
}

}  // namespace hopper::pg
