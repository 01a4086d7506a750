-- Model selection: architecture tables and model selection tables (the input of fit_multiple).

CREATE FUNCTION hopper.load_model_arch(
    model_arch_table text,
    model_arch jsonb,
    name text DEFAULT NULL,
    description text DEFAULT NULL,
    model_weights bytea DEFAULT NULL)
RETURNS integer
AS 'MODULE_PATHNAME', 'load_model_arch' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.load_model_arch(text, jsonb, text, text, bytea) IS
'adds an architecture (hopper''s native JSON or a Keras Sequential model''s to_json()) to model_arch_table, creating the table if missing, and returns its model_id; model_weights (a hopper model state with the same architecture, e.g. a model_state of a model output table) are the starting weights of transfer learning';

CREATE FUNCTION hopper.delete_model_arch(model_arch_table text, model_id integer)
RETURNS void
AS 'MODULE_PATHNAME', 'delete_model_arch' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.delete_model_arch(text, integer) IS
'deletes the architecture model_id from model_arch_table (the table stays, even when empty)';

CREATE FUNCTION hopper.load_model_selection_table(
    model_arch_table text,
    model_selection_table text,
    model_id_list integer[],
    compile_params_list text[],
    fit_params_list text[])
RETURNS void
AS 'MODULE_PATHNAME', 'load_model_selection_table' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.load_model_selection_table(text, text, integer[], text[], text[]) IS
'creates model_selection_table (mst_key, model_id, compile_params, fit_params): every model_id x compile_params x fit_params, in that order, each checked against its architecture; and model_selection_table_summary naming model_arch_table. Duplicates (by meaning) are refused';

CREATE FUNCTION hopper.generate_model_configs(
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
