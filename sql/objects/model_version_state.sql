CREATE OR REPLACE FUNCTION hopper.model_version_state(model_name text, version integer DEFAULT NULL, alias text DEFAULT NULL)
RETURNS bytea
AS 'MODULE_PATHNAME', 'model_version_state' LANGUAGE C STABLE;
COMMENT ON FUNCTION hopper.model_version_state(text, integer, text) IS
'the model state of a version (by number, by alias, or the latest when both are NULL)';
