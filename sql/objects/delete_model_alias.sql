CREATE OR REPLACE FUNCTION hopper.delete_model_alias(model_name text, alias text)
RETURNS void
AS 'MODULE_PATHNAME', 'delete_model_alias' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.delete_model_alias(text, text) IS
'removes an alias of a model';
