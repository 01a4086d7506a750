// hopper.fit, hopper.fit_multiple and hopper.fit_data_parallel (procedures): argument handling. The
// work is the driver's (run.cpp) with a strategy: model hopping (model_hopping.cpp) for fit and
// fit_multiple, model averaging (data_parallel.cpp) for fit_data_parallel.
#include <string>

#include "hopper/error.h"
#include "hopper/run_settings.h"
#include "pg/common/datum.h"
#include "pg/registry/registry.h"
#include "pg/training/run.h"

using namespace hopper;
using namespace hopper::pg;

// fit(packed_table, model_output_table, model_arch jsonb, compile_params, fit_params,
//     num_iterations, validation_table, metrics_compute_frequency, warm_start, name, description,
//     checkpoint_frequency, warm_start_checkpoint uuid, searcher_metric)
HOPPER_FUNCTION(fit) {
    RunSettings settings;
    RunRequest req = single_model_request(fcinfo, 11, -1, settings);
    CheckpointOptions checkpoints = checkpoint_options(fcinfo, settings, 13);
    Spi spi(call_is_nonatomic(fcinfo));
    if (PG_NARGS() > 12 && !PG_ARGISNULL(12))
        warm_start_from_checkpoint(spi, uuid_arg(fcinfo, 12, "warm_start_checkpoint"), req.warm_start, req.models[0],
                                   checkpoints);
    std::unique_ptr<RunObserver> registry = make_registry_observer(std::move(checkpoints));
    req.observers.push_back(registry.get());
    std::unique_ptr<TrainingStrategy> hopping = model_hopping_strategy();
    run_training(spi, std::move(req), *hopping);
    PG_RETURN_VOID();
}

// fit_data_parallel(packed_table, model_output_table, model_arch jsonb, compile_params, fit_params,
//                   num_iterations, validation_table, metrics_compute_frequency, warm_start, name,
//                   description, topology_table, link_cost_table, combine_levels,
//                   checkpoint_frequency, searcher_metric)
HOPPER_FUNCTION(fit_data_parallel) {
    RunSettings run_settings;
    RunRequest req = single_model_request(fcinfo, 14, 13, run_settings);
    DataParallelSettings settings;
    settings.topology_text = arg_text_or(fcinfo, 11, "");
    settings.link_cost_text = arg_text_or(fcinfo, 12, "");
    settings.levels = run_settings.combine_levels;
    std::unique_ptr<TrainingStrategy> averaging = data_parallel_strategy(std::move(settings));
    CheckpointOptions checkpoints = checkpoint_options(fcinfo, run_settings, 15);
    Spi spi(call_is_nonatomic(fcinfo));
    std::unique_ptr<RunObserver> registry = make_registry_observer(std::move(checkpoints));
    req.observers.push_back(registry.get());
    run_training(spi, std::move(req), *averaging);
    PG_RETURN_VOID();
}

