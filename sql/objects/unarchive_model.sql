CREATE OR REPLACE FUNCTION hopper.unarchive_model(name text)
RETURNS void
AS 'MODULE_PATHNAME', 'unarchive_model' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.unarchive_model(text) IS
'makes an archived model accept new versions again';
