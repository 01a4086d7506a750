// Conversions between PostgreSQL Datums and C++ values. Every function here that may raise a
// PostgreSQL error (detoasting, allocation, reading a value) goes through pg::call internally.
// The builders (string_to_text, bytes_to_bytea, string_to_jsonb, make_*_array, make_record,
// uuid_datum) allocate in value_context() (guard.h): the context the running HOPPER_FUNCTION was
// called in, so a result built while a pg::Spi is open outlives its SPI_finish.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pg/common/guard.h"

namespace hopper::pg {

std::string text_to_string(Datum d);
Datum string_to_text(std::string_view s);
std::string bytea_to_string(Datum d);
Datum bytes_to_bytea(std::string_view bytes);
std::string jsonb_to_string(Datum d);
Datum string_to_jsonb(std::string_view json);

std::vector<std::string> text_array_to_vector(Datum d, const char* what);
std::vector<int64_t> int_array_to_vector(Datum d, const char* what);  // int2/int4/int8 arrays
// float4/float8/numeric/integer arrays; a numeric beyond float8's range is refused naming `what`, the
// element and `row_hint` (when positive), where numeric's cast named nothing.
std::vector<double> float_array_to_vector(Datum d, const char* what, int64_t row_hint = 0);

Datum make_float8_array(const std::vector<double>& v);
Datum make_int2_array(const std::vector<int16_t>& v);
Datum make_int4_array(const std::vector<int32_t>& v);
Datum make_int8_array(const std::vector<int64_t>& v);
Datum make_text_array(const std::vector<std::string>& v);
Datum make_bytea_array(const std::vector<std::string>& v);
// A float4 array with the given dimensions (1-D or 2-D), data row-major.
Datum make_float4_array(const float* data, const std::vector<int>& dims);

// A float4 array argument seen without copying: 2-D (rows x cols) or 1-D (1 x cols). Detoasts
// (copies out of TOAST) once; the memory lives in the current memory context.
struct Float4Matrix {
    const float* data = nullptr;
    int rows = 0;
    int cols = 0;
};
Float4Matrix float4_matrix(Datum d, const char* what);

// Appends a numeric array (any numeric element type, one-dimensional, no NULLs) as float32, the way
// training data is read (each value rounded to float); returns its length. `row_hint` numbers the row
// in messages.
int append_floats(Datum d, std::vector<float>& out, const char* what, int64_t row_hint);
// The same into out[0, expected) when the array has `expected` values (nothing written otherwise);
// returns its length.
int floats_into(Datum d, float* out, int expected, const char* what, int64_t row_hint);
// "NaN", "Infinity", "-Infinity" or the number, for messages.
std::string describe_float(float v);
// A double for a message, in 6 significant digits (1e+300, 18823, NaN, Infinity).
std::string describe_double(double v);

// A composite result of the calling function's declared type (OUT parameters or RETURNS TABLE).
Datum make_record(FunctionCallInfo fcinfo, std::vector<Datum> values, const std::vector<bool>& null_flags);

// Required-argument access: a NULL raises 22004 naming the parameter.
void require_not_null(FunctionCallInfo fcinfo, int i, const char* name);
std::string arg_text(FunctionCallInfo fcinfo, int i, const char* name);
std::string arg_text_or(FunctionCallInfo fcinfo, int i, const std::string& fallback);
int64_t arg_int(FunctionCallInfo fcinfo, int i, const char* name);
int64_t arg_int_or(FunctionCallInfo fcinfo, int i, int64_t fallback);
std::optional<int64_t> arg_int_opt(FunctionCallInfo fcinfo, int i);  // nullopt when NULL or not passed
// Text form of a uuid argument (22004 when NULL), and a uuid Datum from text.
std::string uuid_arg(FunctionCallInfo fcinfo, int i, const char* name);
Datum uuid_datum(const std::string& text);
// A jsonb argument that must be a JSON object, as text; "{}" when NULL or not passed.
std::string arg_json_object(FunctionCallInfo fcinfo, int i, const char* name);
double arg_float8_or(FunctionCallInfo fcinfo, int i, double fallback);
bool arg_bool_or(FunctionCallInfo fcinfo, int i, bool fallback);
std::string arg_jsonb_or(FunctionCallInfo fcinfo, int i, const std::string& fallback);

}  // namespace hopper::pg
