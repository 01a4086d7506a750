// Aggregates of the hierarchical combine, three levels for each mergeable state:
//   hopper.K_partial(rows)        -> bytea state   (per segment)
//   hopper.K_intermediate(states) -> bytea state   (per node group)
//   hopper.K_final(states)        -> result
// and the two-level form hopper.K(rows) -> result. K is vector_sum, model_average or metrics. All
// share one set of support functions per K: `add` (a row into the state), `merge` (a serialized
// state into the state), `combine`, `serialize`, `deserialize` (PostgreSQL's own parallel partial
// aggregation uses them too) and `finish` (the result). The merging itself is the core's
// (hopper/combine.h), the same for every level.
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "hopper/buffer_check.h"
#include "hopper/combine.h"
#include "hopper/metrics.h"
#include "hopper/network.h"
#include "hopper/state_format.h"
#include "pg/common/aggregate.h"
#include "pg/common/datum.h"

extern "C" {
#include "access/detoast.h"
}

namespace {

using namespace hopper;
using namespace hopper::pg;

struct VectorSumAgg {
    VectorSumState core;
};

struct ModelAverageAgg {
    ModelAverageState core;
};

struct MetricsAgg {
    MetricsState core;
    // The model the rows are evaluated with (not in a state rebuilt by deserialize: merging needs none).
    std::unique_ptr<FrozenModel> model;
    std::unique_ptr<Network> network;
    std::size_t model_bytes = 0;
    MatrixF scratch;
};

// merge(state internal, serialized bytea): the intermediate and final levels' transition.
template <typename Agg>
Datum merge_serialized(FunctionCallInfo fcinfo, const char* function) {
    MemoryContext context = aggregate_context(fcinfo, function);
    Agg* state = state_arg<Agg>(fcinfo, 0);
    if (PG_ARGISNULL(1)) return state_or_null(fcinfo, state);  // a segment or group without rows
    auto incoming = decltype(state->core)::deserialize(bytea_to_string(PG_GETARG_DATUM(1)));
    state = ensure_state(context, state);
    state->core.merge(incoming);
    return PointerGetDatum(state);
}

template <typename Agg>
Datum combine_states(FunctionCallInfo fcinfo, const char* function) {
    MemoryContext context = aggregate_context(fcinfo, function);
    Agg* a = state_arg<Agg>(fcinfo, 0);
    Agg* b = state_arg<Agg>(fcinfo, 1);
    if (!b) return state_or_null(fcinfo, a);
    if (!a) {
        // The second state lives in another memory context: copy it into the aggregate's.
        auto copy = std::make_unique<Agg>();
        copy->core = b->core;
        return PointerGetDatum(own_in_context(context, std::move(copy)));
    }
    a->core.merge(b->core);
    return PointerGetDatum(a);
}

template <typename Agg>
Datum serialize_state_datum(FunctionCallInfo fcinfo) {
    Agg* state = state_arg<Agg>(fcinfo, 0);
    if (!state) return state_or_null(fcinfo, nullptr);
    return bytes_to_bytea(state->core.serialize());
}

template <typename Agg>
Datum deserialize_state_datum(FunctionCallInfo fcinfo, const char* function) {
    MemoryContext context = aggregate_context(fcinfo, function);
    auto state = std::make_unique<Agg>();
    state->core = decltype(state->core)::deserialize(bytea_to_string(PG_GETARG_DATUM(0)));
    return PointerGetDatum(own_in_context(context, std::move(state)));
}

}  // namespace

// ------------------------------------------------------------------------------------------------
// vector_sum(x float8[]): count, sum and mean of vectors of one length. NULL vectors are skipped.

HOPPER_FUNCTION(vector_sum_add) {
    MemoryContext context = aggregate_context(fcinfo, "vector_sum_add");
    VectorSumAgg* state = state_arg<VectorSumAgg>(fcinfo, 0);
    if (PG_ARGISNULL(1)) return state_or_null(fcinfo, state);
    std::vector<double> x = float_array_to_vector(PG_GETARG_DATUM(1), "vector");
    state = ensure_state(context, state);
    state->core.add(x.data(), x.size());
    PG_RETURN_POINTER(state);
}

