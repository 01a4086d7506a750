// hopper.evaluate_models: loss and metrics of several models in one scan of the data. Every row
// (a packed buffer) is read once and evaluated against all models; the state is a list of
// mergeable sums, so PostgreSQL can run it as a parallel partial aggregate and combine the parts.
// What it does with a row is evaluate_buffer (buffer_eval.h), which the group of processes that
// trains an iteration's hops uses too.
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hopper/buffer_check.h"
#include "hopper/metrics.h"
#include "hopper/network.h"
#include "hopper/state_format.h"
#include "pg/common/aggregate.h"
#include "pg/common/datum.h"
#include "pg/runtime/buffer_cache.h"
#include "pg/training/buffer_eval.h"

extern "C" {
#include "access/detoast.h"
}

namespace hopper::pg {

EvaluatedModel load_for_evaluation(std::string_view state) {
    EvaluatedModel m;
    m.frozen = load_frozen_model(state);
    m.network = std::make_unique<Network>(m.frozen.config.arch);
    return m;
}

EvalTotals empty_totals(const EvaluatedModel& model) {
    EvalTotals t;
    t.metric_sums.assign(model.frozen.config.compile.metrics.size(), 0.0);
    return t;
}

void evaluate_buffer(Datum x_datum, Datum y_datum, const std::vector<EvaluatedModel>& models,
                     std::vector<EvalTotals>& totals, MatrixF& scratch) {
    const PackedBuffer xb = detoast_buffer(x_datum), yb = detoast_buffer(y_datum);
    Float4Matrix x = float4_matrix(xb.value, "independent_var");
    Float4Matrix y = float4_matrix(yb.value, "dependent_var");
    if (x.rows != y.rows)
        fail(ErrorKind::Data, "packed buffer has inconsistent row counts",
             "independent_var has " + std::to_string(x.rows) + " rows and dependent_var " + std::to_string(y.rows) +
                 ".");
    if (x.rows == 0) return;
    check_finite_once(xb, x, "independent_var");
    check_finite_once(yb, y, "dependent_var");
    for (std::size_t i = 0; i < models.size(); ++i) {
        // One buffer against many large models can take seconds: let a cancel in between models.
        check_for_interrupts();
        const EvaluatedModel& m = models[i];
        const Architecture& arch = m.frozen.config.arch;
        if (x.cols != arch.input_dim || y.cols != arch.output_dim())
            fail(ErrorKind::Data,
                 "packed data has shape " + std::to_string(x.cols) + " -> " + std::to_string(y.cols) +
                     " but the model expects " + std::to_string(arch.input_dim) + " -> " +
                     std::to_string(arch.output_dim()),
                 "Architecture " + arch.shape_string() + ".");
        ConstMatrixMap xm(x.data, x.cols, x.rows);
        ConstMatrixMap ym(y.data, y.cols, y.rows);
        evaluate_batch(*m.network, m.frozen.params.data(), xm, ym, m.frozen.config.compile, totals[i], scratch);
    }
}

}  // namespace hopper::pg

