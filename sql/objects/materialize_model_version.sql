CREATE OR REPLACE FUNCTION hopper.materialize_model_version(model_name text, output_table text, version integer DEFAULT NULL,
                                                 alias text DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'materialize_model_version' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.materialize_model_version(text, text, integer, text) IS
'writes a model version (by number, by alias, or the latest) as a model table for hopper.predict and hopper.evaluate';
