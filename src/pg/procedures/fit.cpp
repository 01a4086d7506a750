// hopper.fit, hopper.fit_multiple and hopper.fit_data_parallel (procedures): argument handling. The
// work is run_training's (run.cpp) with a strategy: model hopping (model_hopping.cpp) for fit and
// fit_multiple, model averaging (data_parallel.cpp) for fit_data_parallel.
#include <string>

#include "hopper/error.h"
#include "hopper/run_settings.h"
#include "pg/common/datum.h"
#include "pg/engine/engine.h"
#include "pg/registry/registry.h"
#include "pg/training/model_selection.h"
#include "pg/training/run.h"

using namespace hopper;
using namespace hopper::pg;

namespace hopper::pg {
// The arguments fit and fit_data_parallel share: packed_table, model_output_table, model_arch,
// compile_params, fit_params, num_iterations, validation_table, metrics_compute_frequency,
// warm_start, name, description (arguments 0 to 10), as a request for one model (mst_key 1); the
// run's settings, with checkpoint_frequency and combine_levels from those arguments (levels_arg -1: none),
// validated (hopper/run_settings.h) into `settings`.
RunRequest single_model_request(FunctionCallInfo fcinfo, int checkpoint_arg, int levels_arg, RunSettings& settings);
}  // namespace hopper::pg

// fit(packed_table, model_output_table, model_arch jsonb, compile_params, fit_params,
//     num_iterations, validation_table, metrics_compute_frequency, warm_start, name, description,
//     checkpoint_frequency, warm_start_checkpoint uuid, searcher_metric)
HOPPER_FUNCTION(fit) {
    RunSettings settings;
    RunRequest req = single_model_request(fcinfo, 11, -1, settings);
    CheckpointOptions checkpoints = checkpoint_options(fcinfo, settings, 13);
    Spi spi(call_is_nonatomic(fcinfo));
    refuse_on_worker_node(spi, "hopper.fit");
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
    refuse_on_worker_node(spi, "hopper.fit_data_parallel");
    std::unique_ptr<RunObserver> registry = make_registry_observer(std::move(checkpoints));
    req.observers.push_back(registry.get());
    run_training(spi, std::move(req), *averaging);
    PG_RETURN_VOID();
}

namespace hopper::pg {

namespace {
// compile_params left out (or NULL): Keras' Adam, which trains what a user first tries -- the
// parser's own default, SGD(lr=0.01) without momentum, diverged on regression targets a user sweep
// packed and crawled on the rest -- with accuracy for a classifier's output. The loss follows the
// output layer as always. Said in a NOTICE, and kept as written in the model's summary and runs.
std::string default_compile_params(const std::string& arch_json) {
    const Architecture arch = parse_architecture(arch_json);
    const Activation out = arch.layers.empty() ? Activation::Linear : arch.layers.back().activation;
    const bool classifier = out == Activation::Softmax || out == Activation::Sigmoid;
    std::string text = "optimizer='Adam(lr=0.001)'";
    if (classifier) text += ", metrics=['accuracy']";
    notice("compile_params defaults to " + text,
           "The loss follows the output layer: categorical cross-entropy after softmax, binary after sigmoid, "
           "mean squared error otherwise.");
    return text;
}
}  // namespace

RunRequest single_model_request(FunctionCallInfo fcinfo, int checkpoint_arg, int levels_arg, RunSettings& settings) {
    RunRequest req;
    req.multiple = false;
    req.packed_text = arg_text(fcinfo, 0, "packed_table");
    req.output_text = arg_text(fcinfo, 1, "model_output_table");
    require_not_null(fcinfo, 2, "model_arch");
    ModelSpec m;
    m.mst_key = 1;
    m.arch_json = jsonb_to_string(PG_GETARG_DATUM(2));
    m.compile_text = PG_ARGISNULL(3) ? default_compile_params(m.arch_json) : text_to_string(PG_GETARG_DATUM(3));
    m.fit_text = arg_text_or(fcinfo, 4, "");
    settings = make_run_settings(arg_int(fcinfo, 5, "num_iterations"), arg_int_opt(fcinfo, 7),
                                 arg_int_opt(fcinfo, checkpoint_arg),
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
    refuse_on_worker_node(spi, "hopper.fit_multiple");
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
