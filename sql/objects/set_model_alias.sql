CREATE OR REPLACE FUNCTION hopper.set_model_alias(model_name text, alias text, version integer)
RETURNS void
AS 'MODULE_PATHNAME', 'set_model_alias' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.set_model_alias(text, text, integer) IS
'points an alias such as champion at a version of a model (moving it if it exists)';