HOPPER_FUNCTION(vector_sum_merge) { return merge_serialized<VectorSumAgg>(fcinfo, "vector_sum_merge"); }
HOPPER_FUNCTION(vector_sum_combine) { return combine_states<VectorSumAgg>(fcinfo, "vector_sum_combine"); }
HOPPER_FUNCTION(vector_sum_serialize) { return serialize_state_datum<VectorSumAgg>(fcinfo); }
HOPPER_FUNCTION(vector_sum_deserialize) {
    return deserialize_state_datum<VectorSumAgg>(fcinfo, "vector_sum_deserialize");
}

// -> hopper.vector_total (count bigint, sum float8[], mean float8[])
HOPPER_FUNCTION(vector_sum_finish) {
    VectorSumAgg* state = state_arg<VectorSumAgg>(fcinfo, 0);
    if (!state || state->core.empty()) PG_RETURN_NULL();
    const VectorSumState& s = state->core;
    return make_record(fcinfo,
                       {Int64GetDatum(int64_t(s.count)), make_float8_array(s.total()), make_float8_array(s.mean())},
                       {false, false, false});
}

// ------------------------------------------------------------------------------------------------
// model_average(model_state bytea, weight bigint): the weighted mean of model states (exact).

HOPPER_FUNCTION(model_average_add) {
    MemoryContext context = aggregate_context(fcinfo, "model_average_add");
    ModelAverageAgg* state = state_arg<ModelAverageAgg>(fcinfo, 0);
    if (PG_ARGISNULL(1)) return state_or_null(fcinfo, state);
    if (PG_ARGISNULL(2))
        fail(ErrorKind::NullValue, "weight must not be NULL", "A model state to average has a NULL weight.");
    const int64_t weight = PG_GETARG_INT64(2);
    if (weight < 0)
        fail(ErrorKind::InvalidParameter, "weight must not be negative", "It is " + std::to_string(weight) + ".",
             "Weights are row counts: the rows each model was trained on.");
    std::string bytes = bytea_to_string(PG_GETARG_DATUM(1));
    state = ensure_state(context, state);
    state->core.add(bytes, uint64_t(weight));
    PG_RETURN_POINTER(state);
}

HOPPER_FUNCTION(model_average_merge) { return merge_serialized<ModelAverageAgg>(fcinfo, "model_average_merge"); }
HOPPER_FUNCTION(model_average_combine) { return combine_states<ModelAverageAgg>(fcinfo, "model_average_combine"); }
HOPPER_FUNCTION(model_average_serialize) { return serialize_state_datum<ModelAverageAgg>(fcinfo); }
HOPPER_FUNCTION(model_average_deserialize) {
    return deserialize_state_datum<ModelAverageAgg>(fcinfo, "model_average_deserialize");
}

// -> bytea: the averaged model state
namespace hopper::pg {
bool quiet_model_average = false;
}

// Copies left out (diverged, or values not finite or too large to sum exactly) are reported with a
// count; when every copy was left out there is no average: NULL, not a model of NaN weights.
// (fit_data_parallel reports divergence itself, so it silences the warning: quiet_model_average.)
HOPPER_FUNCTION(model_average_finish) {
    ModelAverageAgg* state = state_arg<ModelAverageAgg>(fcinfo, 0);
    if (!state || state->core.empty()) PG_RETURN_NULL();
    const ModelAverageState& avg = state->core;
    if (avg.excluded == avg.models && quiet_model_average) PG_RETURN_NULL();
    if (avg.excluded > 0 && !quiet_model_average) {
        const std::string counted =
            std::to_string(avg.excluded) + " of " + std::to_string(avg.models) + " model states";
        const bool none_left = avg.excluded == avg.models;
        warning(none_left ? "model_average has no average: all " + counted + " were left out"
                          : "model_average left out " + counted,
                "A state is left out when it diverged or holds values that are not finite or too large to average "
                "exactly.",
                none_left ? "The result is NULL." : "");
        if (none_left) PG_RETURN_NULL();
    }
    PG_RETURN_DATUM(bytes_to_bytea(avg.result()));
}

// ------------------------------------------------------------------------------------------------
// metrics(model_state bytea, independent_var real[], dependent_var real[]): loss and metrics of one
// model over packed buffers.

