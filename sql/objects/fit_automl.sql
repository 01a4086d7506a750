CREATE OR REPLACE PROCEDURE hopper.fit_automl(
    packed_table text DEFAULT NULL,
    model_output_table text DEFAULT NULL,
    model_arch_table text DEFAULT NULL,
    model_selection_table text DEFAULT NULL,
    model_id_list integer[] DEFAULT NULL,
    compile_params_grid jsonb DEFAULT NULL,
    fit_params_grid jsonb DEFAULT NULL,
    automl_method text DEFAULT NULL,
    max_iterations integer DEFAULT NULL,
    eta integer DEFAULT NULL,
    skip_last integer DEFAULT NULL,
    num_brackets integer DEFAULT NULL,
    num_configs integer DEFAULT NULL,
    search_type text DEFAULT NULL,
    random_state bigint DEFAULT NULL,
    validation_table text DEFAULT NULL,
    metrics_compute_frequency integer DEFAULT NULL,
    searcher_metric text DEFAULT NULL,
    pack_brackets boolean DEFAULT NULL,
    name text DEFAULT NULL,
    description text DEFAULT NULL,
    run_id bigint DEFAULT NULL,
    bracket_rule text DEFAULT NULL)
AS 'MODULE_PATHNAME', 'fit_automl' LANGUAGE C;
COMMENT ON PROCEDURE hopper.fit_automl(text, text, text, text, integer[], jsonb, jsonb, text, integer, integer, integer, integer, integer, text, bigint, text, integer, text, boolean, text, text, bigint, text) IS
'adaptive model selection by model hopping: draws configurations from a search space (as generate_model_configs, into model_selection_table; model_id_list defaults to every architecture of model_arch_table, compile_params_grid to Adam with a learning rate log-uniform over [1e-4, 0.1], or four values for a grid search) and runs hyperband (default) or successive_halving with budget max_iterations (default 9) and eta (default 3); bracket_rule li (default: Li et al.''s brackets, each rung ending at r_i iterations in all) or madlib (MADlib''s madlib_keras_automl: floor((s_max + 1) / (s + 1)) * eta^s configurations, each round training r_i more); search_type random (default) or grid (successive_halving only); model_selection_table defaults to <model_output_table>_mst; searcher_metric as fit_multiple''s (default: the loss, on the validation table when given); each rung trains its trials together, ranks them by the searcher metric and continues the best 1/eta from their state; writes model_output_table, _info and _summary like fit_multiple and records every decision (hopper.searches, search_rungs, trial_rungs, views search_brackets and search_trials); CALLed on its own it commits after every ring iteration and run_id => continues an interrupted search from its last completed rungs; inside a transaction block or a function it runs in that one transaction';
