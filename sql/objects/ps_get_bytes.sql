-- Packed forms: keys and chunk ids as 8-byte, values and deltas as 4-byte little-endian numbers in
-- bytea. They skip the per-element conversion of arrays (the C++ client uses them).
CREATE OR REPLACE FUNCTION hopper.ps_get_bytes(name text, worker integer, keys bytea) RETURNS bytea
AS 'MODULE_PATHNAME', 'ps_get_bytes' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_get_bytes(text, integer, bytea) IS
'ps_get with keys packed as 8-byte little-endian integers; returns the values packed as 4-byte little-endian floats';
