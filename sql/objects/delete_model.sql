CREATE OR REPLACE FUNCTION hopper.delete_model(name text)
RETURNS void
AS 'MODULE_PATHNAME', 'delete_model' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.delete_model(text) IS
'deletes a model with its versions and aliases (its checkpoints stay, no longer protected)';
