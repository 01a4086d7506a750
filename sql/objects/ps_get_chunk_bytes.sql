CREATE OR REPLACE FUNCTION hopper.ps_get_chunk_bytes(name text, worker integer, chunk_ids bytea) RETURNS bytea
AS 'MODULE_PATHNAME', 'ps_get_chunk_bytes' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_get_chunk_bytes(text, integer, bytea) IS
'ps_get_chunk with chunk ids packed as 8-byte little-endian integers; returns the values packed as 4-byte little-endian floats';
