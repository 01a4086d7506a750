CREATE OR REPLACE FUNCTION hopper.delete_model_version(model_name text, version integer)
RETURNS void
AS 'MODULE_PATHNAME', 'delete_model_version' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.delete_model_version(text, integer) IS
'deletes one version of a model (and its aliases); its number is not reused';
