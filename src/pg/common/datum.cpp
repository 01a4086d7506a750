#include "pg/common/datum.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hopper/buffer_check.h"
#include "hopper/error.h"
#include "hopper/recipe.h"

extern "C" {
#include "utils/numeric.h"
#include "utils/uuid.h"
}

namespace hopper::pg {

namespace {

// Runs build (which pallocs the value it returns) in the value context; a PostgreSQL error in it
// leaves the current context as it was (pg::call restores it).
template <typename F>
Datum build_value(F&& build) {
    return call([&] {
        MemoryContext target = value_context();
        MemoryContext outer = MemoryContextSwitchTo(target ? target : CurrentMemoryContext);
        Datum d = build();
        MemoryContextSwitchTo(outer);
        return d;
    });
}

}  // namespace

std::string text_to_string(Datum d) {
    text* t = call([&] { return DatumGetTextPP(d); });
    return std::string(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
}

Datum string_to_text(std::string_view s) {
    return build_value([&] { return PointerGetDatum(cstring_to_text_with_len(s.data(), (int)s.size())); });
}

std::string bytea_to_string(Datum d) {
    bytea* b = call([&] { return DatumGetByteaPP(d); });
    return std::string(VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b));
}

Datum bytes_to_bytea(std::string_view bytes) {
    if (bytes.size() > MaxAllocSize - VARHDRSZ)
        fail(ErrorKind::Limit, "value is too large to store",
             "It has " + std::to_string(bytes.size()) + " bytes; PostgreSQL stores at most 1 GB in one value.");
    return build_value([&] {
        bytea* b = (bytea*)palloc(bytes.size() + VARHDRSZ);
        SET_VARSIZE(b, bytes.size() + VARHDRSZ);
        std::memcpy(VARDATA(b), bytes.data(), bytes.size());
        return PointerGetDatum(b);
    });
}

std::string jsonb_to_string(Datum d) {
    char* s = call([&] {
        Jsonb* jb = DatumGetJsonbP(d);
        return JsonbToCString(nullptr, &jb->root, VARSIZE(jb));
    });
    return std::string(s);
}

Datum string_to_jsonb(std::string_view json) {
    std::string copy(json);
    return build_value([&] { return DirectFunctionCall1(jsonb_in, CStringGetDatum(copy.c_str())); });
}

namespace {

struct Deconstructed {
    Datum* values = nullptr;
    bool* nulls = nullptr;
    int count = 0;
    Oid type = InvalidOid;
    int ndim = 0;
};

Deconstructed deconstruct(Datum d) {
    Deconstructed out;
    call([&] {
        ArrayType* a = DatumGetArrayTypeP(d);
        int16 typlen;
        bool typbyval;
        char typalign;
        out.type = ARR_ELEMTYPE(a);
        out.ndim = ARR_NDIM(a);
        get_typlenbyvalalign(out.type, &typlen, &typbyval, &typalign);
        deconstruct_array(a, out.type, typlen, typbyval, typalign, &out.values, &out.nulls, &out.count);
    });
    return out;
}

void no_nulls(const Deconstructed& a, const char* what) {
    for (int i = 0; i < a.count; ++i)
        if (a.nulls[i])
            fail(ErrorKind::NullValue, std::string(what) + " must not contain NULL elements",
                 "Element " + std::to_string(i + 1) + " is NULL.");
}

}  // namespace

std::vector<std::string> text_array_to_vector(Datum d, const char* what) {
    Deconstructed a = deconstruct(d);
    if (a.type != TEXTOID && a.type != VARCHAROID)
        fail(ErrorKind::WrongType, std::string(what) + " must be a text array");
    no_nulls(a, what);
    std::vector<std::string> out;
    out.reserve(a.count);
    for (int i = 0; i < a.count; ++i) out.push_back(text_to_string(a.values[i]));
    return out;
}

std::vector<int64_t> int_array_to_vector(Datum d, const char* what) {
    Deconstructed a = deconstruct(d);
    no_nulls(a, what);
    std::vector<int64_t> out(a.count);
    for (int i = 0; i < a.count; ++i) {
        switch (a.type) {
            case INT2OID: out[i] = DatumGetInt16(a.values[i]); break;
            case INT4OID: out[i] = DatumGetInt32(a.values[i]); break;
            case INT8OID: out[i] = DatumGetInt64(a.values[i]); break;
            default: fail(ErrorKind::WrongType, std::string(what) + " must be an integer array");
        }
    }
    return out;
}

namespace {

// Where an element is, for messages: "Element 3 of row 12" (or of the array, with no row).
std::string element_at(int i, int64_t row_hint) {
    return "Element " + std::to_string(i + 1) + (row_hint > 0 ? " of row " + std::to_string(row_hint) : "");
}

// [[noreturn]]: a value that float32, which hopper trains in, cannot hold.
[[noreturn]] void beyond_float32(const char* what, int i, int64_t row_hint, const std::string& value) {
    fail(ErrorKind::Data, std::string(what) + " have a value beyond float32's range",
         element_at(i, row_hint) + " is " + value + "; hopper trains in float32 (up to about 3.4e38).",
         "Scale the values first, e.g. with normalizing_const or in a view.");
}

// A value beyond float32's range, for messages (beyond_float8_range: float8's largest stands for a
// numeric beyond float8's range too).
std::string describe_beyond(double v) {
    const std::string range = beyond_float8_range(v);
    return range.empty() ? describe_double(v) : range;
}

// A numeric as a double. numeric's cast raises beyond float8's range (22003, naming nothing); that
// value is refused here naming the element instead. NaN and the infinities pass as such.
double numeric_element(Datum v, const char* what, int i, int64_t row_hint) {
    const Numeric n = call([&] { return DatumGetNumeric(v); });  // an element with a short header is copied
    if (numeric_is_nan(n) || numeric_is_inf(n))
        return call([&] { return DatumGetFloat8(DirectFunctionCall1(numeric_float8, v)); });
    const double x = call([&] { return DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow, v)); });
    if (!std::isinf(x)) return x;  // below float8's smallest: 0, as numeric_float8_no_overflow has it
    beyond_float32(what, i, row_hint, call([&] { return numeric_out_sci(n, 6); }));
}

}  // namespace

