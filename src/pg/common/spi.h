// SPI from C++: statements with typed parameters, results copied into C++ values, commits for
// procedures. Each call goes through pg::call, so a PostgreSQL error becomes a C++ PgError.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pg/common/guard.h"

namespace hopper::pg {

// One statement parameter, held as a C++ value and turned into a Datum only while the statement
// runs (in a scratch memory context reset per statement, so long loops do not accumulate memory).
struct SqlParam {
    enum class Kind {
        Null,
        Text,
        Int4,
        Int8,
        Float8,
        Bool,
        Bytea,
        Jsonb,
        Float8Array,
        Int4Array,
        Int8Array,
        TextArray,
        Float4Matrix,
        ByteaArray,
        Datum
    };
    Kind kind = Kind::Null;
    Oid type = InvalidOid;  // for Null and Datum
    std::string_view view;  // Text, Bytea, Jsonb (caller keeps the data alive)
    std::string owned;      // when built from a temporary
    int64_t i = 0;
    double d = 0;
    bool b = false;
    const std::vector<double>* dv = nullptr;
    const std::vector<int32_t>* i4v = nullptr;
    const std::vector<int64_t>* i8v = nullptr;
    const std::vector<std::string>* sv = nullptr;
    const float* fp = nullptr;
    int rows = 0, cols = 0;
    ::Datum raw = 0;

    static SqlParam null(Oid type);
    static SqlParam text(std::string_view s);  // s must outlive the statement
    static SqlParam text_copy(std::string s);
    static SqlParam int4(int32_t v);
    static SqlParam int8(int64_t v);
    static SqlParam float8(double v);
    static SqlParam boolean(bool v);
    static SqlParam bytea(std::string_view bytes);  // bytes must outlive the statement
    static SqlParam jsonb(std::string_view json);
    static SqlParam float8_array(const std::vector<double>& v);
    static SqlParam int4_array(const std::vector<int32_t>& v);
    static SqlParam int8_array(const std::vector<int64_t>& v);
    static SqlParam text_array(const std::vector<std::string>& v);
    static SqlParam bytea_array(const std::vector<std::string>& v);
    static SqlParam float4_matrix(const float* data, int rows, int cols);
    static SqlParam datum(::Datum value, Oid type);
};

// A statement prepared once (SPI_prepare + SPI_keepplan, so PostgreSQL replans it when tables it
// uses are dropped and created again) and executed many times. Owns the plan: a kept plan lives in
// a long-lived memory context that nothing frees at transaction end, so the destructor does.
class Prepared {
public:
    Prepared() = default;
    Prepared(SPIPlanPtr plan, std::string sql) : plan_(plan), sql_(std::move(sql)) {}
    Prepared(Prepared&& other) noexcept : plan_(other.plan_), sql_(std::move(other.sql_)) { other.plan_ = nullptr; }
    Prepared& operator=(Prepared&& other) noexcept;
    Prepared(const Prepared&) = delete;
    Prepared& operator=(const Prepared&) = delete;
    ~Prepared() { reset(); }

    void reset() noexcept;
    explicit operator bool() const { return plan_ != nullptr; }
    SPIPlanPtr plan() const { return plan_; }
    const std::string& sql() const { return sql_; }

private:
    SPIPlanPtr plan_ = nullptr;
    std::string sql_;
};

class Spi {
public:
    // nonatomic: a procedure called outside a transaction block, allowed to commit.
    explicit Spi(bool nonatomic = false);
    ~Spi();
    Spi(const Spi&) = delete;
    Spi& operator=(const Spi&) = delete;

    // Runs one statement; returns the number of rows processed. Results stay readable until the
    // next execute. Every statement sees the effects of the ones before it.
    uint64_t execute(const std::string& sql, const std::vector<SqlParam>& params = {});
    // Like execute, but the parameters stay parameters: PostgreSQL would otherwise fold them into
    // the plan as constants, copying large values (model states) into it and, for parallel
    // workers, printing them into the plan as text -- seconds for a few megabytes. Parameters
    // instead reach workers in binary.
    uint64_t execute_with_large_params(const std::string& sql, const std::vector<SqlParam>& params);
    // Like execute, for a statement that reads a user's table: a NULL where an accessor needs a
    // value is the user's data, reported as 22004 naming `source` ("packed table s.t") and the
    // column, instead of an internal error.
    uint64_t execute_reading(const std::string& source, const std::string& sql,
                             const std::vector<SqlParam>& params = {});
    // large_params: always a generic plan. A custom plan (PostgreSQL's choice for the first five
    // executions) folds the parameters in as constants, copying each large value twice (the plan
    // and the planner's scratch); packing buffers of tens of megabytes needed 5 copies, not 3.
    Prepared prepare(const std::string& sql, const std::vector<Oid>& types, bool large_params = false);
    uint64_t execute(const Prepared& stmt, const std::vector<SqlParam>& params);

