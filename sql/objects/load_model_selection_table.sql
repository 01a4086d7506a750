CREATE OR REPLACE FUNCTION hopper.load_model_selection_table(
    model_arch_table text,
    model_selection_table text,
    model_id_list integer[],
    compile_params_list text[],
    fit_params_list text[])
RETURNS void
AS 'MODULE_PATHNAME', 'load_model_selection_table' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.load_model_selection_table(text, text, integer[], text[], text[]) IS
'creates model_selection_table (mst_key, model_id, compile_params, fit_params): every model_id x compile_params x fit_params, in that order, each checked against its architecture; and model_selection_table_summary naming model_arch_table. Duplicates (by meaning) are refused';