std::vector<double> float_array_to_vector(Datum d, const char* what, int64_t row_hint) {
    Deconstructed a = deconstruct(d);
    no_nulls(a, what);
    std::vector<double> out(a.count);
    for (int i = 0; i < a.count; ++i) {
        switch (a.type) {
            case FLOAT4OID: out[i] = DatumGetFloat4(a.values[i]); break;
            case FLOAT8OID: out[i] = DatumGetFloat8(a.values[i]); break;
            case INT2OID: out[i] = DatumGetInt16(a.values[i]); break;
            case INT4OID: out[i] = DatumGetInt32(a.values[i]); break;
            case INT8OID: out[i] = (double)DatumGetInt64(a.values[i]); break;
            case NUMERICOID: out[i] = numeric_element(a.values[i], what, i, row_hint); break;
            default: fail(ErrorKind::WrongType, std::string(what) + " must be a numeric array");
        }
    }
    return out;
}

template <typename T>
static Datum make_array(const std::vector<T>& v, Oid type, Datum (*to_datum)(T)) {
    return build_value([&] {
        Datum* elems = (Datum*)palloc(sizeof(Datum) * (v.empty() ? 1 : v.size()));
        for (std::size_t i = 0; i < v.size(); ++i) elems[i] = to_datum(v[i]);
        int16 typlen;
        bool typbyval;
        char typalign;
        get_typlenbyvalalign(type, &typlen, &typbyval, &typalign);
        return PointerGetDatum(construct_array(elems, (int)v.size(), type, typlen, typbyval, typalign));
    });
}

static Datum float8_datum(double x) { return Float8GetDatum(x); }
static Datum int2_datum(int16_t x) { return Int16GetDatum(x); }
static Datum int4_datum(int32_t x) { return Int32GetDatum(x); }
static Datum int8_datum(int64_t x) { return Int64GetDatum(x); }

Datum make_float8_array(const std::vector<double>& v) { return make_array(v, FLOAT8OID, float8_datum); }
Datum make_int2_array(const std::vector<int16_t>& v) { return make_array(v, INT2OID, int2_datum); }
Datum make_int4_array(const std::vector<int32_t>& v) { return make_array(v, INT4OID, int4_datum); }
Datum make_int8_array(const std::vector<int64_t>& v) { return make_array(v, INT8OID, int8_datum); }

Datum make_text_array(const std::vector<std::string>& v) {
    std::vector<Datum> texts;
    texts.reserve(v.size());
    for (const auto& s : v) texts.push_back(string_to_text(s));
    return build_value([&] {
        return PointerGetDatum(construct_array(texts.empty() ? nullptr : texts.data(), (int)texts.size(), TEXTOID, -1,
                                               false, TYPALIGN_INT));
    });
}

Datum make_bytea_array(const std::vector<std::string>& v) {
    std::vector<Datum> elems;
    elems.reserve(v.size());
    for (const auto& s : v) elems.push_back(bytes_to_bytea(s));
    return build_value([&] {
        return PointerGetDatum(construct_array(elems.empty() ? nullptr : elems.data(), (int)elems.size(), BYTEAOID, -1,
                                               false, TYPALIGN_INT));
    });
}