    // Runs a query whose rows go to `row` one at a time, as PostgreSQL makes them, instead of into a
    // result: nothing is copied (a row's values may point into a shared buffer, valid during the
    // call only). `row` gets the row with all its values deformed (tts_values, tts_isnull) and calls
    // PostgreSQL only through pg::call; an exception from it stops the query and is rethrown.
    // Returns the number of rows. The current results are freed.
    using RowFn = std::function<void(TupleTableSlot*)>;
    uint64_t stream(const std::string& sql, const std::vector<SqlParam>& params, const RowFn& row);
    uint64_t stream(const Prepared& stmt, const std::vector<SqlParam>& params, const RowFn& row);

    // Frees the current results now rather than at the next statement (a large result held while
    // the caller does something else with memory).
    void free_results();

    uint64_t rows() const { return rows_; }
    int columns() const;
    bool is_null(uint64_t row, int col) const;
    std::string text(uint64_t row, int col) const;  // any type, via its output function
    int64_t integer(uint64_t row, int col) const;   // int2/int4/int8
    double number(uint64_t row, int col) const;     // float4/float8/numeric/ints
    bool boolean(uint64_t row, int col) const;
    std::string bytes(uint64_t row, int col) const;  // bytea
    // `what` names the array in errors (a NULL element).
    std::vector<double> float8_array(uint64_t row, int col, const std::string& what = "array") const;
    std::vector<int64_t> int_array(uint64_t row, int col) const;
    std::vector<std::string> text_array(uint64_t row, int col) const;
    // The raw value (valid until the next execute) and its type.
    ::Datum datum(uint64_t row, int col, bool* isnull) const;
    Oid column_type(int col) const;

    // Single-value conveniences: first column of the first row (error if no row).
    std::string scalar_text(const std::string& sql, const std::vector<SqlParam>& params = {});
    int64_t scalar_int(const std::string& sql, const std::vector<SqlParam>& params = {});
    bool scalar_bool(const std::string& sql, const std::vector<SqlParam>& params = {});

    // One open cursor at a time, for results too large to hold at once. fetch() replaces the
    // current results with the next `count` rows and returns how many there were (0 at the end).
    void open_cursor(const std::string& sql, const std::vector<SqlParam>& params = {});
    uint64_t fetch(long count);
    void close_cursor();

    void commit();
    bool nonatomic() const { return nonatomic_; }
    // Statements from now on run read-only: in the calling query's snapshot, starting no command of
    // their own. That is all a function may do inside a parallel query: a leader that writes (CREATE
    // TABLE AS) refuses to start a command ("cannot start commands during a parallel operation").
    void set_read_only(bool read_only) { read_only_ = read_only; }

private:
    struct Bound {
        std::vector<Datum> values;
        std::vector<char> nulls;
        std::vector<Oid> types;
    };
    Bound bind_for_statement(const std::vector<SqlParam>& params);
    void bind(const std::vector<SqlParam>& params, Datum* values, char* nulls, Oid* types);
    uint64_t stream(const Prepared* stmt, const std::string& sql, const std::vector<SqlParam>& params,
                    const RowFn& row);
    void check_row(uint64_t row, int col) const;
    [[noreturn]] void null_result(int col) const;
    void ensure_snapshot() const;

    bool nonatomic_;
    bool read_only_ = false;
    bool connected_ = false;
    int uncaught_at_start_;
    MemoryContext scratch_ = nullptr;
    Portal cursor_ = nullptr;
    uint64_t rows_ = 0;
    std::string source_;  // what the current results were read from, when it is a user's table
};

// Quoting for SQL text built by hopper.
std::string quote_ident(std::string_view name);
std::string quote_literal(std::string_view value);

// FROM clause reading parallel array parameters $1..$n as rows: rows_from({"int4", "bytea"}) gives
// ROWS FROM (pg_catalog.unnest($1::pg_catalog.int4[]), pg_catalog.unnest($2::pg_catalog.bytea[])).
std::string rows_from(std::initializer_list<const char*> types);

// SQL for NULLIF(column, value) that cannot be hijacked: NULLIF looks its `=` operator up in the
// caller's search_path, where a user-defined `=` could shadow pg_catalog's.
std::string null_if(const char* column, const char* value);

}  // namespace hopper::pg
