CREATE OR REPLACE FUNCTION hopper.float32_bytes(values_array real[]) RETURNS bytea
AS 'MODULE_PATHNAME', 'float32_bytes' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.float32_bytes(real[]) IS
'the array''s values (row-major) as little-endian float32 bytes, as Apache MADlib 2.x packs buffers (numpy tobytes)';