namespace {

struct EvalAggState {
    std::vector<hopper::pg::EvaluatedModel> models;  // empty in a state rebuilt by deserialize (combine needs none)
    std::vector<std::size_t> model_bytes;            // each state's size, beside its checksum (frozen.checksum)
    // The first row's array as stored, when it is a TOAST value (a column of a table): the same value
    // on later rows is the same states, and is not fetched again.
    std::optional<varatt_external> stored_states;
    std::vector<hopper::EvalTotals> totals;
    hopper::MatrixF scratch;
};

// Every row must carry the first row's states: others would be evaluated as those (a CASE could mix
// them without a word; hopper.metrics refuses it). Compared state by state, by size and checksum (a
// state's last 4 bytes, read without detoasting the state), not by the array's address: a row's
// array may take the place of the previous row's, freed.
// The TOAST pointer of an array stored out of line, if it is.
std::optional<varatt_external> stored_pointer(Datum value) {
    const varlena* v = reinterpret_cast<const varlena*>(DatumGetPointer(value));
    if (!VARATT_IS_EXTERNAL_ONDISK(v)) return std::nullopt;
    varatt_external p;
    VARATT_EXTERNAL_GET_POINTER(p, v);
    return p;
}

void check_same_states(const EvalAggState& state, Datum states) {
    // One stored array joined to every row (hopper.evaluate_models(t.states, ...) FROM packed, t):
    // compared by its TOAST pointer, not fetched (megabytes of states) once per row.
    if (const std::optional<varatt_external> p = stored_pointer(states);
        p && state.stored_states && p->va_valueid == state.stored_states->va_valueid &&
        p->va_toastrelid == state.stored_states->va_toastrelid)
        return;
    ArrayType* arr = hopper::pg::call([&] { return DatumGetArrayTypeP(states); });
    Datum* elems;
    bool* nulls;
    int n;
    hopper::pg::call([&] { deconstruct_array(arr, BYTEAOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n); });
    bool same = std::size_t(n) == state.models.size();
    for (int i = 0; same && i < n; ++i) {
        if (nulls[i]) {
            same = false;
            break;
        }
        const std::size_t size =
            hopper::pg::call([&] { return std::size_t(toast_raw_datum_size(elems[i]) - VARHDRSZ); });
        uint32_t crc = 0;
        if (size == state.model_bytes[std::size_t(i)] && size >= 4)
            hopper::pg::call([&] {
                bytea* tail = DatumGetByteaPSlice(elems[i], int32(size - 4), 4);
                if (VARSIZE_ANY_EXHDR(tail) == 4) std::memcpy(&crc, VARDATA_ANY(tail), 4);
            });
        same = size == state.model_bytes[std::size_t(i)] && crc == state.models[std::size_t(i)].frozen.checksum;
    }
    if (!same)
        hopper::fail(hopper::ErrorKind::InvalidParameter, "rows carry different model states",
                     "hopper.evaluate_models evaluates the states of the first row against every row.",
                     "Pass the same array of states on every row, e.g. from a subquery.");
}

}  // namespace

using namespace hopper;
using namespace hopper::pg;

// evaluate_models_transition(state internal, model_states bytea[], x real[], y real[])
HOPPER_FUNCTION(evaluate_models_transition) {
    MemoryContext aggcontext = aggregate_context(fcinfo, "evaluate_models_transition");
    EvalAggState* state = ensure_state(aggcontext, state_arg<EvalAggState>(fcinfo, 0));
    if (state->models.empty()) {
        if (PG_ARGISNULL(1)) fail(ErrorKind::NullValue, "model states must not be NULL");
        // All rows carry the same array: load the models once per process.
        ArrayType* arr = call([&] { return DatumGetArrayTypeP(PG_GETARG_DATUM(1)); });
        Datum* elems;
        bool* nulls;
        int n;
        call([&] { deconstruct_array(arr, BYTEAOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n); });
        if (n == 0) fail(ErrorKind::InvalidParameter, "no model states to evaluate");
        for (int i = 0; i < n; ++i) {
            if (nulls[i]) fail(ErrorKind::NullValue, "model state " + std::to_string(i + 1) + " is NULL");
            const std::string bytes = bytea_to_string(elems[i]);
            state->models.push_back(load_for_evaluation(bytes));
            state->model_bytes.push_back(bytes.size());
        }
        state->stored_states = stored_pointer(PG_GETARG_DATUM(1));
        if (state->totals.empty()) state->totals.resize(n);
        for (int i = 0; i < n; ++i)
            if (state->totals[i].metric_sums.empty()) state->totals[i] = empty_totals(state->models[i]);
    } else {
        if (PG_ARGISNULL(1)) fail(ErrorKind::NullValue, "model states must not be NULL");
        check_same_states(*state, PG_GETARG_DATUM(1));
    }
    if (PG_ARGISNULL(2) || PG_ARGISNULL(3)) fail(ErrorKind::NullValue, "packed buffers must not be NULL");
    evaluate_buffer(PG_GETARG_DATUM(2), PG_GETARG_DATUM(3), state->models, state->totals, state->scratch);
    PG_RETURN_POINTER(state);
}

