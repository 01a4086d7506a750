CREATE OR REPLACE FUNCTION hopper.ps_memory(OUT memory_bytes bigint, OUT used_bytes bigint, OUT largest_free_bytes bigint,
                                 OUT max_tables integer, OUT tables integer)
RETURNS record AS 'MODULE_PATHNAME', 'ps_memory' LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.ps_memory() IS
'shared memory for parameter tables (hopper.ps_memory_mb): size, bytes in use and largest free block; table slots (hopper.ps_max_tables) and tables in use, over all databases';