HOPPER_FUNCTION(metrics_add) {
    MemoryContext context = aggregate_context(fcinfo, "metrics_add");
    MetricsAgg* state = state_arg<MetricsAgg>(fcinfo, 0);
    if (PG_ARGISNULL(1)) fail(ErrorKind::NullValue, "model state must not be NULL");
    if (PG_ARGISNULL(2) || PG_ARGISNULL(3)) fail(ErrorKind::NullValue, "packed buffers must not be NULL");
    state = ensure_state(context, state);
    const Datum model_datum = PG_GETARG_DATUM(1);
    if (!state->model) {
        // All rows carry the same model: load it once per state.
        std::string bytes = bytea_to_string(model_datum);
        auto model = std::make_unique<FrozenModel>(load_frozen_model(bytes));
        state->core.start(model->config.compile);
        state->network = std::make_unique<Network>(model->config.arch);
        state->model_bytes = bytes.size();
        state->model = std::move(model);
    } else {
        // A different model on a later row would be evaluated as the first one: refuse it. The size
        // and the checksum (the state's last 4 bytes) are read without detoasting the whole value.
        uint32_t crc = 0;
        const std::size_t size = call([&] { return std::size_t(toast_raw_datum_size(model_datum) - VARHDRSZ); });
        if (size == state->model_bytes && size >= 4) {
            call([&] {
                bytea* tail = DatumGetByteaPSlice(model_datum, int32(size - 4), 4);
                if (VARSIZE_ANY_EXHDR(tail) == 4) std::memcpy(&crc, VARDATA_ANY(tail), 4);
            });
        }
        if (size != state->model_bytes || crc != state->model->checksum)
            fail(ErrorKind::InvalidParameter, "rows carry different model states",
                 "A metrics aggregate evaluates one model over all its rows.", "Use one aggregate per model.");
    }
    Float4Matrix x = float4_matrix(PG_GETARG_DATUM(2), "independent_var");
    Float4Matrix y = float4_matrix(PG_GETARG_DATUM(3), "dependent_var");
    if (x.rows != y.rows)
        fail(ErrorKind::Data, "packed buffer has inconsistent row counts",
             "independent_var has " + std::to_string(x.rows) + " rows and dependent_var " + std::to_string(y.rows) +
                 ".");
    if (x.rows == 0) PG_RETURN_POINTER(state);
    const Architecture& arch = state->model->config.arch;
    if (x.cols != arch.input_dim || y.cols != arch.output_dim())
        fail(ErrorKind::Data,
             "packed data has shape " + std::to_string(x.cols) + " -> " + std::to_string(y.cols) +
                 " but the model expects " + std::to_string(arch.input_dim) + " -> " +
                 std::to_string(arch.output_dim()),
             "Architecture " + arch.shape_string() + ".");
    check_finite_buffer(x.data, {x.rows, x.cols}, "independent_var");
    check_finite_buffer(y.data, {y.rows, y.cols}, "dependent_var");
    ConstMatrixMap xm(x.data, x.cols, x.rows), ym(y.data, y.cols, y.rows);
    evaluate_batch(*state->network, state->model->params.data(), xm, ym, state->model->config.compile,
                   state->core.totals, state->scratch);
    PG_RETURN_POINTER(state);
}

HOPPER_FUNCTION(metrics_merge) { return merge_serialized<MetricsAgg>(fcinfo, "metrics_merge"); }
HOPPER_FUNCTION(metrics_combine) { return combine_states<MetricsAgg>(fcinfo, "metrics_combine"); }
HOPPER_FUNCTION(metrics_serialize) { return serialize_state_datum<MetricsAgg>(fcinfo); }
HOPPER_FUNCTION(metrics_deserialize) { return deserialize_state_datum<MetricsAgg>(fcinfo, "metrics_deserialize"); }

// -> hopper.metrics_total (row_count bigint, loss float8, metrics jsonb)
HOPPER_FUNCTION(metrics_finish) {
    MetricsAgg* state = state_arg<MetricsAgg>(fcinfo, 0);
    if (!state || state->core.empty()) PG_RETURN_NULL();
    const MetricsState& s = state->core;
    const double loss = s.totals.loss();
    return make_record(fcinfo,
                       {Int64GetDatum(int64_t(s.totals.count)), Float8GetDatum(loss),
                        string_to_jsonb(s.metrics_json())},
                       {false, !std::isfinite(loss), false});
}