// Layout: u32 n, then per model: u32 k, f64 loss_sum, f64 count, k x f64 metric sums.
HOPPER_FUNCTION(evaluate_models_serialize) {
    auto* state = reinterpret_cast<EvalAggState*>(PG_GETARG_POINTER(0));
    std::string out;
    auto put = [&](const void* p, std::size_t n) { out.append(static_cast<const char*>(p), n); };
    uint32_t n = uint32_t(state->totals.size());
    put(&n, 4);
    for (const EvalTotals& t : state->totals) {
        uint32_t k = uint32_t(t.metric_sums.size());
        put(&k, 4);
        put(&t.loss_sum, 8);
        put(&t.count, 8);
        for (double v : t.metric_sums) put(&v, 8);
    }
    PG_RETURN_DATUM(bytes_to_bytea(out));
}

HOPPER_FUNCTION(evaluate_models_deserialize) {
    MemoryContext aggcontext = aggregate_context(fcinfo, "evaluate_models_deserialize");
    std::string in = bytea_to_string(PG_GETARG_DATUM(0));
    std::size_t at = 0;
    auto get = [&](void* p, std::size_t n) {
        if (at + n > in.size()) fail(ErrorKind::Internal, "truncated evaluation state");
        std::memcpy(p, in.data() + at, n);
        at += n;
    };
    auto state = std::make_unique<EvalAggState>();
    uint32_t n;
    get(&n, 4);
    state->totals.resize(n);
    for (EvalTotals& t : state->totals) {
        uint32_t k;
        get(&k, 4);
        get(&t.loss_sum, 8);
        get(&t.count, 8);
        t.metric_sums.resize(k);
        for (double& v : t.metric_sums) get(&v, 8);
    }
    PG_RETURN_POINTER(own_in_context(aggcontext, std::move(state)));
}

HOPPER_FUNCTION(evaluate_models_combine) {
    MemoryContext aggcontext = aggregate_context(fcinfo, "evaluate_models_combine");
    auto* a = state_arg<EvalAggState>(fcinfo, 0);
    auto* b = state_arg<EvalAggState>(fcinfo, 1);
    if (!b) {
        if (!a) PG_RETURN_NULL();
        PG_RETURN_POINTER(a);
    }
    if (!a) {
        // The second state lives in another context: copy its sums into the aggregate context.
        auto copy = std::make_unique<EvalAggState>();
        copy->totals = b->totals;
        PG_RETURN_POINTER(own_in_context(aggcontext, std::move(copy)));
    }
    if (a->totals.empty()) a->totals.resize(b->totals.size());
    if (a->totals.size() != b->totals.size())
        fail(ErrorKind::Internal, "evaluation states cover different numbers of models");
    for (std::size_t i = 0; i < a->totals.size(); ++i) a->totals[i].merge(b->totals[i]);
    PG_RETURN_POINTER(a);
}

// Flattened result: per model, count, loss, then its metrics in compile order.
HOPPER_FUNCTION(evaluate_models_final) {
    if (PG_ARGISNULL(0)) PG_RETURN_NULL();
    auto* state = reinterpret_cast<EvalAggState*>(PG_GETARG_POINTER(0));
    std::vector<double> out;
    for (const EvalTotals& t : state->totals) {
        out.push_back(t.count);
        out.push_back(t.loss());
        for (std::size_t k = 0; k < t.metric_sums.size(); ++k) out.push_back(t.metric(k));
    }
    PG_RETURN_DATUM(make_float8_array(out));
}

// Flattened sums: per model, its number of metrics k, the row count, the loss sum, then its k
// metric sums. Sums of segments merge exactly (grid values, metrics.h), so the engines evaluate one
// segment per process (GROUP BY dist_key) and add the segments' sums up: the result does not
// depend on how many processes ran.
HOPPER_FUNCTION(evaluate_models_sums_final) {
    if (PG_ARGISNULL(0)) PG_RETURN_NULL();
    auto* state = reinterpret_cast<EvalAggState*>(PG_GETARG_POINTER(0));
    std::vector<double> out;
    for (const EvalTotals& t : state->totals) {
        out.push_back(double(t.metric_sums.size()));
        out.push_back(t.count);
        out.push_back(t.loss_sum);
        out.insert(out.end(), t.metric_sums.begin(), t.metric_sums.end());
    }
    PG_RETURN_DATUM(make_float8_array(out));
}
