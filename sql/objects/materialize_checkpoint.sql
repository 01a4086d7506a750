CREATE OR REPLACE FUNCTION hopper.materialize_checkpoint(checkpoint uuid, output_table text)
RETURNS void
AS 'MODULE_PATHNAME', 'materialize_checkpoint' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.materialize_checkpoint(uuid, text) IS
'writes a checkpoint as a model table (output_table and output_table_summary, as fit writes them) for hopper.predict and hopper.evaluate';
