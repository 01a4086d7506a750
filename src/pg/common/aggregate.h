// What every aggregate's support functions share: the aggregate's memory context, its C++ state
// (owned by that context, so it is destroyed when the context goes, on success or abort), and the
// NULL-state conventions of transition and combine functions.
#pragma once

#include <memory>
#include <string>

#include "hopper/error.h"
#include "pg/common/owned.h"

namespace hopper::pg {

// The aggregate memory context; an internal error when called outside an aggregate.
inline MemoryContext aggregate_context(FunctionCallInfo fcinfo, const char* function) {
    MemoryContext context;
    if (!AggCheckCallContext(fcinfo, &context))
        fail(ErrorKind::Internal, std::string(function) + " called outside an aggregate");
    return context;
}

// The state in argument i (nullptr for SQL NULL: no row seen yet).
template <typename Agg>
Agg* state_arg(FunctionCallInfo fcinfo, int i) {
    return PG_ARGISNULL(i) ? nullptr : reinterpret_cast<Agg*>(PG_GETARG_POINTER(i));
}

// The state, created empty in the aggregate context on first use.
template <typename Agg>
Agg* ensure_state(MemoryContext context, Agg* state) {
    return state ? state : own_in_context(context, std::make_unique<Agg>());
}

// A state as the function's result, SQL NULL for none.
inline Datum state_or_null(FunctionCallInfo fcinfo, void* state) {
    if (!state) {
        fcinfo->isnull = true;
        return (Datum)0;
    }
    return PointerGetDatum(state);
}

}  // namespace hopper::pg
