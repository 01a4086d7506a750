CREATE OR REPLACE FUNCTION hopper.delete_model_arch(model_arch_table text, model_id integer)
RETURNS void
AS 'MODULE_PATHNAME', 'delete_model_arch' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.delete_model_arch(text, integer) IS
'deletes the architecture model_id from model_arch_table (the table stays, even when empty)';
