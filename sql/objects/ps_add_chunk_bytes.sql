CREATE OR REPLACE FUNCTION hopper.ps_add_chunk_bytes(name text, worker integer, chunk_ids bytea, deltas bytea) RETURNS void
AS 'MODULE_PATHNAME', 'ps_add_chunk_bytes' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_add_chunk_bytes(text, integer, bytea, bytea) IS
'ps_add_chunk with chunk ids packed as 8-byte and deltas as 4-byte little-endian numbers';