Datum make_float4_array(const float* data, const std::vector<int>& dims) {
    std::size_t n = 1;
    for (int d : dims) n *= (std::size_t)d;
    if (n * sizeof(float) > MaxAllocSize - 64)
        fail(ErrorKind::Limit, "array is too large to store",
             "It would hold " + std::to_string(n) + " floats; PostgreSQL stores at most 1 GB in one value.",
             "Use a smaller buffer_size.");
    return build_value([&] {
        int ndim = (int)dims.size();
        int lbs[MAXDIM];
        int dimv[MAXDIM];
        for (int i = 0; i < ndim; ++i) {
            dimv[i] = dims[i];
            lbs[i] = 1;
        }
        Size nbytes = ARR_OVERHEAD_NONULLS(ndim) + n * sizeof(float);
        ArrayType* a = (ArrayType*)palloc0(nbytes);
        SET_VARSIZE(a, nbytes);
        a->ndim = ndim;
        a->dataoffset = 0;
        a->elemtype = FLOAT4OID;
        std::memcpy(ARR_DIMS(a), dimv, sizeof(int) * ndim);
        std::memcpy(ARR_LBOUND(a), lbs, sizeof(int) * ndim);
        if (n) std::memcpy(ARR_DATA_PTR(a), data, n * sizeof(float));
        return PointerGetDatum(a);
    });
}

Float4Matrix float4_matrix(Datum d, const char* what) {
    ArrayType* a = call([&] { return DatumGetArrayTypeP(d); });
    if (ARR_ELEMTYPE(a) != FLOAT4OID)
        fail(ErrorKind::WrongType, std::string(what) + " must be a real[] array",
             // A value of another type read as an array has no type OID there: named "???" then,
             // never a cache lookup failure (XX000).
             std::string("It has element type ") +
                 call([&] { return format_type_extended(ARR_ELEMTYPE(a), -1, FORMAT_TYPE_ALLOW_INVALID); }) + ".");
    if (ARR_HASNULL(a) && call([&] { return array_contains_nulls(a); }))
        fail(ErrorKind::NullValue, std::string(what) + " must not contain NULL elements");
    // The shape checks are the core's (hopper/buffer_check.h); the data size is what the varlena
    // really holds, so a damaged array header cannot make hopper read past its data.
    const std::size_t data_bytes = std::size_t(VARSIZE(a)) - std::size_t(ARR_DATA_OFFSET(a));
    BufferShape shape = buffer_shape(ARR_NDIM(a), ARR_DIMS(a), data_bytes / sizeof(float), what);
    Float4Matrix m;
    m.data = (const float*)ARR_DATA_PTR(a);
    m.rows = shape.rows;
    m.cols = shape.cols;
    return m;
}

Datum make_record(FunctionCallInfo fcinfo, std::vector<Datum> values, const std::vector<bool>& null_flags) {
    std::unique_ptr<bool[]> nulls(new bool[values.size()]);
    for (std::size_t i = 0; i < values.size(); ++i) nulls[i] = i < null_flags.size() && null_flags[i];
    return build_value([&] {
        TupleDesc desc;
        if (get_call_result_type(fcinfo, nullptr, &desc) != TYPEFUNC_COMPOSITE)
            elog(ERROR, "function returning a record called in a context that cannot accept it");
        desc = BlessTupleDesc(desc);
        return HeapTupleGetDatum(heap_form_tuple(desc, values.data(), nulls.get()));
    });
}

void require_not_null(FunctionCallInfo fcinfo, int i, const char* name) {
    if (PG_NARGS() <= i || PG_ARGISNULL(i))
        fail(ErrorKind::NullValue, std::string("parameter \"") + name + "\" must not be NULL");
}

std::string arg_text(FunctionCallInfo fcinfo, int i, const char* name) {
    require_not_null(fcinfo, i, name);
    return text_to_string(PG_GETARG_DATUM(i));
}

std::string arg_text_or(FunctionCallInfo fcinfo, int i, const std::string& fallback) {
    if (PG_NARGS() <= i || PG_ARGISNULL(i)) return fallback;
    return text_to_string(PG_GETARG_DATUM(i));
}

int64_t arg_int(FunctionCallInfo fcinfo, int i, const char* name) {
    require_not_null(fcinfo, i, name);
    Oid type = get_fn_expr_argtype(fcinfo->flinfo, i);
    if (type == INT8OID) return PG_GETARG_INT64(i);
    if (type == INT2OID) return PG_GETARG_INT16(i);
    return PG_GETARG_INT32(i);
}

int64_t arg_int_or(FunctionCallInfo fcinfo, int i, int64_t fallback) {
    if (PG_NARGS() <= i || PG_ARGISNULL(i)) return fallback;
    return arg_int(fcinfo, i, "");
}

std::string uuid_arg(FunctionCallInfo fcinfo, int i, const char* name) {
    require_not_null(fcinfo, i, name);
    Datum d = PG_GETARG_DATUM(i);
    return std::string(call([&] { return DatumGetCString(DirectFunctionCall1(uuid_out, d)); }));
}

