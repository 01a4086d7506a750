-- Checkpoints of parameter tables are generic checkpoints of the registry (40_registry.sql):
-- a row in hopper.checkpoints with format 'hopper_ps_v1', steps_completed = the slowest worker's
-- clock and the table's settings and clocks in metadata->'parameter_table', and the serialized
-- table (include/hopper/ps.h) in hopper.checkpoint_chunks.
CREATE OR REPLACE FUNCTION hopper.ps_save(name text, metadata jsonb DEFAULT '{}') RETURNS uuid
AS 'MODULE_PATHNAME', 'ps_save' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_save(text, jsonb) IS
'saves parameter table name (values, BSP pending Adds, each worker''s clock, settings), as one consistent snapshot, as a COMPLETED checkpoint in hopper.checkpoints (format hopper_ps_v1; metadata plus the table''s facts under "parameter_table") and returns its uuid; the rows are written in the calling transaction';
