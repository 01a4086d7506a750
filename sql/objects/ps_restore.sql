CREATE OR REPLACE FUNCTION hopper.ps_restore(checkpoint uuid, name text DEFAULT NULL) RETURNS text
AS 'MODULE_PATHNAME', 'ps_restore' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_restore(uuid, text) IS
'creates a parameter table (named name, or as saved) from a checkpoint written by hopper.ps_save: same settings, values, pending BSP Adds and worker clocks, all workers not joined; returns its name';
