CREATE OR REPLACE FUNCTION hopper.ps_get_chunk(name text, worker integer, chunk_ids bigint[]) RETURNS real[]
AS 'MODULE_PATHNAME', 'ps_get_chunk' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_get_chunk(text, integer, bigint[]) IS
'values of the keys of chunks chunk_ids (sorted, unique), chunk after chunk in key order; waits like ps_get';
