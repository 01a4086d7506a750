// Errors raised by the hopper core. The core never includes a PostgreSQL header: it throws
// hopper::Error, and the PostgreSQL port maps ErrorKind to a SQLSTATE at the function boundary.
#pragma once

#include <stdexcept>
#include <string>

namespace hopper {

enum class ErrorKind {
    InvalidParameter,  // 22023: a parameter value is not acceptable
    Syntax,            // 22P02: text (JSON, parameter strings) cannot be parsed
    Data,              // 22000: data does not fit (shapes, NaN, corrupt model state)
    Limit,             // 54000: a configured or hard size limit would be exceeded
    OutOfMemory,       // 53200
    Internal,          // XX000: a bug in hopper
    // Kinds the PostgreSQL port raises about database objects and arguments.
    NullValue,                     // 22004: a required argument is NULL
    UndefinedTable,                // 42P01
    UndefinedColumn,               // 42703
    AmbiguousColumn,               // 42702: e.g. a row with two columns of a name the recipe reads
    DuplicateTable,                // 42P07
    WrongType,                     // 42804: a column or argument has an unusable type
    InvalidName,                   // 42602: a table name that cannot be parsed
    NameTooLong,                   // 42622: a derived table name would exceed PostgreSQL's limit
    Privilege,                     // 42501
    ObjectInUse,                   // 55006: e.g. a checkpoint that a model version still needs
    UndefinedObject,               // 42704: no such model, checkpoint, parameter table, ...
    DuplicateObject,               // 42710: a model or parameter table of that name exists
    ObjectNotInPrerequisiteState,  // 55000: e.g. a checkpoint that is not COMPLETED
    SerializationFailure,          // 40001: a concurrent change; retry
    DiskFull,                      // 53100: an output would not fit on the disk
    FeatureNotSupported,           // 0A000: e.g. an ONNX operator hopper has no layer for
};

// What went wrong, PostgreSQL style: `message` is lowercase without a final period; `detail` and
// `hint` are full sentences (may be empty).
class Error : public std::runtime_error {
public:
    Error(ErrorKind kind, std::string message, std::string detail = {}, std::string hint = {})
        : std::runtime_error(message),
          kind_(kind),
          message_(std::move(message)),
          detail_(std::move(detail)),
          hint_(std::move(hint)) {}

    ErrorKind kind() const noexcept { return kind_; }
    const std::string& message() const noexcept { return message_; }
    const std::string& detail() const noexcept { return detail_; }
    const std::string& hint() const noexcept { return hint_; }

private:
    ErrorKind kind_;
    std::string message_;
    std::string detail_;
    std::string hint_;
};

[[noreturn]] inline void fail(ErrorKind kind, std::string message, std::string detail = {}, std::string hint = {}) {
    throw Error(kind, std::move(message), std::move(detail), std::move(hint));
}

}  // namespace hopper
