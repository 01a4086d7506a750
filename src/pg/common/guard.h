// The exception boundary between C++ and PostgreSQL.
//
// Two rules, one mechanism each:
//  * C++ exceptions never cross into PostgreSQL: every SQL-callable function is declared with
//    HOPPER_FUNCTION, which runs its body inside try/catch and, after every C++ frame of the body
//    is gone, raises the caught error with ereport (hopper::Error kinds map to SQLSTATEs).
//  * ereport never longjmps over C++ frames with destructors: C++ code calls PostgreSQL only
//    through pg::call(), which catches a PostgreSQL error with PG_TRY, copies it, and rethrows it
//    as a C++ PgError; the guard re-raises the original error (SQLSTATE, message, context kept).
#pragma once

#include <exception>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

#include "hopper/error.h"
#include "pg/common/pg_headers.h"

namespace hopper::pg {

// A PostgreSQL error caught inside pg::call and carried through C++ frames.
class PgError : public std::exception {
public:
    explicit PgError(ErrorData* edata) : edata_(edata) {}
    ErrorData* edata() const noexcept { return edata_; }
    const char* what() const noexcept override;

private:
    ErrorData* edata_;  // palloc'd in the caller's memory context
};

// The memory context the Datum builders of datum.h (string_to_text, bytes_to_bytea, arrays, records,
// ...) allocate in: the context the innermost running HOPPER_FUNCTION was called in, where
// PostgreSQL reads the function's result. Not CurrentMemoryContext: while a pg::Spi is open that is
// SPI's procedure context, which SPI_finish frees, so a result built there was read after it was
// freed once the Spi closed (learning_curves_svg crashed the server that way). Null outside every
// HOPPER_FUNCTION, where the builders use CurrentMemoryContext.
MemoryContext value_context() noexcept;
// Sets the value context and returns the one it replaces (HOPPER_FUNCTION on entry and exit).
MemoryContext exchange_value_context(MemoryContext context) noexcept;

// Builds values in another context for a scope: Spi's statement parameters live in a scratch
// context reset per statement, not as long as the function's result.
class ValueContextScope {
public:
    explicit ValueContextScope(MemoryContext context) noexcept : outer_(exchange_value_context(context)) {}
    ~ValueContextScope() { exchange_value_context(outer_); }
    ValueContextScope(const ValueContextScope&) = delete;
    ValueContextScope& operator=(const ValueContextScope&) = delete;

private:
    MemoryContext outer_;
};

// Runs f (which calls PostgreSQL functions) and turns a PostgreSQL error into PgError. f must not
// keep objects with destructors alive across the PostgreSQL calls it makes. After an error the
// memory context and the value context are the caller's again.
template <typename F>
auto call(F&& f) -> decltype(f()) {
    using R = decltype(f());
    MemoryContext volatile caller_context = CurrentMemoryContext;
    MemoryContext volatile caller_value_context = value_context();
    ErrorData* volatile caught = nullptr;
    if constexpr (std::is_void_v<R>) {
        PG_TRY();
        { f(); }
        PG_CATCH();
        {
            MemoryContextSwitchTo(caller_context);
            exchange_value_context(caller_value_context);
            caught = CopyErrorData();
            FlushErrorState();
        }
        PG_END_TRY();
        if (caught) throw PgError(caught);
    } else {
        // Default-constructible results only (Datum, pointers, numbers, bool).
        R volatile result{};
        PG_TRY();
        { result = f(); }
        PG_CATCH();
        {
            MemoryContextSwitchTo(caller_context);
            exchange_value_context(caller_value_context);
            caught = CopyErrorData();
            FlushErrorState();
        }
        PG_END_TRY();
        if (caught) throw PgError(caught);
        return result;
    }
}

// For a scope, CurrentMemoryContext is a context of its own, deleted at the end of the scope: for
// PostgreSQL calls that palloc what they never free (a GUC's check hook, a relation's description),
// made again and again in a CALL whose procedure context lives as long as it does (a fit of many
// short iterations grew by 1 MB a second, a hostile review). Nothing allocated in the scope may
// outlive it.
class TransientMemory {
public:
    TransientMemory();
    ~TransientMemory();
    TransientMemory(const TransientMemory&) = delete;
    TransientMemory& operator=(const TransientMemory&) = delete;

private:
    MemoryContext context_, outer_;
};

// Checks for query cancel, statement timeout and termination (raises them as PgError).
void check_for_interrupts();

// Progress and advice for the user (NOTICE / WARNING messages).
void notice(const std::string& message, const std::string& detail = {});
void warning(const std::string& message, const std::string& detail = {}, const std::string& hint = {});

// What the guard caught; trivially destructible, so raising it (a longjmp) skips nothing.
struct CaughtError {
    ErrorData* pg_error;  // a PostgreSQL error to re-raise as is, or null
    int sqlstate;         // for C++ errors
    bool pending;
    char message[1024];
    char detail[4096];
    char hint[1024];

    void capture(std::exception_ptr e) noexcept;
    [[noreturn]] void raise();
};

}  // namespace hopper::pg

// Declares a SQL-callable function `name` (C symbol `name`, version-1 calling convention). The body
// that follows is C++ and may throw; it runs inside the guard. The values it builds with datum.h
// live in the context it was called in (value_context), whatever Spi is open when it builds them.
#define HOPPER_FUNCTION(name)                                                                                 \
    static Datum name##_body(FunctionCallInfo fcinfo);                                                        \
    extern "C" {                                                                                              \
    PGDLLEXPORT Datum name(PG_FUNCTION_ARGS);                                                                 \
    PGDLLEXPORT const Pg_finfo_record* pg_finfo_##name(void);                                                 \
    const Pg_finfo_record* pg_finfo_##name(void) {                                                            \
        static const Pg_finfo_record info = {1};                                                              \
        return &info;                                                                                         \
    }                                                                                                         \
    Datum name(PG_FUNCTION_ARGS) {                                                                            \
        ::hopper::pg::CaughtError caught_error;                                                               \
        caught_error.pending = false;                                                                         \
        MemoryContext const outer_value_context = ::hopper::pg::exchange_value_context(CurrentMemoryContext); \
        Datum result = (Datum)0;                                                                              \
        try {                                                                                                 \
            result = name##_body(fcinfo);                                                                     \
        } catch (...) { caught_error.capture(std::current_exception()); }                                     \
        ::hopper::pg::exchange_value_context(outer_value_context);                                            \
        if (caught_error.pending) caught_error.raise();                                                       \
        return result;                                                                                        \
    }                                                                                                         \
    }                                                                                                         \
    static Datum name##_body(FunctionCallInfo fcinfo)