Datum uuid_datum(const std::string& text) {
    return build_value([&] { return DirectFunctionCall1(uuid_in, CStringGetDatum(text.c_str())); });
}

std::string arg_json_object(FunctionCallInfo fcinfo, int i, const char* name) {
    std::string s = arg_jsonb_or(fcinfo, i, "{}");
    const std::size_t at = s.find_first_not_of(" \t\r\n");
    if (at == std::string::npos || s[at] != '{')
        fail(ErrorKind::InvalidParameter, std::string(name) + " must be a JSON object",
             "It is " + s.substr(0, 80) + ".");
    return s;
}

std::optional<int64_t> arg_int_opt(FunctionCallInfo fcinfo, int i) {
    if (PG_NARGS() <= i || PG_ARGISNULL(i)) return std::nullopt;
    return arg_int(fcinfo, i, "");
}

double arg_float8_or(FunctionCallInfo fcinfo, int i, double fallback) {
    if (PG_NARGS() <= i || PG_ARGISNULL(i)) return fallback;
    return PG_GETARG_FLOAT8(i);
}

bool arg_bool_or(FunctionCallInfo fcinfo, int i, bool fallback) {
    if (PG_NARGS() <= i || PG_ARGISNULL(i)) return fallback;
    return PG_GETARG_BOOL(i);
}

std::string arg_jsonb_or(FunctionCallInfo fcinfo, int i, const std::string& fallback) {
    if (PG_NARGS() <= i || PG_ARGISNULL(i)) return fallback;
    return jsonb_to_string(PG_GETARG_DATUM(i));
}

std::string describe_float(float v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
    return std::to_string(v);
}

std::string describe_double(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
    char out[32];
    std::snprintf(out, sizeof out, "%.6g", v);
    return out;
}

namespace {

// The core of append_floats and floats_into: `place(n)` says whether to convert the array's n values
// and where they go (not converted: the length is all the caller wants).
template <typename Place>
int convert_floats(Datum d, const char* what, int64_t row_hint, Place&& place) {
    ArrayType* a = call([&] { return DatumGetArrayTypeP(d); });
    if (ARR_NDIM(a) > 1)
        fail(ErrorKind::Data, std::string(what) + " must be one-dimensional arrays",
             "Row " + std::to_string(row_hint) + " has a " + std::to_string(ARR_NDIM(a)) + "-dimensional array.",
             "Flatten multi-dimensional inputs before packing.");
    if (ARR_HASNULL(a) && call([&] { return array_contains_nulls(a); }))
        fail(ErrorKind::NullValue, std::string(what) + " must not contain NULL elements",
             "Row " + std::to_string(row_hint) + " has one.");
    const int n = ARR_NDIM(a) == 0 ? 0 : ARR_DIMS(a)[0];
    const Oid t = ARR_ELEMTYPE(a);
    const auto [convert, out] = place(n);
    if (!convert) {
    } else if (t == FLOAT4OID) {
        // An empty array into an empty vector: memcpy from or to a null pointer is undefined even
        // for 0 bytes (test/sanitizers_extension.sh reported it in test/regress/sql/bad_input_walk.sql).
        if (n > 0) std::memcpy(out, ARR_DATA_PTR(a), sizeof(float) * n);
    } else if (t == FLOAT8OID) {
        const double* src = (const double*)ARR_DATA_PTR(a);
        for (int i = 0; i < n; ++i) {
            out[i] = float(src[i]);
            if (std::isinf(out[i]) && std::isfinite(src[i])) beyond_float32(what, i, row_hint, describe_beyond(src[i]));
        }
    } else {
        std::vector<double> v = float_array_to_vector(d, what, row_hint);
        for (int i = 0; i < n; ++i) {
            out[i] = float(v[i]);
            if (std::isinf(out[i]) && std::isfinite(v[i])) beyond_float32(what, i, row_hint, describe_beyond(v[i]));
        }
    }
    // A detoasted (or unpacked short-header) copy: freed now, or a loop over rows (preprocess reads
    // whole tables) would keep one per row until its memory context ends.
    if ((Pointer)a != DatumGetPointer(d)) pfree(a);
    return n;
}

}  // namespace

int append_floats(Datum d, std::vector<float>& out, const char* what, int64_t row_hint) {
    return convert_floats(d, what, row_hint, [&](int n) {
        const std::size_t base = out.size();
        out.resize(base + std::size_t(n));
        return std::pair<bool, float*>(true, out.data() + base);
    });
}

int floats_into(Datum d, float* out, int expected, const char* what, int64_t row_hint) {
    return convert_floats(d, what, row_hint, [&](int n) { return std::pair<bool, float*>(n == expected, out); });
}

}  // namespace hopper::pg
