CREATE OR REPLACE FUNCTION hopper.archive_model(name text)
RETURNS void
AS 'MODULE_PATHNAME', 'archive_model' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.archive_model(text) IS
'archives a model: it keeps its versions but accepts no new ones';