namespace hopper::pg {

RunRequest single_model_request(FunctionCallInfo fcinfo, int checkpoint_arg, int levels_arg, RunSettings& settings) {
    RunRequest req;
    req.multiple = false;
    req.packed_text = arg_text(fcinfo, 0, "packed_table");
    req.output_text = arg_text(fcinfo, 1, "model_output_table");
    require_not_null(fcinfo, 2, "model_arch");
    ModelSpec m;
    m.mst_key = 1;
    m.arch_json = jsonb_to_string(PG_GETARG_DATUM(2));
    m.compile_text = arg_text_or(fcinfo, 3, "");
    m.fit_text = arg_text_or(fcinfo, 4, "");
    settings = make_run_settings(arg_int(fcinfo, 5, "num_iterations"), arg_int_opt(fcinfo, 7), arg_int_opt(fcinfo, checkpoint_arg),
                                 levels_arg >= 0 ? arg_int_opt(fcinfo, levels_arg) : std::nullopt);
    req.num_iterations = settings.num_iterations;
    req.metrics_frequency = settings.metrics_frequency;
    req.validation_text = arg_text_or(fcinfo, 6, "");
    req.warm_start = arg_bool_or(fcinfo, 8, false);
    req.name = arg_text_or(fcinfo, 9, "");
    req.description = arg_text_or(fcinfo, 10, "");
    m.config = resolve_model_spec(m.arch_json, m.compile_text, m.fit_text, "");
    req.models.push_back(std::move(m));
    return req;
}

namespace {

// Reads the model selection table and the architectures it refers to.
// mst_text becomes the table's qualified name (what the summary records).
std::vector<ModelSpec> read_model_selection(Spi& spi, std::string& mst_text, std::string& arch_table_display) {
    TableName mst = resolve_input_table(mst_text, "model selection table");
    mst_text = mst.display();
    for (const char* col : {"mst_key", "model_id", "compile_params", "fit_params"})
        require_column(mst, col, "model selection table");
    TableName mst_summary = mst.with_suffix("_summary");
    if (!table_exists(mst_summary))
        fail(ErrorKind::UndefinedTable, "model selection summary table " + mst_summary.display() + " does not exist",
             "It names the model architecture table.",
             "Create model selection tables with hopper.load_model_selection_table or hopper.generate_model_configs.");
    spi.execute("SELECT model_arch_table FROM " + mst_summary.quoted() + " LIMIT 1");
    if (spi.rows() == 0 || spi.is_null(0, 0))
        fail(ErrorKind::InvalidParameter,
             "model selection summary table " + mst_summary.display() +
                 (spi.rows() == 0 ? " is empty" : " has a NULL model_arch_table"),
             "It names the model architecture table.",
             "Create model selection tables with hopper.load_model_selection_table or hopper.generate_model_configs.");
    std::string arch_text = spi.text(0, 0);
    TableName arch = resolve_input_table(arch_text, "model architecture table");
    arch_table_display = arch.display();
    for (const char* col : {"model_id", "model_arch"}) require_column(arch, col, "model architecture table");
    const bool has_weights = OidIsValid(column_type(arch, "model_weights"));

    spi.execute("SELECT mst_key, model_id, compile_params, fit_params FROM " + mst.quoted() + " ORDER BY mst_key");
    if (spi.rows() == 0)
        fail(ErrorKind::InvalidParameter, "model selection table " + mst.display() + " is empty");
    std::vector<ModelSpec> models(spi.rows());
    for (uint64_t r = 0; r < spi.rows(); ++r) {
        if (spi.is_null(r, 0) || spi.is_null(r, 1))
            fail(ErrorKind::NullValue, "model selection table " + mst.display() + " has a NULL mst_key or model_id");
        models[r].mst_key = int32_t(spi.integer(r, 0));
        models[r].model_id = int32_t(spi.integer(r, 1));
        models[r].compile_text = spi.is_null(r, 2) ? "" : spi.text(r, 2);
        models[r].fit_text = spi.is_null(r, 3) ? "" : spi.text(r, 3);
    }
    for (ModelSpec& m : models) {
        spi.execute("SELECT model_arch::pg_catalog.text" + std::string(has_weights ? ", model_weights" : "") + " FROM " +
                        arch.quoted() + " WHERE model_id OPERATOR(pg_catalog.=) $1",
                    {SqlParam::int4(*m.model_id)});
        if (spi.rows() != 1)
            fail(ErrorKind::InvalidParameter,
                 "model_id " + std::to_string(*m.model_id) + " of mst_key " + std::to_string(m.mst_key) +
                     (spi.rows() == 0 ? " does not exist in " : " is not unique in ") + arch.display());
        if (spi.is_null(0, 0))
            fail(ErrorKind::NullValue, "model_arch of model_id " + std::to_string(*m.model_id) + " is NULL");
        m.arch_json = spi.text(0, 0);
        if (has_weights && !spi.is_null(0, 1)) {
            m.initial_state = spi.bytes(0, 1);
            m.initial_source = arch.display() + " (model_id " + std::to_string(*m.model_id) + ")";
        }
    }
    for (ModelSpec& m : models)
        m.config = resolve_model_spec(m.arch_json, m.compile_text, m.fit_text,
                                      "mst_key " + std::to_string(m.mst_key) + " (model_id " + std::to_string(*m.model_id) + ")");
    return models;
}

}  // namespace
}  // namespace hopper::pg

// fit_multiple(packed_table, model_output_table, model_selection_table, num_iterations,
//              validation_table, metrics_compute_frequency, warm_start, name, description,
//              checkpoint_frequency, warm_start_run bigint, searcher_metric)
HOPPER_FUNCTION(fit_multiple) {
    RunRequest req;
    req.multiple = true;
    req.packed_text = arg_text(fcinfo, 0, "packed_table");
    req.output_text = arg_text(fcinfo, 1, "model_output_table");
    req.mst_table_text = arg_text(fcinfo, 2, "model_selection_table");
    const int64_t num_iterations = arg_int(fcinfo, 3, "num_iterations");
    // MADlib's default: metrics only after the last iteration.
    const std::optional<int64_t> metrics = PG_NARGS() > 5 && !PG_ARGISNULL(5) ? arg_int_opt(fcinfo, 5) : num_iterations;
    const RunSettings settings = make_run_settings(num_iterations, metrics, arg_int_opt(fcinfo, 9), std::nullopt);
    req.num_iterations = settings.num_iterations;
    req.metrics_frequency = settings.metrics_frequency;
    req.validation_text = arg_text_or(fcinfo, 4, "");
    req.warm_start = arg_bool_or(fcinfo, 6, false);
    req.name = arg_text_or(fcinfo, 7, "");
    req.description = arg_text_or(fcinfo, 8, "");
    Spi spi(call_is_nonatomic(fcinfo));
    req.models = read_model_selection(spi, req.mst_table_text, req.arch_table_text);
    CheckpointOptions checkpoints = checkpoint_options(fcinfo, settings, 11);
    checkpoints.mst_table_text = req.mst_table_text;
    if (PG_NARGS() > 10 && !PG_ARGISNULL(10))
        warm_start_from_run(spi, PG_GETARG_INT64(10), req.warm_start, req.models, checkpoints);
    std::unique_ptr<RunObserver> registry = make_registry_observer(std::move(checkpoints));
    req.observers.push_back(registry.get());
    std::unique_ptr<TrainingStrategy> hopping = model_hopping_strategy();
    run_training(spi, std::move(req), *hopping);
    PG_RETURN_VOID();
}
