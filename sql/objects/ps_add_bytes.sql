CREATE OR REPLACE FUNCTION hopper.ps_add_bytes(name text, worker integer, keys bytea, deltas bytea) RETURNS void
AS 'MODULE_PATHNAME', 'ps_add_bytes' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_add_bytes(text, integer, bytea, bytea) IS
'ps_add with keys packed as 8-byte and deltas as 4-byte little-endian numbers';
