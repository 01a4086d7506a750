// C symbols of earlier releases' extension scripts. A database upgraded with ALTER EXTENSION hopper
// UPDATE keeps running the old script's function definitions until the update replaces them, and
// the update test installs the previous release's script against this library: each old name
// stays an entry point that calls the function of today's name (SQL name = C symbol since 0.2.0).
#include "pg/common/guard.h"

#define HOPPER_LEGACY_SYMBOL(old_name, new_name)                  \
    extern "C" {                                                  \
    PGDLLEXPORT Datum new_name(PG_FUNCTION_ARGS);                 \
    PGDLLEXPORT Datum old_name(PG_FUNCTION_ARGS);                 \
    PGDLLEXPORT const Pg_finfo_record* pg_finfo_##old_name(void); \
    const Pg_finfo_record* pg_finfo_##old_name(void) {            \
        static const Pg_finfo_record info = {1};                  \
        return &info;                                             \
    }                                                             \
    Datum old_name(PG_FUNCTION_ARGS) { return new_name(fcinfo); } \
    }

// 0.1.0: the combine aggregates' support functions had a combine_ prefix, and ps_create's
// key-range form had its own symbol.
HOPPER_LEGACY_SYMBOL(combine_vector_sum_add, vector_sum_add)
HOPPER_LEGACY_SYMBOL(combine_vector_sum_merge, vector_sum_merge)
HOPPER_LEGACY_SYMBOL(combine_vector_sum_combine, vector_sum_combine)
HOPPER_LEGACY_SYMBOL(combine_vector_sum_serialize, vector_sum_serialize)
HOPPER_LEGACY_SYMBOL(combine_vector_sum_deserialize, vector_sum_deserialize)
HOPPER_LEGACY_SYMBOL(combine_vector_sum_finish, vector_sum_finish)
HOPPER_LEGACY_SYMBOL(combine_model_average_add, model_average_add)
HOPPER_LEGACY_SYMBOL(combine_model_average_merge, model_average_merge)
HOPPER_LEGACY_SYMBOL(combine_model_average_combine, model_average_combine)
HOPPER_LEGACY_SYMBOL(combine_model_average_serialize, model_average_serialize)
HOPPER_LEGACY_SYMBOL(combine_model_average_deserialize, model_average_deserialize)
HOPPER_LEGACY_SYMBOL(combine_model_average_finish, model_average_finish)
HOPPER_LEGACY_SYMBOL(combine_metrics_add, metrics_add)
HOPPER_LEGACY_SYMBOL(combine_metrics_merge, metrics_merge)
HOPPER_LEGACY_SYMBOL(combine_metrics_combine, metrics_combine)
HOPPER_LEGACY_SYMBOL(combine_metrics_serialize, metrics_serialize)
HOPPER_LEGACY_SYMBOL(combine_metrics_deserialize, metrics_deserialize)
HOPPER_LEGACY_SYMBOL(combine_metrics_finish, metrics_finish)
HOPPER_LEGACY_SYMBOL(ps_create_ranges, ps_create)
