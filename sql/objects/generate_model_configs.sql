CREATE OR REPLACE FUNCTION hopper.generate_model_configs(
    model_arch_table text,
    model_selection_table text,
    model_id_list integer[],
    compile_params_grid jsonb,
    fit_params_grid jsonb,
    search_type text DEFAULT 'grid',
    num_configs integer DEFAULT NULL,
    random_state bigint DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'generate_model_configs' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.generate_model_configs(text, text, integer[], jsonb, jsonb, text, integer, bigint) IS
'creates a model selection table by grid search (every combination of the listed values) or random search (num_configs distinct configurations drawn with random_state; values are lists, or distributions {"uniform": [a, b]}, {"log_uniform": [a, b]}, {"int_uniform": [a, b]}); compile_params_grid may hold optimizer_params_list, a list of sub-grids';
